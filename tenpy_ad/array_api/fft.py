"""The standard's ``fft`` extension, differentiable: each transform lowers onto one of
the linear primitives of :mod:`tenpy_ad.ops.fft` (their adjoints are their VJPs)."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .. import numpy as tnp
from ..errors import ArgumentValueError, DTypeError
from ..ops import elementwise as ew
from ..ops import fft as _fft
from ..primitive import code_of_value
from ._convert import as_tensor, check_device, tensors

_DUAL = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _norm(name: str, norm: str) -> str:
    if norm not in _fft.NORMS:
        raise ArgumentValueError(f"{name}: norm must be one of {', '.join(_fft.NORMS)}, "
                                 f"got {norm!r}")
    return norm


def _complex(x):
    """``x`` in the complex dtype of its precision (reals gain a zero imaginary part)."""
    code = code_of_value(x)
    if not dtypes.is_inexact(code):
        raise DTypeError(f"fft: needs a floating or complex tensor, got {x.dtype}")
    return x if dtypes.is_complex(code) else ew.convert(x, dtypes.complex_code(code))


def _real(name: str, x):
    code = code_of_value(x)
    if not dtypes.is_inexact(code) or dtypes.is_complex(code):
        raise DTypeError(f"{name}: needs a real floating tensor, got {x.dtype}")
    return x


def _axes_and_sizes(name: str, x, s, axes, default_last=None):
    """Increasing axes and their sizes (``-1``: the input's), the standard's defaults."""
    ndim = x.ndim
    if axes is None:
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    axes = tuple(a % ndim if -ndim <= a < ndim else _bad_axis(name, a, ndim) for a in axes)
    if len(set(axes)) != len(axes):
        raise ArgumentValueError(f"{name}: repeated axes {axes}")
    if s is None:
        s = [x.shape[a] for a in axes]
        if default_last is not None and axes:
            s[-1] = default_last(x.shape[axes[-1]])
    if len(s) != len(axes):
        raise ArgumentValueError(f"{name}: s {tuple(s)} and axes {axes} differ in length")
    sizes = [x.shape[a] if n == -1 else n for a, n in zip(axes, s)]
    if any(n < 1 for n in sizes):
        raise ArgumentValueError(f"{name}: transform sizes must be positive, got {sizes}")
    return axes, tuple(sizes)


def _bad_axis(name, axis, ndim):
    raise ArgumentValueError(f"{name}: axis {axis} is out of range for {ndim} axes")


def _complex_transform(name, x, s, axes, norm, inverse):
    x = _complex(as_tensor(x))
    axes, sizes = _axes_and_sizes(name, x, s, axes)
    order = sorted(range(len(axes)), key=axes.__getitem__)
    axes, sizes = tuple(axes[i] for i in order), tuple(sizes[i] for i in order)
    return tensors(_fft.fft_c2c(x, axes, sizes, inverse, _norm(name, norm)))


def _others(axes, sizes):
    """The axes before the last (the complex part of a real transform), increasing."""
    pairs = sorted(zip(axes[:-1], sizes[:-1]))
    return tuple(a for a, _ in pairs), tuple(n for _, n in pairs)


def _in_order(axes) -> bool:
    """Whether one primitive does it: axes increasing, the half spectrum on the last."""
    return list(axes) == sorted(axes)


def fft(x, /, *, n=None, axis=-1, norm="backward"):
    """The one-dimensional discrete Fourier transform along ``axis``."""
    return _complex_transform("fft", x, None if n is None else (n,), (axis,), norm, False)


def ifft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse one-dimensional discrete Fourier transform along ``axis``."""
    return _complex_transform("ifft", x, None if n is None else (n,), (axis,), norm, True)


def fftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional discrete Fourier transform over ``axes`` (sizes ``s``)."""
    return _complex_transform("fftn", x, s, axes, norm, False)


def ifftn(x, /, *, s=None, axes=None, norm="backward"):
    """The inverse n-dimensional discrete Fourier transform over ``axes``."""
    return _complex_transform("ifftn", x, s, axes, norm, True)


def _real_to_half(name, x, s, axes, norm):
    x = _real(name, as_tensor(x))
    axes, sizes = _axes_and_sizes(name, x, s, axes)
    norm = _norm(name, norm)
    if _in_order(axes):
        return tensors(_fft.fft_r2c(x, axes, sizes, norm))
    half = _fft.fft_r2c(x, axes[-1:], sizes[-1:], norm)       # NumPy's order: the real
    others = _others(axes, sizes)                              # axis first, then the rest
    return tensors(_fft.fft_c2c(half, *others, False, norm))


def _half_to_real(name, x, s, axes, norm):
    x = _complex(as_tensor(x))
    axes, sizes = _axes_and_sizes(name, x, s, axes, default_last=lambda m: 2 * (m - 1))
    norm = _norm(name, norm)
    if _in_order(axes):
        return tensors(_fft.fft_c2r(x, axes, sizes, norm))
    full = _fft.fft_c2c(x, *_others(axes, sizes), True, norm)   # the complex axes first
    return tensors(_fft.fft_c2r(full, axes[-1:], sizes[-1:], norm))


def rfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The transform of a real signal along ``axis``: the ``n // 2 + 1`` coefficients of
    non-negative frequency."""
    return _real_to_half("rfft", x, None if n is None else (n,), (axis,), norm)


def irfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The real signal of length ``n`` (default ``2 * (m - 1)``) whose rfft is ``x``."""
    return _half_to_real("irfft", x, None if n is None else (n,), (axis,), norm)


def rfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional transform of a real signal (half spectrum on the last axis)."""
    return _real_to_half("rfftn", x, s, axes, norm)


def irfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The real n-dimensional signal whose rfftn is ``x``."""
    return _half_to_real("irfftn", x, s, axes, norm)


def hfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The transform of a signal with Hermitian symmetry, given by its first half: real,
    of length ``n`` (default ``2 * (m - 1)``)."""
    norm = _norm("hfft", norm)
    return irfft(tnp.conj(_complex(as_tensor(x))), n=n, axis=axis, norm=_DUAL[norm])


def ihfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of :func:`hfft`: the half spectrum of a real signal, conjugated."""
    norm = _norm("ihfft", norm)
    return tensors(tnp.conj(rfft(x, n=n, axis=axis, norm=_DUAL[norm])))


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of an ``n``-point transform with spacing ``d``."""
    check_device("fftfreq", device)
    return tensors(np.fft.fftfreq(n, d).astype(dtype or np.float64))


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The non-negative sample frequencies of an ``n``-point real transform."""
    check_device("rfftfreq", device)
    return tensors(np.fft.rfftfreq(n, d).astype(dtype or np.float64))


def _shift(name, x, axes, sign):
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int):
        axes = (axes,)
    shifts = tuple(sign * (x.shape[a] // 2) for a in axes)
    return tensors(tnp.roll(x, shifts, axis=tuple(axes)))


def fftshift(x, /, *, axes=None):
    """``x`` with the zero frequency moved to the middle of ``axes`` (all by default)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, /, *, axes=None):
    """The inverse of :func:`fftshift`."""
    return _shift("ifftshift", x, axes, -1)


__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
           "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

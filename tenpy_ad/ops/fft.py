"""Discrete Fourier transforms (NumPy's pocketfft): one primitive per family, each linear,
so its JVP is itself and its VJP its adjoint under the real inner product Re<a, b>.

* ``fft_c2c``  complex -> complex over ``axes`` (forward or inverse): the adjoint is the
  other direction with the dual normalisation ("backward" <-> "forward", "ortho" itself);
* ``fft_r2c``  real -> half spectrum (``rfftn``): the adjoint pads the half spectrum with
  zeros, transforms back and keeps the real part;
* ``fft_c2r``  half spectrum -> real (``irfftn``): it reads each coefficient between 0 and
  the Nyquist one twice (once for its mirror image), so the adjoint is ``rfftn`` with
  those coefficients doubled.

Every transform resizes its operand first (crops or pads with zeros to ``sizes`` along
``axes``), whose adjoint is the opposite resize.  Params: ``(axes, sizes, inverse, norm)``
for fft_c2c, ``(axes, sizes, norm)`` for the others, axes increasing.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import DTypeError, ShapeError
from ..param_schema import AXES, BOOL, Int, MAX_NDIM, Struct, Text, TupleOf
from ..primitive import bind1, code_of_value, describe, primitive, shape_of
from ..rules import deflinear
from . import elementwise as ew
from . import structural as st

NORMS = ("backward", "ortho", "forward")
_DUAL = {"backward": "forward", "ortho": "ortho", "forward": "backward"}
_NORM = Text("a normalisation: backward, ortho or forward", pattern="backward|ortho|forward",
             example="backward")
_SIZES = TupleOf(Int(1), max_length=MAX_NDIM).named("sizes")
_C2C_PARAMS = Struct(AXES, _SIZES, BOOL, _NORM)
_REAL_PARAMS = Struct(AXES, _SIZES, _NORM)


def _check(name: str, axes: tuple, sizes: tuple, x, want_complex: bool) -> None:
    if len(axes) != len(sizes) or not axes:
        raise ShapeError(f"{name}: needs one size per axis, got axes {axes}, sizes {sizes}")
    if axes[-1] >= x.ndim:
        raise ShapeError(f"{name}: axes {axes} are out of range for {describe(x)}")
    code = code_of_value(x)
    if not dtypes.is_inexact(code) or dtypes.is_complex(code) != want_complex:
        kind = "complex" if want_complex else "real floating"
        raise DTypeError(f"{name}: needs a {kind} operand, got {describe(x)}")


def _resized_shape(shape: tuple, axes: tuple, sizes: tuple) -> tuple:
    out = list(shape)
    for axis, size in zip(axes, sizes):
        out[axis] = size
    return tuple(out)


def _c2c_rule(params, x):
    axes, sizes = params[0], params[1]
    _check("fft_c2c", axes, sizes, x, True)
    return code_of_value(x), _resized_shape(tuple(x.shape), axes, sizes)


def _r2c_rule(params, x):
    axes, sizes = params[0], params[1]
    _check("fft_r2c", axes, sizes, x, False)
    half = sizes[:-1] + (sizes[-1] // 2 + 1,)
    return dtypes.complex_code(code_of_value(x)), _resized_shape(tuple(x.shape), axes, half)


def _c2r_rule(params, x):
    axes, sizes = params[0], params[1]
    _check("fft_c2r", axes, sizes, x, True)
    return dtypes.real_code(code_of_value(x)), _resized_shape(tuple(x.shape), axes, sizes)


def _c2c_impl(params, x):
    axes, sizes, inverse, norm = params
    transform = np.fft.ifftn if inverse else np.fft.fftn
    return transform(x, s=sizes, axes=axes, norm=norm).astype(x.dtype, copy=False)


def _r2c_impl(params, x):
    axes, sizes, norm = params
    out = np.fft.rfftn(x, s=sizes, axes=axes, norm=norm)
    return out.astype(dtypes.DTYPES[dtypes.complex_code(dtypes.value_code(x.dtype))],
                      copy=False)


def _c2r_impl(params, x):
    axes, sizes, norm = params
    out = np.fft.irfftn(x, s=sizes, axes=axes, norm=norm)
    return out.astype(dtypes.DTYPES[dtypes.real_code(dtypes.value_code(x.dtype))],
                      copy=False)


def resize(x, axes: tuple, sizes: tuple):
    """``x`` cropped or padded with zeros (at the end) to ``sizes`` along ``axes``; its
    transpose is the resize back."""
    shape = shape_of(x)
    target = _resized_shape(shape, axes, sizes)
    if target == shape:
        return x
    kept = tuple(min(a, b) for a, b in zip(shape, target))
    x = st.slice_axes(x, tuple((0, k, 1) for k in kept))
    return st.scatter_slice(x, target, tuple((0, k, 1) for k in kept))


def _format(params) -> str:
    text = f"axes={list(params[0])} sizes={list(params[1])}"
    return text + (" inverse" if len(params) == 4 and params[2] else "") + f" {params[-1]}"


fft_c2c_p = primitive("fft_c2c", _c2c_impl, _c2c_rule, format_params=_format,
                      static_shapes=True, params=_C2C_PARAMS)
fft_r2c_p = primitive("fft_r2c", _r2c_impl, _r2c_rule, format_params=_format,
                      static_shapes=True, params=_REAL_PARAMS)
fft_c2r_p = primitive("fft_c2r", _c2r_impl, _c2r_rule, format_params=_format,
                      static_shapes=True, params=_REAL_PARAMS)


def _c2c_transpose(params, ct, out, x):
    axes, sizes, inverse, norm = params
    back = bind1(fft_c2c_p, (axes, sizes, not inverse, _DUAL[norm]), ct)
    return resize(back, axes, tuple(shape_of(x)[a] for a in axes))


def _r2c_transpose(params, ct, out, x):
    axes, sizes, norm = params
    full = resize(ct, axes[-1:], sizes[-1:])          # the missing half of the spectrum: 0
    back = ew.real(bind1(fft_c2c_p, (axes, sizes, True, _DUAL[norm]), full))
    return resize(back, axes, tuple(shape_of(x)[a] for a in axes))


def _mirror_weights(n: int, shape: tuple, code: int, axis: int) -> np.ndarray:
    """2 for the coefficients ``irfft`` reads twice (between 0 and Nyquist), else 1, in
    ``shape`` and dtype ``code``."""
    weights = np.full(n // 2 + 1, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    along = [1] * len(shape)
    along[axis] = weights.size
    return np.broadcast_to(weights.reshape(along), shape).astype(dtypes.DTYPES[code])


def _c2r_transpose(params, ct, out, x):
    axes, sizes, norm = params
    half = bind1(fft_r2c_p, (axes, sizes, _DUAL[norm]), ct)
    weights = _mirror_weights(sizes[-1], shape_of(half), code_of_value(half), axes[-1])
    weighted = ew.mul(half, weights)
    return resize(weighted, axes, tuple(shape_of(x)[a] for a in axes))


deflinear(fft_c2c_p, _c2c_transpose)
deflinear(fft_r2c_p, _r2c_transpose)
deflinear(fft_c2r_p, _c2r_transpose)


def fft_c2c(x, axes: tuple, sizes: tuple, inverse: bool, norm: str):
    """The n-dimensional complex transform of complex ``x`` over increasing ``axes``,
    resized to ``sizes`` first."""
    return bind1(fft_c2c_p, (tuple(axes), tuple(sizes), bool(inverse), norm), x)


def fft_r2c(x, axes: tuple, sizes: tuple, norm: str):
    """``rfftn`` of real ``x`` over increasing ``axes`` (the half spectrum on the last)."""
    return bind1(fft_r2c_p, (tuple(axes), tuple(sizes), norm), x)


def fft_c2r(x, axes: tuple, sizes: tuple, norm: str):
    """``irfftn`` of the half spectrum ``x``: real, of ``sizes`` along ``axes``."""
    return bind1(fft_c2r_p, (tuple(axes), tuple(sizes), norm), x)

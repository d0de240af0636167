"""Handling complex numbers: ``conjugate``/``conj``, ``real``, ``imag``, ``angle``,
``real_if_close``."""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConcretizationError
from ..ops import elementwise as ew
from ..ops import structural as st
from ..ops import transcendental as tr
from ..ops.indexing import concrete_value
from ..primitive import is_complex_value, register_view
from ._arrays import tensor_or_array
from ._dispatch import implements
from ._ufuncs import inexact, ufunc_function
from ._views import ViewKind

conjugate = conj = ufunc_function("numpy.conjugate", ew.conj,
                                  "The complex conjugate (real tensors: themselves).")


@implements("numpy.real")
def real(val):
    """The real part (real tensors: themselves); of a complex tensor, a view."""
    val = tensor_or_array(val)
    return register_view(ew.real(val), val, REAL_PART, None)


@implements("numpy.imag")
def imag(val):
    """The imaginary part (real tensors: zeros of their dtype, read-only as NumPy's);
    of a complex tensor, a view."""
    val = tensor_or_array(val)
    readonly = None if is_complex_value(val) else "imag of a real array"
    return register_view(ew.imag(val), val, IMAG_PART, None, readonly)


def _with_real(z, re, arg=None):
    """``z`` with its real part replaced by ``re`` (a write into ``z.real``)."""
    return ew.make_complex(re, ew.imag(z))


def _with_imag(z, im, arg=None):
    """``z`` with its imaginary part replaced by ``im`` (a write into ``z.imag``)."""
    return ew.make_complex(ew.real(z), im)


#: the real and imaginary parts of a complex tensor as views
REAL_PART = ViewKind("real", lambda p, arg: ew.real(p), _with_real)
IMAG_PART = ViewKind("imag", lambda p, arg: ew.imag(p), _with_imag)


@implements("numpy.angle")
def angle(z, deg=False):
    """The argument of ``z`` (radians, or degrees with ``deg=True``), as
    ``arctan2(z.imag, z.real)``: its derivative at 0 is taken as 0; real ``z`` has the
    locally constant angle 0 or pi, derivative 0."""
    z = tensor_or_array(z)
    if is_complex_value(z):
        result = tr.arctan2(ew.imag(z), ew.real(z))
    else:
        x = ew.stop_gradient(inexact(z))
        result = tr.arctan2(st.full_like(x, 0), x)
    return ew.scale(result, 180.0 / math.pi) if deg else result


@implements("numpy.real_if_close")
def real_if_close(a, tol=100):
    """The real part if every imaginary part is below ``tol`` (in machine epsilons when
    ``tol > 1``), else ``a``.  The result's dtype depends on the values, so a traced
    complex tensor is refused: take :func:`real` explicitly."""
    a = tensor_or_array(a)
    if not is_complex_value(a):
        return a
    value = concrete_value(a)
    if value is None:
        raise ConcretizationError(
            "real_if_close: whether the result is real depends on the values, which a "
            "traced tensor does not have; take tnp.real(a) explicitly (or keep a complex)")
    imaginary = np.imag(value)
    if tol > 1:
        tol = tol * np.finfo(imaginary.dtype).eps
    return ew.real(a) if np.all(np.abs(imaginary) < tol) else a


__all__ = ["conjugate", "conj", "real", "imag", "angle", "real_if_close"]

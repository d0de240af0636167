"""Rounding: ``floor``, ``ceil``, ``trunc``/``fix``, ``rint``, ``round``/``around``.

Each is locally constant, so its derivative is zero, also at the jumps (where it has
none): a loss through rounding has no gradient through it, as in autograd and JAX.
"""
from __future__ import annotations

import numbers

from .. import dtypes
from ..errors import ArgumentError, NotDifferentiableError
from ..ops import elementwise as ew
from ..ops import piecewise as pw
from ..primitive import code_of_value
from ._arrays import tensor_or_array
from ._dispatch import implements
from ._ufuncs import ufunc_function

floor = ufunc_function("numpy.floor", pw.floor,
                       "The largest integer ``<= x``; derivative zero.")
ceil = ufunc_function("numpy.ceil", pw.ceil,
                      "The smallest integer ``>= x``; derivative zero.")
trunc = ufunc_function("numpy.trunc", pw.trunc, "``x`` rounded towards 0; derivative zero.")
rint = ufunc_function("numpy.rint", pw.rint,
                      "The nearest integer (half to even); derivative zero.")


@implements("numpy.round", "numpy.around")
def round(a, decimals=0, out=None):  # noqa: A001 - NumPy's name
    """Round half to even at ``decimals`` decimal places (negative: tens, hundreds...);
    complex values round their real and imaginary parts.  Derivative zero."""
    a = tensor_or_array(a)
    if out is not None:
        raise NotDifferentiableError("np.round(..., out=...) cannot write into an existing "
                                     "array without losing the gradient")
    if not isinstance(decimals, numbers.Integral):
        raise ArgumentError(f"round: decimals must be an integer, got {decimals!r}")
    if code_of_value(a) == dtypes.BOOL:         # NumPy: float16, carried as float64
        a = ew.convert(a, dtypes.FLOAT64)
    return pw.round(a, int(decimals))


around = round


@implements("numpy.fix")
def fix(x, out=None):
    """Round towards zero (``trunc``; integers unchanged).  Derivative zero."""
    return trunc(x, out=out)


__all__ = ["floor", "ceil", "trunc", "rint", "fix", "round", "around"]

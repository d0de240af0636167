"""Comparisons (boolean results, never differentiated), extrema of two operands and
clipping, with NumPy's ufunc signatures, promotion and broadcasting.

Subgradients: ``maximum``/``minimum``/``fmax``/``fmin`` split the derivative evenly between
tied operands (as autograd and JAX do); ``clip`` passes it to ``a`` wherever ``a`` is the
result (on the closed interval, bounds included) and to a bound only where the bound
replaced ``a``.  Complex operands are ordered lexicographically, as NumPy orders them.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import ArgumentError, ArgumentValueError
from ..ops import elementwise as ew
from ..ops import piecewise as pw
from ..ops import structural as st
from ..primitive import bind2, shape_of
from ._arrays import as_array, tensor_or_array
from ._dispatch import implements, written
from ._operands import broadcast_shapes, common
from ._ufuncs import options, ufunc_function


def _compare(prim):
    return lambda x, y: bind2(prim, None, x, y)


equal = ufunc_function("numpy.equal", _compare(ew.equal_p), "``x1 == x2`` elementwise.")
not_equal = ufunc_function("numpy.not_equal", _compare(ew.not_equal_p),
                           "``x1 != x2`` elementwise.")
less = ufunc_function("numpy.less", _compare(ew.less_p), "``x1 < x2`` elementwise.")
less_equal = ufunc_function("numpy.less_equal", _compare(ew.less_equal_p),
                            "``x1 <= x2`` elementwise.")
greater = ufunc_function("numpy.greater", _compare(ew.greater_p), "``x1 > x2`` elementwise.")
greater_equal = ufunc_function("numpy.greater_equal", _compare(ew.greater_equal_p),
                               "``x1 >= x2`` elementwise.")

maximum = ufunc_function("numpy.maximum", pw.maximum,
                         "The larger operand (NaN propagates); ties split the derivative "
                         "evenly.")
minimum = ufunc_function("numpy.minimum", pw.minimum,
                         "The smaller operand (NaN propagates); ties split the derivative "
                         "evenly.")
fmax = ufunc_function("numpy.fmax", pw.fmax,
                      "The larger operand, ignoring NaN; ties split the derivative evenly.")
fmin = ufunc_function("numpy.fmin", pw.fmin,
                      "The smaller operand, ignoring NaN; ties split the derivative evenly.")


def _bounds(a_min, a_max, min, max):  # noqa: A002 - NumPy's names
    """NumPy's reading of clip's bounds, positional or ``min=``/``max=``."""
    if a_min is np._NoValue and a_max is np._NoValue:
        return (None if min is np._NoValue else min), (None if max is np._NoValue else max)
    if a_min is np._NoValue or a_max is np._NoValue:
        missing = "a_min" if a_min is np._NoValue else "a_max"
        raise ArgumentError(f"clip() missing 1 required positional argument: {missing!r}")
    if min is not np._NoValue or max is not np._NoValue:
        raise ArgumentValueError("clip: passing min= or max= when a_min and a_max are given is "
                                 "forbidden (as in NumPy)")
    return a_min, a_max


@implements("numpy.clip")
def clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue,  # noqa: A002
         max=np._NoValue, **kwargs):
    """``a`` limited to ``[a_min, a_max]`` (either bound ``None``: no limit on that
    side; ``a_min > a_max`` gives ``a_max``, as NumPy).  The derivative goes to ``a``
    where it is the result, bounds included, and to a bound where it replaced ``a``."""
    if out is not None:                    # np.clip(x, 0, 1, out=t), t.clip(0, 1, out=t)
        return written(out, clip(a, a_min, a_max, min=min, max=max, **kwargs),
                         "np.clip(..., out=...)")
    lower, upper = _bounds(a_min, a_max, min, max)
    dtype, _ = options("clip", out, kwargs)
    bounds = [as_array(x) for x in (lower, upper) if x is not None]
    xs = common("clip", tensor_or_array(a, "clip"), *bounds,       # NumPy: ``a`` an array
                code=None if dtype is None else dtypes.code_of(dtype))
    shape = broadcast_shapes("clip", *[shape_of(x) for x in xs])
    xs = [st.broadcast_to(x, shape) for x in xs]
    result = xs.pop(0)
    if lower is not None:
        result = pw.clip_lower(result, xs.pop(0))
    if upper is not None:
        result = pw.clip_upper(result, xs.pop(0))
    return result


__all__ = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
           "maximum", "minimum", "fmax", "fmin", "clip"]

"""Closeness and equality tests (``isclose``, ``allclose``, ``array_equal``,
``array_equiv``) with NumPy's semantics.  Their results are booleans, so nothing is
differentiated; ``allclose``/``array_equal``/``array_equiv`` answer a Python bool, which
needs concrete values: on a traced tensor they raise ConcretizationError."""
from __future__ import annotations

import numpy as np

from ..errors import ConcretizationError
from ..ops import elementwise as ew
from .. import dtypes
from ..primitive import any_traced, code_of_value, shape_of
from ._arrays import tensor_or_array
from ._dispatch import implements
from .arithmetic import abs as _abs, add, multiply, subtract
from .comparison import equal, less_equal
from .logic import isfinite, isnan, logical_and, logical_or, where
from .reductions import all as _all


def _inexact(x):
    """An operand in the floating dtype NumPy's isclose compares it in."""
    code = code_of_value(x)
    return x if dtypes.is_inexact(code) else ew.convert(x, dtypes.FLOAT64)


@implements("numpy.isclose")
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Where ``|a - b| <= atol + rtol * |b|`` (infinities close to equal infinities; NaNs
    to NaNs with ``equal_nan``): a bool tensor, never differentiated."""
    a, b = _inexact(tensor_or_array(a, "isclose")), _inexact(tensor_or_array(b, "isclose"))
    finite = logical_and(isfinite(a), isfinite(b))
    a_finite, b_finite = where(finite, a, 0), where(finite, b, 0)   # no inf - inf warning
    within = less_equal(_abs(subtract(a_finite, b_finite)),
                        add(atol, multiply(rtol, _abs(b_finite))))
    result = where(finite, within, equal(a, b))
    if equal_nan:
        result = logical_or(result, logical_and(isnan(a), isnan(b)))
    return result


def _refuse_traced(name: str, *operands) -> None:
    """A Python bool needs concrete values; a traced placeholder has none."""
    if any_traced(operands):
        raise ConcretizationError(
            f"{name}: answers a Python bool, which needs the concrete values of its "
            "operands; a traced placeholder has none (use isclose/equal and all() for a "
            "bool tensor instead)")


@implements("numpy.allclose")
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether every element of ``a`` is close to ``b`` (see :func:`isclose`)."""
    _refuse_traced("allclose", a, b)
    return bool(_all(isclose(a, b, rtol, atol, equal_nan)))


@implements("numpy.array_equal")
def array_equal(a1, a2, equal_nan=False) -> bool:
    """Whether ``a1`` and ``a2`` have one shape and equal elements (NaNs equal with
    ``equal_nan``)."""
    a1, a2 = tensor_or_array(a1, "array_equal"), tensor_or_array(a2, "array_equal")
    if shape_of(a1) != shape_of(a2):
        return False
    _refuse_traced("array_equal", a1, a2)
    same = equal(a1, a2)
    if equal_nan and (dtypes.is_inexact(code_of_value(a1)) or
                      dtypes.is_inexact(code_of_value(a2))):
        same = logical_or(same, logical_and(isnan(a1), isnan(a2)))
    return bool(_all(same))


@implements("numpy.array_equiv")
def array_equiv(a1, a2) -> bool:
    """Whether ``a1`` and ``a2`` broadcast to one shape with equal elements."""
    a1, a2 = tensor_or_array(a1, "array_equiv"), tensor_or_array(a2, "array_equiv")
    try:
        np.broadcast_shapes(shape_of(a1), shape_of(a2))
    except ValueError:
        return False
    _refuse_traced("array_equiv", a1, a2)
    return bool(_all(equal(a1, a2)))


__all__ = ["isclose", "allclose", "array_equal", "array_equiv"]

"""Elementwise comparisons, as NumPy's: boolean results, never differentiated."""
from __future__ import annotations

import numpy as np

from ..ops import elementwise as ew
from ..ops import structural as st
from ..primitive import bind2, shape_of
from ._dispatch import implements
from ._operands import broadcast_shapes, is_tensor, is_traced, operand, result_code


def _compare(name, prim, numpy_fn, a, b):
    if not (is_tensor(a) or is_tensor(b)):
        return numpy_fn(a, b)
    traced = is_traced(a) or is_traced(b)
    code = result_code(name, a, b)
    a, b = operand(a, code, traced), operand(b, code, traced)
    shape = broadcast_shapes(name, shape_of(a), shape_of(b))
    return bind2(prim, None, st.broadcast_to(a, shape), st.broadcast_to(b, shape))


@implements(np.equal)
def equal(x1, x2):
    """``x1 == x2`` elementwise."""
    return _compare("equal", ew.equal_p, np.equal, x1, x2)


@implements(np.not_equal)
def not_equal(x1, x2):
    """``x1 != x2`` elementwise."""
    return _compare("not_equal", ew.not_equal_p, np.not_equal, x1, x2)


@implements(np.less)
def less(x1, x2):
    """``x1 < x2`` elementwise."""
    return _compare("less", ew.less_p, np.less, x1, x2)


@implements(np.less_equal)
def less_equal(x1, x2):
    """``x1 <= x2`` elementwise."""
    return _compare("less_equal", ew.less_equal_p, np.less_equal, x1, x2)


@implements(np.greater)
def greater(x1, x2):
    """``x1 > x2`` elementwise."""
    return _compare("greater", ew.greater_p, np.greater, x1, x2)


@implements(np.greater_equal)
def greater_equal(x1, x2):
    """``x1 >= x2`` elementwise."""
    return _compare("greater_equal", ew.greater_equal_p, np.greater_equal, x1, x2)


__all__ = ['equal', 'not_equal', 'less', 'less_equal', 'greater', 'greater_equal']

"""Reductions over axes: ``sum``, ``max``."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ops import structural as st
from ..primitive import describe, shape_of
from ._dispatch import implements
from ._operands import is_tensor, normalize_axes


def _reduction(name, strict, numpy_fn, x, axis, keepdims):
    if not is_tensor(x):
        return numpy_fn(x, axis=axis, keepdims=keepdims)
    shape = shape_of(x)
    axes = normalize_axes(name, axis, len(shape))
    result = strict(x, axes)
    if keepdims:
        result = st.reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape)))
    return result


def sum(x, axis=None, keepdims=False):  # noqa: A001 - NumPy's name
    """Sum over ``axis`` (all axes by default), like ``np.sum``."""
    return _reduction("sum", st.reduce_sum, np.sum, x, axis, keepdims)


def amax(x, axis=None, keepdims=False):
    """Maximum over ``axis``; the derivative goes to the arg-max, split evenly on ties."""
    if is_tensor(x):
        shape = shape_of(x)
        if any(shape[a] == 0 for a in normalize_axes("amax", axis, len(shape))):
            raise ShapeError(f"amax: zero-size reduction over {describe(x)} (no maximum)")
    return _reduction("amax", st.reduce_max, np.max, x, axis, keepdims)


max = amax  # noqa: A001


implements(np.sum)(sum)
implements(np.max, np.amax)(amax)

__all__ = ['sum', 'amax', 'max']

"""Indexing of tensors: ``x[index]``."""
from __future__ import annotations

import builtins
import numbers

import numpy as np

from ..errors import ArgumentError, ConcretizationError, ShapeError
from ..ops import structural as st
from ..primitive import describe, shape_of
from ._operands import is_tensor


def getitem(x, index):
    """Basic indexing: integers, slices (any step), ``...`` and ``None``."""
    if not is_tensor(x):
        return np.asarray(x)[index]
    if not isinstance(index, tuple):
        index = (index,)
    shape = shape_of(x)
    n_axes = 0
    for item in index:
        if item is None or item is Ellipsis:
            continue
        if isinstance(item, (slice, numbers.Integral)) and not isinstance(item, bool):
            n_axes += 1
        elif is_tensor(item):
            raise ConcretizationError("indexing with a tensor is not supported; use "
                                      "integers and slices")
        else:
            raise ArgumentError(f"index {item!r}: only integers, slices, ... and None are "
                            "supported (no advanced indexing)")
    if n_axes > len(shape):
        raise ShapeError(f"index {index}: too many indices for {describe(x)}")
    if builtins.sum(1 for item in index if item is Ellipsis) > 1:
        raise ShapeError("an index can only have a single ellipsis")
    spec, final_shape, axis = [], [], 0
    for item in index:
        if item is Ellipsis:
            for _ in range(len(shape) - n_axes):
                spec.append((0, shape[axis], 1))
                final_shape.append(shape[axis])
                axis += 1
        elif item is None:
            final_shape.append(1)
        elif isinstance(item, slice):
            if item.step == 0:
                raise ShapeError(f"index {index}: slice step cannot be zero")
            start, stop, step = item.indices(shape[axis])
            length = len(range(start, stop, step))
            spec.append((start, stop, step) if length else (0, 0, 1))   # empty: canonical
            final_shape.append(length)
            axis += 1
        else:
            i = int(item)
            if not -shape[axis] <= i < shape[axis]:
                raise ShapeError(f"index {i} is out of bounds for axis {axis} of "
                                 f"{describe(x)}")
            i %= shape[axis]
            spec.append((i, i + 1, 1))
            axis += 1
    for d in shape[axis:]:
        spec.append((0, d, 1))
        final_shape.append(d)
    return st.reshape(st.slice_axes(x, tuple(spec)), tuple(final_shape))


__all__ = ['getitem']

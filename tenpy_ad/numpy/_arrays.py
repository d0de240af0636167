"""Array arguments that hold tensors inside (nested) lists or tuples: the functions of
:mod:`tenpy_ad.numpy` pass their array arguments through :func:`as_array` (or
:func:`tensor_or_array`), so such a list is stacked differentiably instead of being
converted (and detached) by NumPy."""
from __future__ import annotations

import numpy as np

from .._sequences import numpy_array
from ..errors import ArgumentValueError, ShapeError
from ..ops import structural as st
from ..primitive import describe, shape_of
from ._operands import common, holds_tensor, normalize_axis


def as_array(x):
    """``x`` as an operand: a list/tuple holding tensors becomes one stacked tensor; any
    other value is returned as it is (a Python scalar stays weak)."""
    if isinstance(x, (list, tuple)) and holds_tensor(x):
        return stacked(x)
    return x


def tensor_or_array(x, name: str = "array"):
    """``x`` as an array operand: a tensor as it is, a list/tuple holding tensors stacked,
    anything else NumPy's array of it (a ragged list is a ShapeError naming ``name``)."""
    if holds_tensor(x):                  # a tensor, or a list/tuple with one inside
        return stacked(x) if isinstance(x, (list, tuple)) else x
    return numpy_array(name, np.asarray, x)


def stacked(nested):
    """A tensor from nested lists/tuples of tensors, arrays and scalars (the items of
    each list of one shape, as NumPy requires)."""
    if not isinstance(nested, (list, tuple)):
        return nested
    if not nested:
        raise ShapeError("array: an empty list beside tensors has no shape to stack")
    return stack_operands("array", [stacked(item) for item in nested], 0)


def common_operands(name: str, arrays) -> list:
    """The operands in one dtype (NumPy's promotion) and one mode."""
    arrays = [as_array(a) for a in arrays]
    if not arrays:
        raise ArgumentValueError(f"{name}: need at least one array")
    return common(name, *arrays)


def stack_operands(name: str, arrays, axis) -> object:
    """``arrays`` (of one shape) joined along a new axis ``axis``."""
    xs = common_operands(name, arrays)
    shape = shape_of(xs[0])
    for x in xs[1:]:
        if shape_of(x) != shape:
            raise ShapeError(f"{name}: all arrays need one shape, got "
                             f"{', '.join(describe(y) for y in xs)}")
    axis = normalize_axis(name, axis, len(shape) + 1)
    new_shape = shape[:axis] + (1,) + shape[axis:]
    return st.concatenate([st.reshape(x, new_shape) for x in xs], axis)

"""Array arguments that hold tensors inside (nested) lists or tuples: every function of
:mod:`tenpy_ad.numpy` passes its array arguments through :func:`as_array`, so such a list
is stacked differentiably instead of being converted (and detached) by NumPy.  Also
:func:`numpy_functions`, for registering NumPy functions that older NumPys lack."""
from __future__ import annotations

import numpy as np

from ..errors import ArgumentValueError, ShapeError
from ..ops import structural as st
from ..primitive import describe, shape_of
from ._operands import is_tensor, is_traced, normalize_axis, operand, result_code


def holds_tensor(x) -> bool:
    """Whether ``x`` is a (nested) list or tuple with a tensor somewhere inside."""
    if not isinstance(x, (list, tuple)):
        return False
    pending = list(x)
    while pending:                       # an explicit stack: nesting can be deep
        item = pending.pop()
        if is_tensor(item):
            return True
        if isinstance(item, (list, tuple)):
            pending.extend(item)
    return False


def as_array(x):
    """``x`` as an operand: a list/tuple holding tensors becomes one stacked tensor; any
    other value is returned as it is."""
    return stacked(x) if holds_tensor(x) else x


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
    traced = any(is_traced(a) for a in arrays)
    code = result_code(name, *arrays)
    return [operand(a, code, traced) for a in arrays]


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


def numpy_functions(*names: str) -> list:
    """The NumPy functions of these names that the installed NumPy has (for
    ``implements``: some are newer than the oldest NumPy supported)."""
    return [getattr(np, name) for name in names if hasattr(np, name)]

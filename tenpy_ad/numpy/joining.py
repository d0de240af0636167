"""Joining tensors: ``concatenate``, ``stack``, and arrays built from (nested) lists of
tensors: ``array``, ``asarray``, and ``as_array``, which every function of
:mod:`tenpy_ad.numpy` applies to its array arguments so that a list of tensors is stacked
differentiably instead of detached."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ops import structural as st
from ..primitive import describe, shape_of
from ._dispatch import implements
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
    return array(x) if holds_tensor(x) else x


@implements(np.array)
def array(object, dtype=None, copy=True, ndmin=0):  # noqa: A002 - NumPy's names
    """An array from ``object``; nested lists and tuples holding tensors are stacked
    differentiably (so ``tnp.array([x, 2 * x])`` is a tensor with a gradient)."""
    if not (is_tensor(object) or holds_tensor(object)):
        return np.array(object, dtype=dtype, copy=copy, ndmin=ndmin)
    result = _stacked(object)
    if dtype is not None:
        result = result.astype(dtype)
    if len(shape_of(result)) < ndmin:
        result = st.reshape(result, (1,) * (ndmin - len(shape_of(result))) + shape_of(result))
    return result


@implements(np.asarray)
def asarray(a, dtype=None):
    """``a`` as an array; a tensor stays itself (converted to ``dtype`` if given)."""
    if is_tensor(a):
        return a if dtype is None else a.astype(dtype)
    if holds_tensor(a):
        return array(a, dtype=dtype)
    return np.asarray(a, dtype=dtype)


def _stacked(nested):
    """A tensor from nested lists/tuples of tensors, arrays and scalars (the items of
    each list of one shape, as NumPy requires)."""
    if not isinstance(nested, (list, tuple)):
        return nested
    if not nested:
        raise ShapeError("array: an empty list beside tensors has no shape to stack")
    return stack([_stacked(item) for item in nested])


def _common_operands(name: str, arrays) -> list:
    """The operands in one dtype (NumPy's promotion) and one mode."""
    arrays = [as_array(a) for a in arrays]
    if not arrays:
        raise ValueError(f"{name}: need at least one array")
    traced = any(is_traced(a) for a in arrays)
    code = result_code(name, *arrays)
    return [operand(a, code, traced) for a in arrays]


@implements(np.concatenate)
def concatenate(arrays, axis=0, out=None, dtype=None):
    """Join arrays along an existing axis (``axis=None``: of the flattened arrays)."""
    if out is not None:
        raise ValueError("concatenate: out= is not supported (tensors are immutable)")
    if not any(is_tensor(a) for a in arrays):
        return np.concatenate(arrays, axis=axis, dtype=dtype)
    xs = _common_operands("concatenate", arrays)
    if axis is None:
        xs = [st.reshape(x, (int(np.prod(shape_of(x))),)) for x in xs]
        axis = 0
    ndim = len(shape_of(xs[0]))
    if ndim == 0:
        raise ShapeError("concatenate: zero-dimensional arrays cannot be concatenated")
    result = st.concatenate(xs, normalize_axis("concatenate", axis, ndim))
    return result if dtype is None else result.astype(dtype)


@implements(np.stack)
def stack(arrays, axis=0, out=None, dtype=None):
    """Join arrays of one shape along a new axis."""
    if out is not None:
        raise ValueError("stack: out= is not supported (tensors are immutable)")
    if not any(is_tensor(a) for a in arrays):
        return np.stack(arrays, axis=axis, dtype=dtype)
    xs = _common_operands("stack", arrays)
    shape = shape_of(xs[0])
    for x in xs[1:]:
        if shape_of(x) != shape:
            raise ShapeError(f"stack: all arrays need one shape, got "
                             f"{', '.join(describe(y) for y in xs)}")
    axis = normalize_axis("stack", axis, len(shape) + 1)
    new_shape = shape[:axis] + (1,) + shape[axis:]
    result = st.concatenate([st.reshape(x, new_shape) for x in xs], axis)
    return result if dtype is None else result.astype(dtype)


__all__ = ["array", "asarray", "concatenate", "stack"]

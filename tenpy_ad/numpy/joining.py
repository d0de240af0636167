"""Joining tensors: ``concatenate``, ``stack``, ``vstack``, ``hstack``, ``dstack``,
``column_stack``, ``block``, ``append``, ``unstack``, and arrays built from (nested) lists
of tensors: ``array``, ``asarray``.  Every join is one ``concatenate`` primitive (whose
cotangent is a slice per operand) after reshapes; the operands are promoted as NumPy
promotes them."""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import ArgumentError, ArgumentValueError, DTypeError, ShapeError
from ..ops import structural as st
from ..primitive import shape_of
from ._arrays import as_array, common_operands, stack_operands, stacked, tensor_or_array
from ._dispatch import implements
from ._operands import is_tensor, normalize_axis
from ._views import copy_tensor, is_view_of, selected
from .shaping import atleast_1d, atleast_2d, atleast_3d, ndim, ravel, reshape

__all__ = ["array", "asarray", "asanyarray", "ascontiguousarray", "concatenate", "stack",
           "vstack", "hstack", "dstack", "column_stack", "row_stack", "block", "append",
           "unstack"]


def _sequence(arrays) -> list:
    """The items of a sequence argument; a tensor is a sequence of its rows, as an
    ndarray is."""
    if is_tensor(arrays):
        shape = shape_of(arrays)
        if not shape:
            raise ShapeError("a 0-d tensor is not a sequence of arrays")
        return [arrays[i] for i in range(shape[0])]
    return list(arrays)


def _cast(name: str, x, dtype, casting: str):
    """``x`` converted to ``dtype`` if one is given, checked against ``casting``."""
    if dtype is None:
        return x
    if not np.can_cast(x.dtype, dtype, casting=casting):
        raise DTypeError(f"{name}: cannot cast {x.dtype} to {np.dtype(dtype)} with "
                         f"casting={casting!r}")
    return x.astype(dtype)


def _refuse_out(name: str, out) -> None:
    if out is not None:
        raise ArgumentValueError(f"{name}: out= is taken by keyword (out=t writes the result into t)")


# ------------------------------------------------------------------ arrays from lists

def _stacked_array(nested, dtype=None, ndmin: int = 0):
    """A tensor from a tensor or nested lists holding tensors (stacked differentiably),
    converted to ``dtype`` if given, with at least ``ndmin`` axes."""
    result = stacked(nested)
    if dtype is not None:
        result = result.astype(dtype)
    if len(shape_of(result)) < ndmin:
        result = reshape(result, (1,) * (ndmin - len(shape_of(result))) + shape_of(result))
    return result                     # (shaping.reshape: a view of a tensor, as NumPy's)


@implements("numpy.array")
def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0,  # noqa: A002
          **kwargs):
    """An array from ``object``; nested lists and tuples holding tensors are stacked
    differentiably (so ``tnp.array([x, 2 * x])`` is a tensor with a gradient).  Of a
    tensor, a copy unless ``copy`` is false (then the tensor itself, or a view)."""
    result = _stacked_array(object, dtype, ndmin)
    if copy and (result is object or is_view_of(result, object)):
        return copy_tensor(result)      # writes into the copy leave ``object`` alone
    return result


@implements("numpy.asarray")
def asarray(a, dtype=None, order=None, **kwargs):
    """``a`` as an array; a tensor stays itself (converted to ``dtype`` if given)."""
    return _stacked_array(a, dtype)


@implements("numpy.asanyarray")
def asanyarray(a, dtype=None, order=None, **kwargs):
    """As :func:`asarray`."""
    return _stacked_array(a, dtype)


@implements("numpy.ascontiguousarray")
def ascontiguousarray(a, dtype=None, **kwargs):
    """As :func:`asarray`, of at least one dimension (a tensor has no memory layout)."""
    return _stacked_array(a, dtype, ndmin=1)


# ------------------------------------------------------------------ joins

@implements("numpy.concatenate")
def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays along an existing axis (``axis=None``: of the flattened arrays)."""
    _refuse_out("concatenate", out)
    xs = common_operands("concatenate", _sequence(arrays))
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    ndim = len(shape_of(xs[0]))
    if ndim == 0:
        raise ShapeError("concatenate: zero-dimensional arrays cannot be concatenated")
    result = st.concatenate(xs, normalize_axis("concatenate", axis, ndim))
    return _cast("concatenate", result, dtype, casting)


@implements("numpy.stack")
def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays of one shape along a new axis."""
    _refuse_out("stack", out)
    result = stack_operands("stack", _sequence(arrays), axis)
    return _cast("stack", result, dtype, casting)


def _as_tuple(result) -> tuple:
    return result if isinstance(result, tuple) else (result,)


@implements("numpy.vstack")
def vstack(tup, *, dtype=None, casting="same_kind"):
    """Join along the first axis, 1-d arrays as rows (``atleast_2d``)."""
    return concatenate(_as_tuple(atleast_2d(*_sequence(tup))), 0, dtype=dtype,
                       casting=casting)


@implements("numpy.hstack")
def hstack(tup, *, dtype=None, casting="same_kind"):
    """Join along the second axis (the first for 1-d arrays)."""
    arrays = _as_tuple(atleast_1d(*_sequence(tup)))
    axis = 0 if ndim(arrays[0]) == 1 else 1
    return concatenate(arrays, axis, dtype=dtype, casting=casting)


@implements("numpy.dstack")
def dstack(tup):
    """Join along the third axis (``atleast_3d``: ``(N,)`` is ``(1, N, 1)``)."""
    return concatenate(_as_tuple(atleast_3d(*_sequence(tup))), 2)


@implements("numpy.column_stack")
def column_stack(tup):
    """Join 1-d arrays as columns (and 2-d arrays as they are) into a 2-d array."""
    columns = [as_array(a) for a in _sequence(tup)]
    return concatenate([reshape(a, (-1, 1)) if ndim(a) < 2 else a for a in columns], 1)


@implements("numpy.row_stack")
def row_stack(tup, *, dtype=None, casting="same_kind"):
    """NumPy's deprecated alias of :func:`vstack` (it warns as NumPy 2 does)."""
    warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.",
                  DeprecationWarning, stacklevel=2)
    return vstack(tup, dtype=dtype, casting=casting)


def _block_depth(arrays) -> tuple:
    """The list depth of ``arrays`` (every leaf at the same depth, as NumPy requires)
    and the largest number of axes of a leaf."""
    depth, max_ndim = None, 0
    pending = [(arrays, 0, "arrays")]
    while pending:
        item, level, where = pending.pop()
        if isinstance(item, tuple):
            raise ArgumentError(f"block: {where} is a tuple; only lists arrange blocks")
        if isinstance(item, list):
            if not item:
                raise ArgumentValueError(f"block: the list at {where} cannot be empty")
            pending.extend((x, level + 1, f"{where}[{i}]") for i, x in enumerate(item))
        elif depth is None or depth == level:
            depth, max_ndim = level, max(max_ndim, ndim(item))
        else:
            raise ArgumentValueError(f"block: list depths are mismatched ({depth} and {level} at "
                                     f"{where})")
    return depth, max_ndim


def _assemble(item, level: int, depth: int, n_axes: int):
    """The block of nested list ``item`` at ``level``: its leaves with ``n_axes`` axes,
    the innermost lists joined along the last axis, the next ones along the one before."""
    if level == depth:
        leaf = tensor_or_array(item, "block")                  # a scalar leaf is not weak
        return reshape(leaf, (1,) * (n_axes - ndim(leaf)) + shape_of(leaf))
    parts = [_assemble(x, level + 1, depth, n_axes) for x in item]
    return concatenate(parts, axis=level - depth)


@implements("numpy.block")
def block(arrays):
    """A block matrix (or tensor) from nested lists of blocks: the innermost lists are
    joined along the last axis, the lists around them along the one before, and so on."""
    depth, max_ndim = _block_depth(arrays)
    return _assemble(arrays, 0, depth, max(depth, max_ndim))


@implements("numpy.append")
def append(arr, values, axis=None):
    """``values`` joined after ``arr`` along ``axis`` (``None``: both flattened)."""
    arr, values = as_array(arr), as_array(values)
    if axis is None:
        arr, values, axis = ravel(arr), ravel(values), 0
    return concatenate((arr, values), axis)


@implements("numpy.unstack")
def unstack(x, /, *, axis=0):
    """The slices along ``axis``, as a tuple (the inverse of :func:`stack`)."""
    x = tensor_or_array(x, "unstack")
    shape = shape_of(x)
    if not shape:
        raise ShapeError("unstack: a 0-d tensor has no axis to unstack")
    axis = normalize_axis("unstack", axis, len(shape))
    rest = shape[:axis] + shape[axis + 1:]
    spec = [(0, d, 1) for d in shape]
    pieces = []
    for i in range(shape[axis]):
        spec[axis] = (i, i + 1, 1)
        pieces.append(selected(st.reshape(st.slice_axes(x, tuple(spec)), rest), x, "unstack",
                               _piece(tuple(spec), rest)))
    return tuple(pieces)


def _piece(spec: tuple, shape: tuple):
    """How an unstacked piece (a view, as NumPy's) is recomputed from its base."""
    return lambda p: st.reshape(st.slice_axes(p, spec), shape)

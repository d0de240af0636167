"""The standard's functions that tenpy_ad.numpy has under NumPy's names or with NumPy's
signatures: thin adapters where the standard's semantics differ (keyword-only options,
``correction``, ``descending``, ``include_initial``, named-tuple results)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import numpy as tnp
from ..errors import ArgumentValueError, IndexingError
from ..primitive import Tensor
from ._convert import check_device, concrete_data, fresh, new_array, tensors

# ------------------------------------------------------------------ data types


def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` as ``dtype`` (differentiable between floating dtypes): a new tensor, or with
    ``copy=False`` and ``x`` already of ``dtype``, ``x`` itself."""
    check_device("astype", device)
    if not copy and np.dtype(dtype) == x.dtype:
        return x
    return fresh(tensors(tnp.astype(x, dtype)), [x])


# ------------------------------------------------------------------ elementwise


@new_array
def clip(x, /, min=None, max=None):                       # noqa: A002 - the standard's names
    """``x`` limited to ``[min, max]`` (either may be None, a scalar or a tensor), in
    ``x``'s dtype."""
    if min is None and max is None:
        return x
    result = tnp.clip(x, min, max)
    if result.dtype != x.dtype:
        result = tnp.astype(result, x.dtype)
    return tensors(result)


def _shift(name: str, ufunc, x1, x2):
    """A bit shift of integer values (never differentiated; computed from the values)."""
    a, b = concrete_data(name, x1), concrete_data(name, x2)
    return Tensor(np.asarray(ufunc(a, b)))


def bitwise_left_shift(x1, x2, /):
    """``x1 << x2`` of integer tensors (concrete values: eager tensors or arrays)."""
    return _shift("bitwise_left_shift", np.left_shift, x1, x2)


def bitwise_right_shift(x1, x2, /):
    """``x1 >> x2`` of integer tensors (concrete values: eager tensors or arrays)."""
    return _shift("bitwise_right_shift", np.right_shift, x1, x2)


def nextafter(x1, x2, /):
    """The next floating value after ``x1`` towards ``x2`` (concrete values only: the
    result is a step function of ``x1``, with no useful derivative)."""
    a, b = concrete_data("nextafter", x1), concrete_data("nextafter", x2)
    return Tensor(np.asarray(np.nextafter(a, b)))


# ------------------------------------------------------------------ statistics


def in_dtype(result, dtype):
    """``result`` in ``dtype`` when it is not already (``vecdot`` keeps its operands'
    promoted dtype where NumPy's widens small integers)."""
    if dtype is not None and result.dtype != np.dtype(dtype):
        result = tnp.astype(result, dtype)
    return tensors(result)


@new_array
def sum(x, /, *, axis=None, dtype=None, keepdims=False):     # noqa: A001
    """The sum over ``axis`` (all axes by default)."""
    return tensors(tnp.sum(x, axis=axis, dtype=dtype, keepdims=keepdims))


@new_array
def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """The product over ``axis`` (all axes by default)."""
    return tensors(tnp.prod(x, axis=axis, dtype=dtype, keepdims=keepdims))


@new_array
def max(x, /, *, axis=None, keepdims=False):                  # noqa: A001
    """The largest value over ``axis``."""
    return tensors(tnp.max(x, axis=axis, keepdims=keepdims))


@new_array
def min(x, /, *, axis=None, keepdims=False):                  # noqa: A001
    """The smallest value over ``axis``."""
    return tensors(tnp.min(x, axis=axis, keepdims=keepdims))


@new_array
def mean(x, /, *, axis=None, keepdims=False):
    """The arithmetic mean over ``axis``."""
    return tensors(tnp.mean(x, axis=axis, keepdims=keepdims))


@new_array
def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """The variance over ``axis``, divided by ``N - correction``."""
    return tensors(tnp.var(x, axis=axis, ddof=correction, keepdims=keepdims))


@new_array
def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    """The standard deviation over ``axis``, with ``N - correction`` degrees of freedom."""
    return tensors(tnp.std(x, axis=axis, ddof=correction, keepdims=keepdims))


def all(x, /, *, axis=None, keepdims=False):                  # noqa: A001
    """Whether every element over ``axis`` is true."""
    return tensors(tnp.all(x, axis=axis, keepdims=keepdims))


def any(x, /, *, axis=None, keepdims=False):                  # noqa: A001
    """Whether some element over ``axis`` is true."""
    return tensors(tnp.any(x, axis=axis, keepdims=keepdims))


def _cumulative(name, running, fill, x, axis, dtype, include_initial):
    if axis is None:
        if x.ndim > 1:
            raise ArgumentValueError(f"{name}: axis is required for a tensor of {x.ndim} axes")
        axis = 0
    if x.ndim == 0:
        raise ArgumentValueError(f"{name}: needs a tensor with at least one axis")
    result = tensors(running(x, axis=axis, dtype=dtype))
    if include_initial:
        axis = axis % x.ndim
        shape = tuple(1 if i == axis else n for i, n in enumerate(x.shape))
        initial = np.full(shape, fill, dtype=result.dtype)
        result = tnp.concatenate([initial, result], axis=axis)
    return tensors(result)


@new_array
def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """The running sum along ``axis`` (with ``include_initial``: starting from 0)."""
    return _cumulative("cumulative_sum", tnp.cumsum, 0, x, axis, dtype, include_initial)


@new_array
def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """The running product along ``axis`` (with ``include_initial``: starting from 1)."""
    return _cumulative("cumulative_prod", tnp.cumprod, 1, x, axis, dtype, include_initial)


@new_array
def diff(x, /, n=1, axis=-1, *, prepend=None, append=None):
    """The ``n``-th forward difference along ``axis``.  The standard makes ``n`` and
    ``axis`` keyword-only; NumPy's and PyTorch's order is also taken, as libraries call
    ``xp.diff(x, 2)`` (scikit-learn's ``roc_curve``)."""
    kwargs = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return tensors(tnp.diff(x, n=n, axis=axis, **kwargs))


# ------------------------------------------------------------------ searching, sorting


def argmax(x, /, *, axis=None, keepdims=False):
    """The int64 position of the largest value (the first one) over ``axis``."""
    return tensors(tnp.argmax(x, axis=axis, keepdims=keepdims))


def argmin(x, /, *, axis=None, keepdims=False):
    """The int64 position of the smallest value (the first one) over ``axis``."""
    return tensors(tnp.argmin(x, axis=axis, keepdims=keepdims))


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """The number of nonzero elements over ``axis`` (int64)."""
    return tensors(tnp.count_nonzero(x, axis=axis, keepdims=keepdims))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Where to insert ``x2`` into the sorted 1-d ``x1`` to keep it sorted."""
    return tensors(tnp.searchsorted(x1, x2, side=side, sorter=sorter))


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """The int64 positions that sort ``x`` along ``axis`` (ties keep their order, also
    with ``descending``)."""
    if not descending:
        return tensors(tnp.argsort(x, axis=axis, stable=True))
    flipped = tnp.argsort(tnp.flip(x, axis=axis), axis=axis, stable=True)
    last = x.shape[axis] - 1 if x.ndim else 0
    return tensors(last - tnp.flip(flipped, axis=axis))


@new_array
def sort(x, /, *, axis=-1, descending=False, stable=True):
    """``x`` sorted along ``axis`` (differentiable: the derivative follows the order)."""
    if not descending:
        return tensors(tnp.sort(x, axis=axis, stable=True))
    order = argsort(x, axis=axis, descending=True)
    return tensors(tnp.take_along_axis(x, order, axis=axis))


# ------------------------------------------------------------------ sets (concrete values)

UniqueAllResult = namedtuple("UniqueAllResult", "values indices inverse_indices counts")
UniqueCountsResult = namedtuple("UniqueCountsResult", "values counts")
UniqueInverseResult = namedtuple("UniqueInverseResult", "values inverse_indices")


def _unique(name, x, index, inverse, counts):
    concrete_data(name, x)                 # traced: ConcretizationError naming the function
    found = tnp.unique(tnp.reshape(x, (-1,)), return_index=index, return_inverse=inverse,
                       return_counts=counts, equal_nan=False)
    return list(tensors(found)) if isinstance(found, tuple) else [tensors(found)]


def unique_all(x, /):
    """The distinct values (NaNs each distinct), the flat index of each one's first
    occurrence, the inverse indices (``x``'s shape) and the counts."""
    values, indices, inverse, counts = _unique("unique_all", x, True, True, True)
    return UniqueAllResult(values, indices, tnp.reshape(inverse, x.shape), counts)


def unique_counts(x, /):
    """The distinct values and how often each occurs."""
    return UniqueCountsResult(*_unique("unique_counts", x, False, False, True))


def unique_inverse(x, /):
    """The distinct values and, in ``x``'s shape, which one each element is."""
    values, inverse = _unique("unique_inverse", x, False, True, False)
    return UniqueInverseResult(values, tnp.reshape(inverse, x.shape))


def unique_values(x, /):
    """The distinct values, sorted (NaNs each distinct)."""
    return _unique("unique_values", x, False, False, False)[0]


# ------------------------------------------------------------------ manipulation


@new_array
def concat(arrays, /, *, axis=0):
    """The tensors joined along ``axis`` (``None``: flattened first)."""
    if axis is None:
        arrays = [tnp.reshape(a, (-1,)) for a in arrays]
        axis = 0
    return tensors(tnp.concatenate(list(arrays), axis=axis))


@new_array
def stack(arrays, /, *, axis=0):
    """The tensors stacked along a new ``axis``."""
    return tensors(tnp.stack(list(arrays), axis=axis))


def expand_dims(x, /, axis=0):
    """``x`` with a new axis of length 1 at ``axis`` (in ``[-ndim - 1, ndim]``)."""
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise IndexingError(f"expand_dims: axis {axis} is out of range for a new axis of a "
                            f"{x.ndim}-d tensor")
    return tensors(tnp.expand_dims(x, axis))


def flip(x, /, *, axis=None):
    """``x`` reversed along ``axis`` (every axis by default)."""
    return tensors(tnp.flip(x, axis=axis))


def permute_dims(x, /, axes):
    """``x`` with its axes in the order ``axes``."""
    return tensors(tnp.transpose(x, axes))


def reshape(x, /, shape, *, copy=None):
    """``x`` in ``shape`` (one entry may be -1)."""
    return tensors(tnp.reshape(x, tuple(shape)))


@new_array
def roll(x, /, shift, *, axis=None):
    """``x`` shifted cyclically by ``shift`` along ``axis`` (flattened by default)."""
    return tensors(tnp.roll(x, shift, axis=axis))


def squeeze(x, /, axis):
    """``x`` without the length-1 axes ``axis``."""
    return tensors(tnp.squeeze(x, axis=axis))


@new_array
def repeat(x, repeats, /, *, axis=None):
    """Each element repeated ``repeats`` times along ``axis`` (flattened by default)."""
    if not isinstance(repeats, int):
        repeats = concrete_data("repeat", repeats)
    return tensors(tnp.repeat(x, repeats, axis=axis))


@new_array
def tile(x, repetitions, /):
    """``x`` tiled ``repetitions`` times along each axis."""
    return tensors(tnp.tile(x, tuple(repetitions)))


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple."""
    return tuple(tensors(tnp.unstack(x, axis=axis)))


def broadcast_arrays(*arrays):
    """The tensors broadcast to their common shape."""
    return list(tensors(tuple(tnp.broadcast_arrays(*arrays))))


def broadcast_to(x, /, shape):
    """``x`` broadcast to ``shape``."""
    return tensors(tnp.broadcast_to(x, tuple(shape)))


def moveaxis(x, source, destination, /):
    """``x`` with axes ``source`` moved to ``destination``."""
    return tensors(tnp.moveaxis(x, source, destination))


@new_array
def take(x, indices, /, *, axis=None):
    """The elements at ``indices`` along ``axis`` (``x`` 1-d: axis may be omitted)."""
    if axis is None:
        if x.ndim != 1:
            raise ArgumentValueError(f"take: axis is required for a tensor of {x.ndim} axes")
        axis = 0
    return tensors(tnp.take(x, indices, axis=axis))


@new_array
def take_along_axis(x, indices, /, *, axis=-1):
    """The elements at ``indices`` (of ``x``'s rank) along ``axis``."""
    return tensors(tnp.take_along_axis(x, indices, axis))


@new_array
def where(condition, x1=None, x2=None, /):
    """``x1`` where ``condition`` holds, else ``x2`` (scalars allowed).  With
    ``condition`` alone, NumPy's and PyTorch's form: :func:`nonzero` (scikit-learn's
    ``roc_curve`` calls it so)."""
    if x1 is None and x2 is None:
        return nonzero(condition)
    if x1 is None or x2 is None:
        raise ArgumentValueError("where: give both x1 and x2, or neither")
    return tensors(tnp.where(condition, x1, x2))


def nonzero(x, /):
    """The int64 indices of the nonzero elements, one tensor per axis (eager only)."""
    if x.ndim == 0:
        raise ArgumentValueError("nonzero: a 0-d tensor has no axes to index")
    return tuple(tensors(tnp.nonzero(x)))


# ------------------------------------------------------------------ products


@new_array
def matmul(x1, x2, /):
    """The matrix product (stacks broadcast)."""
    return tensors(tnp.matmul(x1, x2))


@new_array
def tensordot(x1, x2, /, *, axes=2):
    """The contraction of the last ``axes`` axes of ``x1`` with the first of ``x2`` (or
    of the listed axes)."""
    return tensors(tnp.tensordot(x1, x2, axes=axes))


@new_array
def vecdot(x1, x2, /, *, axis=-1):
    """``sum(conj(x1) * x2)`` along ``axis``, broadcasting the other axes."""
    result = tnp.vecdot(x1, x2, axis=axis)
    return in_dtype(result, np.result_type(x1.dtype, x2.dtype))


def matrix_transpose(x, /):
    """``x`` with its last two axes swapped."""
    return tensors(tnp.matrix_transpose(x))


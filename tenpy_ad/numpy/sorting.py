"""Sorting and searching: ``sort``, ``argsort``, ``lexsort``, ``sort_complex``,
``partition``, ``argpartition``, ``searchsorted``, ``digitize``, ``unique``.

Sorted values are differentiable: ``sort(a)`` is ``a`` gathered at a stable ``argsort``,
so the derivative follows the permutation.  At ties (where sorting is not differentiable)
tied entries keep their order, and each receives the derivative of the output position it
lands in.  Positions (``argsort``, ``lexsort``, ``argpartition``, ``searchsorted``,
``digitize``) are int64 and not differentiated.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import ArgumentError, ArgumentValueError, ShapeError
from ..ops import elementwise as ew
from ..ops import sorting as so
from ..ops import structural as st
from ..primitive import bind1, bind2, code_of_value, describe, shape_of
from ._arrays import as_array, tensor_or_array
from ._dispatch import implements
from ._operands import common, normalize_axis, value_like
from .indexing import concrete_values, getitem, take, take_along_axis


def _along(name: str, a, axis):
    """``a`` (flattened for ``axis=None``) and the axis, non-negative."""
    if axis is None:
        return st.reshape(a, (int(np.prod(shape_of(a))),)), 0
    return a, normalize_axis(name, axis, len(shape_of(a)))


def _sort_kind(name: str, kind):
    """NumPy's sort kinds, read as NumPy reads them (by the first letter: quicksort,
    heapsort, mergesort, stable); None is the default."""
    if kind is None or (isinstance(kind, str) and kind[:1].lower() in ("q", "h", "m", "s")):
        return kind
    raise ArgumentValueError(f"{name}: sort kind must be one of 'quicksort', 'heapsort', "
                             f"'mergesort' or 'stable', got {kind!r}")


def _no_order(name: str, order) -> None:
    if order is not None:
        raise ArgumentError(f"{name}: order= (fields of structured arrays) is not supported")


def _sortable(name: str, a, axis, kind, order) -> tuple:
    """``a`` (flattened for ``axis=None``) and the axis, after checking NumPy's ``kind``
    and ``order`` arguments."""
    _no_order(name, order)
    _sort_kind(name, kind)
    return _along(name, tensor_or_array(a, name), axis)


@implements("numpy.argsort")
def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``np.argsort``: the int64 positions that sort ``a`` along ``axis``."""
    a, axis = _sortable("argsort", a, axis, kind, order)
    return bind1(so.argsort_p, ("stable" if stable else kind, axis), a)


@implements("numpy.sort")
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``np.sort``, differentiable: the derivative follows the sorting permutation (tied
    entries keep their order, a stable sort)."""
    a, axis = _sortable("sort", a, axis, kind, order)
    return take_along_axis(a, bind1(so.argsort_p, ("stable", axis), a), axis)


@implements("numpy.lexsort")
def lexsort(keys, axis=-1):
    """``np.lexsort``: the int64 positions that sort by the last key, then the one before,
    ... (``keys``: a sequence of arrays of one shape, or a 2-d array of rows)."""
    keys = tensor_or_array(keys, "lexsort")
    ndim = len(shape_of(keys))
    if ndim < 2:
        raise ShapeError(f"lexsort: keys {describe(keys)} must hold at least one key of "
                         "at least one axis")
    return bind1(so.lexsort_p, normalize_axis("lexsort", axis, ndim - 1), keys)


@implements("numpy.sort_complex")
def sort_complex(a):
    """``np.sort_complex``: ``a`` as complex values, sorted by real then imaginary part
    along the last axis (differentiable as :func:`sort`)."""
    a = tensor_or_array(a, "sort_complex")
    return sort(ew.convert(a, dtypes.complex_code(code_of_value(a))))


def _kth(name: str, kth) -> tuple:
    kth = np.asarray(kth)
    if kth.dtype.kind not in "iu" or kth.ndim > 1:
        raise ArgumentError(f"{name}: kth must be an integer or a sequence of integers")
    return tuple(int(k) for k in np.atleast_1d(kth))


def _partitioned(name: str, a, kth, axis, order) -> tuple:
    """``a`` (flattened for ``axis=None``), the axis, and the int64 positions that put the
    ``kth`` entries in sorted place along it."""
    _no_order(name, order)
    a, axis = _along(name, tensor_or_array(a, name), axis)
    return a, axis, bind1(so.argpartition_p, (_kth(name, kth), axis), a)


@implements("numpy.argpartition")
def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """``np.argpartition``: int64 positions that put the ``kth`` entries in sorted place."""
    return _partitioned("argpartition", a, kth, axis, order)[2]


@implements("numpy.partition")
def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``np.partition``, differentiable: ``a`` gathered at ``argpartition``."""
    a, axis, positions = _partitioned("partition", a, kth, axis, order)
    return take_along_axis(a, positions, axis)


@implements("numpy.searchsorted")
def searchsorted(a, v, side="left", sorter=None):
    """``np.searchsorted``: int64 insertion positions of ``v`` into the sorted 1-d ``a``
    (``sorter``: the positions that sort ``a``)."""
    if side not in ("left", "right"):
        raise ArgumentValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    a, v = as_array(a), as_array(v)                  # a Python scalar ``v`` stays weak
    if sorter is not None:
        a = take(a, sorter)
    return bind2(so.searchsorted_p, side, *common("searchsorted", a, v))


@implements("numpy.digitize")
def digitize(x, bins, right=False):
    """``np.digitize``: the int64 index of the bin of each entry of ``x``; ``bins`` is
    monotonic, and concrete (its direction decides the search)."""
    bins = tensor_or_array(bins, "digitize")
    edges = concrete_values("digitize", bins)
    if edges.ndim != 1:
        raise ShapeError(f"digitize: bins must be 1-d, got {describe(bins)}")
    differences = np.diff(edges)
    side = "left" if right else "right"
    if np.all(differences >= 0):
        return searchsorted(bins, x, side=side)
    if np.all(differences <= 0):
        return len(edges) - searchsorted(getitem(bins, slice(None, None, -1)), x, side=side)
    raise ArgumentValueError("digitize: bins must be monotonically increasing or decreasing")


@implements("numpy.unique")
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, sorted=True):  # noqa: A002 - NumPy's names
    """``np.unique`` of concrete values (an eager tensor or a constant: the result's
    shape depends on the values).  The unique values are differentiable: each is taken
    from its first occurrence, which receives the whole derivative; indices, inverse and
    counts are int64."""
    ar = tensor_or_array(ar, "unique")
    value = concrete_values("unique", ar)
    found = np.unique(value, True, return_inverse, return_counts, axis, equal_nan=equal_nan,
                      **_unsorted(sorted))
    first = found[1]
    values = take(ar, first, axis=axis)
    extras = [first] if return_index else []
    extras += list(found[2:])
    if not extras:
        return values
    return (values, *[value_like(ar, e) for e in extras])


def _unsorted(sorted_: bool) -> dict:
    """``sorted=False`` for the NumPy versions that have it (2.3+); the default otherwise."""
    return {} if sorted_ else {"sorted": False}


__all__ = ["sort", "argsort", "lexsort", "sort_complex", "partition", "argpartition",
           "searchsorted", "digitize", "unique"]

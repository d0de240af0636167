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
from ..primitive import Tensor, bind1, bind2, constant, describe, shape_of
from ._dispatch import implements
from ._operands import is_tensor, is_traced, normalize_axis, operand, result_code
from .indexing import concrete_values, getitem, take, take_along_axis
from .joining import as_array


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


@implements(np.argsort)
def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``np.argsort``: the int64 positions that sort ``a`` along ``axis``."""
    a = as_array(a)
    if not is_tensor(a):
        return np.argsort(a, axis=axis, kind=kind, order=order, **_stable(stable))
    _no_order("argsort", order)
    kind = _sort_kind("argsort", kind)
    a, axis = _along("argsort", a, axis)
    return bind1(so.argsort_p, ("stable" if stable else kind, axis), a)


@implements(np.sort)
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``np.sort``, differentiable: the derivative follows the sorting permutation (tied
    entries keep their order, a stable sort)."""
    a = as_array(a)
    if not is_tensor(a):
        return np.sort(a, axis=axis, kind=kind, order=order, **_stable(stable))
    _no_order("sort", order)
    _sort_kind("sort", kind)
    a, axis = _along("sort", a, axis)
    return take_along_axis(a, bind1(so.argsort_p, ("stable", axis), a), axis)


@implements(np.lexsort)
def lexsort(keys, axis=-1):
    """``np.lexsort``: the int64 positions that sort by the last key, then the one before,
    ... (``keys``: a sequence of arrays of one shape, or a 2-d array of rows)."""
    keys = as_array(keys)
    if not is_tensor(keys):
        return np.lexsort(keys, axis=axis)
    ndim = len(shape_of(keys))
    if ndim < 2:
        raise ShapeError(f"lexsort: keys {describe(keys)} must hold at least one key of "
                         "at least one axis")
    return bind1(so.lexsort_p, normalize_axis("lexsort", axis, ndim - 1), keys)


@implements(np.sort_complex)
def sort_complex(a):
    """``np.sort_complex``: ``a`` as complex values, sorted by real then imaginary part
    along the last axis (differentiable as :func:`sort`)."""
    a = as_array(a)
    if not is_tensor(a):
        return np.sort_complex(a)
    code = a.dtype_code if is_traced(a) else dtypes.value_code(a.dtype)
    return sort(ew.convert(a, dtypes.complex_code(code)))


def _kth(name: str, kth) -> tuple:
    kth = np.asarray(kth)
    if kth.dtype.kind not in "iu" or kth.ndim > 1:
        raise ArgumentError(f"{name}: kth must be an integer or a sequence of integers")
    return tuple(int(k) for k in np.atleast_1d(kth))


@implements(np.argpartition)
def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """``np.argpartition``: int64 positions that put the ``kth`` entries in sorted place."""
    a = as_array(a)
    if not is_tensor(a):
        return np.argpartition(a, kth, axis=axis, kind=kind, order=order)
    _no_order("argpartition", order)
    a, axis = _along("argpartition", a, axis)
    return bind1(so.argpartition_p, (_kth("argpartition", kth), axis), a)


@implements(np.partition)
def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``np.partition``, differentiable: ``a`` gathered at ``argpartition``."""
    a = as_array(a)
    if not is_tensor(a):
        return np.partition(a, kth, axis=axis, kind=kind, order=order)
    _no_order("partition", order)
    a, axis = _along("partition", a, axis)
    positions = bind1(so.argpartition_p, (_kth("partition", kth), axis), a)
    return take_along_axis(a, positions, axis)


@implements(np.searchsorted)
def searchsorted(a, v, side="left", sorter=None):
    """``np.searchsorted``: int64 insertion positions of ``v`` into the sorted 1-d ``a``
    (``sorter``: the positions that sort ``a``)."""
    a, v = as_array(a), as_array(v)
    if not (is_tensor(a) or is_tensor(v) or is_tensor(sorter)):
        return np.searchsorted(a, v, side=side, sorter=sorter)
    if side not in ("left", "right"):
        raise ArgumentValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        a = take(a, sorter)
    traced = is_traced(a) or is_traced(v)
    code = result_code("searchsorted", a, v)
    return bind2(so.searchsorted_p, side, operand(a, code, traced), operand(v, code, traced))


@implements(np.digitize)
def digitize(x, bins, right=False):
    """``np.digitize``: the int64 index of the bin of each entry of ``x``; ``bins`` is
    monotonic, and concrete (its direction decides the search)."""
    x, bins = as_array(x), as_array(bins)
    if not (is_tensor(x) or is_tensor(bins)):
        return np.digitize(x, bins, right=right)
    edges = concrete_values("digitize", bins) if is_tensor(bins) else np.asarray(bins)
    if edges.ndim != 1:
        raise ShapeError(f"digitize: bins must be 1-d, got {describe(bins)}")
    differences = np.diff(edges)
    side = "left" if right else "right"
    if np.all(differences >= 0):
        return searchsorted(bins, x, side=side)
    if np.all(differences <= 0):
        return len(edges) - searchsorted(getitem(bins, slice(None, None, -1)), x, side=side)
    raise ArgumentValueError("digitize: bins must be monotonically increasing or decreasing")


@implements(np.unique)
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, sorted=True):  # noqa: A002 - NumPy's names
    """``np.unique`` of concrete values (an eager tensor or a constant: the result's
    shape depends on the values).  The unique values are differentiable: each is taken
    from its first occurrence, which receives the whole derivative; indices, inverse and
    counts are int64."""
    ar = as_array(ar)
    if not is_tensor(ar):
        return np.unique(ar, return_index, return_inverse, return_counts, axis,
                         equal_nan=equal_nan, **_unsorted(sorted))
    value = concrete_values("unique", ar)
    found = np.unique(value, True, return_inverse, return_counts, axis, equal_nan=equal_nan,
                      **_unsorted(sorted))
    first = found[1]
    values = take(ar, first, axis=axis)
    extras = [first] if return_index else []
    extras += list(found[2:])
    if not extras:
        return values
    wrap = constant if is_traced(ar) else Tensor
    return (values, *[wrap(e) for e in extras])


def _unsorted(sorted_: bool) -> dict:
    """``sorted=False`` for the NumPy versions that have it (2.3+); the default otherwise."""
    return {} if sorted_ else {"sorted": False}


def _stable(stable) -> dict:
    """``stable=`` for the NumPy versions that have it (2.0+) when it is given."""
    return {} if stable is None else {"stable": stable}


__all__ = ["sort", "argsort", "lexsort", "sort_complex", "partition", "argpartition",
           "searchsorted", "digitize", "unique"]

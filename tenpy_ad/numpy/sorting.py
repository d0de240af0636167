"""Sorting and searching: ``sort``, ``argsort``, ``partition``, ``argpartition``,
``searchsorted``, ``unique``.

Sorted values are differentiable: ``sort(a)`` is ``a`` gathered at a stable ``argsort``,
so the derivative follows the permutation.  At ties (where sorting is not differentiable)
tied entries keep their order, and each receives the derivative of the output position it
lands in.  Positions (``argsort``, ``argpartition``, ``searchsorted``) are int64 and not
differentiated.
"""
from __future__ import annotations

import numpy as np

from ..errors import ArgumentError
from ..ops import sorting as so
from ..ops import structural as st
from ..primitive import Tensor, bind1, bind2, constant, shape_of
from ._dispatch import implements
from ._operands import is_tensor, is_traced, normalize_axis, operand, result_code
from .indexing import _concrete, take, take_along_axis
from .joining import as_array


def _along(name: str, a, axis):
    """``a`` (flattened for ``axis=None``) and the axis, non-negative."""
    if axis is None:
        return st.reshape(a, (int(np.prod(shape_of(a))),)), 0
    return a, normalize_axis(name, axis, len(shape_of(a)))


def _no_order(name: str, order) -> None:
    if order is not None:
        raise ArgumentError(f"{name}: order= (fields of structured arrays) is not supported")


@implements(np.argsort)
def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``np.argsort``: the int64 positions that sort ``a`` along ``axis``."""
    a = as_array(a)
    if not is_tensor(a):
        return np.argsort(a, axis=axis, kind=kind, order=order, stable=stable)
    _no_order("argsort", order)
    a, axis = _along("argsort", a, axis)
    return bind1(so.argsort_p, ("stable" if stable else kind, axis), a)


@implements(np.sort)
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``np.sort``, differentiable: the derivative follows the sorting permutation (tied
    entries keep their order, a stable sort)."""
    a = as_array(a)
    if not is_tensor(a):
        return np.sort(a, axis=axis, kind=kind, order=order, stable=stable)
    _no_order("sort", order)
    a, axis = _along("sort", a, axis)
    return take_along_axis(a, bind1(so.argsort_p, ("stable", axis), a), axis)


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
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        a = take(a, sorter)
    traced = is_traced(a) or is_traced(v)
    code = result_code("searchsorted", a, v)
    return bind2(so.searchsorted_p, side, operand(a, code, traced), operand(v, code, traced))


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
                         equal_nan=equal_nan, sorted=sorted)
    value = _concrete("unique", ar)
    found = np.unique(value, True, return_inverse, return_counts, axis, equal_nan=equal_nan,
                      sorted=sorted)
    first = found[1]
    values = take(ar, first, axis=axis)
    extras = [first] if return_index else []
    extras += list(found[2:])
    if not extras:
        return values
    wrap = constant if is_traced(ar) else Tensor
    return (values, *[wrap(e) for e in extras])


__all__ = ["sort", "argsort", "partition", "argpartition", "searchsorted", "unique"]

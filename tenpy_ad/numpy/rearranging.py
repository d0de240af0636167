"""Rearranging entries: ``flip``, ``fliplr``, ``flipud``, ``rot90``, ``roll``, ``tile``,
``repeat``.  Flips are one reversed slice, rolls two slices joined, tiles and uniform
repeats a broadcast and a reshape; only ``repeat`` with one count per entry is a primitive
of its own (its transpose sums the copies of each entry)."""
from __future__ import annotations

import numbers

import numpy as np

from ..errors import ArgumentError, ArgumentValueError, ConcretizationError, ShapeError
from ..ops import elementwise as ew
from ..ops import structural as st
from ..primitive import as_array_result, describe, shape_of
from ..ops.indexing import concrete_value
from ._arrays import tensor_or_array
from ._dispatch import implements
from ._operands import int_tuple, is_tensor, normalize_axes, normalize_axis
from ._views import copy_tensor, selected, suspended
from .shaping import axis_list, ravel

fresh_array = ew.fresh_array


# ------------------------------------------------------------------ flips and rotations

@implements("numpy.flip")
def flip(m, axis=None):
    """Reverse the order of entries along ``axis`` (None: every axis; an int or tuple)."""
    m = tensor_or_array(m, "flip")
    shape = shape_of(m)
    axes = normalize_axes("flip", axis, len(shape))
    if not shape:
        return ew.fresh_result(m)       # NumPy's m[()]: a scalar
    spec = tuple((d - 1, -1, -1) if i in axes and d > 1 else (0, d, 1)
                 for i, d in enumerate(shape))
    return selected(st.slice_axes(m, spec), m, "flip", lambda p: st.slice_axes(p, spec))


@implements("numpy.fliplr")
def fliplr(m):
    """Reverse the columns (axis 1) of an array of 2 or more dimensions."""
    m = tensor_or_array(m, "fliplr")
    if len(shape_of(m)) < 2:
        raise ShapeError(f"fliplr: input must be >= 2-d, got {describe(m)}")
    return flip(m, 1)


@implements("numpy.flipud")
def flipud(m):
    """Reverse the rows (axis 0) of an array of 1 or more dimensions."""
    m = tensor_or_array(m, "flipud")
    if not shape_of(m):
        raise ShapeError(f"flipud: input must be >= 1-d, got {describe(m)}")
    return flip(m, 0)


@implements("numpy.rot90")
def rot90(m, k=1, axes=(0, 1)):
    """Rotate by ``k`` quarter turns in the plane of ``axes``, from the first axis
    towards the second."""
    m = tensor_or_array(m, "rot90")
    axes = int_tuple("rot90", "axes", axes)
    ndim = len(shape_of(m))
    if len(axes) != 2:
        raise ArgumentValueError("rot90: len(axes) must be 2")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == ndim:
        raise ArgumentValueError(f"rot90: axes {axes} must be different")
    first, second = axis_list("rot90", axes, ndim)
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ArgumentError(f"rot90: k must be an integer, got {k!r}")
    k = int(k) % 4
    if k == 0:
        return m
    with suspended():                  # the inner flip's view would be of a temporary
        turned = _quarter_turns(m, k, first, second, ndim)
    return selected(turned, m, "rot90", lambda p: rot90(p, k, axes))


def _quarter_turns(m, k: int, first: int, second: int, ndim: int):
    if k == 2:
        return flip(m, (first, second))
    perm = list(range(ndim))
    perm[first], perm[second] = second, first
    if k == 1:
        return st.transpose(flip(m, second), tuple(perm))
    return flip(st.transpose(m, tuple(perm)), second)


# ------------------------------------------------------------------ roll

@implements("numpy.roll")
def roll(a, shift, axis=None):
    """Shift entries cyclically by ``shift`` along ``axis`` (None: of the flattened
    array, reshaped back); ``shift`` and ``axis`` may be matching tuples."""
    a = tensor_or_array(a, "roll")
    shape = shape_of(a)
    if axis is None:
        # (NumPy's roll of a 0-d array is a 0-d array, not a scalar)
        return as_array_result(st.reshape(roll(ravel(a), shift, 0), shape))
    pairs = np.broadcast(np.asarray(shift), np.asarray(axis))
    if pairs.ndim > 1:
        raise ArgumentValueError("roll: 'shift' and 'axis' should be scalars or 1-d sequences")
    totals = {}
    for s, ax in pairs:
        ax = normalize_axis("roll", int(ax), len(shape))
        totals[ax] = totals.get(ax, 0) + int(s)
    rolled = a
    for ax, s in sorted(totals.items()):
        n = shape[ax]
        if n and s % n:
            rolled = st.take_static(rolled, np.roll(np.arange(n), s), ax)
    if rolled is a:                    # NumPy's roll returns a new array also for a 0 shift
        return copy_tensor(a)
    return rolled


# ------------------------------------------------------------------ tile and repeat

@implements("numpy.tile")
def tile(A, reps):  # noqa: N803 - NumPy's name
    """``A`` repeated ``reps`` times along each axis (as ``np.tile``: missing axes of
    ``A`` or of ``reps`` count as 1)."""
    A = tensor_or_array(A, "tile")  # noqa: N806
    reps = int_tuple("tile", "reps", reps)
    if any(r < 0 for r in reps):
        raise ArgumentValueError(f"tile: negative repetitions {list(reps)}")
    shape = shape_of(A)
    shape = (1,) * (len(reps) - len(shape)) + shape
    reps = (1,) * (len(shape) - len(reps)) + reps
    expanded, dims = [], []
    for r, d in zip(reps, shape):       # a new axis of length r before each repeated one
        if r != 1:
            expanded.append(r)
        dims.append(len(expanded))
        expanded.append(d)
    tiled = st.broadcast_in_dim(st.reshape(A, shape), tuple(expanded), tuple(dims))
    tiled = st.reshape(tiled, tuple(r * d for r, d in zip(reps, shape)))
    return fresh_array(tiled) if tiled is A else tiled    # a copy, as NumPy's


def _counts(repeats) -> np.ndarray:
    """``repeats`` as a 0-d or 1-d array of non-negative integers."""
    if is_tensor(repeats):
        repeats = concrete_value(repeats)
        if repeats is None:
            raise ConcretizationError("repeat: the repeats must be known to build the "
                                      "result; pass integers, not a traced tensor")
    counts = np.asarray(repeats)
    if not np.can_cast(counts.dtype, np.int64, casting="safe"):
        raise ArgumentError(f"repeat: repeats must be integers, got dtype {counts.dtype}")
    if counts.ndim > 1:
        raise ArgumentValueError("repeat: repeats must be a scalar or a 1-d sequence")
    if (counts < 0).any():
        raise ArgumentValueError("repeat: repeats may not contain negative values")
    return counts.astype(np.int64)


@implements("numpy.repeat")
def repeat(a, repeats, axis=None):
    """Each entry repeated ``repeats`` times along ``axis`` (None: of the flattened
    array); ``repeats`` is one count or one per entry along the axis."""
    a = tensor_or_array(a, "repeat")
    counts = _counts(repeats)
    if axis is None:
        a, axis = ravel(a), 0
    shape = shape_of(a)
    axis = normalize_axis("repeat", axis, len(shape))
    if counts.size != 1:
        if counts.size != shape[axis]:
            raise ShapeError(f"repeat: {counts.size} repeats for axis {axis} of "
                             f"{describe(a)}")
        return st.repeat(a, tuple(counts.tolist()), axis)
    r = int(counts.reshape(-1)[0])
    if r == 1:
        return fresh_array(a)               # a copy in NumPy: writes into it stay apart
    expanded = shape[:axis + 1] + (r,) + shape[axis + 1:]
    dims = tuple(i if i <= axis else i + 1 for i in range(len(shape)))
    copies = st.broadcast_in_dim(a, expanded, dims)
    return st.reshape(copies, shape[:axis] + (shape[axis] * r,) + shape[axis + 1:])


__all__ = ["flip", "fliplr", "flipud", "rot90", "roll", "tile", "repeat"]

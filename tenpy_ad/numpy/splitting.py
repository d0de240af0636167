"""Splitting tensors into pieces along an axis: ``split``, ``array_split``, ``hsplit``,
``vsplit``, ``dsplit``.  Each piece is one slice (whose cotangent pads it back with
zeros), so a piece that does not reach the loss costs nothing in the backward pass."""
from __future__ import annotations

import numbers

import numpy as np

from ..errors import ArgumentValueError, ShapeError
from ..ops import structural as st
from ..primitive import describe, shape_of
from ._arrays import tensor_or_array
from ._dispatch import implements
from ._operands import int_tuple, normalize_axis
from ._views import selected


def _bounds(name: str, n: int, indices_or_sections, equal: bool) -> list:
    """The ``(start, stop)`` of each piece of an axis of length ``n``."""
    if isinstance(indices_or_sections, numbers.Integral):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ArgumentValueError(f"{name}: number sections must be larger than 0, got "
                                     f"{sections}")
        if equal and n % sections:
            raise ShapeError(f"{name}: array split does not result in an equal division "
                             f"(an axis of {n} into {sections})")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        stops = np.cumsum(sizes).tolist()
        return list(zip([0] + stops[:-1], stops))
    points = list(int_tuple(name, "indices_or_sections", indices_or_sections))
    return list(zip([0] + points, points + [n]))


def _slicer(spec: tuple):
    return lambda p: st.slice_axes(p, spec)


def _split(name: str, ary, indices_or_sections, axis, equal: bool) -> list:
    shape = shape_of(ary)
    axis = normalize_axis(name, axis, len(shape))
    pieces = []
    for start, stop in _bounds(name, shape[axis], indices_or_sections, equal):
        start, stop, _ = slice(start, stop).indices(shape[axis])   # Python's slicing
        stop = max(start, stop)
        spec = tuple((start, stop, 1) if i == axis and stop > start
                     else (0, 0, 1) if i == axis else (0, d, 1)
                     for i, d in enumerate(shape))
        pieces.append(selected(st.slice_axes(ary, spec), ary, name, _slicer(spec)))
    return pieces


@implements("numpy.split")
def split(ary, indices_or_sections, axis=0):
    """Split into equal sections (an int), or at the given indices along ``axis``."""
    ary = tensor_or_array(ary, "split")
    return _split("split", ary, indices_or_sections, axis, equal=True)


@implements("numpy.array_split")
def array_split(ary, indices_or_sections, axis=0):
    """As :func:`split`, but ``n`` sections need not divide the axis: the first
    ``len % n`` sections are one longer."""
    ary = tensor_or_array(ary, "array_split")
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


def _split_min_ndim(name: str, ary, indices_or_sections, min_ndim: int, axis: int) -> list:
    ary = tensor_or_array(ary, name)
    if len(shape_of(ary)) < min_ndim:
        raise ShapeError(f"{name} only works on arrays of {min_ndim} or more dimensions, "
                         f"got {describe(ary)}")
    return _split(name, ary, indices_or_sections, axis, equal=True)


@implements("numpy.hsplit")
def hsplit(ary, indices_or_sections):
    """Split along the second axis (the first for 1-d arrays)."""
    axis = 0 if len(shape_of(tensor_or_array(ary, "hsplit"))) == 1 else 1
    return _split_min_ndim("hsplit", ary, indices_or_sections, 1, axis)


@implements("numpy.vsplit")
def vsplit(ary, indices_or_sections):
    """Split along the first axis (of an array of 2 or more dimensions)."""
    return _split_min_ndim("vsplit", ary, indices_or_sections, 2, 0)


@implements("numpy.dsplit")
def dsplit(ary, indices_or_sections):
    """Split along the third axis (of an array of 3 or more dimensions)."""
    return _split_min_ndim("dsplit", ary, indices_or_sections, 3, 2)


__all__ = ["split", "array_split", "hsplit", "vsplit", "dsplit"]

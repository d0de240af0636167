"""Running sums and products, finite differences and the trapezoidal rule: ``cumsum``,
``cumprod``, ``diff``, ``trapezoid``.

As NumPy: ``axis=None`` scans the flattened array; booleans accumulate in int64; ``diff``
of booleans is ``!=`` of neighbours.  ``cumprod``'s derivative is exact with zeros in the
input (no division).
"""
from __future__ import annotations

import math
import numbers

from .. import dtypes
from ..errors import ArgumentValueError, ShapeError
from ..ops import scans
from ..ops import structural as st
from ..primitive import code_of_value, shape_of
from ._arrays import tensor_or_array
from ._dispatch import implements
from ._operands import normalize_axis
from .arithmetic import add, multiply, subtract
from .comparison import not_equal
from .joining import concatenate
from .reductions import NO_VALUE, accumulating, refuse_out_where
from .reductions import sum as _sum


def _scan(name, scan, a, axis, dtype, out):
    refuse_out_where(name, out)
    x = accumulating(tensor_or_array(a, name), dtype)
    shape = shape_of(x)
    if axis is None or not shape:       # NumPy scans a 0-d array as a 1-d one
        if axis is not None:
            normalize_axis(name, axis, 1)
        return scan(st.reshape(x, (math.prod(shape),)), 0)
    return scan(x, normalize_axis(name, axis, len(shape)))


@implements("numpy.cumsum")
def cumsum(a, axis=None, dtype=None, out=None):
    """Running sum along ``axis`` (of the flattened array when ``axis`` is None)."""
    return _scan("cumsum", scans.cumsum, a, axis, dtype, out)


@implements("numpy.cumprod")
def cumprod(a, axis=None, dtype=None, out=None):
    """Running product along ``axis`` (flattened when None); the derivative is exact with
    zeros in ``a``."""
    return _scan("cumprod", scans.cumprod, a, axis, dtype, out)


def _edge(value, shape: tuple, axis: int):
    """A ``prepend``/``append`` value; a scalar becomes one slab along ``axis``."""
    value = tensor_or_array(value, "diff")
    if shape_of(value):
        return value
    return st.broadcast_to(value, tuple(1 if i == axis else d for i, d in enumerate(shape)))


def _neighbours(x, axis: int):
    """``(x[1:], x[:-1])`` along ``axis``."""
    shape = shape_of(x)
    n = shape[axis]

    def part(start, stop):
        return st.slice_axes(x, tuple((start, stop, 1) if i == axis else (0, d, 1)
                                      for i, d in enumerate(shape)))
    return part(min(1, n), n), part(0, max(n - 1, 0))


@implements("numpy.diff")
def diff(a, n=1, axis=-1, prepend=NO_VALUE, append=NO_VALUE):
    """The ``n``-th difference along ``axis``, after joining ``prepend``/``append``."""
    if not isinstance(n, numbers.Integral) or n < 0:
        raise ArgumentValueError(f"diff: order must be a non-negative integer but got {n!r}")
    a = tensor_or_array(a, "diff")
    shape = shape_of(a)
    if not shape:
        raise ShapeError("diff: requires input that is at least one dimensional")
    axis = normalize_axis("diff", axis, len(shape))
    parts = [_edge(prepend, shape, axis)] if prepend is not NO_VALUE else []
    parts.append(a)
    if append is not NO_VALUE:
        parts.append(_edge(append, shape, axis))
    x = concatenate(parts, axis) if len(parts) > 1 else a
    difference = not_equal if code_of_value(x) == dtypes.BOOL else subtract
    for _ in range(n):
        later, earlier = _neighbours(x, axis)
        x = difference(later, earlier)
    return x


@implements("numpy.trapezoid")
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at the sample points
    ``x`` (1-d along ``axis``, or ``y``'s shape) or spaced ``dx``; differentiable in ``y``,
    ``x`` and ``dx``."""
    y = tensor_or_array(y, "trapezoid")
    shape = shape_of(y)
    axis = normalize_axis("trapezoid", axis, len(shape))
    later, earlier = _neighbours(y, axis)
    if x is None:
        step = dx
    else:
        x = tensor_or_array(x, "trapezoid")
        if len(shape_of(x)) == 1:       # the points of that axis: broadcast along it
            points = tuple(shape_of(x)[0] if i == axis else 1 for i in range(len(shape)))
            step = diff(st.reshape(x, points), axis=axis)
        else:
            step = diff(x, axis=axis)
    return _sum(multiply(step, add(later, earlier)), axis=axis) * 0.5


__all__ = ["cumsum", "cumprod", "diff", "trapezoid"]

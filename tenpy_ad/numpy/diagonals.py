"""Diagonals and triangles: ``diag``, ``diagonal``, ``diagflat``, ``trace``, ``tril``,
``triu``.  A diagonal is a strided slice of the flattened matrix axes (no products with
an identity, so infinities elsewhere stay out of it) and its cotangent writes it back
into zeros; the triangles are primitives that zero the other entries."""
from __future__ import annotations

from .. import dtypes
from ..errors import ArgumentValueError, ShapeError
from ..ops import elementwise as ew
from ..ops import structural as st
from ..primitive import code_of_value, describe, shape_of
from ._arrays import tensor_or_array
from ._dispatch import implements
from ._operands import int_value, normalize_axis
from ._views import selected
from .shaping import ravel


def _strided(start: int, length: int, step: int) -> tuple:
    """The slice spec of ``length`` entries from ``start`` in steps of ``step``."""
    return (start, start + (length - 1) * step + 1, step) if length > 0 else (0, 0, 1)


@implements("numpy.diagonal")
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset`` diagonal of the matrices spanned by ``axis1`` and ``axis2``, as
    the last axis of the result (the other axes keep their order)."""
    a = tensor_or_array(a, "diagonal")
    shape = shape_of(a)
    if len(shape) < 2:
        raise ShapeError(f"diagonal: needs at least two axes, got {describe(a)}")
    i = normalize_axis("diagonal", axis1, len(shape))
    j = normalize_axis("diagonal", axis2, len(shape))
    if i == j:
        raise ShapeError("diagonal: axis1 and axis2 cannot be the same")
    batch = [k for k in range(len(shape)) if k not in (i, j)]
    n, m, offset = shape[i], shape[j], int_value("diagonal", "offset", offset)
    if offset >= 0:
        start, length = offset, min(n, m - offset)
    else:
        start, length = -offset * m, min(n + offset, m)
    flat = st.reshape(st.transpose(a, tuple(batch + [i, j])),
                      tuple(shape[k] for k in batch) + (n * m,))
    spec = tuple((0, shape[k], 1) for k in batch) + (_strided(start, length, m + 1),)
    return selected(st.slice_axes(flat, spec), a, "diagonal",
                    lambda p: diagonal(p, offset, axis1, axis2), readonly=True)


@implements("numpy.diag")
def diag(v, k=0):
    """A 1-d ``v``: the square matrix with ``v`` on its ``k``-th diagonal; a 2-d ``v``:
    its ``k``-th diagonal."""
    v = tensor_or_array(v, "diag")
    shape = shape_of(v)
    if len(shape) == 2:
        return diagonal(v, k)
    if len(shape) != 1:
        raise ShapeError(f"diag: input must be 1- or 2-d, got {describe(v)}")
    k = int_value("diag", "k", k)
    n = shape[0]
    size = n + abs(k)
    start = max(-k, 0) * size + max(k, 0)
    flat = st.scatter_slice(v, (size * size,), (_strided(start, n, size + 1),))
    return st.reshape(flat, (size, size))


@implements("numpy.diagflat")
def diagflat(v, k=0):
    """The square matrix with the flattened ``v`` on its ``k``-th diagonal."""
    v = tensor_or_array(v, "diagflat")
    return diag(ravel(v), k)


@implements("numpy.trace")
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sum of the ``offset`` diagonal (of each matrix spanned by ``axis1`` and
    ``axis2``); bools and narrow integers sum in int64 / uint64, as NumPy's."""
    if out is not None:
        raise ArgumentValueError("trace: out= is taken by keyword (out=t writes the result into t)")
    a = tensor_or_array(a, "trace")
    d = diagonal(a, offset, axis1, axis2)
    code = dtypes.accumulator_code(code_of_value(d)) if dtype is None else dtypes.code_of(dtype)
    d = ew.convert(d, code)
    return st.reduce_sum(d, (len(shape_of(d)) - 1,))


def _triangle(name: str, strict, m, k):
    m = tensor_or_array(m, name)
    shape = shape_of(m)
    if len(shape) == 1:                  # as NumPy: a vector is broadcast to a square
        m = st.broadcast_to(m, shape + shape)
    return strict(m, int_value(name, "k", k))


@implements("numpy.tril")
def tril(m, k=0):
    """Zero the entries above the ``k``-th diagonal (of the last two axes); exact zeros,
    and the derivative is ``tril`` of the tangent."""
    return _triangle("tril", st.tril, m, k)


@implements("numpy.triu")
def triu(m, k=0):
    """Zero the entries below the ``k``-th diagonal (of the last two axes)."""
    return _triangle("triu", st.triu, m, k)


__all__ = ["diag", "diagonal", "diagflat", "trace", "tril", "triu"]

"""Which singular triplets / eigenpairs a decomposition's cotangents reach.

Truncation (``u[:, :k]``, ``s[:k]``, ``v[:, -k:]``) makes the cotangents of the other
columns zero.  The ``svd`` and ``eigh`` VJPs use the range of columns that can be non-zero
twice: a first-order VJP on arrays leaves the zero part out (cost), and a VJP that may be
differentiated again couples the kept columns to all others through the discarded
subspace as a whole (exactness at second order, see :mod:`.svd`).

The range is read from the cotangent's type, in every mode alike: the transpose of a slice
is a block cotangent (the core's ``BlockCotangent``, zero outside the slice, as ``None`` is
zero everywhere), which the sweeps add (blocks of different slices: the hull), carry
through entrywise rules (``u[:, :k] ** 2``, ``-u[:, :k]``) and declare for a product with
a traced constant that is zero outside a block (a mask); the two decompositions take them
as they are (``takes_block_cotangents``).  A dense cotangent counts as every column.
"""
from __future__ import annotations

from ..._compiled import _core
from .. import structural as st

recorded = _core.recorded

#: ``(lo, hi)``: the entries of a cotangent along ``axis`` outside ``lo:hi`` are zero, as
#: its type shows (``(full, 0)``, an empty range, for None, so that ranges combine by
#: min/max; ``(0, full)`` for a dense value)
column_range = _core.nonzero_range

#: ``block(g, axis, lo, hi, full)``: the dense entries ``lo:hi`` of ``g`` along ``axis``
#: (the block itself when ``g`` is exactly that block cotangent; all of ``g``, dense, for
#: ``0:full``)
block = _core.cotangent_block

#: ``g`` as a dense value (a block cotangent made dense)
dense = _core.dense_cotangent


def differentiable(*cts) -> bool:
    """Whether a VJP's result may be differentiated again: a traced or eager-Tensor
    cotangent (plain arrays are the first-order eager backward pass)."""
    for g in cts:
        if recorded(g):
            return True
    return False


def cotangent_range(full: int, *pairs) -> tuple:
    """The hull of :func:`column_range` over ``(g, axis)`` pairs (``(full, 0)`` when every
    ``g`` is zero); the first pair that reaches every column ends the search."""
    lo, hi = full, 0
    for g, axis in pairs:
        if g is None:
            continue
        start, stop = column_range(g, axis, full)
        if start <= 0 and stop >= full:
            return 0, full
        lo, hi = min(lo, start), max(hi, stop)
    return lo, hi


def outside(x, axis: int, lo: int, hi: int, full: int):
    """The entries of ``x`` along ``axis`` outside ``lo:hi`` (the discarded columns)."""
    head = (slice(None),) * axis
    parts = ([x[head + (slice(0, lo),)]] if lo > 0 else []) + (
        [x[head + (slice(hi, full),)]] if hi < full else [])
    return parts[0] if len(parts) == 1 else st.concatenate(parts, axis)

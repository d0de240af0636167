"""Which singular triplets / eigenpairs a decomposition's cotangents reach.

Truncation (``u[:, :k]``, ``s[:k]``, ``v[:, -k:]``) makes the cotangents of the other
columns zero.  The ``svd`` and ``eigh`` VJPs use the range of columns that can be non-zero
twice: a first-order VJP on arrays leaves the zero part out (cost), and a VJP that may be
differentiated again couples the kept columns to all others through the discarded
subspace as a whole (exactness at second order, see :mod:`.svd`).
"""
from __future__ import annotations

import numpy as np

from ...primitive import Tensor, TracedTensor, constant_p
from .. import elementwise as ew
from .. import structural as st

# cotangent producers that are zero where all their operands are (sums: the hull of the
# operands' ranges) or where one chosen operand is (products: either factor's range bounds
# the result's, the walk follows a constant one if there is one, else the first)
_SUMS = frozenset([ew.add_p, ew.sub_p])
_FIRST_OPERAND = frozenset([ew.neg_p, ew.scale_p, ew.conj_p, ew.real_p, ew.imag_p,
                            ew.convert_p, ew.div_p])
_WALK_LIMIT = 32                 # producers looked at; beyond that, assume every column


def column_range(g, axis: int, full: int) -> tuple:
    """``(lo, hi)``: the entries of ``g`` along ``axis`` outside ``lo:hi`` are zero
    (``(full, 0)`` when all are: an empty range, so that ranges combine by min/max).

    A traced cotangent, or an eager Tensor one of ``create_graph`` (its values say
    nothing about its derivative), shows it by its producers (a bounded walk): the
    zero-padding ``scatter_slice`` of a slice, traced constants, sums of those, and
    negations, scalings, conversions and products of them.  Anything else counts as every
    column.  A plain array, or a Tensor that is a constant, is inspected (O(size), against
    the products that knowing it saves): the VJP is linear in the cotangent, so leaving
    out its zero entries is exact."""
    if g is None:
        return full, 0
    if type(g) is TracedTensor or type(g) is Tensor and g.requires_grad:
        return _structural_range(g, axis, full)
    return _value_range(np.asarray(g.data if type(g) is Tensor else g), axis, full)


def differentiable(*cts) -> bool:
    """Whether a VJP's result may be differentiated again: a traced or eager-Tensor
    cotangent (plain arrays are the first-order eager backward pass)."""
    for g in cts:
        if type(g) is TracedTensor or type(g) is Tensor:
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


def block(g, axis: int, lo: int, hi: int, full: int):
    """``g`` restricted to the entries ``lo:hi`` along ``axis`` (the slice itself when
    ``g`` is the traced zero-padding of exactly that slice)."""
    if g is None or (lo, hi) == (0, full):
        return g
    if type(g) is TracedTensor and g.prim is st.scatter_slice_p \
            and _scatter_range(g.params, axis) == (lo, hi):
        return g.inputs[0]
    return g[(slice(None),) * axis + (slice(lo, hi),)]


def _producer(x):
    """``(prim, params, inputs)`` of a traced node or eager tape entry (an input the tape
    does not show, a constant, is None); None for a leaf."""
    if type(x) is TracedTensor:
        return (x.prim, x.params, x.inputs) if x.prim is not None else None
    node = x.grad_fn if type(x) is Tensor else x
    return None if node is None else (node.prim, node.params, node.parents)


def _structural_range(g, axis: int, full: int) -> tuple:
    lo, hi = full, 0
    pending, seen = [g], 0
    while pending:                      # a short walk: no recursion over the graph
        seen += 1
        x = pending.pop()
        if seen > _WALK_LIMIT or x is None:
            return 0, full
        if type(x) is TracedTensor:     # the common case, read directly
            prim, params, inputs = x.prim, x.params, x.inputs
            if prim is None:
                return 0, full
        else:
            found = _producer(x)
            if found is None:
                return 0, full
            prim, params, inputs = found
        if prim in _SUMS:
            pending.extend(inputs)
        elif prim is ew.mul_p:          # a traced constant factor if any, else one shown
            first, second = inputs
            pending.append(second if first is None or type(second) is TracedTensor
                           and second.prim is constant_p else first)
        elif prim in _FIRST_OPERAND:
            pending.append(inputs[0])
        elif prim is st.scatter_slice_p or prim is constant_p:
            start, stop = (_scatter_range(params, axis) if prim is st.scatter_slice_p
                           else _value_range(params.array, axis, full))
            lo, hi = min(lo, start), max(hi, stop)
        else:
            return 0, full
    return lo, hi


def _scatter_range(params, axis: int) -> tuple:
    """The range along ``axis`` a ``scatter_slice`` fills: every other axis whole, unit
    step; else every column."""
    shape, spec = params
    start, stop, step = spec[axis]
    if step == 1 and all(spec[i] == (0, d, 1) for i, d in enumerate(shape) if i != axis):
        return start, stop
    return 0, shape[axis]


def _value_range(array, axis: int, full: int) -> tuple:
    if array.ndim <= axis or array.shape[axis] != full:
        return 0, full                  # not the cotangent's layout: assume every column
    if array.size and array.flat[0] != 0 and array.flat[-1] != 0:
        return 0, full      # the untruncated case at a glance: entries in the first and last
                            # columns (the first and last entries lie in them, any axis)
    last = (slice(None),) * axis
    if full and array[last + (0,)].any() and array[last + (full - 1,)].any():
        return 0, full                  # the untruncated case, decided cheaply
    others = tuple(i for i in range(array.ndim) if i != axis)
    nonzero = np.flatnonzero(np.any(array != 0, axis=others) if others else array != 0)
    return (int(nonzero[0]), int(nonzero[-1]) + 1) if nonzero.size else (full, 0)


def outside(x, axis: int, lo: int, hi: int, full: int):
    """The entries of ``x`` along ``axis`` outside ``lo:hi`` (the discarded columns)."""
    head = (slice(None),) * axis
    parts = ([x[head + (slice(0, lo),)]] if lo > 0 else []) + (
        [x[head + (slice(hi, full),)]] if hi < full else [])
    return parts[0] if len(parts) == 1 else st.concatenate(parts, axis)

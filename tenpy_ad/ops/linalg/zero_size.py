"""Derivatives of the linear-algebra primitives on zero-size operands or results.

A function of an empty stack (``(0, n, n)``, ``(2, 0, n, n)``) or of empty matrices
(``0 x 0``, ``0 x n``, ``n x 0``) has no entries to vary: its derivative is exact when
every input cotangent is a zero-size array and every output tangent is zero (``det`` of a
``0 x 0`` matrix is the constant 1).  When every result is empty the cotangents are empty
too, and the VJP is linear in them: zero again.  The rules themselves are written for
non-empty matrices (the gauge checks take maxima, the SVD rules divide by the spectrum), so
:func:`defrules_sized` answers these cases before the rule runs, at every order and in
every mode (the decision reads shapes only).
"""
from __future__ import annotations

import math
from typing import Callable

from ...primitive import Primitive, shape_of
from ...rules import defrules
from .. import structural as st


def _size(value) -> int:
    size = getattr(value, "size", None)        # ndarrays and tensors: no shape walk
    return math.prod(shape_of(value)) if size is None else size


def _nothing_varies(prim: Primitive, out, xs) -> bool:
    """Every input or every result is empty (a token output, always empty, aside)."""
    try:                                # the common case, one or two operands: sizes
        first = out[0] if prim.n_outputs > 1 else out
        if first.size and xs[0].size and (len(xs) == 1 or xs[1].size and len(xs) == 2):
            return False
    except AttributeError:
        pass
    outs = tuple(out) if prim.n_outputs > 1 else (out,)
    return not any(_size(x) for x in xs) or not any(_size(o) for o in outs)


def defrules_sized(prim: Primitive, jvp: Callable, vjp: Callable) -> Primitive:
    """:func:`~tenpy_ad.rules.defrules` with the zero-size cases answered first: the VJP
    gives zero-size (or, for empty results, zero) cotangents, the JVP symbolic zeros."""
    def sized_jvp(params, tangents, out, xs):
        if _nothing_varies(prim, out, xs):
            return (None,) * prim.n_outputs if prim.n_outputs > 1 else None
        return jvp(params, tangents, out, xs)

    def sized_vjp(params, cts, out, xs, active):
        if _nothing_varies(prim, out, xs):
            # materialised, so that an eager leaf gets its (empty) gradient
            return tuple(st.full_like(x, 0) if wanted else None
                         for x, wanted in zip(xs, active))
        return vjp(params, cts, out, xs, active)

    return defrules(prim, sized_jvp, sized_vjp)

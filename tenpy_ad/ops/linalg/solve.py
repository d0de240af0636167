"""The linear solve primitive ``x = a^-1 b`` and its rules: ``dx = a^-1 (db - da x)``,
``gb = a^-H g``, ``ga = -gb x^H``.

Operands: a matrix ``a`` with a vector or a matrix of right-hand sides ``b``, or a stack of
matrices with a stack of right-hand-side matrices of the same batch shape (the public
``tp.linalg.solve`` broadcasts as NumPy does before it gets here).
"""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ...primitive import bind2, code_of_value, describe, primitive, shape_of
from ..contraction import einsum_strict
from .. import elementwise as ew
from . import lapack
from .matrix import adjoint, mm
from .zero_size import defrules_sized


def _solve_rule(params, a, b):
    sa, sb = shape_of(a), shape_of(b)
    square = len(sa) >= 2 and sa[-1] == sa[-2]
    vector = len(sa) == 2 and len(sb) == 1
    stacked = len(sb) == len(sa) and sb[:-2] == sa[:-2]
    if (not square or not (vector or stacked) or sb[-1 if vector else -2] != sa[-1]
            or code_of_value(a) != code_of_value(b)):
        raise ShapeError(f"solve: expected a square matrix and a matching right-hand side "
                         f"(vector or matrix, of the same batch shape for a stack), got "
                         f"{describe(a)} and {describe(b)}")
    return b


def _solve_impl(params, a, b):
    # only ``a`` needs the guard: NaN in ``b`` passes through the triangular solves
    return lapack.call("solve", lambda m: np.linalg.solve(m, b), a)


def _outer_or_mm(x, y):
    """``x @ y^H`` for matrices, the outer product ``x y^H`` for vectors."""
    if len(shape_of(x)) == 1:
        return einsum_strict("i,j->ij", x, ew.conj(y))
    return mm(x, adjoint(y))


def _solve_jvp(params, tangents, out, xs):
    ta, tb = tangents                 # one solve for both tangents: a^-1 (tb - ta x)
    if ta is None:
        return solve(xs[0], tb)
    rhs = ew.neg(mm(ta, out)) if tb is None else tb - mm(ta, out)
    return solve(xs[0], rhs)


def _solve_vjp(params, ct, out, xs, active):
    gb = solve(adjoint(xs[0]), ct)    # shared by both cotangents
    return (ew.neg(_outer_or_mm(gb, out)) if active[0] else None), gb


solve_p = primitive("solve", _solve_impl, _solve_rule, static_shapes=True)
defrules_sized(solve_p, _solve_jvp, _solve_vjp)


def solve(a, b):
    """``x`` with ``a @ x = b`` for operands of one dtype (the primitive itself)."""
    return bind2(solve_p, None, a, b)

"""The linear solve primitive ``x = a^-1 b`` (``b`` a vector or a matrix of right-hand
sides) and its rules: ``dx = a^-1 (db - da x)``, ``gb = a^-H g``, ``ga = -gb x^H``."""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ...primitive import bind2, code_of_value, describe, primitive, shape_of
from ...rules import defrules
from ..contraction import einsum_strict
from .. import elementwise as ew
from .matrix import adjoint, mm


def _solve_rule(params, a, b):
    sa, sb = shape_of(a), shape_of(b)
    if (len(sa) != 2 or sa[0] != sa[1] or len(sb) not in (1, 2) or sb[0] != sa[0]
            or code_of_value(a) != code_of_value(b)):
        raise ShapeError(f"solve: expected a square matrix and a matching right-hand side "
                         f"(vector or matrix), got {describe(a)} and {describe(b)}")
    return b


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


solve_p = primitive("solve", lambda params, a, b: np.linalg.solve(a, b), _solve_rule)
defrules(solve_p, _solve_jvp, _solve_vjp)


def solve(a, b):
    """``x`` with ``a @ x = b`` for operands of one dtype (the primitive itself)."""
    return bind2(solve_p, None, a, b)

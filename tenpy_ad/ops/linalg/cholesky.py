"""The Cholesky primitive ``h = l l^H`` (``l`` lower triangular with a positive diagonal,
NumPy's ``cholesky``; a matrix or a stack) and its rules.

LAPACK reads one triangle of the operand ``a`` (param ``uplo``: "L" as NumPy's default,
"U" for ``upper=True``) and the real part of its diagonal, so the primitive is a function
of ``h = hermitian_from_triangle(a)``, and the rules compose with that map: every
perturbation of ``a`` is differentiated, not only Hermitian ones.

With ``Phi(s) = s o W`` (the lower triangle, half the diagonal):
``dl = l Phi(l^-1 dh l^-H)`` and its adjoint ``gh = l^-H Phi(l^H gl) l^-1``.
"""
from __future__ import annotations

import numpy as np

from ...param_schema import Exactly
from ...primitive import primitive
from . import lapack
from .inverse import square_rule
from .matrix import (adjoint, hermitian_from_triangle, hermitian_from_triangle_transpose,
                     mask, mm)
from .solve import solve
from .zero_size import defrules_sized


def _cholesky_impl(uplo, a):
    if uplo == "L":
        return lapack.call("cholesky", np.linalg.cholesky, a)
    upper = lapack.call("cholesky", lambda b: np.linalg.cholesky(b, upper=True), a)
    return np.ascontiguousarray(np.swapaxes(upper, -1, -2).conj())


def _lower_half(x):
    """``Phi(x)``: the strictly lower triangle and half the diagonal."""
    return x * mask("lower_half", x)


def _cholesky_jvp(uplo, tangents, out, xs):
    dh = hermitian_from_triangle(tangents[0], uplo == "L")
    y = solve(out, dh)                                   # l^-1 dh
    s = adjoint(solve(out, adjoint(y)))                  # l^-1 dh l^-H
    return mm(out, _lower_half(s))


def _cholesky_vjp(uplo, ct, out, xs, active):
    p = _lower_half(mm(adjoint(out), ct))
    z = solve(adjoint(out), p)                           # l^-H p
    gh = adjoint(solve(adjoint(out), adjoint(z)))        # l^-H p l^-1
    return (hermitian_from_triangle_transpose(gh, uplo == "L"),)


cholesky_p = primitive("cholesky", _cholesky_impl, square_rule("cholesky"),
                       format_params=lambda uplo: f"reads={uplo}", params=Exactly("L", "U"))
defrules_sized(cholesky_p, _cholesky_jvp, _cholesky_vjp)

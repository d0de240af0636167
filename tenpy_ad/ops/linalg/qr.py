"""The reduced QR primitive ``a = q r`` (NumPy's layout; tall, square and wide; a matrix or
a stack of matrices) and its rules.  For ``m >= n`` ``r`` is square and invertible; a wide
``a = q [r1 r2]`` is the square QR ``a1 = q r1`` plus ``r2 = q^H a2``."""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ...primitive import code_of_value, describe, is_complex_value, primitive, shape_of
from .. import elementwise as ew
from . import lapack
from .matrix import (add_optional, adjoint, diag, diag_embed, matrix_transpose, mm,
                     place_block, strictly_lower, strictly_upper)
from .solve import solve
from .zero_size import defrules_sized


def _qr_rule(params, a):
    if a.ndim < 2:
        raise ShapeError(f"qr: expected a matrix or a stack of matrices, got {describe(a)}")
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    code = code_of_value(a)
    return [(code, batch + (m, k)), (code, batch + (k, n))]


def _qr_impl(params, a):
    return lapack.call("qr", lambda b: tuple(np.linalg.qr(b, mode="reduced")), a)


def _solve_right(b, r):
    """``b @ inv(r)``."""
    return matrix_transpose(solve(matrix_transpose(r), matrix_transpose(b)))


def _solve_right_h(b, r):
    """``b @ inv(r)^H``."""
    return adjoint(solve(r, adjoint(b)))


def _hstack(left, right, n_right):
    """``[left right]`` for matrices (``right`` None means zeros)."""
    k, n_left = shape_of(left)[-2:]
    shape = (k, n_left + n_right)
    result = place_block(left, shape, (0, 0))
    if right is not None:
        result = result + place_block(right, shape, (0, n_left))
    return result


def _square_tall_jvp(da, q, r):
    """Tangents of Q, R for m >= n (R square and invertible)."""
    c = mm(adjoint(q), _solve_right(da, r))              # Q^H dA R^-1
    lower = strictly_lower(c)
    omega = lower - adjoint(lower)
    if is_complex_value(c):
        omega = omega + diag_embed(1j * ew.imag(diag(c)))
    dq = _solve_right(da, r) + mm(q, omega - c)
    dr = mm(c - omega, r)
    return dq, dr


def _square_tall_vjp(gq, gr, q, r):
    x = None if gr is None else mm(gr, adjoint(r))
    if gq is not None:
        x = add_optional(x, -mm(adjoint(q), gq))
    upper = strictly_upper(x)
    hermitian = upper + adjoint(upper) + diag_embed(ew.real(diag(x)))   # copy of triu(x)
    b = mm(q, hermitian) if gq is None else gq + mm(q, hermitian)
    return _solve_right_h(b, r)


def _qr_jvp(params, tangents, out, xs):
    (da,) = tangents
    q, r = out
    m, n = shape_of(xs[0])[-2:]
    if m >= n:
        return _square_tall_jvp(da, q, r)
    dq, dr1 = _square_tall_jvp(da[..., :m], q, r[..., :m])
    dr2 = mm(adjoint(dq), xs[0][..., m:]) + mm(adjoint(q), da[..., m:])
    return dq, _hstack(dr1, dr2, n - m)


def _qr_vjp(params, cts, out, xs, active):
    gq, gr = cts
    q, r = out
    a = xs[0]
    m, n = shape_of(a)[-2:]
    if m >= n:
        return (_square_tall_vjp(gq, gr, q, r),)
    gr1 = None if gr is None else gr[..., :m]
    gr2 = None if gr is None else gr[..., m:]
    if gr2 is not None:
        gq = add_optional(gq, mm(a[..., m:], adjoint(gr2)))
    ga1 = _square_tall_vjp(gq, gr1, q, r[..., :m])
    return (_hstack(ga1, None if gr2 is None else mm(q, gr2), n - m),)


qr_p = primitive("qr", _qr_impl, _qr_rule, n_outputs=2, static_shapes=True)
defrules_sized(qr_p, _qr_jvp, _qr_vjp)

"""The LU primitive ``a = p l u`` with partial pivoting (SciPy's ``lu``: ``p`` an m x m
permutation matrix, ``l`` m x k unit lower trapezoidal, ``u`` k x n upper trapezoidal,
``k = min(m, n)``; a matrix or a stack), LAPACK's pivot indices as a fourth output, and
its rules; the permutation matrix of pivot indices (``lu_solve``'s); the tie check.

The permutation is piecewise constant: its derivative is zero.  At a tie of the partial
pivoting (two candidates of equal magnitude for a pivot, or a zero column) the factors
jump, so they have no derivative there: the rules pass their tangents and cotangents
through ``lu_pivot_check``, which raises ``NotDifferentiableError`` naming ``lu``.

With ``a' = p^T a = l u`` (square): ``F = l^-1 da' u^-1``, ``dl = l tril(F, -1)``,
``du = triu(F) u``, and the adjoint ``ga' = l^-H (tril(l^H gl, -1) + triu(gu u^H)) u^-H``,
``ga = p ga'``.  Tall (m > n): the top n rows are the square case and
``l2 = a2' u^-1``; wide (m < n): the left m columns are, and ``u2 = l^-1 a2'``.  Every
step is a product or a solve of the library, so derivatives of any order follow.
"""
from __future__ import annotations

import functools

import numpy as np
import scipy.linalg

from ... import dtypes
from ...errors import NotDifferentiableError, ShapeError
from ...param_schema import Exactly
from ...primitive import bind, code_of_value, describe, primitive, shape_of
from ...rules import defjvp, defvjp, zero_rule
from .. import elementwise as ew
from . import lapack
from .matrix import add_optional, adjoint, matrix_transpose, mm, place_block
from .solve import solve
from .zero_size import defrules_sized


# ------------------------------------------------------------------ the factorization

def _lu_rule(params, a):
    shape = shape_of(a)
    if len(shape) < 2:
        raise ShapeError(f"lu: expected a matrix or a stack of matrices, got {describe(a)}")
    batch, (m, n) = shape[:-2], shape[-2:]
    k = min(m, n)
    code = code_of_value(a)
    return [(dtypes.real_code(code), batch + (m, m)), (code, batch + (m, k)),
            (code, batch + (k, n)), (dtypes.INT64, batch + (k,))]


def permutation_of_pivots(piv: np.ndarray, m: int) -> np.ndarray:
    """The row order ``perm`` (``a[perm] = l @ u``) of LAPACK's pivots ``piv`` (0-based:
    row ``i`` was swapped with row ``piv[i]``, in order), for each matrix of a stack."""
    perm = np.broadcast_to(np.arange(m), piv.shape[:-1] + (m,)).copy()
    for i in range(piv.shape[-1]):
        j = piv[..., i:i + 1].astype(np.intp)
        here = perm[..., i:i + 1].copy()
        perm[..., i:i + 1] = np.take_along_axis(perm, j, axis=-1)
        np.put_along_axis(perm, j, here, axis=-1)
    return perm


def permutation_matrix(perm: np.ndarray, dtype) -> np.ndarray:
    """``p`` with ``p[perm[r], r] = 1``: ``a = p @ (a[perm])``."""
    m = perm.shape[-1]
    return (perm[..., None, :] == np.arange(m)[:, None]).astype(dtype)


def _factors(a: np.ndarray):
    m, n = a.shape[-2:]
    k = min(m, n)
    if a.size == 0:
        piv = np.zeros(a.shape[:-2] + (k,), np.int64)
        l = np.zeros(a.shape[:-2] + (m, k), a.dtype)
        l[..., np.arange(k), np.arange(k)] = 1
        return piv, l, np.zeros(a.shape[:-2] + (k, n), a.dtype)
    lu, piv = scipy.linalg.lu_factor(a, check_finite=False)
    l = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=a.dtype)
    return piv.astype(np.int64), l, np.triu(lu[..., :k, :])


def _lu_impl(params, a):
    a = np.asarray(a)
    bad = None
    if not lapack.all_finite(a):             # LAPACK's answer for NaN is garbage: NaN
        bad = ~np.isfinite(a).all(axis=(-2, -1))
        a = a.copy()
        a[bad] = np.eye(*a.shape[-2:], dtype=a.dtype)
    piv, l, u = _factors(a)
    if bad is not None:
        l[bad] = np.nan
        u[bad] = np.nan
    p = permutation_matrix(permutation_of_pivots(piv, a.shape[-2]),
                           dtypes.DTYPES[dtypes.real_code(dtypes.value_code(a.dtype))])
    return p, l, u, piv


@functools.lru_cache(maxsize=256)
def _triangle_mask(m: int, n: int, k: int, code: int, lower: bool) -> np.ndarray:
    ones = np.ones((m, n), dtypes.DTYPES[code])
    mask = np.tril(ones, k) if lower else np.triu(ones, k)
    mask.flags.writeable = False
    return mask


def _strictly_lower(x):
    m, n = shape_of(x)[-2:]
    return x * _triangle_mask(m, n, -1, code_of_value(x), True)


def _upper(x):
    m, n = shape_of(x)[-2:]
    return x * _triangle_mask(m, n, 0, code_of_value(x), False)


def _solve_right(b, u):
    """``b @ inv(u)``."""
    return matrix_transpose(solve(matrix_transpose(u), matrix_transpose(b)))


def _solve_right_h(b, u):
    """``b @ inv(u)^H``."""
    return adjoint(solve(u, adjoint(b)))


def _like(p, x):
    """The permutation matrix in ``x``'s dtype (complex operands)."""
    return p if code_of_value(p) == code_of_value(x) else ew.convert(p, code_of_value(x))


def _square_jvp(da, l, u):
    f = solve(l, _solve_right(da, u))                    # l^-1 da' u^-1
    return mm(l, _strictly_lower(f)), mm(_upper(f), u)


def _square_vjp(gl, gu, l, u):
    core = None if gl is None else _strictly_lower(mm(adjoint(l), gl))
    if gu is not None:
        core = add_optional(core, _upper(mm(gu, adjoint(u))))
    return solve(adjoint(l), _solve_right_h(core, u))    # l^-H core u^-H


def _lu_jvp(params, tangents, out, xs):
    p, l, u, _ = out
    da = pivot_checked(tangents[0], l, u)
    dap = mm(matrix_transpose(_like(p, da)), da)         # p^T da
    m, n = shape_of(da)[-2:]
    if m == n:
        dl, du = _square_jvp(dap, l, u)
    elif m > n:
        dl1, du = _square_jvp(dap[..., :n, :], l[..., :n, :], u)
        dl2 = _solve_right(dap[..., n:, :] - mm(l[..., n:, :], du), u)
        dl = place_block(dl1, (m, n), (0, 0)) + place_block(dl2, (m, n), (n, 0))
    else:
        dl, du1 = _square_jvp(dap[..., :m], l, u[..., :m])
        du2 = solve(l, dap[..., m:] - mm(dl, u[..., m:]))
        du = place_block(du1, (m, n), (0, 0)) + place_block(du2, (m, n), (0, m))
    return None, dl, du, None


def _lu_vjp(params, cts, out, xs, active):
    _, gl, gu, _ = cts
    p, l, u, _ = out
    m, n = shape_of(xs[0])[-2:]
    if gl is None and gu is None:
        return (None,)
    if m == n:
        gap = _square_vjp(gl, gu, l, u)
    elif m > n:
        gl1 = None if gl is None else gl[..., :n, :]
        g2 = None if gl is None else _solve_right_h(gl[..., n:, :], u)     # gl2 u^-H
        if g2 is not None:
            gu = add_optional(gu, -mm(adjoint(l[..., n:, :]), g2))
        gap = place_block(_square_vjp(gl1, gu, l[..., :n, :], u), (m, n), (0, 0))
        if g2 is not None:
            gap = gap + place_block(g2, (m, n), (n, 0))
    else:
        gu1 = None if gu is None else gu[..., :m]
        g2 = None if gu is None else solve(adjoint(l), gu[..., m:])         # l^-H gu2
        if g2 is not None:
            gl = add_optional(gl, -mm(g2, adjoint(u[..., m:])))
        gap = place_block(_square_vjp(gl, gu1, l, u[..., :m]), (m, n), (0, 0))
        if g2 is not None:
            gap = gap + place_block(g2, (m, n), (0, m))
    return (pivot_checked(mm(_like(p, gap), gap), l, u),)


lu_p = primitive("lu", _lu_impl, _lu_rule, n_outputs=4)
defrules_sized(lu_p, _lu_jvp, _lu_vjp)


def lu(a):
    """``(p, l, u, piv)`` of (each matrix of) ``a`` (the primitive itself)."""
    return bind(lu_p, None, a)


# ------------------------------------------------------------------ ties of the pivoting

def _ties(l: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The columns ``j`` where the partial pivoting had a tie: a candidate
    ``a'_ij = l_ij u_jj`` below the pivot of the same magnitude (LAPACK's: ``|x|`` for real
    ``x``, ``|Re x| + |Im x|`` for complex), to rounding, or a zero column."""
    k = l.shape[-1]
    below = l[..., :, :k] * _triangle_mask(l.shape[-2], k, -1, dtypes.value_code(l.dtype),
                                           True)
    pivots = np.diagonal(u[..., :k, :k], axis1=-2, axis2=-1)[..., None, :]
    size = lambda x: np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)
    reference = size(pivots)
    candidate = size(below * pivots)
    rounding = 8 * np.finfo(reference.dtype).eps
    has_rows = np.arange(l.shape[-2])[:, None] > np.arange(k)[None, :]
    tie = has_rows & (np.abs(candidate - reference) <= rounding * reference)
    return np.nonzero(tie.any(axis=-2).reshape(-1, k).any(axis=0))[0]


def _check_pivots(params, x, l, u):
    columns = _ties(np.asarray(l), np.asarray(u))
    if columns.size:
        raise NotDifferentiableError(
            f"lu: the partial pivoting has a tie at column {int(columns[0])} (two candidate "
            "pivots of equal magnitude, or a zero column): the LU factors jump there and "
            "have no derivative. Perturb the matrix or reorder its rows so that every "
            "pivot is unique.")
    return x


def _checked_again(params, g, out, x, l, u):
    return bind(lu_pivot_check_p, None, g, l, u)


lu_pivot_check_p = primitive("lu_pivot_check", _check_pivots,
                             lambda params, x, l, u: x)
# the identity on its first operand; the factors are only looked at
defjvp(lu_pivot_check_p, _checked_again, zero_rule, zero_rule)
defvjp(lu_pivot_check_p, _checked_again, zero_rule, zero_rule)


def pivot_checked(g, l, u):
    """``g`` (a tangent or cotangent of lu), checked at run time for a tie of the
    pivoting that made ``l, u``."""
    return bind(lu_pivot_check_p, None, g, l, u)


# ------------------------------------------------------------------ pivots as a matrix

def _pivot_rule(code, piv):
    shape = shape_of(piv)
    if len(shape) < 1 or code_of_value(piv) != dtypes.INT64:
        raise ShapeError(f"pivot_matrix: expected int64 pivot indices, got {describe(piv)}")
    return code, shape + (shape[-1],)


def _pivot_impl(code, piv):
    piv = np.asarray(piv)
    return permutation_matrix(permutation_of_pivots(piv, piv.shape[-1]), dtypes.DTYPES[code])


pivot_matrix_p = primitive("pivot_matrix", _pivot_impl, _pivot_rule,
                           format_params=lambda code: dtypes.DTYPES[code].name,
                           params=Exactly(*range(4)))
defjvp(pivot_matrix_p, zero_rule)           # integer pivots: nothing to differentiate
defvjp(pivot_matrix_p, zero_rule)


def pivot_matrix(piv, code: int):
    """The permutation matrix ``p`` (``a = p l u``) of the square LU's pivots ``piv``,
    in dtype ``code``."""
    return bind(pivot_matrix_p, code, piv)

"""The solve that couples kept singular vectors/eigenvectors to the discarded subspace.

The derivative of a partial decomposition (the k leading triplets of ``svds``, the k
leading eigenpairs of ``eigsh``) needs, for every kept value ``t_i``, the solution of

    x t_i - Q F Q x = b,    Q = I - U U^H,    x and b in range(Q),

with ``U`` the kept vectors and ``F = A A^H`` (``kind="gram"``, ``t_i = s_i^2``) or
``F = A`` (``kind="hermitian"``, ``t_i = w_i``).  On range(Q) the operator has the
eigenvalues ``t_i - lambda_j`` of the discarded spectrum, all of one sign when the kept
values lead, so conjugate gradients solve it with products of ``A`` only.  The primitive
is the linear map

    X = M^-1 B,    M(X) = Q (X T - F Q X) + (I - Q) X     (identity on range(U)),

defined for every ``B``, so that its derivatives are solves with the same ``M``
(:func:`_jvp`, :func:`_vjp`): derivatives of any order are graph nodes.

``hint`` (an m x p basis of approximately the next discarded vectors, computed with the
decomposition) deflates the solve: on its span the system is solved directly (with the
Lorentzian broadening ``eps`` of the gaps ``t_i - lambda_j``, as ``svd`` does), and CG
runs on the Schur complement of the rest, which has no near-degenerate gap left.  The
result does not depend on the hint (it only speeds the iteration and regularises exact
degeneracies across the cut), so the hint has no derivative.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from ...errors import ConvergenceError, ShapeError
from ...primitive import bind, describe, primitive, shape_of
from ...rules import defrules
from .. import elementwise as ew
from .. import structural as st
from .matrix import add_optional, adjoint, mm, row

KINDS = ("gram", "hermitian")


# ------------------------------------------------------------------ the numerical solve

def _apply(kind: str, a, x):
    """``F x``: ``A (A^H x)`` or ``A x``."""
    if kind == "gram":
        return a @ (a.conj().T @ x)
    return a @ x


def _project(u, x):
    return x - u @ (u.conj().T @ x)


def _ritz_hint(kind, a, u, hint):
    """The hint as Ritz vectors of ``Q F Q`` within its span: ``(h, lam, r_h)`` with
    ``Q F Q h = h diag(lam) + r_h`` and ``r_h`` orthogonal to ``h`` and ``U``."""
    if hint.shape[1] == 0:
        return hint, np.zeros(0), hint
    h, _ = scipy.linalg.qr(_project(u, hint), mode="economic")
    fh = _project(u, _apply(kind, a, h))
    lam, z = np.linalg.eigh(h.conj().T @ fh)
    h, fh = h @ z, fh @ z
    r_h = fh - h * lam
    return h, lam, _project(h, r_h)


def _broadened_inverse(kind, t, lam, eps):
    """``1/(t_i - lam_j)`` as a p x k array, broadened like the SVD's gaps: for ``gram``
    ``(s_i^2 - sigma_j^2)^-1 = L(s_i - sigma_j)/(s_i + sigma_j)``, L the Lorentzian."""
    gap = t[None, :] - lam[:, None]
    if kind == "gram":
        scale = (np.sqrt(np.abs(t))[None, :] + np.sqrt(np.maximum(lam, 0.0))[:, None]) ** 2
    else:
        scale = 1.0
    return gap / (gap * gap + eps * scale)


def _impl(params, a, u, t, b, hint):
    kind, eps, tol, maxiter = params
    x_kept = u @ (u.conj().T @ b)               # M is the identity on range(U)
    b = b - x_kept
    h, lam, r_h = _ritz_hint(kind, a, u, hint)
    inverse = _broadened_inverse(kind, t, lam, eps)
    c = h.conj().T @ b
    b_rest = _project(h, b) + r_h @ (inverse * c)

    def schur(z, cols):                         # the system on the rest of range(Q)
        fz = _project(h, _project(u, _apply(kind, a, _project(u, _project(h, z)))))
        return z * t[cols] - fz - r_h @ (inverse[:, cols] * (r_h.conj().T @ z))

    signs = np.where(t >= 0, 1.0, -1.0)         # the definite sign of each column
    z = _conjugate_gradients(schur, b_rest, signs, tol, maxiter, kind)
    y = inverse * (c + r_h.conj().T @ z)
    return x_kept + h @ y + z


def _conjugate_gradients(op, b, signs, tol, maxiter, kind):
    """Column-wise CG for ``op(x, cols) = b[:, cols]`` where column i of the operator times
    ``signs[i]`` is positive definite.  The unconverged columns advance together (one
    matrix product per step); converged ones drop out."""
    x = np.zeros_like(b)
    r = b * signs
    p = r.copy()
    rr = _column_norms2(r)
    target = (tol * tol) * rr
    cols = np.flatnonzero(rr > target)
    for _ in range(maxiter):
        if cols.size == 0:
            return x
        pc, rc = p[:, cols], rr[cols]
        q = op(pc, cols) * signs[cols]
        curvature = np.real(np.sum(pc.conj() * q, axis=0))
        if np.any(curvature <= 0):
            raise ConvergenceError(
                f"complement_solve ({kind}): the operator is not definite on the discarded "
                "subspace: a discarded singular value/eigenvalue is not below the kept ones "
                "(the kept values are not the leading ones, or one is exactly degenerate "
                "with a discarded one)")
        alpha = rc / curvature
        x[:, cols] += pc * alpha
        r[:, cols] -= q * alpha
        rr_next = _column_norms2(r[:, cols])
        p[:, cols] = r[:, cols] + pc * (rr_next / rc)
        rr[cols] = rr_next
        cols = cols[rr_next > target[cols]]
    if cols.size:
        worst = float(np.max(np.sqrt(rr[cols] / target[cols]))) * tol
        raise ConvergenceError(f"complement_solve ({kind}): conjugate gradients did not "
                               f"reach tol={tol:g} in {maxiter} iterations (relative "
                               f"residual {worst:.3g})", residual=worst)
    return x


def _column_norms2(x):
    return np.real(np.sum(x.conj() * x, axis=0))


# ------------------------------------------------------------------ shapes

def _shape_rule(params, a, u, t, b, hint):
    kind = params[0]
    sa, su, st_, sb, sh = (shape_of(x) for x in (a, u, t, b, hint))
    m = sa[0] if len(sa) == 2 else -1
    if (len(sa) != 2 or (kind == "hermitian" and sa[0] != sa[1]) or len(su) != 2
            or su[0] != m or len(st_) != 1 or len(sb) != 2 or sb != (m, st_[0])
            or len(sh) != 2 or sh[0] != m):
        raise ShapeError(f"complement_solve ({kind}): expected a matrix a (m x n), kept "
                         f"vectors (m x k'), shifts (k), right-hand sides (m x k) and a hint "
                         f"(m x p), got {describe(a)}, {describe(u)}, {describe(t)}, "
                         f"{describe(b)}, {describe(hint)}")
    return b


# ------------------------------------------------------------------ derivative rules

def _f(kind, a, x):
    """``F x`` with the library's operations."""
    if kind == "gram":
        return mm(a, mm(adjoint(a), x))
    return mm(a, x)


def _q(u, x):
    return x - mm(u, mm(adjoint(u), x))


def _dq(u, du, y):
    """``dQ y`` with ``dQ = -(dU U^H + U dU^H)``."""
    return ew.neg(mm(du, mm(adjoint(u), y)) + mm(u, mm(adjoint(du), y)))


def _df(kind, a, da, x):
    """``dF x``."""
    if kind == "gram":
        return mm(da, mm(adjoint(a), x)) + mm(a, mm(adjoint(da), x))
    return mm(da, x)


def _jvp(params, tangents, out, xs):
    """``dX = M^-1 (dB - dM X)`` with ``dM X = dQ E - Q F dQ X + Q (X dT - dF Q X)``,
    ``E = X T - F Q X - X``."""
    kind = params[0]
    da, du, dt, db, _ = tangents
    a, u, t, _, hint = xs
    x = out
    qx = _q(u, x)
    change = None                                  # dM X
    if du is not None:
        e = x * row(t) - _f(kind, a, qx) - x
        change = _dq(u, du, e) - _q(u, _f(kind, a, _dq(u, du, x)))
    inner = None
    if dt is not None:
        inner = x * row(dt)
    if da is not None:
        inner = add_optional(inner, ew.neg(_df(kind, a, da, qx)))
    if inner is not None:
        change = add_optional(change, _q(u, inner))
    rhs = db if change is None else (ew.neg(change) if db is None else db - change)
    if rhs is None:
        return None
    return complement_solve(kind, a, u, t, rhs, hint, params)


def _vjp(params, ct, out, xs, active):
    """``gB = M^-1 gX`` (M is self-adjoint); the other cotangents are ``-Re<gB, dM X>``."""
    kind = params[0]
    a, u, t, _, hint = xs
    x = out
    gb = complement_solve(kind, a, u, t, ct, hint, params)
    qx, qgb = _q(u, x), _q(u, gb)
    ga = gu = gt = None
    if active[0]:
        if kind == "gram":
            ga = mm(qgb, adjoint(mm(adjoint(a), qx))) + mm(qx, adjoint(mm(adjoint(a), qgb)))
        else:
            ga = mm(qgb, adjoint(qx))
    if active[1]:
        e = x * row(t) - _f(kind, a, qx) - x
        fqgb = _f(kind, a, qgb)
        gu = (mm(gb, mm(adjoint(e), u)) + mm(e, mm(adjoint(gb), u))
              - mm(fqgb, mm(adjoint(x), u)) - mm(x, mm(adjoint(fqgb), u)))
    if active[2]:
        gt = ew.neg(ew.real(st.reduce_sum(ew.conj(gb) * qx, (0,))))
    return ga, gu, gt, gb, None


complement_solve_p = primitive(
    "complement_solve", _impl, _shape_rule,
    format_params=lambda p: f"{p[0]} eps={p[1]:g} tol={p[2]:g} maxiter={p[3]}")
defrules(complement_solve_p, _jvp, _vjp)


def solve_params(kind: str, eps: float, tol: float, maxiter) -> tuple:
    """The params of the solves of a decomposition's derivative: residual ``tol / 100``
    (so that independent evaluations, eager and traced, agree to roundoff), at most
    ``maxiter`` (default 1000) iterations."""
    return (kind, float(eps), float(tol) / 100, 1000 if maxiter is None else int(maxiter))


def complement_solve(kind: str, a, u, t, b, hint, params=None, *, eps: float = 0.0,
                     tol: float = 1e-13, maxiter: int = 1000):
    """``X`` with ``X diag(t) - Q F Q X = B`` on range(Q) and ``X = B`` on range(U) (see
    the module docstring); ``params`` (kind, eps, tol, maxiter) as a node has them."""
    if kind not in KINDS:
        raise ValueError(f"complement_solve: kind must be one of {KINDS}, got {kind!r}")
    if params is None:
        params = (kind, float(eps), float(tol), int(maxiter))
    return bind(complement_solve_p, params, a, u, t, b, hint)

"""The solve that couples kept singular vectors/eigenvectors to the discarded subspace.

The derivative of a partial decomposition (the k leading triplets of ``svds``, the k
leading eigenpairs of ``eigsh``) couples each kept vector to the discarded subspace
through the Lorentzian-broadened inverse of a shifted operator,

    Z = L(K) R,    L(x) = x / (x^2 + eps),    K_i = t_i - H  on range(P),

with ``P = I - B B^H`` the projector off the kept vectors ``B`` and, per kept column i,

* kind ``"svd"``: vectors ``(x; y)`` of length m + n, ``H = [[0, A], [A^H, 0]]``,
  ``B = blockdiag(U, V)``, ``t_i = s_i``.  On the discarded subspace ``H`` has the
  eigenvalues ``+-sigma_j`` (pairs ``(u_j; +-v_j)``) and 0 (null vectors of a rectangular
  ``A``), so ``L(K)`` holds exactly the terms ``L(s_i - sigma_j)``, ``L(s_i + sigma_j)`` and
  ``L(s_i)`` that the full SVD rule's broadening gives to the triplets it discards
  (:func:`.matrix.gap_factors`): ``svds`` and ``svd`` sliced have the same derivatives,
  also at (near-)degeneracies across the cut, where an exact one contributes
  ``L(0) = 0`` in place of 0/0;
* kind ``"hermitian"``: ``H = A``, ``B = V``, ``t_i = w_i``: the terms ``L(w_i - lambda_j)``
  of ``eigh``'s rule.

The primitive is the linear map ``Z = N^-1 C`` with

    N(Z)_i = (K_i^2 + eps) P Z_i  on range(P),    N = I on range(B),

and callers pass ``C = K R`` (:func:`coupling_svd`, :func:`coupling_hermitian`), so that
``N^-1 K R = L(K) R``.  ``N`` is positive definite for every spectrum (``>= eps``): no
sign or gap condition, nothing to fail on at a degeneracy.  Its derivatives are solves
with the same ``N`` (:func:`_jvp`, :func:`_vjp`), so derivatives of any order are graph
nodes.

The numerical solve works on ``K``, not on ``N``: CG on ``N = K^2 + eps`` would converge
at the rate of ``K``'s condition number squared, and CG on the Gram form
``s_i^2 - A A^H`` (the previous solve here) needs a definite operator and the unbroadened
algebra -- it gave up at the exact degeneracies across the cut of low- and
high-temperature TRG.  Per column a Lanczos process on ``H`` (started from ``C_i``,
restricted to range(P), fully reorthogonalised; all columns advance together, one product
with ``a`` per step, vectors stored as rows) projects ``H`` to a small tridiagonal ``T``,
and both outputs come from the shifted solves on it,

    L(x) + i sqrt(eps) g(x) = 1 / (x - i sqrt(eps)),    x = t_i - T,

(real input: one complex solve; complex input: that one and its ``+ i sqrt(eps)``
partner).  The shift keeps them nonsingular at any spectrum (with ``eps = 0`` an exact
zero of ``K`` gives NaN, as the full rule's ``1/0`` does).  A column stops when the
relative residual of its shifted solve(s), ``beta_d |y_d| / |C_i|`` (the Lanczos
recurrence gives it without another product), is below ``tol``, or when its Krylov space
fills the complement.  ``maxiter`` steps without that raise
:class:`~tenpy_ad.errors.ConvergenceError` with the relative residual of ``N Z = C``.

Cost.  The spectrum of ``K`` is that of ``sigma``, the Gram form's that of ``sigma^2``, so
about twice as many steps are needed as the Gram-form CG took (each step costs the same
two products with ``a``), and ``Y`` is solved for rather than recovered as
``(R_v + A^H X)/s``: broadened, that recovery reads ``Y = (R_v + A^H X - eps Y_g)/s``
with ``Y_g`` the v-part of ``g(K) C``, which needs the same Krylov spaces.  Measured on the TRG
matrices (value + d/d beta, one BLAS thread, beta = 0.3, beta_c, 0.6, profiled): the
solves took 0.04-0.07 s -> 0.08-0.15 s per run at chi = 16 (20 steps) and
0.21-0.28 s -> 0.29-0.54 s at chi = 32 (10 steps); the whole run (which includes the
forward's refinement step added with this solve) +15-30 %, and at chi = 32 the partial
path still takes about a third of the full SVD's time.  That is the price of the full
rule's semantics across the cut and of never failing on a degeneracy.

``hint`` (a basis of approximately the next discarded vectors, computed with the
decomposition) deflates: its Ritz pairs with ``P H P`` whose residual is below
``100 tol`` (relative to the largest shift, the accuracy the kept triplets are checked
to) are treated as exact eigenpairs and ``L``, ``g`` are applied to them directly; the
Lanczos processes run orthogonally to them.  Treating them as exact is a backward
perturbation of ``A`` by their residual, the same size as the kept triplets' own.
Near-degenerate partners of kept values land there and the iteration sees a gapped
spectrum.

Exact mode (params ``(kind, eps, tol, maxiter, True)``, :func:`exact_params`): the hint is
the complete decomposition of ``H`` on the complement (:func:`exact_hint`: the discarded
singular vectors or eigenvectors over a row of their values; what they leave has the
eigenvalue 0), and both outputs are dense products with it, no iteration.  ``svd`` and
``eigh`` truncated use it for VJPs that may be differentiated again: the rules above are
the same, so every order is exact even where the discarded values are degenerate.
Stacks of matrices are allowed in exact mode.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from ...errors import ArgumentValueError, ConvergenceError, ShapeError
from ...param_schema import EPS, AnyOf, Exactly, Int, Struct
from ...primitive import bind, code_of_value, describe, primitive, shape_of
from ...rules import defrules
from .. import elementwise as ew
from .. import structural as st
from .matrix import add_optional, adjoint, mm, place_block, row

KINDS = ("svd", "hermitian")


# ------------------------------------------------------------------ the numerical solve

def _operator(kind: str, a: np.ndarray):
    """``x -> H x`` on arrays."""
    if kind == "hermitian":
        return lambda x: a @ x
    m = a.shape[0]
    adjoint_a = a.conj().T
    return lambda x: np.concatenate([a @ x[m:], adjoint_a @ x[:m]])


def _project(basis, x):
    return x - basis @ (basis.conj().T @ x)


def _row_operator(kind: str, a: np.ndarray):
    """``X -> (H X^T)^T`` for vectors stored as the rows of ``X``."""
    if kind == "hermitian":
        transposed = a.T
        return lambda x: x @ transposed
    m = a.shape[0]
    transposed, conjugate = a.T, a.conj()
    return lambda x: np.concatenate([x[:, m:] @ transposed, x[:, :m] @ conjugate], axis=1)


def _row_projector(kind: str, m: int, basis, w):
    """``X ->`` the rows of ``X`` without their components along the columns of ``basis``
    and ``w`` (orthonormal, mutually orthogonal); a ``basis`` of the form
    ``blockdiag(U, V)`` is applied by blocks."""
    half = basis.shape[1] // 2
    if kind == "svd" and not basis[:m, half:].any() and not basis[m:, :half].any():
        u, v = basis[:m, :half], basis[m:, half:]

        def project(x):
            x = x - np.concatenate([(x[:, :m] @ u.conj()) @ u.T, (x[:, m:] @ v.conj()) @ v.T],
                                   axis=1)
            return x - (x @ w.conj()) @ w.T
        return project
    fixed = np.concatenate([basis, w], axis=1)
    conjugate, transposed = fixed.conj(), fixed.T
    return lambda x: x - (x @ conjugate) @ transposed


def _lorentz(x, eps):
    return x / (x * x + eps)


def _inverse_square(x, eps):
    return 1.0 / (x * x + eps)


def _deflation(h, basis, hint, scale: float, tol: float):
    """The Ritz pairs ``(w, lam)`` of ``P H P`` on span(P hint) with a residual below
    ``tol * scale`` (``w`` orthonormal and orthogonal to ``basis``)."""
    if hint.shape[1] == 0:
        return hint, np.zeros(0)
    w, r = scipy.linalg.qr(_project(basis, hint), mode="economic")
    size = np.abs(np.diagonal(r))
    w = w[:, size > 1e-8 * max(float(size.max()), np.finfo(float).tiny)]
    hw = _project(basis, h(w))
    small = w.conj().T @ hw
    lam, z = np.linalg.eigh(0.5 * (small + small.conj().T))
    w, hw = w @ z, hw @ z
    good = np.linalg.norm(hw - w * lam, axis=0) <= tol * scale
    return w[:, good], lam[good]


def _impl(params, a, basis, t, r, hint):
    kind, eps, tol, maxiter = params[:4]
    if exact_mode(params):
        return _exact(kind, eps, a.shape[-2], basis, t, r, hint)
    h = _operator(kind, a)
    r = _project(basis, r)
    scale = float(np.max(np.abs(t))) if t.size else 0.0
    w, lam = _deflation(h, basis, hint, scale, 100 * tol)
    coef = w.conj().T @ r
    x = t - lam[:, None]
    deflated = (w @ (_lorentz(x, eps) * coef), w @ (_inverse_square(x, eps) * coef))
    lanczos = _ColumnLanczos(_row_operator(kind, a), _row_projector(kind, a.shape[0], basis, w),
                             r.shape[0] - basis.shape[1] - w.shape[1], t, r - w @ coef, eps)
    for _ in range(maxiter):
        if lanczos.done():
            break
        lanczos.step(tol)
    if not lanczos.done():
        worst = _worst_residual(h, basis, t, r, lanczos.current()[0] + deflated[0],
                                lanczos.columns, eps)
        raise ConvergenceError(f"complement_solve ({kind}): the Lanczos iteration did not "
                               f"reach tol={tol:g} in {maxiter} iterations for "
                               f"{lanczos.columns.size} column(s) (relative residual "
                               f"{worst:.3g})", residual=worst, iterations=maxiter)
    return deflated[0] + lanczos.result[0], deflated[1] + lanczos.result[1]


def _exact(kind: str, eps: float, m: int, basis, t, r, hint, first_only: bool = False):
    """Both outputs from the complete decomposition of ``H`` on the complement that
    ``hint`` carries in exact mode (:func:`exact_hint`): its columns are the discarded
    singular vectors ``(u_j; v_j)`` (kind "svd": the eigenvectors ``(u_j; +-v_j)/sqrt 2``
    of ``H`` for ``+-sigma_j``) or eigenvectors ``v_j`` of ``H``, its last row their
    values.  What they leave of the complement (kind "svd": the null vectors of a
    rectangular ``a``) has the eigenvalue 0.  Stacks of matrices are computed at once.
    ``first_only``: ``(Z, None)``."""
    vectors, values = hint[..., :-1, :], np.swapaxes(hint[..., -1:, :].real, -1, -2)
    shift = t[..., None, :]
    null = r.shape[-2] > basis.shape[-1] + vectors.shape[-1] * (2 if kind == "svd" else 1)
    if null:            # (else r enters only through its components along the vectors,
        r = r - basis @ (_adjoint(basis) @ r)       # which are orthogonal to the basis)
    rest = None
    functions = (_lorentz,) if first_only else (_lorentz, _inverse_square)
    if kind == "hermitian":
        coef = _adjoint(vectors) @ r
        gaps = shift - values                           # p x k: t_i - lambda_j
        weighted = [f(gaps, eps) * coef for f in functions]
        both = vectors @ (weighted[0] if first_only else np.concatenate(weighted, axis=-1))
        if null:
            rest = r - vectors @ coef
    else:
        left, right = vectors[..., :m, :], vectors[..., m:, :]
        a_coef, b_coef = _adjoint(left) @ r[..., :m, :], _adjoint(right) @ r[..., m:, :]
        plus, minus = (a_coef + b_coef) * 0.5, (a_coef - b_coef) * 0.5
        near, far = shift - values, shift + values      # t_i - sigma_j, t_i + sigma_j
        halves = [(f(near, eps) * plus, f(far, eps) * minus) for f in functions]
        both = np.concatenate(
            [left @ np.concatenate([x + y for x, y in halves], axis=-1),
             right @ np.concatenate([x - y for x, y in halves], axis=-1)], axis=-2)
        if null:
            rest = r - np.concatenate([left @ a_coef, right @ b_coef], axis=-2)
    k = r.shape[-1]
    z, w = both[..., :k], None if first_only else both[..., k:]
    if rest is not None:                                # the eigenvalue 0 of H
        z = z + rest * _lorentz(shift, eps)
        if not first_only:
            w = w + rest * _inverse_square(shift, eps)
    return z, w


def _adjoint(x):
    x = np.swapaxes(x, -1, -2)
    return x.conj() if x.dtype.kind == "c" else x      # (a real conj is a copy)


class _ColumnLanczos:
    """One Lanczos process per column of ``rest`` on ``H`` restricted to the complement
    (``project``, of dimension ``room``), evaluating ``L(t_i - T_i)`` and ``g(t_i - T_i)``
    as it goes.  The unconverged columns advance together (one product with ``a`` per
    step); converged ones drop out.  Vectors are rows: ``q[column, j]``."""

    def __init__(self, h, project, room, t, rest, eps):
        self.h, self.project, self.room, self.eps = h, project, room, eps
        self.result = (np.zeros_like(rest), np.zeros_like(rest))
        norms = np.linalg.norm(rest, axis=0)
        self.columns = np.flatnonzero(norms > 0)
        count, size = self.columns.size, rest.shape[0]
        self.t, self.norms = t[self.columns], norms[self.columns]
        self.q = np.zeros((count, 8, size), rest.dtype)
        self.q[:, 0] = (rest[:, self.columns] / self.norms).T
        self.tri = np.zeros((count, 8, 8), rest.dtype)     # T, Hermitian
        self.y = np.zeros((2, count, 8), rest.dtype)        # both results' coefficients
        self.residual = np.full(count, np.inf)              # relative, of the shifted solve
        self.size = 0                                       # dimension of T

    def done(self) -> bool:
        return self.columns.size == 0

    def current(self) -> tuple:
        """Both approximations so far, every column (converged ones are final)."""
        out = tuple(x.copy() for x in self.result)
        for x, y in zip(out, self.y):
            x[:, self.columns] = np.matmul(y[:, None, :self.size],
                                           self.q[:, :self.size])[:, 0].T
        return out

    def step(self, tol: float) -> None:
        d = self.size
        q = self.q[:, :d + 1]
        rows = self.project(self.h(self.q[:, d]))
        coef = 0
        for _ in range(2):                                  # full reorthogonalisation
            c = np.matmul(q.conj(), rows[:, :, None])[:, :, 0]
            rows = rows - np.matmul(c[:, None, :], q)[:, 0]
            coef = coef + c
        beta = np.linalg.norm(rows, axis=1)
        self.tri[:, :d + 1, d] = coef
        self.tri[:, d, :d + 1] = coef.conj()
        self.size = d = d + 1
        self.y[:, :, :d], last = self._evaluate()
        self.residual = beta * last / self.norms
        converged = (d >= self.room) | ~(self.residual > tol)    # NaN (eps = 0): stop
        if converged.any():
            self._finish(converged)
        self._extend(rows[~converged], beta[~converged])

    def _evaluate(self):
        """The coefficients ``f(t - T) e_1 |r|`` for ``f = L, g``, and the size of the last
        coefficient of the shifted solves ``(t - T -+ i sqrt(eps)) y = e_1 |r|`` (with
        ``L(x) + i sqrt(eps) g(x) = 1/(x - i sqrt(eps))``), which makes their residual."""
        d = self.size
        x = self.t[:, None, None] * np.eye(d) - self.tri[:, :d, :d]
        rhs = np.zeros((x.shape[0], d, 1))
        rhs[:, 0, 0] = self.norms
        root = np.sqrt(self.eps)
        try:
            if root == 0:
                lorentz = np.linalg.solve(x, rhs)[..., 0]
                square = np.linalg.solve(x, lorentz[..., None])[..., 0]
                return np.stack([lorentz, square]), np.abs(lorentz[:, -1])
            minus = np.linalg.solve(x - 1j * root * np.eye(d), rhs)[..., 0]
            if not np.iscomplexobj(x):
                return np.stack([minus.real, minus.imag / root]), np.abs(minus[:, -1])
            plus = np.linalg.solve(x + 1j * root * np.eye(d), rhs)[..., 0]
            return (np.stack([(minus + plus) * 0.5, (minus - plus) / (2j * root)]),
                    np.maximum(np.abs(minus[:, -1]), np.abs(plus[:, -1])))
        except np.linalg.LinAlgError:                      # eps = 0 at a degeneracy
            nan = np.full((2, x.shape[0], d), np.nan, self.y.dtype)
            return nan, np.full(x.shape[0], np.nan)

    def _finish(self, converged) -> None:
        d = self.size
        for x, y in zip(self.result, self.y):
            x[:, self.columns[converged]] = np.matmul(
                y[converged, None, :d], self.q[converged, :d])[:, 0].T
        keep = ~converged
        self.columns, self.t, self.norms = self.columns[keep], self.t[keep], self.norms[keep]
        self.q, self.tri, self.y = self.q[keep], self.tri[keep], self.y[:, keep]
        self.residual = self.residual[keep]

    def _extend(self, rows, beta) -> None:
        d = self.size
        if d == self.q.shape[1]:                            # grow the storage
            count = self.columns.size
            self.q = np.concatenate([self.q, np.zeros_like(self.q)], axis=1)
            tri = np.zeros((count, 2 * d, 2 * d), self.tri.dtype)
            tri[:, :d, :d] = self.tri
            self.tri = tri
            self.y = np.concatenate([self.y, np.zeros_like(self.y)], axis=2)
        self.q[:, d] = rows / beta[:, None]
        self.tri[:, d, d - 1] = beta
        self.tri[:, d - 1, d] = beta


def _worst_residual(h, basis, t, r, z, columns, eps) -> float:
    """The largest relative residual ``|K r - (K^2 + eps) z| / |K r|`` among ``columns``
    (``z = L(K) r`` solves that system on the complement)."""
    r, z, t = r[:, columns], z[:, columns], t[columns]

    def k_projected(x):
        return _project(basis, x * t - h(x))

    kr = k_projected(r)
    residual = kr - k_projected(k_projected(z)) - eps * z
    return float(np.max(np.linalg.norm(residual, axis=0)
                        / np.maximum(np.linalg.norm(kr, axis=0), np.finfo(float).tiny)))


# ------------------------------------------------------------------ shapes

def _shape_rule(params, a, basis, t, r, hint):
    kind, exact = params[0], exact_mode(params)
    shapes = sa, sbasis, st_, sr, sh = [shape_of(x) for x in (a, basis, t, r, hint)]
    batch = sa[:-2] if exact else ()                # stacks: exact mode only
    nb = len(batch)
    ok = len(sa) == nb + 2 and all(x[:nb] == batch for x in shapes)
    if ok:
        size = sa[nb] + sa[nb + 1] if kind == "svd" else sa[nb]
        ok = ((kind == "svd" or sa[nb] == sa[nb + 1]) and len(sbasis) == nb + 2
              and sbasis[nb] == size and len(st_) == nb + 1
              and sr == batch + (size, st_[nb]) and len(sh) == nb + 2
              and sh[nb] == size + exact
              and not (exact and not _complete(kind, size, sbasis[nb + 1], sh[nb + 1])))
    if not ok:
        hint = ("(N + 1 x p, the whole complement)" if exact else "(N x p)")
        raise ShapeError(f"complement_solve ({kind}): expected a matrix a, kept vectors "
                         f"(N x k'), shifts (k), right-hand sides (N x k) and a hint "
                         f"{hint} with N = {'m + n' if kind == 'svd' else 'n'}"
                         f"{' (or stacks of them)' if exact else ''}, got "
                         f"{describe(a)}, {describe(basis)}, {describe(t)}, {describe(r)}, "
                         f"{describe(hint)}")
    code = code_of_value(r)
    return [(code, sr), (code, sr)]


def _complete(kind: str, size: int, kept: int, count: int) -> bool:
    """Whether an exact-mode hint of ``count`` columns can span the complement of ``kept``
    basis vectors (kind "svd": up to the null space of ``H``)."""
    return kept + 2 * count <= size if kind == "svd" else kept + count == size


# ------------------------------------------------------------------ derivative rules
# On the complement (Z = L(K_P) P r, W = g(K_P) P r, K_P = P K P), with E the change of
# K_P there, E X = P (dK X - dB B^H K X - K B dB^H X) for X in range(P)
# (dK X = X diag(dt) - dH X; K acts on each column with its own shift):
#   d L(K) = -L(K) E L(K) + eps g(K) E g(K),   d g(K) = -g(K) E L(K) - L(K) E g(K)
# (from L = K (K^2 + eps)^-1, g = (K^2 + eps)^-1), and the projector moves with B:
#   dZ = dP Z + L(dP r + dr - E Z) + eps g(E W),   dW = dP W + g(dP r + dr - E Z) - L(E W).
# Both solves are well conditioned (no cancellation between large terms), and one call
# of the primitive on the stacked right-hand sides gives all four.

def _h(kind, a, x):
    """``H x`` with the library's operations (also ``dH x`` with ``a = dA``)."""
    if kind == "hermitian":
        return mm(a, x)
    m = shape_of(a)[-2]
    return st.concatenate([mm(a, x[..., m:, :]), mm(adjoint(a), x[..., :m, :])],
                          _row_axis(x))


def _h_cotangent(kind, m, x, w):
    """``G`` with ``Re<x, dH w> = Re<G, dA>``."""
    if kind == "hermitian":
        return mm(x, adjoint(w))
    return (mm(x[..., :m, :], adjoint(w[..., m:, :]))
            + mm(w[..., :m, :], adjoint(x[..., m:, :])))


def _row_axis(x) -> int:
    """The (non-negative) axis of the rows of ``x``'s matrices."""
    return len(shape_of(x)) - 2


def _dp(basis, d_basis, x):
    """``dP x`` with ``dP = -(dB B^H + B dB^H)``."""
    return ew.neg(mm(d_basis, mm(adjoint(basis), x)) + mm(basis, mm(adjoint(d_basis), x)))


def _dp_cotangent(basis, x, v):
    """``G`` with ``Re<x, dP v> = Re<G, dB>``."""
    return ew.neg(mm(x, mm(adjoint(v), basis)) + mm(v, mm(adjoint(x), basis)))


def _k(kind, a, t, x):
    """``K x``: ``x diag(t) - H x``."""
    return x * row(t) - _h(kind, a, x)


def _change(kind, xs, tangents, x):
    """``E x`` up to the projection (None when no tangent reaches it)."""
    da, d_basis, dt = tangents[:3]
    a, basis, t = xs[:3]
    out = None if dt is None else x * row(dt)
    if da is not None:
        out = add_optional(out, ew.neg(_h(kind, da, x)))
    if d_basis is not None:
        out = add_optional(out, ew.neg(mm(d_basis, mm(adjoint(basis), _k(kind, a, t, x)))
                                       + _k(kind, a, t, mm(basis, mm(adjoint(d_basis), x)))))
    return out


def _both(params, a, basis, t, hint, first, second):
    """``(L first, g first), (L second, g second)`` from one call (None for a None)."""
    if first is None or second is None:
        present = first if second is None else second
        out = (None, None) if present is None else bind(complement_solve_p, params, a,
                                                        basis, t, present, hint)
        return (out, (None, None)) if second is None else ((None, None), out)
    k = shape_of(first)[-1]
    both_t = st.concatenate([t, t], len(shape_of(t)) - 1)
    z, w = bind(complement_solve_p, params, a, basis, both_t,
                st.concatenate([first, second], len(shape_of(first)) - 1), hint)
    return (z[..., :k], w[..., :k]), (z[..., k:], w[..., k:])


def _jvp(params, tangents, out, xs):
    kind, eps = params[0], params[1]
    d_basis, dr = tangents[1], tangents[3]
    a, basis, t, r, hint = xs
    z, w = out
    moved = None if d_basis is None else _dp(basis, d_basis, r)
    ez = _change(kind, xs, tangents, z)
    rhs = add_optional(add_optional(dr, moved), None if ez is None else ew.neg(ez))
    (lr, gr), (le, ge) = _both(params, a, basis, t, hint, rhs,
                               _change(kind, xs, tangents, w))
    dz = add_optional(lr, None if ge is None else ge * eps)
    dw = add_optional(gr, None if le is None else ew.neg(le))
    if d_basis is not None:
        dz = add_optional(dz, _dp(basis, d_basis, z))
        dw = add_optional(dw, _dp(basis, d_basis, w))
    return dz, dw


def _vjp(params, cts, out, xs, active):
    """``gr = L gZ + g gW``; the other cotangents from ``Re<gZ, dP Z> + Re<gW, dP W>
    + Re<gr, dP r - E Z> + Re<eps g gZ - L gW, E W>``."""
    kind, eps = params[0], params[1]
    gz, gw = cts
    a, basis, t, r, hint = xs
    z, w = out
    (lz, g_gz), (l_gw, g_gw) = _both(params, a, basis, t, hint, gz, gw)
    gr = add_optional(lz, g_gw)
    other = add_optional(None if g_gz is None else g_gz * eps,
                         None if l_gw is None else ew.neg(l_gw))
    ga = g_basis = gt = None
    for x, y, sign in ((gr, z, -1.0), (other, w, 1.0)):      # sign Re<x, E y>
        if x is None:
            continue
        if active[0]:
            ga = add_optional(ga, _h_cotangent(kind, shape_of(a)[-2], x, y) * -sign)
        if active[1]:
            g_basis = add_optional(g_basis, (
                mm(x, mm(adjoint(_k(kind, a, t, y)), basis))
                + mm(y, mm(adjoint(_k(kind, a, t, x)), basis))) * -sign)
        if active[2]:
            overlap = st.reduce_sum(ew.conj(x) * y, (_row_axis(x),))
            gt = add_optional(gt, ew.real(overlap) * sign)
    if active[1]:
        for x, y in ((gz, z), (gw, w), (gr, r)):
            if x is not None:
                g_basis = add_optional(g_basis, _dp_cotangent(basis, x, y))
    return ga, g_basis, gt, gr, None


def _format_params(params) -> str:
    if exact_mode(params):
        return f"{params[0]} eps={params[1]:g} exact"
    return f"{params[0]} eps={params[1]:g} tol={params[2]:g} maxiter={params[3]}"


#: (kind, eps, tol, maxiter) for Lanczos, (kind, eps, 0.0, 0, True) for exact mode
_PARAMS = AnyOf(Struct(Exactly(*KINDS), EPS, EPS, Int(0)),
                Struct(Exactly(*KINDS), EPS, EPS, Int(0), Exactly(True)))
complement_solve_p = primitive("complement_solve", _impl, _shape_rule, n_outputs=2,
                               format_params=_format_params, params=_PARAMS)
defrules(complement_solve_p, _jvp, _vjp)


def _lorentz_impl(params, a, basis, t, r, hint):
    return _exact(params[0], params[1], a.shape[-2], basis, t, r, hint, first_only=True)[0]


def _lorentz_shape_rule(params, *xs):
    return _shape_rule(params, *xs)[0]


def _with_second(params, z, xs) -> tuple:
    """Both outputs of the solve whose first is ``z`` (the second computed now: a
    derivative of the first needs it)."""
    return z, bind(complement_solve_p, params, *xs)[1]


#: exact mode's first output alone (``Z = L(K) P r``) where no derivative needs ``g``:
#: half the products; its rules are the whole solve's with ``gW = 0``
complement_lorentz_p = primitive(
    "complement_lorentz", _lorentz_impl, _lorentz_shape_rule,
    format_params=lambda p: f"{p[0]} eps={p[1]:g} exact",
    params=Struct(Exactly(*KINDS), EPS, EPS, Int(0), Exactly(True)))
defrules(complement_lorentz_p,
         lambda params, tangents, out, xs: _jvp(params, tangents,
                                                _with_second(params, out, xs), xs)[0],
         lambda params, ct, out, xs, active: _vjp(params, (ct, None),
                                                  _with_second(params, out, xs), xs, active))


def exact_mode(params) -> bool:
    """Whether a node's solves use the complete decomposition its hint carries (params
    ``(kind, eps, tol, maxiter, True)``, :func:`exact_params`) instead of Lanczos."""
    return len(params) > 4 and params[4] is True


def exact_params(kind: str, eps: float) -> tuple:
    """The params of exact mode: the hint is :func:`exact_hint`'s complete decomposition
    of ``H`` on the complement; the solves are dense products with it."""
    return (kind, float(eps), 0.0, 0, True)


def exact_hint(vectors, values):
    """The hint of exact mode: the discarded vectors (columns; kind "svd": ``(u_j; v_j)``
    stacked) over a last row of their values (``sigma_j`` or ``lambda_j``).  It carries no
    derivative: the solve's rules differentiate ``a`` and ``basis`` through ``N`` itself,
    which is what makes every order exact at degenerate discarded values."""
    code = code_of_value(vectors)
    if code_of_value(values) != code:
        values = ew.convert(values, code)
    return st.concatenate([vectors, row(values)], _row_axis(vectors))


def solve_params(kind: str, eps: float, tol: float, maxiter) -> tuple:
    """The params of the solves of a decomposition's derivative: relative accuracy
    ``tol / 100`` (so that independent evaluations, eager and traced, agree to roundoff),
    at most ``maxiter`` (default 1000) iterations."""
    return (kind, float(eps), float(tol) / 100, 1000 if maxiter is None else int(maxiter))


def complement_solve(kind: str, a, basis, t, r, hint, params=None, *, eps: float = 0.0,
                     tol: float = 1e-13, maxiter: int = 1000):
    """``(L(K) P r, g(K) P r)`` (see the module docstring); ``params`` (kind, eps, tol,
    maxiter) as a node has them."""
    if kind not in KINDS:
        raise ArgumentValueError(f"complement_solve: kind must be one of {KINDS}, got {kind!r}")
    if params is None:
        params = (kind, float(eps), float(tol), int(maxiter))
    return bind(complement_solve_p, params, a, basis, t, r, hint)


# ------------------------------------------------------------------ the callers' terms

def coupling_svd(a, u, v, s, r_u, r_v, hint, params):
    """``(X, Y) = L(K) (R_u; R_v)`` for the SVD (kind "svd"): the parts of the kept
    vectors' derivatives (or of the VJP) in the discarded subspace.  ``R_u``, ``R_v``
    must be orthogonal to ``u``, ``v``; ``hint`` is ``blockdiag(next u's, next v's)``."""
    m, n = shape_of(a)[-2:]
    k = shape_of(s)[-1]
    basis = (place_block(u, (m + n, 2 * k), (0, 0))
             + place_block(v, (m + n, 2 * k), (m, k)))
    z = _first(params, a, basis, s, st.concatenate([r_u, r_v], _row_axis(r_u)), hint)
    return z[..., :m, :], z[..., m:, :]


def coupling_hermitian(a, v, w, r, hint, params):
    """``X = L(K) R`` for the Hermitian eigendecomposition (kind "hermitian"); ``R`` must
    be orthogonal to ``v``."""
    return _first(params, a, v, w, r, hint)


def _first(params, a, basis, t, r, hint):
    """``Z`` of the solve (exact mode: a node of ``Z`` alone)."""
    if exact_mode(params):
        return bind(complement_lorentz_p, params, a, basis, t, r, hint)
    return bind(complement_solve_p, params, a, basis, t, r, hint)[0]

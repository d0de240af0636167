"""Forward computation of leading singular triplets and eigenpairs, with a residual check.

ARPACK (SciPy's ``svds``/``eigsh``, implicitly restarted Lanczos) finds the leading part;
a Rayleigh-Ritz step (for ``svds`` after one two-sided block step with ``a``) then makes
the vectors exactly orthonormal and the values as accurate as the vectors allow, and
every kept triplet/pair must have a relative residual below
``tol`` (relative to the largest value) or :class:`~tenpy_ad.errors.ConvergenceError` is
raised with the residual.  Small problems, where ARPACK cannot run or costs more than the
dense decomposition, use LAPACK and slice.

The choice of ARPACK was measured on the TRG matrices of the 2D Ising model
(``bench/trg_partial.py --forward``, bench/README.md): PROPACK was as fast but its vectors
were accurate to 1e-11..1e-7 only, a randomized range finder with power iterations took
3-6x ARPACK's time for the same accuracy, LAPACK's full ``gesdd`` 10x.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse.linalg

from ...errors import ConvergenceError

#: at or below this size (min(m, n)) the dense decomposition is used
DENSE_SIZE = 16
_SEED = 20240531          # fixed start vector: the same input gives the same vectors


def default_tol(dtype) -> float:
    """The default relative residual: 1000 units of roundoff of ``dtype``."""
    return 1e3 * float(np.finfo(np.empty(0, dtype).real.dtype).eps)


def _start_vector(n: int, dtype) -> np.ndarray:
    return np.random.default_rng(_SEED).standard_normal(n).astype(dtype)


def _arpack(call, what: str):
    """``call()``, with ARPACK's failures as ConvergenceError (ARPACK returns only the
    converged pairs, so there is no residual of the others to report: its message says
    how many converged)."""
    try:
        return call()
    except scipy.sparse.linalg.ArpackNoConvergence as error:
        message = f"{what}: ARPACK did not converge ({error}); raise maxiter"
        raise ConvergenceError(message) from None
    except scipy.sparse.linalg.ArpackError as error:
        raise ConvergenceError(f"{what}: ARPACK failed ({error})") from None


def _check_residual(residuals, scale, tol, what):
    worst = float(np.max(residuals)) / scale if scale > 0 and residuals.size else 0.0
    if not worst <= tol:
        raise ConvergenceError(f"{what}: the leading vectors were not found to the requested "
                               f"accuracy (relative residual {worst:.3g} > tol {tol:.3g}); "
                               "raise maxiter or tol", residual=worst)


def _use_dense(size: int, count: int) -> bool:
    return size <= DENSE_SIZE or count >= size - 1


def leading_triplets(a, count: int, checked: int, tol: float, maxiter, dense: bool = False):
    """``u, s, vh``: the ``count`` leading singular triplets of ``a``, descending; the
    first ``checked`` must have a relative residual below ``tol``.  ``dense``: LAPACK."""
    m, n = a.shape
    what = f"svds ({count} of {min(m, n)} singular triplets)"
    if not np.isfinite(a).all():
        real = np.empty(0, a.dtype).real.dtype
        return (np.full((m, count), np.nan, a.dtype), np.full(count, np.nan, real),
                np.full((count, n), np.nan, a.dtype))
    if dense or _use_dense(min(m, n), count):
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return u[:, :count], s[:count], vh[:count]
    v0 = _start_vector(min(m, n), a.dtype)
    _, _, vh = _arpack(lambda: scipy.sparse.linalg.svds(
        a, k=count, tol=0, v0=v0, maxiter=maxiter, solver="arpack"), what)
    u, s, v = _two_sided_refinement(a, vh.conj().T)
    residuals = np.maximum(
        np.linalg.norm(a.conj().T @ u[:, :checked] - v[:, :checked] * s[:checked], axis=0),
        np.linalg.norm(a @ v[:, :checked] - u[:, :checked] * s[:checked], axis=0))
    _check_residual(residuals, s[0] if s.size else 0.0, tol, what)
    return u, s, v.conj().T


def _two_sided_refinement(a, v):
    """One block step ``U = orth(A V)``, ``V = orth(A^H U)`` and a Rayleigh-Ritz step on
    ``U^H A V``: ``u, s, v``.  SciPy's ARPACK works with ``A^H A``, whose small, clustered
    singular values it resolves only to ``eps |A|^2 / sigma`` (residuals ~3e-13 of ``s_1``
    on the beta = 1 TRG matrices); one step with ``A`` itself restores ``eps |A|``."""
    u = np.linalg.qr(a @ v)[0]
    adjoint_a_u = a.conj().T @ u
    v = np.linalg.qr(adjoint_a_u)[0]
    z_u, s, z_vh = np.linalg.svd(adjoint_a_u.conj().T @ v)
    return u @ z_u, s, v @ z_vh.conj().T


def leading_eigenpairs(a, count: int, checked: int, which: str, tol: float, maxiter,
                       dense: bool = False):
    """``w, v``: the ``count`` leading eigenpairs of the Hermitian ``a`` by ``which``
    ("LA": largest algebraic, "LM": largest magnitude), leading first; the first
    ``checked`` must have a relative residual below ``tol``.  ``dense``: LAPACK."""
    n = a.shape[0]
    what = f"eigsh ({count} of {n} eigenpairs, which={which!r})"
    if not np.isfinite(a).all():
        real = np.empty(0, a.dtype).real.dtype
        return np.full(count, np.nan, real), np.full((n, count), np.nan, a.dtype)
    lapack = dense or _use_dense(n, count)
    if lapack:
        w, v = np.linalg.eigh(a)
    else:
        v0 = _start_vector(n, a.dtype)
        _, v = _arpack(lambda: scipy.sparse.linalg.eigsh(
            a, k=count, which=which, tol=0, v0=v0, maxiter=maxiter), what)
        v, _ = np.linalg.qr(v)          # Rayleigh-Ritz on the span ARPACK found
        w, z = np.linalg.eigh(v.conj().T @ a @ v)
        v = v @ z
    order = np.argsort(-w if which == "LA" else -np.abs(w), kind="stable")[:count]
    w, v = w[order], v[:, order]
    if not lapack:                      # (LAPACK's pairs are accurate by construction)
        residuals = np.linalg.norm(a @ v[:, :checked] - v[:, :checked] * w[:checked], axis=0)
        _check_residual(residuals, float(np.max(np.abs(w))) if w.size else 0.0, tol, what)
    return w, v

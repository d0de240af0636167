"""Spec entries of the linear-algebra breadth: eig, inv, det, slogdet, cholesky, pinv,
lstsq, matrix_power, multi_dot, expm, eigh/eigvalsh with UPLO, svdvals, every norm order,
and stacks of matrices for each decomposition (losses invariant under the decompositions'
gauge freedom)."""
import numpy as np

import tenpy_ad as tp

from .table import Spec

STACK = (2, 3, 3)


def _eig_invariants(x):
    """Eigenvalues, |v|^2 and the spectral projector of the first eigenvalue (its
    eigenvector times the first row of v^-1): all phase-invariant."""
    w, v = tp.linalg.eig(x)
    projector = v[..., :1] @ tp.linalg.inv(v)[..., :1, :]
    return projector * w[..., :1, None] + tp.abs(v) ** 2


def _positive_definite(x):
    """A matrix whose lower triangle is that of a positive-definite one (the upper one is
    anything: cholesky reads only the lower)."""
    return x * 0.2 + 3.0 * np.eye(x.shape[-1])


def _eigh_invariants(x, uplo):
    w, v = tp.linalg.eigh(x, uplo)
    return tp.abs(v) ** 2 * w[..., None, :]


def _svd_invariants(x):
    u, s, vh = tp.linalg.svd(x)
    return (u[..., :2] * s[..., None, :2]) @ vh[..., :2, :] + tp.abs(u) ** 2 @ tp.abs(vh) ** 2


def _qr_product(x):
    q, r = tp.linalg.qr(x)
    return q @ (r * r) + q @ r


def _lstsq_solution(a, b):
    x, residuals, rank, s = tp.linalg.lstsq(a, b)
    return x + rank


def _lstsq_residuals(a, b):
    x, residuals, rank, s = tp.linalg.lstsq(a, b)
    return residuals + s.sum()


SPECS = [
    # eig
    Spec("eigvals", tp.linalg.eigvals, ((4, 4),)),
    Spec("eig_invariants", _eig_invariants, ((3, 3),)),
    Spec("eig_stack", _eig_invariants, (STACK,)),
    # inverses, determinants
    Spec("inv", tp.linalg.inv, ((3, 3),)),
    Spec("inv_stack", tp.linalg.inv, (STACK,)),
    Spec("det", tp.linalg.det, ((4, 4),)),
    Spec("det_stack", tp.linalg.det, (STACK,)),
    Spec("slogdet_logabsdet", lambda x: tp.linalg.slogdet(x)[1], ((4, 4),)),
    Spec("slogdet_sign_complex", lambda x: tp.linalg.slogdet(x)[0], ((3, 3),),
         dtypes=("complex128",)),
    Spec("slogdet_stack", lambda x: tp.linalg.slogdet(x)[1] + tp.linalg.slogdet(x)[0],
         (STACK,)),
    Spec("solve_stack_broadcast", tp.linalg.solve, ((2, 1, 3, 3), (4, 3, 2))),
    Spec("solve_stack_vector", tp.linalg.solve, (STACK, (3,))),
    # cholesky (lower and upper triangle read)
    Spec("cholesky", lambda x: tp.linalg.cholesky(_positive_definite(x)), ((4, 4),)),
    Spec("cholesky_upper",
         lambda x: tp.linalg.cholesky(_positive_definite(x), upper=True), ((3, 3),)),
    Spec("cholesky_stack", lambda x: tp.linalg.cholesky(_positive_definite(x)), (STACK,)),
    # pseudo-inverse, least squares
    *[Spec(f"pinv_{m}x{n}", tp.linalg.pinv, ((m, n),)) for m, n in ((3, 3), (5, 3), (3, 5))],
    Spec("pinv_stack", tp.linalg.pinv, ((2, 4, 3),)),
    Spec("pinv_hermitian", lambda x: tp.linalg.pinv(x, hermitian=True), ((3, 3),)),
    Spec("lstsq_solution", _lstsq_solution, ((5, 3), (5, 2))),
    Spec("lstsq_solution_wide", _lstsq_solution, ((3, 4), (3,))),
    Spec("lstsq_residuals", _lstsq_residuals, ((5, 3), (5,))),
    # products and functions of matrices
    *[Spec(f"matrix_power_{p}".replace("-", "minus"),
           lambda x, p=p: tp.linalg.matrix_power(x, p), ((3, 3),)) for p in (0, 1, 3, 6, -2)],
    Spec("matrix_power_stack", lambda x: tp.linalg.matrix_power(x, 5), (STACK,)),
    Spec("multi_dot", lambda a, b, c, d: tp.linalg.multi_dot([a, b, c, d]),
         ((4,), (4, 6), (6, 2), (2, 3))),
    Spec("multi_dot_vectors", lambda a, b, c: tp.linalg.multi_dot([a, b, c]),
         ((3,), (3, 2), (2,))),
    Spec("expm", tp.linalg.expm, ((3, 3),)),
    Spec("expm_stack", tp.scipy.linalg.expm, (STACK,)),
    # Hermitian eigenproblems as NumPy reads them, singular values
    Spec("eigh_lower", lambda x: _eigh_invariants(x, "L"), ((4, 4),)),
    Spec("eigh_upper", lambda x: _eigh_invariants(x, "U"), ((4, 4),)),
    Spec("eigh_stack", lambda x: _eigh_invariants(x, "L"), (STACK,)),
    Spec("eigvalsh_upper", lambda x: tp.linalg.eigvalsh(x, UPLO="U"), ((4, 4),)),
    Spec("svdvals", tp.linalg.svdvals, ((4, 3),)),
    Spec("svd_no_uv_stack", lambda x: tp.linalg.svd(x, compute_uv=False), ((2, 3, 4),)),
    Spec("svd_stack", _svd_invariants, ((2, 4, 3),)),
    Spec("qr_stack", _qr_product, ((2, 4, 3),)),
    Spec("qr_stack_wide", _qr_product, ((2, 3, 4),)),
    # norms: every order NumPy accepts
    *[Spec(f"norm_vector_{p}".replace("-", "minus").replace(".", "_"),
           lambda x, p=p: tp.linalg.norm(x, p), ((5,),), domain="away_from_zero")
      for p in (3, 0.5, -1, -np.inf, 0)],
    *[Spec(f"norm_matrix_{p}".replace("-", "minus"),
           lambda x, p=p: tp.linalg.norm(x, p, axis=(2, 0)), ((3, 2, 4),), domain="distinct")
      for p in (1, -1, np.inf, -np.inf, -2, "nuc", "fro")],
    Spec("norm_stack_spectral", lambda x: tp.linalg.norm(x, 2, axis=(-2, -1), keepdims=True),
         ((2, 3, 4),)),
]

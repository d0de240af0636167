"""Spec entries of ``tp.scipy.sparse.linalg``: ``eigsh`` of an operator whose matvec closes
over the argument (eigenvalues and a phase-invariant function of the eigenvectors; also
generalised, with a constant ``M`` and with an ``M`` that closes over an argument),
``svds``, ``gmres`` / ``cg`` / ``minres`` solves, and ``expm_multiply`` (in ``b``, and in
an operator that closes over an argument).  Their derivatives are exact to every order,
eager and traced (the second order is checked in both modes).  A fixed ``v0`` makes
ARPACK's result deterministic."""
import numpy as np

import tenpy_ad as tp
from tenpy_ad.scipy.sparse import linalg as sla

from .table import REAL, Spec


def _hermitian_operator(a):
    n = a.shape[0]
    return sla.LinearOperator((n, n), lambda v: (a + tp.conj(a.T)) @ v, dtype=a.dtype)


def _eigsh(a):
    """The two lowest eigenvalues plus |V[0, :]|^2 (invariant under each vector's phase)."""
    w, v = sla.eigsh(_hermitian_operator(a), k=2, which="SA", v0=np.ones(a.shape[0]))
    return w + tp.abs(v[0]) ** 2


def _gmres(a, b):
    n = a.shape[0]
    op = sla.LinearOperator((n, n), lambda v: (a + 4.0 * np.eye(n)) @ v, dtype=a.dtype)
    return sla.gmres(op, b, rtol=1e-14, atol=0.0)[0]


def _cg(a, b):
    """A Hermitian positive definite operator a a^H + 1."""
    n = a.shape[0]
    op = sla.LinearOperator((n, n), lambda v: a @ (tp.conj(a.T) @ v) + v, dtype=a.dtype)
    return sla.cg(op, b, rtol=1e-14, atol=0.0)[0]


_METRIC = np.diag(np.arange(1.0, 6.0)) + 0.1       # Hermitian positive definite


def _eigsh_generalised(a):
    """``A v = w M v`` for a constant ``M``."""
    w, v = sla.eigsh(_hermitian_operator(a), k=2, M=_METRIC, which="SA",
                     v0=np.ones(a.shape[0]))
    return w + tp.abs(v[0]) ** 2


def _eigsh_metric(a, b):
    """``A v = w M v`` with ``M = b b^H + 2`` closing over the second argument."""
    n = a.shape[0]
    metric = sla.LinearOperator((n, n), lambda v: b @ (tp.conj(b.T) @ v) + 2.0 * v,
                                dtype=b.dtype)
    w, v = sla.eigsh(_hermitian_operator(a), k=2, M=metric, which="SA", v0=np.ones(n))
    return w + tp.abs(v[1]) ** 2


def _svds(a):
    """The two largest singular values plus a phase-invariant function of the vectors."""
    u, s, vh = sla.svds(sla.aslinearoperator(a), k=2, v0=np.ones(sum(a.shape)))
    return s + tp.abs(u[0]) ** 2 + tp.abs(vh[:, 1]) ** 2


def _minres(a, b):
    """A real symmetric operator a + a^T + 6."""
    n = a.shape[0]
    op = sla.LinearOperator((n, n), lambda v: (a + a.T) @ v + 6.0 * v, dtype=a.dtype)
    return sla.minres(op, b, rtol=1e-14)[0]


_GENERATOR = np.arange(16.0).reshape(4, 4) % 5 * 0.1 - 0.2


def _expm_multiply(b):
    """exp(A) b for a constant operator (the derivative is in b only)."""
    return sla.expm_multiply(sla.aslinearoperator(_GENERATOR), b)


def _expm_multiply_operator(a, b):
    """exp(A) b with A = 0.3 (a + a a^H / 4) closing over the first argument: the
    derivative in the operator's tensors too (forward by the block operator, reverse by
    quadrature)."""
    n = a.shape[0]
    op = sla.LinearOperator((n, n), lambda v: 0.3 * (a @ v + a @ (tp.conj(a.T) @ v) * 0.25),
                            dtype=a.dtype)
    return sla.expm_multiply(op, b)


#: ARPACK's iterates, and the derivative's solves (to 1e-12), move with the rounding of
#: the BLAS kernels: eager and traced gradients agree to ~1e-11 (3e-12 seen with
#: OpenBLAS's generic kernels), not to rounding
ARPACK = {"modes_tol": 1e-10}

SPECS = [
    Spec("sparse_eigsh", _eigsh, ((5, 5),), tol=ARPACK),
    Spec("sparse_eigsh_generalised", _eigsh_generalised, ((5, 5),), tol=ARPACK),
    Spec("sparse_eigsh_metric", _eigsh_metric, ((5, 5), (5, 5)), tol=ARPACK),
    Spec("sparse_svds", _svds, ((5, 4),), tol=ARPACK),
    Spec("sparse_gmres", _gmres, ((4, 4), (4,))),
    Spec("sparse_cg", _cg, ((4, 4), (4,)), dtypes=REAL),
    Spec("sparse_minres", _minres, ((4, 4), (4,)), dtypes=REAL),
    Spec("sparse_expm_multiply", _expm_multiply, ((4, 2),)),
    Spec("sparse_expm_multiply_operator", _expm_multiply_operator, ((4, 4), (4, 2))),
]

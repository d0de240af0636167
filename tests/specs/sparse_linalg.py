"""Spec entries of ``tp.scipy.sparse.linalg``: ``eigsh`` of an operator whose matvec closes
over the argument (eigenvalues and a phase-invariant function of the eigenvectors), and
``gmres`` / ``cg`` solves.  Their derivatives are first-order only (``max_order=1``: the
second order must raise).  A fixed ``v0`` makes ARPACK's result deterministic."""
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


_GENERATOR = np.arange(16.0).reshape(4, 4) % 5 * 0.1 - 0.2


def _expm_multiply(b):
    """exp(A) b for a constant operator (the derivative is in b only)."""
    return sla.expm_multiply(sla.aslinearoperator(_GENERATOR), b)


SPECS = [
    Spec("sparse_eigsh", _eigsh, ((5, 5),), max_order=1),
    Spec("sparse_gmres", _gmres, ((4, 4), (4,)), max_order=1),
    Spec("sparse_cg", _cg, ((4, 4), (4,)), dtypes=REAL, max_order=1),
    Spec("sparse_expm_multiply", _expm_multiply, ((4, 2),)),
]

"""The standard's ``linalg`` extension: tp.linalg's functions under the standard's
signatures, returning tensors (and named tuples for the decompositions)."""
from __future__ import annotations

from collections import namedtuple

from .. import numpy as _tnp
from ..numpy import linalg as _la
from ._convert import tensors
from ._functions import matmul, matrix_transpose, tensordot, vecdot

EighResult = namedtuple("EighResult", "eigenvalues eigenvectors")
QRResult = namedtuple("QRResult", "Q R")
SlogdetResult = namedtuple("SlogdetResult", "sign logabsdet")
SVDResult = namedtuple("SVDResult", "U S Vh")


def cholesky(x, /, *, upper=False):
    """The Cholesky factor of Hermitian positive-definite matrices (lower by default)."""
    return tensors(_la.cholesky(x, upper=upper))


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along ``axis``."""
    return tensors(_la.cross(x1, x2, axis=axis))


def det(x, /):
    """The determinants of square matrices."""
    return tensors(_la.det(x))


def diagonal(x, /, *, offset=0):
    """Diagonal ``offset`` of the last two axes."""
    return tensors(_la.diagonal(x, offset=offset))


def eigh(x, /):
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices."""
    return EighResult(*tensors(tuple(_la.eigh(x))))


def eigvalsh(x, /):
    """Eigenvalues (ascending) of Hermitian matrices."""
    return tensors(_la.eigvalsh(x))


def inv(x, /):
    """The inverses of square matrices."""
    return tensors(_la.inv(x))


def matrix_norm(x, /, *, keepdims=False, ord="fro"):          # noqa: A002
    """A matrix norm of the last two axes ("fro", "nuc", 1, 2, inf, -1, -2, -inf)."""
    return tensors(_la.matrix_norm(x, keepdims=keepdims, ord=ord))


def matrix_power(x, n, /):
    """The ``n``-th power of square matrices (negative ``n``: of the inverse)."""
    return tensors(_la.matrix_power(x, n))


def matrix_rank(x, /, *, rtol=None):
    """The number of singular values above ``rtol`` times the largest (int64)."""
    return tensors(_la.matrix_rank(x, rtol=rtol))


def outer(x1, x2, /):
    """The outer product of two 1-d tensors."""
    return tensors(_la.outer(x1, x2))


def pinv(x, /, *, rtol=None):
    """The Moore-Penrose pseudo-inverse (singular values below ``rtol`` times the largest
    are dropped; ``rtol`` a scalar or a tensor broadcast against the stack)."""
    if rtol is None or isinstance(rtol, (int, float)):
        return tensors(_la.pinv(x, rtol=rtol))
    return _pinv_of_svd(x, rtol)


def _pinv_of_svd(x, rtol):
    """``pinv`` with a cut-off per matrix of the stack: through the SVD, differentiable
    as the SVD is."""
    u, s, vh = _la.svd(x, full_matrices=False)
    largest = _tnp.max(s, axis=-1, keepdims=True) if s.shape[-1] else s
    cutoff = _tnp.expand_dims(_tnp.asarray(rtol), -1) * largest
    kept = s > cutoff
    inverse = _tnp.where(kept, 1 / _tnp.where(kept, s, 1), 0)
    return tensors(_tnp.matmul(_tnp.conj(matrix_transpose(vh)) * inverse[..., None, :],
                               _tnp.conj(matrix_transpose(u))))


def qr(x, /, *, mode="reduced"):
    """The QR decomposition ("reduced" or "complete")."""
    return QRResult(*tensors(tuple(_la.qr(x, mode=mode))))


def slogdet(x, /):
    """The sign (or phase) and the log of the absolute value of the determinants."""
    return SlogdetResult(*tensors(tuple(_la.slogdet(x))))


def solve(x1, x2, /):
    """The solution of ``x1 @ y = x2`` (``x2`` a vector or a stack of matrices)."""
    return tensors(_la.solve(x1, x2))


def svd(x, /, *, full_matrices=True):
    """The singular value decomposition ``U @ diag(S) @ Vh``."""
    return SVDResult(*tensors(tuple(_la.svd(x, full_matrices=full_matrices))))


def svdvals(x, /):
    """The singular values, descending."""
    return tensors(_la.svdvals(x))


def trace(x, /, *, offset=0, dtype=None):
    """The sums along diagonal ``offset`` of the last two axes."""
    return tensors(_la.trace(x, offset=offset, dtype=dtype))


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    """The ``ord``-norm over ``axis`` (all axes by default)."""
    return tensors(_la.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord))


__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer",
           "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace",
           "vecdot", "vector_norm"]

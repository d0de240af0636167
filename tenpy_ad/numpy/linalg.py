"""``tp.linalg`` (``tenpy_ad.numpy.linalg``): NumPy's ``linalg`` names, decompositions and
solves with exact, stable derivatives (NumPy's argument orders and return layouts), and
``np.linalg.<name>(tensor)`` runs them.

Every function takes a matrix or a stack of matrices ``(..., m, n)`` (``lstsq`` and
``multi_dot``: matrices, as NumPy's), in float32/64 or complex64/128, and is differentiable
in every mode (traced, eager, function transforms) to any order; plain arrays are computed
with the same conventions (``svd``'s reduced default, complex ``eig``).  Derivative conventions
(Lorentzian broadening at degenerate spectra, complex gauge checks) are described in
:mod:`tenpy_ad.ops.linalg`; :data:`config` holds the defaults.

Bad input fails as NumPy's does, in our words: ``ShapeError`` (a ``ValueError``) naming
the function and the shape; ``numpy.linalg.LinAlgError`` for a singular matrix (``inv``,
``solve``) or one that is not positive definite (``cholesky``).  A matrix holding NaN or
Inf gives NaN results (never a LAPACK error).  Empty stacks and empty matrices give
NumPy's results, or its error where it raises (``cond`` of an empty matrix, the minimum
of no values in ``norm``), and zero-size derivatives (:mod:`.ops.linalg.zero_size`).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import dtypes
from ..errors import ArgumentError, ArgumentValueError, ShapeError
from ..ops import elementwise as ew
from ..ops import structural as st
from ..ops.linalg import config
from ..ops.linalg.config import broadening
from ..ops.linalg.cholesky import cholesky_p
from ..ops.linalg.det import det_p, slogdet_p
from ..ops.linalg.eig import eig_p
from ..ops.linalg.eigh import eigh_p
from ..ops.linalg.expm import expm_p
from ..ops.linalg.inverse import inv_p
from ..ops.linalg.leading import default_tol
from ..ops.linalg.matrix import hermitian_from_triangle
from ..ops.linalg.partial_eigh import WHICH, eigsh as _eigsh_nodes
from ..ops.linalg.partial_svd import svds as _svds_nodes
from ..ops.linalg.pinv import pinv_p, rank_p
from ..ops.linalg.qr import qr_p
from ..ops.linalg.solve import solve_p
from ..ops.linalg.svd import svd_p
from ..primitive import bind, bind1, bind2, code_of_value, describe, is_complex_value, shape_of
from ._arrays import tensor_or_array
from ._dispatch import implements
from ._operands import broadcast_shapes, common, int_tuple, is_tensor, normalize_axes
from .arithmetic import absolute, power
from .diagonals import diagonal as _diagonal, trace as _trace
from .joining import asarray
from .linalg_results import EighResult, EigResult, QRResult, SlogdetResult, SVDResult
from .products import cross as _cross, matmul, multi_dot, outer as _outer, tensordot, vecdot
from .reductions import amax, any as _any, count_nonzero, sum as _sum
from .shaping import expand_dims, matrix_transpose, reshape, transpose

__all__ = ["svd", "svdvals", "qr", "eigh", "eigvalsh", "eig", "eigvals", "solve", "inv",
           "det", "slogdet", "cholesky", "pinv", "lstsq", "matrix_power", "multi_dot",
           "expm", "norm", "vector_norm", "matrix_norm", "cond", "matrix_rank", "matmul",
           "outer", "cross", "tensordot", "vecdot", "diagonal", "trace", "matrix_transpose",
           "svds", "eigsh", "config"]


def _matrix_operand(name: str, a, square: bool = False, stacked: bool = True):
    """``a`` as a floating-point operand holding a matrix (or, with ``stacked``, a stack of
    matrices ``(..., m, n)``); a ShapeError naming ``name`` otherwise."""
    a = tensor_or_array(a, name)
    shape = shape_of(a)
    if (len(shape) != 2 and not (stacked and len(shape) > 2)) or (
            square and shape[-1] != shape[-2]):
        kind = "a square matrix" if square else "a matrix (2-d)"
        if stacked:
            kind += " or a stack of them"
        raise ShapeError(f"{name}: expected {kind}, got shape {list(shape)}")
    if isinstance(a, np.ndarray):                # NumPy computes integers in float64
        return a.astype(dtypes.DTYPES[dtypes.inexact_code(a.dtype)], copy=False)
    return a


# ------------------------------------------------------------------ decompositions

def svd(a, full_matrices: bool = False, compute_uv: bool = True, *,
        eps: float | None = None):
    """``u, s, vh`` with ``a = u @ diag(s) @ vh``, ``s`` descending (NumPy's conventions;
    ``s`` alone with ``compute_uv=False``).

    ``eps``: Lorentzian broadening of the derivative (default ``config.broadening``).
    Differentiable in every output; truncating by slicing (``u[..., :k]``) gives the exact
    derivative of the truncated function.  With ``full_matrices=True`` (NumPy's default for
    ``np.linalg.svd``) a non-square matrix has extra singular vectors (u's columns or vh's
    rows past ``min(m, n)``) that are not unique: a loss that uses them raises
    ``ShapeError``, one that does not (``s``, ``u[..., :k]``) gets the reduced SVD's
    derivative.  Forward mode cannot see which are used, so it needs ``full_matrices=False``
    for non-square matrices.
    """
    eps = broadening(eps, "svd")
    # s alone does not depend on full_matrices; the reduced primitive keeps it differentiable
    full_matrices = bool(full_matrices) and bool(compute_uv)
    outputs = bind(svd_p, (full_matrices, eps), _matrix_operand("svd", a))
    return SVDResult(*outputs[:3]) if compute_uv else outputs[1]


def svdvals(x, *, eps: float | None = None):
    """The singular values, descending (``svd(x, compute_uv=False)``)."""
    return svd(_matrix_operand("svdvals", x), compute_uv=False, eps=eps)


def qr(a, mode: str = "reduced"):
    """QR, ``a = q @ r`` (NumPy's conventions; tall, square and wide): ``mode="reduced"``
    (``(q, r)``), ``"r"`` (``r`` alone) or ``"complete"`` (``q`` square).  The extra columns
    ``"complete"`` adds to ``q`` for a tall matrix are not unique, so that case has no
    derivative: it takes arrays only (a tensor raises ``ShapeError``)."""
    if mode not in ("reduced", "complete", "r"):
        raise ArgumentValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    a = _matrix_operand("qr", a)
    m, n = shape_of(a)[-2:]
    if mode == "complete" and m > n:
        if not is_tensor(a):
            return QRResult(*np.linalg.qr(a, mode="complete"))
        if _size(a) == 0:
            return _complete_qr_of_empty(a)
        raise ShapeError(f"qr: mode='complete' of a tall {m} x {n} matrix adds columns "
                         "to q that are not unique, so they have no derivative; use "
                         "mode='reduced'")
    q, r = bind(qr_p, None, a)
    return r if mode == "r" else QRResult(q, r)


def _size(a) -> int:
    return math.prod(shape_of(a))


def _empty_matrices(a) -> bool:
    """Whether ``a`` holds matrices without entries (``0 x n``, ``n x 0``; NumPy's test for
    the functions that treat them apart), not merely an empty stack."""
    shape = shape_of(a)
    return len(shape) >= 2 and math.prod(shape[-2:]) == 0


def _complete_qr_of_empty(a):
    """NumPy's complete QR of empty tall matrices (``q`` the identity of each, ``r`` empty)
    for a tensor: the input has no entries, so nothing is ambiguous and the derivative is
    the zero-size one; both results stay connected to ``a`` (sums over an empty axis are
    exact zeros) so that an eager ``backward()`` reaches it."""
    m = shape_of(a)[-2]
    eye = np.eye(m, dtype=dtypes.DTYPES[code_of_value(a)])
    q = _sum(a, axis=-1, keepdims=True) + eye
    return QRResult(q, a * 0)


def eigh(a, UPLO: str = "L", *, eps: float | None = None,  # noqa: N803 - NumPy's name
         symmetrize_input: bool = False):
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix (NumPy's order).

    As NumPy's, only the ``UPLO`` triangle of ``a`` (and the real part of its diagonal)
    is read, and the derivative is that of this function of ``a``.  With
    ``symmetrize_input`` the decomposition is of ``(a + a^H)/2`` instead, a function of
    the whole matrix.  ``eps`` as for :func:`svd`.
    """
    eps = broadening(eps, "eigh")
    a = _matrix_operand("eigh", a, square=True)
    if symmetrize_input:
        a = (a + ew.conj(_swap_last(a))) * 0.5
        return EighResult(*bind(eigh_p, (eps, None), a)[:2])
    return EighResult(*bind(eigh_p, (eps, _uplo("eigh", UPLO)), a)[:2])


def eigvalsh(a, UPLO: str = "L", *, eps: float | None = None):  # noqa: N803
    """The eigenvalues (ascending) of a Hermitian matrix, read as :func:`eigh` does."""
    return eigh(_matrix_operand("eigvalsh", a, square=True), UPLO, eps=eps)[0]


def eig(a, *, eps: float | None = None):
    """Eigenvalues and unit-norm eigenvectors (columns) of a general square matrix, in
    NumPy's (LAPACK's) order.  Always complex: a real matrix has complex eigenpairs in
    general and a tensor's dtype cannot depend on its values (NumPy returns real arrays
    when all eigenvalues of a real input are real, with the same values).

    Differentiable for losses that do not depend on the arbitrary phase of each
    eigenvector (else ``GaugeError``, see ``config.gauge_check``); near-degenerate
    eigenvalues use the Lorentzian broadening ``eps`` as :func:`svd` does.
    """
    eps = broadening(eps, "eig")
    return EigResult(*bind(eig_p, eps, _matrix_operand("eig", a, square=True))[:2])


def eigvals(a, *, eps: float | None = None):
    """The eigenvalues of a general square matrix (complex, as :func:`eig`)."""
    return eig(_matrix_operand("eigvals", a, square=True), eps=eps)[0]


def cholesky(a, /, *, upper: bool = False):
    """The Cholesky factor of a Hermitian positive-definite matrix: lower ``l`` with
    ``a = l @ l^H`` (NumPy's default), or with ``upper`` the upper ``u = l^H``.  Only that
    triangle of ``a`` is read, as NumPy does; the derivative is that of this function."""
    a = _matrix_operand("cholesky", a, square=True)
    if not upper:
        return bind1(cholesky_p, "L", a)
    return ew.conj(_swap_last(bind1(cholesky_p, "U", a)))


def _uplo(name: str, uplo) -> str:
    if uplo not in ("L", "U"):
        raise ArgumentValueError(f"{name}: UPLO must be 'L' or 'U', got {uplo!r}")
    return uplo


def _swap_last(x):
    ndim = len(shape_of(x))
    return transpose(x, tuple(range(ndim - 2)) + (ndim - 1, ndim - 2))


# ------------------------------------------------------------------ solves and inverses

def solve(a, b):
    """``x`` with ``a @ x = b``: ``b`` is a vector ``(m,)`` or a stack of right-hand-side
    matrices ``(..., m, k)`` whose batch axes broadcast against ``a``'s (NumPy 2's rule)."""
    a, b = common("solve", a, b)
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) < 2 or len(sb) == 0 or sa[-1] != sa[-2]:
        raise ShapeError(f"solve: expected a square matrix (or a stack) and a right-hand "
                         f"side, got shapes {list(sa)} and {list(sb)}")
    if len(sb) == 1:
        if len(sa) == 2:
            return bind2(solve_p, None, a, b)
        column = st.broadcast_to(reshape(b, (sb[0], 1)), sa[:-1] + (1,))
        return reshape(bind2(solve_p, None, a, column), sa[:-1])
    batch = broadcast_shapes("solve", sa[:-2], sb[:-2])
    return bind2(solve_p, None, st.broadcast_to(a, batch + sa[-2:]),
                 st.broadcast_to(b, batch + sb[-2:]))


def inv(a):
    """The inverse of a square matrix (or of each matrix of a stack)."""
    return bind1(inv_p, "inv", _matrix_operand("inv", a, square=True))


def det(a):
    """The determinant (one per matrix of a stack).  Its derivative ``det a^-T`` needs an
    invertible matrix (``LinAlgError`` naming det otherwise)."""
    return bind1(det_p, None, _matrix_operand("det", a, square=True))


def slogdet(a):
    """``(sign, logabsdet)`` with ``det = sign * exp(logabsdet)`` (NumPy's): ``sign`` has
    ``a``'s dtype (a unit complex number for complex ``a``), ``logabsdet`` is real."""
    return SlogdetResult(*bind(slogdet_p, None, _matrix_operand("slogdet", a, square=True)))


_UNSET = object()


def pinv(a, rcond=None, hermitian: bool = False, *, rtol=_UNSET):
    """The Moore-Penrose pseudo-inverse (NumPy's: singular values ``<= rcond * s_max`` are
    dropped; ``rcond`` defaults to 1e-15, or give the array API's ``rtol``, whose ``None``
    means ``max(m, n) * eps``).  With ``hermitian`` only the lower triangle of ``a`` is
    read, as NumPy's eigh-based path does.  The derivative is along rank-preserving
    perturbations."""
    a = _matrix_operand("pinv", a)
    if rcond is not None and rtol is not _UNSET:
        raise ArgumentValueError("pinv: `rtol` and `rcond` can't be both set.")
    if rcond is not None:
        cutoff = rcond
    elif rtol is _UNSET:
        cutoff = 1e-15
    elif rtol is None:
        cutoff = max(shape_of(a)[-2:]) * np.finfo(dtypes.DTYPES[code_of_value(a)]).eps
    else:
        cutoff = rtol
    if hermitian and not _empty_matrices(a):    # NumPy returns empty ones of any shape
        a = hermitian_from_triangle(_matrix_operand("pinv", a, square=True), lower=True)
    return bind1(pinv_p, _static_float("pinv", "rcond", cutoff), a)


@implements("numpy.linalg.lstsq")
def lstsq(a, b, rcond=None):
    """``(x, residuals, rank, s)``: the minimum-norm least-squares solution of ``a @ x = b``
    (``x = pinv(a) @ b`` with NumPy's cutoff ``rcond``, default ``eps * max(m, n)``),
    differentiable in ``a`` and ``b``.

    Plain arrays go to ``np.linalg.lstsq``.  For tensors ``rank`` is a 0-d float tensor
    and ``residuals`` (the squared residual norm of each column of ``b``) is returned
    whenever ``m > n``: NumPy gives an empty array when ``rank < n``, but the shape of a
    traced value cannot depend on the rank.
    """
    a, b = common("lstsq", a, b)
    _matrix_operand("lstsq", a, stacked=False)
    code = code_of_value(a)
    (m, n), sb = shape_of(a), shape_of(b)
    if len(sb) not in (1, 2) or sb[0] != m:
        raise ShapeError(f"lstsq: b must have {m} rows (a vector or a matrix), got shape "
                         f"{list(sb)}")
    if rcond is None:
        rcond = np.finfo(dtypes.DTYPES[code]).eps * max(m, n)
    rcond = _static_float("lstsq", "rcond", rcond)
    x = bind1(pinv_p, rcond, a) @ b
    s = svdvals(a)
    if m > n:
        residual = b - a @ x
        residuals = _sum(ew.real(residual * ew.conj(residual)), axis=0)
        if len(sb) == 1:
            residuals = reshape(residuals, (1,))
    else:
        residuals = s[:0]
    return x, residuals, bind1(rank_p, rcond, s), s


def _static_float(name: str, what: str, value) -> float:
    if is_tensor(value) or isinstance(value, (str, bytes)) or np.ndim(value) != 0:
        raise ArgumentError(f"{name}: {what} must be a scalar, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ArgumentError(f"{name}: {what} must be a real number, got {value!r}") from None


# ------------------------------------------------------------------ products and functions

def matrix_power(a, n: int):
    """``a`` raised to the integer power ``n`` (``n < 0`` inverts first; ``n = 0`` gives
    the identity), by repeated squaring."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise ArgumentError(f"matrix_power: exponent must be an integer, got {n!r}")
    a = _matrix_operand("matrix_power", a, square=True)
    if n == 0:
        size = shape_of(a)[-1]
        eye = np.eye(size, dtype=dtypes.DTYPES[code_of_value(a)])
        return st.full_like(a, 0) + eye
    if n < 0:
        a, n = inv(a), -n
    result, square = None, a
    while True:
        if n & 1:
            result = square if result is None else result @ square
        n >>= 1
        if not n:
            return result
        square = square @ square


def expm(a):
    """The matrix exponential (SciPy's ``expm``); its derivative is the exact Frechet
    derivative (``tp.scipy.linalg.expm`` is the same function)."""
    return bind1(expm_p, None, _matrix_operand("expm", a, square=True))


# ------------------------------------------------------------------ norms

def norm(x, ord=None, axis=None, keepdims: bool = False):  # noqa: A002 - NumPy's name
    """Vector and matrix norms, NumPy's ``linalg.norm``: every ``ord`` it accepts (vector
    p-norms for any p, inf, -inf, 0; matrix 'fro', 'nuc', 1, -1, 2, -2, inf, -inf), along
    ``axis`` (one axis: vectors, two: matrices, also of stacks).  The 2-norm has derivative
    ``x/|x|`` and, as every vector p-norm, the subgradient 0 at ``x = 0`` (with second
    derivatives 0 there too); norms built on max/min split their derivative evenly among
    ties."""
    x = tensor_or_array(x, "norm")
    if isinstance(x, np.ndarray):                # narrow integers would overflow
        x = x.astype(dtypes.DTYPES[dtypes.value_code(x.dtype)], copy=False)
    ndim = len(shape_of(x))
    if axis is None:
        if ord is None or ndim > 2:
            if ord is not None:
                raise ShapeError("norm: improper number of dimensions to norm")
            return _keep(_two_norm(x, tuple(range(ndim))), x, tuple(range(ndim)), keepdims)
        axis = tuple(range(ndim))
    axes = int_tuple("norm", "axis", axis)
    if len(axes) not in (1, 2):
        raise ShapeError("norm: improper number of dimensions to norm")
    axes = tuple(normalize_axes("norm", a, ndim)[0] for a in axes)
    if len(axes) == 2 and axes[0] == axes[1]:
        raise ShapeError("norm: duplicate axes given")
    if len(axes) == 1:
        result = _vector_norm(x, ord, axes[0])
    else:
        result = _matrix_norm(x, ord, axes)
    return _keep(result, x, axes, keepdims)


def _keep(result, x, axes, keepdims):
    if not keepdims:
        return result
    return reshape(result, tuple(1 if i in axes else d
                                     for i, d in enumerate(shape_of(x))))


def _two_norm(x, axes):
    squares = ew.real(x * ew.conj(x)) if is_complex_value(x) else x * x
    return ew.safe_sqrt(_sum(squares, axis=axes))


def _vector_norm(x, ord, axis):  # noqa: A002
    if isinstance(ord, str):
        raise ArgumentValueError(f"norm: invalid norm order {ord!r} for vectors")
    if shape_of(x)[axis] == 0:
        return _empty_vector_norm(x, ord, axis)
    if ord is None or ord == 2:
        return _two_norm(x, (axis,))
    if ord in (np.inf, -np.inf):
        return _extreme(absolute(x), axis, ord > 0, ord)
    if ord == 0:      # the count of non-zero entries: piecewise constant
        zero = ew.real(ew.eq_mask(x, st.full_like(x, 0)))
        return _sum(1.0 - zero, axis=axis)
    if ord == 1:
        return _sum(absolute(x), axis=axis)
    if isinstance(ord, bool) or not isinstance(ord, numbers.Real):
        raise ArgumentValueError(f"norm: invalid norm order {ord!r} for vectors")
    p = float(ord)
    return _root(_sum(power(absolute(x), p), axis=axis), p)


def _root(total, p: float):
    """``total ** (1/p)``; for ``p > 0`` its derivatives (of every order) are taken as 0
    where ``total == 0`` (``x = 0``), the choice the 2-norm makes, instead of ``inf * 0``."""
    if p <= 0:
        return power(total, 1.0 / p)
    zero = ew.is_zero(total)
    root = ew.power(ew.select(zero, st.full_like(total, 1), total), 1.0 / p)
    return ew.select(zero, st.full_like(root, 0), root)


def _empty_vector_norm(x, ord, axis):  # noqa: A002
    """NumPy's norms of empty vectors: 0 (``sum(|x|^p)^(1/p)`` of no entries), ``inf`` for
    a negative ``p`` (``0^(1/p)``), none for ``-inf`` (a minimum).  Written as sums over
    the empty axis, constants connected to ``x``: the chain rule through ``t^(1/p)`` at 0
    would multiply an infinite slope by the zero tangent of the sum."""
    _check_has_values(x, axis, ord == -np.inf, ord)
    total = _sum(absolute(x), axis=axis)
    negative = ord is not None and ord < 0
    return total + np.inf if negative else total


def _matrix_norm(x, ord, axes):  # noqa: A002
    rows, cols = axes
    if ord in (None, "fro", "f"):
        return _two_norm(x, axes)
    if ord in (2, -2, "nuc"):
        ndim = len(shape_of(x))
        rest = tuple(i for i in range(ndim) if i not in axes)
        s = svdvals(transpose(x, rest + (rows, cols)))
        if ord == "nuc" or shape_of(s)[-1] == 0:
            _check_has_values(s, -1, ord == -2, ord)
            return _sum(s, axis=-1)          # of empty matrices: 0, as NumPy's
        return s[..., 0] if ord == 2 else s[..., -1]
    if ord in (1, -1, np.inf, -np.inf):
        summed, kept = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = _sum(absolute(x), axis=summed)
        kept -= kept > summed
        return _extreme(sums, kept, ord > 0, ord)
    raise ArgumentValueError(f"norm: invalid norm order {ord!r} for matrices")


def _extreme(x, axis: int, largest: bool, ord):  # noqa: A002
    """The largest (``largest``) or smallest entry of the non-negative ``x`` along
    ``axis``; an empty axis gives NumPy's ``max(..., initial=0)``, 0, as a sum (so that it
    stays connected to ``x``), and has no minimum."""
    if shape_of(x)[axis] == 0:
        _check_has_values(x, axis, not largest, ord)
        return _sum(x, axis=axis)
    return amax(x, axis=axis) if largest else -amax(-x, axis=axis)


def _check_has_values(x, axis: int, smallest: bool, ord) -> None:  # noqa: A002
    if smallest and shape_of(x)[axis] == 0:
        raise ShapeError(f"norm: ord={ord!r} takes a minimum, and the vectors or matrices of "
                         f"shape {list(shape_of(x))} along axis {axis} are empty (a "
                         "zero-size reduction has no identity)")


def cond(x, p=None):
    """The condition number of (each) matrix, NumPy's ``linalg.cond``: ``s_max / s_min``
    for ``p`` None or 2 (``s_min / s_max`` for -2), else ``norm(x, p) * norm(inv(x), p)``
    (square matrices; ``p`` as in :func:`norm`).  Differentiable where it is finite.
    Empty matrices (``0 x n``, ``n x 0``) raise ``LinAlgError``, as in NumPy; an empty
    stack of non-empty matrices gives an empty result."""
    shape = shape_of(x)
    if _empty_matrices(x):
        raise np.linalg.LinAlgError(f"cond: not defined on empty matrices (shape "
                                    f"{list(shape)})")
    x = _matrix_operand("cond", x, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = svdvals(x)
        largest, smallest = s[..., 0], s[..., -1]
        return largest / smallest if p != -2 else smallest / largest
    return norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))


def matrix_rank(A, tol=None, hermitian: bool = False, *, rtol=None):  # noqa: N803 - NumPy
    """The number of singular values above the tolerance, NumPy's ``linalg.matrix_rank``
    (int64): ``tol`` absolute, or ``rtol`` times the largest singular value (default
    ``max(m, n) * eps`` of the dtype); 0-d and 1-d input: 1 unless every entry is 0.
    ``hermitian`` is NumPy's hint for a faster method (the values are the same).  An
    integer: nothing flows back through it."""
    if tol is not None and rtol is not None:
        raise ArgumentValueError("matrix_rank: give tol or rtol, not both")
    A = tensor_or_array(A, "matrix_rank")  # noqa: N806
    shape = shape_of(A)
    if len(shape) < 2:
        return asarray(_any(A != 0), dtype=np.int64)
    if hermitian:                      # NumPy's eigenvalue method needs square matrices
        _matrix_operand("matrix_rank", A, square=True)
    s = svdvals(A)
    if tol is None:
        if rtol is None:
            rtol = max(shape[-2:]) * np.finfo(dtypes.DTYPES[code_of_value(s)]).eps
        tol = amax(s, axis=-1, keepdims=True, initial=0.0) * rtol   # 0 values: rank 0
    else:
        tol = expand_dims(tensor_or_array(tol, "matrix_rank"), -1)
    return count_nonzero(s > tol, axis=-1)


# ------------------------------------------------------------------ partial decompositions

#: ``method="auto"`` computes the full decomposition and slices it up to this size
#: (min(m, n)); above it, the k leading triplets by ARPACK.  Measured for value + gradient
#: with k = sqrt(n): the two cost the same near n = 196 (bench/README.md)
PARTIAL_MIN_SIZE = 200
_METHODS = ("auto", "krylov", "full")


def _check_k(name: str, k, limit: int, shape) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ArgumentError(f"{name}: k must be an integer, got {k!r}")
    if not 1 <= k <= limit:
        raise ShapeError(f"{name}: k must be in [1, {limit}] for shape {list(shape)}, "
                         f"got k={k}")
    return int(k)


def _partial_options(name: str, a, method: str, tol, hint, maxiter):
    if method not in _METHODS:
        raise ArgumentValueError(f"{name}: method must be one of {_METHODS}, got {method!r}")
    tol = default_tol(dtypes.DTYPES[code_of_value(a)]) if tol is None else \
        _static_float(name, "tol", tol)
    if not tol > 0:
        raise ArgumentValueError(f"{name}: tol must be > 0, got {tol}")
    if maxiter is not None and (isinstance(maxiter, bool)
                                or not isinstance(maxiter, numbers.Integral) or maxiter < 1):
        raise ArgumentError(f"{name}: maxiter must be a positive integer or None, got "
                            f"{maxiter!r}")
    if hint is not None and (isinstance(hint, bool) or not isinstance(hint, numbers.Integral)
                             or hint < 0):
        raise ArgumentError(f"{name}: hint must be an integer >= 0 or None, got {hint!r}")
    return tol


def _hint_size(hint, k: int, size: int) -> int:
    """Extra vectors that deflate the derivative's solves (default ``max(4, k/4)``)."""
    wanted = max(4, k // 4) if hint is None else int(hint)
    return min(wanted, size - k)


def svds(a, k: int, *, tol: float | None = None, method: str = "auto",
         eps: float | None = None, hint: int | None = None, maxiter: int | None = None):
    """``u, s, vh``: the ``k`` largest singular triplets of ``a`` (``s`` descending, ``u``
    m x k, ``vh`` k x n: NumPy's layout, unlike SciPy's ascending ``svds``).

    The derivatives are those of ``svd(a)`` sliced to ``[:k]``: exact for the truncated
    function, including the coupling to the discarded subspace, computed with products of
    ``a`` by conjugate gradients (never the full spectrum); ``eps`` broadens degenerate
    kept values as for :func:`svd`, complex losses that depend on the vectors' phases raise
    :class:`~tenpy_ad.errors.GaugeError`.  Derivatives of any order.

    ``method``: ``"krylov"`` (ARPACK, then a Rayleigh-Ritz step), ``"full"`` (``svd`` and
    slicing), ``"auto"`` (full up to ``min(m, n) = PARTIAL_MIN_SIZE``, else krylov).
    ``tol``: the relative residual every kept triplet must reach (default 1000 roundoffs
    of the dtype; the derivative's solves reach ``tol/100``), else
    :class:`~tenpy_ad.errors.ConvergenceError`.  ``hint``: extra triplets computed to
    deflate the derivative's solves (default ``max(4, k/4)``).  ``maxiter``: iteration
    limit of ARPACK (restarts) and of the solves (default 1000).
    """
    a = _matrix_operand("svds", a, stacked=False)
    m, n = shape_of(a)
    k = _check_k("svds", k, min(m, n), (m, n))
    tol = _partial_options("svds", a, method, tol, hint, maxiter)
    if method == "full" or (method == "auto" and min(m, n) <= PARTIAL_MIN_SIZE):
        u, s, vh = svd(a, eps=eps)
        return (u, s, vh) if k == min(m, n) else (u[:, :k], s[:k], vh[:k])
    eps = broadening(eps, "svds")
    u, s, vh, _ = _svds_nodes(a, k, _hint_size(hint, k, min(m, n)), eps, tol, maxiter)
    return u, s, vh


def eigsh(a, k: int, which: str = "LA", UPLO: str = "L", *,  # noqa: N803 - NumPy's name
          tol: float | None = None, method: str = "auto", eps: float | None = None,
          hint: int | None = None, maxiter: int | None = None, symmetrize_input: bool = False):
    """``w, v``: the ``k`` leading eigenpairs of a Hermitian matrix by ``which`` (``"LA"``
    largest algebraic, ``"LM"`` largest magnitude), ``w`` ascending (NumPy's ``eigh``
    order: ``eigsh(a, k)`` is ``eigh(a)`` sliced to ``[-k:]``).

    Derivatives as for :func:`svds` (exact for the truncated function, products of ``a``
    only, any order; ``eps`` and the gauge check as :func:`eigh`).  ``a`` is read as
    :func:`eigh` reads it: the ``UPLO`` triangle, or ``(a + a^H)/2`` with
    ``symmetrize_input``.  ``method``, ``tol``, ``hint``, ``maxiter`` as for :func:`svds`;
    ``"full"`` computes the dense decomposition, and its derivatives then couple the kept
    pairs to every discarded one directly (products with them, no iteration: ``O(n^2 k)``
    where differentiating all of ``eigh`` costs ``O(n^3)``) and, as ``eigh`` sliced, raise
    GaugeError where the loss uses a kept vector whose value the cut shares with a
    discarded one.
    """
    if which not in WHICH:
        raise ArgumentValueError(f"eigsh: which must be one of {WHICH}, got {which!r}")
    a = _matrix_operand("eigsh", a, square=True, stacked=False)
    n = shape_of(a)[0]
    k = _check_k("eigsh", k, n, (n, n))
    tol = _partial_options("eigsh", a, method, tol, hint, maxiter)
    dense = method == "full" or (method == "auto" and n <= PARTIAL_MIN_SIZE)
    if dense and which == "LA":
        w, v = eigh(a, UPLO, eps=eps, symmetrize_input=symmetrize_input)
        return (w, v) if k == n else (w[n - k:], v[:, n - k:])
    eps = broadening(eps, "eigsh")
    if symmetrize_input:
        a = (a + ew.conj(transpose(a))) * 0.5
    else:
        a = hermitian_from_triangle(a, lower=_uplo("eigsh", UPLO) == "L")
    extra = n - k if dense else _hint_size(hint, k, n)    # dense: the whole complement
    w, v, _ = _eigsh_nodes(a, k, extra, which, eps, tol, maxiter, dense)
    return w, v


# ------------------------------------------------------------------ NumPy 2's names
# (``matmul``, ``tensordot``, ``vecdot``, ``matrix_transpose`` are those of tenpy_ad.numpy)

@implements("numpy.linalg.vector_norm")
def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):  # noqa: A002
    """The vector norm over ``axis`` (all axes by default; several axes are flattened into
    one vector, as NumPy does)."""
    x = tensor_or_array(x, "vector_norm")
    shape = shape_of(x)
    axes = normalize_axes("vector_norm", axis, len(shape))
    if len(axes) == 1:
        return norm(x, ord, axis=axes[0], keepdims=keepdims)
    rest = tuple(i for i in range(len(shape)) if i not in axes)
    vectors = reshape(transpose(x, rest + axes), tuple(shape[i] for i in rest) + (-1,))
    result = norm(vectors, ord, axis=-1)
    if keepdims:
        result = reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape)))
    return result


@implements("numpy.linalg.matrix_norm")
def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):  # noqa: A002 - NumPy's name
    """The norm of each matrix over the last two axes (``ord`` as in :func:`norm`)."""
    return norm(x, ord, axis=(-2, -1), keepdims=keepdims)


@implements("numpy.linalg.outer")
def outer(x1, x2, /):
    """The outer product of two vectors (1-d only, as ``np.linalg.outer``)."""
    for x in (x1, x2):
        if len(shape_of(tensor_or_array(x, "outer"))) != 1:
            raise ShapeError(f"outer: operands must be 1-d, got {describe(x)}")
    return _outer(x1, x2)


@implements("numpy.linalg.cross")
def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along ``axis`` (as ``np.linalg.cross``)."""
    for x in (x1, x2):
        shape = shape_of(tensor_or_array(x, "cross"))
        if not shape or shape[normalize_axes("cross", axis, len(shape))[0]] != 3:
            raise ShapeError(f"cross: vectors must have 3 components along axis {axis}, "
                             f"got {describe(x)}")
    return _cross(x1, x2, axis=axis)


@implements("numpy.linalg.diagonal")
def diagonal(x, /, *, offset: int = 0):
    """The diagonals of the matrices over the last two axes."""
    return _diagonal(x, offset, axis1=-2, axis2=-1)


@implements("numpy.linalg.trace")
def trace(x, /, *, offset: int = 0, dtype=None):
    """The traces of the matrices over the last two axes."""
    return _trace(x, offset, axis1=-2, axis2=-1, dtype=dtype)


# ------------------------------------------------------------------ np.linalg.<name>(tensor)
# NumPy's functions of the same signature run the functions above (which compute plain
# arrays themselves, with tp.linalg's conventions); ``svd`` takes NumPy's defaults.
# ``tensorinv`` and ``tensorsolve`` have no tenpy_ad version: they are refused by name.

for _name in ("cholesky", "cond", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv",
              "matrix_power", "matrix_rank", "norm", "pinv", "qr", "slogdet", "solve",
              "svdvals"):
    implements(f"numpy.linalg.{_name}", fallback=False)(globals()[_name])


@implements("numpy.linalg.svd")
def _numpy_svd(a, full_matrices: bool = True, compute_uv: bool = True,
               hermitian: bool = False):
    """``np.linalg.svd`` with NumPy's defaults (``full_matrices=True``: a non-square matrix
    then has extra singular vectors without a derivative, and a loss that uses them raises
    and says to pass ``full_matrices=False``).  ``hermitian`` is NumPy's hint for a faster
    method: the general SVD is computed (a valid SVD of ``a`` either way)."""
    return svd(a, full_matrices=full_matrices, compute_uv=compute_uv)

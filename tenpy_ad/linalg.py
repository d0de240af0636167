"""``tp.linalg``: decompositions and solves with exact, stable derivatives (NumPy's names,
argument orders and return layouts).

Derivative conventions (Lorentzian broadening at degenerate spectra, complex gauge checks)
are described in :mod:`tenpy_ad.ops.linalg`; :data:`config` holds the defaults.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import dtypes
from . import numpy_api as tnp
from .errors import ArgumentError, ShapeError
from .ops import elementwise as ew
from .ops.linalg import config
from .ops.linalg.config import broadening
from .ops.linalg.eigh import eigh_p
from .ops.linalg.leading import default_tol
from .ops.linalg.partial_eigh import WHICH, eigsh as _eigsh_nodes
from .ops.linalg.partial_svd import svds as _svds_nodes
from .ops.linalg.qr import qr_p
from .ops.linalg.solve import solve_p
from .ops.linalg.svd import svd_p
from .primitive import bind, bind2, code_of_value, is_complex_value, shape_of

__all__ = ["svd", "qr", "eigh", "solve", "norm", "config", "svds", "eigsh"]


def _matrix_operand(name: str, a, square: bool = False):
    """``a`` as a floating-point matrix operand; a ShapeError naming ``name`` otherwise."""
    shape = shape_of(a)
    if len(shape) != 2 or (square and shape[0] != shape[1]):
        kind = "a square matrix" if square else "a matrix (2-d)"
        raise ShapeError(f"{name}: expected {kind}, got shape {list(shape)}")
    if tnp._is_tensor(a):
        return a
    array = np.asarray(a)
    return array.astype(dtypes.DTYPES[dtypes.value_code(array.dtype)], copy=False)


def svd(a, full_matrices: bool = False, *, eps: float | None = None):
    """``u, s, vh`` with ``a = u @ diag(s) @ vh``, ``s`` descending (NumPy's conventions).

    ``eps``: Lorentzian broadening of the derivative (default ``config.broadening``).
    Differentiable in every output; truncating by slicing (``u[:, :k]``) gives the exact
    derivative of the truncated function.  ``full_matrices=True`` is differentiable only
    for square matrices.
    """
    eps = broadening(eps, "svd")
    return bind(svd_p, (bool(full_matrices), eps), _matrix_operand("svd", a))


def qr(a, mode: str = "reduced"):
    """Reduced QR, ``a = q @ r`` (NumPy's conventions; tall, square and wide)."""
    if mode != "reduced":
        raise ValueError(f"qr: only mode='reduced' is supported, got {mode!r}")
    return bind(qr_p, None, _matrix_operand("qr", a))


def eigh(a, *, eps: float | None = None, symmetrize_input: bool = True):
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix (NumPy's order).

    With ``symmetrize_input`` (default) the decomposition is of ``(a + a^H)/2``, so the
    derivative is that of a function of the whole matrix; without it LAPACK reads only the
    lower triangle and perturbations must be Hermitian.  ``eps`` as for :func:`svd`.
    """
    eps = broadening(eps, "eigh")
    a = _matrix_operand("eigh", a, square=True)
    if symmetrize_input:
        a = (a + ew.conj(tnp.transpose(a))) * 0.5
    return bind(eigh_p, eps, a)


def solve(a, b):
    """``x`` with ``a @ x = b`` (``b`` a vector or a matrix of right-hand sides)."""
    code = tnp.result_code("solve", a, b)
    traced = tnp.is_traced(a) or tnp.is_traced(b)
    return bind2(solve_p, None, tnp._operand(a, code, traced), tnp._operand(b, code, traced))


def norm(x, ord=None, axis=None, keepdims: bool = False):  # noqa: A002 - NumPy's name
    """Vector and matrix norms (NumPy's ``linalg.norm``) for ``ord`` in None/'fro' (2-norm
    of all entries), 1, 2, inf for vectors and 'nuc', 2 for matrices (via the SVD).  The
    2-norm has derivative ``x/|x|`` and the subgradient 0 at ``x = 0``."""
    if not tnp._is_tensor(x):
        return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    ndim = len(shape_of(x))
    axes = tuple(range(ndim)) if axis is None else (
        (axis,) if isinstance(axis, numbers.Integral) else tuple(axis))
    matrix = len(axes) == 2 or (axis is None and ndim == 2)
    if ord in (None, "fro") or (ord == 2 and not matrix):
        if ord == "fro" and not matrix:
            raise ValueError("norm: ord='fro' needs a matrix")
        squares = ew.real(x * ew.conj(x)) if is_complex_value(x) else x * x
        result = ew.safe_sqrt(tnp.sum(squares, axis=axes))
    elif ord == 1 and not matrix:
        result = tnp.sum(tnp.abs(x), axis=axes)
    elif ord in (np.inf, float("inf")) and not matrix:
        result = tnp.amax(tnp.abs(x), axis=axes)
    elif matrix and ord in ("nuc", 2) and ndim == 2:
        s = svd(x)[1]
        result = s.sum() if ord == "nuc" else s[0]
    else:
        raise ValueError(f"norm: ord={ord!r} is not supported for "
                         f"{'matrices' if matrix else 'vectors'}")
    if keepdims:
        kept = [a % ndim for a in axes]
        result = tnp.reshape(result, tuple(1 if i in kept else d
                                           for i, d in enumerate(shape_of(x))))
    return result


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
        raise ValueError(f"{name}: method must be one of {_METHODS}, got {method!r}")
    tol = default_tol(dtypes.DTYPES[code_of_value(a)]) if tol is None else float(tol)
    if not tol > 0:
        raise ValueError(f"{name}: tol must be > 0, got {tol}")
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
    a = _matrix_operand("svds", a)
    m, n = shape_of(a)
    k = _check_k("svds", k, min(m, n), (m, n))
    tol = _partial_options("svds", a, method, tol, hint, maxiter)
    if method == "full" or (method == "auto" and min(m, n) <= PARTIAL_MIN_SIZE):
        u, s, vh = svd(a, eps=eps)
        return (u, s, vh) if k == min(m, n) else (u[:, :k], s[:k], vh[:k])
    eps = broadening(eps, "svds")
    u, s, vh, _ = _svds_nodes(a, k, _hint_size(hint, k, min(m, n)), eps, tol, maxiter)
    return u, s, vh


def eigsh(a, k: int, which: str = "LA", *, tol: float | None = None, method: str = "auto",
          eps: float | None = None, hint: int | None = None, maxiter: int | None = None,
          symmetrize_input: bool = True):
    """``w, v``: the ``k`` leading eigenpairs of a Hermitian matrix by ``which`` (``"LA"``
    largest algebraic, ``"LM"`` largest magnitude), ``w`` ascending (NumPy's ``eigh``
    order: ``eigsh(a, k)`` is ``eigh(a)`` sliced to ``[-k:]``).

    Derivatives as for :func:`svds` (exact for the truncated function, products of ``a``
    only, any order; ``eps`` and the gauge check as :func:`eigh`).  ``symmetrize_input``
    as for :func:`eigh`.  ``method``, ``tol``, ``hint``, ``maxiter`` as for :func:`svds`;
    ``"full"`` computes the dense decomposition.
    """
    if which not in WHICH:
        raise ValueError(f"eigsh: which must be one of {WHICH}, got {which!r}")
    a = _matrix_operand("eigsh", a, square=True)
    n = shape_of(a)[0]
    k = _check_k("eigsh", k, n, (n, n))
    tol = _partial_options("eigsh", a, method, tol, hint, maxiter)
    dense = method == "full" or (method == "auto" and n <= PARTIAL_MIN_SIZE)
    if dense and which == "LA":
        w, v = eigh(a, eps=eps, symmetrize_input=symmetrize_input)
        return (w, v) if k == n else (w[n - k:], v[:, n - k:])
    eps = broadening(eps, "eigsh")
    if symmetrize_input:
        a = (a + ew.conj(tnp.transpose(a))) * 0.5
    w, v, _ = _eigsh_nodes(a, k, _hint_size(hint, k, n), which, eps, tol, maxiter, dense)
    return w, v

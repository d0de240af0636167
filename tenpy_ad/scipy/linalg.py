"""``tp.scipy.linalg``: SciPy's ``scipy.linalg`` names, signatures and conventions, on
tensors differentiable to any order in every mode (traced, eager, function transforms).

On plain arrays every function is SciPy's own (the same results and errors).  On tensors
the results are SciPy's to rounding, with SciPy's defaults and return layouts (``svd``'s
``full_matrices=True``, ``cholesky``'s upper factor, ``qr``'s ``mode="full"``, ``eig``'s
complex eigenvalues, tuples rather than NumPy's named results), and these differences:

* ``overwrite_*`` and ``check_finite`` are accepted and ignored: a tensor is never
  overwritten, and a matrix holding NaN or Inf gives NaN results (a traced value has no
  value to check before the program runs).
* Eigenvectors and singular vectors are LAPACK's up to the sign (phase) of each, which
  the derivatives do not depend on (losses that do raise ``GaugeError``); ``eig`` returns
  complex eigenvectors, ``lu_factor`` int64 pivots.
* Options without a derivative raise :class:`~tenpy_ad.errors.UnsupportedError` naming
  the function: ``qr(pivoting=True)``, ``eigh(subset_by_value=...)``, ``eig(b=...)``.
* ``qr(mode="full")`` of a tall tensor and the rows ``svd(full_matrices=True)`` adds for
  a non-square one are not unique, so they have no derivative (``ShapeError``, as in
  :mod:`tp.linalg <tenpy_ad.numpy.linalg>`); ``null_space`` and ``orth`` need values
  (eager tensors): their number of columns depends on them.

The derivatives are those of :mod:`tp.linalg <tenpy_ad.numpy.linalg>` (broadened
degenerate spectra, gauge checks) and of the primitives :mod:`~tenpy_ad.ops.linalg.lu`
(``lu``, ``lu_factor``) and :mod:`~tenpy_ad.ops.linalg.matrix_functions` (``sqrtm``,
``logm``, ``fractional_matrix_power``: exact Frechet derivatives by the block identity).

SciPy's functions do not dispatch on tensors (they call ``np.asarray``): call these.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes
from .. import numpy as tnp
from ..errors import ArgumentValueError, ConcretizationError, ShapeError, UnsupportedError
from ..numpy import linalg as _linalg
from ..numpy._arrays import tensor_or_array
from ..numpy._dispatch import implements
from ..numpy._operands import common
from ..ops.linalg import lu as _lu
from ..ops.linalg import matrix_functions as _functions
from ..ops.linalg.matrix import hermitian_from_triangle
from ..primitive import code_of_value, concrete_value, is_complex_value, shape_of

__all__ = ["svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "qr", "expm", "solve",
           "solve_triangular", "inv", "det", "cholesky", "cho_factor", "cho_solve",
           "lu_factor", "lu_solve", "lu", "null_space", "orth", "block_diag", "polar",
           "sqrtm", "logm", "fractional_matrix_power"]


# ------------------------------------------------------------------ helpers

def _matrix(name: str, a, square: bool = False):
    """``a`` as a floating-point matrix operand (or a stack), else ShapeError."""
    return _linalg._matrix_operand(name, a, square=square)


def _adjoint(x):
    return tnp.conj(tnp.matrix_transpose(x))


def _choice(name: str, what: str, value, allowed):
    if value not in allowed:
        raise ArgumentValueError(f"{name}: {what} must be one of {list(allowed)}, got "
                                 f"{value!r}")
    return value


def _eye_like(x, n: int):
    return np.eye(n, dtype=dtypes.DTYPES[code_of_value(x)])


def _symmetric_from_triangle(a, lower: bool):
    """The complex-symmetric matrix of one triangle of ``a`` (``a.T == a``, no conjugate)."""
    triangle = tnp.tril(a) if lower else tnp.triu(a)
    strict = tnp.tril(a, -1) if lower else tnp.triu(a, 1)
    return triangle + tnp.matrix_transpose(strict)


def _structured(a, assume_a, lower: bool):
    """The matrix SciPy's solver for ``assume_a`` reads from ``a``: one triangle, the
    diagonal, the three diagonals, or all of it."""
    if assume_a in ("sym", "symmetric"):
        return _symmetric_from_triangle(a, lower)
    if assume_a in ("her", "hermitian", "pos", "positive definite"):
        return hermitian_from_triangle(a, lower)
    n = shape_of(a)[-1]
    if assume_a == "diagonal":
        return a * _eye_like(a, n)
    if assume_a == "tridiagonal":
        band = np.tri(n, n, 1) * np.tri(n, n, 1).T
        return a * band.astype(dtypes.DTYPES[code_of_value(a)])
    if assume_a == "upper triangular":
        return tnp.triu(a)
    if assume_a == "lower triangular":
        return tnp.tril(a)
    return a                                   # general, banded, None: all of a


_SOLVE_KINDS = (None, "gen", "general", "sym", "symmetric", "her", "hermitian", "pos",
                "positive definite", "diagonal", "tridiagonal", "banded",
                "upper triangular", "lower triangular")
_INV_KINDS = (None, "gen", "general", "sym", "her", "pos", "diagonal", "upper triangular",
              "lower triangular")


def _check_kind(name: str, assume_a, kinds):
    if assume_a not in kinds:
        raise ArgumentValueError(f"{name}: {assume_a!r} is not a recognized matrix "
                                 f"structure; one of {list(kinds[1:])}")


def _lapack_driver(name: str, driver):
    return _choice(name, "lapack_driver", driver, ("gesdd", "gesvd"))


# ------------------------------------------------------------------ decompositions

@implements("scipy.linalg.svd")
def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    """``U, s, Vh`` with ``a = U @ diag(s) @ Vh``, ``s`` descending (SciPy's: a tuple, and
    ``full_matrices=True`` by default); ``s`` alone with ``compute_uv=False``.

    With ``full_matrices=True`` a non-square matrix has extra singular vectors (``U``'s
    columns or ``Vh``'s rows past ``min(m, n)``) that are not unique: a loss that uses
    them raises ``ShapeError``, one that does not gets the reduced SVD's derivative
    (forward mode needs ``full_matrices=False`` for non-square matrices).  Both
    ``lapack_driver`` values give the same decomposition to rounding."""
    _lapack_driver("svd", lapack_driver)
    result = _linalg.svd(_matrix("svd", a), full_matrices=full_matrices,
                         compute_uv=compute_uv)
    return tuple(result) if compute_uv else result


@implements("scipy.linalg.svdvals")
def svdvals(a, overwrite_a: bool = False, check_finite: bool = True):
    """The singular values, descending."""
    return _linalg.svdvals(_matrix("svdvals", a))


def _index_range(name: str, subset, n: int) -> tuple:
    try:
        lo, hi = (int(i) for i in subset)
    except (TypeError, ValueError):
        raise ArgumentValueError(f"{name}: subset_by_index must be two integers [lo, hi], "
                                 f"got {subset!r}") from None
    if not 0 <= lo <= hi < n:
        raise ArgumentValueError(f"{name}: requested eigenvalue indices are not valid; the "
                                 f"valid range is [0, {n - 1}] with lo <= hi, got "
                                 f"[{lo}, {hi}]")
    return lo, hi


def _cholesky_lower(b, lower: bool):
    """``l`` with ``b = l l^H``, read from the ``lower`` (else upper) triangle of ``b``."""
    if lower:
        return _linalg.cholesky(b)
    return _adjoint(_linalg.cholesky(b, upper=True))


def _generalized_eigh(a, b, lower: bool, kind: int):
    """``a v = w b v`` (type 1), ``a b v = w v`` (2), ``b a v = w v`` (3) through
    ``b = l l^H``: the Hermitian problem of ``l^-1 a l^-H`` (type 1) or ``l^H a l``, with
    LAPACK's normalisation (``v^H b v = 1``; type 3: ``v^H b^-1 v = 1``)."""
    if shape_of(b) != shape_of(a):
        raise ShapeError(f"eigh: a and b must have the same shape, got {list(shape_of(a))} "
                         f"and {list(shape_of(b))}")
    a, b = common("eigh", a, b)
    l = _cholesky_lower(_matrix("eigh", b, square=True), lower)
    h = hermitian_from_triangle(a, lower)
    if kind == 1:
        x = _linalg.solve(l, h)                              # l^-1 h
        c = _adjoint(_linalg.solve(l, _adjoint(x)))          # l^-1 h l^-H
    else:
        c = tnp.matmul(_adjoint(l), tnp.matmul(h, l))        # l^H h l
    w, y = _linalg.eigh(c, symmetrize_input=True)
    v = tnp.matmul(l, y) if kind == 3 else _linalg.solve(_adjoint(l), y)
    return w, v


@implements("scipy.linalg.eigh")
def eigh(a, b=None, *, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, type: int = 1,  # noqa: A002
         check_finite: bool = True, subset_by_index=None, subset_by_value=None,
         driver=None):
    """Eigenvalues ``w`` (ascending) and eigenvectors ``v`` (columns) of a Hermitian
    matrix, SciPy's ``eigh``: ``w`` alone with ``eigvals_only``; only the ``lower`` (else
    upper) triangle of ``a`` (and of ``b``) is read, and the derivative is that of this
    function of ``a``.

    ``b`` (Hermitian positive definite): the generalized problem of ``type`` 1, 2 or 3,
    solved through the Cholesky factor of ``b`` (differentiable in ``a`` and ``b``).
    ``subset_by_index=[lo, hi]``: the eigenpairs ``lo..hi`` (inclusive), with the exact
    derivative of the truncated function (the largest ones of a large matrix by
    :func:`tp.linalg.eigsh <tenpy_ad.numpy.linalg.eigsh>`).  ``subset_by_value`` raises
    ``UnsupportedError``: the number of eigenvalues would depend on the values.
    ``driver``: any of SciPy's (the results are the same to rounding)."""
    if subset_by_value is not None:
        raise UnsupportedError("eigh: subset_by_value is not supported for tensors (the "
                               "number of eigenvalues would depend on their values); "
                               "compute them all or use subset_by_index")
    _choice("eigh", "type", type, (1, 2, 3))
    _choice("eigh", "driver", driver, (None, "ev", "evd", "evr", "evx", "gv", "gvd", "gvx"))
    a = _matrix("eigh", a, square=True)
    n = shape_of(a)[-1]
    span = None if subset_by_index is None else _index_range("eigh", subset_by_index, n)
    if b is None and span is not None and span[1] == n - 1 and len(shape_of(a)) == 2 \
            and span[0] > 0:
        w, v = _linalg.eigsh(a, n - span[0], "LA", "L" if lower else "U")
    elif b is None:
        w, v = _linalg.eigh(a, "L" if lower else "U")
    else:
        w, v = _generalized_eigh(a, tensor_or_array(b, "eigh"), lower, type)
    if span is not None and (span[0], span[1]) != (0, n - 1) and shape_of(w)[-1] == n:
        w, v = w[..., span[0]:span[1] + 1], v[..., span[0]:span[1] + 1]
    return w if eigvals_only else (w, v)


@implements("scipy.linalg.eigvalsh")
def eigvalsh(a, b=None, *, lower: bool = True, overwrite_a: bool = False,
             overwrite_b: bool = False, type: int = 1, check_finite: bool = True,  # noqa: A002
             subset_by_index=None, subset_by_value=None, driver=None):
    """The eigenvalues (ascending) of a Hermitian matrix, as :func:`eigh` reads it."""
    return eigh(a, b, lower=lower, eigvals_only=True, type=type,
                subset_by_index=subset_by_index, subset_by_value=subset_by_value,
                driver=driver)


def _left_eigenvectors(v):
    """Unit-norm left eigenvectors (columns ``u`` with ``u^H a = w u^H``) from the right
    ones: the columns of ``v^-H``, normalised."""
    left = _adjoint(_linalg.inv(v))
    norms = _linalg.norm(left, axis=-2, keepdims=True)
    return left / tnp.astype(norms, left.dtype)


@implements("scipy.linalg.eig")
def eig(a, b=None, left: bool = False, right: bool = True, overwrite_a: bool = False,
        overwrite_b: bool = False, check_finite: bool = True,
        homogeneous_eigvals: bool = False):
    """Eigenvalues ``w`` (complex, LAPACK's order) and unit-norm eigenvectors of a general
    square matrix, SciPy's ``eig``: returns ``w``, then ``vl`` if ``left``, then ``vr`` if
    ``right`` (``vl[:, i]^H a = w[i] vl[:, i]^H``, ``a vr[:, i] = w[i] vr[:, i]``);
    ``homogeneous_eigvals`` gives ``w`` as the rows ``(w, 1)``.  The eigenvectors are
    complex; a loss must not depend on their phases (``GaugeError``).  The left ones are
    the columns of ``vr^-H`` normalised (each a phase apart from LAPACK's).  The
    generalized problem (``b``) raises ``UnsupportedError``."""
    if b is not None:
        raise UnsupportedError("eig: the generalized problem (b=...) is not supported for "
                               "tensors; for an invertible b, eig(solve(b, a)) has the same "
                               "eigenvalues and eigenvectors")
    w, v = _linalg.eig(_matrix("eig", a, square=True))
    values = w
    if homogeneous_eigvals:
        values = tnp.stack([w, tnp.ones_like(w)], axis=-2)
    result = (values,)
    if left:
        result += (_left_eigenvectors(v),)
    if right:
        result += (v,)
    return result[0] if len(result) == 1 else result


@implements("scipy.linalg.eigvals")
def eigvals(a, b=None, overwrite_a: bool = False, check_finite: bool = True,
            homogeneous_eigvals: bool = False):
    """The eigenvalues of a general square matrix (complex), as :func:`eig`."""
    return eig(a, b, right=False, homogeneous_eigvals=homogeneous_eigvals)


@implements("scipy.linalg.qr")
def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True):
    """QR, ``a = Q @ R``, SciPy's modes: ``"full"`` (the default: ``Q`` m x m, ``R``
    m x n), ``"economic"`` (``Q`` m x k, ``R`` k x n), ``"r"`` (the tuple ``(R,)``, ``R``
    m x n).  The columns ``"full"`` adds to ``Q`` for a tall matrix are not unique and
    have no derivative (``ShapeError``: use ``mode="economic"``).  ``pivoting=True`` and
    ``mode="raw"`` raise ``UnsupportedError`` (the column order is a discontinuous
    choice; LAPACK's raw reflectors have no derivative here)."""
    _choice("qr", "mode", mode, ("full", "r", "economic", "raw"))
    if pivoting:
        raise UnsupportedError("qr: pivoting=True is not supported for tensors (the column "
                               "permutation jumps with the values); use pivoting=False")
    if mode == "raw":
        raise UnsupportedError("qr: mode='raw' is not supported for tensors; use 'economic'")
    a = _matrix("qr", a)
    m, n = shape_of(a)[-2:]
    if mode == "economic":
        return tuple(_linalg.qr(a, "reduced"))
    if mode == "full" and m > n and m * n:
        raise ShapeError(f"qr: mode='full' of a tall {m} x {n} matrix adds columns to Q "
                         "that are not unique, so they have no derivative; use "
                         "mode='economic'")
    if mode == "full":
        return tuple(_linalg.qr(a, "complete"))
    r = _linalg.qr(a, "r")
    if m > n:
        zeros = tnp.zeros(shape_of(a)[:-2] + (m - n, n), dtypes.DTYPES[code_of_value(r)])
        r = tnp.concatenate([r, zeros], axis=-2)
    return (r,)


@implements("scipy.linalg.expm")
def expm(A):  # noqa: N803 - SciPy's name
    """The matrix exponential (of each matrix of a stack), with the exact Frechet
    derivative (the same function as ``tp.linalg.expm``)."""
    return _linalg.expm(A)


# ------------------------------------------------------------------ solves and inverses

@implements("scipy.linalg.solve")
def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          check_finite: bool = True, assume_a=None, transposed: bool = False):
    """``x`` with ``a @ x = b`` (``a.T @ x = b`` with ``transposed``), SciPy's ``solve``:
    ``assume_a`` says which part of ``a`` is read, and the derivative is that of this
    function of ``a``: one triangle (``lower``) for ``"sym"``, ``"her"``, ``"pos"`` (a
    Cholesky solve, which raises ``LinAlgError`` for a matrix that is not positive
    definite), the diagonal for ``"diagonal"``, three diagonals for ``"tridiagonal"``,
    that triangle for ``"upper triangular"`` / ``"lower triangular"``, all of it
    otherwise.  ``b``: a vector or a stack of right-hand-side matrices (batch axes
    broadcast).  ``transposed`` of a complex ``a`` raises ``UnsupportedError``, as
    SciPy's ``NotImplementedError``."""
    _check_kind("solve", assume_a, _SOLVE_KINDS)
    a = _matrix("solve", a, square=True)
    if transposed and is_complex_value(a):
        raise UnsupportedError("solve: transposed=True is not supported for complex "
                               "matrices (as in SciPy); solve with a.T explicitly")
    if assume_a in ("pos", "positive definite") and not transposed:
        return cho_solve((_cholesky_lower(a, lower), True), b)
    a = _structured(a, assume_a, lower)
    return _linalg.solve(tnp.matrix_transpose(a) if transposed else a, b)


@implements("scipy.linalg.solve_triangular")
def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, check_finite: bool = True):
    """``x`` with ``op(t) @ x = b`` for the ``lower`` (else upper) triangle ``t`` of
    ``a`` (ones on its diagonal with ``unit_diagonal``); ``trans``: 0 / ``"N"``
    (``op(t) = t``), 1 / ``"T"`` (``t.T``), 2 / ``"C"`` (``t^H``)."""
    trans = {"N": 0, "T": 1, "C": 2}.get(trans, trans)
    _choice("solve_triangular", "trans", trans, (0, 1, 2))
    a = _matrix("solve_triangular", a, square=True)
    t = tnp.tril(a) if lower else tnp.triu(a)
    if unit_diagonal:
        eye = _eye_like(t, shape_of(t)[-1])
        t = t * (1 - eye) + eye
    if trans == 1:
        t = tnp.matrix_transpose(t)
    elif trans == 2:
        t = _adjoint(t)
    return _linalg.solve(t, b)


@implements("scipy.linalg.inv")
def inv(a, overwrite_a: bool = False, check_finite: bool = True, *, assume_a=None,
        lower: bool = False):
    """The inverse of a square matrix (or of each of a stack); ``assume_a`` and
    ``lower`` say which part of ``a`` is read, as for :func:`solve`."""
    _check_kind("inv", assume_a, _INV_KINDS)
    a = _matrix("inv", a, square=True)
    if assume_a == "pos":
        return cho_solve((_cholesky_lower(a, lower), True), _eye_like(a, shape_of(a)[-1]))
    return _linalg.inv(_structured(a, assume_a, lower))


@implements("scipy.linalg.det")
def det(a, overwrite_a: bool = False, check_finite: bool = True):
    """The determinant (one per matrix of a stack)."""
    return _linalg.det(_matrix("det", a, square=True))


@implements("scipy.linalg.cholesky")
def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """The Cholesky factor of a Hermitian positive-definite matrix, SciPy's: the UPPER
    ``u`` with ``a = u^H @ u`` by default, the lower ``l`` (``a = l @ l^H``) with
    ``lower``; only that triangle of ``a`` is read."""
    return _linalg.cholesky(_matrix("cholesky", a, square=True), upper=not lower)


@implements("scipy.linalg.cho_factor")
def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """``(c, lower)`` for :func:`cho_solve`: ``c`` holds the Cholesky factor in its
    ``lower`` (else upper) triangle and ``a``'s own entries in the other, as SciPy's
    (whose docs call them arbitrary)."""
    a = _matrix("cho_factor", a, square=True)
    if lower:
        return _linalg.cholesky(a) + tnp.triu(a, 1), lower
    return _linalg.cholesky(a, upper=True) + tnp.tril(a, -1), lower


@implements("scipy.linalg.cho_solve")
def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """``x`` with ``a @ x = b`` from ``(c, lower) = cho_factor(a)``: only the factor's
    triangle of ``c`` is read."""
    c, lower = c_and_lower
    c = _matrix("cho_solve", c, square=True)
    if lower:
        factor = tnp.tril(c)
        return _linalg.solve(_adjoint(factor), _linalg.solve(factor, b))
    factor = tnp.triu(c)
    return _linalg.solve(factor, _linalg.solve(_adjoint(factor), b))


# ------------------------------------------------------------------ LU

@implements("scipy.linalg.lu")
def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True,
       p_indices: bool = False):
    """``p, l, u`` with ``a = p @ l @ u`` (partial pivoting; ``l`` m x k unit lower, ``u``
    k x n upper, k = min(m, n); stacks too), SciPy's ``lu``: ``(p @ l, u)`` with
    ``permute_l``; with ``p_indices`` the row indices ``perm`` (``a = l[perm] @ u``) as
    int64 instead of ``p``.  The permutation is piecewise constant; at a tie of the
    pivoting the factors jump and their derivative raises ``NotDifferentiableError``."""
    p, l, u, piv = _lu.lu(_matrix("lu", a))
    if permute_l:
        return tnp.matmul(tnp.astype(p, l.dtype), l), u
    if p_indices:
        return _indices(p), l, u
    return p, l, u


def _indices(p):
    """The row indices of a permutation matrix (``perm[r]`` with ``p[perm[r], r] = 1``;
    for ``a = l[perm] @ u``: SciPy's ``p_indices``) as int64, from its entries."""
    m = shape_of(p)[-1]
    rows = np.arange(m, dtype=dtypes.DTYPES[code_of_value(p)])
    return tnp.astype(tnp.matmul(rows, p), np.int64)


@implements("scipy.linalg.lu_factor")
def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """``(lu, piv)``: ``l``'s strictly lower part and ``u`` in one m x n matrix, and
    LAPACK's pivots (0-based: row ``i`` was swapped with row ``piv[i]``; int64 for a
    tensor, int32 from SciPy), SciPy's ``lu_factor``.  ``lu`` is differentiable (see
    :func:`lu`), ``piv`` is an integer: nothing flows back through it."""
    a = _matrix("lu_factor", a)
    _, l, u, piv = _lu.lu(a)
    m, n = shape_of(a)[-2:]
    strict = tnp.tril(l, -1)
    if m > n:
        u = tnp.concatenate([u, tnp.zeros_like(strict[..., n:, :])], axis=-2)
    elif m < n:
        strict = tnp.concatenate([strict, tnp.zeros_like(u[..., :, m:])], axis=-1)
    return strict + u, piv


@implements("scipy.linalg.lu_solve")
def lu_solve(lu_and_piv, b, trans=0, overwrite_b: bool = False, check_finite: bool = True):
    """``x`` with ``op(a) @ x = b`` from ``(lu, piv) = lu_factor(a)`` of a square ``a``;
    ``trans`` 0 (``a``), 1 (``a.T``), 2 (``a^H``).  Differentiable in ``lu`` (its
    triangles as :func:`lu_factor` fills them) and ``b``."""
    lu_, piv = lu_and_piv
    lu_ = _matrix("lu_solve", lu_, square=True)
    _choice("lu_solve", "trans", trans, (0, 1, 2))
    n = shape_of(lu_)[-1]
    l = tnp.tril(lu_, -1) + _eye_like(lu_, n)
    u = tnp.triu(lu_)
    piv = tensor_or_array(piv, "lu_solve")
    if isinstance(piv, np.ndarray):
        piv = piv.astype(np.int64)
    p = _lu.pivot_matrix(piv, code_of_value(lu_))            # a = p l u
    if trans == 0:
        return _linalg.solve(u, _linalg.solve(l, tnp.matmul(tnp.matrix_transpose(p), b)))
    op = tnp.matrix_transpose if trans == 1 else _adjoint    # op(a) = op(u) op(l) p^T
    return tnp.matmul(p, _linalg.solve(op(l), _linalg.solve(op(u), b)))


# ------------------------------------------------------------------ built on the SVD

def _rank(name: str, s, rcond, size: int) -> int:
    """SciPy's count of singular values above ``max(s) * rcond`` (default
    ``eps * max(m, n)``), from values that must be known now."""
    values = concrete_value(s)
    if values is None:
        raise ConcretizationError(f"{name}: the number of columns of the result depends on "
                                  "the singular values, which a traced matrix does not have "
                                  "yet; call it on an eager tensor (tp.tensor)")
    values = np.asarray(values)
    if rcond is None:
        rcond = np.finfo(values.dtype).eps * size
    tol = np.amax(values, initial=0.0) * rcond
    return int(np.sum(values > tol))


@implements("scipy.linalg.null_space")
def null_space(A, rcond=None, *, overwrite_a: bool = False,  # noqa: N803 - SciPy's name
               check_finite: bool = True, lapack_driver: str = "gesdd"):
    """An orthonormal basis of the null space of ``A`` (columns), SciPy's: the right
    singular vectors of the singular values ``<= max(s) * rcond``.  The basis of a null
    space of dimension > 1 is not unique, and for a wide matrix it is made of the extra
    rows of the full SVD: a loss that depends on it raises (``ShapeError`` or
    ``GaugeError``).  Needs an eager tensor (the number of columns depends on values)."""
    _lapack_driver("null_space", lapack_driver)
    A = _matrix("null_space", A)  # noqa: N806
    if len(shape_of(A)) != 2:
        raise ShapeError(f"null_space: expected a matrix, got shape {list(shape_of(A))}")
    u, s, vh = svd(A, full_matrices=True)
    rank = _rank("null_space", s, rcond, max(shape_of(A)))
    return _adjoint(vh[rank:, :])


@implements("scipy.linalg.orth")
def orth(A, rcond=None):  # noqa: N803 - SciPy's name
    """An orthonormal basis of the range of ``A`` (columns), SciPy's: the left singular
    vectors of the singular values ``> max(s) * rcond`` (default ``eps * max(m, n)``).
    Needs an eager tensor (the number of columns depends on values)."""
    A = _matrix("orth", A)  # noqa: N806
    if len(shape_of(A)) != 2:
        raise ShapeError(f"orth: expected a matrix, got shape {list(shape_of(A))}")
    u, s, vh = svd(A, full_matrices=False)
    return u[:, :_rank("orth", s, rcond, max(shape_of(A)))]


@implements("scipy.linalg.polar")
def polar(a, side: str = "right"):
    """The polar decomposition, SciPy's: ``a = u @ p`` (``side="right"``, ``p`` n x n) or
    ``a = p @ u`` (``"left"``, ``p`` m x m), ``u`` with orthonormal columns or rows and
    ``p`` Hermitian positive semi-definite; through the SVD ``a = w s vh``: ``u = w vh``,
    ``p = u^H a = vh^H s vh`` or ``a u^H = w s w^H``, exact also at degenerate singular
    values (``a`` of full rank)."""
    _choice("polar", "side", side, ("right", "left"))
    a = _matrix("polar", a)
    if len(shape_of(a)) != 2:
        raise ShapeError(f"polar: `a` must be a 2-D array, got shape {list(shape_of(a))}")
    w, _, vh = svd(a, full_matrices=False)
    u = tnp.matmul(w, vh)
    # p = u^H a (= vh^H s vh) rather than from s: at degenerate singular values the SVD's
    # broadened derivative of vh^H s vh misses the ds terms, while that of u is exact
    p = tnp.matmul(_adjoint(u), a) if side == "right" else tnp.matmul(a, _adjoint(u))
    return u, (p + _adjoint(p)) * 0.5


# ------------------------------------------------------------------ matrix functions

@implements("scipy.linalg.sqrtm")
def sqrtm(A, disp=None, blocksize=None):  # noqa: N803 - SciPy's name
    """The principal square root of a square matrix (or of each of a stack), with its
    exact derivative (the Frechet derivative by the block identity, any order).  A real
    matrix whose root is complex raises ``DTypeError``: pass a complex one.  ``disp`` and
    ``blocksize`` (deprecated in SciPy) are accepted and ignored."""
    return _functions.sqrtm(_matrix("sqrtm", A, square=True))


@implements("scipy.linalg.logm")
def logm(A, disp=None):  # noqa: N803 - SciPy's name
    """The principal logarithm of a square matrix (or of each of a stack), with its
    exact derivative (the Frechet derivative by the block identity, diagonalizable or
    not).  A real matrix whose logarithm is complex raises ``DTypeError``."""
    return _functions.logm(_matrix("logm", A, square=True))


@implements("scipy.linalg.fractional_matrix_power")
def fractional_matrix_power(A, t):  # noqa: N803 - SciPy's name
    """``A ** t`` for a real ``t`` (principal branch), with its exact derivative in ``A``
    (``t`` is a constant)."""
    if isinstance(t, bool) or not isinstance(t, numbers.Real):
        raise ArgumentValueError(f"fractional_matrix_power: t must be a real number, got "
                                 f"{t!r}")
    return _functions.fractional_matrix_power(
        _matrix("fractional_matrix_power", A, square=True), float(t))


# ------------------------------------------------------------------ building matrices

@implements("scipy.linalg.block_diag")
def block_diag(*arrs):
    """The block-diagonal matrix of the given matrices (scalars and 1-d arrays are rows,
    as in SciPy; ``block_diag()`` is a 1 x 0 matrix), of their common dtype."""
    blocks = [tensor_or_array(x, "block_diag") for x in arrs]
    blocks = [b if len(shape_of(b)) == 2 else _as_row("block_diag", b) for b in blocks]
    width = sum(shape_of(b)[1] for b in blocks)
    rows, start = [], 0
    for b in blocks:
        c = shape_of(b)[1]
        rows.append(tnp.pad(b, ((0, 0), (start, width - start - c))))
        start += c
    return tnp.concatenate(rows, axis=0)


def _as_row(name: str, b):
    if len(shape_of(b)) > 2:
        raise ShapeError(f"{name}: arguments must have dimension <= 2, got shape "
                         f"{list(shape_of(b))}")
    return tnp.reshape(b, (1, -1))

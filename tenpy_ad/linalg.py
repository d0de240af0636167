"""``tp.linalg``: decompositions and solves with exact, stable derivatives (NumPy's names,
argument orders and return layouts).

Derivative conventions (Lorentzian broadening at degenerate spectra, complex gauge checks)
are described in :mod:`tenpy_ad.ops.linalg`; :data:`config` holds the defaults.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import dtypes
from . import numpy as tnp
from .numpy._operands import is_tensor, is_traced, operand, result_code
from .errors import ShapeError
from .ops import elementwise as ew
from .ops.linalg import config
from .ops.linalg.config import broadening
from .ops.linalg.eigh import eigh_p
from .ops.linalg.qr import qr_p
from .ops.linalg.solve import solve_p
from .ops.linalg.svd import svd_p
from .primitive import bind, bind2, is_complex_value, shape_of

__all__ = ["svd", "qr", "eigh", "solve", "norm", "config"]


def _matrix_operand(name: str, a, square: bool = False):
    """``a`` as a floating-point matrix operand; a ShapeError naming ``name`` otherwise."""
    shape = shape_of(a)
    if len(shape) != 2 or (square and shape[0] != shape[1]):
        kind = "a square matrix" if square else "a matrix (2-d)"
        raise ShapeError(f"{name}: expected {kind}, got shape {list(shape)}")
    if is_tensor(a):
        return a
    array = np.asarray(a)
    return array.astype(dtypes.DTYPES[dtypes.inexact_code(array.dtype)], copy=False)


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
    code = result_code("solve", a, b)
    traced = is_traced(a) or is_traced(b)
    return bind2(solve_p, None, operand(a, code, traced), operand(b, code, traced))


def norm(x, ord=None, axis=None, keepdims: bool = False):  # noqa: A002 - NumPy's name
    """Vector and matrix norms (NumPy's ``linalg.norm``) for ``ord`` in None/'fro' (2-norm
    of all entries), 1, 2, inf for vectors and 'nuc', 2 for matrices (via the SVD).  The
    2-norm has derivative ``x/|x|`` and the subgradient 0 at ``x = 0``."""
    if not is_tensor(x):
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

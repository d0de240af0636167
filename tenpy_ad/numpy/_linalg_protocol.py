"""``np.linalg.<name>(tensor)`` runs :mod:`tenpy_ad.linalg`.

This module only registers NumPy's linear-algebra functions with the dispatch protocol
(``tnp.linalg`` is :mod:`tenpy_ad.linalg` itself).  Where NumPy's signature or defaults
differ from ``tp.linalg``'s, a thin wrapper applies NumPy's: ``svd`` computes
``full_matrices=True`` by default, as NumPy does (a non-square matrix then has extra
singular vectors without a derivative: a loss that uses them raises and says to pass
``full_matrices=False``).  ``eig``/``eigvals`` are always complex (see
:func:`tenpy_ad.linalg.eig`).  ``tensorinv`` and ``tensorsolve`` have no tenpy_ad version
and are refused like every unregistered function.
"""
from __future__ import annotations

import numpy as np

from .. import linalg as _linalg
from ..primitive import shape_of
from ._dispatch import implements
from ._operands import normalize_axes
from .diagonals import diagonal as _diagonal, trace as _trace
from .shaping import matrix_transpose, reshape as _reshape, transpose as _transpose


def _numpy_linalg(*names: str) -> list:
    """The functions of ``np.linalg`` of these names that the installed NumPy has (several
    are new in NumPy 2)."""
    return [getattr(np.linalg, name) for name in names if hasattr(np.linalg, name)]


_SAME_SIGNATURE = ("cholesky", "cond", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv",
                   "lstsq", "matrix_power", "matrix_rank", "norm", "pinv", "qr", "slogdet",
                   "solve", "svdvals")
for _name in _SAME_SIGNATURE:
    implements(*_numpy_linalg(_name))(getattr(_linalg, _name))
implements(*_numpy_linalg("matrix_transpose"))(matrix_transpose)


@implements(np.linalg.svd)
def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False):
    """``np.linalg.svd`` with NumPy's defaults.  ``hermitian`` is NumPy's hint for a faster
    method: the general SVD is computed (a valid SVD of ``a`` either way)."""
    return _linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


@implements(*_numpy_linalg("matrix_norm"))
def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):  # noqa: A002 - NumPy's name
    """The norm of each matrix over the last two axes (``ord`` as in ``tp.linalg.norm``)."""
    return _linalg.norm(x, ord, axis=(-2, -1), keepdims=keepdims)


@implements(*_numpy_linalg("vector_norm"))
def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):  # noqa: A002
    """The vector norm over ``axis`` (all axes by default; several axes are flattened into
    one vector, as NumPy does)."""
    shape = shape_of(x)
    axes = normalize_axes("vector_norm", axis, len(shape))
    if len(axes) == 1:
        return _linalg.norm(x, ord, axis=axes[0], keepdims=keepdims)
    rest = tuple(i for i in range(len(shape)) if i not in axes)
    vectors = _reshape(_transpose(x, rest + axes), tuple(shape[i] for i in rest) + (-1,))
    result = _linalg.norm(vectors, ord, axis=-1)
    if keepdims:
        result = _reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape)))
    return result


@implements(*_numpy_linalg("diagonal"))
def diagonal(x, /, *, offset: int = 0):
    """The diagonals of the matrices over the last two axes."""
    return _diagonal(x, offset, axis1=-2, axis2=-1)


@implements(*_numpy_linalg("trace"))
def trace(x, /, *, offset: int = 0, dtype=None):
    """The traces of the matrices over the last two axes."""
    return _trace(x, offset, axis1=-2, axis2=-1, dtype=dtype)

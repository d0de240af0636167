"""The named results of the decompositions, with NumPy 2's class and field names, so
``np.linalg.eigh(t).eigenvalues`` and ``u, s, vh = np.linalg.svd(t)`` both work."""
from __future__ import annotations

from typing import Any, NamedTuple


class EigResult(NamedTuple):
    """``eig``: eigenvalues and eigenvectors (columns)."""
    eigenvalues: Any
    eigenvectors: Any


class EighResult(NamedTuple):
    """``eigh``: eigenvalues (ascending) and eigenvectors (columns)."""
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    """``qr``: ``Q`` and ``R`` with ``a = Q @ R``."""
    Q: Any  # noqa: N815 - NumPy's field name
    R: Any  # noqa: N815


class SlogdetResult(NamedTuple):
    """``slogdet``: ``sign`` and ``logabsdet`` with ``det = sign * exp(logabsdet)``."""
    sign: Any
    logabsdet: Any


class SVDResult(NamedTuple):
    """``svd``: ``U``, ``S`` (descending) and ``Vh`` with ``a = U @ diag(S) @ Vh``."""
    U: Any  # noqa: N815 - NumPy's field name
    S: Any  # noqa: N815
    Vh: Any  # noqa: N815

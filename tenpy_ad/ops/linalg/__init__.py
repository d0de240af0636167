"""Decomposition and solve primitives with exact, stable derivatives.

One module per primitive (``svd``, ``qr``, ``eigh``, ``solve``; the partial decompositions
``partial_svd``, ``partial_eigh`` with their forward solvers in ``leading`` and the solve of
their derivatives in ``complement_solve``), their shared matrix helpers (``matrix``), the
broadening and gauge-check defaults (``config``) and the complex gauge check (``gauge``).
The public, NumPy-style functions are in :mod:`tenpy_ad.linalg`.
"""
from .config import config
from .eigh import eigh_p
from .gauge import gauge_check_p
from .qr import qr_p
from .solve import solve_p
from .svd import svd_p
from .complement_solve import complement_solve_p
from .partial_eigh import eigsh_p
from .partial_svd import svds_p

__all__ = ["config", "svd_p", "qr_p", "eigh_p", "solve_p", "gauge_check_p", "svds_p",
           "eigsh_p", "complement_solve_p"]

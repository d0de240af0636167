"""Decomposition and solve primitives with exact, stable derivatives.

One module per primitive or family (``svd``, ``qr``, ``eigh``, ``eig``, ``solve``,
``inverse``, ``det`` (det, slogdet), ``cholesky``, ``pinv`` (and the rank count),
``expm``, ``lu`` (with its pivot matrix and tie check), the primary matrix functions
``matrix_functions`` (sqrtm, logm, fractional_matrix_power); the partial decompositions ``partial_svd``, ``partial_eigh`` with their forward
solvers in ``leading`` and the solve of their derivatives in ``complement_solve``), their
shared matrix helpers (``matrix``: every helper acts on the last two axes, so each rule
serves stacks of matrices unchanged), the safe LAPACK calls (``lapack``), the
broadening and gauge-check defaults (``config``), the complex gauge check (``gauge``, with
the tokens that tell a loss's own cotangents from derived ones: ``derived``), the rules'
answer for empty operands (``zero_size``) and the BLAS work of each primitive
(``threads``).
The public, NumPy-style functions are in :mod:`tenpy_ad.linalg`.
"""
from .cholesky import cholesky_p
from .config import config
from .det import det_p, slogdet_p
from .eig import eig_p
from .eigh import eigh_p
from .expm import expm_p
from .gauge import gauge_check_p
from .inverse import inv_p
from .lu import lu_p, lu_pivot_check_p, pivot_matrix_p
from .matrix_functions import fractional_matrix_power_p, logm_p, sqrtm_p
from .pinv import pinv_p, rank_p
from .qr import qr_p
from .solve import solve_p
from .svd import svd_p
from .complement_solve import complement_solve_p
from .partial_eigh import eigsh_p
from .partial_svd import svds_p
from . import threads as _threads       # their BLAS work and fresh results

__all__ = ["config", "svd_p", "qr_p", "eigh_p", "eig_p", "solve_p", "inv_p", "det_p",
           "slogdet_p", "cholesky_p", "pinv_p", "rank_p", "expm_p", "gauge_check_p", "svds_p",
           "eigsh_p", "complement_solve_p", "lu_p", "lu_pivot_check_p", "pivot_matrix_p",
           "sqrtm_p", "logm_p", "fractional_matrix_power_p"]

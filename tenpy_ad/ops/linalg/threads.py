"""The BLAS/LAPACK work of the decomposition primitives, for their threads
(:mod:`tenpy_ad.blas`), and the promise that their results are new arrays (for the memory
plan of compiled programs, :mod:`tenpy_ad.step_facts`; ``tests/test_buffers.py`` checks
it on every spec entry)."""
from __future__ import annotations

from ...blas import matrix_work, matvec_work, threaded
from ...step_facts import declare_steps
from .cholesky import cholesky_p
from .complement_solve import complement_solve_p
from .det import det_p, slogdet_p
from .eig import eig_p
from .eigh import eigh_p
from .expm import expm_p
from .inverse import inv_p
from .leading import _use_dense
from .lu import lu_p
from .matrix_functions import fractional_matrix_power_p, logm_p, sqrtm_p
from .partial_eigh import eigsh_p
from .partial_svd import svds_p
from .pinv import pinv_p
from .qr import qr_p
from .solve import solve_p
from .svd import svd_p


def _partial_work(kind: str):
    """svds/eigsh: LAPACK's decomposition when it computes densely (as ``leading`` decides:
    the ``dense`` param, the last, or a small or nearly full problem), else ARPACK's
    products."""
    dense = matrix_work(kind)

    def work(params, shape):
        count = params[0] + params[1]
        if params[-1] or _use_dense(min(shape[-2], shape[-1]), count):
            return dense(params, shape)
        return matvec_work(params, shape)
    return work


def _block_products(params, a, u, t, b, hint):
    """complement_solve: its Lanczos processes multiply ``a`` by blocks of ``b``."""
    return "matmul", 2 * a[-2] * a[-1] * (b[-1] if len(b) > 1 else 1)


_WORK = ((svd_p, matrix_work("svd")), (pinv_p, matrix_work("svd")),
         (eig_p, matrix_work("svd")), (eigh_p, matrix_work("eigh")),
         (qr_p, matrix_work("qr")), (solve_p, matrix_work("solve")),
         (inv_p, matrix_work("solve")), (det_p, matrix_work("solve")),
         (slogdet_p, matrix_work("solve")), (cholesky_p, matrix_work("solve")),
         (expm_p, matrix_work("solve")), (svds_p, _partial_work("svd")),
         (eigsh_p, _partial_work("eigh")), (complement_solve_p, _block_products),
         (lu_p, matrix_work("solve")), (sqrtm_p, matrix_work("svd")),
         (logm_p, matrix_work("svd")), (fractional_matrix_power_p, matrix_work("svd")))

for _prim, _work in _WORK:
    threaded(_prim, _work)
    declare_steps(_prim, fresh_outputs=True)

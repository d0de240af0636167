"""Spec entry of the second-order guard of the dense svd/eigh VJP: an identity whose
derivative rules insert the check (``second_order_check``, reached by the VJP here); the
values are distinct, so the check passes."""
import numpy as np

from tenpy_ad.ops.linalg.degenerate_guard import guarded

from .table import Spec

SPECS = [
    Spec("second_order_guard",
         lambda x: guarded(x, np.array([1.0, 2.0]), "svd", True, (np.array([0.0, 1.0]), None)),
         ((3, 2),)),
]

"""Spec entries of the second-order guard of the dense svd/eigh VJP: an identity whose
derivative rules insert the check (``second_order_check``, reached by the VJP here); the
values are distinct, so the check passes.  And of the tangent guard of the decompositions'
JVPs (:mod:`tenpy_ad.ops.linalg.derived`), an identity on the tangents whose VJP runs the
gauge check: real, so the check passes (a random complex cotangent depends on the phase)."""
import numpy as np

from tenpy_ad.ops.linalg.degenerate_guard import guarded
from tenpy_ad.ops.linalg.derived import empty_token, guard_tangents

from .table import REAL, Spec

_VECTORS = np.linalg.qr(np.arange(9.0).reshape(3, 3) ** 2 + np.eye(3))[0]


def _guarded_eigh_tangents(dw, dv):
    guarded_w, guarded_v, _ = guard_tangents("eigh", 1e-16, (dw, dv), (_VECTORS,),
                                             empty_token(_VECTORS), True)
    return guarded_v * guarded_w

SPECS = [
    Spec("second_order_guard",
         lambda x: guarded(x, np.array([1.0, 2.0]), "svd", True, (np.array([0.0, 1.0]), None)),
         ((3, 2),)),
    Spec("tangent_gauge_guard", _guarded_eigh_tangents, ((3,), (3, 3)), dtypes=REAL),
]

"""The Hermitian eigendecomposition primitive ``a = v diag(w) v^H`` (``w`` ascending, as
NumPy's ``eigh``) and its rules.  The ``1/(w_j - w_i)`` factors are broadened like the
SVD's (``eps`` is the node's static parameter)."""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...errors import ShapeError
from ...primitive import code_of_value, describe, is_complex_value, primitive, shape_of
from ...rules import defrules
from .. import elementwise as ew
from .. import structural as st
from .gauge import gauge_checked
from .matrix import add_optional, adjoint, col, diag, diag_embed, frozen, lorentz, mm, row


def _eigh_rule(eps, a):
    shape = shape_of(a)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ShapeError(f"eigh: expected a square matrix, got {describe(a)}")
    code = code_of_value(a)
    return [(dtypes.real_code(code), shape[:1]), (code, shape)]


def _broadened_inverse_gaps(w, eps):
    """``1/(w_j - w_i)`` off the diagonal, broadened; 0 on it."""
    return lorentz(row(w) - col(w), eps, frozen("eye", shape_of(w)[0]))


def _eigh_jvp(eps, tangents, out, xs):
    (da,) = tangents
    w, v = out
    dp = mm(mm(adjoint(v), da), v)
    dw = ew.real(diag(dp))
    dv = mm(v, _broadened_inverse_gaps(w, eps) * dp)
    return dw, dv


def _eigh_vjp(eps, cts, out, xs, active):
    gw, gv = cts
    w, v = out
    core = None if gw is None else diag_embed(gw)
    if gv is not None:
        j = mm(adjoint(v), gv)
        core = add_optional(core, _broadened_inverse_gaps(w, eps) * j)
    ct_a = mm(mm(v, core), adjoint(v))
    if gv is not None and is_complex_value(v):
        largest = st.reduce_max(ew.abs(j), (0, 1))
        ct_a = gauge_checked(ct_a, ew.imag(diag(j)), largest, "eigh")
    return (ct_a,)


eigh_p = primitive("eigh", lambda eps, a: np.linalg.eigh(a), _eigh_rule, n_outputs=2,
                   format_params=lambda eps: f"eps={eps:g}")
defrules(eigh_p, _eigh_jvp, _eigh_vjp)

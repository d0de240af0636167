"""The general eigendecomposition primitive ``a = v diag(w) v^-1`` (NumPy's ``eig``: LAPACK's
order, unit-norm eigenvector columns; a matrix or a stack) and its rules.

Outputs are complex for every input (a real matrix has complex eigenpairs in general, and a
tensor's dtype cannot depend on its values; NumPy returns a real array when all
eigenvalues of a real input happen to be real, with the same values).

Derivatives.  With ``dP = v^-1 da v``: ``dw = diag(dP)`` and ``dv = v (X - diag(Re
diag(v^H v X)))`` where ``X = F o dP``, ``F_ij = 1/(w_j - w_i)`` off the diagonal (0 on
it).  The second term keeps the columns at unit norm; the phase of each column is
arbitrary, so losses must not depend on it (the VJP checks: ``GaugeError``).  The VJP is
the adjoint: ``ga = v^-H (diag(gw) + conj(F) o v^H (gv - v diag(Re d))) v^H`` with
``d = diag(v^H gv)`` (taken column by column); for a real ``a``, its real part.

Degenerate eigenvalues: ``F`` is broadened, ``conj(x)/(|x|^2 + eps)``, as the SVD's gaps,
so at an exact degeneracy the terms ``(w_j - w_i) X / (w_j - w_i)`` are set to 0 (the
eigenvectors inside a degenerate eigenspace are not unique).  Functions of the eigenvalues,
the eigenvectors of non-degenerate eigenvalues and symmetric functions of a degenerate
group (its sum) keep their exact derivatives.  Other functions of a degenerate group's
eigenvalues (``w1`` alone, ``c1 w1 + c2 w2``) have none: the group splits as the
eigenvalues of the projected perturbation, and which of them LAPACK lists first is
arbitrary; the VJP raises ``GaugeError`` there (``tp.linalg.config.degeneracy_check``),
as for a loss of a degenerate eigenvector basis.  A defective matrix (a Jordan block) has no
derivative of its eigenvalues (they move like the square root of a perturbation); LAPACK
returns nearly parallel eigenvectors there and the derivative is finite but as large as
the condition number of ``v``.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...errors import ShapeError
from ...param_schema import EPS
from ...primitive import code_of_value, describe, is_complex_value, primitive, shape_of
from .. import elementwise as ew
from .. import structural as st
from . import lapack
from .degenerate_guard import checked_use
from .derived import (empty_token, guard_tangents, loss_cotangents, mark_rule_result,
                      register_phase, token_result)
from .gauge import gauge_checked
from .matrix import (add_optional, adjoint, col, diag, diag_embed, frozen, largest_abs,
                     lorentz_complex, mm, row)
from .solve import solve
from .truncation import differentiable
from .zero_size import defrules_sized


def _eig_rule(eps, a):
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ShapeError(f"eig: expected a square matrix or a stack of them, got "
                         f"{describe(a)}")
    code = dtypes.complex_code(code_of_value(a))
    return [(code, shape[:-1]), (code, shape), token_result(code)]


def _eig_impl(eps, a):
    """NumPy's eig on the operand itself (a real matrix goes to the real LAPACK routine,
    so the order of the eigenvalues is NumPy's), returned as complex arrays."""
    w, v = lapack.call("eig", lambda b: tuple(np.linalg.eig(b)), a)
    code = dtypes.DTYPES[dtypes.complex_code(dtypes.value_code(np.asarray(a).dtype))]
    return w.astype(code, copy=False), v.astype(code, copy=False), empty_token(a)


def _inverse_gaps(w, eps, conjugate=False):
    """Broadened ``1/(w_j - w_i)`` (or its conjugate) off the diagonal, 0 on it."""
    pin = frozen("eye", shape_of(w)[-1], dtypes.real_code(code_of_value(w)))
    return lorentz_complex(row(w) - col(w), eps, pin, conjugate)


def _column_dot(v, x):
    """``diag(v^H x)``, column by column (no matrix product)."""
    return st.reduce_sum(ew.conj(v) * x, (len(shape_of(v)) - 2,))


def _as_complex(x, like):
    return ew.convert(x, code_of_value(like))


def _eig_jvp(eps, tangents, out, xs):
    (da,) = tangents
    w, v, token = out
    a = xs[0]
    da = _as_complex(da, v)
    dp = solve(v, mm(da, v))                    # v^-1 da v
    dw = diag(dp)
    vx = mm(v, _inverse_gaps(w, eps) * dp)
    dv = vx - v * row(_as_complex(ew.real(_column_dot(v, vx)), v))
    if not differentiable(da, a):
        return dw, dv, None
    # eigenvectors are complex (and their phases arbitrary) for real matrices too
    return guard_tangents("eig", eps, (dw, dv), (w, v), token, True)


def _normed(eps, w, v, gv):
    """``diag(v^H gv)``, ``v^H (gv - v diag(Re d))`` and the conjugate gap factors."""
    d = _column_dot(v, gv)                          # diag(v^H gv)
    normed = mm(adjoint(v), gv - v * row(_as_complex(ew.real(d), v)))   # J - v^H v diag(Re d)
    return d, normed, _inverse_gaps(w, eps, conjugate=True)


def _eig_vjp(eps, cts, out, xs, active):
    gw, gv, g_token = cts
    w, v, token = out
    vh = adjoint(v)
    core = None if gw is None else diag_embed(gw)
    if gv is not None:
        d, normed, gaps = _normed(eps, w, v, gv)
        core = add_optional(core, gaps * normed)
    ct_a = solve(vh, mm(core, vh))                      # v^-H core v^H
    if gv is not None and loss_cotangents(g_token):
        ct_a = gauge_checked(ct_a, ew.imag(d), _phase_scale(normed, d, gw, gaps), "eig")
    # a degenerate basis used, or unequal cotangents of a degenerate group's eigenvalues?
    ct_a = checked_use(ct_a, w, "eig", None if gv is None else normed, gw)
    if not is_complex_value(xs[0]):
        ct_a = ew.real(ct_a)
    again = differentiable(gw, gv)
    return (mark_rule_result(ct_a, token, True, again),)


def _phase(values, cts, eps):
    """The gauge check's operands for cotangents ``(gw, gv)`` of ``(w, v)``."""
    (w, v), (gw, gv) = values, cts
    if gv is None:
        return None
    d, normed, gaps = _normed(eps, w, v, gv)
    return ew.imag(d), _phase_scale(normed, d, gw, gaps)


def _phase_scale(normed, d, gw, gaps):
    """What the phase sensitivity ``Im d`` is compared with.  A phase reaches the gradient
    through the gap factors (as ``Im d * |F|``), the eigenvalue cotangents directly, so
    ``gw`` counts as ``|gw| / max |F|``: a ``gv`` that is zero but for rounding (a loss of
    the eigenvalues alone written with the eigenvectors, ``v diag(f(w)) v^-1``) is not
    mistaken for a dependence on the phase."""
    scale = largest_abs(normed) + largest_abs(d)
    if gw is None or shape_of(gaps)[-1] < 2:
        return scale
    tiny = float(np.finfo(dtypes.DTYPES[dtypes.real_code(code_of_value(gw))]).tiny)
    return scale + largest_abs(gw) / (largest_abs(gaps) + tiny)


register_phase("eig", _phase)
# the outputs w, v and the token (:mod:`.derived`)
eig_p = primitive("eig", _eig_impl, _eig_rule, n_outputs=3,
                  format_params=lambda eps: f"eps={eps:g}", params=EPS)
defrules_sized(eig_p, _eig_jvp, _eig_vjp)

"""The partial SVD primitive: the k leading singular triplets ``u, s, vh`` of ``a``
(descending, NumPy's layout), and its rules.

The derivative is that of the truncated function ``a -> (u, s, vh)`` itself, exact,
including the coupling of the kept triplets to the discarded subspace, and it never needs
the discarded singular vectors: the parts of ``dU``, ``dV`` orthogonal to the kept vectors
are

    (X; Y) = L(K) (R_u; R_v),   R_u = Q dA V,   R_v = Q_v dA^H U,
    K_i = s_i - [[0, A], [A^H, 0]]  on the discarded subspace,  L(x) = x/(x^2 + eps)

(:func:`.complement_solve.coupling_svd`, a Lanczos solve with products of ``a`` only):
the full SVD rule's broadened terms ``L(s_i - sigma_j)``, ``L(s_i + sigma_j)`` for every
discarded ``sigma_j``; the VJP is the transpose.  Within the kept triplets the rules are
``svd``'s: Lorentzian broadening of the gaps (``eps``), the complex phase term and the
gauge check.  So ``svds(a, k)`` has the gradients of ``svd(a)`` sliced to ``[:k]``, with
the same semantics at (near-)degeneracies, within the kept values and across the cut.

A fourth output, ``hint``, holds the next ``p`` singular vectors as ``blockdiag(u', v')``
((m + n) x 2p); it only speeds up the solves (see :mod:`.complement_solve`) and carries no
derivative.  The fifth is the token of :mod:`.derived`.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...errors import MissingRuleError, ShapeError
from ...param_schema import BOOL, EPS, SIZE, Int, Maybe, Struct
from ...primitive import (bind, code_of_value, describe, is_complex_value, primitive,
                         shape_of)
from ...rules import defrules
from .. import elementwise as ew
from .. import structural as st
from .complement_solve import coupling_svd, solve_params
from .degenerate_guard import checked_use
from .derived import (empty_token, guard_tangents, loss_cotangents, mark_rule_result,
                      token_result)
from .gauge import gauge_checked
from .leading import leading_triplets
from .matrix import (add_optional, adjoint, combine_gaps, diag, diag_embed, gap_factors,
                     largest_abs, lorentz, mm)
from .truncation import differentiable


def _impl(params, a):
    k, p, _, tol, maxiter, dense = params
    u, s, vh = leading_triplets(a, k + p, k, tol, maxiter, dense)
    m, n = a.shape
    hint = np.zeros((m + n, 2 * p), u.dtype)
    hint[:m, :p], hint[m:, p:] = u[:, k:], vh[k:].conj().T
    return u[:, :k], s[:k], vh[:k], hint, empty_token(a)


def _shape_rule(params, a):
    k, p = params[0], params[1]
    if a.ndim != 2 or not 1 <= k <= min(a.shape) or k + p > min(a.shape):
        raise ShapeError(f"svds: expected a matrix with min(m, n) >= k + p = {k} + {p}, got "
                         f"{describe(a)}")
    m, n = a.shape
    code = code_of_value(a)
    return [(code, (m, k)), (dtypes.real_code(code), (k,)), (code, (k, n)),
            (code, (m + n, 2 * p)), token_result(code)]


def _coupling(params, a, u, v, s, r_u, r_v, hint):
    return coupling_svd(a, u, v, s, r_u, r_v, hint,
                        solve_params("svd", params[2], params[3], params[4]))


def _jvp(params, tangents, out, xs):
    eps = params[2]
    (da,) = tangents
    a = xs[0]
    u, s, vh, hint, token = out
    v = adjoint(vh)
    dp = mm(mm(adjoint(u), da), v)                     # U^H dA V
    dph = adjoint(dp)
    ds = ew.real(diag(dp))
    f_sum, f_difference = gap_factors(s, s, eps, same_indices=True)
    omega_u = combine_gaps(f_sum, f_difference, dp, dph)     # U^H dU (off the diagonal)
    omega_v = combine_gaps(f_sum, f_difference, dph, dp)     # V^H dV
    inv_s = lorentz(s, eps)
    if is_complex_value(a):
        phase = diag_embed(1j * ew.imag(diag(dp)) * inv_s * 0.5)
        omega_u, omega_v = omega_u + phase, omega_v - phase
    r_u = mm(da, v) - mm(u, dp)                        # Q dA V
    r_v = mm(adjoint(da), u) - mm(v, dph)              # Q_v dA^H U
    x, y = _coupling(params, a, u, v, s, r_u, r_v, hint)
    du = mm(u, omega_u) + x
    dv = mm(v, omega_v) + y
    tangents = (du, ds, adjoint(dv))
    if not differentiable(da, a):
        return tangents + (None, None)
    guarded = guard_tangents("svd", eps, tangents, (u, vh), token, is_complex_value(a))
    return guarded[:3] + (None, guarded[3])


def _vjp(params, cts, out, xs, active):
    gu, gs, gvh, g_hint, g_token = cts
    if g_hint is not None:
        raise MissingRuleError("svds: the deflation hint (4th output of svds_p) is an "
                              "internal output and has no derivative")
    a = xs[0]
    u, s, vh, hint, token = out

    def coupling(r_u, r_v):
        return _coupling(params, a, u, adjoint(vh), s, r_u, r_v, hint)
    ct_a = kept_triplets_vjp(params[2], a, u, s, vh, gu, gs, gvh, coupling,
                             loss_cotangents(g_token))
    again = differentiable(gu, gs, gvh)
    return (mark_rule_result(ct_a, token, is_complex_value(a), again),)


def phase_of_products(j, kmat, k1: int):
    """The gauge check's residual and reference from ``J = U^H gU`` and ``K = V^H gV``
    (either None), of which the first ``k1`` columns hold the cotangents: the phase
    sensitivity ``Im diag(J + K)`` of each triplet against the scale of ``J`` and ``K``."""
    residual = add_optional(None if j is None else ew.imag(diag(j[..., :k1, :])),
                            None if kmat is None else ew.imag(diag(kmat[..., :k1, :])))
    reference = add_optional(None if j is None else largest_abs(j),
                             None if kmat is None else largest_abs(kmat))
    return residual, reference


def kept_triplets_vjp(eps, a, u, s, vh, gu, gs, gvh, coupling, check: bool = True,
                      name: str | None = "svds"):
    """The cotangent of ``a`` (None for zero) from those of k kept singular triplets
    ``u, s, vh`` (None for zero): ``gA = U core V^H + P_u V^H + U P_v^H`` with ``core`` as
    in ``svd`` and ``(P_u; P_v) = coupling(Q gU, Q_v gV) = L(K) (Q gU; Q_v gV)``
    (``L(K)`` is self-adjoint).  Also the rule of ``svd`` sliced to kept triplets when its
    result is differentiated again (:mod:`.svd`).  ``check``: run the gauge check (the
    cotangents are a loss's own, :mod:`.derived`); ``name``: the decomposition the
    degeneracy check names (None: the caller checks)."""
    v = adjoint(vh)
    gv = None if gvh is None else adjoint(gvh)
    j = None if gu is None else mm(adjoint(u), gu)               # U^H gU
    kmat = None if gv is None else mm(vh, gv)                    # V^H gV
    f_sum, f_difference = gap_factors(s, s, eps, same_indices=True)
    core = combine_gaps(f_sum, f_difference, None if j is None else j - adjoint(j),
                    None if kmat is None else kmat - adjoint(kmat))
    if gs is not None:
        core = add_optional(core, diag_embed(gs))
    inv_s = lorentz(s, eps)
    complex_input = is_complex_value(a)
    if complex_input and (j is not None or kmat is not None):
        im_j = 0.0 if j is None else ew.imag(diag(j))
        im_k = 0.0 if kmat is None else ew.imag(diag(kmat))
        core = add_optional(core, diag_embed(1j * (im_j - im_k) * inv_s * 0.5))
    ct_a = None if core is None else mm(mm(u, core), vh)
    g_left = None if gu is None else gu - mm(u, j)
    g_right = None if gv is None else gv - mm(v, kmat)
    if g_left is not None or g_right is not None:
        p_u, p_v = coupling(st.full_like(u, 0) if g_left is None else g_left,
                            st.full_like(v, 0) if g_right is None else g_right)
        ct_a = add_optional(ct_a, mm(p_u, vh) + mm(u, adjoint(p_v)))
    if check and ct_a is not None and complex_input and (j is not None or kmat is not None):
        ct_a = gauge_checked(ct_a, *phase_of_products(j, kmat, shape_of(s)[-1]), "svd")
    if name is not None:
        ct_a = checked_use(ct_a, s, name, j, kmat)    # a degenerate basis used?
    return ct_a


#: (k, hint, eps, tol, maxiter, dense)
svds_p = primitive("svds", _impl, _shape_rule, n_outputs=5,
                   format_params=lambda p: f"k={p[0]} hint={p[1]} eps={p[2]:g} tol={p[3]:g}",
                   params=Struct(Int(1), SIZE, EPS, EPS, Maybe(Int(1)), BOOL))
defrules(svds_p, _jvp, _vjp)


def svds(a, k: int, hint: int, eps: float, tol: float, maxiter, dense: bool = False):
    """The nodes ``u, s, vh, hint`` of the partial SVD of a float matrix ``a`` (see
    :func:`tenpy_ad.linalg.svds`); ``dense`` computes the forward with LAPACK."""
    maxiter = None if maxiter is None else int(maxiter)
    params = (int(k), int(hint), float(eps), float(tol), maxiter, bool(dense))
    return bind(svds_p, params, a)[:4]

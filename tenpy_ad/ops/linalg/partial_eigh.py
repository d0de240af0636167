"""The partial Hermitian eigendecomposition primitive: the k leading eigenpairs ``w, v`` of
``a`` by ``which`` ("LA" largest algebraic, "LM" largest magnitude), ``w`` ascending as
NumPy's ``eigh``, and its rules.

As for :mod:`.partial_svd`, the derivative is exact for the truncated function and uses
products of ``a`` only: the part of ``dV`` orthogonal to the kept vectors is
``X = L(K) (Q dA V)`` with ``K_i = w_i - A`` on the discarded subspace and
``L(x) = x/(x^2 + eps)`` (:func:`.complement_solve.coupling_hermitian`): ``eigh``'s
broadened ``1/(w_i - lambda_j)`` for every discarded ``lambda_j``.  Within the kept pairs
the rules are ``eigh``'s, with the Lorentzian broadening ``eps`` and the complex gauge
check.  A third output, ``hint`` (the next ``p`` eigenvectors by ``which``), only speeds up
the solves and carries no derivative; the fourth is the token of :mod:`.derived`.  With
``dense`` (LAPACK's whole decomposition, ``p = n - k``) the hint is the complete discarded
spectrum over its values, and the solves are :mod:`.complement_solve`'s exact mode.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...errors import MissingRuleError, ShapeError
from ...param_schema import BOOL, EPS, SIZE, Exactly, Int, Maybe, Struct
from ...primitive import (bind, code_of_value, describe, is_complex_value, primitive,
                         shape_of)
from ...rules import defrules
from .. import elementwise as ew
from .. import structural as st
from .complement_solve import coupling_hermitian, exact_params, solve_params
from .degenerate_guard import checked_use
from .derived import (empty_token, guard_tangents, loss_cotangents, mark_rule_result,
                      token_result)
from .gauge import gauge_checked
from .leading import leading_eigenpairs
from .matrix import (add_optional, adjoint, broadened_inverse_gaps, diag, diag_embed,
                     largest_abs, mm)
from .truncation import differentiable

WHICH = ("LA", "LM")


def _impl(params, a):
    k, p, which, _, tol, maxiter, dense = params
    w, v = leading_eigenpairs(a, k + p, k, which, tol, maxiter, dense)
    order = np.argsort(w[:k], kind="stable")             # kept pairs ascending
    hint = v[:, k:]
    if dense:                   # the whole complement over its values: exact mode's hint
        hint = np.concatenate([hint, w[None, k:].astype(a.dtype)])
    return w[order], v[:, order], hint, empty_token(a)


def _shape_rule(params, a):
    k, p, dense = params[0], params[1], params[6]
    if a.ndim != 2 or a.shape[0] != a.shape[1] or not 1 <= k <= a.shape[0] \
            or k + p > a.shape[0] or (dense and k + p != a.shape[0]):
        raise ShapeError(f"eigsh: expected a square matrix of size >= k + p = {k} + {p} "
                         f"(= with dense), got {describe(a)}")
    n = a.shape[0]
    code = code_of_value(a)
    return [(dtypes.real_code(code), (k,)), (code, (n, k)), (code, (n + dense, p)),
            token_result(code)]


def _coupling(params, a, v, w, rhs, hint):
    solve = exact_params("hermitian", params[3]) if params[6] else \
        solve_params("hermitian", params[3], params[4], params[5])
    return coupling_hermitian(a, v, w, rhs, hint, solve)


def _jvp(params, tangents, out, xs):
    (da,) = tangents
    a = xs[0]
    w, v, hint, token = out
    dav = mm(da, v)
    dp = mm(adjoint(v), dav)
    dw = ew.real(diag(dp))
    x = _coupling(params, a, v, w, dav - mm(v, dp), hint)
    dv = mm(v, broadened_inverse_gaps(w, params[3]) * dp) + x
    if not differentiable(da, a):
        return dw, dv, None, None
    dw, dv, t_token = guard_tangents("eigh", params[3], (dw, dv), (v,), token,
                                    is_complex_value(v))
    return dw, dv, None, t_token


def _vjp(params, cts, out, xs, active):
    gw, gv, g_hint, g_token = cts
    if g_hint is not None:
        raise MissingRuleError("eigsh: the deflation hint (3rd output of eigsh_p) is an "
                              "internal output and has no derivative")
    a = xs[0]
    w, v, hint, token = out
    dense = params[6]
    ct_a = kept_pairs_vjp(params[3], w, v, gw, gv,
                          lambda rhs: _coupling(params, a, v, w, rhs, hint),
                          loss_cotangents(g_token), None if dense else "eigsh")
    if dense and gv is not None:   # every value known: refuse a cut through a degenerate
        #                            group too, as eigh sliced does
        every = st.concatenate([v, hint[:-1]], 1)
        values = st.concatenate([w, ew.real(hint[-1])], 0)
        ct_a = checked_use(ct_a, values, "eigsh", lo=0, hi=shape_of(w)[0],
                           factors=(every, gv))
    return (mark_rule_result(ct_a, token, is_complex_value(v), differentiable(gw, gv)),)


def kept_pairs_vjp(eps, w, v, gw, gv, coupling, check: bool = True,
                   name: str | None = "eigsh"):
    """The cotangent of the Hermitian operand (None for zero) from those of k kept
    eigenpairs ``w, v``: ``gA = V (diag(gw) + G o V^H gV) V^H + P V^H`` with
    ``P = coupling(Q gV) = L(K) (Q gV)``.  Also the rule of ``eigh`` restricted to kept
    pairs when its result is differentiated again (:mod:`.eigh`).  ``check``: run the gauge
    check (the cotangents are a loss's own, :mod:`.derived`)."""
    core = None if gw is None else diag_embed(gw)
    if gv is not None:
        j = mm(adjoint(v), gv)
        core = add_optional(core, broadened_inverse_gaps(w, eps) * j)
    left = None if core is None else mm(v, core)
    if gv is not None:                  # (V core + P) V^H: one n x n product
        left = add_optional(left, coupling(gv - mm(v, j)))
    ct_a = None if left is None else mm(left, adjoint(v))
    if gv is not None:
        if check and is_complex_value(v):
            ct_a = gauge_checked(ct_a, ew.imag(diag(j)), largest_abs(j), "eigh")
        if name is not None:                         # None: the caller checks
            ct_a = checked_use(ct_a, w, name, j)     # a degenerate basis used?
    return ct_a


#: (k, hint, which, eps, tol, maxiter, dense)
eigsh_p = primitive("eigsh", _impl, _shape_rule, n_outputs=4,
                    format_params=lambda p: f"k={p[0]} hint={p[1]} which={p[2]} "
                                            f"eps={p[3]:g} tol={p[4]:g}",
                    params=Struct(Int(1), SIZE, Exactly(*WHICH), EPS, EPS, Maybe(Int(1)), BOOL))
defrules(eigsh_p, _jvp, _vjp)


def eigsh(a, k: int, hint: int, which: str, eps: float, tol: float, maxiter,
          dense: bool = False):
    """The nodes ``w, v, hint`` of the partial eigendecomposition of a Hermitian float
    matrix ``a`` (see :func:`tenpy_ad.linalg.eigsh`); ``dense`` computes the forward with
    LAPACK."""
    maxiter = None if maxiter is None else int(maxiter)
    return bind(eigsh_p, (int(k), int(hint), which, float(eps), float(tol), maxiter,
                          bool(dense)), a)[:3]

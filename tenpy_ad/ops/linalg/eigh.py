"""The Hermitian eigendecomposition primitive ``h = v diag(w) v^H`` (``w`` ascending, as
NumPy's ``eigh``; a matrix or a stack) and its rules.  The ``1/(w_j - w_i)`` factors are
broadened like the SVD's.

Params ``(eps, uplo)``.  With ``uplo`` "L" or "U" the primitive is NumPy's function: LAPACK
reads only that triangle of the operand ``a`` (and the real part of its diagonal), so
``h = hermitian_from_triangle(a)`` and the rules compose with that linear map; any ``a`` is
a valid point and every perturbation of it is differentiated.  With ``uplo=None`` the
operand is Hermitian by construction (``tp.linalg.eigh(..., symmetrize_input=True)``
passes ``(a + a^H)/2``) and the rules are those of ``h`` itself.

Truncation (``v[:, -k:]``, ``w[lo:hi]``) as for ``svd``: a VJP that may be differentiated
again couples the pairs ``lo:hi`` to the others through ``complement_solve`` in exact
mode (the partial rule of ``eigsh``), so its derivatives are exact at degenerate
discarded eigenvalues; arrays and untruncated uses keep the dense rule (checked at second
order, :mod:`.degenerate_guard`).
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...errors import ShapeError
from ...param_schema import EPS, Exactly, Maybe, Struct
from ...primitive import code_of_value, describe, is_complex_value, primitive, shape_of
from ...rules import takes_block_cotangents
from .. import elementwise as ew
from . import lapack
from .complement_solve import coupling_hermitian, exact_hint, exact_params
from .degenerate_guard import checked_use, guarded, guarded_tangent
from .derived import (empty_token, guard_tangents, loss_cotangents, mark_rule_result,
                      register_phase, token_result)
from .gauge import gauge_checked
from .matrix import (add_optional, adjoint, broadened_inverse_gaps, diag, diag_embed,
                     hermitian_from_triangle, hermitian_from_triangle_transpose, largest_abs,
                     mm)
from .partial_eigh import kept_pairs_vjp
from .truncation import block, cotangent_range, dense, differentiable, outside
from .zero_size import defrules_sized


def _eigh_rule(params, a):
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ShapeError(f"eigh: expected a square matrix or a stack of them, got "
                         f"{describe(a)}")
    code = code_of_value(a)
    return [(dtypes.real_code(code), shape[:-1]), (code, shape), token_result(code)]


def _eigh_impl(params, a):
    uplo = params[1] or "L"
    w, v = lapack.call("eigh", lambda b: tuple(np.linalg.eigh(b, UPLO=uplo)), a)
    return w, v, empty_token(a)


def _eigh_jvp(params, tangents, out, xs):
    eps, uplo = params
    (da,) = tangents
    if uplo is not None:
        da = hermitian_from_triangle(da, uplo == "L")
    w, v, token = out
    dp = mm(mm(adjoint(v), da), v)
    dw = ew.real(diag(dp))
    dv = mm(v, broadened_inverse_gaps(w, eps) * dp)
    if not differentiable(da, xs[0]):
        return dw, dv, None
    dv = guarded_tangent(dv, w, "eigh", False)     # a JVP that may be differentiated again
    return guard_tangents("eigh", eps, (dw, dv), (v,), token, is_complex_value(v))


def _eigh_vjp(params, cts, out, xs, active):
    eps, uplo = params
    gw, gv, g_token = cts
    w, v, token = out
    check, again = loss_cotangents(g_token), differentiable(gw, gv)
    n = shape_of(w)[-1]
    last = len(shape_of(w))            # the pair axis: w's last, v's last
    lo, hi = cotangent_range(n, (gw, last - 1), (gv, last))
    if lo < hi and (lo, hi) != (0, n) and again:
        h = xs[0] if uplo is None else hermitian_from_triangle(xs[0], uplo == "L")
        ct_a = _kept_vjp(eps, lo, hi, h, w, v, gw, gv, check)
    else:
        gw, gv = dense(gw), dense(gv)
        ct_a, j = _dense_vjp(eps, w, v, gw, gv, check)
        if again:                      # every pair, as far as the rule can see (and, in
            #                            the same node, whether a degenerate basis is used)
            ct_a = guarded(ct_a, w, "eigh", False, (gw, None), (gv, -2),
                           first=(j, None, 0, None))
        elif j is not None:            # a degenerate basis used?
            ct_a = checked_use(ct_a, w, "eigh", j)
    if uplo is not None:
        ct_a = hermitian_from_triangle_transpose(ct_a, uplo == "L")
    return (mark_rule_result(ct_a, token, is_complex_value(v), again),)


def _phase(values, cts, eps):
    """The gauge check's operands for cotangents ``(gw, gv)`` of ``v``."""
    (v,), (_, gv) = values, cts
    if gv is None:
        return None
    j = mm(adjoint(v), gv)
    return ew.imag(diag(j)), largest_abs(j)


def _dense_vjp(eps, w, v, gw, gv, check: bool):
    """``gA = V (diag(gw) + G o V^H gV) V^H`` over all pairs (``check``: the gauge check,
    for a loss's own cotangents), and ``J = V^H gV`` (None for no gV)."""
    core, j = None if gw is None else diag_embed(gw), None
    if gv is not None:
        j = mm(adjoint(v), gv)
        core = add_optional(core, broadened_inverse_gaps(w, eps) * j)
    ct_a = mm(mm(v, core), adjoint(v))
    if check and gv is not None and is_complex_value(v):
        ct_a = gauge_checked(ct_a, ew.imag(diag(j)), largest_abs(j), "eigh")
    return ct_a, j


def _kept_vjp(eps, lo, hi, h, w, v, gw, gv, check: bool):
    """The VJP of a matrix's ``eigh`` restricted to the pairs ``lo:hi``, in a form whose
    own derivatives are exact (as ``svd``'s, :func:`.svd._kept_vjp`): the partial rule
    (:func:`.partial_eigh.kept_pairs_vjp`) with ``complement_solve`` in exact mode on the
    other pairs."""
    n = shape_of(w)[-1]
    axis = len(shape_of(w)) - 1        # the pair axis of w; v's is the same
    v1, w1 = v[..., lo:hi], w[..., lo:hi]
    hint = exact_hint(outside(v, axis + 1, lo, hi, n), outside(w, axis, lo, hi, n))
    params = exact_params("hermitian", eps)
    gv1 = block(gv, axis + 1, lo, hi, n)
    ct_a = kept_pairs_vjp(eps, w1, v1, block(gw, axis, lo, hi, n), gv1,
                          lambda rhs: coupling_hermitian(h, v1, w1, rhs, hint, params), check,
                          None)
    # degenerate kept values, or a kept value equal to another one (the restriction
    # splits a degenerate group): one check over all of w
    return checked_use(ct_a, w, "eigh", None if gv1 is None else mm(adjoint(v), gv1), lo=lo,
                       hi=hi, column=lo)


register_phase("eigh", _phase)
# the outputs w, v and the token (:mod:`.derived`)
eigh_p = primitive("eigh", _eigh_impl, _eigh_rule, n_outputs=3,
                   format_params=lambda p: f"eps={p[0]:g} uplo={p[1]}",
                   static_shapes=True, params=Struct(EPS, Maybe(Exactly("L", "U"))))
defrules_sized(eigh_p, _eigh_jvp, _eigh_vjp)
takes_block_cotangents(eigh_p)          # the VJP reads the truncation (:mod:`.truncation`)

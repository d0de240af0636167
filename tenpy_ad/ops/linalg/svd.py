"""The SVD primitive, ``a = u diag(s) vh`` (NumPy's reduced layout), and its rules.

Rules are written with the library's own operations, so they are traced to any order and
run eagerly on arrays alike.  Notation: ``g*`` are cotangents, ``d*`` tangents; ``X^H`` is
the conjugate transpose.

Degenerate spectra: ``s_j / (s_j^2 - s_i^2)`` and ``s_i / (s_j^2 - s_i^2)`` are written as
the partial fractions ``1/(s_j - s_i)`` and ``1/(s_j + s_i)`` (and ``1/s``), and each is
replaced by the Lorentzian ``x / (x^2 + eps)`` (``eps`` a static parameter of the node).
Away from degeneracy that changes a term by a relative ``eps/x^2``.  At an exact degeneracy
a term of the form ``(s_j - s_i) X / (s_j - s_i)`` is 0/0 — no rule can recover ``X`` from
the cotangents — and broadening sets it to 0.  Derivatives that do not contain such a term
are exact there: functions of the singular values, projectors onto whole degenerate
subspaces, the polar factor ``u vh``, TRG's ``u sqrt(s)`` / ``sqrt(s) vh`` halves; ``u f(s)
vh`` is not (its ``X`` is ``f'(s)`` times a coupling the cotangents do not show).  A loss
that depends on the basis within a degenerate subspace makes the numerator itself non-zero
(its derivative is infinite): the VJP raises there (:mod:`.degenerate_guard`).
``eps = 0`` gives the plain formulas (NaN at exact degeneracy).

Truncation: only the triplets that receive cotangents enter the VJP (``u[:, :k]`` makes
the others' cotangents zero, a block cotangent that :mod:`.truncation` reads), so a rank-k use of an
n x n SVD costs O(n^2 k) in the backward pass, not O(n^3).  On plain arrays (a
first-order eager backward) the kept triplets couple to each discarded one by its gap
factors.  That VJP is a smooth function of ``a`` but not written as one: its derivative
would differentiate each discarded vector, broadened 0 in place of a divided difference
inside an exactly degenerate discarded group (a rank-deficient matrix).  So a VJP that may
be differentiated again (traced or eager-Tensor cotangents) couples the kept triplets
``lo:hi`` to the discarded subspace as a whole: the partial SVD's rule, with
``complement_solve`` in exact mode (dense products with the discarded triplets, which
enter as a constant; its rules are solves with the same operator), so second and higher
derivatives are exact whenever the kept values are apart from the discarded ones.  The
first-order values are the same.  Where the cotangents do not show a truncation, the
dense rule runs over every triplet and its derivative checks that no triplet with a zero
cotangent is exactly degenerate (:mod:`.degenerate_guard`).
"""
from __future__ import annotations

import functools
import math

import numpy as np
import scipy.linalg.lapack

from ... import dtypes
from ...errors import InternalError, ShapeError
from ...param_schema import BOOL, EPS, Struct
from ...primitive import (bind, code_of_value, describe, is_complex_value, primitive,
                         shape_of)
from ...rules import takes_block_cotangents
from .. import elementwise as ew
from .. import structural as st
from . import lapack
from .complement_solve import coupling_svd, exact_hint, exact_params
from .degenerate_guard import checked_use, guarded, guarded_tangent
from .derived import (empty_token, guard_tangents, loss_cotangents, mark_rule_result,
                      register_phase, token_result)
from .gauge import gauge_checked
from .matrix import (add_optional, adjoint, adjoint_mm, combine_gaps, diag, diag_embed,
                     gap_factors, lorentz, mm, mm_adjoint, place_block, row)
from .partial_svd import kept_triplets_vjp, phase_of_products
from .truncation import block, cotangent_range, differentiable, outside
from .zero_size import defrules_sized


@functools.lru_cache(maxsize=16)
def _lapack_svd(driver: str, dtype: np.dtype):
    return scipy.linalg.lapack.get_lapack_funcs((driver,), dtype=dtype)[0]


def _svd_impl(params, a):
    """``u, s, vh`` (:func:`_factors`) and the token (:mod:`.derived`)."""
    return _factors(params, a) + (empty_token(a),)


def _factors(params, a):
    """LAPACK's gesdd, falling back to gesvd when gesdd does not converge.  A matrix is
    passed to LAPACK directly (NumPy's wrapper costs more than the decomposition on small
    matrices), a stack to NumPy's batched gesdd, as is an empty matrix (LAPACK rejects a
    zero dimension; NumPy returns the empty factors, and identities for full_matrices)."""
    full_matrices, _ = params
    a = np.asarray(a)
    if a.ndim > 2 or a.size == 0:
        return lapack.call("svd", lambda b: _batched_svd(b, full_matrices), a)
    if not math.isfinite(abs(a.sum())) and not np.isfinite(a).all():
        return _nan_svd(a, full_matrices)   # NaN/Inf propagate (LAPACK would reject them)
    for driver in ("gesdd", "gesvd"):
        u, s, vh, info = _lapack_svd(driver, a.dtype)(a, compute_uv=1,
                                                      full_matrices=int(full_matrices))
        if info == 0:
            return u, s, vh
        if info < 0:                    # pragma: no cover - an argument error in LAPACK
            raise InternalError(f"svd: LAPACK {driver} rejected argument {-info}")
    raise np.linalg.LinAlgError(f"svd did not converge (gesdd nor gesvd) for a "
                                f"{a.dtype.name}{list(a.shape)} matrix")


def _batched_svd(a, full_matrices):
    try:
        return tuple(np.linalg.svd(a, full_matrices=full_matrices))
    except np.linalg.LinAlgError:       # rare: redo each matrix with the gesvd fallback
        params = (full_matrices, None)
        parts = [_factors(params, m) for m in a.reshape((-1,) + a.shape[-2:])]
        return tuple(np.stack(p).reshape(a.shape[:-2] + p[0].shape) for p in zip(*parts))


def _nan_svd(a, full_matrices):
    m, n = a.shape
    k = min(m, n)
    real = np.empty(0, dtype=a.dtype).real.dtype
    ushape, vshape = ((m, m), (n, n)) if full_matrices else ((m, k), (k, n))
    return (np.full(ushape, np.nan, a.dtype), np.full(k, np.nan, real),
            np.full(vshape, np.nan, a.dtype))


def _svd_rule(params, a):
    full_matrices, _ = params
    ndim = a.ndim
    if ndim < 2:
        raise ShapeError(f"svd: expected a matrix or a stack of matrices, got {describe(a)}")
    m, n = a.shape if ndim == 2 else a.shape[-2:]
    k = min(m, n)
    code = code_of_value(a)
    ushape, vshape = ((m, m), (n, n)) if full_matrices else ((m, k), (k, n))
    batch = a.shape[:-2]
    return [(code, batch + ushape), (dtypes.real_code(code), batch + (k,)),
            (code, batch + vshape), token_result(code)]


def _check_reduced(params, a, what):
    m, n = shape_of(a)[-2:]
    if params[0] and m != n:
        raise ShapeError(f"svd {what}: with full_matrices=True the extra singular vectors "
                         "are not unique, so they have no derivative; use "
                         "full_matrices=False")


def _reduced(params, a, cts, out):
    """The cotangents and outputs of the reduced SVD.  With ``full_matrices=True`` a
    non-square matrix has extra singular vectors (u's columns, vh's rows past
    ``k = min(m, n)``) that are not unique: a loss that uses them has no derivative.  When
    the cotangents show that it does not (``u[:, :k]``, ``s`` alone), the rule is the
    reduced one on the leading ``k`` vectors, exactly."""
    m, n = shape_of(a)[-2:]
    if not params[0] or m == n:
        return cts, out
    (gu, gs, gvh), (u, s, vh) = cts, out
    k, last = min(m, n), len(shape_of(s))   # u's columns: axis last; vh's rows: last - 1
    if cotangent_range(m, (gu, last))[1] > k or cotangent_range(n, (gvh, last - 1))[1] > k:
        raise ShapeError("svd VJP: the loss uses the extra singular vectors of "
                         f"full_matrices=True (columns {k}: of u or rows {k}: of vh of a "
                         f"{m} x {n} matrix); they are not unique, so they have no "
                         "derivative. Use full_matrices=False")
    return ((block(gu, last, 0, k, m), gs, block(gvh, last - 1, 0, k, n)),
            (u[..., :k], s, vh[..., :k, :]))


def _svd_jvp(params, tangents, out, xs):
    _check_reduced(params, xs[0], "JVP")
    eps = params[1]
    (da,) = tangents
    a = xs[0]
    u, s, vh, token = out
    v = adjoint(vh)
    m, n = shape_of(a)[-2:]
    k = shape_of(s)[-1]
    dp = mm(mm(adjoint(u), da), v)                     # U^H dA V
    ds = ew.real(diag(dp))
    dph = adjoint(dp)
    f_sum, f_difference = gap_factors(s, s, eps, same_indices=True)
    omega_u = combine_gaps(f_sum, f_difference, dp, dph)     # U^H dU (off the diagonal)
    omega_v = combine_gaps(f_sum, f_difference, dph, dp)     # V^H dV
    inv_s = lorentz(s, eps) if is_complex_value(a) or m > k or n > k else None
    if is_complex_value(a):
        phase = diag_embed(1j * ew.imag(diag(dp)) * inv_s * 0.5)
        omega_u = omega_u + phase
        omega_v = omega_v - phase
    du = mm(u, omega_u)
    if m > k:
        du = du + (mm(da, v) - mm(u, dp)) * row(inv_s)
    dv = mm(v, omega_v)
    if n > k:
        dv = dv + (mm(adjoint(da), u) - mm(v, dph)) * row(inv_s)
    dvh = adjoint(dv)
    if not differentiable(da, xs[0]):
        return du, ds, dvh, None
    # a JVP that may be differentiated again
    du, dvh = (guarded_tangent(x, s, "svd", m != n) for x in (du, dvh))
    return guard_tangents("svd", eps, (du, ds, dvh), (u, vh), token, is_complex_value(a))


def _pad_rows(block, rows: int):
    """``block`` (r x c) placed in the top rows of a ``rows`` x c zero matrix."""
    return place_block(block, (rows, shape_of(block)[-1]), (0, 0))


def _svd_vjp(params, cts, out, xs, active):
    """The truncated rule when the result may be differentiated again (:func:`_kept_vjp`),
    else the dense one; the leading ``k1`` triplets whose cotangents can be non-zero."""
    eps = params[1]
    a = xs[0]
    token, check = out[3], loss_cotangents(cts[3])
    (gu, gs, gvh), (u, s, vh) = _reduced(params, a, cts[:3], out[:3])
    s_shape = shape_of(s)
    kk, last = s_shape[-1], len(s_shape)   # the triplet axis: u's last, s's and vh's last but one
    lo, k1 = cotangent_range(kk, (gu, last), (gs, last - 1), (gvh, last - 1))
    if k1 <= lo:
        return (st.full_like(a, 0),)
    again = differentiable(gu, gs, gvh)     # the result may be differentiated again
    if again and (lo, k1) != (0, kk):
        ct_a = _kept_vjp(eps, lo, k1, a, u, s, vh, gu, gs, gvh, check)
    else:
        ct_a = _dense_vjp(eps, k1, a, u, s, vh, gu, gs, gvh, again, check)
    return (mark_rule_result(ct_a, token, is_complex_value(a), again),)


def _skew_left(x, k1: int, kk: int, partial: bool):
    """``(X - X^H)[:, :k1]`` when ``X`` (kk x k1) has k1 non-zero columns."""
    return x - _pad_rows(adjoint(x[..., :k1, :]), kk) if partial else x - adjoint(x)


def _dense_vjp(eps, k1, a, u, s, vh, gu, gs, gvh, again: bool, check: bool):
    """``gA = U core V^H`` plus the projector terms of rectangular inputs.

    ``core = Fm o (A + B) + Fp o (A - B) + diag(gs) + i Im(diag(J - K))/(2 s)`` with
    ``J = U^H gU``, ``K = V^H gV``, ``A = J - J^H``, ``B = K - K^H``.  Only the leading
    ``k1`` triplets carry cotangents (truncation), so ``J``, ``K`` are computed as
    ``kk x k1`` blocks and ``core`` is non-zero only in its first ``k1`` rows and columns:
    the cost is O(m n k1) instead of O(m n kk).  ``check``: run the gauge check (the
    cotangents are a loss's own, :mod:`.derived`).
    """
    m, n = shape_of(a)[-2:]
    s_shape = shape_of(s)
    kk, last = s_shape[-1], len(s_shape)
    partial = k1 < kk
    gu = block(gu, last, 0, k1, kk)         # dense (the blocks themselves when partial)
    gs = block(gs, last - 1, 0, k1, kk)
    gvh = block(gvh, last - 1, 0, k1, kk)
    u1, s1, vh1 = (u[..., :k1], s[..., :k1], vh[..., :k1, :]) if partial else (u, s, vh)
    complex_input = is_complex_value(a)
    j = None if gu is None else adjoint_mm(u, gu)               # kk x k1
    kmat = None if gvh is None else mm_adjoint(vh, gvh)         # kk x k1

    a_left = None if j is None else _skew_left(j, k1, kk, partial)
    b_left = None if kmat is None else _skew_left(kmat, k1, kk, partial)
    f_sum, f_difference = gap_factors(s, s1, eps, same_indices=True)
    core = combine_gaps(f_sum, f_difference, a_left, b_left)
    if gs is not None:
        core = add_optional(core, _pad_rows(diag_embed(gs), kk) if partial else diag_embed(gs))
    # broadened 1/s, only where used (a node built and dropped still costs its build)
    inv_s1 = lorentz(s1, eps) if complex_input or m > kk or n > kk else None
    if complex_input:
        im_j = 0.0 if j is None else ew.imag(diag(j[..., :k1, :]))
        im_k = 0.0 if kmat is None else ew.imag(diag(kmat[..., :k1, :]))
        core = core + _pad_rows(diag_embed(1j * (im_j - im_k) * inv_s1 * 0.5), kk)
    ct_a = mm(mm(u, core), vh1)
    if partial:
        a_top = None if j is None else -adjoint(j[..., k1:, :])   # (X - X^H)[:k1, k1:]
        b_top = None if kmat is None else -adjoint(kmat[..., k1:, :])
        top_sum, top_difference = gap_factors(s1, s[..., k1:], eps, same_indices=False)
        top = combine_gaps(top_sum, top_difference, a_top, b_top)
        if top is not None:
            ct_a = ct_a + mm(u1, mm(top, vh[..., k1:, :]))
    if gu is not None and m > kk:
        ct_a = ct_a + mm((gu - mm(u, j)) * row(inv_s1), vh1)
    if gvh is not None and n > kk:
        ct_a = ct_a + mm(u1 * row(inv_s1), gvh - mm(adjoint(kmat), vh))
    if check and complex_input and (j is not None or kmat is not None):
        ct_a = gauge_checked(ct_a, *phase_of_products(j, kmat, k1), "svd")
    if again:                           # every triplet, as far as the rule can see
        # (and, in the same node, whether the loss uses a degenerate basis)
        ct_a = guarded(ct_a, s, "svd", m != n, (gu, -2), (gs, None), (gvh, -1),
                       first=(j, kmat, 0, k1))
    else:
        ct_a = checked_use(ct_a, s, "svd", j, kmat, hi=k1)   # a degenerate basis used?
    return ct_a


def _kept_vjp(eps, lo, hi, a, u, s, vh, gu, gs, gvh, check: bool):
    """The VJP of the SVD truncated to the triplets ``lo:hi``, in a form whose own
    derivatives are exact: the partial SVD's rule (:func:`.partial_svd.kept_triplets_vjp`),
    with the coupling to the discarded subspace solved by ``complement_solve`` on the
    discarded triplets as a whole (exact mode: dense products with them).  Those enter as
    a constant: the solve's rules differentiate ``a`` and the kept triplets only."""
    kk = shape_of(s)[-1]
    axis = len(shape_of(s)) - 1        # the triplet axis of s and vh; u's is the next
    u1, s1, vh1 = u[..., lo:hi], s[..., lo:hi], vh[..., lo:hi, :]
    rest_v = adjoint(outside(vh, axis, lo, hi, kk))
    hint = exact_hint(st.concatenate([outside(u, axis + 1, lo, hi, kk), rest_v], axis),
                      outside(s, axis, lo, hi, kk))
    params = exact_params("svd", eps)

    def coupling(r_u, r_v):
        return coupling_svd(a, u1, adjoint(vh1), s1, r_u, r_v, hint, params)
    gu1, gvh1 = block(gu, axis + 1, lo, hi, kk), block(gvh, axis, lo, hi, kk)
    ct_a = kept_triplets_vjp(eps, a, u1, s1, vh1, gu1, block(gs, axis, lo, hi, kk), gvh1,
                             coupling, check, None)
    # degenerate kept values, or a kept value equal to a discarded one (the truncation
    # splits a degenerate group): one check over all of s
    return checked_use(ct_a, s, "svd", None if gu1 is None else adjoint_mm(u, gu1),
                       None if gvh1 is None else mm_adjoint(vh, gvh1), lo, hi, column=lo)


def _phase(values, cts, eps):
    """The gauge check's operands for cotangents ``(gu, gs, gvh)`` of ``(u, vh)``."""
    u, vh = values
    gu, _, gvh = cts
    if gu is None and gvh is None:
        return None
    j = None if gu is None else adjoint_mm(u, gu)
    kmat = None if gvh is None else mm_adjoint(vh, gvh)
    return phase_of_products(j, kmat, shape_of(u)[-1])


register_phase("svd", _phase)
# the outputs u, s, vh and the token (:mod:`.derived`)
svd_p = primitive("svd", _svd_impl, _svd_rule, n_outputs=4,
                  format_params=lambda p: f"full_matrices={p[0]} eps={p[1]:g}",
                  static_shapes=True, params=Struct(BOOL, EPS))
defrules_sized(svd_p, _svd_jvp, _svd_vjp)
takes_block_cotangents(svd_p)           # the VJP reads the truncation (:mod:`.truncation`)


def svd(a, full_matrices: bool, eps: float):
    """The SVD nodes ``u, s, vh`` of a float matrix ``a`` (see :func:`tenpy_ad.linalg.svd`)."""
    return bind(svd_p, (bool(full_matrices), eps), a)[:3]

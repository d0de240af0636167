"""Decompositions and solves: ``svd``, ``qr``, ``eigh``, ``solve``, ``norm2``.

Rules are written with the library's own (numpy-like) operations, so they are traced to any
order and run eagerly on arrays alike.  Notation: ``A = U diag(s) V^H``; ``g*`` are
cotangents, ``d*`` tangents; ``X^H`` is the conjugate transpose; ``F_ij`` is
``1/(s_j^2 - s_i^2)`` off the diagonal.

Degenerate spectra: the SVD rule is written with the partial fractions
``1/(s_j - s_i)`` and ``1/(s_j + s_i)`` (and ``1/s``), and each is replaced by the
Lorentzian ``x / (x^2 + eps)`` (``eps`` a static parameter of the node).  Away from
degeneracy that changes a term by a relative ``eps/x^2``.  At an exact degeneracy a term of
the form ``(s_j - s_i) X / (s_j - s_i)`` is 0/0 — no rule can recover ``X`` from the
cotangents — and broadening sets it to 0.  Derivatives that do not contain such a term are
exact there: functions of the singular values, projectors onto whole degenerate
subspaces, the polar factor ``u vh``, TRG's ``u sqrt(s)`` / ``sqrt(s) vh`` halves.
``eps = 0`` gives the plain formulas (NaN at exact degeneracy).

Truncation: only the triplets that receive cotangents enter the VJP (``u[:, :k]`` makes
the others' cotangents zero), so a rank-k use of an n x n SVD costs O(n^2 k) in the
backward pass, not O(n^3), and degeneracies among discarded triplets are never met.

Complex gauge: singular vectors (and eigenvectors) are defined up to a phase per column.  A
loss that depends on that phase has no derivative; the VJP then raises
:class:`~tenpy_ad.errors.GaugeError` (or warns, see ``tp.linalg.config.gauge_check``)
instead of returning a value that depends on LAPACK's arbitrary choice.
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import scipy.linalg
import scipy.linalg.lapack

from .. import dtypes
from .. import numpy_api as tnp
from ..errors import GaugeError, GaugeWarning, ShapeError
from ..primitive import (Tensor, TracedTensor, bind, bind1, bind2, code_of_value, is_complex_value,
                         primitive, shape_of)
from . import elementwise as ew
from . import structural as st
from .contraction import einsum_strict
from .structural import scatter_slice_p


class LinalgConfig:
    """Defaults for the linear-algebra derivatives (read when a node is built).

    ``broadening``  Lorentzian epsilon for ``1/(s_i - s_j)``-type terms (default 1e-16:
                    small enough that the TRG reference values of DESIGN.md §6 are
                    reproduced to 1e-12; the common 1e-12 misses them by ~4e-11).
    ``gauge_check`` what a VJP does when a complex loss depends on the arbitrary phase of
                    singular vectors/eigenvectors: ``"raise"`` (default), ``"warn"``, ``"off"``.
    ``gauge_rtol``  relative size of the phase-dependent part above which that happens.
    """

    def __init__(self):
        self.broadening = 1e-16
        self.gauge_check = "raise"
        self.gauge_rtol = 1e-8

    def __repr__(self):
        return (f"LinalgConfig(broadening={self.broadening!r}, "
                f"gauge_check={self.gauge_check!r}, gauge_rtol={self.gauge_rtol!r})")


config = LinalgConfig()


# ------------------------------------------------------------------ small helpers

def _H(x):
    """Conjugate transpose of a matrix."""
    if type(x) is np.ndarray:
        return x.T.conj() if x.dtype.kind == "c" else x.T
    return ew.conj(st.transpose(x, (1, 0)))


def _mm(a, b):
    ta, tb = type(a), type(b)
    if ta is np.ndarray and tb is np.ndarray:
        return a @ b
    if (ta is TracedTensor and tb is TracedTensor and a.ndim == 2 and b.ndim == 2
            and a.dtype_code == b.dtype_code):
        return einsum_strict("ij,jk->ik", a, b)            # skip the surface's checks
    return tnp.matmul(a, b)


def _row(v):
    """A vector as a 1 x k matrix."""
    if type(v) is np.ndarray:
        return v[None, :]
    return st.reshape(v, (1, shape_of(v)[0]))


def _col(v):
    """A vector as a k x 1 matrix."""
    if type(v) is np.ndarray:
        return v[:, None]
    return st.reshape(v, (shape_of(v)[0], 1))


@functools.lru_cache(maxsize=256)
def _frozen(kind: str, n: int, code: int = dtypes.FLOAT64) -> np.ndarray:
    """Read-only rule constants (so traced mode hashes each one once)."""
    array = {"eye": np.eye,
             "tril": lambda n: np.tril(np.ones((n, n)), -1),
             "triu": lambda n: np.triu(np.ones((n, n)), 1)}[kind](n)
    array = array.astype(dtypes.DTYPES[code])
    array.flags.writeable = False
    return array


def _diag(x):
    """The diagonal of a square matrix."""
    if type(x) is np.ndarray:
        return np.diagonal(x)
    return einsum_strict("ij,ij->i", x, _frozen("eye", shape_of(x)[0], code_of_value(x)))


def _diag_embed(v):
    """The square matrix with diagonal ``v``."""
    if type(v) is np.ndarray:
        return np.diag(v)
    return einsum_strict("i,ij->ij", v, _frozen("eye", shape_of(v)[0], code_of_value(v)))


def _lorentz(x, eps, pin=None):
    """``x / (x^2 + eps)``; adding ``pin`` (ones where x is 0 by construction) to the
    denominator keeps those entries 0 even for eps = 0."""
    denominator = x * x + eps if pin is None else x * x + eps + pin
    return x / denominator


def _gap_factors(s_rows, s_cols, eps, same_indices: bool):
    """Broadened ``1/(2(s_j - s_i))`` and ``1/(2(s_j + s_i))`` for ``s_i`` in ``s_rows``,
    ``s_j`` in ``s_cols``.

    ``s_j / (s_j^2 - s_i^2)`` and ``s_i / (s_j^2 - s_i^2)`` are split into these partial
    fractions before broadening: at a degenerate pair the difference term vanishes while
    the sum term stays, which is the derivative of losses invariant under joint rotations
    of the degenerate singular vectors (``u s vh``, ``u vh``, TRG's ``u sqrt(s)`` halves).
    With ``same_indices`` (row i and column i are the same triplet) the entries i == j are
    pinned to 0, also for eps = 0 (that diagonal belongs to the ``ds`` and phase terms).
    """
    rows, cols = _col(s_rows), _row(s_cols)
    if not same_indices:
        return _lorentz(cols - rows, eps) * 0.5, _lorentz(cols + rows, eps) * 0.5
    pin, half_off = _leading_diagonal(shape_of(s_rows)[0], shape_of(s_cols)[0])
    minus = _lorentz(cols - rows, eps, pin) * 0.5
    plus = _lorentz(cols + rows, eps, pin) * half_off
    return minus, plus


@functools.lru_cache(maxsize=256)
def _leading_diagonal(rows: int, cols: int) -> tuple:
    """Read-only rows x cols arrays: ones at (i, i) (else 0), and 0.5 off that diagonal."""
    pin = np.eye(rows, cols)
    half_off = (1.0 - pin) * 0.5
    pin.flags.writeable = False
    half_off.flags.writeable = False
    return pin, half_off


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


# ------------------------------------------------------------------ gauge check

def _gauge_impl(params, x, residual, reference):
    mode, rtol, name = params
    if mode != "off":
        residual = np.asarray(residual)
        worst = float(np.max(np.abs(residual))) if residual.size else 0.0
        scale = float(np.max(np.asarray(reference))) if np.size(reference) else 0.0
        if worst > rtol * scale and worst > 0.0:
            message = (f"{name}: the loss depends on the arbitrary complex phase of the "
                       f"{'singular vectors' if name == 'svd' else 'eigenvectors'} (phase "
                       f"sensitivity {worst:.3g} against a cotangent scale {scale:.3g}); its "
                       "derivative is ill-defined. Make the loss phase-invariant (e.g. use "
                       "|v|^2 or u v^H), or set tp.linalg.config.gauge_check = 'warn'/'off'.")
            if mode == "raise":
                raise GaugeError(message)
            warnings.warn(message, GaugeWarning, stacklevel=2)
    return x


def _gauge_rule(params, x, residual, reference):
    return x


gauge_check_p = primitive("gauge_check", _gauge_impl, _gauge_rule,
                          format_params=lambda p: f"{p[2]} mode={p[0]}")
gauge_check_p.jvp = lambda params, t, out, xs: t[0]
gauge_check_p.vjp = lambda params, ct, out, xs, active: (ct, None, None)


def _gauge_checked(ct_a, residual, reference, name):
    """``ct_a``, after checking (when values exist: eagerly, or when the program runs)
    that the phase-dependent ``residual`` is negligible against ``reference``."""
    if config.gauge_check == "off":
        return ct_a
    params = (config.gauge_check, float(config.gauge_rtol), name)
    return bind(gauge_check_p, params, ct_a, residual, reference)


# ------------------------------------------------------------------ svd

@functools.lru_cache(maxsize=16)
def _lapack_svd(driver: str, dtype: np.dtype):
    return scipy.linalg.lapack.get_lapack_funcs((driver,), dtype=dtype)[0]


def _svd_impl(params, a):
    """LAPACK's gesdd, falling back to gesvd when gesdd does not converge (called
    directly: NumPy's wrapper costs more than the decomposition on small matrices)."""
    full_matrices, _ = params
    a = np.asarray(a)
    if not math.isfinite(abs(a.sum())) and not np.isfinite(a).all():
        return _nan_svd(a, full_matrices)   # NaN/Inf propagate (LAPACK would reject them)
    for driver in ("gesdd", "gesvd"):
        u, s, vh, info = _lapack_svd(driver, a.dtype)(a, compute_uv=1,
                                                      full_matrices=int(full_matrices))
        if info == 0:
            return u, s, vh
        if info < 0:                    # pragma: no cover - an argument error in LAPACK
            raise ValueError(f"svd: LAPACK {driver} rejected argument {-info}")
    raise np.linalg.LinAlgError(f"svd did not converge (gesdd nor gesvd) for a "
                                f"{a.dtype.name}{list(a.shape)} matrix")


def _nan_svd(a, full_matrices):
    m, n = a.shape
    k = min(m, n)
    real = np.empty(0, dtype=a.dtype).real.dtype
    ushape, vshape = ((m, m), (n, n)) if full_matrices else ((m, k), (k, n))
    return (np.full(ushape, np.nan, a.dtype), np.full(k, np.nan, real),
            np.full(vshape, np.nan, a.dtype))


def _svd_rule(params, a):
    full_matrices, _ = params
    if a.ndim != 2:
        raise ShapeError(f"svd: expected a matrix, got {a.dtype.name}{list(a.shape)}")
    m, n = a.shape
    k = min(m, n)
    code = a.dtype_code
    ushape, vshape = ((m, m), (n, n)) if full_matrices else ((m, k), (k, n))
    return [(code, ushape), (dtypes.real_code(code), (k,)), (code, vshape)]


def _check_reduced(params, a, what):
    m, n = shape_of(a)
    if params[0] and m != n:
        raise ShapeError(f"svd {what}: with full_matrices=True the extra singular vectors "
                         "are not unique, so they have no derivative; use "
                         "full_matrices=False")


def _svd_jvp(params, tangents, out, xs):
    _check_reduced(params, xs[0], "JVP")
    eps = params[1]
    (da,) = tangents
    a = xs[0]
    u, s, vh = out
    v = _H(vh)
    m, n = shape_of(a)
    k = shape_of(s)[0]
    dp = _mm(_mm(_H(u), da), v)                     # U^H dA V
    ds = tnp.real(_diag(dp))
    dph = _H(dp)
    f_minus, f_plus = _gap_factors(s, s, eps, same_indices=True)
    symmetric, skew = f_minus * (dp + dph), f_plus * (dp - dph)
    omega_u = symmetric + skew                      # U^H dU (off the diagonal)
    omega_v = symmetric - skew                      # V^H dV
    inv_s = _lorentz(s, eps)
    if is_complex_value(a):
        phase = _diag_embed(1j * tnp.imag(_diag(dp)) * inv_s * 0.5)
        omega_u = omega_u + phase
        omega_v = omega_v - phase
    du = _mm(u, omega_u)
    if m > k:
        du = du + (_mm(da, v) - _mm(u, dp)) * _row(inv_s)
    dv = _mm(v, omega_v)
    if n > k:
        dv = dv + (_mm(_H(da), u) - _mm(v, dph)) * _row(inv_s)
    return du, ds, _H(dv)


def _leading_extent(g, axis: int, full: int) -> int:
    """How many leading entries along ``axis`` the cotangent ``g`` can have non-zero.

    Truncation (``u[:, :k]``, ``s[:k]``, ``vh[:k]``) makes the cotangents of the discarded
    triplets zero.  A traced cotangent shows it structurally (it is the zero-padding
    ``scatter_slice`` of the slice); a concrete one is inspected (O(size), against the
    O(n^3) products that knowing it saves)."""
    if g is None:
        return 0
    if type(g) is TracedTensor:
        if g.prim is scatter_slice_p:
            shape, spec = g.params
            start, stop, step = spec[axis]
            if start == 0 and step == 1 and all(
                    spec[i] == (0, d, 1) for i, d in enumerate(shape) if i != axis):
                return stop
        return full
    array = g.data if type(g) is Tensor else np.asarray(g)
    if full and (array.flat[-1] != 0 or array[(slice(None),) * axis + (full - 1,)].any()):
        return full                        # the untruncated case, decided cheaply
    others = tuple(i for i in range(array.ndim) if i != axis)
    nonzero = np.flatnonzero(np.any(array != 0, axis=others) if others else array != 0)
    return int(nonzero[-1]) + 1 if nonzero.size else 0


def _leading_block(g, axis: int, extent: int, full: int):
    """``g`` restricted to its first ``extent`` entries along ``axis``."""
    if g is None or extent == full:
        return g
    if (type(g) is TracedTensor and g.prim is scatter_slice_p
            and _leading_extent(g, axis, full) == extent):
        return g.inputs[0]
    index = (slice(None),) * axis + (slice(0, extent),)
    return g[index]


def _pad_rows(block, rows: int):
    """``block`` (r x c) placed in the top rows of a ``rows`` x c zero matrix."""
    r, c = shape_of(block)
    if r == rows:
        return block
    return bind(scatter_slice_p, ((rows, c), ((0, r, 1), (0, c, 1))), block)


def _svd_vjp(params, cts, out, xs, active):
    """``gA = U core V^H`` plus the projector terms of rectangular inputs.

    ``core = Fm o (A + B) + Fp o (A - B) + diag(gs) + i Im(diag(J - K))/(2 s)`` with
    ``J = U^H gU``, ``K = V^H gV``, ``A = J - J^H``, ``B = K - K^H``.  Only the leading
    ``k1`` triplets carry cotangents (truncation), so ``J``, ``K`` are computed as
    ``kk x k1`` blocks and ``core`` is non-zero only in its first ``k1`` rows and columns:
    the cost is O(m n k1) instead of O(m n kk).
    """
    _check_reduced(params, xs[0], "VJP")
    eps = params[1]
    a = xs[0]
    gu, gs, gvh = cts
    u, s, vh = out
    m, n = shape_of(a)
    kk = shape_of(s)[0]
    k1 = max(_leading_extent(gu, 1, kk), _leading_extent(gs, 0, kk),
             _leading_extent(gvh, 0, kk))
    if k1 == 0:
        return (st.full_like(a, 0),)
    gu = _leading_block(gu, 1, k1, kk)
    gs = _leading_block(gs, 0, k1, kk)
    gvh = _leading_block(gvh, 0, k1, kk)
    partial = k1 < kk
    u1, s1, vh1 = (u[:, :k1], s[:k1], vh[:k1]) if partial else (u, s, vh)
    complex_input = is_complex_value(a)
    j = None if gu is None else _mm(_H(u), gu)              # kk x k1
    kmat = None if gvh is None else _mm(vh, _H(gvh))        # kk x k1

    def skew_left(x):                  # (X - X^H)[:, :k1] when X has k1 non-zero columns
        return x - _pad_rows(_H(x[:k1] if partial else x), kk)

    a_left = None if j is None else skew_left(j)
    b_left = None if kmat is None else skew_left(kmat)
    f_minus, f_plus = _gap_factors(s, s1, eps, same_indices=True)
    core = _combine(f_minus, f_plus, a_left, b_left)
    if gs is not None:
        core = _add(core, _pad_rows(_diag_embed(gs), kk))
    inv_s1 = _lorentz(s1, eps)
    if complex_input:
        im_j = 0.0 if j is None else tnp.imag(_diag(j[:k1] if partial else j))
        im_k = 0.0 if kmat is None else tnp.imag(_diag(kmat[:k1] if partial else kmat))
        core = core + _pad_rows(_diag_embed(1j * (im_j - im_k) * inv_s1 * 0.5), kk)
    ct_a = _mm(_mm(u, core), vh1)
    if partial:
        a_top = None if j is None else -_H(j[k1:])           # (X - X^H)[:k1, k1:]
        b_top = None if kmat is None else -_H(kmat[k1:])
        tm, tp_ = _gap_factors(s1, s[k1:], eps, same_indices=False)
        top = _combine(tm, tp_, a_top, b_top)
        if top is not None:
            ct_a = ct_a + _mm(u1, _mm(top, vh[k1:]))
    if gu is not None and m > kk:
        ct_a = ct_a + _mm((gu - _mm(u, j)) * _row(inv_s1), vh1)
    if gvh is not None and n > kk:
        ct_a = ct_a + _mm(u1 * _row(inv_s1), gvh - _mm(_H(kmat), vh))
    if complex_input and (j is not None or kmat is not None):
        residual = _add(None if j is None else tnp.imag(_diag(j[:k1] if partial else j)),
                        None if kmat is None else tnp.imag(
                            _diag(kmat[:k1] if partial else kmat)))
        reference = _add(None if j is None else tnp.amax(tnp.abs(j)),
                         None if kmat is None else tnp.amax(tnp.abs(kmat)))
        ct_a = _gauge_checked(ct_a, residual, reference, "svd")
    return (ct_a,)


def _combine(f_minus, f_plus, a, b):
    """``Fm o (A + B) + Fp o (A - B)`` with None for zero blocks."""
    if a is None and b is None:
        return None
    if b is None:
        return (f_minus + f_plus) * a
    if a is None:
        return (f_minus - f_plus) * b
    return f_minus * (a + b) + f_plus * (a - b)


svd_p = primitive("svd", _svd_impl, _svd_rule, n_outputs=3,
                  format_params=lambda p: f"full_matrices={p[0]} eps={p[1]:g}")
svd_p.jvp = _svd_jvp
svd_p.vjp = _svd_vjp


def svd(a, full_matrices: bool = False, *, eps: float | None = None):
    """``u, s, vh`` with ``a = u @ diag(s) @ vh``, ``s`` descending (NumPy's conventions).

    ``eps``: Lorentzian broadening of the derivative (default ``config.broadening``).
    Differentiable in every output; truncating by slicing (``u[:, :k]``) gives the exact
    derivative of the truncated function.  ``full_matrices=True`` is differentiable only
    for square matrices.
    """
    eps = config.broadening if eps is None else float(eps)
    if eps < 0:
        raise ValueError(f"svd: eps must be >= 0, got {eps}")
    _require_matrix("svd", a)
    return bind(svd_p, (bool(full_matrices), eps), _float_operand(a))


# ------------------------------------------------------------------ qr

def _qr_impl(params, a):
    return np.linalg.qr(a, mode="reduced")


def _qr_rule(params, a):
    if a.ndim != 2:
        raise ShapeError(f"qr: expected a matrix, got {a.dtype.name}{list(a.shape)}")
    m, n = a.shape
    k = min(m, n)
    return [(a.dtype_code, (m, k)), (a.dtype_code, (k, n))]


def _tril(x):
    """The strictly lower triangle."""
    return x * _frozen("tril", shape_of(x)[0])


def _triu(x):
    """The strictly upper triangle."""
    return x * _frozen("triu", shape_of(x)[0])


def _solve_right(b, r):
    """``b @ inv(r)``."""
    return tnp.transpose(solve(tnp.transpose(r), tnp.transpose(b)))


def _solve_right_h(b, r):
    """``b @ inv(r)^H``."""
    return _H(solve(r, _H(b)))


def _hstack(left, right, n_right):
    """``[left right]`` for matrices (``right`` None means zeros), by placing each block
    into zeros with ``scatter_slice`` (whose transpose is the slice)."""
    from .structural import scatter_slice_p
    k, n_left = shape_of(left)
    shape = (k, n_left + n_right)
    result = bind(scatter_slice_p, (shape, ((0, k, 1), (0, n_left, 1))), left)
    if right is not None:
        spec = ((0, k, 1), (n_left, n_left + n_right, 1))
        result = result + bind(scatter_slice_p, (shape, spec), right)
    return result


def _qr_square_tall_jvp(da, q, r):
    """Tangents of Q, R for m >= n (R square and invertible)."""
    c = _mm(_H(q), _solve_right(da, r))             # Q^H dA R^-1
    lower = _tril(c)
    omega = lower - _H(lower)
    if is_complex_value(c):
        omega = omega + _diag_embed(1j * tnp.imag(_diag(c)))
    dq = _solve_right(da, r) + _mm(q, omega - c)
    dr = _mm(c - omega, r)
    return dq, dr


def _qr_square_tall_vjp(gq, gr, q, r):
    x = None if gr is None else _mm(gr, _H(r))
    if gq is not None:
        x = _add(x, -_mm(_H(q), gq))
    upper = _triu(x)
    sym = upper + _H(upper) + _diag_embed(tnp.real(_diag(x)))     # Hermitian copy of triu(x)
    b = _mm(q, sym) if gq is None else gq + _mm(q, sym)
    return _solve_right_h(b, r)


def _qr_jvp(params, tangents, out, xs):
    (da,) = tangents
    q, r = out
    m, n = shape_of(xs[0])
    if m >= n:
        return _qr_square_tall_jvp(da, q, r)
    # wide: a = q [r1 r2] with a1 = q r1 a square QR and r2 = q^H a2
    dq, dr1 = _qr_square_tall_jvp(da[:, :m], q, r[:, :m])
    dr2 = _mm(_H(dq), xs[0][:, m:]) + _mm(_H(q), da[:, m:])
    return dq, _hstack(dr1, dr2, n - m)


def _qr_vjp(params, cts, out, xs, active):
    gq, gr = cts
    q, r = out
    a = xs[0]
    m, n = shape_of(a)
    if m >= n:
        return (_qr_square_tall_vjp(gq, gr, q, r),)
    gr1 = None if gr is None else gr[:, :m]
    gr2 = None if gr is None else gr[:, m:]
    if gr2 is not None:
        gq = _add(gq, _mm(a[:, m:], _H(gr2)))
    ga1 = _qr_square_tall_vjp(gq, gr1, q, r[:, :m])
    return (_hstack(ga1, None if gr2 is None else _mm(q, gr2), n - m),)


qr_p = primitive("qr", _qr_impl, _qr_rule, n_outputs=2)
qr_p.jvp = _qr_jvp
qr_p.vjp = _qr_vjp


def qr(a, mode: str = "reduced"):
    """Reduced QR, ``a = q @ r`` (NumPy's conventions; tall, square and wide)."""
    if mode != "reduced":
        raise ValueError(f"qr: only mode='reduced' is supported, got {mode!r}")
    _require_matrix("qr", a)
    return bind(qr_p, None, _float_operand(a))


# ------------------------------------------------------------------ eigh

def _eigh_rule(params, a):
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ShapeError(f"eigh: expected a square matrix, got {a.dtype.name}{list(a.shape)}")
    n = a.shape[0]
    return [(dtypes.real_code(a.dtype_code), (n,)), (a.dtype_code, (n, n))]


def _eigh_jvp(params, tangents, out, xs):
    (da,) = tangents
    w, v = out
    n = shape_of(w)[0]
    dp = _mm(_mm(_H(v), da), v)
    dw = tnp.real(_diag(dp))
    eye = _frozen("eye", n)
    gaps = _row(w) - _col(w)                                   # w_j - w_i
    dv = _mm(v, _lorentz(gaps, params, eye) * dp)
    return dw, dv


def _eigh_vjp(params, cts, out, xs, active):
    gw, gv = cts
    w, v = out
    n = shape_of(w)[0]
    core = None if gw is None else _diag_embed(gw)
    if gv is not None:
        eye = _frozen("eye", n)
        gaps = _row(w) - _col(w)
        j = _mm(_H(v), gv)
        core = _add(core, _lorentz(gaps, params, eye) * j)
    ct_a = _mm(_mm(v, core), _H(v))
    if gv is not None and is_complex_value(v):
        ct_a = _gauge_checked(ct_a, tnp.imag(_diag(j)), tnp.amax(tnp.abs(j)), "eigh")
    return (ct_a,)


eigh_p = primitive("eigh", lambda eps, a: np.linalg.eigh(a), _eigh_rule, n_outputs=2,
                   format_params=lambda eps: f"eps={eps:g}")
eigh_p.jvp = _eigh_jvp
eigh_p.vjp = _eigh_vjp


def eigh(a, *, eps: float | None = None, symmetrize_input: bool = True):
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix (NumPy's order).

    With ``symmetrize_input`` (default) the decomposition is of ``(a + a^H)/2``, so the
    derivative is that of a function of the whole matrix; without it LAPACK reads only the
    lower triangle and perturbations must be Hermitian.  ``eps`` as for :func:`svd`.
    """
    eps = config.broadening if eps is None else float(eps)
    if eps < 0:
        raise ValueError(f"eigh: eps must be >= 0, got {eps}")
    _require_matrix("eigh", a)
    shape = shape_of(a)
    if shape[0] != shape[1]:
        raise ShapeError(f"eigh: expected a square matrix, got shape {list(shape)}")
    a = _float_operand(a)
    if symmetrize_input:
        a = (a + _H(a)) * 0.5
    return bind(eigh_p, eps, a)


# ------------------------------------------------------------------ solve

def _solve_rule(params, a, b):
    if a.ndim != 2 or a.shape[0] != a.shape[1] or b.ndim not in (1, 2) \
            or b.shape[0] != a.shape[0] or a.dtype_code != b.dtype_code:
        raise ShapeError(f"solve: expected a square matrix and a matching right-hand side, "
                         f"got {a.dtype.name}{list(a.shape)} and {b.dtype.name}{list(b.shape)}")
    return b


def _outer_or_mm(x, y):
    """``x @ y^H`` for matrices, the outer product ``x y^H`` for vectors."""
    if len(shape_of(x)) == 1:
        return tnp.einsum("i,j->ij", x, tnp.conj(y))
    return _mm(x, _H(y))


solve_p = primitive("solve", lambda params, a, b: np.linalg.solve(a, b), _solve_rule)
solve_p.jvp = lambda params, t, out, xs: solve(
    xs[0], _add(t[1], None if t[0] is None else -_mm(t[0], out)))


def _solve_vjp(params, ct, out, xs, active):
    gb = solve(_H(xs[0]), ct)
    return (-_outer_or_mm(gb, out) if active[0] else None), gb


solve_p.vjp = _solve_vjp


def solve(a, b):
    """``x`` with ``a @ x = b`` (``b`` a vector or a matrix of right-hand sides)."""
    if not (tnp._is_tensor(a) or tnp._is_tensor(b)):
        return np.linalg.solve(a, b)
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) != 2 or sa[0] != sa[1] or len(sb) not in (1, 2) or sb[0] != sa[0]:
        raise ShapeError(f"solve: expected a square matrix and a matching right-hand side "
                         f"(vector or matrix), got shapes {list(sa)} and {list(sb)}")
    code = tnp.result_code("solve", a, b)
    traced = any(type(x) is tnp.TracedTensor for x in (a, b))
    return bind2(solve_p, None, tnp._operand(a, code, traced), tnp._operand(b, code, traced))


# ------------------------------------------------------------------ norm

def norm(x, ord=None, axis=None, keepdims: bool = False):  # noqa: A002 - NumPy's name
    """Vector and matrix norms (NumPy's ``linalg.norm``) for ``ord`` in None/'fro' (2-norm
    of all entries), 1, 2, inf for vectors and 'nuc', 2 for matrices (via the SVD).  The
    2-norm has derivative ``x/|x|`` and the subgradient 0 at ``x = 0``."""
    if not tnp._is_tensor(x):
        return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    ndim = len(shape_of(x))
    axes = tuple(range(ndim)) if axis is None else (
        (axis,) if isinstance(axis, int) else tuple(axis))
    matrix = len(axes) == 2 or (axis is None and ndim == 2)
    if ord in (None, "fro") or (ord == 2 and not matrix):
        if ord == "fro" and not matrix:
            raise ValueError("norm: ord='fro' needs a matrix")
        result = _two_norm(x, axes)
    elif ord == 1 and not matrix:
        result = tnp.sum(tnp.abs(x), axis=axes)
    elif ord in (np.inf, float("inf")) and not matrix:
        result = tnp.amax(tnp.abs(x), axis=axes)
    elif matrix and ord in ("nuc", 2) and ndim == 2:
        s = svd(x)[1]
        result = s.sum() if ord == "nuc" else s[0]
    else:
        raise ValueError(f"norm: ord={ord!r} is not supported for "
                         f"{'matrices' if matrix else 'vectors'}")
    if keepdims:
        shape = tuple(1 if i in [a % ndim for a in axes] else d
                      for i, d in enumerate(shape_of(x)))
        result = tnp.reshape(result, shape)
    return result


def _two_norm(x, axes):
    squares = tnp.real(x * tnp.conj(x)) if is_complex_value(x) else x * x
    total = tnp.sum(squares, axis=axes)
    return _safe_sqrt(total)


def _safe_sqrt_rule(params, x):
    return x


def _safe_sqrt_derivative_factor(out):
    """``1/(2 sqrt)``, with 0 where the square root is 0 (the norm's subgradient)."""
    from . import elementwise as ew
    from .structural import full_like
    zero = ew.eq_mask(out, full_like(out, 0.0))
    return 0.5 * (1.0 - zero) / (out + zero)


safe_sqrt_p = primitive("norm_sqrt", lambda params, x: np.sqrt(x), _safe_sqrt_rule,
                        array_fn=np.sqrt, elementwise=True)
safe_sqrt_p.jvp = lambda params, t, out, xs: t[0] * _safe_sqrt_derivative_factor(out)
safe_sqrt_p.vjp = lambda params, ct, out, xs, active: (ct * _safe_sqrt_derivative_factor(out),)


def _safe_sqrt(x):
    return bind1(safe_sqrt_p, None, x)


# ------------------------------------------------------------------ argument checks

def _require_matrix(name, a):
    shape = shape_of(a)
    if len(shape) != 2:
        raise ShapeError(f"{name}: expected a matrix (2-d), got shape {list(shape)}; "
                         "batched decompositions are not supported")


def _float_operand(a):
    """Tensors pass through; arrays become floating-point arrays."""
    if tnp._is_tensor(a):
        return a
    array = np.asarray(a)
    code = dtypes.value_code(array.dtype)
    return array.astype(dtypes.DTYPES[code], copy=False)

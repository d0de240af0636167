"""``tp.linalg`` against independent truth: NumPy's values, closed-form derivatives and
finite differences (``tenpy_ad.testing.check_grads``).

1. forward values follow NumPy (svd, qr, eigh, solve, norm), with plain ndarrays, eager
   tensors and traced placeholders;
2. gradients of gauge-invariant losses, first and second order, square/tall/wide,
   float64/complex128 (eager == traced is checked by ``check_grads(eager=True)``);
3. repeated singular values: with the default Lorentzian broadening the gradients are
   finite and equal closed forms / finite differences of gauge-invariant losses (sums of
   singular values, projectors, the polar factor, the reconstruction); ``eps=0`` gives NaN;
4. the derivative of the truncated SVD (rank-k approximation);
5. the complex gauge check (GaugeError / GaugeWarning) for svd and eigh;
6. the gesdd -> gesvd fallback;
7. the svd3 chain: correct gradient, depth 1000, counters linear in depth, nothing leaked;
8. bad input fails clearly.
"""
from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.linalg.lapack

import tenpy_ad as tp
import tenpy_ad.ops.linalg.svd as linalg_ops
from tenpy_ad.errors import GaugeError, GaugeWarning, ShapeError
from tenpy_ad.models.chains import build_chain, chain, start_value
from tenpy_ad.testing import check_grads

MODES = ("numpy", "eager", "traced")
DTYPES = ("float64", "complex128")
SHAPES = ((4, 4), (5, 3), (3, 5))
SHAPE_IDS = ["square", "tall", "wide"]


DEFAULT_CONFIG = (1e-16, "raise", 1e-8)       # broadening, gauge_check, gauge_rtol


def test_linalg_config_defaults():
    config = tp.linalg.config
    assert (config.broadening, config.gauge_check, config.gauge_rtol) == DEFAULT_CONFIG


@pytest.fixture(autouse=True)
def restore_linalg_config():
    """Every test runs with the documented defaults of tp.linalg.config and leaves the
    config as it found it, whatever the test changes."""
    config = tp.linalg.config
    saved = (config.broadening, config.gauge_check, config.gauge_rtol)
    config.broadening, config.gauge_check, config.gauge_rtol = DEFAULT_CONFIG
    try:
        yield config
    finally:
        config.broadening, config.gauge_check, config.gauge_rtol = saved


# ------------------------------------------------------------------ helpers

def rand(rng, shape, dtype="float64"):
    x = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def unitary(rng, n, dtype="float64"):
    """A Haar-like random orthogonal/unitary matrix."""
    q, r = np.linalg.qr(rand(rng, (n, n), dtype))
    d = np.diag(r)
    return q * (d / np.abs(d))


def hermitian(rng, n, dtype="float64"):
    b = rand(rng, (n, n), dtype)
    return (b + b.conj().T) / 2


def run(fn, mode, *arrays):
    """``fn`` applied to ``arrays`` as ndarrays / eager tensors / traced placeholders; the
    outputs (one or a tuple) come back as ndarrays, after checking their kind."""
    if mode == "numpy":
        out = fn(*arrays)
        many = isinstance(out, (tuple, list))
        outs = list(out) if many else [out]
        assert all(isinstance(o, (np.ndarray, np.generic, float)) for o in outs)
    elif mode == "eager":
        out = fn(*[tp.tensor(a) for a in arrays])
        many = isinstance(out, (tuple, list))
        outs = list(out) if many else [out]
        assert all(isinstance(o, tp.Tensor) for o in outs)
        outs = [np.asarray(o) for o in outs]
    else:
        xs = [tp.input(a.shape, a.dtype) for a in arrays]
        out = fn(*xs)
        many = isinstance(out, (tuple, list))
        outs = list(out) if many else [out]
        assert all(isinstance(o, tp.TracedTensor) for o in outs)
        outs = tp.evaluate(outs, dict(zip(xs, arrays)))
    outs = [np.asarray(o) for o in outs]
    return tuple(outs) if many else outs[0]


def grad_in(mode, loss_fn, a):
    """d loss / d a (real scalar loss) in eager or traced mode."""
    if mode == "eager":
        t = tp.tensor(a, requires_grad=True)
        loss_fn(t).backward()
        return np.asarray(t.grad)
    x = tp.input(a.shape, a.dtype)
    return np.asarray(tp.evaluate(tp.ad.grad(loss_fn(x), x), {x: a}))


def assert_orthonormal_columns(q, atol=1e-12):
    k = q.shape[1]
    np.testing.assert_allclose(q.conj().T @ q, np.eye(k), atol=atol)


def svd(x, **kwargs):
    return tp.linalg.svd(x, **kwargs)


# ================================================================== 1. forward values

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_svd_forward(mode, dtype, shape, rng):
    a = rand(rng, shape, dtype)
    m, n = shape
    k = min(m, n)
    u, s, vh = run(tp.linalg.svd, mode, a)
    assert u.shape == (m, k) and s.shape == (k,) and vh.shape == (k, n)
    assert u.dtype == a.dtype and vh.dtype == a.dtype and s.dtype == np.float64
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-12, atol=1e-13)
    assert np.all(np.diff(s) <= 0) and s[-1] > 0
    assert_orthonormal_columns(u)
    assert_orthonormal_columns(vh.conj().T)
    np.testing.assert_allclose((u * s) @ vh, a, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_svd_full_matrices_forward(mode, shape, rng):
    a = rand(rng, shape, "complex128")
    m, n = shape
    k = min(m, n)
    u, s, vh = run(lambda x: tp.linalg.svd(x, full_matrices=True), mode, a)
    assert u.shape == (m, m) and s.shape == (k,) and vh.shape == (n, n)
    assert_orthonormal_columns(u)
    assert_orthonormal_columns(vh.conj().T)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose((u[:, :k] * s) @ vh[:k], a, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_qr_forward(mode, dtype, shape, rng):
    a = rand(rng, shape, dtype)
    m, n = shape
    k = min(m, n)
    q, r = run(tp.linalg.qr, mode, a)
    assert q.shape == (m, k) and r.shape == (k, n)
    assert q.dtype == a.dtype and r.dtype == a.dtype
    assert_orthonormal_columns(q)
    assert np.all(np.tril(r, -1) == 0)
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    q_np, r_np = np.linalg.qr(a)                    # the same conventions (signs) as NumPy
    np.testing.assert_allclose(q, q_np, atol=1e-12)
    np.testing.assert_allclose(r, r_np, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_forward(mode, dtype, rng):
    h = hermitian(rng, 5, dtype)
    w, v = run(tp.linalg.eigh, mode, h)
    w_np = np.linalg.eigh(h)[0]
    assert w.shape == (5,) and v.shape == (5, 5)
    assert w.dtype == np.float64 and v.dtype == h.dtype
    np.testing.assert_allclose(w, w_np, rtol=1e-12, atol=1e-13)
    assert np.all(np.diff(w) > 0)
    assert_orthonormal_columns(v)
    np.testing.assert_allclose((v * w) @ v.conj().T, h, atol=1e-12)
    # a non-Hermitian input is decomposed as (a + a^H)/2 (symmetrize_input=True, documented)
    a = rand(rng, (5, 5), dtype)
    w2, _ = run(tp.linalg.eigh, mode, a)
    np.testing.assert_allclose(w2, np.linalg.eigh((a + a.conj().T) / 2)[0], atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rhs_shape", [(4,), (4, 3)], ids=["vector", "matrix"])
def test_solve_forward(mode, dtype, rhs_shape, rng):
    a = rand(rng, (4, 4), dtype) + 4 * np.eye(4)
    b = rand(rng, rhs_shape, dtype)
    x = run(tp.linalg.solve, mode, a, b)
    assert x.shape == rhs_shape and x.dtype == a.dtype
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(a @ x, b, atol=1e-12)


NORM_CASES = [
    ((5,), {}), ((5,), {"ord": 1}), ((5,), {"ord": 2}), ((5,), {"ord": np.inf}),
    ((5,), {"ord": 2, "keepdims": True}),
    ((3, 4), {}), ((3, 4), {"ord": "fro"}), ((3, 4), {"ord": "nuc"}), ((3, 4), {"ord": 2}),
    ((4, 3), {"ord": 2}), ((3, 4), {"ord": "nuc", "keepdims": True}),
    ((3, 4), {"ord": "fro", "axis": (0, 1)}), ((3, 4), {"axis": 0}), ((3, 4), {"axis": -1}),
    ((3, 4), {"ord": 1, "axis": 1}), ((3, 4), {"ord": np.inf, "axis": 0}),
    ((3, 4), {"ord": 2, "axis": 1}), ((3, 4), {"axis": 1, "keepdims": True}),
    ((2, 3, 4), {}), ((2, 3, 4), {"axis": (0, 2)}), ((2, 3, 4), {"ord": 1, "axis": -1}),
    ((2, 3, 4), {"axis": (2, 0), "keepdims": True}),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,kwargs", NORM_CASES,
                         ids=[f"{'x'.join(map(str, s))}-{k}" for s, k in NORM_CASES])
def test_norm_forward(mode, dtype, shape, kwargs, rng):
    a = rand(rng, shape, dtype)
    expected = np.linalg.norm(a, **kwargs)
    got = run(lambda x: tp.linalg.norm(x, **kwargs), mode, a)
    assert got.shape == np.shape(expected)
    assert not np.iscomplexobj(got)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


# ================================================================== 2. gradient checks

def svd_values(x):
    return svd(x)[1]


def svd_reconstruction(x):
    u, s, vh = svd(x)
    return (u * s) @ vh


def svd_left_projector(x):
    u = svd(x)[0][:, :2]
    return u @ tp.conj(u).T


def svd_right_projector(x):
    vh = svd(x)[2][:2]
    return tp.conj(vh).T @ vh


def svd_abs_u_squared(x):
    return tp.abs(svd(x)[0]) ** 2


def svd_abs_vh_squared(x):
    return tp.abs(svd(x)[2]) ** 2


def svd_full_matrices_square(x):
    u, s, vh = svd(x, full_matrices=True)
    return (u * s) @ vh + tp.abs(u) ** 2 * s[0]


def qr_q(x):
    return tp.linalg.qr(x)[0]


def qr_r(x):
    return tp.linalg.qr(x)[1]


def eigh_values(x):
    return tp.linalg.eigh(x)[0]


def eigh_projector(x):
    v = tp.linalg.eigh(x)[1][:, :2]
    return v @ tp.conj(v).T


def eigh_abs_v_squared(x):
    return tp.abs(tp.linalg.eigh(x)[1]) ** 2


def eigh_reconstruction(x):
    w, v = tp.linalg.eigh(x)
    return (v * w) @ tp.conj(v).T


SVD_LOSSES = [svd_values, svd_reconstruction, svd_left_projector, svd_right_projector,
              svd_abs_u_squared, svd_abs_vh_squared]
QR_LOSSES = [qr_q, qr_r]
EIGH_LOSSES = [eigh_values, eigh_projector, eigh_abs_v_squared, eigh_reconstruction]

FIRST_ORDER = ([(f, s) for f in SVD_LOSSES + QR_LOSSES for s in SHAPES]
               + [(f, (4, 4)) for f in EIGH_LOSSES] + [(svd_full_matrices_square, (4, 4))])
SECOND_ORDER = ([(f, s) for f in (svd_values, svd_left_projector, svd_right_projector, qr_q,
                                  qr_r) for s in SHAPES]
                + [(eigh_values, (4, 4)), (eigh_projector, (4, 4))])


def _ids(cases):
    return [f"{f.__name__}-{'x'.join(map(str, s))}" for f, s in cases]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn,shape", FIRST_ORDER, ids=_ids(FIRST_ORDER))
def test_gradients_first_order(fn, shape, dtype, rng):
    check_grads(fn, [rand(rng, shape, dtype)], order=1, rng=rng, eager=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn,shape", SECOND_ORDER, ids=_ids(SECOND_ORDER))
def test_gradients_second_order(fn, shape, dtype, rng):
    check_grads(fn, [rand(rng, shape, dtype)], order=2, rng=rng, eager=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_values_gradient_closed_form(dtype, rng):
    """d(sum s)/dA = U V^H and d(s_0)/dA = u_0 v_0^H for a generic rectangular matrix."""
    a = rand(rng, (5, 3), dtype)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    for mode in ("eager", "traced"):
        np.testing.assert_allclose(grad_in(mode, lambda x: svd(x)[1].sum(), a), u @ vh,
                                   atol=1e-12)
        np.testing.assert_allclose(grad_in(mode, lambda x: svd(x)[1][0], a),
                                   np.outer(u[:, 0], vh[0]), atol=1e-12)


# ================================================================== 3. degenerate spectra

def _degenerate(kind, dtype, seed=3):
    """(a, q1, q2, s) with a = q1 diag(s) q2^H: repeated singular values (to rounding)."""
    rng = np.random.default_rng(seed)
    q1, q2 = unitary(rng, 4, dtype), unitary(rng, 4, dtype)
    s = {"3-1-1-0.5": [3.0, 1.0, 1.0, 0.5], "3-1-1-0": [3.0, 1.0, 1.0, 0.0],
         "3-1-1-1e-20": [3.0, 1.0, 1.0, 1e-20], "2-2-2-2": [2.0, 2.0, 2.0, 2.0]}[kind]
    s = np.array(s)
    return (q1 * s) @ q2.conj().T, q1, q2, s


FULL_RANK = ("3-1-1-0.5", "2-2-2-2")
ALL_KINDS = ("3-1-1-0.5", "3-1-1-0", "3-1-1-1e-20", "2-2-2-2")
GRAD_MODES = ("eager", "traced")


@pytest.mark.parametrize("mode", GRAD_MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", FULL_RANK)
def test_degenerate_nuclear_norm_gradient(kind, dtype, mode):
    """d(sum s)/dA = U V^H (the polar factor, unique for full rank despite degeneracy)."""
    a, q1, q2, _ = _degenerate(kind, dtype)
    u, _, vh = np.linalg.svd(a)
    np.testing.assert_allclose(u @ vh, q1 @ q2.conj().T, atol=1e-12)   # the truth is unique
    g = grad_in(mode, lambda x: svd(x)[1].sum(), a)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, q1 @ q2.conj().T, atol=1e-12)


@pytest.mark.parametrize("mode", GRAD_MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ALL_KINDS)
def test_degenerate_frobenius_gradient(kind, dtype, mode):
    """sum(s^2) = ||A||_F^2 has gradient 2A."""
    a, _, _, _ = _degenerate(kind, dtype)
    g = grad_in(mode, lambda x: (svd(x)[1] ** 2).sum(), a)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, 2 * a, atol=1e-12)


@pytest.mark.parametrize("mode", GRAD_MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ("3-1-1-0.5", "3-1-1-0", "3-1-1-1e-20"))
@pytest.mark.parametrize("k", (1, 3))
def test_degenerate_partial_sum_gradient(k, kind, dtype, mode):
    """sum(s[:k]) with a gap after k (3 | 1 1 | x): gradient U_k V_k^H."""
    a, q1, q2, _ = _degenerate(kind, dtype)
    g = grad_in(mode, lambda x: svd(x)[1][:k].sum(), a)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, q1[:, :k] @ q2[:, :k].conj().T, atol=1e-10)


def reconstructed_sum(x):
    u, s, vh = svd(x)
    return ((u * s) @ vh).sum().real


@pytest.mark.parametrize("mode", GRAD_MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("gap", (1e-3, 1e-4))
def test_nearly_degenerate_reconstruction_gradient(gap, dtype, mode):
    """Re sum((u s) vh) = Re sum(A) has gradient ones; with a small gap (gap^2 >> eps)
    the broadened rule is exact to O(eps / gap^2)."""
    rng = np.random.default_rng(5)
    q1, q2 = unitary(rng, 4, dtype), unitary(rng, 4, dtype)
    a = (q1 * np.array([3.0, 1.0 + gap, 1.0, 0.5])) @ q2.conj().T
    g = grad_in(mode, reconstructed_sum, a)
    np.testing.assert_allclose(g, np.ones_like(a), atol=1e-7)


@pytest.mark.parametrize("mode", GRAD_MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ("3-1-1-0.5", "3-1-1-0", "2-2-2-2"))
def test_degenerate_reconstruction_gradient_semantics(kind, dtype, mode):
    """At an exact degeneracy the derivative is 0/0 in one place: the symmetric part
    (M + M^H)/2 of the degenerate block of M = U^H gA V enters as (s_j - s_i) X /
    (s_j - s_i).  No rule can recover it from the cotangents, and the broadening sets it
    to 0 (the documented meaning of broadening); so is the phase term of a zero singular
    value.  So for Re sum((u s) vh) the gradient is ones minus exactly those parts:
    finite, and predictable."""
    a, _, _, s_true = _degenerate(kind, dtype)
    g = grad_in(mode, reconstructed_sum, a)
    assert np.all(np.isfinite(g))
    u, s, vh = np.linalg.svd(a)
    m = u.conj().T @ np.ones_like(a) @ vh.conj().T
    same = np.abs(s[:, None] - s[None, :]) < 1e-12
    np.fill_diagonal(same, False)
    dropped = np.where(same, (m + m.conj().T) / 2, 0)
    # likewise the phase term i Im(M_kk) s_k / s_k of a zero singular value (complex only)
    dropped = dropped + np.diag(np.where(s < 1e-12, 1j * m.diagonal().imag, 0))
    np.testing.assert_allclose(g, np.ones_like(a) - u @ dropped @ vh, atol=1e-10)


def polar_factor(x):
    """u @ vh: invariant under joint rotations of degenerate singular vectors and smooth
    for full rank, even at repeated singular values (d(U V^H) involves 1/(s_i + s_j) only)."""
    u, s, vh = svd(x)
    return u @ vh


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", FULL_RANK)
def test_degenerate_polar_factor_matches_finite_differences(kind, dtype):
    a, _, _, _ = _degenerate(kind, dtype)
    check_grads(polar_factor, [a], order=1, rng=np.random.default_rng(5), eager=True)


def test_polar_factor_generic_matrix(rng):
    """Control: the same loss at distinct singular values."""
    check_grads(polar_factor, [rand(rng, (4, 4), "complex128")], order=1, rng=rng, eager=True)


def projectors(x):
    """Projectors onto the top-1 left and top-3 right singular subspaces: smooth at the
    degenerate matrices below (gaps after 1 and after 3), independent of the basis."""
    u, _, vh = svd(x)
    p1 = u[:, :1] @ tp.conj(u[:, :1]).T
    p3 = tp.conj(vh[:3]).T @ vh[:3]
    return p1 + p3 * 2.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ("3-1-1-0.5", "3-1-1-0", "3-1-1-1e-20"))
def test_degenerate_projector_matches_finite_differences(kind, dtype):
    a, _, _, _ = _degenerate(kind, dtype)
    check_grads(projectors, [a], order=1, rng=np.random.default_rng(5), eager=True)


def _exactly_degenerate():
    """Signed permutations around diag(3, 1, 1, 0.5): LAPACK returns s[1] == s[2] exactly."""
    p1, p2 = np.eye(4)[[2, 0, 3, 1]], np.eye(4)[[1, 3, 0, 2]] * [1, -1, 1, 1]
    a = p1 @ np.diag([3.0, 1.0, 1.0, 0.5]) @ p2
    s = np.linalg.svd(a, compute_uv=False)
    assert s[1] == s[2]
    return a


def _weighted_top_projector(eps):
    weights = np.random.default_rng(11).standard_normal((4, 4))

    def loss(x):
        u = tp.linalg.svd(x, eps=eps)[0][:, :1]
        return ((u @ tp.conj(u).T) * weights).sum()

    def numpy_loss(b):
        u = np.linalg.svd(b)[0][:, :1]
        return float(((u @ u.T) * weights).sum())

    return loss, numpy_loss


def _fd_gradient(f, a, h=1e-6):
    g = np.zeros_like(a)
    for index in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[index] = h
        g[index] = (f(a + e) - f(a - e)) / (2 * h)
    return g


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("mode", GRAD_MODES)
def test_exact_degeneracy_with_eps_zero_gives_nan(mode):
    """Why broadening exists: with plain 1/(s_j - s_i) an exactly repeated singular value
    among the triplets a loss depends on makes the gradient NaN; the default broadening
    gives a finite one.  A loss through the non-degenerate top vector alone never meets
    the repeated pair (the rule only forms the blocks the cotangents reach), so it is
    exact even with eps = 0."""
    a = _exactly_degenerate()

    def reconstruction0(x):
        u, s, vh = tp.linalg.svd(x, eps=0.0)
        return ((u * s) @ vh).sum()

    assert np.isnan(grad_in(mode, reconstruction0, a)).any()
    assert np.all(np.isfinite(grad_in(mode, reconstructed_sum, a)))
    for eps in (0.0, None, 1e-16):
        loss, numpy_loss = _weighted_top_projector(eps)
        g = grad_in(mode, loss, a)
        assert np.all(np.isfinite(g))
        np.testing.assert_allclose(g, _fd_gradient(numpy_loss, a), atol=1e-7)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_broadening_default_is_read_from_config(restore_linalg_config):
    """tp.linalg.config.broadening is the eps of svd nodes built after it is set."""
    a = _exactly_degenerate()
    restore_linalg_config.broadening = 0.0
    assert np.isnan(grad_in("traced", reconstructed_sum, a)).any()
    restore_linalg_config.broadening = 1e-16
    assert np.all(np.isfinite(grad_in("traced", reconstructed_sum, a)))


# ================================================================== 4. truncation

def rank_k(k):
    def truncated(x):
        u, s, vh = svd(x)
        return (u[:, :k] * s[:k]) @ vh[:k]
    truncated.__name__ = f"rank_{k}_approximation"
    return truncated


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,k", [((4, 4), 2), ((6, 4), 1), ((6, 4), 3), ((3, 5), 2)])
def test_truncated_svd_derivative(shape, k, dtype, rng):
    check_grads(rank_k(k), [rand(rng, shape, dtype)], order=1, rng=rng, eager=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_truncated_svd_second_order(dtype, rng):
    check_grads(rank_k(2), [rand(rng, (5, 4), dtype)], order=2, rng=rng, eager=True)


def test_truncated_svd_derivative_differs_from_untruncated(rng):
    """Sanity: the truncated derivative is not the identity map of the full SVD."""
    a = rand(rng, (5, 4))
    d = rand(rng, (5, 4))
    x = tp.input((5, 4))
    (jv_trunc,) = tp.ad.jvp([rank_k(2)(x)], [x], [d])
    (jv_full,) = tp.ad.jvp([rank_k(4)(x)], [x], [d])
    jt, jf = tp.evaluate([jv_trunc, jv_full], {x: a})
    np.testing.assert_allclose(jf, d, atol=1e-10)
    assert np.max(np.abs(jt - d)) > 0.1


# ================================================================== 5. complex gauge

def svd_u00_real(x):
    return svd(x)[0][0, 0].real


def svd_u_sum_real(x):
    return svd(x)[0].sum().real


def svd_vh_sum_imag(x):
    return svd(x)[2].sum().imag


def eigh_v10_real(x):
    # (not v[0, 0]: LAPACK's zheevd returns a real first row of v, a gauge in which the
    # phase derivative of Re v[0, 0] happens to vanish)
    return tp.linalg.eigh(x)[1][1, 0].real


def eigh_v_sum_real(x):
    return tp.linalg.eigh(x)[1].sum().real


PHASE_DEPENDENT = [svd_u00_real, svd_u_sum_real, svd_vh_sum_imag, eigh_v10_real,
                   eigh_v_sum_real]


def _gauge_data(rng, fn):
    return rand(rng, (4, 4) if fn.__name__.startswith("eigh") else (4, 3), "complex128")


@pytest.mark.parametrize("fn", PHASE_DEPENDENT, ids=lambda f: f.__name__)
def test_gauge_error_eager(fn, rng):
    a = _gauge_data(rng, fn)
    t = tp.tensor(a, requires_grad=True)
    loss = fn(t)                                         # the forward pass is fine
    with pytest.raises(GaugeError, match="phase"):
        loss.backward()


@pytest.mark.parametrize("fn", PHASE_DEPENDENT, ids=lambda f: f.__name__)
def test_gauge_error_traced(fn, rng):
    a = _gauge_data(rng, fn)
    x = tp.input(a.shape, a.dtype)
    loss = fn(x)
    g = tp.ad.grad(loss, x)                              # no values yet: nothing to check
    program = tp.compile([loss, g], inputs=[x])
    with pytest.raises(GaugeError, match="phase"):
        program(a)


@pytest.mark.parametrize("fn", PHASE_DEPENDENT, ids=lambda f: f.__name__)
def test_gauge_warning_mode(fn, rng, restore_linalg_config):
    restore_linalg_config.gauge_check = "warn"
    a = _gauge_data(rng, fn)
    t = tp.tensor(a, requires_grad=True)
    loss = fn(t)
    with pytest.warns(GaugeWarning, match="phase"):
        loss.backward()
    assert t.grad is not None and np.all(np.isfinite(np.asarray(t.grad)))
    x = tp.input(a.shape, a.dtype)
    program = tp.compile([tp.ad.grad(fn(x), x)], inputs=[x])
    with pytest.warns(GaugeWarning, match="phase"):
        (g,) = program(a)
    np.testing.assert_allclose(g, np.asarray(t.grad), atol=1e-12)


def test_gauge_check_off(rng, restore_linalg_config):
    restore_linalg_config.gauge_check = "off"
    a = _gauge_data(rng, svd_u00_real)
    t = tp.tensor(a, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        svd_u00_real(t).backward()
    assert np.all(np.isfinite(np.asarray(t.grad)))


def svd_abs_u00_squared(x):
    return tp.abs(svd(x)[0][0, 0]) ** 2


def svd_phase_invariant_mix(x):
    u, s, vh = svd(x)
    return (tp.abs(u[1, 0]) ** 2 + (u[:, 1:2] @ vh[1:2]).sum().real * s[1]
            + tp.abs(vh[0, 2]) ** 2)


def eigh_abs_v00_squared(x):
    return tp.abs(tp.linalg.eigh(x)[1][0, 0]) ** 2


@pytest.mark.parametrize("fn", [svd_abs_u00_squared, svd_phase_invariant_mix,
                                eigh_abs_v00_squared], ids=lambda f: f.__name__)
def test_phase_invariant_losses_do_not_raise(fn, rng):
    a = _gauge_data(rng, fn)
    check_grads(fn, [a], order=1, rng=rng, eager=True)   # raises GaugeError if it fired


@pytest.mark.parametrize("fn", [svd_u00_real, eigh_v10_real], ids=lambda f: f.__name__)
def test_real_inputs_have_no_phase_gauge(fn, rng):
    """Real matrices have only a discrete sign freedom: no check fires, and the derivative
    of a sign-dependent entry matches finite differences (LAPACK's sign is locally fixed)."""
    a = _gauge_data(rng, fn).real.copy()
    check_grads(fn, [a], order=1, rng=rng, eager=True)


# ================================================================== 6. gesdd fallback
#
# tenpy_ad.ops.linalg calls LAPACK directly (scipy's gesdd, then gesvd, through the cached
# lookup ``_lapack_svd(driver, dtype)``), so that lookup is the seam where a driver is made
# to report non-convergence (info > 0), as gesdd occasionally does on real matrices.

def _fail_drivers(monkeypatch, failing):
    assert hasattr(linalg_ops, "_lapack_svd"), "the svd driver seam of this test moved"
    calls = []
    lookup = scipy.linalg.lapack.get_lapack_funcs

    def fake_lookup(driver, dtype):
        routine = lookup((driver,), dtype=dtype)[0]

        def run(*args, **kwargs):
            calls.append(driver)
            u, s, vt, info = routine(*args, **kwargs)
            return (u, s, vt, 1) if driver in failing else (u, s, vt, info)
        return run

    monkeypatch.setattr(linalg_ops, "_lapack_svd", fake_lookup)
    return calls


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_falls_back_to_gesvd(mode, dtype, rng, monkeypatch):
    a = rand(rng, (5, 3), dtype)
    s_expected = np.linalg.svd(a, compute_uv=False)
    calls = _fail_drivers(monkeypatch, {"gesdd"})
    u, s, vh = run(tp.linalg.svd, mode, a)
    assert calls == ["gesdd", "gesvd"]
    np.testing.assert_allclose(s, s_expected, rtol=1e-12)
    assert_orthonormal_columns(u)
    assert_orthonormal_columns(vh.conj().T)
    np.testing.assert_allclose((u * s) @ vh, a, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_svd_fails_clearly_when_both_drivers_fail(mode, rng, monkeypatch):
    calls = _fail_drivers(monkeypatch, {"gesdd", "gesvd"})
    a = rand(rng, (4, 3))
    with pytest.raises(np.linalg.LinAlgError,
                       match=r"did not converge.*gesdd.*gesvd.*float64\[4, 3\]"):
        run(tp.linalg.svd, mode, a)
    assert calls == ["gesdd", "gesvd"]


# ================================================================== 7. the svd3 chain

def test_svd3_chain_gradient_matches_finite_differences(rng):
    depth, h = 20, 1e-6
    a0 = start_value("svd3")
    x, loss = build_chain("svd3", depth)
    value, grad = tp.compile([loss, tp.ad.grad(loss, x)], inputs=[x])(a0)

    def forward(a):                                  # the NumPy forward pass
        return float(np.asarray(chain("svd3", a, depth)).sum())

    np.testing.assert_allclose(value, forward(a0), rtol=1e-12)
    direction = rng.standard_normal((3, 3))
    fd = (forward(a0 + h * direction) - forward(a0 - h * direction)) / (2 * h)
    np.testing.assert_allclose(np.vdot(grad, direction), fd, rtol=1e-5)
    # eager backward through the same chain
    t = tp.tensor(a0, requires_grad=True)
    chain("svd3", t, depth).sum().backward()
    np.testing.assert_allclose(np.asarray(t.grad), grad, rtol=1e-10, atol=1e-12)


def test_svd3_chain_depth_1000_and_nothing_leaks():
    gc.collect()
    gc.collect()
    before = tp._core.table_size()
    x, loss = build_chain("svd3", 1000)
    g = tp.ad.grad(loss, x)
    program = tp.compile([loss, g], inputs=[x])
    value, grad = program(start_value("svd3"))
    assert np.isfinite(value) and grad.shape == (3, 3) and np.all(np.isfinite(grad))
    assert tp._core.table_size() > before
    del x, loss, g, program
    gc.collect()
    assert tp._core.table_size() == before


SVD3_COUNTED = ("nodes_interned", "rules_applied", "nodes_visited", "instructions_run",
                "nodes_released")


def _svd3_pipeline_counts(depth):
    gc.collect()
    gc.collect()
    before = tp._core.table_size()
    tp.reset_counters()
    x, loss = build_chain("svd3", depth)
    g = tp.ad.grad(loss, x)
    program = tp.compile([loss, g], inputs=[x])
    value, grad = program(start_value("svd3"))
    assert np.isfinite(value) and np.all(np.isfinite(grad))
    del x, loss, g, program
    counts = tp.counters()
    assert tp._core.table_size() == before
    return {k: counts[k] for k in SVD3_COUNTED}


def test_svd3_chain_counters_grow_linearly():
    c250, c500, c750 = (_svd3_pipeline_counts(d) for d in (250, 500, 750))
    first = {k: (c500[k] - c250[k]) / 250 for k in SVD3_COUNTED}
    second = {k: (c750[k] - c500[k]) / 250 for k in SVD3_COUNTED}
    assert first == second, f"per-layer growth changed: {first} vs {second}"
    assert all(v == int(v) and v > 0 for v in first.values()), first
    assert first["nodes_released"] == first["nodes_interned"]
    assert first["rules_applied"] >= 1                  # one svd (+ its layer ops) per layer


# ================================================================== 8. bad input

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["svd", "qr"])
@pytest.mark.parametrize("shape", [(4,), (2, 3, 4)], ids=["1d", "3d"])
def test_decompositions_need_a_matrix(name, shape, mode):
    fn = getattr(tp.linalg, name)
    with pytest.raises(ShapeError, match=name):
        run(fn, mode, np.ones(shape))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("symmetrize", [True, False])
def test_eigh_needs_a_square_matrix(symmetrize, mode):
    with pytest.raises(ShapeError, match="eigh") as excinfo:
        run(lambda x: tp.linalg.eigh(x, symmetrize_input=symmetrize), mode, np.ones((3, 4)))
    assert "3, 4" in str(excinfo.value)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("a_shape,b_shape", [((3, 3), (4,)), ((3, 3), (4, 2)),
                                             ((3, 4), (3,)), ((3, 3), (3, 2, 1))])
def test_solve_shape_mismatch(a_shape, b_shape, mode):
    """Tensors: ShapeError naming solve; plain ndarrays go to NumPy (a ValueError)."""
    cls = ValueError if mode == "numpy" else ShapeError
    with pytest.raises(cls) as excinfo:
        run(tp.linalg.solve, mode, np.ones(a_shape), np.ones(b_shape))
    if mode != "numpy":
        assert "solve" in str(excinfo.value)


@pytest.mark.parametrize("mode", GRAD_MODES)
def test_solve_rejects_a_batch_of_right_hand_sides(mode):
    """solve takes one matrix and a vector or matrix rhs (no NumPy-style batching)."""
    with pytest.raises(ShapeError, match="solve"):
        run(tp.linalg.solve, mode, np.eye(3), np.ones((2, 3, 3)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["svd", "eigh"])
def test_negative_eps(name, mode):
    fn = getattr(tp.linalg, name)
    with pytest.raises(ValueError, match="eps"):
        run(lambda x: fn(x, eps=-1e-12), mode, np.eye(3))


@pytest.mark.parametrize("mode", MODES)
def test_unsupported_matrix_norm_order(mode):
    with pytest.raises(ValueError, match="ord"):
        run(lambda x: tp.linalg.norm(x, ord=3), mode, np.ones((3, 3)))


@pytest.mark.parametrize("mode", MODES)
def test_qr_other_modes_rejected(mode):
    with pytest.raises(ValueError, match="reduced"):
        run(lambda x: tp.linalg.qr(x, mode="complete"), mode, np.ones((3, 3)))


@pytest.mark.parametrize("shape", [(4, 3), (3, 4)], ids=["tall", "wide"])
def test_full_matrices_derivative_needs_a_square_matrix(shape, rng):
    a = rand(rng, shape)
    x = tp.input(shape)
    u, s, vh = svd(x, full_matrices=True)
    loss = s.sum() + u.sum() + vh.sum()
    with pytest.raises(ShapeError, match="full_matrices"):
        tp.ad.grad(loss, x)
    with pytest.raises(ShapeError, match="full_matrices"):
        tp.ad.jvp([s], [x], [a])
    t = tp.tensor(a, requires_grad=True)
    u, s, vh = svd(t, full_matrices=True)
    with pytest.raises(ShapeError, match="full_matrices"):
        s.sum().backward()

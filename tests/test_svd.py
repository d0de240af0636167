"""What only ``tp.linalg.svd`` has: the derivative of the truncated SVD (rank-k
approximation, cheaper than the full one), the gesdd -> gesvd fallback, and the svd3 chain
(correct gradient, depth 1000, counters linear in depth, nothing leaked).

Forward values: ``test_linalg_forward.py``; gradients: ``test_linalg_gradients.py``;
degenerate spectra: ``test_svd_degenerate.py``; the complex gauge: ``test_complex_gauge.py``.
"""
from __future__ import annotations

import gc

import numpy as np
import pytest
import scipy.linalg
import scipy.linalg.lapack

import tenpy_ad as tp
import tenpy_ad.ops.linalg.svd as linalg_ops
from tenpy_ad.introspection import table_sizes
from tenpy_ad.models.chains import build_chain, chain, start_value
from tenpy_ad.testing import check_grads

from linalg_cases import DTYPES, MODES, assert_orthonormal_columns, random_array, svd
from modes import run


pytestmark = pytest.mark.usefixtures("restore_linalg_config")


# ================================================================== 1. truncation

def rank_k(k):
    def truncated(x):
        u, s, vh = svd(x)
        return (u[:, :k] * s[:k]) @ vh[:k]
    truncated.__name__ = f"rank_{k}_approximation"
    return truncated


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,k", [((4, 4), 2), ((6, 4), 1), ((6, 4), 3), ((3, 5), 2)])
def test_truncated_svd_derivative(shape, k, dtype, rng):
    check_grads(rank_k(k), [random_array(rng, shape, dtype)], order=1, rng=rng, eager=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_truncated_svd_second_order(dtype, rng):
    check_grads(rank_k(2), [random_array(rng, (5, 4), dtype)], order=2, rng=rng, eager=True)


def test_truncated_svd_derivative_differs_from_untruncated(rng):
    """Sanity: the truncated derivative is not the identity map of the full SVD."""
    a = random_array(rng, (5, 4))
    d = random_array(rng, (5, 4))
    x = tp.input((5, 4))
    (jv_trunc,) = tp.ad.jvp([rank_k(2)(x)], [x], [d])
    (jv_full,) = tp.ad.jvp([rank_k(4)(x)], [x], [d])
    jt, jf = tp.evaluate([jv_trunc, jv_full], {x: a})
    np.testing.assert_allclose(jf, d, atol=1e-10)
    assert np.max(np.abs(jt - d)) > 0.1


# ================================================================== 2. gesdd fallback
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
    a = random_array(rng, (5, 3), dtype)
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
    a = random_array(rng, (4, 3))
    with pytest.raises(np.linalg.LinAlgError,
                       match=r"did not converge.*gesdd.*gesvd.*float64\[4, 3\]"):
        run(tp.linalg.svd, mode, a)
    assert calls == ["gesdd", "gesvd"]


# ================================================================== 3. the svd3 chain

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
    before = table_sizes()
    x, loss = build_chain("svd3", 1000)
    g = tp.ad.grad(loss, x)
    program = tp.compile([loss, g], inputs=[x])
    value, grad = program(start_value("svd3"))
    assert np.isfinite(value) and grad.shape == (3, 3) and np.all(np.isfinite(grad))
    assert table_sizes()["metadata_rows"] > before["metadata_rows"]
    del x, loss, g, program
    gc.collect()
    assert table_sizes() == before


SVD3_COUNTED = ("nodes_interned", "rules_applied", "nodes_visited", "instructions_run",
                "nodes_released")


def _svd3_pipeline_counts(depth):
    gc.collect()
    gc.collect()
    before = table_sizes()
    tp.reset_counters()
    x, loss = build_chain("svd3", depth)
    g = tp.ad.grad(loss, x)
    program = tp.compile([loss, g], inputs=[x])
    value, grad = program(start_value("svd3"))
    assert np.isfinite(value) and np.all(np.isfinite(grad))
    del x, loss, g, program
    counts = tp.counters()
    assert table_sizes() == before
    return {k: counts[k] for k in SVD3_COUNTED}


def test_svd3_chain_counters_grow_linearly():
    c250, c500, c750 = (_svd3_pipeline_counts(d) for d in (250, 500, 750))
    first = {k: (c500[k] - c250[k]) / 250 for k in SVD3_COUNTED}
    second = {k: (c750[k] - c500[k]) / 250 for k in SVD3_COUNTED}
    assert first == second, f"per-layer growth changed: {first} vs {second}"
    assert all(v == int(v) and v > 0 for v in first.values()), first
    assert first["nodes_released"] == first["nodes_interned"]
    assert first["rules_applied"] >= 1                  # one svd (+ its layer ops) per layer


def test_create_graph_cotangent_with_zero_values_is_not_mistaken_for_truncation():
    """With create_graph the SVD's cotangent is a tensor being differentiated: at w = 0 it
    is zero in value but not in derivative, so d/dw of the gradient must be sum(u vh)."""
    a_value = np.random.default_rng(3).standard_normal((4, 4))
    a = tp.tensor(a_value, requires_grad=True)
    w = tp.tensor(0.0, requires_grad=True)
    s = tp.linalg.svd(a)[1]
    (ga,) = tp.grad_of([(s * w).sum()], [a], create_graph=True)
    (dw,) = tp.grad_of([ga.sum()], [w])
    u, _, vh = np.linalg.svd(a_value)
    np.testing.assert_allclose(dw.numpy(), (u @ vh).sum(), rtol=1e-12)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_eager_jvp_through_svd_matches_finite_differences(k):
    """Eager forward mode used to be the VJP of the VJP with zero dummy cotangents, which
    the SVD rule read as 'nothing kept' and answered 0; now it runs the JVP rule."""
    rng = np.random.default_rng(11)
    a, da = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))

    def f(x):
        u, s, vh = tp.linalg.svd(x)
        return ((u[:, :k] * s[:k]) @ vh[:k]).sum() + s[:k].sum()

    _, tangent = tp.jvp(f, (a,), (da,))
    h = 1e-6
    fd = (f(a + h * da) - f(a - h * da)) / (2 * h)
    assert abs(float(tangent)) > 1e-3
    np.testing.assert_allclose(tangent, fd, rtol=1e-6)

"""``tp.linalg.svds``: the k leading singular triplets (ARPACK) with the derivatives of
``svd`` sliced to ``[:k]``, computed without the discarded spectrum.

* values and layout against LAPACK; ``method="full"`` is ``svd`` sliced;
* gradients of gauge-invariant losses equal the full-SVD-then-slice gradients (real and
  complex, tall/wide/square, several k) in every gradient mode, and so do second
  derivatives; degenerate kept values are broadened as ``svd`` does;
* the complex gauge check, bad arguments, NaN input, and ``ConvergenceError`` from the
  forward (ARPACK) and from the derivative's solve.
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import (ArgumentError, ConvergenceError, GaugeError, ShapeError,
                             TenpyAdError)
from tenpy_ad.ops.linalg.complement_solve import complement_solve

from linalg_cases import DTYPES, traced_hvp, unitary
from modes import GRAD_MODES, grad_in

pytestmark = pytest.mark.usefixtures("restore_linalg_config")

SHAPES = [(60, 40), (40, 60), (48, 48)]


def decaying(rng, shape, dtype="float64", rate=0.15, values=None):
    """A matrix with singular values ``exp(-rate i)`` (or ``values``) and random vectors."""
    m, n = shape
    r = min(m, n)
    s = np.exp(-rate * np.arange(r)) if values is None else np.asarray(values, float)
    return (unitary(rng, m, dtype)[:, :r] * s) @ unitary(rng, n, dtype)[:r]


def full_then_slice(x, k):
    u, s, vh = tp.linalg.svd(x)
    return u[:, :k], s[:k], vh[:k]


def krylov(x, k):
    return tp.linalg.svds(x, k, method="krylov")


def invariant_loss(decomposition, k, weights):
    """Depends on every output, not on the phases of the singular vectors."""
    def loss(x):
        u, s, vh = decomposition(x, k)
        projector = u @ tp.conj(u).T
        return (tp.sum(tp.abs(u) ** 2 @ weights) + tp.sum(s ** 3)
                + tp.sum(tp.real(projector @ x @ tp.conj(vh).T @ vh) * 0.3)
                + tp.sum(tp.abs(vh) ** 2 * 0.7))
    return loss


def relative_error(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b)))


# ------------------------------------------------------------------ forward

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=["tall", "wide", "square"])
def test_values_and_layout(rng, shape, dtype):
    a = decaying(rng, shape, dtype)
    k = 7
    u, s, vh = tp.linalg.svds(a, k, method="krylov")
    assert u.shape == (shape[0], k) and s.shape == (k,) and vh.shape == (k, shape[1])
    assert u.dtype == a.dtype and s.dtype == np.float64 and vh.dtype == a.dtype
    expected = np.linalg.svd(a, compute_uv=False)[:k]
    assert relative_error(s, expected) < 1e-12 and np.all(np.diff(s) < 0)
    np.testing.assert_allclose(u.conj().T @ u, np.eye(k), atol=1e-13)
    np.testing.assert_allclose(vh @ vh.conj().T, np.eye(k), atol=1e-13)
    np.testing.assert_allclose(a @ vh.conj().T, u * s, atol=1e-13)


def test_every_mode_computes_the_same_triplets(rng):
    a = decaying(rng, (50, 45))
    reference = tp.linalg.svds(a, 5, method="krylov")
    eager = tp.linalg.svds(tp.tensor(a), 5, method="krylov")
    x = tp.input(a.shape)
    traced = tp.evaluate(list(tp.linalg.svds(x, 5, method="krylov")), {x: a})
    for got in (eager, traced):
        for r, g in zip(reference, got):
            np.testing.assert_array_equal(np.asarray(g), r)


def test_full_method_is_svd_sliced(rng):
    a = rng.standard_normal((30, 20))
    u, s, vh = tp.linalg.svds(a, 4, method="full")
    u0, s0, vh0 = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(s, s0[:4], rtol=1e-14)
    np.testing.assert_allclose(np.abs(u), np.abs(u0[:, :4]), atol=1e-13)
    x = tp.input(a.shape)
    nodes = tp.introspection.graph_nodes(list(tp.linalg.svds(x, 4, method="full")))
    assert {n.prim.name for n in nodes} >= {"svd"} and "svds" not in {
        n.prim.name for n in nodes}


def test_auto_chooses_full_for_small_matrices(rng):
    x = tp.input((20, 20))
    names = {n.prim.name for n in tp.introspection.graph_nodes(list(tp.linalg.svds(x, 3)))}
    assert "svd" in names and "svds" not in names
    size = tp.linalg.PARTIAL_MIN_SIZE + 1
    x = tp.input((size, size))
    names = {n.prim.name for n in tp.introspection.graph_nodes(list(tp.linalg.svds(x, 3)))}
    assert "svds" in names and "svd" not in names


def test_nan_input_gives_nan():
    a = np.ones((30, 30))
    a[3, 4] = np.nan
    u, s, vh = tp.linalg.svds(a, 3, method="krylov")
    assert np.isnan(u).all() and np.isnan(s).all() and np.isnan(vh).all()


# ------------------------------------------------------------------ gradients

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=["tall", "wide", "square"])
@pytest.mark.parametrize("k", [1, 5, 12])
def test_gradients_equal_full_svd_sliced(rng, shape, dtype, k):
    a = decaying(rng, shape, dtype)
    weights = rng.standard_normal(k)
    expected = grad_in("traced", invariant_loss(full_then_slice, k, weights), a)
    for mode in GRAD_MODES:
        got = grad_in(mode, invariant_loss(krylov, k, weights), a)
        assert relative_error(got, expected) < 1e-8, mode


@pytest.mark.parametrize("dtype", DTYPES)
def test_second_derivatives_equal_full_svd_sliced(rng, dtype):
    """Hessian-vector products (forward over reverse), traced."""
    a = decaying(rng, (36, 30), dtype)
    direction = rng.standard_normal(a.shape).astype(dtype)
    weights = rng.standard_normal(4)

    def hvp(decomposition):
        return traced_hvp(invariant_loss(decomposition, 4, weights), a, direction)

    assert relative_error(hvp(krylov), hvp(full_then_slice)) < 1e-8


def test_degenerate_kept_values_are_broadened_as_svd(rng):
    values = [1.0, 0.8, 0.8, 0.5, 0.3] + list(0.2 * np.exp(-0.2 * np.arange(35)))
    a = decaying(rng, (40, 40), values=values)
    weights = np.ones(5)          # equal weights: a loss invariant within the pair

    def loss(decomposition):
        return lambda x: tp.sum(tp.abs(decomposition(x, 5)[0]) ** 2 @ weights) + tp.sum(
            decomposition(x, 5)[1] ** 2)

    expected = grad_in("traced", loss(full_then_slice), a)
    got = grad_in("traced", loss(krylov), a)
    assert np.isfinite(got).all() and relative_error(got, expected) < 1e-8


def test_phase_dependent_complex_loss_raises(rng):
    a = decaying(rng, (30, 25), "complex128")

    def loss(x):
        return tp.real(tp.linalg.svds(x, 3, method="krylov")[0][0, 0])

    with pytest.raises(GaugeError, match="svd"):
        grad_in("traced", loss, a)


# ------------------------------------------------------------------ errors

@pytest.mark.parametrize("k,error,fragment", [
    (0, ShapeError, "k must be in"), (41, ShapeError, "k must be in"),
    (-1, ShapeError, "k must be in"), (2.0, ArgumentError, "integer"),
    (True, ArgumentError, "integer")])
def test_bad_k(k, error, fragment):
    with pytest.raises(error, match=fragment):
        tp.linalg.svds(np.ones((50, 40)), k)


@pytest.mark.parametrize("kwargs,fragment", [
    (dict(method="lanczos"), "method"), (dict(tol=0.0), "tol"),
    (dict(maxiter=0), "maxiter"), (dict(hint=-1), "hint")])
def test_bad_options(kwargs, fragment):
    with pytest.raises((TenpyAdError, ValueError), match=fragment):
        tp.linalg.svds(np.ones((50, 40)), 3, **kwargs)


def test_not_a_matrix():
    with pytest.raises(ShapeError, match="svds"):
        tp.linalg.svds(np.ones((4, 4, 4)), 2)


def test_forward_non_convergence_raises(rng):
    a = decaying(rng, (60, 60), rate=0.01)
    with pytest.raises(ConvergenceError, match="svds.*converged"):
        tp.linalg.svds(a, 10, method="krylov", maxiter=1)


def test_forward_residual_check_raises_with_the_residual(rng):
    a = decaying(rng, (60, 60), rate=0.01)
    with pytest.raises(ConvergenceError) as info:
        tp.linalg.svds(a, 10, method="krylov", tol=1e-300)
    assert info.value.residual > 1e-300


def test_derivative_solve_non_convergence_raises(rng):
    a = decaying(rng, (60, 50), rate=0.02)
    x = tp.input(a.shape)
    u = tp.linalg.svds(x, 5, method="krylov", maxiter=1000, hint=0)[0]
    g = tp.ad.grad(tp.sum(tp.abs(u[:, 0]) ** 2 * np.arange(60.0)), x)
    assert np.isfinite(tp.evaluate(g, {x: a})).all()
    u0, s0, vh0 = np.linalg.svd(a, full_matrices=False)
    basis = np.zeros((110, 10))
    basis[:60, :5], basis[60:, 5:] = u0[:, :5], vh0[:5].T
    r = rng.standard_normal((110, 5))
    with pytest.raises(ConvergenceError, match="did not reach") as info:
        complement_solve("svd", a, basis, s0[:5], r, np.zeros((110, 0)), maxiter=1)
    assert info.value.residual > 0 and info.value.iterations == 1


def test_convergence_error_is_registered_and_pickles():
    assert tp.errors.ALL["ConvergenceError"] is ConvergenceError
    assert issubclass(ConvergenceError, TenpyAdError) and issubclass(ConvergenceError,
                                                                      RuntimeError)
    error = pickle.loads(pickle.dumps(ConvergenceError("no", residual=0.5)))
    assert str(error) == "no" and error.residual == 0.5



def test_float32_forward(rng):
    """(Gradients in float32 wait for svd's: its rule constants are float64.)"""
    a = decaying(rng, (50, 40)).astype("float32")
    u, s, vh = tp.linalg.svds(a, 4, method="krylov")
    assert s.dtype == np.float32 and u.dtype == np.float32 and vh.dtype == np.float32
    np.testing.assert_allclose(s, np.linalg.svd(a.astype(float), compute_uv=False)[:4],
                               rtol=1e-5)

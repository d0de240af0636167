"""``tp.linalg.eigsh``: the k leading eigenpairs of a Hermitian matrix (ARPACK) with the
derivatives of ``eigh`` restricted to them, computed without the discarded spectrum."""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ArgumentError, ConvergenceError, GaugeError, ShapeError

from linalg_cases import DTYPES, traced_hvp, unitary
from modes import GRAD_MODES, grad_in

pytestmark = pytest.mark.usefixtures("restore_linalg_config")


def hermitian_with(rng, values, dtype="float64"):
    q = unitary(rng, len(values), dtype)
    return (q * np.asarray(values, float)) @ q.conj().T


def spectrum(n, signed=False):
    """Decaying magnitudes; alternating signs when ``signed`` (for "LM")."""
    values = 2.0 * np.exp(-0.12 * np.arange(n))
    if signed:
        values[1::2] *= -1
    return values


def leading_by_full(x, k, which):
    """``eigh`` sliced to the k leading pairs, as blocks in ascending order (for "LM" the
    most negative and the most positive ones, counted on the values of ``x``)."""
    w, v = tp.linalg.eigh(x)
    n = w.shape[0]
    if which == "LA":
        return [(w[n - k:], v[:, n - k:])]
    values = np.linalg.eigvalsh(np.asarray(x.data if isinstance(x, tp.Tensor) else x))
    negative = int(np.sum(values[np.argsort(-np.abs(values), kind="stable")[:k]] < 0))
    blocks = [(w[:negative], v[:, :negative])] if negative else []
    return blocks + ([(w[n - k + negative:], v[:, n - k + negative:])] if k > negative else [])


def krylov(x, k, which):
    return [tp.linalg.eigsh(x, k, which, method="krylov")]


def loss_of(decomposition, k, which, weights):
    """A loss of every output, invariant under the eigenvectors' phases, summed over the
    blocks of pairs ``decomposition`` returns in ascending order."""
    def loss(x):
        total, start = 0.0, 0
        for w, v in decomposition(x, k, which):
            stop = start + w.shape[0]
            total = total + (tp.sum(w ** 3) + tp.sum(tp.abs(v) ** 2 @ weights[start:stop])
                             + tp.sum(tp.real(v @ tp.conj(v).T @ x) * 0.4))
            start = stop
        return total
    return loss


def relative_error(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("which", ["LA", "LM"])
def test_values_and_vectors(rng, dtype, which):
    a = hermitian_with(rng, spectrum(50, signed=which == "LM"), dtype)
    w, v = tp.linalg.eigsh(a, 6, which, method="krylov")
    assert w.shape == (6,) and v.shape == (50, 6) and np.all(np.diff(w) > 0)
    values = np.linalg.eigvalsh(a)
    order = np.argsort(-values if which == "LA" else -np.abs(values))[:6]
    assert relative_error(w, np.sort(values[order])) < 1e-12
    np.testing.assert_allclose(a @ v, v * w, atol=1e-13)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("which", ["LA", "LM"])
@pytest.mark.parametrize("k", [1, 4, 9])
def test_gradients_equal_full_eigh_sliced(rng, dtype, which, k):
    a = hermitian_with(rng, spectrum(48, signed=which == "LM"), dtype)
    weights = rng.standard_normal(k)
    expected = grad_in("eager", loss_of(leading_by_full, k, which, weights), a)
    for mode in GRAD_MODES:
        got = grad_in(mode, loss_of(krylov, k, which, weights), a)
        assert relative_error(got, expected) < 1e-8, mode


def test_auto_and_full_use_eigh_for_small_matrices(rng):
    a = hermitian_with(rng, spectrum(30))
    w, v = tp.linalg.eigsh(a, 3)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a)[-3:], rtol=1e-14)
    x = tp.input((30, 30))
    names = {n.prim.name for n in tp.introspection.graph_nodes(list(tp.linalg.eigsh(x, 3)))}
    assert "eigh" in names and "eigsh" not in names


def full(x, k, which):
    return [tp.linalg.eigsh(x, k, which, method="full")]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [1, 5, 30])
def test_dense_largest_magnitude_equals_eigh_sliced_at_every_order(rng, dtype, k):
    """method="full" with "LM": LAPACK's decomposition, and derivatives from the whole
    discarded spectrum (exact mode): those of eigh's pairs, first and second order."""
    a = hermitian_with(rng, spectrum(30, signed=True), dtype)
    weights = rng.standard_normal(k)
    w, v = tp.linalg.eigsh(a, k, "LM", method="full")
    values = np.linalg.eigvalsh(a)
    assert relative_error(w, np.sort(values[np.argsort(-np.abs(values))[:k]])) < 1e-13
    np.testing.assert_allclose(a @ v, v * w, atol=1e-13)
    expected = grad_in("eager", loss_of(leading_by_full, k, "LM", weights), a)
    for mode in GRAD_MODES:
        got = grad_in(mode, loss_of(full, k, "LM", weights), a)
        assert relative_error(got, expected) < 1e-10, mode
    direction, h = hermitian_with(rng, rng.standard_normal(30), dtype), 1e-5
    hv = traced_hvp(loss_of(full, k, "LM", weights), a, direction)
    gradient = tp.grad(loss_of(full, k, "LM", weights))
    difference = (gradient(a + h * direction) - gradient(a - h * direction)) / (2 * h)
    assert relative_error(hv, difference) < 1e-6


def test_dense_derivative_is_a_product_with_the_discarded_pairs(rng):
    x = tp.input((30, 30))
    loss = tp.sum(tp.linalg.eigsh(x, 4, "LM", method="full")[1] ** 3)
    solves = [n for n in tp.introspection.graph_nodes([tp.ad.grad(loss, x)])
              if n.prim.name in ("complement_solve", "complement_lorentz")]
    assert solves and all(n.params[-1] is True for n in solves)    # exact mode: no Lanczos


@pytest.mark.parametrize("mode", GRAD_MODES)
def test_dense_cut_through_a_degenerate_pair_raises(rng, mode):
    """k = 3 keeps one of the two eigenvalues of magnitude 1.0: the kept vector is any in
    their plane, so a loss of it has no derivative."""
    a = hermitian_with(rng, [2.0, -1.5, 1.0, 1.0, 0.5, 0.3, 0.2, 0.1])
    with pytest.raises(GaugeError, match="eigsh"):
        grad_in(mode, lambda x: tp.sum(tp.linalg.eigsh(x, 3, "LM", method="full")[1] ** 3),
                a)


def test_phase_dependent_complex_loss_raises(rng):
    a = hermitian_with(rng, spectrum(30), "complex128")
    with pytest.raises(GaugeError, match="eigh"):
        grad_in("traced", lambda x: tp.real(tp.linalg.eigsh(x, 2, method="krylov")[1][0, 0]), a)


@pytest.mark.parametrize("args,kwargs,error,fragment", [
    ((np.eye(30), 0), {}, ShapeError, "k must be in"),
    ((np.eye(30), 31), {}, ShapeError, "k must be in"),
    ((np.eye(30), 2.5), {}, ArgumentError, "integer"),
    ((np.ones((30, 20)), 2), {}, ShapeError, "square"),
    ((np.eye(30), 2, "SA"), {}, ValueError, "which"),
])
def test_bad_arguments(args, kwargs, error, fragment):
    with pytest.raises(error, match=fragment):
        tp.linalg.eigsh(*args, **kwargs)


def test_non_convergence_raises(rng):
    a = hermitian_with(rng, 1.0 + 0.001 * np.arange(80))
    with pytest.raises(ConvergenceError, match="eigsh"):
        tp.linalg.eigsh(a, 10, method="krylov", maxiter=1)

"""Losses as a physicist or an ML engineer writes them, with plain ``np.`` (never ``tnp.``):
each is differentiated by ``tp.grad``, by eager ``.backward()`` and in a traced graph
(``tp.input`` + ``tp.ad.grad`` + ``tp.compile``), and every gradient is compared with
central finite differences of the same function run by NumPy on ndarrays."""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import NotDifferentiableError
from tenpy_ad.testing import numerical_gradient

RNG = np.random.default_rng(2024)
FEATURES = RNG.standard_normal((8, 3))
LABELS = np.array([0, 2, 1, 1])
BINARY = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0])
COUNTS = np.array([1.0, 0.0, 3.0, 2.0, 1.0, 4.0, 0.0, 2.0])
SAMPLES = RNG.normal(0.3, 1.2, 12)
TIMES = np.linspace(-1.0, 1.0, 9)
TARGETS = np.sin(2.0 * TIMES) + 0.1 * RNG.standard_normal(9)
H4 = RNG.standard_normal((4, 4))
H4 = H4 + H4.T
PAULI_Z = np.diag([1.0, -1.0])
HEISENBERG = np.array([[1, 0, 0, 0], [0, -1, 2, 0], [0, 2, -1, 0], [0, 0, 0, 1]]) / 4.0
TARGET_MATRIX = RNG.standard_normal((3, 3))
PROJECTOR = np.diag([1.0, 1.0, 0.0, 0.0])
MASK = np.array([True, False, True, True, False, True])

#: name -> (loss written with np., the point at which it is differentiated)
LOSSES = {}


def loss_at(x0):
    """Register the decorated loss, to be differentiated at ``x0``."""
    def register(fn):
        LOSSES[fn.__name__] = (fn, np.asarray(x0, dtype=float))
        return fn
    return register


def _softmax(z, axis=-1):
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


# ------------------------------------------------------------------ statistics and ML

@loss_at(RNG.standard_normal((4, 3)))
def softmax_cross_entropy(logits):
    z = logits - logits.max(axis=1, keepdims=True)
    log_p = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(log_p[np.arange(4), LABELS])


@loss_at(RNG.standard_normal(3))
def logistic_regression(w):
    z = FEATURES @ w
    return np.sum(np.logaddexp(0.0, z) - BINARY * z) + 0.1 * np.dot(w, w)


@loss_at([0.2, -0.3])
def gaussian_log_likelihood(params):
    mu, log_sigma = params[0], params[1]
    return 0.5 * np.sum(((SAMPLES - mu) / np.exp(log_sigma)) ** 2) + SAMPLES.size * log_sigma


@loss_at(0.3 * RNG.standard_normal(3))
def poisson_regression(w):
    rate = np.exp(FEATURES @ w)
    return np.sum(rate - COUNTS * np.log(rate))


@loss_at(0.5 * RNG.standard_normal(4))
def polynomial_fit_clipped(c):
    design = np.stack([TIMES ** k for k in range(4)], axis=1)
    residual = design @ c - TARGETS
    return np.mean(np.clip(residual, -0.5, 0.5) ** 2) + 1e-3 * np.sum(np.abs(c))


@loss_at(np.array([-1.7, -0.4, 0.3, 0.9, 2.2]))
def huber(x):
    return np.sum(np.where(np.abs(x) < 1.0, 0.5 * x ** 2, np.abs(x) - 0.5))


@loss_at(RNG.standard_normal(3))
def hinge(w):
    margins = 1.0 - (2.0 * BINARY - 1.0) * (FEATURES @ w)
    return np.maximum(0.0, margins).sum() + 0.5 * np.linalg.norm(w) ** 2


@loss_at(RNG.standard_normal(12))
def two_layer_tanh_network(params):
    w1, w2 = params[:9].reshape(3, 3), params[9:]
    hidden = np.tanh(FEATURES @ w1)
    return np.mean((hidden @ w2 - TARGETS[:8]) ** 2)


@loss_at(RNG.standard_normal((5, 3)))
def batch_normalisation(x):
    normed = (x - np.mean(x, axis=0)) / np.sqrt(np.var(x, axis=0) + 1e-5)
    return np.sum(normed * FEATURES[:5]) + np.std(x)


@loss_at(RNG.standard_normal((2, 4)))
def kl_divergence_of_softmaxes(logits):
    p, q = _softmax(logits[0]), _softmax(logits[1])
    return np.sum(p * (np.log(p) - np.log(q)))


@loss_at(RNG.standard_normal(6))
def cosine_similarity(v):
    a, b = v[:3], v[3:]
    return -np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))


@loss_at(RNG.standard_normal((3, 4)))
def row_normalised_regularisers(x):
    rows = x / np.linalg.norm(x, axis=1, keepdims=True)
    return np.abs(rows).sum() + np.square(x).sum() * 0.1


@loss_at(RNG.standard_normal(6))
def weighted_average_and_median(x):
    return np.average(x ** 2, weights=np.arange(1.0, 7.0)) + np.median(np.sin(x))


@loss_at(RNG.standard_normal((3, 5)))
def logsumexp_pooling(x):
    top = np.max(x, axis=1, keepdims=True)
    return np.sum(top[:, 0] + np.log(np.sum(np.exp(x - top), axis=1)))


# ------------------------------------------------------------------ indexing and joining

@loss_at(RNG.standard_normal(6))
def fancy_and_mask_indexing(x):
    return np.sum(x[[0, 2, 3, 3]] ** 2) + np.sum(np.exp(x[MASK])) - x[-1] * x[1]


@loss_at(RNG.standard_normal(5))
def concatenation_with_data(x):
    joined = np.concatenate([x[:2], 2.0 * x[1:], TIMES[:3]])
    return np.sum(np.sin(joined) * np.arange(joined.size))


@loss_at(RNG.standard_normal(4))
def stacking_lists_of_tensors(x):
    features = np.stack([x[0] * x[1], np.sin(x[2]), x.sum(), 1.5])
    matrix = np.block([[x[0], x[1] ** 2], [x[3], 2.0]])
    return np.sum(features ** 2) + np.linalg.det(matrix)


@loss_at(RNG.standard_normal(6))
def block_matrices(x):
    top = np.hstack([x[:2].reshape(1, 2), [[1.0]]])
    rest = np.vstack([x[2:5], np.ones(3)])
    matrix = np.vstack([top, rest]) + 2.0 * np.eye(3)
    return np.trace(matrix @ matrix.T) + np.prod(np.diag(matrix))


@loss_at(RNG.standard_normal(7))
def cumulative_returns(x):
    wealth = np.cumprod(1.0 + 0.1 * x)
    return -np.log(wealth[-1]) + np.sum(np.cumsum(x) ** 2) * 0.01


@loss_at(np.array([0.3, -1.2, 2.5, 0.1, -0.7, 1.9]))
def top_k_by_sorting(x):
    return np.sum(np.sort(x)[-3:]) + np.sum(np.take_along_axis(x, np.argsort(x ** 2), 0)[:2])


@loss_at(RNG.standard_normal((4, 3)))
def argmax_selection(x):
    picked = x[np.arange(4), np.argmax(x, axis=1)]
    return np.sum(picked ** 2) + np.sum(np.take(x, [0, 5, 11]))


@loss_at(RNG.standard_normal(6))
def padded_convolution_smoothness(x):
    padded = np.pad(x, 1, mode="edge")
    smoothed = padded[:-2] + 2.0 * padded[1:-1] + padded[2:]
    return np.sum(np.diff(smoothed) ** 2) + np.sum(np.tile(x, 2) * np.repeat(x, 2))


@loss_at(RNG.standard_normal(8))
def ising_ring_with_soft_spins(x):
    spins = np.tanh(x)
    return -np.sum(spins * np.roll(spins, 1)) + 0.1 * np.sum(np.flip(spins) * spins)


@loss_at(np.array([-1.3, -0.2, 0.4, 1.1, 1.8]))
def piecewise_polynomial_with_where_and_clip(x):
    return np.sum(np.where(x > 0.0, x ** 3 - x, np.clip(x, -1.0, 0.0) * 0.5 + x ** 2))


# ------------------------------------------------------------------ tensor networks

@loss_at(0.5 * RNG.standard_normal((2, 2, 2)))
def mps_log_norm(a):
    transfer = np.einsum("asb,csd->acbd", a, a).reshape(4, 4) + 0.5 * np.eye(4)
    return np.log(np.trace(np.linalg.matrix_power(transfer, 6)))


@loss_at(0.5 * RNG.standard_normal((2, 2, 2)) + 0.5)
def mps_magnetisation(a):
    identity = np.einsum("asb,csd->acbd", a, a).reshape(4, 4)
    z = np.einsum("asb,st,ctd->acbd", a, PAULI_Z, a).reshape(4, 4)
    ring = np.linalg.matrix_power(identity, 3)
    return np.trace(z @ ring) / np.trace(identity @ ring)


@loss_at(RNG.standard_normal((2, 2, 2, 2)))
def reshaped_transposed_truncation(t):
    matrix = np.transpose(t, (0, 2, 1, 3)).reshape(4, 4)
    s = np.linalg.svd(matrix, compute_uv=False)
    return np.sum(s[:2]) / np.sum(s)


@loss_at(RNG.standard_normal((2, 2, 2, 2)))
def trg_like_contraction(t):
    pair = np.einsum("abcd,cdef->abef", t, t)
    merged = np.swapaxes(pair, 1, 2).reshape(4, 4)
    return np.log(np.linalg.norm(merged)) + np.tensordot(t, t, axes=4) * 0.01


@loss_at(RNG.standard_normal(4))
def product_state_energy(x):
    psi = np.kron(x[:2], x[2:])
    return psi @ HEISENBERG @ psi / np.inner(psi, psi)


# ------------------------------------------------------------------ spectral, np.linalg

@loss_at(RNG.standard_normal(4))
def rayleigh_quotient(psi):
    return psi @ H4 @ psi / (psi @ psi)


@loss_at(0.3 * RNG.standard_normal((4, 4)))
def lowest_eigenvalues(x):
    return np.sum(np.linalg.eigvalsh(H4 + (x + x.T) / 2.0)[:2])


@loss_at(0.3 * RNG.standard_normal((4, 4)))
def thermal_free_energy(x):
    w, v = np.linalg.eigh(H4 + x @ x.T)
    rho = v @ np.diag(np.exp(-0.7 * w)) @ v.T
    return -np.log(np.trace(rho)) / 0.7


@loss_at(0.3 * RNG.standard_normal((4, 4)))
def ground_space_projector(x):
    v = np.linalg.eigh(H4 + x + x.T)[1][:, :2]
    return np.sum((v @ v.T - PROJECTOR) ** 2)


@loss_at(RNG.standard_normal(12))
def entanglement_entropy(x):
    s = np.linalg.svd(x.reshape(3, 4), full_matrices=False)[1]
    p = s ** 2 / np.sum(s ** 2)
    return -np.sum(p * np.log(p))


@loss_at(RNG.standard_normal((3, 3)))
def nuclear_norm_denoising(x):
    return np.linalg.norm(x, "nuc") + 0.5 * np.linalg.norm(x - TARGET_MATRIX) ** 2


@loss_at(RNG.standard_normal((3, 3)))
def log_det_and_inverse(x):
    spd = x @ x.T + np.eye(3)
    sign, logdet = np.linalg.slogdet(spd)
    inverse = np.linalg.inv(spd)
    return logdet + np.sum(inverse @ np.ones(3)) + np.linalg.det(np.eye(3) + 0.1 * x)


@loss_at([np.log(0.7), np.log(0.1)])
def gaussian_process_marginal_likelihood(log_params):
    length, noise = np.exp(log_params[0]), np.exp(log_params[1])
    distances = np.subtract.outer(TIMES, TIMES)
    kernel = np.exp(-distances ** 2 / (2.0 * length ** 2)) + noise * np.eye(TIMES.size)
    chol = np.linalg.cholesky(kernel)
    alpha = np.linalg.solve(kernel, TARGETS)
    return 0.5 * TARGETS @ alpha + np.sum(np.log(np.diag(chol)))


@loss_at(RNG.standard_normal((4, 2)))
def least_squares_and_qr(x):
    design = x + np.eye(4, 2)
    coefficients = np.linalg.lstsq(design, TARGETS[:4])[0]
    r = np.linalg.qr(design)[1]
    return np.sum(coefficients ** 2) + np.sum(np.log(np.abs(np.diag(r))))


@loss_at(RNG.standard_normal((3, 3)))
def off_diagonal_penalty(x):
    gram = x @ x.T
    off_diagonal = np.sum(np.triu(gram, 1) ** 2) + np.sum(np.tril(x, -1))
    return off_diagonal + np.trace(np.outer(x[0], x[1]))


@loss_at(RNG.standard_normal(8))
def complex_wavefunction_energy(x):
    psi = x[:4] + 1j * x[4:]
    return np.real(np.vdot(psi, H4 @ psi)) / np.vdot(psi, psi).real + np.abs(psi[0]) ** 2


# ------------------------------------------------------------------ checks

def values_and_gradients(fn, x0) -> dict:
    """``mode -> (value, gradient)`` by ``tp.grad`` (the value by NumPy), eager
    ``.backward()`` and a compiled traced graph."""
    results = {"tp.grad": (fn(x0), tp.grad(fn)(x0))}
    leaf = tp.tensor(x0, requires_grad=True)
    value = fn(leaf)
    value.backward()
    results["eager"] = (value.item(), leaf.grad)
    x = tp.input(x0.shape, x0.dtype)
    value = fn(x)
    results["traced"] = tuple(tp.compile([value, tp.ad.grad(value, x)], inputs=[x])(x0))
    return {mode: (float(np.asarray(v)), np.asarray(g)) for mode, (v, g) in results.items()}


def test_there_are_about_forty_losses():
    assert len(LOSSES) >= 40


def test_np_array_of_a_list_of_tensors_is_refused_not_detached():
    """NumPy's ``np.array`` does not dispatch on a list's items, so it can only refuse;
    ``np.stack``, ``np.block`` and ``np.asarray(..., like=x)`` are the differentiable ways."""
    x = tp.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(NotDifferentiableError, match="conversion to a NumPy array"):
        np.array([x[0], 2.0])
    assert type(np.asarray([x[0], 2.0], like=x)) is tp.Tensor


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_numpy_written_loss_has_the_finite_difference_gradient(name):
    fn, x0 = LOSSES[name]
    value = fn(x0.copy())
    assert isinstance(value, (float, np.floating)) and np.isfinite(value), value
    expected = numerical_gradient(fn, x0)       # fn run by NumPy on ndarrays
    tolerance = 1e-7 * max(1.0, float(np.max(np.abs(expected))))
    results = values_and_gradients(fn, x0)
    for mode, (got_value, got_grad) in results.items():
        np.testing.assert_allclose(got_value, value, rtol=1e-12, err_msg=mode)
        assert got_grad.shape == x0.shape and got_grad.dtype == np.float64, mode
        np.testing.assert_allclose(got_grad, expected, rtol=1e-6, atol=tolerance, err_msg=mode)
    for mode in ("eager", "traced"):              # the modes agree to rounding
        np.testing.assert_allclose(results[mode][1], results["tp.grad"][1], rtol=1e-10,
                                   atol=1e-12, err_msg=mode)

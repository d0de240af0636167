"""SVD derivatives at repeated singular values: with the default Lorentzian broadening the
gradients are finite and equal closed forms / finite differences of gauge-invariant losses
(sums of singular values, projectors, the polar factor, the reconstruction); ``eps=0``
gives NaN; the default is read from ``tp.linalg.config``.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.testing import check_grads, numerical_gradient

from linalg_cases import DTYPES, random_array, svd, unitary
from modes import GRAD_MODES, grad_in


pytestmark = pytest.mark.usefixtures("restore_linalg_config")


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
    check_grads(polar_factor, [random_array(rng, (4, 4), "complex128")], order=1, rng=rng,
                eager=True)


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
        np.testing.assert_allclose(g, numerical_gradient(numpy_loss, a), atol=1e-7)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_broadening_default_is_read_from_config(restore_linalg_config):
    """tp.linalg.config.broadening is the eps of svd nodes built after it is set."""
    a = _exactly_degenerate()
    restore_linalg_config.broadening = 0.0
    assert np.isnan(grad_in("traced", reconstructed_sum, a)).any()
    restore_linalg_config.broadening = 1e-16
    assert np.all(np.isfinite(grad_in("traced", reconstructed_sum, a)))

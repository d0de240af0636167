"""``tp.linalg`` arguments: the documented config defaults; bad input fails clearly in
every mode (ShapeError naming the function, ValueError naming the argument).
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ShapeError

from linalg_cases import DEFAULT_CONFIG, MODES, random_array, svd
from modes import ALL_MODES, assert_matches, grad_in, run


pytestmark = pytest.mark.usefixtures("restore_linalg_config")


def test_linalg_config_defaults():
    config = tp.linalg.config
    assert (config.broadening, config.gauge_check, config.gauge_rtol,
            config.degeneracy_check) == DEFAULT_CONFIG
    fresh = type(config)()           # the class's own defaults, not what a fixture set
    assert (fresh.broadening, fresh.gauge_check, fresh.gauge_rtol,
            fresh.degeneracy_check) == DEFAULT_CONFIG


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["svd", "qr"])
@pytest.mark.parametrize("shape", [(4,), ()], ids=["1d", "0d"])
def test_decompositions_need_a_matrix(name, shape, mode):
    """A matrix or a stack of matrices (``test_linalg_batched.py``); fewer axes fail."""
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


@pytest.mark.parametrize("mode", MODES)
def test_solve_broadcasts_a_batch_of_right_hand_sides(mode):
    """NumPy 2's rule: a stack of right-hand-side matrices broadcasts against ``a``."""
    b = np.arange(18.0).reshape(2, 3, 3)
    np.testing.assert_allclose(run(tp.linalg.solve, mode, 2 * np.eye(3), b), b / 2)


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
        run(lambda x: tp.linalg.qr(x, mode="raw"), mode, np.ones((3, 3)))


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4)], ids=["square", "wide"])
def test_qr_modes_r_and_complete(shape, mode, rng):
    """``mode="r"`` is R alone; ``"complete"`` of a square or wide matrix is the reduced QR."""
    a = random_array(rng, shape)
    q, r = np.linalg.qr(a, mode="complete")
    for got, expected in zip(run(lambda x: np.linalg.qr(x, mode="complete"), mode, a), (q, r)):
        assert_matches(got, expected, f"{mode} complete")
    assert_matches(run(lambda x: np.linalg.qr(x, mode="r"), mode, a), r, f"{mode} r")
    loss = lambda x: (np.linalg.qr(x, mode="r") ** 2).sum()     # noqa: E731 - |R|^2 = |A|^2
    np.testing.assert_allclose(grad_in("eager", loss, a), 2 * a, rtol=1e-12)


def test_qr_complete_of_a_tall_matrix(rng):
    """NumPy's values on arrays; a tensor would need the derivative of non-unique columns."""
    a = random_array(rng, (4, 2))
    q, r = tp.linalg.qr(a, mode="complete")
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    assert q.shape == (4, 4) and r.shape == (4, 2)
    with pytest.raises(ShapeError, match="mode='complete'.*reduced"):
        np.linalg.qr(tp.tensor(a), mode="complete")


@pytest.mark.parametrize("shape", [(4, 3), (3, 4)], ids=["tall", "wide"])
def test_full_matrices_extra_vectors_have_no_derivative(shape, rng):
    """A loss of the extra singular vectors (not unique) raises in reverse and forward
    mode; one that does not use them (``s`` alone) is the reduced SVD's derivative."""
    a = random_array(rng, shape)
    x = tp.input(shape)
    u, s, vh = svd(x, full_matrices=True)
    loss = s.sum() + u.sum() + vh.sum()
    with pytest.raises(ShapeError, match="full_matrices"):
        tp.ad.grad(loss, x)
    with pytest.raises(ShapeError, match="full_matrices"):
        tp.ad.jvp([s], [x], [a])
    t = tp.tensor(a, requires_grad=True)
    u, s, vh = svd(t, full_matrices=True)
    s.sum().backward()
    u_r, _, vh_r = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(t.grad, u_r @ vh_r, rtol=1e-12, atol=1e-13)   # d sum(s)


def _leading_vectors_loss(full_matrices: bool):
    """Uses the leading ``k = min(m, n)`` singular vectors only, as truncation does."""
    def loss(x):
        u, s, vh = svd(x, full_matrices=full_matrices)
        k = s.shape[-1]
        weights = np.arange(1.0, 1.0 + vh.shape[-1])
        return (tp.sum(tp.abs(u[..., :, :k]) ** 3) + tp.sum(s ** 2)
                + tp.sum(vh[..., :k, :] ** 2 * weights))
    return loss


@pytest.mark.parametrize("mode", ["eager", "transform", "traced"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 5, 3)], ids=["tall", "wide", "stack"])
def test_full_matrices_leading_vectors_take_the_reduced_derivative(mode, shape, rng):
    a = random_array(rng, shape)
    got = grad_in(mode, _leading_vectors_loss(True), a)
    np.testing.assert_allclose(got, grad_in(mode, _leading_vectors_loss(False), a),
                               rtol=1e-12, atol=1e-13)
    step = 1e-6 * random_array(rng, shape)
    loss = lambda y: float(np.asarray(_leading_vectors_loss(True)(y)))     # noqa: E731
    difference = (loss(a + step) - loss(a - step)) / 2
    np.testing.assert_allclose(np.sum(got * step), difference, rtol=1e-6)


def test_full_matrices_leading_vectors_second_order(rng):
    a, direction = random_array(rng, (4, 3)), random_array(rng, (4, 3))
    hessian_products = []
    for full_matrices in (True, False):
        first = tp.grad(_leading_vectors_loss(full_matrices))
        hessian_products.append(np.asarray(tp.grad(lambda y: tp.sum(first(y) * direction))(a)))
    np.testing.assert_allclose(*hessian_products, rtol=1e-10, atol=1e-12)

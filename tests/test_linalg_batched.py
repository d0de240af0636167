"""Stacks of matrices ``(..., m, n)``: every ``tp.linalg`` function on a random stack equals
a loop of the same function on its matrices, in values (ndarrays, eager, traced) and in
gradients (eager, traced); NumPy's broadcasting of ``solve``; the truncated-SVD shortcut
also on stacks.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp

from linalg_cases import DTYPES, MODES, random_array
from modes import GRAD_MODES, grad_in, run


pytestmark = pytest.mark.usefixtures("restore_linalg_config")

BATCH = (2, 3)


def _positive_definite(x):
    return x * 0.2 + 3.0 * np.eye(x.shape[-1])


def _svd_invariant(x):
    u, s, vh = tp.linalg.svd(x)
    return tp.abs(u[..., :2]) ** 2 @ tp.abs(vh[..., :2, :]) ** 2 * s[..., :1, None]


def _qr_product(x):
    q, r = tp.linalg.qr(x)
    return q @ (r * r)


def _eigh_invariant(x):
    w, v = tp.linalg.eigh(x, "U")
    return tp.abs(v) ** 2 * w[..., None, :]


def _eig_invariant(x):
    w, v = tp.linalg.eig(x)
    return tp.abs(v) ** 2 * tp.real(w)[..., None, :] + tp.imag(w * w)[..., None, :]


def _slogdet(x):
    sign, logabsdet = tp.linalg.slogdet(x)
    return sign * logabsdet


#: (name, function of one stack, matrix shape)
CASES = [
    ("svd", _svd_invariant, (4, 3)),
    ("svd_wide", _svd_invariant, (3, 5)),
    ("svdvals", tp.linalg.svdvals, (3, 4)),
    ("qr", _qr_product, (4, 3)),
    ("qr_wide", _qr_product, (3, 4)),
    ("eigh", _eigh_invariant, (4, 4)),
    ("eig", _eig_invariant, (3, 3)),
    ("inv", tp.linalg.inv, (3, 3)),
    ("det", tp.linalg.det, (3, 3)),
    ("slogdet", _slogdet, (3, 3)),
    ("cholesky", lambda x: tp.linalg.cholesky(_positive_definite(x)), (3, 3)),
    ("pinv", tp.linalg.pinv, (4, 3)),
    ("expm", tp.linalg.expm, (3, 3)),
    ("matrix_power", lambda x: tp.linalg.matrix_power(x, -3), (3, 3)),
    ("norm_nuc", lambda x: tp.linalg.norm(x, "nuc", axis=(-2, -1)), (3, 4)),
    ("norm_inf", lambda x: tp.linalg.norm(x, np.inf, axis=(-1, -2)), (3, 4)),
    ("solve", lambda x: tp.linalg.solve(x, x[..., :2] * 2.0 + 1.0), (3, 3)),
]
IDS = [c[0] for c in CASES]


def _loop(fn, stack, mode):
    """``fn`` applied to each matrix of ``stack`` in ``mode``, restacked."""
    flat = stack.reshape((-1,) + stack.shape[-2:])
    values = [run(fn, mode, m) for m in flat]
    return np.stack(values).reshape(BATCH + values[0].shape)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn,shape", CASES, ids=IDS)
def test_stack_equals_loop(name, fn, shape, dtype, mode, rng):
    stack = random_array(rng, BATCH + shape, dtype)
    got = run(fn, mode, stack)
    expected = _loop(fn, stack, mode)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


def _scalar_loss(fn, weights):
    def loss(x):
        out = fn(x)
        value = out * weights
        return tp.real(value).sum() if np.iscomplexobj(weights) else value.sum()
    return loss


@pytest.mark.parametrize("mode", GRAD_MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn,shape", CASES, ids=IDS)
def test_stack_gradient_equals_loop(name, fn, shape, dtype, mode, rng):
    stack = random_array(rng, BATCH + shape, dtype)
    out = run(fn, "numpy", stack)
    weights = random_array(rng, out.shape, out.dtype.name)
    got = grad_in(mode, _scalar_loss(fn, weights), stack)
    flat_stack = stack.reshape((-1,) + shape)
    flat_weights = weights.reshape((len(flat_stack),) + out.shape[len(BATCH):])
    expected = np.stack([grad_in(mode, _scalar_loss(fn, w), m)
                         for m, w in zip(flat_stack, flat_weights)]).reshape(stack.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("a_shape,b_shape", [
    ((3, 3), (2, 3, 2)), ((2, 1, 3, 3), (4, 3, 1)), ((2, 3, 3), (3,)), ((2, 3, 3), (2, 3, 4)),
], ids=["matrix-stack", "broadcast-both", "stack-vector", "stack-stack"])
def test_solve_broadcasts_as_numpy(a_shape, b_shape, mode, rng):
    a = random_array(rng, a_shape) + 3 * np.eye(3)
    b = random_array(rng, b_shape)
    got = run(tp.linalg.solve, mode, a, b)
    expected = np.linalg.solve(a, b)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def _truncated_svd_loss(x):
    u, s, vh = tp.linalg.svd(x)
    return ((u[..., :2] * s[..., None, :2]) @ vh[..., :2, :]).sum()


def _products(shape):
    """The shapes of the matrix products in the derivative graph of the loss."""
    x = tp.input(shape)
    g = tp.ad.grad(_truncated_svd_loss(x), x)
    return x, g, sorted(tuple(node.shape) for node in tp.introspection.graph_nodes([g])
                        if node.prim.name == "einsum")


def test_truncated_svd_of_a_stack_uses_the_leading_block(rng):
    """Slicing ``u[..., :k]`` of a stack reaches the rule as a zero-padded cotangent, and
    the VJP of a stack does the products of one matrix's truncated VJP (k leading triplets,
    no full gap matrix), with the batch axes in front."""
    _, _, single = _products((6, 5))
    x, g, stacked = _products(BATCH + (6, 5))
    assert stacked == sorted(BATCH + shape for shape in single)
    assert (5, 5) not in single and (5, 2) in single
    a = random_array(rng, BATCH + (6, 5))
    loop = [grad_in("traced", _truncated_svd_loss, m) for m in a.reshape(-1, 6, 5)]
    np.testing.assert_allclose(tp.evaluate(g, {x: a}), np.stack(loop).reshape(a.shape),
                               atol=1e-12)

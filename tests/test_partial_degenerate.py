"""The partial decompositions at (near-)degenerate spectra, where their derivatives follow
the full rules' broadening across the cut as well (``complement_solve``'s ``L(K)``):

* ``complement_solve`` equals the dense broadened inverse for any shifts (also inside the
  spectrum, also at an exact zero of ``K``), both outputs, real and complex;
* ``svds``/``eigsh`` gradients equal the full-then-slice ones for matrices with exact
  degeneracies across the cut and among the discarded values (the derivative solves run
  through the degenerate columns without failing), and with a near-degeneracy across the
  cut that the broadening resolves (``eps`` large enough to decide the result), in reverse
  and forward mode, and at second order.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.ops.linalg.complement_solve import complement_solve

from linalg_cases import DTYPES, traced_hvp, unitary

pytestmark = pytest.mark.usefixtures("restore_linalg_config")

#: kept 1, 0.8, 0.6, 0.5 | discarded 0.5, 0.5, 0.3 x 4, 0.1, then exact zeros
DEGENERATE = [1.0, 0.8, 0.6, 0.5, 0.5, 0.5, 0.3, 0.3, 0.3, 0.3, 0.1] + [0.0] * 25
#: kept ..., 0.5 | discarded 0.5 - 1e-5: a gap the broadening eps = 1e-6 decides
NEAR = [1.0, 0.8, 0.6, 0.5, 0.5 - 1e-5, 0.45, 0.3] + list(0.2 * np.exp(-0.2 * np.arange(29)))


def matrix_with(rng, values, shape, dtype):
    m, n = shape
    r = len(values)
    return (unitary(rng, m, dtype)[:, :r] * np.asarray(values)) @ unitary(rng, n, dtype)[:r]


def relative_error(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b)))


# ------------------------------------------------------------------ the solve itself

def dense_broadened(kind, a, basis, t, r, eps):
    """``(L(K) P r, g(K) P r)`` from the eigendecomposition of ``H`` on the complement."""
    size = basis.shape[0]
    h = a if kind == "hermitian" else np.block([[np.zeros((a.shape[0],) * 2), a],
                                               [a.conj().T, np.zeros((a.shape[1],) * 2)]])
    full = np.linalg.qr(np.concatenate([basis, np.eye(size)], axis=1))[0]
    complement = full[:, basis.shape[1]:]
    lam, z = np.linalg.eigh(complement.conj().T @ h @ complement)
    vectors = complement @ z
    coef = vectors.conj().T @ r
    x = t[None, :] - lam[:, None]
    return vectors @ (x / (x * x + eps) * coef), vectors @ (coef / (x * x + eps))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["svd", "hermitian"])
@pytest.mark.parametrize("eps", [1e-16, 1e-4])
def test_solve_is_the_broadened_inverse_for_any_shifts(rng, kind, dtype, eps):
    """Shifts above, inside and exactly at eigenvalues of ``H`` on the complement."""
    if kind == "svd":
        a = matrix_with(rng, [2.0, 1.5, 1.0, 0.7, 0.7, 0.4, 0.2, 0.0], (30, 24), dtype)
        u, s, vh = np.linalg.svd(a)
        basis = np.zeros((54, 4), a.dtype)
        basis[:30, :2], basis[30:, 2:] = u[:, :2], vh[:2].conj().T
    else:
        q = unitary(rng, 30, dtype)
        values = np.array([2.0, 1.5, 1.0, 0.7, 0.7, -0.4, 0.2] + [0.0] * 23)
        a = (q * values) @ q.conj().T
        basis = q[:, :2]
    if eps > 1e-8:          # exact zeros of K (0.7 and 0 are eigenvalues of H there)
        t = np.array([0.7, 3.0, -0.2, 0.0])
    else:                   # where L is well conditioned at eps = 1e-16
        t = np.array([0.65, 3.0, -0.25, 0.05])
    r = rng.standard_normal((basis.shape[0], 4)).astype(dtype)
    hint = np.zeros((basis.shape[0], 0), dtype)
    lorentz, square = complement_solve(kind, a, basis, t, r, hint, eps=eps)
    expected = dense_broadened(kind, a, basis, t, r, eps)
    for got, want in zip((lorentz, square), expected):         # column by column
        assert max(relative_error(got[:, i], want[:, i]) for i in range(4)) < 1e-10


# ------------------------------------------------------------------ svds

def leading_three(decomposition, k, weights):
    """A phase-invariant loss of the three leading triplets (well defined when the k-th
    kept value is degenerate with discarded ones)."""
    def loss(x):
        u, s, vh = decomposition(x, k)
        u, s, vh = u[:, :3], s[:3], vh[:3]
        return (tp.sum(tp.abs(u) ** 2 * weights[:, None]) + tp.sum(s ** 3)
                + tp.sum(tp.abs(vh) ** 2 * 0.7)
                + tp.sum(tp.real(u @ tp.conj(u).T @ x @ tp.conj(vh).T @ vh) * 0.3))
    return loss


def full_then_slice(eps=None):
    def decomposition(x, k):
        u, s, vh = tp.linalg.svd(x, eps=eps)
        return u[:, :k], s[:k], vh[:k]
    return decomposition


def krylov(eps=None, hint=None):
    return lambda x, k: tp.linalg.svds(x, k, method="krylov", eps=eps, hint=hint)


def forward_derivative(loss_fn, a, direction):
    x = tp.input(a.shape, a.dtype)
    (jv,) = tp.ad.jvp([loss_fn(x)], [x], [direction])
    return tp.evaluate(jv, {x: a})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("hint", [0, None], ids=["no-hint", "hint"])
def test_exact_degeneracies_across_the_cut(rng, dtype, hint):
    a = matrix_with(rng, DEGENERATE, (40, 36), dtype)
    weights = rng.standard_normal(40)
    direction = rng.standard_normal(a.shape).astype(dtype)
    reference = leading_three(full_then_slice(), 4, weights)
    partial = leading_three(krylov(hint=hint), 4, weights)
    expected = tp.grad(reference)(a)
    got = tp.grad(partial)(a)
    assert np.isfinite(got).all() and relative_error(got, expected) < 1e-8
    forward = forward_derivative(partial, a, direction)     # solves every kept column
    assert np.isfinite(forward)
    assert abs(forward - forward_derivative(reference, a, direction)) < 1e-8 * abs(
        np.vdot(np.asarray(expected), direction))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("hint", [0, None], ids=["no-hint", "hint"])
def test_near_degeneracy_across_the_cut_is_broadened_as_svd(rng, dtype, hint):
    """s_4 = 0.5 kept, 0.5 - 1e-5 discarded: with eps = 1e-6 the broadening, not the gap,
    decides the coupling of the pair; both rules must apply the same one."""
    a = matrix_with(rng, NEAR, (40, 36), dtype)
    weights = rng.standard_normal((40, 4))

    def loss(decomposition):
        def f(x):
            u, s, vh = decomposition(x, 4)
            return (tp.sum(tp.abs(u) ** 2 * weights) + tp.sum(s ** 2)
                    + tp.sum(tp.abs(vh[3]) ** 2 * np.arange(36.0)))
        return f

    expected = tp.grad(loss(full_then_slice(eps=1e-6)))(a)
    got = tp.grad(loss(krylov(eps=1e-6, hint=hint)))(a)
    assert relative_error(got, expected) < 1e-8
    plain = tp.grad(loss(full_then_slice(eps=1e-16)))(a)
    assert relative_error(plain, expected) > 1e-3          # the broadening matters here


#: kept 2, 1.6, 1.2, 0.8 | discarded 0.8 - 1e-5 (eps = 1e-10 decides the pair), then values
#: spaced 0.08 apart: the full rule's second order also broadens the rotations among its
#: discarded vectors (by eps / gap^2 < 2e-8 here), which the partial rule has no trace of
SECOND_ORDER = [2.0, 1.6, 1.2, 0.8, 0.8 - 1e-5] + list(0.72 - 0.08 * np.arange(8))


@pytest.mark.parametrize("dtype", DTYPES)
def test_second_order_near_a_degeneracy(rng, dtype):
    a = matrix_with(rng, SECOND_ORDER, (15, 13), dtype)
    direction = rng.standard_normal(a.shape).astype(dtype)
    weights = rng.standard_normal(15)

    def hvp(decomposition):
        return traced_hvp(leading_three(decomposition, 4, weights), a, direction)

    expected = hvp(full_then_slice(eps=1e-10))
    assert relative_error(hvp(krylov(eps=1e-10)), expected) < 1e-8
    assert relative_error(hvp(full_then_slice(eps=1e-30)), expected) > 1e-3


# ------------------------------------------------------------------ eigsh

def hermitian_with(rng, values, dtype):
    q = unitary(rng, len(values), dtype)
    return (q * np.asarray(values, float)) @ q.conj().T


EIGSH_CASES = {
    # kept 2, 1.5, 1.2, 1.0 | discarded 1.0 (exact), 1.0 - 1e-5: the loss leaves the
    # kept 1.0 out (its vector is any in the degenerate pair)
    "exact": ([2.0, 1.5, 1.2, 1.0, 1.0, 1.0 - 1e-5], 1, None),
    # kept ..., 1.0 | discarded 1.0 - 1e-5: eps decides the pair's coupling
    "near": ([2.0, 1.5, 1.2, 1.0, 1.0 - 1e-5], 0, 1e-6),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(EIGSH_CASES))
def test_eigsh_degeneracies_across_the_cut(rng, dtype, case):
    leading, first, eps = EIGSH_CASES[case]
    values = leading + list(0.6 * np.exp(-0.1 * np.arange(36 - len(leading))))
    a = hermitian_with(rng, values, dtype)
    weights = rng.standard_normal((36, 4))

    def loss(decomposition):
        def f(x):
            w, v = decomposition(x)
            return (tp.sum(tp.abs(v[:, first:]) ** 2 * weights[:, first:])
                    + tp.sum(w[first:] ** 2))
        return f

    def full(x):
        w, v = tp.linalg.eigh(x, eps=eps)
        return w[-4:], v[:, -4:]

    def partial(x):
        return tp.linalg.eigsh(x, 4, method="krylov", eps=eps, hint=0)

    got = tp.grad(loss(partial))(a)
    assert np.isfinite(got).all()
    assert relative_error(got, tp.grad(loss(full))(a)) < 1e-8

"""The C4v iPEPS toolkit (tenpy_ad.models.peps): the D = 2 Heisenberg optimum, the implicit
gradient against finite differences and against differentiating through the moves, the
gauge-fixed environment in every mode (random D = 2 and D = 3 tensors, a tensor with
degenerate corner multiplets), and the cycle a non-covariant sign choice runs into."""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.models import peps

from modes import run

H = peps.heisenberg()


@pytest.fixture(scope="module")
def optimum():
    """The D = 2, chi = 16 optimisation from the default start."""
    return peps.optimize(H, bond=2, chi=16)


def test_d2_heisenberg_reaches_the_known_optimum(optimum):
    assert optimum.success, optimum.message
    assert abs(optimum.fun - peps.HEISENBERG_D2) < 1e-8
    assert optimum.fun > peps.HEISENBERG_QMC                  # variational


def test_bond_operators_are_the_rotated_heisenberg_and_hermitian():
    sx = np.array([[0, 1], [1, 0]]) / 2
    sy = np.array([[0, -1j], [1j, 0]]) / 2
    sz = np.diag([0.5, -0.5])
    rotated = -np.kron(sx, sx) + np.kron(sy, sy) - np.kron(sz, sz)
    np.testing.assert_allclose(H.reshape(4, 4), rotated.real, atol=1e-15)
    assert np.abs(rotated.imag).max() == 0
    for h in (peps.heisenberg(jz=0.5), peps.transverse_ising(3.0)):
        np.testing.assert_allclose(h.reshape(4, 4), h.reshape(4, 4).T)
    # the product state |up up>: <sz sz> = 1/4, so E_bond = -1/4 rotated
    up = np.zeros((2, 2, 2, 2, 2))
    up[0, 0, 0, 0, 0] = 1.0
    energy, _ = peps.energy(up, 4, H)
    assert float(energy) == pytest.approx(-0.5, abs=1e-12)


def _point(bond, seed=3):
    return peps.random_tensor(2, bond, seed)


def test_implicit_gradient_matches_finite_differences():
    params, chi = _point(2), 12
    _, env = peps.energy(params, chi, H, tol=1e-12)

    def energy(p):
        return peps.energy(p, chi, H, env0=env, tol=1e-12)[0]

    grad = np.asarray(tp.grad(energy)(params))
    direction = np.random.default_rng(0).standard_normal(params.shape)
    eps = 1e-5
    central = (float(energy(params + eps * direction))
               - float(energy(params - eps * direction))) / (2 * eps)
    assert np.sum(grad * direction) == pytest.approx(central, abs=1e-7)


def test_implicit_gradient_matches_the_gradient_through_the_moves():
    params, chi = _point(2), 12
    _, env = peps.energy(params, chi, H, tol=1e-13)
    fixed = peps.double_layer(peps.normalized(params))
    gauge = peps.relative_gauge(peps.move(env, fixed, chi), env)

    def unrolled(p):
        a = peps.normalized(p)
        state = env
        for _ in range(60):
            state = peps.aligned_move(state, peps.double_layer(a), gauge, chi)
        return peps.energy_per_site(a, state, H)

    implicit = np.asarray(tp.grad(lambda p: peps.energy(p, chi, H, env0=env, tol=1e-13)[0])(params))
    through = np.asarray(tp.grad(unrolled)(params))
    np.testing.assert_allclose(implicit, through, atol=1e-7)


@pytest.mark.parametrize("bond, chi", [(2, 12), (3, 9)])
@pytest.mark.parametrize("mode", ["numpy", "eager", "traced", "compiled", "jit"])
def test_the_environment_converges_in_every_mode(bond, chi, mode):
    params = _point(bond)
    reference, env = peps.energy(params, chi, H)
    stats = {}
    value = run(lambda p: peps.energy(p, chi, H, env0=env, stats=stats)[0], mode, params)
    assert float(value) == pytest.approx(float(reference), abs=1e-10)
    assert stats["residual"] <= 1e-7                     # a fixed point element-wise
    if mode in ("traced", "compiled", "jit"):
        grad = run(tp.grad(lambda p: peps.energy(p, chi, H, env0=env)[0]), mode, params)
        eager = tp.grad(lambda p: peps.energy(p, chi, H, env0=env)[0])(params)
        np.testing.assert_allclose(grad, np.asarray(eager), atol=1e-8)


def symmetric_tensor(seed: int = 5) -> np.ndarray:
    """A C4v tensor with a U(1) symmetry (bond charges +-1/4, physical +-1/2, conserved)
    and the spin flip: its corner spectrum holds exactly degenerate multiplets, whose
    eigenvectors eigh returns in an arbitrary basis."""
    legs, physical = np.array([0.25, -0.25]), np.array([0.5, -0.5])
    total = sum(np.expand_dims(legs, tuple(i for i in range(5) if i != axis))
                for axis in range(1, 5))
    allowed = np.abs(physical[:, None, None, None, None] - total) < 1e-9
    a = np.random.default_rng(seed).standard_normal((2,) * 5) * allowed
    a = np.asarray(peps.symmetrize(a + a[::-1, ::-1, ::-1, ::-1, ::-1]))
    return a / np.linalg.norm(a)


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_exactly_degenerate_corner_multiplets_converge(mode):
    params, chi = symmetric_tensor(), 12
    stats = {}
    energy, env = peps.energy(params, chi, H, stats=stats)
    w = np.sort(np.linalg.eigvalsh(np.asarray(env[0])))
    assert np.sum(np.abs(np.diff(w)) < 1e-12 * np.abs(w).max()) >= 1     # a pair
    assert stats["residual"] <= 1e-7
    grad = run(tp.grad(lambda p: peps.energy(p, chi, H, env0=env)[0]), mode, params) \
        if mode == "jit" else np.asarray(tp.grad(
            lambda p: peps.energy(p, chi, H, env0=env)[0])(params))
    direction = symmetric_tensor(seed=6)        # keeps the symmetry (and the multiplets)
    eps = 1e-5
    central = (float(peps.energy(params + eps * direction, chi, H, env0=env)[0])
               - float(peps.energy(params - eps * direction, chi, H, env0=env)[0])) / (2 * eps)
    assert np.sum(np.asarray(grad) * direction) == pytest.approx(central, abs=1e-7)


def test_the_optimum_is_stationary(optimum):
    _, env = peps.energy(optimum.x, 16, H)
    grad = tp.jit(tp.grad(lambda p, e: peps.energy(p, 16, H, env0=e)[0]))(optimum.x, env)
    assert np.max(np.abs(np.asarray(grad))) < 1e-6


def test_the_cycle_of_a_sign_fixed_move_is_gone():
    """Iterating the move alone converges the corner spectrum, but not the environment:
    the eigenvectors' signs and the layer order come back changed (a cycle); the
    environment of peps.environment is a fixed point element-wise."""
    params, chi = peps.random_tensor(2, 2, seed=1), 16
    a = np.asarray(peps.double_layer(peps.normalized(params)))
    env = peps.grown_environment(a, chi)
    changes = []
    for _ in range(60):
        new = peps.move(env, a, chi)
        changes.append(max(np.abs(x - y).max() / np.abs(x).max() for x, y in zip(new, env)))
        env = new
    assert min(changes[-10:]) > 1e-3                     # never settles
    stats = {}
    fixed = peps.environment(a, chi, env, stats=stats)
    assert stats["residual"] <= 1e-7
    again = peps.aligned_move(fixed, a, peps.relative_gauge(peps.move(fixed, a, chi), fixed),
                              chi)
    for x, y in zip(again, fixed):
        np.testing.assert_allclose(x, y, atol=1e-7)


def test_the_relative_gauge_reads_signs_from_the_strongest_overlaps():
    """relative_gauge recovers the signs and the layer swap that map an environment onto
    a gauge-transformed copy; signs are read along the strongest overlaps, so an entry
    that is zero or tiny never decides, and states nothing couples keep +."""
    rng = np.random.default_rng(7)
    k, side = 9, 2
    c = rng.standard_normal((k, k))
    t = rng.standard_normal((k, side * side, k))
    c, t = c + c.T, t + t.transpose(2, 1, 0)
    c[:, 5:], c[5:, :], t[:, :, 5:], t[:, :, :5] = 0, 0, 0, 0   # blocks 0..4 and 5..8
    t[5:, :, 5:] = rng.standard_normal((4, side * side, 4))
    t[5:, :, 5:] += t[5:, :, 5:].transpose(2, 1, 0)
    c[0, 1] = c[1, 0] = 1e-300          # states 0 and 1: no overlap (it underflows), so
    t[0, :, 1] = t[1, :, 0] = 0         # their relative sign is read through others
    signs = np.array([1, -1, -1, 1, -1, -1, 1, 1, -1], float)
    swapped = peps._swap_layers(t)
    new = (c * np.outer(signs, signs), swapped * signs[:, None, None] * signs[None, None, :])
    got, flag = peps.relative_gauge(new, (c, t))
    assert flag == 1.0
    expected = signs * np.where(np.arange(k) < 5, signs[0], signs[5])   # + at each block
    np.testing.assert_array_equal(got, expected)
    back = peps._swap_layers(new[1]) * got[:, None, None] * got[None, None, :]
    np.testing.assert_array_equal(back, t)


def test_observables_of_the_optimum(optimum):
    """The D = 2 optimum is Neel ordered (m ~ 0.4 in the literature of this ansatz) with a
    short correlation length; a product state has m = 1/2 and no correlations."""
    a = peps.normalized(optimum.x)
    _, env = peps.energy(optimum.x, 16, H)
    m = float(peps.magnetization(a, env))
    assert 0.35 < m < 0.45
    assert 0.5 < peps.correlation_length(env) < 10.0
    up = np.zeros((2,) * 5)
    up[0, 0, 0, 0, 0] = 1.0
    _, env = peps.energy(up, 4, H)
    assert float(peps.magnetization(up, env)) == pytest.approx(0.5, abs=1e-12)
    rho = np.asarray(peps.site_density_matrix(env, peps.open_double_layer(up)))
    np.testing.assert_allclose(rho, [[1, 0], [0, 0]], atol=1e-12)


def test_complex_states_are_refused_not_mistreated():
    """The C4v moves are real; the error points to the unit-cell code, which is not."""
    state = peps.random_tensor(2, 2) * (1 + 0.5j)
    with pytest.raises(tp.errors.ArgumentError, match="real tensors only.*peps_cell"):
        peps.energy(state, 8, H)


def test_stats_of_a_compiled_energy_are_each_calls():
    """Under tp.jit the stats of both solves (the spectrum's and the aligned move's) are
    written by each call of the program, not once at its trace."""
    a = peps.random_tensor(2, 2, seed=3)
    stats = {}
    energy = tp.jit(lambda p, env0: peps.energy(p, 8, peps.heisenberg(), env0=env0,
                                                stats=stats))
    cold = peps.grown_environment(peps.double_layer(peps.normalized(tp.tensor(a))), 8)
    _, env = energy(a, cold)
    first = (stats["spectrum_iterations"], stats["iterations"])
    energy(a, env)                                  # warm: the same program, fewer moves
    assert energy.trace_count == 1
    assert stats["spectrum_iterations"] < first[0]
    assert stats["spectrum_converged"] and stats["converged"]


def test_a_tensor_without_an_isolated_environment_raises_on_its_gradient():
    """random_tensor(2, 2, seed=106): its corner spectrum pairs every value with its
    negative (+-1 leading), and the gauge-fixed move has a line of fixed points (its
    Jacobian the eigenvalue 1; the energy changes along the line).  The value is the one
    the start leads to; the gradient does not exist, and the error says why."""
    a = peps.random_tensor(2, 2, seed=106)
    h = peps.heisenberg()
    _, env = peps.energy(a, 8, h)
    w = peps.corner_spectrum_of(env)
    np.testing.assert_allclose(np.sort(w), np.sort(-w), atol=1e-8)       # +-lambda pairs
    with pytest.raises(tp.errors.ConvergenceError, match="eigenvalue 1\\b.*not isolated"):
        tp.grad(lambda q: peps.energy(q, 8, h)[0])(a)

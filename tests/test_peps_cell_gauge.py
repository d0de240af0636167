"""The relative gauge of two environments of a unit cell (tenpy_ad.models.peps_cell_gauge):
a change of gauge made of random signs (phases, for a complex cell) on every bond state is
found again and undone, and the changed environment is the same network (its energy)."""
from functools import partial

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.models import peps, peps_cell, peps_cell_gauge
from tenpy_ad.solvers import residual_of

HEISENBERG = peps.heisenberg(rotated=False)


def _leaves(env):
    return [np.asarray(t) for column in env for site in column for t in site]


@pytest.mark.parametrize("dtype, shape", [(float, (2, 2)), (complex, (2, 2)),
                                          (complex, (3, 1)), (float, (1, 1))])
def test_a_gauge_of_signs_or_phases_is_found_and_undone(dtype, shape):
    cell = peps_cell.random_cell(*shape, seed=4, dtype=dtype)
    layers = peps_cell.double_layers(peps_cell.normalized_cell(cell))
    env = peps_cell._as_tree(peps_cell.grown_environment(layers, 6))
    sizes = peps_cell_gauge._bond_sizes([t.shape for t in _leaves(env)], *shape)
    rng = np.random.default_rng(5)
    if dtype is complex:
        factors = [np.diag(np.exp(2j * np.pi * rng.random(n))) for n in sizes]
    else:
        factors = [np.diag(rng.choice([-1.0, 1.0], n)) for n in sizes]
    changed = peps_cell_gauge.regauged(env, factors)
    assert residual_of(_leaves(changed), _leaves(env)) > 0.5
    energy = peps_cell.energy_per_site(cell, env, HEISENBERG)
    assert float(peps_cell.energy_per_site(cell, changed, HEISENBERG)) == \
        pytest.approx(float(energy), abs=1e-13)                 # the same network
    found = peps_cell_gauge.relative_gauge(changed, env)
    assert residual_of(_leaves(peps_cell_gauge.regauged(changed, found)), _leaves(env)) \
        < 1e-13


def _turns(rng, n: int, dtype, largest: float) -> np.ndarray:
    """Signs, and each pair of states turned by an angle up to ``largest``."""
    u = np.diag(rng.choice([-1.0, 1.0], n)).astype(dtype)
    for i in range(0, n - 1, 2):
        angle = (rng.random() - 0.5) * 2 * largest
        u[i:i + 2, i:i + 2] = u[i:i + 2, i:i + 2] @ np.array(
            [[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    return u


@pytest.mark.parametrize("dtype, shape", [(float, (2, 2)), (float, (2, 1)), (float, (1, 1)),
                                          (complex, (2, 2))])
def test_rotations_inside_pairs_are_found_and_undone(dtype, shape):
    """What signs cannot undo (pairs turned by up to 0.5 rad, and by any angle, where
    alternating polar factors alone stop at a local optimum for most draws) the
    refinement to unitaries does; for a complex cell also a random unitary on every bond."""
    cell = peps_cell.random_cell(*shape, seed=4, dtype=dtype)
    layers = peps_cell.double_layers(peps_cell.normalized_cell(cell))
    env = peps_cell._as_tree(peps_cell.grown_environment(layers, 6))
    sizes = peps_cell_gauge._bond_sizes([t.shape for t in _leaves(env)], *shape)
    rng = np.random.default_rng(6)
    changes = [[_turns(rng, n, dtype, largest) for n in sizes] for largest in (0.5, np.pi)]
    if dtype is complex:
        changes.append([np.linalg.qr(rng.standard_normal((n, n))
                                     + 1j * rng.standard_normal((n, n)))[0] for n in sizes])
    for factors in changes:
        changed = peps_cell_gauge.regauged(env, factors)
        found = [np.asarray(f) for f in peps_cell_gauge.relative_gauge(changed, env)]
        assert residual_of(_leaves(peps_cell_gauge.regauged(changed, found)),
                           _leaves(env)) < 1e-12


def test_differentiating_the_relative_gauge_raises_naming_the_op():
    """The unitaries are read off values: their phases and rotations move with the
    tensors, so a zero derivative would be wrong.  Every mode raises instead; found from
    environments held constant (tp.stop_gradient, as the cell's fixed point passes them)
    they are a constant in every mode."""
    cell = peps_cell.random_cell(1, 1, seed=4, dtype=complex)
    layers = peps_cell.double_layers(peps_cell.normalized_cell(cell))
    env = _leaves(peps_cell._as_tree(peps_cell.grown_environment(layers, 4)))

    def weighted(corner, held):
        site = ((tp.stop_gradient(corner) if held else corner),) + tuple(env[1:])
        factors = peps_cell_gauge.relative_gauge([[site]], [[tuple(env)]])
        return tp.real(tp.sum(factors[0] * corner))

    corner = env[0]
    found = np.asarray(peps_cell_gauge.relative_gauge([[tuple(env)]], [[tuple(env)]])[0])
    constant = lambda c: tp.real(tp.sum(found * c))
    for held in (False, True):
        f = partial(weighted, held=held)
        x = tp.tensor(corner, requires_grad=True)
        routes = [lambda: tp.grad(f)(corner), lambda: tp.jit(tp.grad(f))(corner),
                  lambda: tp.jvp(f, (corner,), (np.ones_like(corner),))[1],
                  lambda: (f(x).backward(), x.grad)[1]]
        for route in routes:
            if not held:
                with pytest.raises(tp.errors.NotDifferentiableError,
                                   match="ipeps_cell_relative_gauge.*stop_gradient"):
                    route()
                continue
            got = np.asarray(route())
            expected = tp.grad(constant)(corner) if got.ndim else np.sum(found.real)
            np.testing.assert_allclose(got, expected, atol=1e-12)    # grad, or jvp of ones

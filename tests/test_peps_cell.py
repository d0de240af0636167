"""The unit-cell iPEPS with directional CTMRG (tenpy_ad.models.peps_cell): the 2 x 2 Neel
cell of the C4v optimum reproduces the C4v energy, the classical Ising model's exact
magnetisation and energy (Onsager, Yang) as 1 x 1 and 2 x 2 cells, cells of one repeated
tensor of every shape agree, and the implicit gradient against central differences and
against differentiating through the steps."""
from functools import partial
from pathlib import Path

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ConvergenceError
from tenpy_ad.models import ctmrg, onsager, peps, peps_cell
from tenpy_ad.solvers import residual_of

ROTATED = peps.heisenberg()
HEISENBERG = peps.heisenberg(rotated=False)
FLIP = np.array([[0.0, -1.0], [1.0, 0.0]])        # exp(-i pi S^y), real
DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def optimum():
    """The C4v D = 2, chi = 16 optimum from the default start (in the rotated frame)."""
    result = peps.optimize(ROTATED, bond=2, chi=16)
    assert result.success, result.message
    return result


def test_the_flip_undoes_the_sublattice_rotation():
    """peps.heisenberg(rotated=True) is the bond with its second site turned by pi about
    y: (1 (x) U) h (1 (x) U^T) with U = exp(-i pi S^y)."""
    two = np.kron(np.eye(2), FLIP)
    np.testing.assert_allclose(two @ HEISENBERG.reshape(4, 4) @ two.T, ROTATED.reshape(4, 4),
                               atol=1e-15)


def test_the_neel_cell_reproduces_the_c4v_energy(optimum):
    a = np.asarray(peps.normalized(optimum.x))
    c4v, _ = peps.energy(optimum.x, 16, ROTATED)
    assert float(c4v) == pytest.approx(peps.HEISENBERG_D2, abs=1e-8)
    cell = peps_cell.neel_cell(a, FLIP)
    stats = {}
    energy, env = peps_cell.cell_energy(cell, 16, HEISENBERG, stats=stats)
    assert float(energy) == pytest.approx(float(c4v), abs=1e-8)
    assert stats["monitor_residual"] <= 1e-7      # the edges' weak states: a rounding floor
    horizontal, vertical = peps_cell.bond_energies(peps_cell.normalized_cell(cell), env,
                                                   HEISENBERG)
    bonds = np.array([float(e) for column in horizontal + vertical for e in column])
    np.testing.assert_allclose(bonds, float(c4v) / 2, atol=1e-8)      # every bond alike
    # not by construction: the unflipped tensor everywhere is another (worse) state
    same, _ = peps_cell.cell_energy([[a, a], [a, a]], 16, HEISENBERG)
    assert float(same) > float(c4v) + 0.1


def _ising(beta):
    w = np.asarray(ctmrg.bond_factor(beta))
    return w, np.einsum("ai,aj,ak,al->ijkl", w, w, w, w), np.asarray(ctmrg.spin_tensor(beta))


@pytest.mark.parametrize("beta", [0.3, 0.6])
@pytest.mark.parametrize("size", [1, 2])
def test_the_classical_ising_model_matches_onsager_and_yang(beta, size):
    """The Boltzmann-weight network (bond factors W, exp(b s s') = W W^T) as an
    ``size x size`` cell, its boundary fixed to spin up: <s> (Yang's magnetisation, 0 in
    the paramagnet) and the energy per site -2 <s s'> (Onsager)."""
    w, a, spin = _ising(beta)
    layers = [[a] * size for _ in range(size)]
    env0 = peps_cell.grown_environment(layers, 16, closure=w[0])
    env = peps_cell.environment(layers, 16, env0, tol=1e-13)
    for x in range(size):
        for y in range(size):
            m = peps_cell.site_value(env, spin, x, y) / peps_cell.site_value(env, a, x, y)
            assert float(m) == pytest.approx(onsager.magnetization(beta), abs=1e-6)
            right = (peps_cell.horizontal_value(env, spin, spin, x, y)
                     / peps_cell.horizontal_value(env, a, a, x, y))
            assert -2 * float(right) == pytest.approx(onsager.energy(beta), abs=1e-9)


def test_cells_of_one_tensor_agree_in_every_shape(optimum):
    """A repeated tensor is the same state whatever the cell (1x1, 2x1, 1x2, 2x2, 3x2):
    the C4v optimum everywhere, in the rotated frame, has the C4v energy.  (At a chi that
    truncates badly -- a random D = 2 tensor at chi = 8 keeps singular values down to
    only 2e-3 -- the directional moves' fixed point depends on the cell and the order of
    the moves by about the truncation error, 1e-5 there.)"""
    a = np.asarray(peps.normalized(optimum.x))
    energies = [float(peps_cell.cell_energy([[a] * ly for _ in range(lx)], 16, ROTATED)[0])
                for lx, ly in ((1, 1), (2, 1), (1, 2), (2, 2), (3, 2))]
    np.testing.assert_allclose(energies, float(peps.energy(optimum.x, 16, ROTATED)[0]),
                               atol=1e-9)


def _chain_cell(seed: int, rows: bool, bond: int = 2) -> list:
    """A random 2 x 2 cell whose vertical (``rows``) or horizontal bonds are rank one
    (index 0 only): decoupled chains, each a period-2 matrix product state."""
    rng = np.random.default_rng(seed)
    cell = [[np.zeros((2,) + (bond,) * 4) for _ in range(2)] for _ in range(2)]
    for column in cell:
        for a in column:
            if rows:
                a[:, 0, :, 0, :] = rng.standard_normal((2, bond, bond))
            else:
                a[:, :, 0, :, 0] = rng.standard_normal((2, bond, bond))
    return peps_cell.normalized_cell(cell)


def _chain_density_matrices(m0, m1) -> tuple:
    """The exact bond density matrices ``rho[s1, t1, s2, t2]`` of the bonds (0, 1) and
    (1, 0) of the infinite real MPS with period ``m0[s, l, r], m1[s, l, r]``, from the
    transfer matrices' dominant eigenvectors."""
    def transfer(m):
        return np.einsum("sab,scd->acbd", m, m).reshape(m.shape[1] ** 2, -1)

    def opened(m):
        return np.einsum("sab,tcd->stacbd", m, m).reshape(2, 2, m.shape[1] ** 2, -1)

    def dominant(t):
        w, v = np.linalg.eig(t)
        v = v[:, np.argmax(np.abs(w))]
        return np.real(v / v[np.argmax(np.abs(v))])           # real up to its phase

    t = transfer(m0) @ transfer(m1)
    left, right = dominant(t.T), dominant(t)

    def rho(left, a, b, right):
        r = np.einsum("a,stab,uvbc,c->sutv", left, opened(a), opened(b), right)
        r = r.transpose(0, 2, 1, 3)
        return r / np.einsum("iijj->", r)

    return (rho(left, m0, m1, right),
            rho(left @ transfer(m0), m1, m0, transfer(m1) @ right))


@pytest.mark.parametrize("rows", [True, False])
def test_decoupled_chains_have_their_exact_density_matrices(rows):
    """Non-symmetric tensors whose state is a set of independent chains (rows, or
    columns): every bond along a chain has the MPS's exact density matrix, every bond
    across is a product of two site density matrices."""
    cell = _chain_cell(3, rows)
    _, env = peps_cell.cell_energy(cell, 8, HEISENBERG)
    opened = [[peps.open_double_layer(a) for a in column] for column in cell]
    for k in range(2):
        if rows:
            chain = [cell[x][k][:, 0, :, 0, :] for x in range(2)]
            along = [peps_cell.horizontal_density_matrix(env, opened, x, k) for x in range(2)]
            across = peps_cell.vertical_density_matrix(env, opened, k, 0)
        else:
            chain = [cell[k][y][:, :, 0, :, 0] for y in range(2)]     # up = the left bond
            along = [peps_cell.vertical_density_matrix(env, opened, k, y) for y in range(2)]
            across = peps_cell.horizontal_density_matrix(env, opened, 0, k)
        for got, exact in zip(along, _chain_density_matrices(*chain)):
            np.testing.assert_allclose(np.asarray(got), exact, atol=1e-12)
        across = np.asarray(across)
        product = np.einsum("iI,jJ->iIjJ", np.einsum("iIjj->iI", across),
                            np.einsum("iijJ->jJ", across))
        np.testing.assert_allclose(across, product, atol=1e-14)


def _ring(tensors):
    """The row transfer matrix of ``tensors[k][u, l, d, r]`` around a periodic row:
    ``[(u_0 .. u_n-1), (d_0 .. d_n-1)]``."""
    m = tensors[0].transpose(1, 0, 2, 3)                          # l_0, u, d, r
    for t in tensors[1:]:
        m = np.tensordot(m, t, axes=([3], [1])).transpose(0, 1, 3, 2, 4, 5)
        a, up, u, down, d, r = m.shape
        m = m.reshape(a, up * u, down * d, r)
    return np.einsum("aUDa->UD", m)


def _fused(left, right):
    """Two horizontal neighbours ``[u, l, d, r]`` as one tensor (their u's, d's fused)."""
    p = np.einsum("ulda,vaer->uvlder", left, right)
    u, v, l, d, e, r = p.shape
    return p.reshape(u * v, l, d * e, r)


def _torus_horizontal_bonds(layers, opened, h, size):
    """``<h>`` on the bond right of each site of the cell, on a ``size x size`` torus of the
    cell's double layers, exactly (row transfer matrices)."""
    lx, ly = len(layers), len(layers[0])
    rows = [_ring([layers[x % lx][y % ly] for x in range(size)]) for y in range(size)]
    norm = np.trace(np.linalg.multi_dot(rows))
    bonds = {}
    for x in range(lx):
        for y in range(ly):
            pair = np.einsum("iIulda,jJvaer,IJij->uvlder", opened[x][y], opened[(x + 1) % lx][y],
                             h)
            u, v, l, d, e, r = pair.shape
            row = [layers[k % lx][y] for k in range(size)]
            row = row[:x] + [pair.reshape(u * v, l, d * e, r)] + row[x + 2:]
            inserted = rows[:y] + [_ring(row)] + rows[y + 1:]
            bonds[x, y] = np.trace(np.linalg.multi_dot(inserted)) / norm
    return bonds


def _quarter_turned(grid, turn):
    lx = len(grid)
    return [[turn(grid[(-yn) % lx][xn]) for yn in range(lx)] for xn in range(len(grid[0]))]


def test_a_weakly_correlated_general_cell_matches_the_exact_torus():
    """Four general tensors near a Neel product state (short correlations): every bond's
    energy agrees with the exact contraction of a 4 x 4 torus to its finite-size effects
    (at 0.08 off the product state: 1.6e-5 on the 4 x 4 torus, 4e-8 on the 6 x 6 one; the
    bonds' own deviations from the product state's are about 1e-3 here)."""
    rng = np.random.default_rng(0)
    cell = [[0.05 * rng.standard_normal((2,) * 5) for _ in range(2)] for _ in range(2)]
    for x in range(2):
        for y in range(2):
            cell[x][y][(x + y) % 2, 0, 0, 0, 0] += 1.0
    cell = peps_cell.normalized_cell(cell)
    _, env = peps_cell.cell_energy(cell, 16, HEISENBERG)
    horizontal, vertical = peps_cell.bond_energies(cell, env, HEISENBERG)
    layers = [[np.asarray(peps.double_layer(a)) for a in column] for column in cell]
    opened = [[np.asarray(peps.open_double_layer(a)) for a in column] for column in cell]
    exact = _torus_horizontal_bonds(layers, opened, HEISENBERG, 4)
    # the vertical bonds are the horizontal ones of the cell turned a quarter (down -> right)
    turned = _torus_horizontal_bonds(
        _quarter_turned(layers, lambda a: a.transpose(3, 0, 1, 2)),
        _quarter_turned(opened, lambda a: a.transpose(0, 1, 5, 2, 3, 4)), HEISENBERG, 4)
    for x in range(2):
        for y in range(2):
            assert float(horizontal[x][y]) == pytest.approx(exact[x, y], abs=1e-5)
            assert float(vertical[x][y]) == pytest.approx(turned[y, (-x) % 2], abs=1e-5)
            assert abs(float(horizontal[x][y]) + 0.25) > 1e-4     # not the product state's


def test_a_quarter_turn_four_times_is_the_identity():
    cell = peps_cell.random_cell(3, 2, seed=1)
    layers = peps_cell.double_layers(cell)
    env = peps_cell.initial_environment(layers)
    turned_layers, turned_env = layers, env
    for _ in range(4):
        turned_layers, turned_env = peps_cell.rotated(turned_layers, turned_env)
    for x in range(3):
        for y in range(2):
            np.testing.assert_array_equal(turned_layers[x][y], layers[x][y])
            for t, t0 in zip(turned_env[x][y], env[x][y]):
                np.testing.assert_array_equal(t, t0)


def _random_direction(cell, seed):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(a.shape) for a in column] for column in cell]


def _shifted(cell, direction, eps):
    return [[a + eps * d for a, d in zip(ca, cd)] for ca, cd in zip(cell, direction)]


def _dot(grad, direction):
    return sum(float(np.sum(np.asarray(g) * d))
               for cg, cd in zip(grad, direction) for g, d in zip(cg, cd))


def test_implicit_gradient_matches_central_differences():
    cell, chi = peps_cell.random_cell(2, 2, seed=0), 8
    _, env = peps_cell.cell_energy(cell, chi, HEISENBERG, tol=1e-12)
    stats = {}

    def energy(c):
        return peps_cell.cell_energy(c, chi, HEISENBERG, env0=env, tol=1e-12, stats=stats)[0]

    grad = tp.grad(energy)(cell)
    assert stats["residual"] <= 1e-11                    # a fixed point element-wise
    direction = _random_direction(cell, 1)
    eps = 1e-5
    central = (float(energy(_shifted(cell, direction, eps)))
               - float(energy(_shifted(cell, direction, -eps)))) / (2 * eps)
    assert _dot(grad, direction) == pytest.approx(central, abs=1e-7)


def test_implicit_gradient_matches_the_gradient_through_the_steps():
    cell, chi = peps_cell.random_cell(2, 2, seed=2), 8
    _, env = peps_cell.cell_energy(cell, chi, HEISENBERG, tol=1e-13)

    def unrolled(c):
        normal = peps_cell.normalized_cell(c)
        layers = peps_cell.double_layers(normal)
        state = env
        for _ in range(25):
            state = peps_cell.step(state, layers, chi)
        return peps_cell.energy_per_site(normal, state, HEISENBERG)

    implicit = tp.grad(lambda c: peps_cell.cell_energy(c, chi, HEISENBERG, env0=env,
                                                       tol=1e-13)[0])(cell)
    through = tp.grad(unrolled)(cell)
    for ci, ct in zip(implicit, through):
        for gi, gt in zip(ci, ct):
            np.testing.assert_allclose(np.asarray(gi), np.asarray(gt), atol=1e-8)


def test_the_compiled_gradient_is_the_eager_one():
    cell, chi = peps_cell.random_cell(2, 2, seed=0), 8
    _, env = peps_cell.cell_energy(cell, chi, HEISENBERG)

    def energy(c, e):
        return peps_cell.cell_energy(c, chi, HEISENBERG, env0=e)[0]

    eager = tp.grad(energy)(cell, env)
    compiled = tp.jit(tp.value_and_grad(energy))(cell, env)
    assert float(compiled[0]) == pytest.approx(float(energy(cell, env)), abs=1e-12)
    for ce, ct in zip(eager, compiled[1]):
        for ge, gt in zip(ce, ct):
            np.testing.assert_allclose(np.asarray(gt), np.asarray(ge), atol=1e-8)


def _checked_implicit_gradient(cell, chi: int, direction) -> dict:
    """The compiled energy and implicit gradient of ``cell`` from its grown environment,
    checked against the energy evaluated anew and against central differences along
    ``direction``; returns the solve's stats."""
    env0 = peps_cell.grown_environment(peps_cell.double_layers(
        peps_cell.normalized_cell(cell)), chi)
    stats = {}

    def energy(c, e):
        return peps_cell.cell_energy(c, chi, HEISENBERG, env0=e, stats=stats)[0]

    value, grad = tp.jit(tp.value_and_grad(energy))(cell, env0)

    def along(step):
        return float(peps_cell.cell_energy([[a + step * d for a, d in zip(ca, cd)]
                                            for ca, cd in zip(cell, direction)], chi,
                                           HEISENBERG, env0=env0)[0])

    assert float(value) == pytest.approx(along(0.0), abs=1e-12)
    projected = sum(float(np.sum(np.asarray(g) * d))
                    for cg, cd in zip(grad, direction) for g, d in zip(cg, cd))
    assert projected == pytest.approx((along(1e-5) - along(-1e-5)) / 2e-5, abs=1e-7)
    return stats


@pytest.mark.slow
def test_states_weaker_than_the_cutoff_leave_an_element_wise_fixed_point():
    """A perturbed Neel cell whose cuts keep states at 1e-9 of the projector spectrum
    (vectors that rounding sets, then scaled by S^-1/2): they are dropped (CUTOFF), and
    the gauge-fixed solve converges element-wise, its implicit gradient equal to central
    differences.  With the old cutoff, 1e-12, that solve stalled at a residual of 0.54."""
    rng = np.random.default_rng(1)
    cell = [[a + 0.02 * rng.standard_normal(a.shape) for a in column]
            for column in peps_cell.neel_cell(peps.random_tensor(2, 2, seed=3))]
    cell = [[a + 1e-3 * rng.standard_normal(a.shape) for a in column] for column in cell]
    direction = [[rng.standard_normal(a.shape) for a in column] for column in cell]
    stats = _checked_implicit_gradient(cell, 16, direction)
    assert stats["spectrum_iterations"] >= 1 and stats["residual"] < 1e-7


def test_a_boundary_of_paired_states_moves_only_by_signs():
    """A real cell met on an optimisation's path (a 2 x 2 Heisenberg run from the CLI's
    Neel start) whose boundary pairs every state, exactly: a real environment that
    represents a complex one, each pair a complex state's real and imaginary parts, which
    no operator of the network can split.  Pinning each state to a pivot row of the
    input's basis leaves the steps changing the environment by signs only, then not at
    all every second step; the former rule (the eigenbasis of a fixed operator inside
    each pair) turned every pair by a new angle at every step (|change| 0.76 after 40).
    The sign cycle that remains is no element-wise fixed point, and the solve says so
    within a few steps instead of after max_iter."""
    cell = [list(column) for column in np.load(DATA / "paired_boundary_cell.npy")]
    layers = peps_cell.double_layers(peps_cell.normalized_cell(cell))
    env = peps_cell._as_tree(peps_cell.environment(
        layers, 8, peps_cell.grown_environment(layers, 8)))       # the invariants
    spectrum = np.asarray(peps_cell.corner_spectra(env)[0])
    np.testing.assert_allclose(spectrum[0::2], spectrum[1::2], rtol=1e-9)   # paired
    leaves = []
    for _ in range(40):
        env = peps_cell.step(env, layers, 8)
        leaves.append([np.asarray(t) for site in peps_cell._flat(env) for t in site])
    assert residual_of([np.abs(t) for t in leaves[-1]], [np.abs(t) for t in leaves[-2]]) \
        < 1e-9
    assert residual_of(leaves[-1], leaves[-3]) < 1e-9
    assert residual_of(leaves[-1], leaves[-2]) > 1.0                 # the signs cycle
    with pytest.raises(ConvergenceError, match="alternates") as stalled:
        tp.fixed_point(partial(peps_cell.step, chi=8), env, layers, tol=1e-10)
    assert stalled.value.iterations < 20


def test_the_gauge_fixed_solve_converges_where_the_signs_cycle():
    """At that cell the step followed by the constant relative gauge of its last two
    environments (peps_cell_gauge) has an element-wise fixed point, whose implicit
    gradient equals central differences (without the gauge the solve stopped in a 2-cycle:
    no gradient at all)."""
    cell = [list(column) for column in np.load(DATA / "paired_boundary_cell.npy")]
    direction = [[np.cos(np.arange(a.size) * (1.0 + x + 2 * y)).reshape(a.shape)
                  for y, a in enumerate(column)] for x, column in enumerate(cell)]
    stats = _checked_implicit_gradient(cell, 8, direction)
    assert stats["spectrum_residual"] > 1.0                     # the steps' signs cycle
    assert stats["converged"] is True and stats["residual"] <= 1e-10


def test_implicit_false_differentiated_never_gives_a_zero_derivative():
    """``implicit=False`` skips the gauge-fixed solve.  Differentiated anyway, the
    derivative is the spectrum solve's own: where its iterate is an element-wise fixed
    point that is the implicit gradient; where the steps' signs cycle (the paired cell)
    it raises.  (Before, the environment came out of stop_gradient'ed layers: the
    environment's part of the gradient was silently zero.)"""
    def gradient(cell, chi, implicit):
        return tp.grad(lambda *ts: peps_cell.cell_energy(
            [list(ts[:2]), list(ts[2:])], chi, HEISENBERG, implicit=implicit)[0],
            argnums=(0, 1, 2, 3))(*[a for column in cell for a in column])

    cell = peps_cell.random_cell(2, 2, seed=1)
    for with_gauge, without in zip(gradient(cell, 6, True), gradient(cell, 6, False)):
        np.testing.assert_allclose(np.asarray(without), np.asarray(with_gauge), atol=1e-9)
    paired = [list(column) for column in np.load(DATA / "paired_boundary_cell.npy")]
    with pytest.raises(ConvergenceError, match="the derivative needs a fixed point"):
        gradient(paired, 8, False)


def test_the_gauge_fixed_solve_converges_where_a_step_turns_the_pairs():
    """Another cell of that path, whose steps turn each pair of states (so consecutive
    environments differ by rotations inside the pairs, not by signs): the relative gauge
    is refined to unitaries, and the solve converges (with signs alone it ran 2000 steps
    and stopped at a residual of 0.06), its implicit gradient equal to central
    differences."""
    cell = [list(column) for column in np.load(DATA / "turning_pairs_cell.npy")]
    direction = [[np.sin(np.arange(a.size) * (0.7 + x + 3 * y)).reshape(a.shape)
                  for y, a in enumerate(column)] for x, column in enumerate(cell)]
    stats = _checked_implicit_gradient(cell, 8, direction)
    assert stats["residual"] <= 1e-9


def test_a_traced_cell_needs_a_start():
    cell = peps_cell.random_cell(2, 2)
    with pytest.raises(tp.errors.ArgumentError, match="needs env0"):
        tp.jit(lambda c: peps_cell.cell_energy(c, 4, HEISENBERG)[0])(cell)

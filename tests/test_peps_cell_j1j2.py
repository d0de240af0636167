"""Next-nearest neighbours on the unit-cell iPEPS (tenpy_ad.models.peps_cell): the 2 x 2
plaquette density matrix against product states, against a cell of decoupled 4-spin
plaquettes (exact diagonalisation), against the two-site density matrices, and the J1-J2
energy's implicit gradient against central differences."""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.models import peps, peps_cell

HEISENBERG = peps.heisenberg(rotated=False)
SX = np.array([[0.0, 0.5], [0.5, 0.0]])
SY = np.array([[0.0, -0.5j], [0.5j, 0.0]])
SZ = np.diag([0.5, -0.5])


def _opened(cell):
    return [[peps.open_double_layer(a) for a in column] for column in cell]


def _product_cell(spins, bond: int = 2) -> list:
    """``spins[x][y]`` (unit vectors) as site tensors that use only bond index 0."""
    cell = [[np.zeros((2,) + (bond,) * 4) for _ in column] for column in spins]
    for x, column in enumerate(spins):
        for y, spin in enumerate(column):
            cell[x][y][:, 0, 0, 0, 0] = spin
    return cell


def _pure(*states):
    """``rho[s1, t1, s2, t2, ...]`` of ``psi[s1, s2, ...]`` (a product of the ``states``)."""
    rho = np.ones(())
    for psi in states:
        rho = np.multiply.outer(rho, np.multiply.outer(psi, psi))
    return rho


def test_a_product_state_has_the_product_plaquette_and_the_neel_energy():
    """No entanglement: each plaquette's density matrix is the product of its four sites'
    (in the documented order (x,y), (x+1,y), (x,y+1), (x+1,y+1)), and the Neel state's
    J1-J2 energy is -J1/2 + J2/2 per site (<Sz Sz> = -1/4 on the two nearest bonds, +1/4
    on the two next-nearest bonds of each site)."""
    rng = np.random.default_rng(7)
    spins = [[v / np.linalg.norm(v) for v in rng.standard_normal((2, 2))] for _ in range(2)]
    cell = _product_cell(spins)
    _, env = peps_cell.cell_energy(cell, 4, HEISENBERG)
    opened = _opened(cell)
    for x in range(2):
        for y in range(2):
            sites = [spins[x][y], spins[1 - x][y], spins[x][1 - y], spins[1 - x][1 - y]]
            rho = np.asarray(peps_cell.plaquette_density_matrix(env, opened, x, y))
            np.testing.assert_allclose(rho, _pure(*sites), atol=1e-14)
            diagonal, anti = peps_cell.diagonal_density_matrices(env, opened, x, y)
            np.testing.assert_allclose(np.asarray(diagonal), _pure(sites[0], sites[3]),
                                       atol=1e-14)
            np.testing.assert_allclose(np.asarray(anti), _pure(sites[1], sites[2]),
                                       atol=1e-14)
    up, down = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    neel = _product_cell([[up, down], [down, up]])
    for j1, j2 in ((1.0, 0.0), (1.0, 0.5), (0.7, -1.3)):
        h_bond, h_diagonal = peps.j1j2(j2, j1)
        energy, _ = peps_cell.cell_energy(neel, 4, h_bond, h_diagonal=h_diagonal)
        assert float(energy) == pytest.approx(-j1 / 2 + j2 / 2, abs=1e-14)


def _ring_ground_state() -> np.ndarray:
    """The ground state ``psi[s1, s2, s3, s4]`` of the 4-spin Heisenberg ring
    1 - 2 - 4 - 3 - 1 (the plaquette (0,0), (1,0), (0,1), (1,1)), exact diagonalisation."""
    def two(k, m):
        total = np.zeros((16, 16), complex)
        for op in (SX, SY, SZ):
            factors = [op if i in (k, m) else np.eye(2) for i in range(4)]
            term = factors[0]
            for f in factors[1:]:
                term = np.kron(term, f)
            total += term
        return total

    h = two(0, 1) + two(1, 3) + two(3, 2) + two(2, 0)
    w, v = np.linalg.eigh(h)
    assert w[0] == pytest.approx(-2.0) and w[1] > w[0] + 0.5      # non-degenerate
    psi = v[:, 0] * np.exp(-1j * np.angle(v[np.argmax(np.abs(v[:, 0])), 0]))
    assert np.abs(psi.imag).max() < 1e-14
    return psi.real.reshape(2, 2, 2, 2)


def _plaquette_cell(psi, bond: int = 4) -> list:
    """A 2 x 2 cell whose four sites hold ``psi`` as an open chain (0,0) -r- (1,0) -d-
    (1,1) -l- (0,1) (SVDs; bonds up to 4), every other bond -- the closing one (0,0)-(0,1)
    and all those leaving the cell -- index 0 only: a lattice of decoupled plaquettes."""
    chain = psi.transpose(0, 1, 3, 2)                     # s1, s2, s4, s3 along the chain
    pieces, rest, left = [], chain.reshape(1, -1), 1
    for _ in range(3):
        u, s, vh = np.linalg.svd(rest.reshape(left * 2, -1), full_matrices=False)
        keep = int(np.sum(s > 1e-12 * s[0]))
        pieces.append(u[:, :keep].reshape(left, 2, keep))
        rest, left = s[:keep, None] * vh[:keep], keep
    pieces.append(rest.reshape(left, 2, 1))
    cell = [[np.zeros((2,) + (bond,) * 4) for _ in range(2)] for _ in range(2)]
    p1, p2, p4, p3 = pieces                               # [left bond, s, right bond]
    cell[0][0][:, 0, 0, 0, :p1.shape[2]] = p1[0]                       # r
    cell[1][0][:, 0, :p2.shape[0], :p2.shape[2], 0] = p2.transpose(1, 0, 2)   # l, d
    cell[1][1][:, :p4.shape[0], :p4.shape[2], 0, 0] = p4.transpose(1, 0, 2)   # u, l
    cell[0][1][:, 0, 0, 0, :p3.shape[0]] = p3[:, :, 0].T                   # r
    return cell


def test_a_cell_of_decoupled_plaquettes_has_their_exact_correlations():
    """The four sites of the cell in the ground state of the 4-spin ring, bonds leaving the
    cell trivial: the environment is exact, the cell's own plaquette is the pure state,
    the others products of the pieces of two or four plaquettes; <S.S> = -1/2 on the
    ring's bonds, +1/4 on its diagonals, 0 across plaquettes: E = -J1/2 + J2/8."""
    psi = _ring_ground_state()
    cell = _plaquette_cell(psi)
    h_bond, h_diagonal = peps.j1j2(0.6)
    energy, env = peps_cell.cell_energy(cell, 16, h_bond, h_diagonal=h_diagonal)
    assert float(energy) == pytest.approx(-0.5 + 0.6 / 8, abs=1e-12)
    opened = _opened(peps_cell.normalized_cell(cell))
    rho = np.multiply.outer(psi, psi).transpose(0, 4, 1, 5, 2, 6, 3, 7)
    pairs = {"12": np.einsum("iIjJllkk->iIjJ", rho), "34": np.einsum("iijjlLkK->lLkK", rho),
             "13": np.einsum("iIjjlLkk->iIlL", rho), "24": np.einsum("iijJllkK->jJkK", rho)}
    mixed = np.eye(2) / 2
    expected = {(0, 0): rho,
                (1, 0): np.einsum("aAcC,bBdD->aAbBcCdD", pairs["24"], pairs["13"]),
                (0, 1): np.einsum("aAbB,cCdD->aAbBcCdD", pairs["34"], pairs["12"]),
                (1, 1): np.einsum("aA,bB,cC,dD->aAbBcCdD", mixed, mixed, mixed, mixed)}
    for (x, y), exact in expected.items():
        got = np.asarray(peps_cell.plaquette_density_matrix(env, opened, x, y))
        np.testing.assert_allclose(got, exact, atol=1e-12)
    diagonal, anti = peps_cell.diagonal_energies(peps_cell.normalized_cell(cell), env,
                                                 HEISENBERG)
    np.testing.assert_allclose([float(diagonal[0][0]), float(anti[0][0])], 0.25, atol=1e-12)
    others = [float(e[x][y]) for e in (diagonal, anti) for x in range(2) for y in range(2)
              if (x, y) != (0, 0)]
    np.testing.assert_allclose(others, 0.0, atol=1e-12)


def _mismatch(cell, chi: int) -> float:
    """The largest difference between the plaquette's partial traces and the two-site
    density matrices of its four bonds, over the cell's plaquettes."""
    _, env = peps_cell.cell_energy(cell, chi, HEISENBERG, tol=1e-12)
    opened = _opened(peps_cell.normalized_cell(cell))
    worst = 0.0
    for x in range(2):
        for y in range(2):
            rho = np.asarray(peps_cell.plaquette_density_matrix(env, opened, x, y))
            m = rho.transpose(0, 2, 4, 6, 1, 3, 5, 7).reshape(16, 16)
            assert np.abs(m - m.T).max() < 1e-14 and np.linalg.eigvalsh(m)[0] > -1e-14
            assert np.trace(m) == pytest.approx(1.0, abs=1e-14)
            pairs = [(np.einsum("iIjJllkk->iIjJ", rho),
                      peps_cell.horizontal_density_matrix(env, opened, x, y)),
                     (np.einsum("iijjlLkK->lLkK", rho),
                      peps_cell.horizontal_density_matrix(env, opened, x, 1 - y)),
                     (np.einsum("iIjjlLkk->iIlL", rho),
                      peps_cell.vertical_density_matrix(env, opened, x, y)),
                     (np.einsum("iijJllkK->jJkK", rho),
                      peps_cell.vertical_density_matrix(env, opened, 1 - x, y))]
            for traced, bond in pairs:
                worst = max(worst, float(np.abs(traced - np.asarray(bond)).max()))
    return worst


def test_the_plaquette_traces_to_the_bond_density_matrices():
    """The plaquette's partial traces are the horizontal and vertical two-site density
    matrices, read from other corners of the environment: equal where the environment is
    exact, and up to the truncation floor (which shrinks with chi) where it is not."""
    weak = [[0.05 * a for a in column] for column in peps_cell.random_cell(2, 2, seed=3)]
    for x in range(2):
        for y in range(2):
            weak[x][y][(x + y) % 2, 0, 0, 0, 0] += 1.0          # near the Neel state
    assert _mismatch(weak, 16) < 1e-10
    cell = peps_cell.random_cell(2, 2, seed=0)
    coarse, fine = _mismatch(cell, 8), _mismatch(cell, 16)
    # measured: 1.5e-4 at chi = 8, 1.0e-5 at chi = 16 (and 6e-7 at chi = 32)
    assert fine < 3e-5 and fine < coarse / 5


def test_a_zero_j2_is_the_nearest_neighbour_energy():
    cell = peps_cell.random_cell(2, 2, seed=4)
    nearest, env = peps_cell.cell_energy(cell, 8, HEISENBERG)
    h_bond, h_diagonal = peps.j1j2(0.0)
    np.testing.assert_array_equal(h_bond, HEISENBERG)
    assert not np.any(h_diagonal)
    both = peps_cell.energy_per_site(peps_cell.normalized_cell(cell), env, h_bond, h_diagonal)
    assert float(both) == float(nearest)
    # and J2 enters linearly, with the diagonals' own energy
    normal = peps_cell.normalized_cell(cell)
    diagonal, anti = peps_cell.diagonal_energies(normal, env, HEISENBERG)
    per_site = sum(float(e) for column in diagonal + anti for e in column) / 4
    with_j2 = peps_cell.energy_per_site(normal, env, *peps.j1j2(0.5))
    assert float(with_j2) == pytest.approx(float(nearest) + 0.5 * per_site, abs=1e-14)


def _random_direction(cell, seed):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(a.shape) for a in column] for column in cell]


def _shifted(cell, direction, eps):
    return [[a + eps * d for a, d in zip(ca, cd)] for ca, cd in zip(cell, direction)]


def test_the_j1j2_gradient_matches_central_differences():
    cell, chi = peps_cell.random_cell(2, 2, seed=0), 8
    h_bond, h_diagonal = peps.j1j2(0.5)
    _, env = peps_cell.cell_energy(cell, chi, h_bond, tol=1e-12)
    stats = {}

    def energy(c):
        return peps_cell.cell_energy(c, chi, h_bond, env0=env, tol=1e-12, stats=stats,
                                     h_diagonal=h_diagonal, implicit=True)[0]

    grad = tp.grad(energy)(cell)
    assert stats["residual"] <= 1e-11                    # a fixed point element-wise
    direction = _random_direction(cell, 1)
    derivative = sum(float(np.sum(np.asarray(g) * d))
                     for cg, cd in zip(grad, direction) for g, d in zip(cg, cd))
    eps = 1e-5
    central = (float(energy(_shifted(cell, direction, eps)))
               - float(energy(_shifted(cell, direction, -eps)))) / (2 * eps)
    # central differences: O(eps^2) ~ 1e-10 truncation, ~1e-12 / eps ~ 1e-7 from the tol
    assert derivative == pytest.approx(central, rel=1e-6, abs=1e-7)


def test_one_tensor_in_the_rotated_frame_is_its_neel_cell():
    """The same state twice: one C4v tensor as a 1 x 1 cell with the sublattice-rotated
    nearest bond (the diagonals join one sublattice, so their bond is unrotated), and its
    Neel cell with unrotated bonds -- the plaquettes of the one site's environment and of
    four sites' give the same J1-J2 energy (measured 7e-14 at chi = 8 and 16), and the
    C4v symmetry makes the two diagonals alike."""
    a = peps.random_tensor(2, 2, seed=0)
    h_bond, h_diagonal = peps.j1j2(0.4)
    four, _ = peps_cell.cell_energy(peps_cell.neel_cell(a), 8, h_bond, h_diagonal=h_diagonal)
    one, env = peps_cell.cell_energy([[a]], 8, peps.heisenberg(), h_diagonal=h_diagonal)
    assert float(one) == pytest.approx(float(four), abs=1e-12)
    diagonal, anti = peps_cell.diagonal_energies([[a]], env, h_diagonal)
    assert float(diagonal[0][0]) == pytest.approx(float(anti[0][0]), abs=1e-12)
    assert abs(float(diagonal[0][0])) > 1e-3                 # not a trivial agreement

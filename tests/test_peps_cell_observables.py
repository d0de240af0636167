"""Observables of the unit-cell iPEPS (tenpy_ad.models.peps_cell): the Neel cell of a C4v
tensor has the C4v code's magnetisation on every site (its spin vectors the sublattice
rotation of one another) and the C4v edge transfer matrix's correlation length (eigs on
the transfer operator and the dense spectrum agreeing); decoupled
real and complex chains have their exact MPS site density matrices, spins (<S^y> too)
and correlation lengths (0 across the chains); a product state's spins are its spinors';
the magnetisation's implicit gradient matches central differences, and arrays, eager
tensors and tp.jit agree; the correlation lengths, read off values, refuse tensors that
require grad."""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.models import peps, peps_cell

from test_peps_cell import _chain_cell
from test_peps_cell_complex import _complex_chain_cell

HEISENBERG = peps.heisenberg(rotated=False)
SX = np.array([[0.0, 0.5], [0.5, 0.0]])
SY = np.array([[0.0, -0.5j], [0.5j, 0.0]])
SZ = np.array([[0.5, 0.0], [0.0, -0.5]])


@pytest.fixture(scope="module")
def neel():
    """A random C4v tensor (not optimised: a generic Neel-like state, |<S>| = 0.4937) and
    both environments at chi = 8, converged to 1e-12."""
    a = peps.random_tensor(2, 2, seed=0)
    _, c4v = peps.energy(a, 8, peps.heisenberg(), tol=1e-12)
    cell = peps_cell.normalized_cell(peps_cell.neel_cell(a))
    _, env = peps_cell.cell_energy(cell, 8, HEISENBERG, tol=1e-12)
    return a, c4v, cell, env


def _floats(grid):
    return np.array([[float(v) for v in column] for column in grid])


def test_the_neel_cell_has_the_c4v_magnetisation_on_every_site(neel):
    a, c4v, cell, env = neel
    staggered = float(peps.magnetization(a, c4v))
    assert staggered > 0.4                                  # a sizeable moment to compare
    moments, average = peps_cell.magnetization(cell, env)
    np.testing.assert_allclose(_floats(moments), staggered, atol=1e-10)   # measured 1e-15
    assert float(average) == pytest.approx(staggered, abs=1e-10)
    # the vectors: the C4v site's own (rotated frame) on the A sites (0,0), (1,1), turned by
    # pi about y (Sx, Sz -> -Sx, -Sz) on the B sites; a real state has <S^y> = 0
    rho = np.asarray(peps.site_density_matrix(c4v, peps.open_double_layer(a)))
    own = np.array([np.trace(rho @ o).real for o in (SX, SY, SZ)])
    spins = np.stack([_floats(s) for s in peps_cell.spin_expectations(cell, env)], axis=-1)
    for x in range(2):
        for y in range(2):
            turn = np.array([1.0, 1.0, 1.0]) if (x + y) % 2 == 0 else np.array([-1, 1, -1])
            np.testing.assert_allclose(spins[x, y], own * turn, atol=1e-10)


def test_the_neel_cell_has_the_c4v_correlation_length(neel):
    """The cell's edges T1/T3 (T4/T2) over its two columns (rows) against the C4v edge T T:
    measured 5e-14 relative at chi = 8.  The channel transfer matrices (T1 a T3) differ at
    this chi by about 1 % (0.8940 against 0.8835), their limits agreeing as chi grows."""
    _, c4v, _, env = neel
    xi = peps.correlation_length(c4v)
    assert 0.5 < xi < 2.0
    horizontal, vertical = peps_cell.correlation_lengths(env)
    assert horizontal == pytest.approx(xi, rel=1e-6)
    assert vertical == pytest.approx(xi, rel=1e-6)


def test_the_correlation_lengths_refuse_an_environment_that_requires_grad():
    """They are read off values (floats): taken from tensors that carry a derivative, a
    loss built on them would have a silent zero gradient (tp.grad gave zeros before).
    Arrays and detached tensors give the value; the rest raises, naming the function."""
    a, h = peps.random_tensor(2, 2, seed=0), peps.heisenberg()
    xi = peps.correlation_length(peps.energy(a, 6, h)[1])
    with pytest.raises(tp.errors.NotDifferentiableError, match="peps.correlation_length"):
        tp.grad(lambda q: peps.correlation_length(peps.energy(q, 6, h)[1]))(a)
    env = peps.energy(tp.tensor(a, requires_grad=True), 6, h)[1]
    with pytest.raises(tp.errors.NotDifferentiableError, match="t.detach()"):
        peps.correlation_length(env)
    assert peps.correlation_length(tuple(t.detach() for t in env)) == pytest.approx(xi)
    cell = [[tp.tensor(t, requires_grad=True) for t in column]
            for column in peps_cell.random_cell(1, 1, seed=0)]
    _, env = peps_cell.cell_energy(cell, 4, HEISENBERG)
    with pytest.raises(tp.errors.NotDifferentiableError, match="correlation_lengths"):
        peps_cell.correlation_lengths(env)


def test_eigs_on_the_transfer_operator_agrees_with_the_dense_spectrum(neel, monkeypatch):
    """The LinearOperator path (every matrix larger than DENSE_TRANSFER) against the dense
    one, for the channel transfer matrices (256 dimensions here)."""
    _, _, cell, env = neel
    layers = peps_cell.double_layers(cell)
    dense = peps_cell.correlation_lengths(env, layers)
    monkeypatch.setattr(peps_cell, "DENSE_TRANSFER", 0)
    np.testing.assert_allclose(peps_cell.correlation_lengths(env, layers), dense, rtol=1e-9)
    np.testing.assert_allclose(dense, 0.894, atol=1e-3)        # (the edges': 0.8835)


def _chain_transfer(m):
    """The MPS transfer matrix ``sum_s m[s] (x) conj(m[s])`` of ``m[s, l, r]``."""
    return np.einsum("sab,scd->acbd", m, m.conj()).reshape(m.shape[1] ** 2, -1)


def _chain_correlation_length(m0, m1):
    w = np.sort(np.abs(np.linalg.eigvals(_chain_transfer(m0) @ _chain_transfer(m1))))[::-1]
    return -2.0 / np.log(w[1] / w[0])


def _exact_site_density_matrix(m0, m1):
    """``rho[s, t]`` of the site of ``m0`` in the infinite MPS of period ``m0, m1``, from the
    period transfer matrix's dominant eigenvectors (numpy alone)."""
    def dominant(t):
        w, v = np.linalg.eig(t)
        return v[:, np.argmax(np.abs(w))]

    t = _chain_transfer(m0) @ _chain_transfer(m1)
    left, right = dominant(t.T), dominant(t)
    right = _chain_transfer(m1) @ right
    d = m0.shape[1]
    rho = np.einsum("ac,sab,tcd,bd->st", left.reshape(d, d), m0, m0.conj(),
                    right.reshape(d, d))
    return rho / np.trace(rho)


@pytest.mark.parametrize("rows", [True, False])
def test_decoupled_chains_have_the_chains_correlation_length(rows):
    """Rows (columns) decoupled by rank-one vertical (horizontal) bonds: the channel
    transfer matrices give the longer of the two chains' lengths along them (measured to
    1e-15) and 0 across; the edges alone, whose boundary is then a product state, give 0
    both ways (the module docstring's caveat, checked so that it stays true)."""
    cell = _chain_cell(3, rows)
    _, env = peps_cell.cell_energy(cell, 8, HEISENBERG)
    if rows:
        chains = [[cell[x][k][:, 0, :, 0, :] for x in range(2)] for k in range(2)]
    else:
        chains = [[cell[k][y][:, :, 0, :, 0] for y in range(2)] for k in range(2)]
    exact = max(_chain_correlation_length(*chain) for chain in chains)
    assert exact > 0.5
    along, across = peps_cell.correlation_lengths(env, peps_cell.double_layers(cell))
    if not rows:
        along, across = across, along
    assert along == pytest.approx(exact, rel=1e-9)
    assert across == 0.0
    assert peps_cell.correlation_lengths(env) == (0.0, 0.0)


def test_decoupled_complex_chains_have_their_exact_sites_and_lengths():
    """Complex rows: every site's density matrix is the complex MPS's (Hermitian, unit
    trace), its spins the traces with it -- <S^y> among them, nonzero here."""
    cell = _complex_chain_cell(4)
    _, env = peps_cell.cell_energy(cell, 8, HEISENBERG)
    opened = [[peps.open_double_layer(a) for a in column] for column in cell]
    spins = [_floats(s) for s in peps_cell.spin_expectations(cell, env)]
    moments, _ = peps_cell.magnetization(cell, env)
    for y in range(2):
        chain = [cell[x][y][:, 0, :, 0, :] for x in range(2)]
        for x in range(2):
            exact = _exact_site_density_matrix(chain[x], chain[1 - x])
            rho = np.asarray(peps_cell.site_density_matrix(env, opened, x, y))
            np.testing.assert_allclose(rho, exact, atol=1e-12)
            np.testing.assert_allclose(rho, rho.conj().T, atol=0.0)
            vector = np.array([np.trace(exact @ o).real for o in (SX, SY, SZ)])
            assert abs(vector[1]) > 1e-2                            # a complex state's S^y
            np.testing.assert_allclose([s[x, y] for s in spins], vector, atol=1e-12)
            assert float(moments[x][y]) == pytest.approx(np.linalg.norm(vector), abs=1e-12)
    exact = max(_chain_correlation_length(*[cell[x][y][:, 0, :, 0, :] for x in range(2)])
                for y in range(2))
    along, across = peps_cell.correlation_lengths(env, peps_cell.double_layers(cell))
    assert along == pytest.approx(exact, rel=1e-9) and across == 0.0


def test_a_product_state_has_its_spinors_spins():
    """D = 1, four arbitrary complex spinors: <S> is each spinor's, a unit-length 1/2."""
    rng = np.random.default_rng(5)
    spinors = [[rng.standard_normal(2) + 1j * rng.standard_normal(2) for _ in range(2)]
               for _ in range(2)]
    cell = peps_cell.normalized_cell([[v.reshape(2, 1, 1, 1, 1) for v in column]
                                      for column in spinors])
    _, env = peps_cell.cell_energy(cell, 1, HEISENBERG)
    spins = [_floats(s) for s in peps_cell.spin_expectations(cell, env)]
    moments, average = peps_cell.magnetization(cell, env)
    for x in range(2):
        for y in range(2):
            v = spinors[x][y] / np.linalg.norm(spinors[x][y])
            exact = [np.vdot(v, o @ v).real for o in (SX, SY, SZ)]
            np.testing.assert_allclose([s[x, y] for s in spins], exact, atol=1e-14)
    np.testing.assert_allclose(_floats(moments), 0.5, atol=1e-14)
    assert float(average) == pytest.approx(0.5, abs=1e-14)


def _start(cell, chi):
    layers = peps_cell.double_layers(peps_cell.normalized_cell(cell))
    return peps_cell.grown_environment(layers, chi)


def _average_moment(cell, env0, chi, stats=None):
    """The cell's average moment through its implicitly differentiated environment."""
    normal = peps_cell.normalized_cell(cell)
    env = peps_cell.environment(peps_cell.double_layers(normal), chi, env0, tol=1e-12,
                                implicit=True, stats=stats)
    return peps_cell.magnetization(normal, env)[1]


def test_the_magnetisation_gradient_matches_central_differences():
    cell, chi = peps_cell.random_cell(2, 2, seed=0), 8
    env0 = _start(cell, chi)
    stats = {}
    grad = tp.grad(lambda c: _average_moment(c, env0, chi, stats))(cell)
    assert stats["converged"] and stats["adjoint_converged"]
    rng = np.random.default_rng(1)
    direction = [[rng.standard_normal(a.shape) for a in column] for column in cell]

    def along(eps):
        shifted = [[a + eps * d for a, d in zip(ca, cd)] for ca, cd in zip(cell, direction)]
        return float(_average_moment(shifted, env0, chi))

    eps = 1e-5
    central = (along(eps) - along(-eps)) / (2 * eps)
    change = sum(float(np.sum(np.asarray(g) * d))
                 for cg, cd in zip(grad, direction) for g, d in zip(cg, cd))
    assert abs(change) > 1e-2
    assert change == pytest.approx(central, abs=1e-7)


def test_arrays_eager_and_compiled_observables_agree():
    """A complex cell: the average moment and the spins' sum in every mode."""
    cell, chi = peps_cell.random_cell(2, 2, seed=8, dtype=complex), 8
    env0 = _start(cell, chi)

    def observable(c, e):
        normal = peps_cell.normalized_cell(c)
        env = peps_cell.environment(peps_cell.double_layers(normal), chi, e, tol=1e-12,
                                    implicit=True)
        _, average = peps_cell.magnetization(normal, env)
        sy = peps_cell.spin_expectations(normal, env)[1]
        return average + sy[0][0] + sy[1][1]

    value = float(observable(cell, env0))
    leaves = [[tp.tensor(a, requires_grad=True) for a in column] for column in cell]
    eager = observable(leaves, env0)
    eager.backward()
    compiled, grad = tp.jit(tp.value_and_grad(observable))(cell, env0)
    assert eager.item() == pytest.approx(value, abs=1e-12)
    assert float(compiled) == pytest.approx(value, abs=1e-12)
    for cl, cg in zip(leaves, grad):
        for t, g in zip(cl, cg):
            assert np.abs(np.asarray(g)).max() > 1e-3
            np.testing.assert_allclose(np.asarray(g), np.asarray(t.grad), atol=1e-9)

"""Complex site tensors in the unit-cell iPEPS (tenpy_ad.models.peps_cell): a real cell
passed as complex is the real cell element-wise; the kept basis is independent of the
decompositions' phases and of the basis inside an exact multiplet; decoupled complex
chains have their exact MPS density matrices, also with invertible matrices on their
bonds; site phases, a physical unitary (with the Hamiltonian transformed) and unitaries on
the virtual bonds leave the energy; the density matrices are Hermitian; the implicit
gradient matches central differences along real and imaginary directions; arrays, eager
tensors and tp.jit agree; optimize runs over real and imaginary parts.

The engine's complex gradient is ``dE/dx + i dE/dy`` (PyTorch's convention), so the
first-order change along ``dz`` is ``Re sum(conj(g) dz)``."""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.models import peps, peps_cell

HEISENBERG = peps.heisenberg(rotated=False)
ROTATED = peps.heisenberg()


def _as_complex(cell):
    return [[np.asarray(a).astype(complex) for a in column] for column in cell]


def _leaves(env):
    return [np.asarray(t) for column in env for site in column for t in site]


def _unitary(rng, n):
    q, r = np.linalg.qr(rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))
    return q * (np.diag(r) / np.abs(np.diag(r)))


def test_a_real_cell_passed_as_complex_is_the_real_cell():
    """The phase fixing reduces to the sign fixing: the same environment element-wise
    (imaginary parts zero to rounding), the same spectra and energy."""
    cell = peps_cell.random_cell(2, 2, seed=0)
    energy, env = peps_cell.cell_energy(cell, 8, HEISENBERG)
    energy_c, env_c = peps_cell.cell_energy(_as_complex(cell), 8, HEISENBERG)
    assert np.asarray(energy_c).dtype.kind == "f"                 # the real part
    assert float(energy_c) == pytest.approx(float(energy), abs=1e-12)
    for s, s_c in zip(peps_cell.corner_spectra(env), peps_cell.corner_spectra(env_c)):
        np.testing.assert_allclose(np.asarray(s_c), np.asarray(s), atol=1e-12)
    for t, t_c in zip(_leaves(env), _leaves(env_c)):
        assert t_c.dtype.kind == "c"
        # (the real and the complex SVDs round apart, ~1e-12 after the solve)
        np.testing.assert_allclose(t_c, t, atol=1e-11)


def test_the_kept_basis_is_a_function_of_the_subspaces_alone():
    """Complex kept states with an exact doublet: a phase on each single state and a random
    unitary inside the doublet (what LAPACK may return instead) give the same ``u r``
    element-wise, its weighted-largest entries real and positive."""
    rng = np.random.default_rng(10)
    u = _unitary(rng, 8)[:, :4]
    s = np.array([1.0, 0.5, 0.5, 0.2])
    change = np.zeros((4, 4), complex)
    change[0, 0], change[3, 3] = np.exp(1j * rng.random(2) * 2 * np.pi)
    change[1:3, 1:3] = _unitary(rng, 2)
    fixed = u @ np.asarray(peps_cell._kept_basis(u, s))
    other = (u @ change) @ np.asarray(peps_cell._kept_basis(u @ change, s))
    np.testing.assert_allclose(other, fixed, atol=1e-12)
    np.testing.assert_allclose(fixed.conj().T @ fixed, np.eye(4), atol=1e-12)
    weighted = np.abs(fixed) * peps_cell._tie_breaker(8)[:, None]
    largest = fixed[np.argmax(weighted, axis=0), np.arange(4)]
    np.testing.assert_allclose(largest.imag, 0.0, atol=1e-15)
    assert np.all(largest.real > 0)


def test_complex_projectors_are_oblique_projectors():
    """``upper lower`` is the identity on the kept states (adjoints, not transposes)."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((12, 10)) + 1j * rng.standard_normal((12, 10))
    y = rng.standard_normal((10, 12)) + 1j * rng.standard_normal((10, 12))
    upper, lower, s = (np.asarray(t) for t in peps_cell.projectors(x, y, 5))
    np.testing.assert_allclose(upper @ lower, np.eye(5), atol=1e-12)
    np.testing.assert_allclose(s, np.linalg.svd(y @ x, compute_uv=False)[:5]
                               / np.linalg.norm(y @ x, 2), atol=1e-12)


def _complex_chain_cell(seed: int) -> list:
    """A random complex 2 x 2 cell whose vertical bonds are rank one: decoupled rows, each
    a period-2 complex matrix product state."""
    rng = np.random.default_rng(seed)
    cell = [[np.zeros((2,) * 5, complex) for _ in range(2)] for _ in range(2)]
    for column in cell:
        for a in column:
            a[:, 0, :, 0, :] = (rng.standard_normal((2, 2, 2))
                                + 1j * rng.standard_normal((2, 2, 2)))
    return peps_cell.normalized_cell(cell)


def _exact_chain_density_matrix(m0, m1):
    """``rho[s1, t1, s2, t2]`` of the bond (0, 1) of the infinite complex MPS of period
    ``m0[s, l, r], m1[s, l, r]`` (ket ``m``, bra ``conj(m)``), from the dominant left and
    right eigenvectors of the transfer matrix of a period."""
    def transfer(m):
        return np.einsum("sab,scd->acbd", m, m.conj()).reshape(4, 4)

    def dominant(t):
        w, v = np.linalg.eig(t)
        return v[:, np.argmax(np.abs(w))]

    t = transfer(m0) @ transfer(m1)
    left, right = dominant(t.T), dominant(t)
    r = np.einsum("ac,sab,tcd,ube,vdf,ef->stuv", left.reshape(2, 2), m0, m0.conj(), m1,
                  m1.conj(), right.reshape(2, 2))
    return r / np.einsum("iijj->", r)


def test_decoupled_complex_chains_have_their_exact_density_matrices():
    """An independent truth for complex tensors (whose double layers are complex):
    every bond along a row has the complex MPS's exact density matrix."""
    cell = _complex_chain_cell(4)
    _, env = peps_cell.cell_energy(cell, 8, HEISENBERG)
    opened = [[peps.open_double_layer(a) for a in column] for column in cell]
    for y in range(2):
        chain = [cell[x][y][:, 0, :, 0, :] for x in range(2)]
        got = np.asarray(peps_cell.horizontal_density_matrix(env, opened, 0, y))
        exact = _exact_chain_density_matrix(*chain)
        assert np.abs(exact.imag).max() > 1e-2                    # genuinely complex
        np.testing.assert_allclose(got, exact, atol=1e-12)


def test_invertible_matrices_on_the_bonds_of_complex_chains_leave_them():
    """``G`` and ``G^-1`` (complex, not unitary) on each bond along the rows of decoupled
    chains: nothing is truncated there (rank-one corners), so the energy and the density
    matrices are those of the ungauged cell to rounding."""
    cell = _complex_chain_cell(4)
    rng = np.random.default_rng(12)
    g = [[np.eye(2) + 0.4 * (rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2)))
          for _ in range(2)] for _ in range(2)]
    gauged = [[np.einsum("suldr,rR,Ll->suLdR", cell[x][y], g[x][y],
                         np.linalg.inv(g[(x - 1) % 2][y])) for y in range(2)]
              for x in range(2)]
    energy, env = peps_cell.cell_energy(cell, 8, HEISENBERG)
    energy_g, env_g = peps_cell.cell_energy(gauged, 8, HEISENBERG)
    assert float(energy_g) == pytest.approx(float(energy), abs=1e-12)
    opened = [[peps.open_double_layer(a) for a in column] for column in cell]
    normal = peps_cell.normalized_cell(gauged)
    opened_g = [[peps.open_double_layer(a) for a in column] for column in normal]
    for x in range(2):
        for y in range(2):
            np.testing.assert_allclose(
                np.asarray(peps_cell.horizontal_density_matrix(env_g, opened_g, x, y)),
                np.asarray(peps_cell.horizontal_density_matrix(env, opened, x, y)),
                atol=1e-12)


def _bond_rotated(cell, horizontal, vertical):
    """The cell with the unitary ``horizontal[x][y]`` on the bond right of site (x, y)
    (``A[x][y]``'s r times U, ``A[x+1][y]``'s l times U^*: U U^H = 1 in between), likewise
    ``vertical[x][y]`` below it."""
    lx, ly = len(cell), len(cell[0])
    out = [[None] * ly for _ in range(lx)]
    for x in range(lx):
        for y in range(ly):
            a = np.einsum("suldr,rR->suldR", cell[x][y], horizontal[x][y])
            a = np.einsum("suldr,lL->suLdr", a, horizontal[(x - 1) % lx][y].conj())
            a = np.einsum("suldr,dD->sulDr", a, vertical[x][y])
            out[x][y] = np.einsum("suldr,uU->sUldr", a, vertical[x][(y - 1) % ly].conj())
    return out


def test_phases_and_unitaries_leave_the_energy():
    """A phase per site; a unitary W on every physical leg with the bond W (x) W h
    (W (x) W)^H (complex; h the transverse-field Ising bond, not SU(2) invariant as the
    Heisenberg bond is); unitaries on the virtual bonds (under which a truncated SVD is
    covariant: invertible ones change the truncation, by its error)."""
    cell = peps_cell.random_cell(2, 2, seed=5, dtype=complex)
    rng = np.random.default_rng(6)
    ising = peps.transverse_ising(1.0)
    energy, env = peps_cell.cell_energy(cell, 8, ising)
    spectra = [np.asarray(s) for s in peps_cell.corner_spectra(env)]
    phased = [[a * np.exp(2j * np.pi * rng.random()) for a in column] for column in cell]
    w = _unitary(rng, 2)
    ww = np.kron(w, w)
    h = (ww @ ising.reshape(4, 4) @ ww.conj().T).reshape(2, 2, 2, 2)
    turned = [[np.einsum("ts,suldr->tuldr", w, a) for a in column] for column in cell]
    bonds = [[[_unitary(rng, 2) for _ in range(2)] for _ in range(2)] for _ in range(2)]
    rotated = _bond_rotated(cell, *bonds)
    for other, h_other in ((phased, ising), (turned, h), (rotated, ising)):
        e, env_other = peps_cell.cell_energy(other, 8, h_other)
        assert float(e) == pytest.approx(float(energy), abs=1e-10)
        for s, s_other in zip(spectra, peps_cell.corner_spectra(env_other)):
            np.testing.assert_allclose(np.asarray(s_other), s, atol=1e-9)
    assert abs(float(energy) - float(peps_cell.cell_energy(cell, 8, h)[0])) > 1e-3


def test_the_density_matrices_of_a_complex_cell_are_hermitian():
    cell = peps_cell.random_cell(2, 2, seed=7, dtype=complex)
    _, env = peps_cell.cell_energy(cell, 8, HEISENBERG)
    opened = [[peps.open_double_layer(a) for a in column] for column in cell]
    for x in range(2):
        for y in range(2):
            for rho in (peps_cell.horizontal_density_matrix(env, opened, x, y),
                        peps_cell.vertical_density_matrix(env, opened, x, y)):
                rho = np.asarray(rho)
                assert np.abs(rho.imag).max() > 1e-3
                np.testing.assert_allclose(rho, rho.transpose(1, 0, 3, 2).conj(), atol=1e-12)
                raw = np.einsum("iIjJ,IJij->", rho, HEISENBERG)
                assert abs(raw.imag) < 1e-12


def _directional(energy, cell, direction, h):
    """The derivative along ``direction`` by central differences at ``h`` and ``h / 2``,
    Richardson-extrapolated (error O(h^4))."""
    def central(step):
        plus = [[a + step * d for a, d in zip(ca, cd)] for ca, cd in zip(cell, direction)]
        minus = [[a - step * d for a, d in zip(ca, cd)] for ca, cd in zip(cell, direction)]
        return (float(energy(plus)) - float(energy(minus))) / (2 * step)
    return (4 * central(h / 2) - central(h)) / 3


@pytest.mark.parametrize("size", [1, 2])
def test_implicit_gradient_matches_central_differences_on_both_parts(size):
    cell, chi = peps_cell.random_cell(size, size, seed=3, dtype=complex), 8
    _, env = peps_cell.cell_energy(cell, chi, HEISENBERG, tol=1e-13)
    stats = {}

    def energy(c):
        return peps_cell.cell_energy(c, chi, HEISENBERG, env0=env, tol=1e-13, stats=stats)[0]

    grad = tp.grad(energy)(cell)
    assert stats["converged"] and stats["residual"] <= 1e-12      # element-wise
    rng = np.random.default_rng(1)
    for part in (1.0, 1j):                   # the real and the imaginary parts' directions
        direction = [[rng.standard_normal(a.shape) * part for a in column] for column in cell]
        change = sum(float(np.real(np.sum(np.conj(np.asarray(g)) * d)))
                     for cg, cd in zip(grad, direction) for g, d in zip(cg, cd))
        assert abs(change) > 1e-2
        assert change == pytest.approx(_directional(energy, cell, direction, 1e-4),
                                       abs=1e-8)


def test_arrays_eager_and_compiled_agree_for_a_complex_cell():
    cell, chi = peps_cell.random_cell(2, 2, seed=8, dtype=complex), 8
    first = {}
    energy, env = peps_cell.cell_energy(cell, chi, HEISENBERG, stats=first)
    assert first["converged"]
    eager_stats = {}
    leaves = [[tp.tensor(a, requires_grad=True) for a in column] for column in cell]
    eager, _ = peps_cell.cell_energy(leaves, chi, HEISENBERG, env0=env, stats=eager_stats)
    eager.backward()
    assert eager_stats["converged"] and eager_stats["adjoint_converged"]
    compiled_stats = {}

    def of_cell(c, e):
        return peps_cell.cell_energy(c, chi, HEISENBERG, env0=e, stats=compiled_stats)[0]

    value, grad = tp.jit(tp.value_and_grad(of_cell))(cell, env)
    assert compiled_stats["converged"] and compiled_stats["adjoint_converged"]
    assert eager.item() == pytest.approx(float(energy), abs=1e-12)
    assert float(value) == pytest.approx(float(energy), abs=1e-12)
    for cl, cg in zip(leaves, grad):
        for t, g in zip(cl, cg):
            assert np.asarray(g).dtype.kind == "c"
            np.testing.assert_allclose(np.asarray(g), np.asarray(t.grad), atol=1e-9)


def test_a_complex_optimisation_descends_over_both_parts():
    """A few L-BFGS steps from a complex random 1 x 1 start (the rotated bond): every
    iteration lowers the energy, and the result is complex, not drifted to real."""
    cell, chi = peps_cell.random_cell(1, 1, seed=0, dtype=complex), 4
    start = float(peps_cell.cell_energy(cell, chi, ROTATED)[0])
    result = peps_cell.optimize(ROTATED, 1, 1, 2, chi, tensors=cell, maxiter=6)
    history = [start] + list(result.history)
    assert all(b < a for a, b in zip(history, history[1:])), history
    assert result.fun < start - 0.05
    a = result.x[0][0]
    assert a.dtype.kind == "c" and np.abs(a.imag).max() > 0.1
    assert float(peps_cell.cell_energy(result.x, chi, ROTATED)[0]) == pytest.approx(
        result.fun, abs=1e-9)


def test_the_real_part_of_a_real_cells_complex_gradient_is_its_real_gradient():
    """dE/dx of a real cell is the same taken through the complex path; dE/dy is the
    derivative into complex states (not zero in general), which the real path has not."""
    cell, chi = peps_cell.random_cell(1, 1, seed=9), 8
    _, env = peps_cell.cell_energy(cell, chi, HEISENBERG, tol=1e-12)

    def energy(c):
        return peps_cell.cell_energy(c, chi, HEISENBERG, env0=env, tol=1e-12)[0]

    real = np.asarray(tp.grad(energy)(cell)[0][0])
    full = np.asarray(tp.grad(energy)(_as_complex(cell))[0][0])
    assert real.dtype.kind == "f" and full.dtype.kind == "c"
    np.testing.assert_allclose(full.real, real, atol=1e-9)


@pytest.mark.slow
def test_a_complex_single_site_start_beats_the_c4v_optimum():
    """A general complex 1 x 1 cell (the rotated bond, so one tensor is the Neel state)
    contains the C4v states, and at D = 2 goes below their optimum (a real one does not)
    to the energy four independent real tensors reach, -0.66251 (peps_cell's module
    docstring, where exactly contracted cylinders confirm it); here from a complex random
    start at chi = 8 (13 s)."""
    result = peps_cell.optimize(ROTATED, 1, 1, 2, 8, seed=0, dtype=complex, maxiter=150)
    assert np.abs(result.x[0][0].imag).max() > 0.1
    assert result.fun < peps.HEISENBERG_D2 - 2e-3
    assert result.fun == pytest.approx(-0.6625, abs=3e-4)

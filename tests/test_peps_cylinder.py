"""The infinite-cylinder reference (tenpy_ad.models.peps_cylinder) against results it shares
no code with: product states (exact), decoupled horizontal chains (the infinite MPS, the
same for every circumference) and vertical rings (the periodic MPS of L sites), the
invariance under complex bond gauges, exactly degenerate (GHZ) and phased (Neel chains)
transfer matrices, and, converging in the circumference L, the C4v CTMRG of
tenpy_ad.models.peps and the directional CTMRG of tenpy_ad.models.peps_cell for a
non-symmetric tensor (energies and whole density matrices)."""
import warnings

import numpy as np
import pytest

from tenpy_ad.models import peps, peps_cell, peps_cylinder

ROTATED = peps.heisenberg()


def _hermitian_bond(rng) -> np.ndarray:
    """A random Hermitian two-site operator ``h[s1, s2, s1', s2']``: unlike the Heisenberg
    bond it tells the two sites apart, so a swapped convention shows."""
    m = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
    return (m + m.conj().T).reshape(2, 2, 2, 2)


def _matrix(rho) -> np.ndarray:
    """``rho[s1, t1, s2, t2]`` as the matrix ``[(s1 s2), (t1 t2)]``."""
    return np.asarray(rho).transpose(0, 2, 1, 3).reshape(4, 4)


def _energy(rho_matrix, h) -> float:
    return float(np.trace(rho_matrix @ h.reshape(4, 4)).real)


def _quiet(a, length, h):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # a generic state warns about nothing
        return peps_cylinder.cylinder_energies(a, length, h)


def _aitken(e4, e5, e6) -> float:
    """The limit of a geometric sequence through three terms (Aitken's delta-squared)."""
    return e6 - (e6 - e5) ** 2 / ((e6 - e5) - (e5 - e4))


# ------------------------------------------------------------------ exact cases

@pytest.mark.parametrize("bond", [1, 2])
@pytest.mark.parametrize("length", [2, 3, 5])
def test_a_product_state_has_product_density_matrices(bond, length):
    """D = 1, alone or embedded in D = 2 (one bond state used): rho = phi phi^H on each site."""
    rng = np.random.default_rng(3)
    phi = rng.standard_normal(2) + 1j * rng.standard_normal(2)
    phi /= np.linalg.norm(phi)
    a = np.zeros((2,) + (bond,) * 4, complex)
    a[:, 0, 0, 0, 0] = 3.0 * phi                      # any norm
    h = _hermitian_bond(rng)
    exact = np.kron(np.outer(phi, phi.conj()), np.outer(phi, phi.conj()))
    r = _quiet(a, length, h)
    np.testing.assert_allclose(_matrix(r.rho_h), exact, atol=1e-12)
    np.testing.assert_allclose(_matrix(r.rho_v), exact, atol=1e-12)
    assert r.horizontal == pytest.approx(_energy(exact, h), abs=1e-12)
    assert r.vertical == pytest.approx(_energy(exact, h), abs=1e-12)
    assert r.degeneracy == 1 and r.imag < 1e-12


def _chain(rng):
    """A random complex MPS tensor ``B[s, l, r]`` of bond dimension 2 and its transfer
    matrix ``E[(l l'), (r r')]`` and opened ``E_o[s, t]``."""
    b = rng.standard_normal((2, 2, 2)) + 1j * rng.standard_normal((2, 2, 2))
    opened = np.einsum("slr,tLR->stlLrR", b, b.conj()).reshape(2, 2, 4, 4)
    return b, np.einsum("sslr->lr", opened), opened


def test_decoupled_horizontal_chains_give_the_infinite_mps_for_every_circumference():
    """``A[s, 0, l, 0, r] = B[s, l, r]``: rows are independent infinite MPS; a vertical bond
    is then the product of one-site density matrices."""
    rng = np.random.default_rng(5)
    b, e, opened = _chain(rng)
    values, right = np.linalg.eig(e)
    values_t, left = np.linalg.eig(e.T)
    vr, vl = right[:, np.argmax(abs(values))], left[:, np.argmax(abs(values_t))]
    rho = np.einsum("l,stlm,uvmr,r->stuv", vl, opened, opened, vr)
    rho /= np.einsum("ssuu->", rho)
    one = np.einsum("stuu->st", rho)
    h = _hermitian_bond(rng)
    a = np.zeros((2,) * 5, complex)
    a[:, 0, :, 0, :] = b
    for length in (2, 3, 4, 5):
        r = _quiet(a, length, h)
        np.testing.assert_allclose(_matrix(r.rho_h), _matrix(rho), atol=1e-10)
        np.testing.assert_allclose(_matrix(r.rho_v), np.kron(one, one), atol=1e-10)
        assert r.horizontal == pytest.approx(_energy(_matrix(rho), h), abs=1e-10)


def test_decoupled_vertical_rings_give_the_periodic_mps_of_the_circumference():
    """``A[s, u, 0, d, 0] = B[s, u, d]``: each column is a ring of L sites (row L-1's d
    meets row 0's u), ``rho_v = Tr(E_o E_o E^(L-2)) / Tr(E^L)``, which depends on L."""
    rng = np.random.default_rng(6)
    b, e, opened = _chain(rng)
    a = np.zeros((2,) * 5, complex)
    a[:, :, 0, :, 0] = b
    h = _hermitian_bond(rng)
    seen = []
    for length in (2, 3, 4, 5):
        rest = np.linalg.matrix_power(e, length - 2)
        rho = np.einsum("stab,uvbc,ca->stuv", opened, opened, rest)
        rho /= np.trace(np.linalg.matrix_power(e, length))
        one = np.einsum("stuu->st", rho)
        r = _quiet(a, length, h)
        np.testing.assert_allclose(_matrix(r.rho_v), _matrix(rho), atol=1e-10)
        np.testing.assert_allclose(_matrix(r.rho_h), np.kron(one, one), atol=1e-10)
        seen.append(r.vertical)
    assert np.ptp(seen) > 1e-3                  # the closure matters: not a trivial check


def test_complex_bond_gauges_leave_the_density_matrices():
    """Invertible complex matrices on the bonds (``G`` on r, ``G^-1`` on the l it meets;
    ``H`` on d, ``H^-1`` on u) are the same state: the same density matrices."""
    rng = np.random.default_rng(8)
    shape = (2,) * 5
    a = np.zeros(shape, complex)
    a[:, 0, 0, 0, 0] = [1.0, 0.5j]                    # near a product: a short cylinder is
    a += 0.15 * (rng.standard_normal(shape) + 1j * rng.standard_normal(shape))  # enough
    g, k = (rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2)) + 2 * np.eye(2)
            for _ in range(2))
    gauged = np.einsum("suldr,Ll,rR,Uu,dD->sULDR", a, np.linalg.inv(g), g, np.linalg.inv(k),
                       k)
    for length in (3, 4):
        r, s = _quiet(a, length, ROTATED), _quiet(gauged, length, ROTATED)
        np.testing.assert_allclose(s.rho_h, r.rho_h, atol=1e-10)
        np.testing.assert_allclose(s.rho_v, r.rho_v, atol=1e-10)
        assert abs(r.rho_h - r.rho_v).max() > 1e-3     # the two bonds are told apart


def test_an_exactly_degenerate_transfer_matrix_mixes_the_sectors():
    """The GHZ tensor (every index equal to s): the all-up and all-down sectors, each an
    eigenvector of eigenvalue 1; the long-cylinder limit is their equal mixture."""
    a = np.zeros((2,) * 5)
    a[0, 0, 0, 0, 0] = a[1, 1, 1, 1, 1] = 1.0
    mixture = np.diag([0.5, 0.0, 0.0, 0.5])
    for length in (2, 3):                             # dense: every copy found
        r = _quiet(a, length, ROTATED)
        assert r.degeneracy == 2
        np.testing.assert_allclose(_matrix(r.rho_h), mixture, atol=1e-12)
        np.testing.assert_allclose(_matrix(r.rho_v), mixture, atol=1e-12)


def test_phased_eigenvalues_are_reported_and_averaged_out():
    """Neel chains (``B[s, l=s, r=1-s]``, decoupled rows): the row transfer matrix swaps the
    two Neel states, eigenvalues +-1.  The N-averaged limit mixes both states on each row,
    rows independent."""
    a = np.zeros((2,) * 5)
    for s in (0, 1):
        a[s, 0, s, 0, 1 - s] = 1.0
    for length in (2, 3):
        with pytest.warns(RuntimeWarning, match="another phase"):
            r = peps_cylinder.cylinder_energies(a, length, ROTATED)
        assert r.phased == 2 ** (length - 1) and r.degeneracy == 2 ** (length - 1)
        np.testing.assert_allclose(_matrix(r.rho_h), np.diag([0.0, 0.5, 0.5, 0.0]),
                                   atol=1e-12)
        np.testing.assert_allclose(_matrix(r.rho_v), np.eye(4) / 4, atol=1e-12)


# ------------------------------------------------------------------ against CTMRG

def _sequence(a, h):
    """The cylinder results for L = 4, 5, 6, printed (pytest -s) to show the convergence."""
    results = [_quiet(a, length, h) for length in (4, 5, 6)]
    for length, r in zip((4, 5, 6), results):
        print(f"L={length}: horizontal {r.horizontal:.10f} vertical {r.vertical:.10f} "
              f"gap {r.gap:.3f}")
    return results


def _assert_converges_to(values, reference):
    """``values`` (L = 4, 5, 6) tend to ``reference``: within the last step (a geometric
    tail of ratio below 1/2 is shorter than it), and its Aitken limit within a quarter of it."""
    e4, e5, e6 = values
    step = abs(e6 - e5)
    assert abs(e6 - reference) <= step
    assert abs(_aitken(e4, e5, e6) - reference) <= 0.25 * step


def test_a_c4v_tensor_converges_to_the_c4v_ctmrg():
    """Seed 7: a gap 0.11 (the fastest-converging of seeds 0-39).  Printed: vertical -0.25231534,
    -0.25217346, -0.25216102 for L = 4, 5, 6; C4v chi = 32: -0.25215978 (L = 7: -0.25215990)."""
    a = peps.random_tensor(2, 2, seed=7)
    energy, _ = peps.energy(a, 32, ROTATED)
    bond = float(energy) / 2.0                        # two bonds per site, alike under C4v
    results = _sequence(a, ROTATED)
    print(f"C4v CTMRG chi=32: bond {bond:.10f}")
    _assert_converges_to([r.horizontal for r in results], bond)
    _assert_converges_to([r.vertical for r in results], bond)
    assert abs(results[0].vertical - bond) > 1e-4     # L = 4 is not yet there: a real test


def _odd(rho):
    """The part of ``rho[s1, t1, s2, t2]`` odd under the exchange of its two sites."""
    return rho - rho.transpose(2, 3, 0, 1)


def test_a_non_symmetric_tensor_converges_to_the_directional_ctmrg():
    """Seed 30 of ``random_cell(1, 1)`` (gap 0.34).  The energies, and the whole density
    matrices (each within the last step in L), which a convention mixing up the bonds
    would exchange (rho_h and rho_v differ by 0.018) or mirror (the part odd under the
    exchange of the sites, 2e-4, agrees to 3e-7 at L = 6: within its own last step)."""
    a = peps_cell.random_cell(1, 1, seed=30)[0][0]
    _, env = peps_cell.cell_energy([[a]], 32, ROTATED)
    cell = peps_cell.normalized_cell([[a]])
    opened = [[peps.open_double_layer(cell[0][0])]]
    rho_h = np.asarray(peps_cell.horizontal_density_matrix(env, opened, 0, 0))
    rho_v = np.asarray(peps_cell.vertical_density_matrix(env, opened, 0, 0))
    hor, ver = (float(peps.bond_energy(rho, ROTATED)) for rho in (rho_h, rho_v))
    results = _sequence(a, ROTATED)
    print(f"directional CTMRG chi=32: horizontal {hor:.10f} vertical {ver:.10f}")
    _assert_converges_to([r.horizontal for r in results], hor)
    _assert_converges_to([r.vertical for r in results], ver)
    five, six = results[1], results[2]
    for mine, previous, theirs in ((six.rho_h, five.rho_h, rho_h),
                                   (six.rho_v, five.rho_v, rho_v)):
        step = abs(mine - previous).max()
        assert abs(mine - theirs).max() <= step
        assert abs(rho_h - rho_v).max() > 100 * step
        odd_step = abs(_odd(mine) - _odd(previous)).max()
        assert abs(_odd(mine) - _odd(theirs)).max() <= odd_step
        assert abs(_odd(theirs)).max() > 30 * odd_step

"""CTMRG for the 2D Ising model through ``tp.fixed_point``:

1. chi = 32 (the default) against the exact solution on both sides of beta_c (lnZ/N to
   1e-8, u to 1e-6, |m| to 1e-6; near beta_c, at 0.4, to 1e-9 and 1e-7);
2. the AD energy equals the local energy -2<ss> and a finite difference of lnZ/N, and the
   second derivative gives the specific heat;
3. the implicit derivative equals the unrolled (checkpointed) one at convergence;
4. one code for NumPy, eager and traced; the fixed point is element-wise (gauge fixed);
   the boundary selects the phase below T_c; bad input fails early;
5. the kept states are resolved, and an environment whose entries stall above the
   tolerance says so (a warning, ``converged=False``, the residual) and stays exact;
   a sweep keeps every finished point when one fails.
"""
from functools import lru_cache

import warnings

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ArgumentError, ConvergenceError
from tenpy_ad.models import ctmrg, onsager
from tenpy_ad.runtime import blas_threads

EXACT = {0.4: {"lnz": 0.879363820774948, "u": -1.106079203746, "m": 0.0},
         0.6: {"lnz": 1.210132388288413, "u": -1.909086177684, "m": 0.973608667440301}}


@pytest.fixture(scope="module", autouse=True)
def single_threaded_blas():
    """One BLAS thread (on small shared machines the eigh of every move is then many
    times faster), restored afterwards."""
    with blas_threads(1):
        yield


@lru_cache(maxsize=None)
def boundary(beta: float, chi: int):
    """The converged environment, computed once per test session."""
    return ctmrg.converge(beta, chi)


def lnz_and_energy(beta: float, converged):
    """lnZ/N and u = -d(lnZ/N)/d beta by eager AD through the fixed point."""
    b = tp.tensor(beta, requires_grad=True)
    lnz = ctmrg.ctmrg_lnz(b, converged.chi, boundary=converged)
    lnz.backward()
    return lnz.item(), -float(b.grad)


# ------------------------------------------------------------------ 1. exact solution

@pytest.mark.parametrize("beta", [0.2, 0.3, 0.35, 0.5, 0.6])
def test_default_chi_against_onsager_and_yang(beta):
    """Off beta_c, the disordered phase included (at 0.3 the forward pass used to stall
    at an element-wise residual of 1e-9 and raise after 10^4 moves)."""
    converged = boundary(beta, 32)
    assert converged.converged and converged.residual <= ctmrg.TOL
    lnz, u = lnz_and_energy(beta, converged)
    m = abs(float(ctmrg.magnetization(converged.env, beta)))
    assert abs(lnz - onsager.lnz(beta)) < 1e-8
    assert abs(u - onsager.energy(beta)) < 1e-6
    assert abs(m - onsager.magnetization(beta)) < 1e-6


@pytest.mark.parametrize("beta", [0.4, 0.6])
def test_chi32_against_the_exact_solution(beta):
    converged = boundary(beta, 32)
    lnz, u = lnz_and_energy(beta, converged)
    m = abs(float(ctmrg.magnetization(converged.env, beta)))
    assert abs(lnz - EXACT[beta]["lnz"]) < 1e-9
    assert abs(u - EXACT[beta]["u"]) < 1e-7
    assert abs(m - EXACT[beta]["m"]) < 1e-7
    assert abs(m - onsager.magnetization(beta)) < 1e-7


# ------------------------------------------------------------------ 2. energy, heat

@pytest.mark.parametrize("beta", [0.4, 0.6])
def test_ad_energy_is_the_local_energy_and_a_finite_difference(beta):
    converged = boundary(beta, 32)
    _, u = lnz_and_energy(beta, converged)
    local = -2.0 * float(ctmrg.bond_correlation(converged.env, beta))
    assert abs(u - local) < 1e-10

    def lnz(b):
        return float(ctmrg.ctmrg_lnz(b, 32, boundary=converged, anderson=8))

    h = 1e-5          # lnZ/N is stationary in the environment: accurate to ~1e-15
    assert abs(u + (lnz(beta + h) - lnz(beta - h)) / (2 * h)) < 1e-9


@pytest.mark.parametrize("chi", [16, 32])
def test_specific_heat_by_the_second_derivative(chi):
    """The kept eigenvalues reach eigh's rule as a slice, so its second derivative is exact
    whatever the discarded spectrum (degenerate values included) rather than refused."""
    beta = 0.6
    b = tp.input((), name="beta")
    lnz = ctmrg.ctmrg_lnz(b, chi, boundary=boundary(beta, chi))
    first = tp.ad.grad(lnz, b)
    second = float(tp.compile(tp.ad.grad(first, b), inputs=[b])(np.float64(beta)))
    assert abs(beta * beta * second - onsager.specific_heat(beta)) < 1e-9


# ------------------------------------------------------------------ 3. implicit = unrolled

def test_implicit_derivative_equals_the_unrolled_one():
    """Unrolled from the converged environment (held fixed), derivatives are truncated
    Neumann series of the implicit ones; 40 moves converge them at beta = 0.6.  lnZ/N is
    stationary in the environment (2 moves suffice); the magnetization is not."""
    beta, converged = 0.6, boundary(0.6, 16)

    def derivative(observable, environment):
        return float(tp.grad(lambda b: observable(*environment(b), b))(np.float64(beta)))

    def lnz(env, t, b):
        return ctmrg.lnz_per_site(env, t)

    def magnetization(env, t, b):
        return ctmrg.magnetization(env, b)

    def unrolled(moves):
        return lambda b: ctmrg.unrolled_environment(b, converged, moves)

    for observable, moves in ((lnz, 2), (magnetization, 40)):
        implicit = derivative(observable, lambda b: ctmrg.environment(b, converged))
        assert abs(derivative(observable, unrolled(moves)) - implicit) < 1e-10
    assert abs(derivative(magnetization, unrolled(2)) - implicit) > 1e-6


# ------------------------------------------------------------------ 4. modes, gauge, phase

def test_one_code_for_numpy_eager_and_traced():
    beta, converged = 0.6, boundary(0.6, 16)
    numpy = float(ctmrg.ctmrg_lnz(beta, 16, boundary=converged))
    eager, eager_u = lnz_and_energy(beta, converged)
    b = tp.input((), name="beta")
    lnz = ctmrg.ctmrg_lnz(b, 16, boundary=converged)
    traced, traced_grad = tp.compile([lnz, tp.ad.grad(lnz, b)], inputs=[b])(np.float64(beta))
    assert abs(numpy - eager) < 1e-13 and abs(float(traced) - eager) < 1e-13
    assert abs(-float(traced_grad) - eager_u) < 1e-11


@pytest.mark.parametrize("beta,chi", [(0.6, 16), (0.42, 12)])
def test_the_environment_is_an_element_wise_fixed_point(beta, chi):
    converged = boundary(beta, chi)
    t = np.asarray(ctmrg.ising_tensor(beta))
    c, e = ctmrg.move(converged.env, t, converged.structure)
    assert np.max(np.abs(c - converged.env[0])) < ctmrg.TOL
    assert np.max(np.abs(e - converged.env[1])) < ctmrg.TOL
    assert converged.kept <= chi
    assert any(j - i > 1 for i, j in converged.structure.clusters)   # multiplets were fixed


def test_the_boundary_selects_the_phase():
    up = ctmrg.converge(0.6, 8, polarized=True)
    assert abs(float(ctmrg.magnetization(up.env, 0.6)) - onsager.magnetization(0.6)) < 1e-7
    above = ctmrg.converge(0.3, 8, polarized=True)         # above T_c it is forgotten
    assert abs(float(ctmrg.magnetization(above.env, 0.3))) < 1e-9


def test_kept_states_never_split_a_cluster_nor_keep_noise():
    w = np.array([1.0, 0.5, 0.2, 0.1, 0.099, 0.098, 0.01])
    assert ctmrg.kept_states(w, 4) == 3                    # 0.1, 0.099, 0.098 go together
    assert ctmrg.kept_states(w, 6) == 6
    assert ctmrg.kept_states(np.array([1.0, 0.3, 1e-9]), 3) == 2


def test_kept_states_are_resolved():
    """A kept eigenvalue is RESOLUTION (1e-5) away from the others and from zero: else
    eigh cannot fix its eigenvector to the tolerance."""
    assert ctmrg.kept_states(np.array([1.0, 0.3, 3e-5, 1.5e-5]), 4) == 4
    assert ctmrg.kept_states(np.array([1.0, 0.3, 3e-5, 8e-6]), 4) == 3     # 8e-6 from 0
    assert ctmrg.kept_states(np.array([1.0, 0.3, 1.5e-5, 1e-5]), 4) == 2   # 5e-6 apart
    assert ctmrg.kept_states(-np.array([1.0, 0.3, 3e-5, 1.5e-5]), 4) == 4  # magnitudes


def test_a_stalled_environment_says_how_accurate_it_is():
    """Below roundoff (tol = 1e-15) the entries stall at a noise floor (~1e-12 here): the
    corner spectrum has converged, so the point is returned with its residual, marked
    not converged and warned about; values and implicit derivatives stay exact."""
    with pytest.warns(ctmrg.AccuracyWarning, match="fixed point only to"):
        result = ctmrg.point(0.38, 32, second_order=False, tol=1e-15)
    assert result["converged"] is False and result["tol"] == 1e-15
    assert 1e-15 < result["residual"] < 1e-9
    for key in ("lnz", "u", "m"):
        assert abs(result[key] - result[f"{key}_exact"]) < 1e-10, key
    assert abs(result["u"] - result["u_local"]) < 1e-10


def test_a_sweep_keeps_the_points_that_finished(monkeypatch):
    real = ctmrg.point

    def point(beta, *args, **options):
        if beta == 0.35:
            raise ConvergenceError("ctmrg: no convergence after 1 moves", 1e-3, 1)
        return real(beta, *args, **options)
    monkeypatch.setattr(ctmrg, "point", point)
    with pytest.warns(RuntimeWarning, match="beta = 0.35 failed"):
        rows = ctmrg.sweep([0.3, 0.35, 0.6], chi=8, second_order=False)
    assert [row["beta"] for row in rows] == [0.3, 0.35, 0.6]
    assert rows[1] == {"beta": 0.35, "chi": 8,
                       "error": "ConvergenceError: ctmrg: no convergence after 1 moves"}
    assert abs(rows[2]["m"] - onsager.magnetization(0.6)) < 1e-6
    with pytest.raises(ConvergenceError):
        ctmrg.sweep([0.35], chi=8, on_error="raise")


def test_max_iter_bounds_the_iteration():
    with pytest.raises(ConvergenceError, match="no convergence after 1 moves"):
        ctmrg.converge(0.42, 16, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                     # no AccuracyWarning
        assert ctmrg.converge(0.42, 16).converged


def test_bad_input_fails_early():
    with pytest.raises(ArgumentError, match="chi"):
        ctmrg.converge(0.4, 1)
    with pytest.raises(ArgumentError, match="beta"):
        ctmrg.converge(-0.4, 8)
    b = tp.input((), name="beta")
    with pytest.raises(ArgumentError, match="boundary"):
        ctmrg.ctmrg_lnz(b, 8)
    env = tuple(tp.input(x.shape) for x in boundary(0.6, 16).env)
    with pytest.raises(ArgumentError, match="structure"):
        ctmrg.move(env, ctmrg.ising_tensor(b), 16)


def test_point_reports_values_exact_values_and_costs():
    result = ctmrg.point(0.6, 8)
    for key in ("lnz", "u", "m", "c"):
        assert abs(result[key] - result[f"{key}_exact"]) < 1e-6, key
    assert result["iterations"] > 0 and result["adjoint_iterations"] > 0
    assert result["forward_s"] > 0 and result["backward_s"] > 0 and result["second_s"] > 0
    assert result["c_method"] == "implicit"


def stalled(beta):
    raise ConvergenceError("fixed_point adjoint adjoint: GMRES did not converge")


def test_specific_heat_falls_back_to_differences_of_the_first_derivative():
    """Where the second derivative's solve stalls, c comes from central differences of
    Onsager's d(lnZ/N)/d beta (extrapolated): within its stated uncertainty of Onsager's
    c, which bounds it loosely (the unextrapolated difference's error)."""
    for beta in (0.3, 0.45, 0.6):
        row = ctmrg.specific_heat(stalled, lambda x: -onsager.energy(x), beta, 8)
        assert row["c_method"] == "differences" and "GMRES" in row["c_reason"]
        error = abs(row["c"] - onsager.specific_heat(beta))
        assert error < 1e-4 and error <= row["c_uncertainty"], beta
        assert ctmrg.specific_heat(lambda x: 7.0, None, beta, 8) == {
            "c": 7.0 * beta * beta, "c_method": "implicit"}


def test_specific_heat_next_to_beta_c_is_refused():
    row = ctmrg.specific_heat(stalled, lambda x: -onsager.energy(x), onsager.BETA_C + 1e-3,
                              8)
    assert np.isnan(row["c"]) and "straddle beta_c" in row["c_error"]

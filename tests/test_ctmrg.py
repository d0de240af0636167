"""CTMRG for the 2D Ising model through ``tp.fixed_point``:

1. chi = 32 against the exact solution (lnZ/N to 1e-9, u to 1e-7, |m| to 1e-7);
2. the AD energy equals the local energy -2<ss> and a finite difference of lnZ/N, and the
   second derivative gives the specific heat;
3. the implicit derivative equals the unrolled (checkpointed) one at convergence;
4. one code for NumPy, eager and traced; the fixed point is element-wise (gauge fixed);
   the boundary selects the phase below T_c; bad input fails early.
"""
from functools import lru_cache

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ArgumentError
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

@pytest.mark.slow
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

@pytest.mark.slow
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
    """At chi = 32 the discarded eigenvalues are (exactly) degenerate: the kept ones reach
    eigh's rule as a slice, so its second derivative is exact rather than refused."""
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

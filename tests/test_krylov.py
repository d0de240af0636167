"""tenpy_ad.krylov.gmres (the derivative solves of tp.fixed_point) against a dense solve
and SciPy's GMRES."""
import numpy as np
import pytest
from scipy.sparse.linalg import gmres as scipy_gmres

from tenpy_ad.krylov import gmres


def _system(n=40, seed=0, spread=0.9):
    """``I - M`` with the spectrum of ``M`` in a disc of radius ``spread`` (a contracting
    fixed point's adjoint), and a right-hand side."""
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n))
    m *= spread / np.max(np.abs(np.linalg.eigvals(m)))
    return np.eye(n) - m, rng.standard_normal(n)


@pytest.mark.parametrize("restart", [60, 7])
@pytest.mark.parametrize("start", ["zero", "guess"])
def test_gmres_solves_to_the_relative_tolerance(restart, start):
    a, b = _system()
    x0 = None if start == "zero" else b.copy()
    result = gmres(lambda v: a @ v, b, x0, tol=1e-11, restart=restart, max_restarts=50)
    assert result.converged
    true = np.linalg.norm(b - a @ result.x) / np.linalg.norm(b)
    assert true <= 1e-11 and result.residual == pytest.approx(true, rel=1e-6)
    np.testing.assert_allclose(result.x, np.linalg.solve(a, b), rtol=0, atol=1e-9)


def test_gmres_takes_as_many_iterations_as_scipys():
    """The same Krylov spaces: the same count to the same tolerance."""
    a, b = _system(60, seed=4)
    ours = gmres(lambda v: a @ v, b, b.copy(), tol=1e-10, restart=60, max_restarts=5)
    counted = []
    scipy_gmres(a, b, x0=b.copy(), rtol=1e-10, atol=0.0, restart=60, maxiter=5,
                callback=counted.append, callback_type="pr_norm")
    assert ours.converged and ours.iterations == len(counted)


def test_gmres_edge_cases():
    a, b = _system(10)
    exact = np.linalg.solve(a, b)
    at_solution = gmres(lambda v: a @ v, b, exact, tol=1e-8, restart=5, max_restarts=3)
    assert at_solution.converged and at_solution.iterations == 0
    zero = gmres(lambda v: a @ v, np.zeros(10), None, tol=1e-8, restart=5, max_restarts=3)
    assert zero.converged and not zero.x.any()
    # an invariant subspace (b in a 2-dimensional eigenspace): exact after 2 iterations
    d = np.diag(np.arange(1.0, 11.0))
    rhs = np.zeros(10)
    rhs[[2, 5]] = 1.0
    lucky = gmres(lambda v: d @ v, rhs, None, tol=1e-14, restart=8, max_restarts=1)
    assert lucky.converged and lucky.iterations == 2
    np.testing.assert_allclose(lucky.x, rhs / np.arange(1.0, 11.0), atol=1e-15)


def test_gmres_reports_what_it_did_not_reach():
    a, b = _system(40, spread=0.999, seed=2)
    short = gmres(lambda v: a @ v, b, None, tol=1e-12, restart=3, max_restarts=2)
    assert not short.converged and short.iterations == 6
    assert short.residual == pytest.approx(np.linalg.norm(b - a @ short.x)
                                           / np.linalg.norm(b), rel=1e-9)
    assert short.residual > 1e-12
    broken = gmres(lambda v: np.full_like(v, np.nan), b, None, tol=1e-8, restart=5,
                   max_restarts=3)
    assert not broken.converged and np.isnan(broken.residual)
    # a singular operator whose range misses b: no convergence, no exception
    singular = np.diag([1.0, 2.0, 0.0])
    miss = gmres(lambda v: singular @ v, np.array([1.0, 1.0, 1.0]), None, tol=1e-10,
                 restart=3, max_restarts=4)
    assert not miss.converged and miss.residual == pytest.approx(1 / np.sqrt(3))


def test_gmres_refuses_a_solution_beyond_the_rounding_of_its_products():
    """``diag(1, 1e-14)`` is singular to rounding: the exact solution ``(1, 1e14)`` of
    ``b = (1, 1)`` has a residual no product resolves (``eps |A| |x| ~ 0.02 |b|``), so the
    solve stops unconverged with ``rounding`` set and that rounding as its residual, not
    the tiny one it computed.  A smaller pivot is singular to the Arnoldi step itself
    (unconverged, the least-squares solution); a well-conditioned solve is unaffected."""
    b = np.ones(2)

    def solved(tiny):
        return gmres(lambda v: np.array([1.0, tiny]) * v, b, tol=1e-12, restart=2,
                     max_restarts=50)
    rounded = solved(1e-14)
    assert not rounded.converged and rounded.rounding and rounded.residual > 1e-3
    singular = solved(1e-20)
    assert not singular.converged and not singular.rounding
    np.testing.assert_allclose(singular.x, [1.0, 1.0], rtol=1e-12)
    fine = solved(1e-3)
    assert fine.converged and not fine.rounding
    np.testing.assert_allclose(fine.x, [1.0, 1e3], rtol=1e-10)

"""``tp.optimize``: L-BFGS over pytrees against known minima, the carry threaded through
evaluations, checkpoints that resume, the line search's tolerance of an objective that
fails at a trial point, and the SciPy wrapper."""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ArgumentError, ConvergenceError


def rosenbrock(params):
    x, y = params["x"], params["y"]
    return ((1.0 - x) ** 2 + 100.0 * (y - x * x) ** 2).sum()


START = {"x": np.array([-1.2, 0.5, 2.0]), "y": np.array([1.0, -0.3, 1.5])}


@pytest.mark.parametrize("compiled", [True, False])
def test_lbfgs_finds_the_rosenbrock_minimum_over_a_pytree(compiled):
    result = tp.optimize.minimize(rosenbrock, START, compiled=compiled, gtol=1e-10)
    assert result.success, result.message
    np.testing.assert_allclose(result.x["x"], 1.0, atol=1e-8)
    np.testing.assert_allclose(result.x["y"], 1.0, atol=1e-8)
    assert result.fun < 1e-14
    assert len(result.history) == result.nit and result.nfev > result.nit
    assert all(b <= a for a, b in zip(result.history, result.history[1:]))


def test_a_quadratic_takes_few_iterations():
    scales = np.array([1.0, 10.0, 100.0])
    result = tp.optimize.minimize(lambda v: (scales * (v - 2.0) ** 2).sum(), np.zeros(3))
    np.testing.assert_allclose(result.x, 2.0, atol=1e-9)
    assert result.nit <= 20


def test_the_carry_goes_from_one_evaluation_to_the_next():
    def fun(v, count):
        return ((v - 3.0) ** 2).sum(), count + 1.0

    result = tp.optimize.minimize(fun, np.zeros(2), carry=np.float64(0.0))
    assert float(result.carry) == result.nfev
    np.testing.assert_allclose(result.x, 3.0, atol=1e-9)


def test_a_checkpoint_resumes_where_the_run_stopped(tmp_path):
    path = tmp_path / "state.npz"
    whole = tp.optimize.minimize(rosenbrock, START, gtol=1e-10)
    first = tp.optimize.minimize(rosenbrock, START, maxiter=7, checkpoint=path)
    assert first.nit == 7 and path.exists()
    resumed = tp.optimize.minimize(rosenbrock, START, gtol=1e-10, checkpoint=path)
    assert resumed.nit == whole.nit
    np.testing.assert_allclose(resumed.x["x"], whole.x["x"], rtol=1e-12)
    other = tmp_path / "other.npz"
    tp.optimize.minimize(lambda v: (v * v).sum(), np.ones(4), maxiter=1, checkpoint=other)
    with pytest.raises(ArgumentError, match="holds 4 parameters"):
        tp.optimize.minimize(rosenbrock, START, checkpoint=other)


def test_the_line_search_steps_back_from_a_point_that_does_not_converge():
    def fun(v):
        if np.max(np.abs(v.detach().numpy())) > 1.5:
            raise ConvergenceError("no environment here")
        return ((v - 1.0) ** 2).sum()

    result = tp.optimize.minimize(fun, np.full(2, -1.0), compiled=False)
    np.testing.assert_allclose(result.x, 1.0, atol=1e-9)


def test_scipy_minimize_takes_the_same_objective():
    result = tp.optimize.scipy_minimize(rosenbrock, START, method="BFGS",
                                        options={"gtol": 1e-10})
    assert result.success
    np.testing.assert_allclose(result.x["x"], 1.0, atol=1e-6)


def test_arguments_are_checked():
    with pytest.raises(ArgumentError, match="method"):
        tp.optimize.minimize(rosenbrock, START, method="adam")
    with pytest.raises(ArgumentError, match="real floating-point"):
        tp.optimize.minimize(lambda v: (v * v).sum(), np.ones(2, complex))

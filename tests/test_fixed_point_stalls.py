"""``tp.fixed_point``'s convergence test on a function of the iterate (``monitor=``) and
what a stalled solve does (``on_stall=``): the residual reported, a warning or an
accepted rounding floor, and never a derivative at a point that is not a fixed point."""
import math
import warnings

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ArgumentError, ConvergenceError, ConvergenceWarning

from modes import ALL_MODES, run

THETA = 0.3


def flipping(x, theta):
    """|x| converges to 2 theta, but the sign flips at every step: a 2-cycle."""
    return -tp.sign(x) * (tp.abs(x) * 0.5 + theta)


def affine(x, theta):
    return x * 0.5 + theta                       # x* = 2 theta, dx*/dtheta = 2


def test_a_monitor_stops_an_iteration_whose_invariants_converge():
    stats = {}
    x = tp.fixed_point(flipping, np.array([1.0]), THETA, tol=1e-12,
                       monitor=lambda x: tp.abs(x), stats=stats)
    assert abs(abs(float(x[0])) - 2 * THETA) < 1e-11
    assert stats["converged"] is True
    assert stats["monitor_residual"] <= 1e-12
    assert stats["residual"] == pytest.approx(2.0)          # element-wise: the flip


def test_an_iteration_in_a_2_cycle_stops_within_a_few_steps():
    with pytest.raises(ConvergenceError, match="alternates between two iterates") as error:
        tp.fixed_point(flipping, np.array([1.0]), THETA, tol=1e-12, max_iter=10_000)
    assert error.value.iterations < 60                    # (|x| first converges to 2 theta)
    assert error.value.residual == pytest.approx(2.0)


def _turning(x, theta):
    """A rotation by theta of the plane: |x| stays, the iterate never settles."""
    c, s = tp.cos(theta), tp.sin(theta)
    return tp.stack([c * x[0] - s * x[1], s * x[0] + c * x[1]])


@pytest.mark.parametrize("max_iter", [2000, 100_000])
def test_an_iteration_without_progress_stops_long_before_max_iter(max_iter):
    """At residual ~1 a tol of 1e-10 needs 33 halvings: after m iterations without one,
    33 m more are out of reach once 33 m > max_iter (m ~ max_iter / 34)."""
    with pytest.raises(ConvergenceError, match="no progress") as error:
        tp.fixed_point(_turning, np.array([1.0, 0.0]), 1.0, tol=1e-10, max_iter=max_iter)
    assert error.value.iterations < max_iter / 20


def test_a_slow_steady_contraction_is_not_cut_short():
    """x -> 0.999 x + theta halves its residual every ~700 steps and needs ~27000 to
    reach 1e-12: within max_iter, so it runs to the end and converges."""
    stats = {}
    x = tp.fixed_point(lambda x, theta: 0.999 * x + theta, np.array([0.0]), THETA,
                       tol=1e-12, max_iter=40_000, stats=stats)
    assert float(x[0]) == pytest.approx(1000 * THETA, rel=1e-8)
    assert stats["converged"] is True and stats["iterations"] > 20_000


def test_an_oscillating_contraction_is_not_taken_for_a_2_cycle():
    """x -> -0.99 x + theta: every second iterate is within tol of the one before the last
    long before the step's own change is (by 1 - 0.99 of it), and it still converges."""
    stats = {}
    x = tp.fixed_point(lambda x, theta: theta - 0.99 * x, np.array([1.0]), THETA,
                       tol=1e-12, stats=stats)
    assert float(x[0]) == pytest.approx(THETA / 1.99, abs=1e-11)
    assert stats["converged"] is True


@pytest.mark.parametrize("mode", ["eager", "traced", "compiled", "jit"])
def test_the_derivative_refuses_a_monitored_solution_that_is_no_fixed_point(mode):
    def loss(theta):
        x = tp.fixed_point(flipping, np.array([1.0]), theta, tol=1e-12,
                           monitor=lambda x: tp.abs(x))
        return (x * x).sum()

    with pytest.raises(ConvergenceError, match="the derivative needs a fixed point"):
        run(tp.grad(loss), mode, np.float64(THETA))


@pytest.mark.parametrize("mode", ALL_MODES)
def test_a_monitored_fixed_point_is_differentiated(mode):
    def solution(theta):
        return tp.fixed_point(affine, np.array([0.0]), theta, tol=1e-13,
                              monitor=lambda x: x * x).sum()

    assert run(solution, mode, np.float64(THETA)) == pytest.approx(2 * THETA, abs=1e-12)
    if mode in ("traced", "compiled", "jit"):
        assert run(tp.grad(solution), mode, np.float64(THETA)) == pytest.approx(2.0, 1e-10)
    elif mode == "eager":
        assert float(tp.grad(solution)(np.float64(THETA))) == pytest.approx(2.0, 1e-10)


def test_warn_returns_the_last_iterate_and_reports_the_residual():
    stats = {}
    with pytest.warns(ConvergenceWarning, match="after 5 iterations"):
        x = tp.fixed_point(affine, np.array([0.0]), THETA, max_iter=5, on_stall="warn",
                           stats=stats)
    expected = 2 * THETA * (1 - 0.5 ** 5)              # five steps from 0
    assert float(x[0]) == pytest.approx(expected, 1e-14)
    assert stats["converged"] is False and stats["iterations"] == 5
    assert stats["residual"] == pytest.approx(THETA * 0.5 ** 4 / expected, 1e-12)


def test_raise_is_the_default():
    with pytest.raises(ConvergenceError, match="no convergence after 5 iterations") as info:
        tp.fixed_point(affine, np.array([0.0]), THETA, max_iter=5)
    assert info.value.iterations == 5 and info.value.residual > 0


class Noisy:
    """``affine`` with a relative error of ``size`` of alternating sign (a floor that no
    step passes by chance)."""

    def __init__(self, size: float):
        self.size, self.steps = size, 0

    def __call__(self, x, theta):
        self.steps += 1
        return affine(x, theta) * (1.0 + self.size * (-1) ** self.steps)


def test_accept_takes_a_floor_within_reach_and_says_so():
    stats = {}
    x = tp.fixed_point(Noisy(1e-9), np.array([0.0]), THETA, tol=1e-10, on_stall="accept",
                       stats=stats)
    assert float(x[0]) == pytest.approx(2 * THETA, 1e-8)
    assert stats["converged"] is False
    assert 1e-10 < stats["residual"] <= 1e-7
    assert stats["iterations"] < 200                     # stopped at the floor, not at 10^4


def test_accept_refuses_a_floor_beyond_the_accuracy_it_allows():
    with pytest.raises(ConvergenceError):
        tp.fixed_point(Noisy(1e-4), np.array([0.0]), THETA, tol=1e-10, max_iter=300,
                       on_stall="accept")


def test_accepted_floor_gives_the_derivative_to_its_accuracy():
    noisy = Noisy(1e-9)

    def solution(theta):
        return tp.fixed_point(noisy, np.array([0.0]), theta, tol=1e-10,
                              on_stall="accept").sum()

    assert float(tp.grad(solution)(np.float64(THETA))) == pytest.approx(2.0, 1e-6)


def test_options_are_checked():
    with pytest.raises(ArgumentError, match="on_stall"):
        tp.fixed_point(affine, np.zeros(1), THETA, on_stall="ignore")
    with pytest.raises(ArgumentError, match="monitor"):
        tp.fixed_point(affine, np.zeros(1), THETA, monitor=3)

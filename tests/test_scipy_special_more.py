"""``erfcx``, ``ndtr``, ``log_ndtr``, ``i0``, ``i0e``, ``i1``, ``i1e``, ``gammainc``,
``gammaincc``, ``chdtr`` and ``chdtrc`` of ``tp.scipy.special`` beyond the tables of
tests/test_scipy_special.py (values, dtypes, first and second derivatives in every mode):
derivatives in the tails, where the textbook formulas cancel or underflow, against
SciPy's values and central differences scaled to the point; higher orders against closed
forms; the derivative in the first argument of the incomplete gamma family in every mode
(against central differences), and a constant first argument in every mode."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sc

import tenpy_ad as tp

from derivative_modes import FIRST_ORDER, TANGENTS, derivative
from modes import GRAD_MODES, grad_in

S = tp.scipy.special


def _slope(fn, x: np.ndarray) -> np.ndarray:
    """The entrywise derivative of ``fn`` at ``x`` (eager backward of the sum)."""
    t = tp.tensor(x, requires_grad=True)
    fn(t).sum().backward()
    return np.asarray(t.grad)


def _relative_central_difference(fn, x: np.ndarray, step: float = 1e-5) -> np.ndarray:
    """Central differences of the SciPy function ``fn`` with steps relative to ``x``."""
    h = step * np.abs(x)
    return (fn(x + h) - fn(x - h)) / (2 * h)


def _nth_derivative(fn, x: float, n: int) -> float:
    for _ in range(n):
        fn = tp.grad(fn)
    return float(fn(x))


# ------------------------------------------------------------------ tails

def test_erfcx_slope_in_the_right_tail_keeps_its_relative_precision():
    """``2 x erfcx(x) - 2/sqrt(pi)`` loses ``x^2 eps`` of relative precision; above 20 the
    asymptotic series does not (at ``x = 1e8`` the formula would give garbage of the
    order of an ulp of 2/sqrt(pi), the slope is ``-5.6e-17``)."""
    x = np.array([25.0, 1e3, 1e5, 1e8])
    np.testing.assert_allclose(_slope(S.erfcx, x),
                               _relative_central_difference(sc.erfcx, x), rtol=1e-8)
    leading = -1.0 / (math.sqrt(math.pi) * x ** 2) * (1 - 1.5 / x ** 2)
    np.testing.assert_allclose(_slope(S.erfcx, x[1:]), leading[1:], rtol=1e-10)


def test_erfcx_slope_is_continuous_across_the_tail_threshold():
    below, above = _slope(S.erfcx, np.array([20.0])), _slope(S.erfcx, np.array([20.0 + 1e-9]))
    np.testing.assert_allclose(below, above, rtol=1e-10)
    np.testing.assert_allclose(below, 2 * 20.0 * sc.erfcx(20.0) - 2 / math.sqrt(math.pi),
                               rtol=1e-11)


def test_erfcx_in_the_left_tail_and_at_infinities():
    x = np.array([-5.0, -20.0])
    expected = 2 * x * sc.erfcx(x) - 2 / math.sqrt(math.pi)
    np.testing.assert_allclose(_slope(S.erfcx, x), expected, rtol=1e-13)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_slope(S.erfcx, np.array([np.inf, -30.0])),
                                      [0.0, -np.inf])


def test_log_ndtr_slope_does_not_underflow_in_the_left_tail():
    """``phi(x) / ndtr(x)`` written as it reads is ``0/0`` below ``x = -38``; the slope
    is ``-x`` to leading order there (``-x - 1/x + 2/x^3``)."""
    x = np.array([-5.0, -30.0, -40.0, -1e3, -1e6])
    got = _slope(S.log_ndtr, x)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, _relative_central_difference(sc.log_ndtr, x), rtol=1e-7)
    np.testing.assert_allclose(got[3:], -x[3:] - 1 / x[3:] + 2 / x[3:] ** 3, rtol=1e-12)


def test_log_ndtr_slope_in_the_right_tail_is_the_density_and_vanishes():
    x = np.array([0.5, 5.0, 30.0, 40.0])
    got = _slope(S.log_ndtr, x)
    np.testing.assert_allclose(got, np.exp(-x ** 2 / 2) / math.sqrt(2 * math.pi)
                               / sc.ndtr(x), rtol=1e-13)
    assert got[-1] == 0.0 or got[-1] < 1e-300


def test_log_ndtr_second_derivative_in_the_left_tail():
    """``g' = -g (x + g)`` for ``g = phi/ndtr``; ``x + g`` cancels, the composition through
    ``erfcx`` does not: ``-1 + 1/x^2`` to leading order."""
    x = -1e3
    assert _nth_derivative(S.log_ndtr, x, 2) == pytest.approx(-1 + 1 / x ** 2 - 6 / x ** 4,
                                                              rel=1e-12)


def test_i0e_and_i1e_slopes_for_large_arguments():
    x = np.array([50.0, 1e3, 1e5, -1e5])
    for ours, theirs in ((S.i0e, sc.i0e), (S.i1e, sc.i1e)):
        np.testing.assert_allclose(_slope(ours, x), _relative_central_difference(theirs, x),
                                   rtol=1e-6)


def test_i1_slope_at_and_near_zero_has_no_zero_over_zero():
    """``i1' = i0 - i1/x``: 1/2 at 0 (as ``(i0 + iv(2, .))/2``), and no cancellation
    near 0 in the second derivative (``3x/8`` to leading order)."""
    x = np.array([0.0, 1e-300, 1e-12, -1e-8])
    np.testing.assert_allclose(_slope(S.i1, x), 0.5 + 3 * x ** 2 / 16, rtol=1e-15)
    for point in (1e-12, 1e-6):
        assert _nth_derivative(S.i1, point, 2) == pytest.approx(3 * point / 8, rel=1e-9)


# ------------------------------------------------------------------ higher orders

@pytest.mark.parametrize("x", [0.0, 1.3, -2.0])
def test_third_derivatives_of_i0_and_i1_are_the_closed_forms(x):
    """``I_n' = (I_(n-1) + I_(n+1))/2``: ``i0''' = (3 I_1 + I_3)/4``,
    ``i1''' = (3 I_0 + 4 I_2 + I_4)/8`` (3/8 at 0)."""
    assert _nth_derivative(S.i0, x, 3) == pytest.approx(
        (3 * sc.iv(1, x) + sc.iv(3, x)) / 4, rel=1e-13, abs=1e-15)
    assert _nth_derivative(S.i1, x, 3) == pytest.approx(
        (3 * sc.iv(0, x) + 4 * sc.iv(2, x) + sc.iv(4, x)) / 8, rel=1e-13)


def test_derivatives_of_i0e_at_its_kink_are_the_symmetric_ones():
    """``i0e = f(|x|)``, ``f(s) = exp(-s) I_0(s)``: at 0 the odd orders are the means of
    the one-sided ones (0), the even ones ``f^(k)(0)``: 3/2 and 35/8."""
    assert [_nth_derivative(S.i0e, 0.0, n) for n in (1, 2, 3, 4)] == pytest.approx(
        [0.0, 1.5, 0.0, 4.375], rel=1e-14, abs=1e-15)


def test_higher_derivatives_of_gammainc_in_x_are_the_closed_forms():
    """``P'' = density (a - 1 - x) / x``, ``P''' = density ((a-1-x)^2 - (a-1)) / x^2``."""
    a, x = 3.5, 2.0
    density = x ** (a - 1) * math.exp(-x) / math.gamma(a)
    fn = lambda t: S.gammainc(a, t)
    assert _nth_derivative(fn, x, 2) == pytest.approx(density * (a - 1 - x) / x, rel=1e-13)
    assert _nth_derivative(fn, x, 3) == pytest.approx(
        density * ((a - 1 - x) ** 2 - (a - 1)) / x ** 2, rel=1e-12)
    assert _nth_derivative(lambda t: S.chdtrc(2 * a, t), 2 * x, 2) == pytest.approx(
        -density * (a - 1 - x) / x / 4, rel=1e-13)


def test_gammainc_slope_for_large_parameters_does_not_overflow():
    """``x^(a-1)`` and ``gamma(a)`` overflow at ``a = 300``; their ratio does not."""
    a, x = np.full(3, 300.0), np.array([250.0, 300.0, 350.0])
    got = _slope(lambda t: S.gammainc(a, t), x)
    expected = np.exp((a - 1) * np.log(x) - x - sc.gammaln(a))
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    np.testing.assert_allclose(got, _relative_central_difference(
        lambda v: sc.gammainc(a, v), x, 1e-7), rtol=1e-5)


# ------------------------------------------------------------------ the first argument

FIRST_ARGUMENT = [("gammainc", "a"), ("gammaincc", "a"), ("chdtr", "v"), ("chdtrc", "v")]
PARAMETER = np.array([1.5, 2.0, 3.5])
POINT = np.array([0.7, 1.5, 4.0])


def _first_argument_slope(name: str, x) -> np.ndarray:
    """Central differences of SciPy's ``name`` in its first argument at ``PARAMETER``."""
    fn, h = getattr(sc, name), 1e-6
    return (fn(PARAMETER + h, x) - fn(PARAMETER - h, x)) / (2 * h)


@pytest.mark.parametrize("mode", FIRST_ORDER)
@pytest.mark.parametrize("name,argument", FIRST_ARGUMENT)
def test_the_derivative_in_the_first_argument_matches_central_differences(
        name, argument, mode):
    """The shape parameter (degrees of freedom) differentiated alone and together with
    ``x``, in every first-order mode."""
    fn = getattr(S, name)
    v = np.array([0.3, -1.1, 0.8])
    expected = _first_argument_slope(name, POINT)
    got = derivative(mode, lambda p: fn(p, POINT).sum(), PARAMETER, v)
    if mode in TANGENTS:
        got, expected = float(got), float(np.sum(expected * v))
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-8, err_msg=mode)
    h = 1e-6                     # both operands: p and x = p + 0.5
    both = (getattr(sc, name)(PARAMETER + h, PARAMETER + 0.5 + h)
            - getattr(sc, name)(PARAMETER - h, PARAMETER + 0.5 - h)) / (2 * h)
    got = derivative(mode, lambda p: fn(p, p + 0.5).sum(), PARAMETER, v)
    if mode in TANGENTS:
        got, both = float(got), float(np.sum(both * v))
    np.testing.assert_allclose(got, both, rtol=1e-7, atol=1e-8, err_msg=mode)


@pytest.mark.parametrize("name,argument", FIRST_ARGUMENT)
def test_under_jit_both_arguments_are_differentiated(name, argument):
    fn = getattr(S, name)
    got = tp.jit(tp.grad(lambda p: fn(p, POINT).sum()))(PARAMETER)
    np.testing.assert_allclose(got, grad_in("eager", lambda p: fn(p, POINT).sum(), PARAMETER),
                               rtol=1e-14)
    got = tp.jit(tp.grad(lambda t: fn(PARAMETER, t).sum()))(POINT)
    np.testing.assert_allclose(got, grad_in("eager", lambda t: fn(PARAMETER, t).sum(), POINT),
                               rtol=1e-14)


@pytest.mark.parametrize("name,argument", FIRST_ARGUMENT)
def test_scipys_ufunc_on_tensors_differentiates_the_first_argument_too(name, argument):
    p = tp.tensor(PARAMETER, requires_grad=True)
    getattr(sc, name)(p, POINT).sum().backward()
    np.testing.assert_allclose(p.grad, _first_argument_slope(name, POINT), rtol=1e-8)


@pytest.mark.parametrize("mode", GRAD_MODES)
@pytest.mark.parametrize("name,argument", FIRST_ARGUMENT)
def test_a_constant_first_argument_works_in_every_mode(name, argument, mode):
    """The first argument as an array, or as an eager tensor that does not require grad:
    the derivative in ``x`` is the closed form."""
    fn = getattr(S, name)
    half = name.startswith("chdtr")
    a, x = (PARAMETER / 2, POINT / 2) if half else (PARAMETER, POINT)
    density = x ** (a - 1) * np.exp(-x) / sc.gamma(a) * (0.5 if half else 1.0)
    expected = density if name.endswith("inc") or name == "chdtr" else -density
    for constant in (PARAMETER, tp.tensor(PARAMETER)):
        got = grad_in(mode, lambda t: fn(constant, t).sum(), POINT)
        np.testing.assert_allclose(got, expected, rtol=1e-13, err_msg=mode)


def test_the_mixed_second_derivative_through_the_x_slope_is_the_closed_form():
    """The ``x``-slope is an expression in ``a``; its own derivative in ``a`` (the mixed
    partial, ``density (log x - psi(a))``) exists and is right, traced and eager (where
    the gradient in ``x`` alone does not ask the rule about ``a``, which is on the tape)."""
    a, x = 2.5, 1.7
    expected = x ** (a - 1) * math.exp(-x) / math.gamma(a) * (math.log(x) - sc.psi(a))
    p, q = tp.input(()), tp.input(())
    slope = tp.ad.grad(S.gammainc(p, q), q)
    assert float(tp.evaluate(tp.ad.grad(slope, p), {p: a, q: x})) == pytest.approx(
        expected, rel=1e-12)
    s, t = tp.tensor(a, requires_grad=True), tp.tensor(x, requires_grad=True)
    (eager_slope,) = tp.grad_of([S.gammainc(s, t)], [t], create_graph=True)
    (mixed,) = tp.grad_of([eager_slope], [s])
    assert float(mixed) == pytest.approx(expected, rel=1e-12)


def test_the_gradient_in_x_alone_does_not_ask_about_a_grad_requiring_a():
    """``grad_of(out, [x])`` (PyTorch's ``autograd.grad``) differentiates towards ``x``
    only; ``backward()``, which fills every leaf's ``.grad``, gives ``a`` its derivative
    too."""
    a = tp.tensor(PARAMETER, requires_grad=True)
    x = tp.tensor(POINT, requires_grad=True)
    out = S.gammainc(a, x * 1.0).sum()
    (got,) = tp.grad_of([out], [x], retain_graph=True)
    np.testing.assert_allclose(got, POINT ** (PARAMETER - 1) * np.exp(-POINT)
                               / sc.gamma(PARAMETER), rtol=1e-13)
    out.backward()
    np.testing.assert_allclose(a.grad, _first_argument_slope("gammainc", POINT), rtol=1e-8)

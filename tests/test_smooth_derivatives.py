"""Smooth functions have smooth derivative rules: their first, second and third
derivatives are right at the points where a rule could have picked a value (ties of
``logaddexp``/``logsumexp``, ``sinc`` at and near 0) and away from them, against closed
forms, in every mode; and accurate in the tails."""
from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp

from modes import DERIVATIVE_MODES, derivatives_in

THIRD_ORDER_MODES = ("eager", "traced", "compiled", "transform", "jit", "forward")


def _sum_of(fn):
    return lambda x: fn(x).sum()


def _eager_diagonal(fn, a, order):
    x = tp.tensor(a, requires_grad=True)
    value = fn(x).sum()
    for _ in range(order - 1):
        (g,) = tp.grad_of([value], [x], create_graph=True)
        value = g.sum()
    value.backward()
    return np.asarray(x.grad)


def _traced_diagonal(fn, a, order, compiled):
    x = tp.input(a.shape, a.dtype)
    g = fn(x).sum()
    for _ in range(order):
        g = tp.ad.grad(g.sum(), x)
    if compiled:
        return tp.compile([g], inputs=[x])(a)[0]
    return tp.evaluate(g, {x: a})


def _transform_diagonal(fn, a, order, mode):
    derivative = fn
    for _ in range(order - (mode == "forward")):
        derivative = tp.grad(_sum_of(derivative))
    if mode == "forward":
        return tp.jvp(derivative, (a,), (np.ones_like(a),))[1]
    return (tp.jit(derivative) if mode == "jit" else derivative)(a)


def diagonal_derivative(mode: str, fn, a: np.ndarray, order: int) -> np.ndarray:
    """The ``order``-th derivative of an elementwise ``fn`` at each entry of ``a`` (the
    gradient of the sum of the previous derivative), in ``mode``."""
    a = np.asarray(a, dtype=float)
    if mode == "eager":
        return _eager_diagonal(fn, a, order)
    if mode in ("traced", "compiled"):
        return _traced_diagonal(fn, a, order, mode == "compiled")
    return _transform_diagonal(fn, a, order, mode)


def sigmoid(d):
    return 0.5 * (1.0 + np.tanh(0.5 * d))


# ------------------------------------------------------------------ logaddexp, logaddexp2

#: (x, y) pairs: exact ties, near ties, large magnitudes, the tails
PAIRS = np.array([[0.3, 0.3], [-2.0, -2.0], [0.3, 0.3 + 1e-9], [0.0, np.log(3.0)],
                  [1e17, 1e17], [1e10, 1e10 + 2.0], [-5.0, 4.0], [3.5, -0.5]])


@pytest.mark.parametrize("base", ["e", "2"])
@pytest.mark.parametrize("mode", THIRD_ORDER_MODES)
def test_logaddexp_derivatives_to_third_order(base, mode):
    """d^k/dx^k logaddexp(x, y) = c^(k-1) sigmoid^(k-1)(c (x - y)), c = 1 (ln2 for base
    2): at x == y the second derivative is c/4 (the tie rule's derivative was 0)."""
    fn = tnp.logaddexp if base == "e" else tnp.logaddexp2
    c = 1.0 if base == "e" else math.log(2.0)
    x, y = PAIRS[:, 0], PAIRS[:, 1]
    s = sigmoid(c * (x - y))
    expected = {1: s, 2: c * s * (1 - s), 3: c * c * s * (1 - s) * (1 - 2 * s)}
    for order, values in expected.items():
        got = diagonal_derivative(mode, lambda v: fn(v, y), x, order)
        np.testing.assert_allclose(got, values, rtol=1e-9, atol=1e-15,
                                   err_msg=f"order {order}")
        got_y = diagonal_derivative(mode, lambda v: fn(x, v), y, order)
        flipped = {1: 1 - s, 2: expected[2], 3: -expected[3]}[order]
        np.testing.assert_allclose(got_y, flipped, rtol=1e-9, atol=1e-15,
                                   err_msg=f"order {order} in y")


@pytest.mark.parametrize("mode", DERIVATIVE_MODES)
def test_logaddexp_mixed_second_derivative_at_a_tie(mode):
    grad, hess = derivatives_in(mode, lambda x, y: tnp.logaddexp(x, y).sum(), 0.7, 0.7)
    np.testing.assert_allclose(grad, [0.5, 0.5], rtol=1e-15)
    np.testing.assert_allclose(hess, [[0.25, -0.25], [-0.25, 0.25]], rtol=1e-15)


@pytest.mark.parametrize("mode", ("eager", "traced", "transform", "forward"))
def test_logaddexp_curvature_is_accurate_in_both_tails(mode):
    """sigmoid(d) sigmoid(-d) to full relative precision at |d| = 40 for either operand
    (``exp(y - out) (1 - exp(y - out))`` rounds the far tail's curvature to 0)."""
    x, y = np.array([-40.0, 0.0]), np.array([0.0, -40.0])
    tail = math.exp(-40.0) / (1 + math.exp(-40.0)) ** 2
    for values in (diagonal_derivative(mode, lambda v: tnp.logaddexp(v, y), x, 2),
                   diagonal_derivative(mode, lambda v: tnp.logaddexp(x, v), y, 2)):
        np.testing.assert_allclose(values, [tail, tail], rtol=1e-14)


@pytest.mark.parametrize("mode", THIRD_ORDER_MODES)
def test_softplus_compositions_are_smooth_at_zero(mode):
    a = np.array([0.0, -1.5, 2.0])
    s = sigmoid(a)
    for fn in (lambda v: tnp.logaddexp(0.0, v), lambda v: tnp.log1p(tnp.exp(v))):
        np.testing.assert_allclose(diagonal_derivative(mode, fn, a, 2), s * (1 - s),
                                   rtol=1e-13)
        np.testing.assert_allclose(diagonal_derivative(mode, fn, a, 3),
                                   s * (1 - s) * (1 - 2 * s), rtol=1e-12, atol=1e-15)


# ------------------------------------------------------------------ logsumexp

def _softmax_hessian(w):
    return np.diag(w) - np.outer(w, w)


@pytest.mark.parametrize("mode", DERIVATIVE_MODES)
@pytest.mark.parametrize("scale", [1.0, 1e8, 1e17])
def test_logsumexp_hessian_is_the_softmax_jacobian_at_any_scale(mode, scale):
    """Exact ties and offsets that survive the scale: ``exp(x - logsumexp(x))`` carries
    the rounding of the logarithm (relative 1e-8 at 1e8, every digit at 1e17)."""
    offsets = np.array([0.0, 0.0, -1.0, -2.0]) * max(1.0, np.spacing(scale))
    a = scale + offsets
    e = np.exp(offsets)
    w = e / e.sum()
    grad, hess = derivatives_in(mode, lambda x: tnp.logsumexp(x), a)
    np.testing.assert_allclose(grad, w, rtol=1e-13)
    np.testing.assert_allclose(hess, _softmax_hessian(w), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mode", DERIVATIVE_MODES)
def test_logsumexp_zero_weights_leave_their_terms_out(mode):
    """A term with ``b = 0`` is left out whatever its ``x`` (SciPy's rule): no NaN from
    ``0 * exp(1000)``; its ``b`` derivative ``exp(x)/s`` is honestly infinite."""
    a, b = np.array([1000.0, 2.0, -np.inf, 5.0]), np.array([0.0, 1.0, 3.0, 2.0])
    s = np.exp(2.0) + 2 * np.exp(5.0)
    with np.errstate(over="ignore", invalid="ignore"):   # the infinite row of the Hessian
        grad, hess = derivatives_in(mode, lambda x, w: tnp.logsumexp(x, b=w), a, b)
    np.testing.assert_allclose(grad[:4], [0.0, np.exp(2.0) / s, 0.0, 2 * np.exp(5.0) / s],
                               rtol=1e-13)
    np.testing.assert_allclose(grad[4:], [np.inf, np.exp(2.0) / s, 0.0, np.exp(5.0) / s],
                               rtol=1e-13)
    finite = [1, 3]                    # the terms that count: d2/dx_i dx_j = diag - w w^T
    w = np.array([np.exp(2.0), 2 * np.exp(5.0)]) / s
    np.testing.assert_allclose(hess[np.ix_(finite, finite)], _softmax_hessian(w),
                               rtol=1e-12)
    a, b = np.array([np.inf, 1.0, 2.0]), np.array([0.0, 1.0, 2.0])    # +inf left out
    s = np.e + 2 * np.e ** 2
    with np.errstate(over="ignore", invalid="ignore"):
        grad, _ = derivatives_in(mode, lambda x, w: tnp.logsumexp(x, b=w), a, b)
    np.testing.assert_allclose(grad, [0.0, np.e / s, 2 * np.e ** 2 / s, np.inf, np.e / s,
                                      np.e ** 2 / s], rtol=1e-13)


# ------------------------------------------------------------------ sinc

def _sinc_reference(k: int, x: float) -> float:
    """The k-th derivative of sinc at x from its power series, in 60 decimal digits."""
    with localcontext() as context:
        context.prec = 60
        pi = Decimal("3.14159265358979323846264338327950288419716939937510582097494")
        z = pi * Decimal(float(x))
        m, n = k % 2, (k + k % 2) // 2
        term = z if m else Decimal(1)
        total = Decimal(0)
        for _ in range(200):
            total += (-1) ** n * term / (m + k + 1)
            term = term * z * z / ((m + 1) * (m + 2))
            m, n = m + 2, n + 1
        return float(total * pi ** k)


SINC_POINTS = np.array([0.0, 1e-12, -1e-8, 1e-4, 0.3, -0.9, 1.7, 4.25, -12.5])


@pytest.mark.parametrize("mode", ("eager", "traced", "transform", "forward"))
def test_sinc_derivatives_near_zero_and_away(mode):
    """The closed form (cos(pi x) - sinc(x))/x of the first derivative cancels near 0
    (the second derivative at 1e-8 was off by 65 %); every order matches the series."""
    for order in (1, 2, 3):
        expected = [_sinc_reference(order, x) for x in SINC_POINTS]
        got = diagonal_derivative(mode, tnp.sinc, SINC_POINTS, order)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14,
                                   err_msg=f"order {order}")


def test_sinc_higher_orders_match_the_series():
    x = tp.input(SINC_POINTS.shape)
    g = tnp.sinc(x)
    for order in range(1, 7):
        g = tp.ad.grad(g.sum(), x)
        expected = [_sinc_reference(order, v) for v in SINC_POINTS]
        np.testing.assert_allclose(tp.evaluate(g, {x: SINC_POINTS}), expected, rtol=1e-11,
                                   atol=1e-12 * math.pi ** order, err_msg=f"order {order}")


def _complex_sinc_derivative(z: complex) -> complex:
    """sinc'(z) = pi sum_n (-1)^n (pi z)^(2n-1) / ((2n-1)! (2n+1)), in complex doubles."""
    w = math.pi * z
    term, total = w, 0j
    for n in range(1, 60):
        total += (-1) ** n * term / (2 * n + 1)
        term *= w * w / ((2 * n) * (2 * n + 1))
    return math.pi * total


def test_complex_sinc_derivative_is_holomorphic():
    z = np.array([1e-9 + 2e-9j, 0.4 - 0.3j, 2.0 + 1.5j])
    expected = [_complex_sinc_derivative(complex(v)) for v in z]
    _, tangent = tp.jvp(tnp.sinc, (z,), (np.ones_like(z),))
    np.testing.assert_allclose(tangent, expected, rtol=1e-11)
    _, tangent_i = tp.jvp(tnp.sinc, (z,), (np.full_like(z, 1j),))
    np.testing.assert_allclose(tangent_i, 1j * tangent, rtol=1e-14)
    gradient = tp.grad(lambda v: tnp.real(tnp.sinc(v)).sum())(z)
    np.testing.assert_allclose(gradient, np.conj(expected), rtol=1e-11)

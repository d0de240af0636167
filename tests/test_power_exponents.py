"""Powers with the exponents where the rule has special cases: ``x ** 0`` (constant 1, also
at x = 0, as NumPy computes it), ``x ** 1``, a zero base ``0.0 ** t`` and ``t ** t``.

An eager ``t ** 0.0`` requires grad when ``t`` does (PyTorch's convention: its derivative
is an exact 0, also at t = 0 where ``0 * t**-1`` would be NaN), so ``.backward()`` works on
it.  Every spelling (``**``, ``pow``, ``np.power``, ``tp.power``) is checked eagerly, traced
and compiled, at first and second order, against central finite differences.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp

POWERS = {
    "t ** 0.0": lambda t: t ** 0.0,
    "t ** 0": lambda t: t ** 0,
    "t ** 1": lambda t: t ** 1,
    "t ** 2.0": lambda t: t ** 2.0,
    "pow(t, 0.0)": lambda t: pow(t, 0.0),
    "np.power(t, 0.0)": lambda t: np.power(t, 0.0),
    "tp.power(t, 0)": lambda t: tp.power(t, 0),
    "0.0 ** t": lambda t: 0.0 ** t,
    "t ** t": lambda t: t ** t,
}
# 0 ** t and t ** t are not differentiable at t = 0 (a jump, a log singularity)
SMOOTH_AT_ZERO = [name for name in POWERS if name not in ("0.0 ** t", "t ** t")]
STEP = 1e-5


def _numpy(name: str, t: float) -> float:
    """The NumPy value of the expression (``np.power`` with float operands)."""
    return float(POWERS[name](np.float64(t)))


def _central(fn, t: float) -> float:
    return (fn(t + STEP) - fn(t - STEP)) / (2 * STEP)


def _first_derivative(name: str, t: float) -> float:
    return _central(lambda s: _numpy(name, s), t)


def _second_derivative(name: str, t: float) -> float:
    return _central(lambda s: _first_derivative(name, s), t)


def _points(name: str) -> list:
    return [0.0, 0.7, 2.0] if name in SMOOTH_AT_ZERO else [0.7, 2.0]


CASES = [(name, t) for name in POWERS for t in _points(name)]


@pytest.mark.parametrize("name,t", CASES)
def test_eager_power_requires_grad_and_backward_matches_finite_differences(name, t):
    x = tp.tensor(t, requires_grad=True)
    y = POWERS[name](x)
    assert y.requires_grad
    assert y.item() == _numpy(name, t)                 # NumPy's value, also 0.0 ** 0 = 1
    y.backward()
    np.testing.assert_allclose(x.grad.item(), _first_derivative(name, t), atol=1e-6)


@pytest.mark.parametrize("name,t", CASES)
def test_eager_second_derivative_matches_finite_differences(name, t):
    x = tp.tensor(t, requires_grad=True)
    (g,) = tp.grad_of(POWERS[name](x), x, create_graph=True)
    (h,) = tp.grad_of(g, x)
    np.testing.assert_allclose(g.item(), _first_derivative(name, t), atol=1e-6)
    np.testing.assert_allclose(h.item(), _second_derivative(name, t), atol=1e-3)


@pytest.mark.parametrize("name,t", CASES)
def test_traced_first_and_second_derivative_match_finite_differences(name, t):
    x = tp.input(())
    y = POWERS[name](x)
    g = tp.ad.grad(y, x)
    h = tp.ad.grad(g, x)
    value, first, second = tp.compile([y, g, h], inputs=[x])(np.float64(t))
    assert float(value) == _numpy(name, t)
    np.testing.assert_allclose(first, _first_derivative(name, t), atol=1e-6)
    np.testing.assert_allclose(second, _second_derivative(name, t), atol=1e-3)


@pytest.mark.parametrize("name", ["t ** 0.0", "t ** 0", "np.power(t, 0.0)"])
def test_zero_exponent_forward_mode_is_zero_also_at_zero(name):
    _, tangent = tp.jvp(POWERS[name], (np.float64(0.0),), (np.float64(1.0),))
    assert float(tangent) == 0.0
    x = tp.input(())
    (traced,) = tp.ad.jvp(POWERS[name](x), x, 1.0)
    assert float(tp.compile(traced, inputs=[x])(np.float64(0.0))) == 0.0


def test_zero_exponent_of_an_array_keeps_shape_dtype_and_grad():
    x = tp.tensor(np.array([0.0, -1.5, 3.0], dtype=np.float32), requires_grad=True)
    y = x ** 0.0
    assert y.requires_grad and y.dtype == np.float32 and y.shape == (3,)
    np.testing.assert_array_equal(y.numpy(), np.ones(3, np.float32))
    y.sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3, np.float32))

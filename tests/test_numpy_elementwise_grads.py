"""Gradients of the elementwise family where NumPy's function has no derivative (ties,
bounds, kinks, jumps, 0 ** 0, sinc at 0): the documented choice, the same in eager,
traced and function-transform modes; ``stop_gradient``; and losses written with plain
``np.`` functions, checked against finite differences in every mode."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad.testing import numerical_gradient

from modes import GRAD_MODES, grad_in


def gradient(mode, loss, a):
    """``modes.grad_in``, with an eager ``.grad`` left ``None`` (no gradient reached the
    leaf) read as zeros."""
    a = np.asarray(a, float)
    g = grad_in(mode, loss, a)
    return np.zeros_like(a) if g.dtype == object else g


def assert_grad(loss, a, expected, modes=GRAD_MODES, rtol=1e-12):
    for mode in modes:
        np.testing.assert_allclose(gradient(mode, loss, a), expected, rtol=rtol,
                                   atol=rtol, err_msg=mode)


# ------------------------------------------------------------------ the chosen subgradients

def test_maximum_minimum_split_ties_evenly():
    a = np.array([1.0, 2.0, 3.0])
    other = np.array([1.0, 5.0, 0.0])
    for name in ("maximum", "minimum", "fmax", "fmin"):
        f = getattr(np, name)
        picks_a = (a > other) if "max" in name else (a < other)
        expected = np.where(a == other, 0.5, picks_a.astype(float))
        assert_grad(lambda x: f(x, other).sum(), a, expected)
        assert_grad(lambda y: f(a, y).sum(), other, 1.0 - expected)
    assert_grad(lambda x: np.maximum(x, x).sum(), a, np.ones(3))     # both shares


def test_clip_passes_the_derivative_to_a_at_the_bounds():
    a = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    assert_grad(lambda x: np.clip(x, -1.0, 1.0).sum(), a, [0, 1, 1, 1, 0])
    lo, hi = np.array([-1.0] * 5), np.array([1.0] * 5)
    assert_grad(lambda v: np.clip(a, v, hi).sum(), lo, [1, 0, 0, 0, 0])
    assert_grad(lambda v: np.clip(a, lo, v).sum(), hi, [0, 0, 0, 0, 1])
    assert_grad(lambda v: np.clip(a, v + 3.0, hi).sum(), lo, np.zeros(5))  # crossed bounds


def test_abs_sign_copysign_at_zero_have_derivative_zero():
    a = np.array([-1.5, 0.0, 2.0])
    assert_grad(lambda x: np.abs(x).sum(), a, [-1, 0, 1])
    assert_grad(lambda x: np.fabs(x).sum(), a, [-1, 0, 1])
    assert_grad(lambda x: (np.sign(x) * 3.0).sum(), a, np.zeros(3))
    assert_grad(lambda x: np.copysign(x, -1.0).sum(), a, [1, 0, -1])
    assert_grad(lambda x: np.angle(x).sum(), a, np.zeros(3))


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "rint", "round", "around"])
def test_rounding_has_derivative_zero_also_at_jumps(name):
    a = np.array([-1.5, -1.0, 0.0, 0.5, 2.3])
    f = getattr(np, name)
    assert_grad(lambda x: (f(x) * x).sum(), a, f(a))
    assert_grad(lambda x: (x // 0.5).sum(), a, np.zeros(5))


def test_remainders_in_the_divisor_are_minus_the_quotient():
    x, y = np.array([7.0, -7.0, 6.0, 1.0]), np.array([2.0, 2.0, 3.0, 0.1])
    assert_grad(lambda v: np.remainder(x, v).sum(), y, -np.floor_divide(x, y))
    assert_grad(lambda v: np.fmod(x, v).sum(), y, [-3, 3, -2, -9])   # 1 = 9 * 0.1 + 0.0999...
    assert_grad(lambda v: (v % y).sum(), x, np.ones(4))
    smooth = np.array([7.3, -6.1, 5.5])
    for f in (np.remainder, np.fmod):
        assert_grad(lambda v: f(smooth, v).sum(), y[:3], numerical_gradient(
            lambda v: f(smooth, v).sum(), y[:3]), rtol=1e-7)


def test_where_differentiates_the_selected_operand_only():
    a = np.array([-1.0, 2.0, 0.5])
    assert_grad(lambda x: np.where(x > 0, x * x, 3.0 * x).sum(), a, [3.0, 4.0, 1.0])
    assert_grad(lambda x: np.where(x > 0, 0.0, x).sum(), a, [1.0, 0.0, 0.0])


def test_where_condition_gets_no_gradient():
    """A floating condition is tested for non-zero: no derivative flows into it."""
    a = np.array([0.0, 2.0, -1.0])
    assert_grad(lambda c: tnp.where(c, 2.0 * c, 3.0).sum(), a, [0.0, 2.0, 2.0])


def test_heaviside_nan_to_num_at_their_special_points():
    a = np.array([-1.0, 0.0, 2.0])
    h0 = np.array([0.3, 0.4, 0.5])
    assert_grad(lambda v: np.heaviside(a, v).sum(), h0, [0, 1, 0])
    assert_grad(lambda x: np.heaviside(x, h0).sum(), a, np.zeros(3))
    b = np.array([1.0, np.inf, -2.0])
    assert_grad(lambda x: np.nan_to_num(x * 1.0).sum(), b, [1, 0, 1])


def test_hypot_arctan2_at_the_origin_have_derivative_zero():
    a = np.array([0.0, 3.0])
    assert_grad(lambda x: np.hypot(x, np.array([0.0, 4.0])).sum(), a, [0, 0.6])
    assert_grad(lambda x: np.arctan2(x, np.array([0.0, 4.0])).sum(), a, [0, 4 / 25])
    assert_grad(lambda x: np.arctan2(np.array([0.0, 4.0]), x).sum(), a, [0, -4 / 25])


@pytest.mark.filterwarnings("ignore:invalid value")     # -inf - -inf, then masked out
def test_logaddexp_ties_and_infinities():
    a = np.array([-np.inf, -np.inf, 0.0, 1.0])
    b = np.array([-np.inf, 0.0, 0.0, np.log(3.0)])
    assert_grad(lambda x: np.logaddexp(x, b).sum(), a, [0.5, 0, 0.5, np.e / (np.e + 3)])
    assert_grad(lambda x: np.logaddexp2(x, b).sum(), a, [0.5, 0, 0.5, 2 / (2 + 2 ** b[3])])


def test_power_at_zero():
    zeros = np.zeros(4)
    exponents = np.arange(4.0)
    assert_grad(lambda x: (x ** exponents).sum(), zeros, [0, 1, 0, 0])
    assert_grad(lambda x: (x ** np.arange(4)).sum(), zeros, [0, 1, 0, 0])
    assert_grad(lambda y: (zeros ** y).sum(), np.array([0.5, 1.0, 2.0, 3.0]), np.zeros(4))
    base = np.array([0.5, 2.0, 3.0])
    assert_grad(lambda y: (base ** y).sum(), np.array([1.0, 0.0, 2.0]),
                base ** np.array([1.0, 0.0, 2.0]) * np.log(base))
    assert_grad(lambda y: (2.0 ** y).sum(), np.array([1.0, 3.0]), 2.0 ** np.array([1, 3.0])
                * np.log(2.0))


def test_sinc_is_exact_to_second_order_at_zero():
    a = np.array([0.0, 0.5])
    assert_grad(lambda x: np.sinc(x).sum(), a, [0.0, -4 / np.pi])
    second = [-math.pi ** 2 / 3, 16 / math.pi - 2 * math.pi]       # d2 sinc at 0, 1/2
    x = tp.input((2,))
    g = tp.ad.grad(tnp.sinc(x).sum(), x)
    np.testing.assert_allclose(tp.evaluate(tp.ad.grad(g.sum(), x), {x: a}), second, rtol=1e-12)
    h = tp.grad(lambda v: tp.grad(lambda w: tnp.sinc(w).sum())(v).sum())(a)
    np.testing.assert_allclose(h, second, rtol=1e-12)


# ------------------------------------------------------------------ stop_gradient

def test_stop_gradient_has_derivative_zero_in_every_mode():
    a = np.array([0.5, -1.5, 2.0])
    assert_grad(lambda x: (x * tp.stop_gradient(x)).sum(), a, a)
    assert_grad(lambda x: (tp.stop_gradient(np.exp(x)) + x).sum(), a, np.ones(3))
    _, tangent = tp.jvp(lambda x: x * tp.stop_gradient(x), (a,), (np.ones(3),))
    np.testing.assert_allclose(tangent, a)
    x = tp.input((3,))
    g = tp.ad.grad((x * x * tp.stop_gradient(x)).sum(), x)
    hessian_diag = tp.ad.grad(g.sum(), x)
    np.testing.assert_allclose(tp.evaluate(hessian_diag, {x: a}), 2 * a)


def test_no_rule_past_a_stop_gradient_is_asked_for_a_cotangent():
    """What lies past a stop_gradient does not depend differentiably on its input: the
    reverse sweeps skip it (counted by the engine, exactly), so a rule that cannot
    differentiate (and says so) is never asked there, and the gradient is unchanged."""
    a = np.array([0.5, -1.5, 2.0])

    def loss(x):
        y = tp.stop_gradient(x)
        for _ in range(50):
            y = tp.sin(y)
        return tp.sum(y * x)

    expected = np.sin(a)
    for _ in range(49):
        expected = np.sin(expected)
    x = tp.tensor(a, requires_grad=True)
    out = loss(x)
    tp.reset_counters()
    out.backward()
    assert tp.counters()["eager_swept"] == 2               # the sum and the product
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-14)
    (gy,) = tp.grad_of([loss(x)], [x])
    np.testing.assert_allclose(gy.numpy(), expected, rtol=1e-14)
    xs = tp.input((3,))
    tp.reset_counters()
    g = tp.ad.grad(loss(xs), xs)
    assert tp.counters()["rules_applied"] == 2
    np.testing.assert_allclose(tp.evaluate(g, {xs: a}), expected, rtol=1e-14)


_UNARY = (tp.sin, lambda x: tp.exp(x * 0.3), lambda x: x * x, lambda x: tp.tanh(x) + x)
_BINARY = (lambda a, b: a * b, lambda a, b: a - 0.5 * b, lambda a, b: tp.sin(a) * tp.cos(b))


def _random_program(rng: np.random.Generator, n_ops: int) -> list:
    """Lines ``(kind, op, operands)`` over two inputs: unary, binary, or a stop_gradient."""
    lines = []
    for i in range(n_ops):
        kind = rng.choice(["unary", "binary", "stop"], p=[0.4, 0.4, 0.2])
        size = len(_UNARY) if kind == "unary" else len(_BINARY)
        lines.append((kind, int(rng.integers(size)), rng.integers(i + 2, size=2).tolist()))
    return lines


def _run_program(lines, x, y, held=None):
    """The program's loss; with ``held`` (a list), each stop_gradient line is either
    recorded into it (first run, arrays) or replaced by its recorded value."""
    values, stops = [x, y], 0
    for kind, op, (i, j) in lines:
        if kind == "unary":
            values.append(_UNARY[op](values[i]))
        elif kind == "binary":
            values.append(_BINARY[op](values[i], values[j]))
        elif held is not None and stops < len(held):
            values.append(held[stops])
            stops += 1
        else:
            values.append(tp.stop_gradient(values[i]))
            if held is not None:
                held.append(np.asarray(values[-1]))
                stops += 1
    return tp.sum(values[-1] * values[-1]) + tp.sum(values[-2]) + tp.sum(x * y)


def test_stop_gradient_in_random_programs_equals_its_value_held_constant():
    """Random programs with stop_gradient lines: the gradient (eager function transform,
    tp.jit, traced tp.ad.grad, Tensor.backward) and the Hessian-vector product equal
    those of the same program with each stopped value replaced by a constant."""
    for seed in range(40):
        rng = np.random.default_rng(seed)
        lines = _random_program(rng, int(rng.integers(3, 12)))
        x, y, v = rng.standard_normal((3, 3))
        held = []
        _run_program(lines, x, y, held)                   # records the stopped values
        loss = lambda x, y: _run_program(lines, x, y)
        constant = lambda x, y: _run_program(lines, x, y, list(held))
        expected = tp.grad(constant)(x, y)
        a = tp.tensor(x, requires_grad=True)
        loss(a, y).backward()
        xs = tp.input((3,))
        traced = tp.ad.grad(loss(xs, y), xs)
        got = {"grad": tp.grad(loss)(x, y), "jit": tp.jit(tp.grad(loss))(x, y),
               "backward": a.grad.numpy(), "traced": tp.evaluate(traced, {xs: x})}
        for route, gradient in got.items():
            np.testing.assert_allclose(gradient, expected, rtol=1e-12, atol=1e-12,
                                       err_msg=f"seed {seed}, {route}")
        hvp = tp.jvp(lambda x: tp.grad(loss)(x, y), (x,), (v,))[1]
        np.testing.assert_allclose(hvp, tp.jvp(lambda x: tp.grad(constant)(x, y), (x,), (v,))[1],
                                   rtol=1e-10, atol=1e-10, err_msg=f"seed {seed}")


def test_stop_gradient_of_plain_values_is_the_value():
    a = np.arange(3.0)
    assert tp.stop_gradient(a) is a
    assert tp.stop_gradient(2.5) == 2.5


# ------------------------------------------------------------------ losses written with np.

LOSSES = {
    "softplus": lambda x: np.logaddexp(0.0, x).sum(),
    "log_cosh": lambda x: np.log(np.cosh(x)).sum(),
    "huber": lambda x: np.where(np.abs(x) < 1.0, 0.5 * x ** 2, np.abs(x) - 0.5).sum(),
    "relu_square": lambda x: (np.maximum(x, 0.0) ** 2).sum(),
    "clipped": lambda x: (np.clip(x, -1.0, 1.0) * np.sin(x)).sum(),
    "entropy": lambda x: -(np.exp(x) / np.exp(x).sum() * np.log1p(np.exp(x))).sum(),
    "angles": lambda x: (np.arctan2(x, 1.5 + x * x) + np.hypot(x, 2.0)).sum(),
    "inverse_trig": lambda x: (np.arcsin(np.tanh(x) * 0.5) + np.arctan(x)).sum(),
    "hyperbolic": lambda x: (np.arcsinh(x) * np.tanh(x) + np.arccosh(2.0 + x * x)).sum(),
    "power_tower": lambda x: (np.abs(x) + 0.5) ** np.cos(x),
    "exp2_log2": lambda x: (np.exp2(x) * np.log2(2.0 + x * x) - np.log10(1.5 + np.square(x))),
    "expm1_cbrt": lambda x: np.expm1(x * 0.1) * np.cbrt(x + 5.0),
    "sinc_degrees": lambda x: np.sinc(x) + np.deg2rad(np.rad2deg(x))
    * np.reciprocal(2.0 + x ** 2),
    "remainder_phase": lambda x: np.sin(2 * np.pi * np.mod(x, 1.0)) + np.fmod(x, 3.0) * 0.1,
    "float_power": lambda x: np.float_power(1.0 + x * x, 1.5) + np.fmin(x, np.fmax(x, -0.5)),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_numpy_written_losses_match_finite_differences(name):
    loss = LOSSES[name]
    total = lambda x: np.sum(loss(x))    # noqa: E731
    a = np.array([-1.3, -0.4, 0.35, 0.8, 1.7])
    expected = numerical_gradient(total, a)
    assert_grad(total, a, expected, rtol=1e-6)

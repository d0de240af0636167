"""Elementwise arithmetic and functions compute what NumPy computes, in every mode
(``modes.check_modes``): binary operators, negation, powers, the unary functions (also on
Python scalars and ndarrays), conj/real/imag, ``scale``.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp

from modes import TENSOR_MODES, check_modes
from surface_cases import BINARY, DTYPES, rand


# ------------------------------------------------------------------ arithmetic

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_same_shape(op, dtype):
    check_modes(BINARY[op], rand((3, 4), dtype, 1), rand((3, 4), dtype, 2, positive=True))


@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_with_itself(dtype):
    a = rand((2, 3), dtype, 3, positive=True)
    check_modes(lambda x: x * x - x / x + x, a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_negative(dtype):
    check_modes(lambda x: -x, rand((3, 4), dtype, 4))
    check_modes(lambda x: -(-x) + (-x), rand((3,), dtype, 5))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("exponent", [2, 3, -1, 0, 1, 0.5, 2.5, -1.5, 2.0])
def test_power_scalar_exponent(exponent, dtype):
    check_modes(lambda x: x ** exponent, rand((3, 4), dtype, 6, positive=True))


def test_power_function_form():
    a = rand((4,), seed=7, positive=True)
    check_modes(lambda x: tp.power(x, 3), a, ref=lambda x: np.power(x, 3))
    check_modes(lambda x: tp.power(x, 0.25), a, ref=lambda x: np.power(x, 0.25))


def test_power_of_zero_dim():
    check_modes(lambda x: x ** 2, np.array(1.7))


# ------------------------------------------------------------------ elementwise functions

UNARY = {
    "exp": (tp.exp, np.exp, False),
    "log": (tp.log, np.log, True),
    "sqrt": (tp.sqrt, np.sqrt, True),
    "abs": (tp.abs, np.abs, False),
    "sin": (tp.sin, np.sin, False),
    "cos": (tp.cos, np.cos, False),
    "tanh": (tp.tanh, np.tanh, False),
    "conj": (tp.conj, np.conj, False),
    "real": (tp.real, np.real, False),
    "imag": (tp.imag, np.imag, False),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions(name, dtype):
    fn, ref, positive = UNARY[name]
    check_modes(fn, rand((3, 4), dtype, 27, positive=positive), ref=ref)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("value", [0.7, 2, 1.5 + 0.5j])
def test_unary_functions_on_python_scalars(name, value):
    fn, ref, _ = UNARY[name]
    expected = ref(value)
    got = fn(value)
    assert type(got) is type(expected), (type(got), type(expected))
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(got, expected, rtol=1e-15)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions_on_ndarrays_return_ndarrays(name):
    fn, ref, _ = UNARY[name]
    for a in (rand((2, 3), "float64", 28, positive=True), rand((4,), "complex128", 29)):
        got = fn(a)
        assert type(got) is np.ndarray
        assert got.dtype == ref(a).dtype
        np.testing.assert_allclose(got, ref(a), rtol=1e-15)


@pytest.mark.parametrize("dtype", DTYPES)
def test_abs_via_builtin(dtype):
    check_modes(lambda x: abs(x), rand((2, 3), dtype, 30))


@pytest.mark.parametrize("dtype", DTYPES)
def test_conj_real_imag_methods(dtype):
    a = rand((3, 2), dtype, 31)
    check_modes(lambda x: x.conj(), a)
    check_modes(lambda x: x.real, a)
    check_modes(lambda x: x.imag, a)
    check_modes(lambda x: x.real * 2.0 - x.imag, a)
    check_modes(lambda x: (x * x.conj()).real, a)


def test_real_imag_of_real_input_are_numpy_like():
    a = rand((3,), "float32", 32)
    check_modes(lambda x: x.imag + 1.0, a)          # zeros of x's dtype
    check_modes(lambda x: x.real * 3.0, a)


def test_composite_expression():
    a, b = rand((3, 4), seed=33, positive=True), rand((4,), seed=34)
    check_modes(lambda x, y: tp.exp(-x) * tp.sin(y) + tp.log(x) / tp.sqrt(x) - tp.tanh(x * y),
                a, b,
                ref=lambda x, y: np.exp(-x) * np.sin(y) + np.log(x) / np.sqrt(x)
                - np.tanh(x * y))


# ------------------------------------------------------------------ scale_real / scale

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("factor", [0.5, -2.0, 3, 1.0])
def test_scale_real(factor, dtype):
    a = rand((3, 4), dtype, 35)
    check_modes(lambda x: x.scale_real(factor), a, ref=lambda x: x * factor, modes=TENSOR_MODES)
    check_modes(lambda x: tp.scale(x, factor), a, ref=lambda x: x * factor)


def test_scale_real_equals_multiplication_node():
    x = tp.input((3, 3))
    assert x.scale_real(0.5) is x.scale_real(0.5)
    a = rand((3, 3), seed=36)
    np.testing.assert_allclose(tp.evaluate(((x * x).scale_real(0.5)).sum(), {x: a}),
                               ((a * a) * 0.5).sum(), rtol=1e-12)

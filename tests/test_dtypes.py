"""dtype promotion follows NumPy 2 (NEP 50: Python scalars are weak) in every mode;
``tp.tensor``'s dtype argument; ``tp.ones``/``tp.zeros``.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp

from modes import check_modes
from surface_cases import rand


# ------------------------------------------------------------------ dtype promotion (NEP 50)

F32 = lambda shape=(2, 3), seed=50: rand(shape, "float32", seed, positive=True)  # noqa: E731
F64 = lambda shape=(2, 3), seed=51: rand(shape, "float64", seed, positive=True)  # noqa: E731
C128 = lambda shape=(2, 3), seed=52: rand(shape, "complex128", seed)              # noqa: E731
C64 = lambda shape=(2, 3), seed=53: rand(shape, "complex64", seed)                # noqa: E731

PROMOTION = {
    "f32*0.5": (lambda x: x * 0.5, F32, "float32"),
    "0.5*f32": (lambda x: 0.5 * x, F32, "float32"),
    "f32*1j": (lambda x: x * 1j, F32, "complex64"),
    "1j*f32": (lambda x: 1j * x, F32, "complex64"),
    "f32+1j": (lambda x: x + 1j, F32, "complex64"),
    "f32+2": (lambda x: x + 2, F32, "float32"),
    "f32/2": (lambda x: x / 2, F32, "float32"),
    "2.0-f32": (lambda x: 2.0 - x, F32, "float32"),
    "f32**2": (lambda x: x ** 2, F32, "float32"),
    "f32**0.5": (lambda x: x ** 0.5, F32, "float32"),
    "exp(f32)": (lambda x: tp.exp(x), F32, "float32"),
    "sum(f32)": (lambda x: x.sum(), F32, "float32"),
    "f32+f64arr": (lambda x: x + F64(), F32, "float64"),
    "f64arr+f32": (lambda x: F64() + x, F32, "float64"),
    "f32*f64scalar": (lambda x: x * np.float64(2.0), F32, "float64"),
    "f32+intarr": (lambda x: x + np.arange(3), F32, "float64"),
    "f32+f32arr": (lambda x: x + F32(seed=54), F32, "float32"),
    "f32@f64arr": (lambda x: x @ F64((3, 2)), F32, "float64"),
    "f32+c128arr": (lambda x: x + C128(), F32, "complex128"),
    "f32*c64arr": (lambda x: x * C64(), F32, "complex64"),
    "f64+c128arr": (lambda x: x + C128(), F64, "complex128"),
    "c128arr-f64": (lambda x: C128() - x, F64, "complex128"),
    "f64*c64arr": (lambda x: x * C64(), F64, "complex128"),
    "f64*1j": (lambda x: x * 1j, F64, "complex128"),
    "f64+f32arr": (lambda x: x + F32(), F64, "float64"),
    "c128*0.5": (lambda x: x * 0.5, C128, "complex128"),
    "abs(c128)": (lambda x: tp.abs(x), C128, "float64"),
    "c128.real": (lambda x: x.real, C128, "float64"),
    "abs(c64)": (lambda x: tp.abs(x), C64, "float32"),
    "c64+f64arr": (lambda x: x + F64(), C64, "complex128"),
    "einsum f32,c128": (lambda x: tp.einsum("ij,kj->ik", x, C128()), F32, "complex128"),
    "tensordot f32,f64": (lambda x: tp.tensordot(x, F64(), 2), F32, "float64"),
}


@pytest.mark.parametrize("case", sorted(PROMOTION))
def test_dtype_promotion(case):
    fn, make, dtype = PROMOTION[case]
    expected = check_modes(fn, make())
    assert expected.dtype == np.dtype(dtype), "the NumPy reference itself changed"


def test_promotion_between_two_tensors():
    a, b = F32(), C128()
    check_modes(lambda x, y: x * y, a, b)
    check_modes(lambda x, y: x + y, F32(), F64())
    check_modes(lambda x, y: y - x, F64(), C64())
    check_modes(lambda x, y: x @ y.T, F32(), F64())


def test_tp_tensor_dtype_argument():
    t = tp.tensor([1.0, 2.0], dtype="float32")
    assert t.dtype == np.float32
    assert (t * 0.5).dtype == np.float32
    assert (t * 1j).dtype == np.complex64
    t = tp.tensor([1, 2])
    assert t.dtype == np.float64
    t = tp.tensor(1.5)
    assert t.shape == () and t.dtype == np.float64


# ------------------------------------------------------------------ constructors

@pytest.mark.parametrize("shape", [(2, 3), (), (4,), 3])
@pytest.mark.parametrize("dtype", [None, "float64", "float32", "complex128", np.complex64])
def test_ones_zeros(shape, dtype):
    kwargs = {} if dtype is None else {"dtype": dtype}
    for fn, ref in ((tp.ones, np.ones), (tp.zeros, np.zeros)):
        got = fn(shape, **kwargs)
        expected = ref(shape, **kwargs)
        assert type(got) is np.ndarray
        assert got.dtype == expected.dtype
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


def test_ones_zeros_mix_into_every_mode():
    a = rand((2, 3), seed=84)
    check_modes(lambda x: x + tp.ones((2, 3)) - tp.zeros((3,)), a,
                ref=lambda x: x + np.ones((2, 3)) - np.zeros((3,)))
    check_modes(lambda x: x * tp.ones((2, 3), "float32"), rand((2, 3), "float32", 85))
    check_modes(lambda x: x + tp.zeros((2, 3), "complex128"), a)

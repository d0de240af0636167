"""Transpose, reshape and the reductions (``sum``, ``max``) compute what NumPy computes,
in every mode.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp

from modes import check_modes
from surface_cases import DTYPES, rand


# ------------------------------------------------------------------ transpose / reshape

@pytest.mark.parametrize("dtype", DTYPES)
def test_T(dtype):
    check_modes(lambda x: x.T, rand((3, 4), dtype, 13))
    check_modes(lambda x: x.T, rand((2, 3, 4), dtype, 14))
    check_modes(lambda x: x.T, rand((5,), dtype, 15))


@pytest.mark.parametrize("axes", [(1, 0, 2), (2, 0, 1), (0, 1, 2), (-1, 0, 1), (2, 1, 0)])
def test_transpose_varargs_and_tuple(axes):
    a = rand((2, 3, 4), seed=16)
    check_modes(lambda x: x.transpose(*axes), a, ref=lambda x: x.transpose(*axes))
    check_modes(lambda x: x.transpose(axes), a, ref=lambda x: x.transpose(axes))
    check_modes(lambda x: tp.transpose(x, axes), a, ref=lambda x: np.transpose(x, axes))


def test_transpose_default_reverses():
    a = rand((2, 3, 4), seed=17)
    check_modes(lambda x: x.transpose(), a)
    check_modes(lambda x: tp.transpose(x), a, ref=np.transpose)


@pytest.mark.parametrize("shape", [(6, 4), (24,), (-1,), (4, -1), (2, -1, 3), (2, 3, 2, 2),
                                   (1, 24, 1), (-1, 1)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_tuple(shape, dtype):
    check_modes(lambda x: x.reshape(shape), rand((2, 3, 4), dtype, 18))


def test_reshape_varargs_and_function():
    a = rand((2, 3, 4), seed=19)
    check_modes(lambda x: x.reshape(6, 4), a)
    check_modes(lambda x: x.reshape(-1, 12), a)
    check_modes(lambda x: x.reshape(24), a)
    check_modes(lambda x: x.reshape(-1), a)
    check_modes(lambda x: tp.reshape(x, (4, 6)), a, ref=lambda x: np.reshape(x, (4, 6)))
    check_modes(lambda x: tp.reshape(x, -1), a, ref=lambda x: np.reshape(x, -1))


def test_reshape_scalar_and_to_scalar():
    check_modes(lambda x: x.reshape(1, 1), np.array(2.5))
    check_modes(lambda x: x.reshape(()), rand((1, 1), seed=20))


def test_reshape_transpose_chain():
    a = rand((2, 3, 4, 5), seed=21)
    check_modes(lambda x: x.transpose(1, 2, 0, 3).reshape(12, 10).T, a)


# ------------------------------------------------------------------ reductions

@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_all(dtype):
    r = check_modes(lambda x: x.sum(), rand((3, 4), dtype, 22))
    assert r.shape == ()
    check_modes(lambda x: tp.sum(x), rand((2, 3, 4), dtype, 23), ref=np.sum)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, (0, 2), (2, 0), (-1, -2), None, (0, 1, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_axis(axis, keepdims, dtype):
    a = rand((2, 3, 4), dtype, 24)
    check_modes(lambda x: x.sum(axis=axis, keepdims=keepdims), a)
    check_modes(lambda x: tp.sum(x, axis=axis, keepdims=keepdims), a,
                ref=lambda x: np.sum(x, axis=axis, keepdims=keepdims))


def test_sum_of_zero_dim():
    check_modes(lambda x: x.sum(), np.array(3.5))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_max_all(dtype):
    a = rand((3, 4), dtype, 25)
    check_modes(lambda x: x.max(), a)
    check_modes(lambda x: tp.amax(x), a, ref=np.amax)
    check_modes(lambda x: tp.max(x), a, ref=np.max)


@pytest.mark.parametrize("axis", [0, 1, -1, (0, 2), None])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_max_axis(axis, keepdims, dtype):
    a = rand((2, 3, 4), dtype, 26)
    check_modes(lambda x: x.max(axis=axis, keepdims=keepdims), a)
    check_modes(lambda x: tp.amax(x, axis=axis, keepdims=keepdims), a,
                ref=lambda x: np.amax(x, axis=axis, keepdims=keepdims))


def test_max_with_ties_and_negatives():
    a = np.array([[-3.0, -1.0, -1.0], [-7.0, -8.0, -2.0]])
    check_modes(lambda x: x.max(axis=1), a)
    check_modes(lambda x: x.max(), a)

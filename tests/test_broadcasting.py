"""Broadcasting, explicit (``broadcast_in_dim``) and implicit (NumPy's rules), and operands
of every kind mixed: Python and NumPy scalars, ndarrays on either side, eager tensors with
ndarrays, traced with eager tensors.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp

from modes import TENSOR_MODES, assert_matches, check_modes
from surface_cases import BINARY, DTYPES, rand


# ------------------------------------------------------------------ broadcast_in_dim

BROADCAST_IN_DIM = [
    ((3,), (2, 3), (1,), lambda x: np.broadcast_to(x, (2, 3))),
    ((3,), (3, 4), (0,), lambda x: np.broadcast_to(x[:, None], (3, 4))),
    ((2, 1), (2, 4, 3), (0, 2), lambda x: np.broadcast_to(x[:, None, :], (2, 4, 3))),
    ((), (2, 2), (), lambda x: np.broadcast_to(x, (2, 2))),
    ((2, 3), (2, 5, 3), (0, 2), lambda x: np.broadcast_to(x[:, None, :], (2, 5, 3))),
    ((2, 3), (2, 3), (0, 1), lambda x: x),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(BROADCAST_IN_DIM)))
def test_broadcast_in_dim(case, dtype):
    shape, out_shape, dims, ref = BROADCAST_IN_DIM[case]
    a = rand(shape, dtype, 37)
    check_modes(lambda x: tp.broadcast_in_dim(x, out_shape, dims), a,
                ref=lambda x: np.array(ref(x)))
    check_modes(lambda x: x.broadcast_in_dim(out_shape, dims), a,
                ref=lambda x: np.array(ref(x)), modes=TENSOR_MODES)


# ------------------------------------------------------------------ implicit broadcasting

BROADCAST_PAIRS = [((3, 1), (4,)), ((3, 1), (1, 4)), ((2, 1, 4), (3, 1)), ((3, 4), (4,)),
                   ((4,), (3, 4)), ((), (3,)), ((3,), ()), ((1,), (2, 3)), ((2, 3), (1, 1))]


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("sa,sb", BROADCAST_PAIRS, ids=[f"{a}{b}" for a, b in BROADCAST_PAIRS])
def test_binary_broadcasting(op, sa, sb):
    check_modes(BINARY[op], rand(sa, seed=38), rand(sb, seed=39, positive=True))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scalar", [2.5, 3, -1, 0.5j])
def test_python_scalar_both_sides(scalar, dtype):
    a = rand((2, 3), dtype, 40, positive=True)
    check_modes(lambda x: scalar + x, a)
    check_modes(lambda x: x + scalar, a)
    check_modes(lambda x: x - scalar, a)
    check_modes(lambda x: scalar - x, a)
    check_modes(lambda x: x * scalar, a)
    check_modes(lambda x: scalar * x, a)
    check_modes(lambda x: x / scalar, a)
    check_modes(lambda x: scalar / x, a)


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("shape", [(3, 4), (4,), (3, 1), (1, 4), ()])
def test_ndarray_and_tensor_both_orders(op, shape):
    const = rand(shape, seed=41, positive=True)
    a = rand((3, 4), seed=42, positive=True)
    f = BINARY[op]
    check_modes(lambda x: f(const, x), a)     # ndarray (op) tensor
    check_modes(lambda x: f(x, const), a)     # tensor (op) ndarray


def test_ndarray_matmul_tensor_both_orders():
    const = rand((4, 4), seed=43)
    a = rand((4, 2), seed=44)
    check_modes(lambda x: const @ x, a)
    check_modes(lambda x: x.T @ const, a)


def test_numpy_scalar_operands():
    a = rand((2, 2), seed=45)
    check_modes(lambda x: np.float64(2.0) * x + x * np.float64(0.5), a)
    check_modes(lambda x: x - np.float64(1.5), a)


def test_mixed_eager_operands():
    a, b = rand((3, 1), seed=46), rand((4,), seed=47)
    got = tp.tensor(a) + b
    assert type(got) is tp.Tensor
    assert_matches(np.asarray(got), a + b, "eager tensor + ndarray")
    got = a * tp.tensor(b)
    assert type(got) is tp.Tensor
    assert_matches(np.asarray(got), a * b, "ndarray * eager tensor")


def test_traced_and_eager_mix():
    a, b = rand((3, 4), seed=48), rand((4,), seed=49)
    x = tp.input((3, 4))
    out = x * tp.tensor(b) + tp.tensor(b) * x
    assert type(out) is tp.TracedTensor
    assert_matches(tp.evaluate(out, {x: a}), a * b + b * a, "traced * eager")

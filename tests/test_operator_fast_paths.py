"""The operators' fast paths in the core (+ - * / and unary minus on tensor-tensor,
tensor-scalar and tensor-array pairs) build exactly what the NumPy-style functions build:
the same interned node (traced), the same values and gradients (eager), and they hand every
other case (promotion, broadcasting, integers, complex scalars) to those functions."""
import operator

import numpy as np
import pytest

import tenpy_ad as tp

OPS = {"add": (operator.add, tp.add), "sub": (operator.sub, tp.subtract),
       "mul": (operator.mul, tp.multiply), "div": (operator.truediv, tp.divide)}
F32 = np.float32


def _operands(dtype):
    """(name, operand) pairs meeting a 3x3 tensor of ``dtype``."""
    real = np.dtype(dtype).kind == "f"
    small = np.linspace(0.5, 1.5, 9).reshape(3, 3).astype(dtype)
    frozen = small.copy()
    frozen.flags.writeable = False
    return [("float", 0.5), ("one", 1.0), ("int", 3), ("negative zero", -0.0),
            ("np.float64", np.float64(0.25)), ("np.float32", np.float32(0.25)),
            ("0-d array", np.array(0.75)), ("0-d float32", np.array(0.75, F32)),
            ("small array", small), ("frozen array", frozen),
            ("strided array", np.linspace(1, 2, 18).reshape(3, 6)[:, ::2].astype(dtype)),
            ("broadcast row", np.array([1.0, 2.0, 3.0])), ("bool", True),
            ("complex", 0.5j), ("float64 array", np.full((3, 3), 0.5))][: None if real else -1]


def _same_node(a, b) -> bool:
    """One node, or two new arrays (``copy`` nodes: ``x * 1``) of one node."""
    if a is b:
        return True
    return a.prim.name == b.prim.name == "copy" and a.inputs[0] is b.inputs[0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("op", sorted(OPS))
def test_traced_operators_build_the_functions_nodes(op, dtype):
    operator_fn, function = OPS[op]
    x, other = tp.input((3, 3), dtype=dtype), tp.input((3, 3), dtype=dtype)
    assert operator_fn(x, other) is function(x, other)
    assert operator_fn(x, x) is function(x, x)
    for name, value in _operands(dtype):
        assert _same_node(operator_fn(x, value), function(x, value)), name
        assert _same_node(operator_fn(value, x), function(value, x)), name
    assert -x is tp.negative(x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("op", sorted(OPS))
@np.errstate(divide="ignore", invalid="ignore")          # x / -0.0
def test_eager_operators_match_the_functions(op, dtype):
    operator_fn, function = OPS[op]
    start = (np.arange(9).reshape(3, 3) * 0.1 + 0.3).astype(dtype)
    for name, value in _operands(dtype):
        for first in (True, False):
            grads = []
            for fn in (operator_fn, function):
                t = tp.tensor(start, requires_grad=True)
                y = fn(t, value) if first else fn(value, t)
                (y * y.conj()).real.sum().backward()
                grads.append((y.data, t.grad))
            (v1, g1), (v2, g2) = grads
            assert v1.dtype == v2.dtype, name
            np.testing.assert_array_equal(v1, v2, err_msg=name)
            np.testing.assert_array_equal(g1, g2, err_msg=name)


def test_integer_tensors_keep_numpy_promotion():
    x = tp.input((2,), dtype="int64")
    assert (x * 0.5).dtype == np.float64
    assert (x * 2).dtype == np.int64
    assert (x / x).dtype == np.float64
    assert (x * 0.5) is tp.multiply(x, 0.5)


def test_a_mutated_small_array_is_a_new_constant():
    x = tp.input((3,))
    c = np.array([1.0, 2.0, 3.0])
    first = x * c
    c[0] = 10.0
    second = x * c
    assert first is not second
    value = np.array([1.0, 1.0, 1.0])
    np.testing.assert_array_equal(tp.evaluate(second, {x: value}), [10.0, 2.0, 3.0])
    np.testing.assert_array_equal(tp.evaluate(first, {x: value}), [1.0, 2.0, 3.0])


def test_a_reshaped_array_with_the_same_bytes_is_a_new_constant():
    x, y = tp.input((2, 3)), tp.input((3, 2))
    c = np.arange(6.0).reshape(2, 3)
    first = x + c
    c.shape = (3, 2)
    assert (y + c).inputs[1].shape == (3, 2)
    assert first.inputs[1].shape == (2, 3)


def test_multiplying_by_one_is_a_new_array_of_the_tensor_for_real_tensors_only():
    """``x * 1`` computes nothing (a ``copy`` of ``x``: a new array, as NumPy's, which a
    write leaves apart from ``x``); complex ``z * 1`` multiplies (0+inf j -> nan+inf j)."""
    x, z = tp.input((2,)), tp.input((2,), dtype="complex128")
    for y in (x * 1.0, 1 * x, x * np.float64(1.0)):
        assert y is not x and y.prim.name == "copy" and y.inputs[0] is x
    assert z * 1.0 is not z and (z * 1.0).prim.name != "copy"

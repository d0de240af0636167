"""Arguments that are "a tensor or a sequence of tensors" and iterating tensors.

``tp.grad_of`` takes ``outputs``, ``inputs`` and ``grad_outputs`` each as one tensor or a
list/tuple, as ``torch.autograd.grad`` does, and returns a tuple with one gradient per
input (also for a single input).  ``tp.ad.vjp/jvp/grad`` and ``tp.compile`` take a single
TracedTensor the same way.  A tensor is never iterated as if it were the list: a 0-d one
used to look empty (so ``grad_of(y, [b])`` returned zeros), and a 1-d one would turn into
its slices.  Iterating or taking ``len()`` of a 0-d tensor is a TypeError, as in NumPy.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ArgumentError, GraphError, TenpyAdError

# ------------------------------------------------------------------ grad_of


def _square_at_half():
    b = tp.tensor(0.5, requires_grad=True)
    return b, b * b                          # dy/db = 2 b = 1


@pytest.mark.parametrize("spell", [
    lambda y, b: tp.grad_of(y, b),
    lambda y, b: tp.grad_of(y, [b]),
    lambda y, b: tp.grad_of([y], b),
    lambda y, b: tp.grad_of((y,), (b,)),
    lambda y, b: tp.grad_of(y, b, tp.tensor(1.0)),
    lambda y, b: tp.grad_of(y, b, 1.0),
    lambda y, b: tp.grad_of(y, b, np.float64(1.0)),
    lambda y, b: tp.grad_of(y, b, [None]),
    lambda y, b: tp.grad_of(y, b, grad_outputs=[np.array(1.0)]),
    lambda y, b: tp.grad_of(y, b, cotangents=1.0),
], ids=["tensor,tensor", "tensor,list", "list,tensor", "tuples", "tensor grad_output",
        "number grad_output", "numpy scalar grad_output", "list of None",
        "grad_outputs=", "cotangents="])
def test_grad_of_takes_a_tensor_or_a_sequence_for_each_argument(spell):
    b, y = _square_at_half()
    result = spell(y, b)
    assert type(result) is tuple and len(result) == 1   # PyTorch: a tuple, one per input
    assert result[0].item() == 1.0


def test_grad_of_a_vector_output_with_a_bare_cotangent():
    b = tp.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    (g,) = tp.grad_of(b * b, b, np.array([1.0, 0.0, 2.0]))
    np.testing.assert_array_equal(g.numpy(), [2.0, 0.0, 12.0])
    (g,) = tp.grad_of(b * b, b, tp.tensor(np.array([1.0, 0.0, 2.0])))
    np.testing.assert_array_equal(g.numpy(), [2.0, 0.0, 12.0])


def test_grad_of_several_inputs_gives_one_gradient_each():
    a, b = tp.tensor(2.0, requires_grad=True), tp.tensor(3.0, requires_grad=True)
    ga, gb = tp.grad_of(a * b, (a, b))
    assert (ga.item(), gb.item()) == (3.0, 2.0)


@pytest.mark.parametrize("call,error,words", [
    (lambda y, b: tp.grad_of(y, b, [1.0, 2.0]), GraphError, ["grad_of", "2", "1"]),
    (lambda y, b: tp.grad_of(y, 0.5), ArgumentError, ["grad_of", "inputs"]),
    (lambda y, b: tp.grad_of(y, [0.5]), ArgumentError, ["grad_of", "inputs", "float"]),
    (lambda y, b: tp.grad_of(y, tp.input(())), ArgumentError, ["grad_of", "TracedTensor"]),
    (lambda y, b: tp.grad_of({"y": y}, b), ArgumentError, ["grad_of", "outputs", "dict"]),
    (lambda y, b: tp.grad_of(y, b, {"y": 1.0}), ArgumentError, ["grad_of", "grad_outputs"]),
    (lambda y, b: tp.grad_of(y, b, 1.0, cotangents=1.0), ArgumentError, ["grad_of", "both"]),
    (lambda y, b: tp.grad_of(y, b, np.ones(2)), tp.errors.ShapeError, ["grad_of", "[2]"]),
    (lambda y, b: tp.grad_of(y, b, 1j), tp.errors.DTypeError, ["grad_of", "complex"]),
])
def test_grad_of_misuse_is_a_clear_error(call, error, words):
    b, y = _square_at_half()
    with pytest.raises(error) as info:
        call(y, b)
    for word in words:
        assert word in str(info.value)


# ------------------------------------------------------------------ traced transforms


def test_ad_vjp_and_jvp_take_single_tensors():
    x = tp.input((3,))
    y = x * x
    ct = np.array([1.0, 0.0, 2.0])
    for result in (tp.ad.vjp(y, x, ct), tp.ad.vjp([y], [x], [ct]), tp.ad.vjp(y, [x], [ct])):
        assert isinstance(result, list) and len(result) == 1
        value = tp.compile(result[0], inputs=x)(np.array([1.0, 2.0, 3.0]))
        np.testing.assert_array_equal(value, [2.0, 0.0, 12.0])
    (tangent,) = tp.ad.jvp(y, x, ct)
    np.testing.assert_array_equal(tp.compile(tangent, x)(np.array([1.0, 2.0, 3.0])),
                                  [2.0, 0.0, 12.0])


def test_ad_grad_of_a_single_placeholder_is_one_tensor():
    x = tp.input((2,))
    g = tp.ad.grad((x * x).sum(), x)
    assert type(g) is tp.TracedTensor
    (listed,) = tp.ad.grad((x * x).sum(), (x,))
    assert listed is g


@pytest.mark.parametrize("call,words", [
    (lambda x, e: tp.ad.grad(x.sum(), e), ["grad", "wrt", "Tensor"]),
    (lambda x, e: tp.ad.vjp(x, e, np.ones(3)), ["vjp", "inputs", "Tensor"]),
    (lambda x, e: tp.ad.vjp(x, x, [np.ones(3), np.ones(3)]), ["vjp", "2 cotangents", "1"]),
    (lambda x, e: tp.ad.jvp(x, x, [np.ones(3)] * 2), ["jvp", "2 tangents", "1"]),
    (lambda x, e: tp.ad.vjp((o for o in [x]), x, np.ones(3)), ["vjp", "generator"]),
    (lambda x, e: tp.ad.vjp(x, x, [np.array(["a", "b", "c"])]), ["vjp", "cotangent 0", "<U1"]),
    (lambda x, e: tp.ad.vjp(x, x, [[[1.0], [2.0, 3.0]]]), ["vjp", "ragged"]),
    (lambda x, e: tp.compile(x, inputs=3), ["compile", "inputs", "int"]),
])
def test_traced_transform_misuse_is_a_clear_error(call, words):
    x, e = tp.input((3,)), tp.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(TenpyAdError) as info:
        call(x, e)
    for word in words:
        assert word in str(info.value)


def test_compile_takes_a_single_placeholder_as_inputs():
    s = tp.input(())
    program = tp.compile(s * 3.0, inputs=s)
    assert float(program(np.float64(2.0))) == 6.0
    v = tp.input((2,))
    assert float(tp.compile(v.sum(), v)(np.array([1.0, 2.0]))) == 3.0


# ------------------------------------------------------------------ iteration and len()


@pytest.fixture(params=["eager", "traced"])
def scalar(request):
    return tp.tensor(2.0) if request.param == "eager" else tp.input(())


def test_iterating_a_0d_tensor_is_a_type_error(scalar):
    with pytest.raises(TypeError) as info:
        list(scalar)
    assert isinstance(info.value, ArgumentError)
    assert "iteration over a 0-d array" in str(info.value)
    with pytest.raises(ArgumentError, match="iteration over a 0-d"):
        iter(scalar)


def test_len_of_a_0d_tensor_is_a_type_error(scalar):
    with pytest.raises(TypeError) as info:
        len(scalar)
    assert isinstance(info.value, ArgumentError)
    assert "len() of unsized object" in str(info.value)


def test_iterating_gives_the_slices_along_the_first_axis():
    data = np.arange(6.0).reshape(3, 2)
    rows = list(tp.tensor(data, requires_grad=True))
    assert len(rows) == 3 and all(r.requires_grad for r in rows)
    np.testing.assert_array_equal(np.stack([r.detach().numpy() for r in rows]), data)
    x = tp.input((3, 2))
    traced_rows = list(x)
    assert [r.shape for r in traced_rows] == [(2,)] * 3
    program = tp.compile(traced_rows, inputs=x)
    np.testing.assert_array_equal(np.stack(program(data)), data)
    assert list(tp.tensor(np.ones((0, 2)))) == []

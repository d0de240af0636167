"""Arrays built from shapes and values: NumPy's own results from numbers, tensors of the
argument's kind from tensors (``full``, the ``*_like`` functions, ``linspace``, eager
``arange``), differentiable in tensor arguments; arguments, dtypes and errors."""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad.errors import ConcretizationError, DTypeError, ShapeError

from modes import ALL_MODES, GRAD_MODES, TENSOR_MODES, check_modes, grad_in, run
from surface_cases import DTYPES, rand

M = rand((3, 4), seed=41)


@pytest.mark.parametrize("call,ref", [
    (lambda: tnp.zeros((2, 3)), lambda: np.zeros((2, 3))),
    (lambda: tnp.ones(4, dtype=np.int32), lambda: np.ones(4, dtype=np.int32)),
    (lambda: tnp.empty((2, 0)), lambda: np.empty((2, 0))),
    (lambda: tnp.eye(3, 4, k=1, dtype=np.complex64), lambda: np.eye(3, 4, 1, np.complex64)),
    (lambda: tnp.identity(3), lambda: np.identity(3)),
    (lambda: tnp.full((2, 2), 1.5), lambda: np.full((2, 2), 1.5)),
    (lambda: tnp.full(3, [1, 2, 3], dtype=float), lambda: np.full(3, [1, 2, 3], float)),
    (lambda: tnp.arange(5), lambda: np.arange(5)),
    (lambda: tnp.arange(1.0, 2.0, 0.25), lambda: np.arange(1.0, 2.0, 0.25)),
    (lambda: tnp.linspace(0, 1, 5), lambda: np.linspace(0, 1, 5)),
    (lambda: tnp.zeros_like([1, 2]), lambda: np.zeros_like([1, 2])),
    (lambda: tnp.full_like(M, 2), lambda: np.full_like(M, 2)),
])
def test_from_numbers_numpy_answers(call, ref):
    got, expected = call(), ref()
    assert type(got) is np.ndarray and got.dtype == expected.dtype
    if expected.shape != (2, 0):
        np.testing.assert_array_equal(got, expected)


def test_like_argument_dispatches_to_numpy_results():
    t = tp.tensor(M)
    np.testing.assert_array_equal(np.eye(3, like=t), np.eye(3))
    np.testing.assert_array_equal(np.full(2, 1.5, like=t), np.full(2, 1.5))
    np.testing.assert_array_equal(np.arange(3, like=t), np.arange(3))


# ------------------------------------------------------------------ full and *_like

@pytest.mark.parametrize("dtype", DTYPES)
def test_full_of_a_tensor(dtype):
    a = rand((4,), dtype, seed=42)
    check_modes(lambda x: tnp.full((3, 4), x), a, ref=lambda x: np.full((3, 4), x))
    check_modes(lambda x: tnp.full(2, x[0]), a, ref=lambda x: np.full(2, x[0]))
    check_modes(lambda x: tnp.full((2, 4), x, dtype=np.complex128), a,
                ref=lambda x: np.full((2, 4), x, dtype=np.complex128))


def test_full_gradient_sums_the_broadcast():
    for mode in GRAD_MODES:
        np.testing.assert_allclose(
            grad_in(mode, lambda x: (tnp.full((3, 2), x) * M[:, :2]).sum(), M[0, :2]),
            M[:, :2].sum(0))
    with pytest.raises(ShapeError, match="cannot be broadcast"):
        tnp.full((3, 2), tp.input((3,)))


@pytest.mark.parametrize("name,args", [
    ("zeros_like", ()), ("ones_like", ()), ("empty_like", ()), ("full_like", (2.5,)),
    ("full_like", (-1,)),
])
@pytest.mark.parametrize("kwargs", [{}, {"dtype": np.complex128}, {"shape": (2, 5)},
                                    {"dtype": "float32", "shape": 3}])
@pytest.mark.parametrize("dtype", DTYPES)
def test_like_functions(name, args, kwargs, dtype):
    a = rand((3, 4), dtype, seed=43)
    # NumPy's empty_like leaves the values undefined; tensors hold zeros
    ref = getattr(np, "zeros_like" if name == "empty_like" else name)
    check_modes(lambda x: getattr(tnp, name)(x, *args, **kwargs), a,
                ref=lambda x: ref(x, *args, **kwargs),
                modes=TENSOR_MODES if name == "empty_like" else ALL_MODES)


def test_like_functions_of_ints_and_bools():
    for value in (tp.tensor(M) > 0, tp.tensor(M).astype("int64")):
        for name in ("zeros_like", "ones_like"):
            got = getattr(tnp, name)(value)
            assert got.dtype == value.dtype and type(got) is tp.Tensor


def test_like_results_do_not_depend_on_the_argument():
    for mode in GRAD_MODES:
        g = grad_in(mode, lambda x: (tnp.zeros_like(x) + tnp.ones_like(x) * x).sum(), M)
        np.testing.assert_array_equal(g, np.ones_like(M))


def test_full_like_with_a_tensor_value():
    check_modes(lambda x: tnp.full_like(x, x[0]), M, ref=lambda x: np.full_like(x, x[0]))
    check_modes(lambda x: tnp.full_like(np.zeros((2, 4)), x[1]), M,
                ref=lambda x: np.full_like(np.zeros((2, 4)), x[1]))
    for mode in GRAD_MODES:
        g = grad_in(mode, lambda v: (tnp.full_like(M, v) * M).sum(), np.array(0.5))
        np.testing.assert_allclose(g, M.sum())


# ------------------------------------------------------------------ linspace

LINSPACE = [
    ((0,), (1,), {}), ((0,), (1,), {"num": 7, "endpoint": False}),
    ((3,), (3,), {"num": 4, "axis": -1}), ((3,), (2, 3), {"num": 5, "axis": 1}),
    ((), (2,), {"num": 2}), ((2,), (), {"num": 1}), ((2,), (), {"num": 0}),
    ((), (), {"num": 6, "dtype": np.float32}), ((4, 1), (3,), {"num": 3, "axis": -2}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("start_shape,stop_shape,kwargs", LINSPACE)
def test_linspace_of_tensors(start_shape, stop_shape, kwargs, dtype):
    start, stop = rand(start_shape, dtype, seed=44), rand(stop_shape, dtype, seed=45)
    if dtype.startswith("complex") and "dtype" in kwargs:
        with pytest.raises(DTypeError, match="imaginary part"):   # NumPy drops it, warning
            tnp.linspace(tp.tensor(start), tp.tensor(stop), **kwargs)
        return
    check_modes(lambda a, b: tnp.linspace(a, b, **kwargs), start, stop,
                ref=lambda a, b: np.linspace(a, b, **kwargs))
    check_modes(lambda a: tnp.linspace(a, 2.5, **kwargs), start,
                ref=lambda a: np.linspace(a, 2.5, **kwargs))


def test_linspace_ends_exactly_at_stop_and_returns_the_step():
    for mode in TENSOR_MODES:
        y, step = run(lambda a, b: tnp.linspace(a, b, 7, retstep=True), mode,
                      np.array(0.1), np.array(0.7))
        assert y[-1] == 0.7 and y[0] == 0.1
        np.testing.assert_allclose(step, 0.1, rtol=1e-14)
    y, step = tnp.linspace(tp.tensor(1.0), 2.0, 1, retstep=True)
    assert np.isnan(step) and np.asarray(y) == 1.0


def test_linspace_gradient_in_the_endpoints():
    weights = rand((5,), seed=46)
    ramp = np.arange(5) / 4
    for mode in GRAD_MODES:
        g0 = grad_in(mode, lambda a: (tnp.linspace(a, 3.0, 5) * weights).sum(), np.array(1.0))
        g1 = grad_in(mode, lambda b: (tnp.linspace(1.0, b, 5) * weights).sum(), np.array(3.0))
        np.testing.assert_allclose(g0, (weights * (1 - ramp)).sum(), rtol=1e-13)
        np.testing.assert_allclose(g1, (weights * ramp).sum(), rtol=1e-13)


def test_linspace_errors():
    with pytest.raises(ValueError, match="non-negative"):
        tnp.linspace(tp.input(()), 1.0, -1)
    with pytest.raises(DTypeError, match="int64"):
        tnp.linspace(tp.tensor(0.0), 4.0, 5, dtype=np.int64)
    with pytest.raises(TypeError):
        tnp.linspace(tp.tensor(0.0), 4.0, 2.5)


# ------------------------------------------------------------------ arange

def test_arange_of_eager_tensors_is_differentiable():
    start = tp.tensor(0.5, requires_grad=True)
    step = tp.tensor(0.25, requires_grad=True)
    y = tnp.arange(start, 2.0, step)
    np.testing.assert_allclose(y.numpy(), np.arange(0.5, 2.0, 0.25), rtol=1e-15)
    (y * y).sum().backward()
    values, ramp = np.arange(0.5, 2.0, 0.25), np.arange(6)
    np.testing.assert_allclose(start.grad, 2 * values.sum())
    np.testing.assert_allclose(step.grad, 2 * (values * ramp).sum())
    stop_only = tnp.arange(tp.tensor(4.0))
    assert type(stop_only) is tp.Tensor
    np.testing.assert_array_equal(stop_only, np.arange(4.0))
    ints = tnp.arange(tp.tensor(np.int64(3)).astype("int64"))
    assert ints.dtype == np.int64 and list(np.asarray(ints)) == [0, 1, 2]


def test_arange_of_traced_tensors_is_refused():
    with pytest.raises(ConcretizationError, match="number of entries"):
        tnp.arange(tp.input(()))
    with pytest.raises(ConcretizationError):
        tp.jit(lambda x: tnp.arange(0.0, 1.0, x))(np.array(0.25))


def test_results_of_numbers_mix_into_every_mode():
    for mode in ALL_MODES:
        got = run(lambda x: x @ tnp.eye(4) + tnp.full((3, 4), 0.5) * tnp.ones(4), mode, M)
        np.testing.assert_allclose(got, M + 0.5)

"""tenpy_ad.array_api, the Array API standard's namespace for tensors: its dtype objects
and inspection functions, creation functions that make tensors, gradients through its
functions (eager and traced) against central differences, ``__array_namespace__`` and
the other attributes the standard asks of both tensor kinds, and the concrete-only
functions' errors on traced tensors."""
import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.array_api as xp
from tenpy_ad.errors import ArgumentValueError, ConcretizationError
from tenpy_ad.testing import numerical_gradient

ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "float32", "float64", "complex64", "complex128"]


# ------------------------------------------------------------------ dtypes and inspection

def test_dtype_objects_are_numpys_dtypes():
    for name in ALL_DTYPES:
        dtype = getattr(xp, name)
        assert dtype == np.dtype(name) and hash(dtype) == hash(np.dtype(name))
        assert xp.zeros(2, dtype=dtype).dtype == dtype
    assert xp.__array_api_version__ == "2024.12"


def test_isdtype_kinds():
    assert xp.isdtype(xp.int8, "signed integer") and not xp.isdtype(xp.uint8, "signed integer")
    assert xp.isdtype(xp.uint64, "integral") and xp.isdtype(xp.complex64, "numeric")
    assert xp.isdtype(xp.float32, ("complex floating", "real floating"))
    assert not xp.isdtype(xp.bool, "numeric") and xp.isdtype(xp.bool, xp.bool)
    with pytest.raises(ArgumentValueError, match="isdtype: unknown kind"):
        xp.isdtype(xp.int8, "whole")


def test_result_type_and_can_cast():
    x = xp.asarray([1, 2], dtype=xp.int8)
    assert xp.result_type(x, xp.int16) == xp.int16
    assert xp.result_type(xp.float32, 1.5) == xp.float32          # scalars are weak
    assert xp.result_type(xp.uint8, xp.int8) == xp.int16
    assert xp.result_type(xp.float32, xp.complex64) == xp.complex64
    assert xp.can_cast(x, xp.int64) and not xp.can_cast(xp.int64, xp.int8)
    assert not xp.can_cast(xp.complex64, xp.float64)


def test_finfo_and_iinfo():
    info = xp.finfo(xp.float32)
    assert (info.bits, info.eps, info.dtype) == (32, float(np.finfo(np.float32).eps),
                                                 xp.float32)
    assert info.smallest_normal == float(np.finfo(np.float32).smallest_normal)
    assert xp.finfo(xp.complex128).dtype == xp.float64
    limits = xp.iinfo(xp.asarray([1], dtype=xp.uint16))
    assert (limits.bits, limits.min, limits.max, limits.dtype) == (16, 0, 65535, xp.uint16)


def test_namespace_info():
    info = xp.__array_namespace_info__()
    assert info.capabilities()["boolean indexing"] is True
    assert info.devices() == [info.default_device()] == [xp.asarray(1.0).device]
    assert list(info.dtypes()) == ALL_DTYPES
    assert list(info.dtypes(kind="unsigned integer")) == ["uint8", "uint16", "uint32",
                                                          "uint64"]
    assert info.default_dtypes() == {"real floating": xp.float64,
                                     "complex floating": xp.complex128,
                                     "integral": xp.int64, "indexing": xp.int64}
    with pytest.raises(ArgumentValueError, match="unsupported device"):
        info.dtypes(device="gpu")


# ------------------------------------------------------------------ creation makes tensors

CREATIONS = {
    "asarray_list": (lambda: xp.asarray([[1, 2], [3, 4]]), xp.int64, (2, 2)),
    "asarray_scalar": (lambda: xp.asarray(1.5), xp.float64, ()),
    "asarray_array": (lambda: xp.asarray(np.ones(3, np.float32)), xp.float32, (3,)),
    "asarray_dtype": (lambda: xp.asarray([True], dtype=xp.uint8), xp.uint8, (1,)),
    "zeros": (lambda: xp.zeros((2, 3)), xp.float64, (2, 3)),
    "ones": (lambda: xp.ones(4, dtype=xp.int32), xp.int32, (4,)),
    "empty": (lambda: xp.empty((0, 2)), xp.float64, (0, 2)),
    "full_int": (lambda: xp.full((2,), 3), xp.int64, (2,)),
    "full_bool": (lambda: xp.full((2,), True), xp.bool, (2,)),
    "full_complex": (lambda: xp.full(2, 1j), xp.complex128, (2,)),
    "arange_int": (lambda: xp.arange(5), xp.int64, (5,)),
    "arange_float": (lambda: xp.arange(0, 1, 0.25), xp.float64, (4,)),
    "linspace": (lambda: xp.linspace(0, 1, 5, endpoint=False), xp.float64, (5,)),
    "eye": (lambda: xp.eye(2, 3, k=1, dtype=xp.float32), xp.float32, (2, 3)),
    "zeros_like": (lambda: xp.zeros_like(xp.ones(3, dtype=xp.int8)), xp.int8, (3,)),
    "ones_like": (lambda: xp.ones_like(xp.zeros(2), dtype=xp.complex64), xp.complex64, (2,)),
    "empty_like": (lambda: xp.empty_like(xp.zeros((1, 2))), xp.float64, (1, 2)),
    "full_like": (lambda: xp.full_like(xp.zeros(2), 7), xp.float64, (2,)),
    "tril": (lambda: xp.tril(xp.ones((3, 3)), k=-1), xp.float64, (3, 3)),
    "triu": (lambda: xp.triu(xp.ones((2, 3))), xp.float64, (2, 3)),
    "from_dlpack": (lambda: xp.from_dlpack(np.arange(3.0)), xp.float64, (3,)),
    "fftfreq": (lambda: xp.fft.fftfreq(4), xp.float64, (4,)),
}


@pytest.mark.parametrize("name", sorted(CREATIONS))
def test_creation_functions_return_eager_tensors(name):
    make, dtype, shape = CREATIONS[name]
    result = make()
    assert type(result) is tp.Tensor
    assert (result.dtype, result.shape) == (dtype, shape)


def test_creation_values():
    np.testing.assert_array_equal(xp.tril(xp.ones((3, 3)), k=-1).data,
                                  np.tril(np.ones((3, 3)), -1))
    np.testing.assert_array_equal(xp.linspace(0, 1, 5, endpoint=False).data,
                                  np.linspace(0, 1, 5, endpoint=False))
    grid = xp.meshgrid(xp.arange(2), xp.arange(3))
    expected = np.meshgrid(np.arange(2), np.arange(3))
    assert all(type(g) is tp.Tensor for g in grid)
    for got, want in zip(grid, expected):
        np.testing.assert_array_equal(got.data, want)
    for got, want in zip(xp.meshgrid(xp.arange(2), xp.arange(3), indexing="ij"),
                         np.meshgrid(np.arange(2), np.arange(3), indexing="ij")):
        np.testing.assert_array_equal(got.data, want)


def test_asarray_copy_false_refuses_a_copy():
    with pytest.raises(ValueError):
        xp.asarray([1, 2], copy=False)
    x = xp.asarray([1.0, 2.0])
    assert xp.asarray(x, copy=False) is x
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(x, dtype=xp.float32, copy=False)


# ------------------------------------------------------------------ gradients

def _loss(x):
    """A loss through several of the namespace's names and signatures."""
    y = xp.concat([xp.sin(x), xp.pow(x, 2)], axis=0)
    spread = xp.std(y, axis=0, correction=1.0)
    shifted = xp.cumulative_sum(xp.atan2(x, 1.5 + xp.abs(x)), axis=1, include_initial=True)
    return (xp.sum(spread * xp.linalg.vector_norm(x, axis=0))
            + xp.sum(xp.permute_dims(shifted, (1, 0))[1:] ** 2)
            + xp.linalg.matrix_norm(xp.matrix_transpose(x) @ x))


def _fft_loss(x):
    spectrum = xp.fft.rfft(x, n=6, axis=1)
    return xp.sum(xp.abs(spectrum) ** 2) + xp.sum(xp.fft.irfft(spectrum, n=6) * x[:, :1])


X = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]])


def _numeric(loss):
    return numerical_gradient(lambda a: float(loss(xp.asarray(a)).data), X)


@pytest.mark.parametrize("loss", [_loss, _fft_loss], ids=["functions", "fft"])
def test_eager_gradient_matches_central_differences(loss):
    x = tp.tensor(X, requires_grad=True)
    loss(x).backward()
    np.testing.assert_allclose(x.grad.data if hasattr(x.grad, "data") else x.grad,
                               _numeric(loss), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("loss", [_loss, _fft_loss], ids=["functions", "fft"])
def test_traced_gradient_matches_central_differences(loss):
    x = tp.input(X.shape, name="x")
    y = loss(x)
    assert isinstance(y, tp.TracedTensor)
    program = tp.compile([tp.ad.grad(y, x)], inputs=[x])
    (grad,) = program(X)
    np.testing.assert_allclose(grad, _numeric(loss), rtol=1e-6, atol=1e-8)


def test_complex_fft_gradient():
    z = np.array([0.5 + 0.2j, -0.3 + 1.0j, 0.8 - 0.4j, 0.1 + 0.1j])

    def loss(x):
        return xp.sum(xp.real(xp.fft.ifft(x, n=6, norm="ortho") * xp.conj(xp.fft.fft(x, n=6))))

    x = tp.tensor(z, requires_grad=True)
    loss(x).backward()
    expected = numerical_gradient(lambda a: float(loss(xp.asarray(a)).data), z)
    np.testing.assert_allclose(x.grad.data if hasattr(x.grad, "data") else x.grad,
                               expected, rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------ the tensors' side

def test_array_namespace_of_both_tensor_kinds():
    eager, traced = tp.tensor([1.0, 2.0]), tp.input((2,))
    assert eager.__array_namespace__() is xp and traced.__array_namespace__() is xp
    assert eager.__array_namespace__(api_version="2023.12") is xp
    with pytest.raises(ArgumentValueError, match="api_version"):
        traced.__array_namespace__(api_version="1999.01")
    assert xp.sin(traced).__array_namespace__() is xp


def test_functions_keep_the_tensor_kind():
    traced = tp.input((3,))
    for result in (xp.sum(traced), xp.sort(traced, descending=True), xp.asarray(traced),
                   xp.full((2, 3), traced[0]), xp.fft.fft(traced)):
        assert isinstance(result, tp.TracedTensor)
    assert type(xp.sum(xp.asarray([1, 2]))) is tp.Tensor


def test_device_dlpack_and_conversions():
    x = xp.asarray([1.0, 2.0, 3.0])
    assert x.device == xp.__array_namespace_info__().default_device()
    assert x.to_device(x.device) is x
    np.testing.assert_array_equal(np.from_dlpack(x), [1.0, 2.0, 3.0])
    assert x.__dlpack_device__() == x.data.__dlpack_device__()
    assert xp.ones((2, 3)).mT.shape == (3, 2)
    assert (int(xp.asarray(3)), float(x[0]), complex(x[1]), bool(x[2])) == (3, 1.0, 2 + 0j,
                                                                            True)
    traced = tp.input((2,))
    for conversion in (bool, int, float, complex, np.from_dlpack):
        with pytest.raises(ConcretizationError):
            conversion(traced)


def test_shift_operators_keep_the_dtype():
    x = xp.asarray([1, 2, 3], dtype=xp.uint8)
    assert ((x << 2).dtype, (x >> 1).dtype) == (xp.uint8, xp.uint8)
    np.testing.assert_array_equal((x << 2).data, [4, 8, 12])
    np.testing.assert_array_equal(xp.bitwise_right_shift(x, xp.asarray([0, 1, 1],
                                                                        dtype=xp.uint8)).data,
                                  [1, 1, 1])
    with pytest.raises(ConcretizationError, match="bitwise_left_shift"):
        tp.input((3,), dtype="int64") << 1


def test_standard_semantics_that_differ_from_numpy():
    x = xp.asarray([3.0, 1.0, 3.0, 2.0])
    np.testing.assert_array_equal(xp.argsort(x, descending=True).data, [0, 2, 3, 1])
    np.testing.assert_array_equal(xp.cumulative_prod(x, include_initial=True).data,
                                  [1.0, 3.0, 3.0, 9.0, 18.0])
    small = xp.sum(xp.asarray([100, 100], dtype=xp.int8), dtype=xp.int8)
    assert small.dtype == xp.int8 and int(small) == np.int8(-56)
    assert xp.clip(xp.asarray([1, 5], dtype=xp.int16), 2, 4).dtype == xp.int16
    assert xp.vecdot(xp.asarray([1, 2], dtype=xp.uint8),
                     xp.asarray([3, 4], dtype=xp.uint8)).dtype == xp.uint8
    with pytest.raises(IndexError):
        xp.expand_dims(xp.ones((2,)), axis=3)


def test_unique_needs_concrete_values():
    x = xp.asarray([[2.0, np.nan], [2.0, 1.0]])
    found = xp.unique_all(x)
    np.testing.assert_array_equal(found.values.data, [1.0, 2.0, np.nan])
    np.testing.assert_array_equal(found.counts.data, [1, 2, 1])
    assert found.inverse_indices.shape == (2, 2)
    for fn in (xp.unique_all, xp.unique_counts, xp.unique_inverse, xp.unique_values):
        with pytest.raises(ConcretizationError, match=fn.__name__):
            fn(tp.input((3,)))


# ------------------------------------------------------------------ NumPy's closeness tests

def test_closeness_of_tensors_that_require_grad():
    a = tp.tensor([1.0, 2.0, np.nan], requires_grad=True)
    b = tp.tensor([1.0, 2.0 + 1e-9, np.nan])
    close = np.isclose(a, b)
    assert type(close) is tp.Tensor and close.dtype == np.bool_
    np.testing.assert_array_equal(close.data, [True, True, False])
    np.testing.assert_array_equal(np.isclose(a, b, equal_nan=True).data, [True] * 3)
    assert np.allclose(a, b) is False and np.allclose(a, b, equal_nan=True) is True
    assert np.array_equal(a, a) is False and np.array_equal(a, a, equal_nan=True) is True
    assert np.array_equal(a, a[:2]) is False
    assert np.array_equiv(a[:2], tp.tensor([[1.0, 2.0], [1.0, 2.0]])) is True
    assert np.isclose(tp.tensor([np.inf, -np.inf]), np.inf).data.tolist() == [True, False]


def test_closeness_of_traced_tensors():
    x, y = tp.input((3,)), np.zeros(3)
    assert isinstance(np.isclose(x, y), tp.TracedTensor)
    for fn in (np.allclose, np.array_equal, np.array_equiv):
        with pytest.raises(ConcretizationError, match=fn.__name__):
            fn(x, y)
    assert np.array_equal(x, np.zeros(4)) is False      # shapes decide without values

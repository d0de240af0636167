"""The Array API's integer dtypes (int8 ... int64, uint8 ... uint64) are carried in their
own width, with NumPy's promotion and NumPy's widening of sums and products; they are never
differentiated."""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad import dtypes
from tenpy_ad.errors import DTypeError

INTEGERS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def _programs(x):
    """Integer expressions of ``x`` whose dtypes NumPy decides (promotion, widening)."""
    return [x + 1, x * 3, x // 2, x % 3, x & 6, -x if x.dtype.kind == "i" else x,
            x + np.int8(1), x + np.uint8(1), x * 2.5, x / 2, np.sum(x), np.prod(x),
            np.cumsum(x), np.cumprod(x), np.max(x), np.mean(x), x < 2, np.abs(x)]


@pytest.mark.parametrize("dtype", INTEGERS)
@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_integer_results_have_numpys_values_and_dtypes(dtype, mode):
    values = np.arange(1, 5).astype(dtype)
    expected = _programs(values)
    if mode == "eager":
        got = [t.data for t in _programs(tp.tensor(values, dtype=dtype))]
    else:
        x = tp.input((4,), dtype)
        outs = _programs(x)
        assert [o.dtype for o in outs] == [np.asarray(e).dtype for e in expected]
        got = tp.compile(outs, inputs=[x])(values)
    for g, e in zip(got, expected):
        assert g.dtype == np.asarray(e).dtype
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("dtype", INTEGERS + ["bool"])
def test_sums_widen_as_numpys(dtype):
    code = dtypes.code_of(dtype)
    widened = np.add.reduce(np.zeros(1, dtype)).dtype
    assert dtypes.DTYPES[dtypes.accumulator_code(code)] == widened
    x = tp.input((3,), dtype)
    assert np.sum(x).dtype == widened and np.cumprod(x).dtype == widened


@pytest.mark.parametrize("dtype", INTEGERS + ["bool"])
@pytest.mark.parametrize("into", [None, "int8", "uint16", "int64", "float32"])
@pytest.mark.parametrize("reduction", [np.sum, np.prod, np.cumsum, np.cumprod])
def test_sums_take_the_requested_dtype(dtype, into, reduction):
    values = np.arange(1, 5).astype(dtype)
    expected = reduction(values, dtype=into)
    x = tp.input((4,), dtype)
    traced = reduction(x, dtype=into)
    got = [reduction(tp.tensor(values, dtype=dtype), dtype=into).data,
           tp.compile([traced], inputs=[x])(values)[0]]
    assert traced.dtype == expected.dtype
    for g in got:
        assert g.dtype == expected.dtype
        np.testing.assert_array_equal(g, expected)


@pytest.mark.parametrize("dtype", INTEGERS)
def test_integers_are_never_differentiated(dtype):
    with pytest.raises(DTypeError, match=dtype):
        tp.tensor(np.arange(3), dtype=dtype, requires_grad=True)


def test_every_integer_width_indexes():
    data = np.arange(10.0)
    x = tp.tensor(data, requires_grad=True)
    for dtype in INTEGERS:
        index = np.array([1, 3, 3]).astype(dtype)
        (x[tp.tensor(index, dtype=dtype)] * 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad, np.bincount([1, 3, 3], minlength=10) * 2.0 * 8)

"""The elementwise functions of tenpy_ad.numpy compute what NumPy computes, in every mode
(``modes.check_modes``), for every dtype NumPy accepts (bool and int64 too) and refuse
clearly what NumPy refuses; NumPy's own functions reach them through ``__array_ufunc__``;
ufunc keywords, Python scalars, lists and broadcasting follow NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad.errors import (ArgumentError, ConcretizationError, DTypeError,
                             NotDifferentiableError, UnsupportedError)

from elementwise_cases import (DTYPES, assert_refused_in_every_mode, carried, check,
                               numpy_refuses, sample)
from modes import ALL_MODES, TENSOR_MODES, check_modes, run

UNARY = {
    "exp": "any", "exp2": "any", "expm1": "any", "log": "positive", "log2": "positive",
    "log10": "positive", "log1p": "positive", "sqrt": "positive", "cbrt": "any",
    "sin": "any", "cos": "any", "tan": "any", "arcsin": "unit", "arccos": "unit",
    "arctan": "any", "sinh": "any", "cosh": "any", "tanh": "any", "arcsinh": "any",
    "arccosh": "above_one", "arctanh": "unit", "deg2rad": "any", "radians": "any",
    "rad2deg": "any", "degrees": "any", "square": "any", "reciprocal": "nonzero",
    "floor": "any", "ceil": "any", "trunc": "any", "rint": "any", "fabs": "any",
    "absolute": "any", "abs": "any", "sign": "any", "positive": "any", "negative": "any",
    "conjugate": "any", "conj": "any", "isnan": "any", "isfinite": "any", "isinf": "any",
    "signbit": "any", "logical_not": "any", "invert": "any", "bitwise_not": "any",
}


def _modes_for(np_fn, *arrays):
    """Plain NumPy differs only where tenpy_ad carries a wider dtype (float16 loops)."""
    with np.errstate(all="ignore"):
        raw = np.asarray(np_fn(*arrays))
    return ALL_MODES if raw.dtype == carried(np_fn, *arrays).dtype else TENSOR_MODES


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ufunc_matches_numpy(name, dtype):
    ours, theirs = getattr(tnp, name), getattr(np, name)
    a = sample(UNARY[name], dtype, seed=len(name))
    if numpy_refuses(theirs, a):
        assert_refused_in_every_mode(ours, a)
        return
    check(ours, a, ref=lambda x: carried(theirs, x), modes=_modes_for(theirs, a))
    check(lambda x: theirs(x), a, ref=lambda x: carried(theirs, x),
          modes=TENSOR_MODES)                                 # through __array_ufunc__


@pytest.mark.parametrize("name", ["exp", "sinc", "arctan", "floor", "square", "isnan"])
def test_unary_on_zero_dim_python_scalars_and_lists(name):
    ours, theirs = getattr(tnp, name), getattr(np, name)
    check_modes(ours, np.array(0.7), ref=theirs)
    assert type(ours(0.7)) is type(theirs(0.7)) and ours(0.7) == theirs(0.7)
    np.testing.assert_array_equal(ours([0.5, 1.5]), theirs([0.5, 1.5]))
    check_modes(lambda x: ours([x[0], 2.0 * x[1]]), np.array([0.3, 0.4]),
                ref=lambda x: theirs(np.array([x[0], 2.0 * x[1]])))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sinc_matches_numpy(dtype):
    a = sample("any", dtype)
    if dtype == "float64":
        a[0, 0] = 0.0
    check(tnp.sinc, a, ref=lambda x: carried(np.sinc, x))


# ------------------------------------------------------------------ binary ufuncs

BINARY = {   # name: domains of x1 and x2
    "add": ("any", "any"), "subtract": ("any", "any"), "multiply": ("any", "any"),
    "divide": ("any", "nonzero"), "true_divide": ("any", "nonzero"),
    "floor_divide": ("any", "nonzero"), "remainder": ("any", "nonzero"),
    "mod": ("any", "nonzero"), "fmod": ("any", "nonzero"),
    "power": ("positive", "small"), "float_power": ("positive", "small"),
    "arctan2": ("any", "any"), "hypot": ("any", "any"), "logaddexp": ("any", "any"),
    "logaddexp2": ("any", "any"), "maximum": ("any", "any"), "minimum": ("any", "any"),
    "fmax": ("any", "any"), "fmin": ("any", "any"), "copysign": ("any", "any"),
    "heaviside": ("any", "any"), "equal": ("small", "small"),
    "not_equal": ("small", "small"), "less": ("any", "any"),
    "less_equal": ("small", "small"), "greater": ("any", "any"),
    "greater_equal": ("small", "small"), "logical_and": ("any", "any"),
    "logical_or": ("any", "any"), "logical_xor": ("any", "any"),
    "bitwise_and": ("any", "any"), "bitwise_or": ("any", "any"),
    "bitwise_xor": ("any", "any"),
}
PAIRS = [("float64", "float64"), ("float32", "float32"), ("complex128", "complex128"),
         ("int64", "int64"), ("bool", "bool"), ("float32", "float64"), ("int64", "float32"),
         ("bool", "float64"), ("complex128", "float64"), ("int64", "bool")]


@pytest.mark.parametrize("pair", PAIRS, ids=["-".join(p) for p in PAIRS])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ufunc_matches_numpy(name, pair):
    ours, theirs = getattr(tnp, name), getattr(np, name)
    a = sample(BINARY[name][0], pair[0], shape=(3, 1), seed=1)
    b = sample(BINARY[name][1], pair[1], shape=(4,), seed=2)
    if numpy_refuses(theirs, a, b):
        assert_refused_in_every_mode(ours, a, b)
        return
    ref = lambda x, y: carried(theirs, x, y)   # noqa: E731
    check(ours, a, b, ref=ref, modes=_modes_for(theirs, a, b))
    check(lambda x: theirs(x, b), a, ref=lambda x: ref(x, b),
          modes=TENSOR_MODES)                                 # a tensor and an ndarray
    check(lambda y: theirs(a, y), b, ref=lambda y: ref(a, y), modes=TENSOR_MODES)


SCALARS = [2.0, 3, True, 1.5j, np.float64(2.0), np.float32(0.5)]


@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex128"])
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "power",
                                  "float_power", "maximum", "arctan2", "remainder", "less",
                                  "logaddexp", "bitwise_or"])
def test_binary_with_python_and_numpy_scalars(name, dtype, scalar):
    """NEP 50: Python scalars are weak (a float32 tensor stays float32), NumPy scalars
    are not; either side."""
    ours, theirs = getattr(tnp, name), getattr(np, name)
    a = sample("positive", dtype, seed=3)
    for fn, ref in ((lambda x: ours(x, scalar), lambda x: theirs(x, scalar)),
                    (lambda x: ours(scalar, x), lambda x: theirs(scalar, x))):
        if numpy_refuses(ref, a):
            assert_refused_in_every_mode(fn, a)
        else:
            check(fn, a, ref=lambda x: carried(ref, x))


OPERATORS = {
    "float": (("positive", "float64"), ("nonzero", "float64"), [
        lambda x, y: x // y, lambda x, y: x % y, lambda x, y: y % 1.5,
        lambda x, y: 7.0 // y, lambda x, y: x ** y, lambda x, y: 2 ** x + y,
        lambda x, y: -x + y, lambda x, y: +x * y, lambda x, y: abs(y) - x]),
    "int": (("any", "int64"), ("positive", "int64"), [
        lambda x, y: x // y, lambda x, y: x % y, lambda x, y: x ** 2 + y, lambda x, y: x / y,
        lambda x, y: x * 0.5 + y, lambda x, y: 1.0 - x + y, lambda x, y: ~x & y,
        lambda x, y: (x | 1) ^ y, lambda x, y: -x ** y]),
    "bool": (("any", "bool"), ("any", "bool"), [
        lambda x, y: x & y, lambda x, y: x | y, lambda x, y: x ^ y, lambda x, y: ~x ^ y,
        lambda x, y: x + y, lambda x, y: x * 2 + y, lambda x, y: x * 2.5 + y]),
}


@pytest.mark.parametrize("kind", sorted(OPERATORS))
def test_operators_follow_numpy(kind):
    (dom_x, dtype_x), (dom_y, dtype_y), cases = OPERATORS[kind]
    a, b = sample(dom_x, dtype_x, (3, 1), 4), sample(dom_y, dtype_y, (4,), 5)
    for fn in cases:
        check(fn, a, b, ref=fn)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_numpy_scalars_and_lists_on_either_side_of_operators(dtype):
    """``np.float64(2) * t`` reaches tenpy_ad through ``__array_ufunc__`` (a NumPy scalar
    is not weak: float32 tensors promote); a list on the left through ``__radd__``."""
    a = sample("positive", dtype, (3,), 14)
    cases = [lambda x: np.float64(2) * x, lambda x: np.float32(2) + x,
             lambda x: np.int64(3) - x, lambda x: np.float64(0.5) ** x,
             lambda x: [1.0, 2.0, 3.0] + x, lambda x: [1, 2, 3] * x,
             lambda x: x / [2.0, 4.0, 8.0], lambda x: np.float64(1.5) > x.real]
    for fn in cases:
        check(fn, a, ref=fn)


def test_integer_tensors_compute_inexact_functions_in_float64():
    fn = lambda x: (tnp.exp(x), tnp.sqrt(x), x / 2, tnp.sin(x) * x)  # noqa: E731
    for mode in TENSOR_MODES:
        out = run(fn, mode, np.arange(4))
        assert all(o.dtype == np.float64 for o in out)


def test_int_to_negative_int_power_is_refused():
    ints = np.arange(1, 4)
    for mode in TENSOR_MODES:
        with pytest.raises((DTypeError, ValueError)):
            run(lambda x: x ** -1, mode, ints)


# ------------------------------------------------------------------ ufunc keywords

def test_ufunc_dtype_keyword():
    a = sample("positive", "float64", seed=10)
    check_modes(lambda x: tnp.add(x, x, dtype=np.float32), a,
                ref=lambda x: np.add(x, x, dtype=np.float32))
    check_modes(lambda x: np.exp(x, dtype="float32"), a,
                ref=lambda x: np.exp(x, dtype="float32"))
    check_modes(lambda x: tnp.multiply(x, 2, dtype=np.complex128), a,
                ref=lambda x: np.multiply(x, 2, dtype=np.complex128))
    check_modes(lambda x: tnp.sqrt(x, casting="same_kind", order="K", subok=True,
                                   where=True), a, ref=np.sqrt)


def test_ufunc_out_writes_an_eager_tensor():
    x = tp.tensor(np.arange(3.0), requires_grad=True)
    for call in (lambda t: tnp.add(x, 1.0, out=t), lambda t: np.add(x, 1.0, out=t),
                 lambda t: tnp.add(x, 1.0, out=(t,)), lambda t: np.add(x, 1.0, out=(t,))):
        t = tp.tensor(np.zeros(3))
        assert call(t) is t
        np.testing.assert_array_equal(t.data, [1.0, 2.0, 3.0])
        tnp.sum(t * t).backward()
        np.testing.assert_array_equal(x.grad, [2.0, 4.0, 6.0])
        x.grad = None


def test_ufunc_keywords_a_tensor_cannot_honour_are_refused():
    x = tp.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(NotDifferentiableError, match=r"out=.*drop its gradient"):
        tnp.exp(x, out=np.empty(3))      # an ndarray target would lose the gradient
    with pytest.raises(NotDifferentiableError, match=r"out=.*drop its gradient"):
        np.add(x, x, out=np.empty(3))
    with pytest.raises(NotDifferentiableError, match=r"out=.*traced.*drop its gradient"):
        tnp.exp(x, out=tnp.zeros_like(tp.input((3,))))   # an eager grad value, traced target
    with pytest.raises(TypeError, match="where"):
        tnp.add(x, 1.0, where=np.array([True, False, True]))
    with pytest.raises(TypeError, match="unexpected keyword"):
        tnp.sin(x, axis=0)
    with pytest.raises(DTypeError, match="add"):
        tnp.add(tp.tensor(np.ones(2) * 1j), 1.0, dtype=np.float64)


def test_plain_values_get_numpy_results_with_out():
    out = np.empty(3)
    assert tnp.add(np.ones(3), 1.0, out=out) is out
    np.testing.assert_array_equal(out, 2.0)


def test_ufunc_signature_is_numpy_like():
    import inspect
    assert list(inspect.signature(tnp.arctan2).parameters)[:3] == ["x1", "x2", "out"]
    assert "dtype" in inspect.signature(tnp.exp).parameters
    assert tnp.exp.__name__ == "exp" and "e**x" in tnp.exp.__doc__


# ------------------------------------------------------------------ rounding, complex parts

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("decimals", [0, 1, -1])
def test_round(decimals, dtype):
    a = sample("any", dtype, seed=11) * (10 if dtype != "bool" else 1)
    modes = TENSOR_MODES if dtype == "bool" else ALL_MODES
    ref = lambda x: carried(lambda v: np.round(v, decimals), x)  # noqa: E731
    for fn in (tnp.round, tnp.around):
        check(lambda x: fn(x, decimals), a, ref=ref, modes=modes)
    check(lambda x: np.round(x, decimals=decimals), a, ref=ref, modes=TENSOR_MODES)
    check(lambda x: x.round(decimals), a, ref=ref, modes=TENSOR_MODES)


@pytest.mark.parametrize("dtype", DTYPES)
def test_complex_parts(dtype):
    a = sample("any", dtype, seed=12)
    for name in ("real", "imag", "conj", "conjugate"):
        theirs = getattr(np, name)
        check(getattr(tnp, name), a, ref=lambda x: carried(theirs, x),
              modes=_modes_for(theirs, a))
    for deg in (False, True):
        check(lambda x: tnp.angle(x, deg=deg), a, ref=lambda x: np.angle(x, deg=deg))
        check(lambda x: np.angle(x, deg), a, ref=lambda x: np.angle(x, deg),
              modes=TENSOR_MODES)


def test_real_if_close():
    close = np.array([1.0 + 1e-15j, 2.0 - 1e-16j])
    far = np.array([1.0 + 1e-3j, 2.0])
    for a in (close, far, np.array([1.0, 2.0])):
        for mode in ("numpy", "eager"):
            got = run(tnp.real_if_close, mode, a)
            assert got.dtype == np.real_if_close(a).dtype
            np.testing.assert_array_equal(got, np.real_if_close(a))
    np.testing.assert_array_equal(tnp.real_if_close(tp.tensor(far), tol=1e15).numpy(),
                                  far.real)
    with pytest.raises(ConcretizationError, match="real_if_close"):
        tnp.real_if_close(tp.input((2,), "complex128"))
    x = tp.input((2,))
    assert tnp.real_if_close(x) is x


def test_nan_to_num():
    """Exact equality: the default replacements are the dtype's extremes."""
    a = np.array([np.nan, np.inf, -np.inf, 1.5, -0.25])
    z = np.empty(a.shape, complex)
    z.real, z.imag = a, a[::-1]
    cases = [(tnp.nan_to_num, a), (tnp.nan_to_num, a.astype(np.float32)),
             (lambda x: tnp.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0), a),
             (lambda x: np.nan_to_num(x, nan=2.0), z), (tnp.nan_to_num, np.arange(3))]
    for fn, value in cases:
        expected = fn(value.copy())                   # NumPy's own result on an ndarray
        for mode in TENSOR_MODES:
            got = run(fn, mode, value)
            assert got.dtype == expected.dtype, mode
            np.testing.assert_array_equal(got, expected, err_msg=mode)


# ------------------------------------------------------------------ stop_gradient

def test_stop_gradient_keeps_the_value_in_every_mode():
    a = sample("any", "float64", seed=13)
    check_modes(lambda x: tp.stop_gradient(x) * 2.0, a, ref=lambda x: x * 2.0)
    pair = tp.stop_gradient((tp.tensor(a, requires_grad=True), [tp.tensor(a)]))
    assert type(pair) is tuple and type(pair[1]) is list
    np.testing.assert_array_equal(pair[0].numpy(), a)
    np.testing.assert_array_equal(pair[1][0].numpy(), a)


# ------------------------------------------------------------------ value tests

@pytest.mark.parametrize("dtype", DTYPES)
def test_value_tests_match_numpy(dtype):
    a = sample("any", dtype, (6,), 15)
    if dtype in ("float64", "float32"):
        a[:3] = [np.inf, -np.inf, np.nan]
    names = ["iscomplex", "isreal", "isposinf", "isneginf", "fix"]
    for name in names:
        ours, theirs = getattr(tnp, name), getattr(np, name)
        if numpy_refuses(theirs, a):
            assert_refused_in_every_mode(ours, a)
        else:
            check(ours, a, ref=theirs)
            check(lambda x: theirs(x), a, ref=theirs, modes=TENSOR_MODES)
    for name in ("iscomplexobj", "isrealobj"):
        expected = getattr(np, name)(a)
        assert getattr(tnp, name)(tp.tensor(a, dtype=a.dtype)) is expected
        assert getattr(np, name)(tp.input(a.shape, a.dtype)) is expected


@pytest.mark.skipif(not hasattr(np, "astype"), reason="np.astype is new in NumPy 2.1")
def test_np_astype_dispatches():
    a = sample("any", "float64", (2, 3), 16)
    check_modes(lambda x: np.astype(x, np.complex128, copy=False), a,
                ref=lambda x: np.astype(x, np.complex128))
    check_modes(lambda x: np.astype(x > 0, "int64"), a,
                ref=lambda x: np.astype(x > 0, "int64"))
    with pytest.raises(ArgumentError, match="device"):
        np.astype(tp.tensor(a), "float32", device="gpu")

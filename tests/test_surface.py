"""The numpy-like surface computes what NumPy computes, in all three modes.

Every check runs one function

* (a) on plain ndarrays        -> must return a NumPy result (ndarray / NumPy scalar),
* (b) on eager ``tp.tensor``s  -> must return a ``tp.Tensor``,
* (c) on ``tp.input`` placeholders, then ``tp.evaluate`` and ``tp.compile``,

and compares value, shape and dtype with a NumPy reference (NumPy 2 / NEP 50 promotion).
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp

RTOL = {np.dtype("float64"): 1e-12, np.dtype("complex128"): 1e-12,
        np.dtype("float32"): 2e-5, np.dtype("complex64"): 2e-5}
DTYPES = ["float64", "float32", "complex128"]


# ------------------------------------------------------------------ helpers

def rand(shape, dtype="float64", seed=0, positive=False):
    """Deterministic random data of ``shape``/``dtype`` (entries in [0.5, 1.5] if positive)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if positive:
        value = rng.uniform(0.5, 1.5, size=shape)
    else:
        value = rng.standard_normal(shape)
    if dtype.kind == "c":
        value = value + 1j * (rng.uniform(0.1, 0.5, size=shape) if positive
                              else rng.standard_normal(shape))
    return np.asarray(value).astype(dtype)


def assert_matches(got, expected, what):
    """``got`` has ``expected``'s shape and dtype and its values (rtol by dtype)."""
    expected = np.asarray(expected)
    got_arr = np.asarray(got)
    assert got_arr.shape == expected.shape, (
        f"{what}: shape {got_arr.shape}, NumPy gives {expected.shape}")
    assert got_arr.dtype == expected.dtype, (
        f"{what}: dtype {got_arr.dtype}, NumPy gives {expected.dtype}")
    rtol = RTOL.get(expected.dtype, 1e-12)
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    np.testing.assert_allclose(got_arr, expected, rtol=rtol, atol=rtol * max(scale, 1.0) * 1e-2,
                               err_msg=what)


def check_modes(fn, *args, ref=None, modes="abc"):
    """Run ``fn`` in the three modes on ``args`` (ndarrays) and compare with ``ref(*args)``
    computed by NumPy (``ref`` defaults to ``fn`` itself, for operator-only functions)."""
    args = [np.asarray(a) for a in args]
    reference = ref if ref is not None else fn
    expected = np.asarray(reference(*[a.copy() for a in args]))

    if "a" in modes:  # (a) plain ndarrays in, NumPy results out
        got = fn(*[a.copy() for a in args])
        assert isinstance(got, (np.ndarray, np.generic)), (
            f"ndarray mode returned {type(got).__name__}, expected a NumPy result")
        assert_matches(got, expected, "ndarray mode")

    if "b" in modes:  # (b) eager tensors in
        tensors = [tp.tensor(a) for a in args]
        got = fn(*tensors)
        assert type(got) is tp.Tensor, f"eager mode returned {type(got).__name__}"
        assert got.dtype == expected.dtype, (
            f"eager mode: dtype {got.dtype}, NumPy gives {expected.dtype}")
        assert tuple(got.shape) == expected.shape
        assert_matches(np.asarray(got), expected, "eager mode")
        for t, a in zip(tensors, args):      # inputs untouched
            np.testing.assert_array_equal(np.asarray(t), a)

    if "c" in modes:  # (c) traced placeholders, evaluated and compiled
        xs = [tp.input(a.shape, a.dtype) for a in args]
        out = fn(*xs)
        assert type(out) is tp.TracedTensor, f"traced mode returned {type(out).__name__}"
        assert tuple(out.shape) == expected.shape, (
            f"traced mode: built shape {out.shape}, NumPy gives {expected.shape}")
        assert out.dtype == expected.dtype, (
            f"traced mode: built dtype {out.dtype}, NumPy gives {expected.dtype}")
        got = tp.evaluate(out, dict(zip(xs, args)))
        assert isinstance(got, np.ndarray)
        assert_matches(got, expected, "traced mode (tp.evaluate)")
        program = tp.compile([out], inputs=xs)
        (got,) = program(*args)
        assert_matches(got, expected, "traced mode (tp.compile)")
    return expected


# ------------------------------------------------------------------ the helper itself

def test_helper_detects_wrong_values_and_dtypes():
    a = rand((3,))
    with pytest.raises(AssertionError):
        check_modes(lambda x: x + x, a, ref=lambda x: x * 3)
    with pytest.raises(AssertionError):
        check_modes(lambda x: x + x, a, ref=lambda x: (x + x).astype(np.float32))


# ------------------------------------------------------------------ arithmetic

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}


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


# ------------------------------------------------------------------ matmul

MATMUL_SHAPES = [
    ((3, 4), (4, 5)),          # 2-d @ 2-d
    ((4,), (4, 5)),            # 1-d @ 2-d
    ((3, 4), (4,)),            # 2-d @ 1-d
    ((4,), (4,)),              # 1-d @ 1-d -> ()
    ((2, 3, 4), (2, 4, 5)),    # batched
    ((2, 3, 4), (4, 5)),       # batched @ 2-d (broadcast)
    ((3, 4), (2, 4, 5)),       # 2-d @ batched
    ((1, 3, 4), (2, 4, 5)),    # size-1 batch broadcast
    ((2, 3, 4), (4,)),         # batched @ 1-d
    ((4,), (2, 4, 5)),         # 1-d @ batched
    ((2, 1, 3, 4), (5, 4, 2)),  # 4-d @ 3-d batch broadcast
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=[f"{a}@{b}" for a, b in MATMUL_SHAPES])
def test_matmul(sa, sb, dtype):
    check_modes(lambda a, b: a @ b, rand(sa, dtype, 8), rand(sb, dtype, 9))


def test_matmul_function_form():
    check_modes(lambda a, b: tp.matmul(a, b), rand((3, 4), seed=10), rand((4, 2), seed=11),
                ref=np.matmul)


def test_matmul_with_itself():
    check_modes(lambda a: a @ a @ a, rand((3, 3), seed=12))


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
    check_modes(lambda x: x.scale_real(factor), a, ref=lambda x: x * factor, modes="bc")
    check_modes(lambda x: tp.scale(x, factor), a, ref=lambda x: x * factor)


def test_scale_real_equals_multiplication_node():
    x = tp.input((3, 3))
    assert x.scale_real(0.5) is x.scale_real(0.5)
    a = rand((3, 3), seed=36)
    np.testing.assert_allclose(tp.evaluate(((x * x).scale_real(0.5)).sum(), {x: a}),
                               ((a * a) * 0.5).sum(), rtol=1e-12)


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
                ref=lambda x: np.array(ref(x)), modes="bc")


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


# ------------------------------------------------------------------ slicing

INDICES = [
    (slice(None), slice(None, 2)),       # a[:, :2]
    (1,),                                # a[1]
    (-1,),                               # a[-1]
    (1, -2),                             # a[1, -2]
    (-1, -1, -1),                        # a[-1, -1, -1]
    (slice(None, None, 2),),             # a[::2]
    (slice(None, None, -1),),            # a[::-1]
    (slice(3, 0, -2), slice(None), slice(None, None, -3)),
    (slice(None), slice(None, None, -2)),
    (Ellipsis, 1),                       # a[..., 1]
    (Ellipsis,),                         # a[...]
    (1, Ellipsis),                       # a[1, ...]
    (None,),                             # a[None]
    (slice(None), None, slice(None)),    # a[:, None, :]
    (1, Ellipsis, None),                 # a[1, ..., None]
    (None, Ellipsis, None, 2),           # a[None, ..., None, 2]
    (slice(-2, None), slice(1, -1)),     # a[-2:, 1:-1]
    (slice(1, 1),),                      # empty
    (slice(5, None),),                   # past the end: empty
    (slice(-100, 100),),                 # clipped
    (slice(2, None, 3), 0, slice(-1, None, -2)),
    (np.int64(-2), slice(None), np.int64(1)),   # NumPy integers
    (slice(None, None, None), slice(4, None, -1), slice(None, -7, -1)),  # a[:, 4::-1, :-7:-1]
]


@pytest.mark.parametrize("index", INDICES, ids=[repr(i) for i in INDICES])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_basic_slicing(index, dtype):
    a = rand((4, 5, 6), dtype, 55)
    check_modes(lambda x: x[index], a, ref=lambda x: np.array(x[index]))


def test_single_item_forms():
    a = rand((4, 5), seed=56)
    check_modes(lambda x: x[2], a, ref=lambda x: np.array(x[2]))
    check_modes(lambda x: x[-3:], a, ref=lambda x: np.array(x[-3:]))
    check_modes(lambda x: x[2, 3], a, ref=lambda x: np.array(x[2, 3]))


def test_slicing_then_arithmetic():
    a = rand((4, 6), seed=57)
    k = 3
    check_modes(lambda x: x[:, :k] @ x[:k, ::-1] + x[::-1, ::-2] @ x[1:, :][:k], a)


# ------------------------------------------------------------------ einsum

EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),                  # implicit output
    ("ij,kj", [(3, 4), (5, 4)]),                  # implicit, alphabetical order
    ("ji,kj", [(4, 3), (5, 4)]),                  # implicit -> 'ik'
    ("ba", [(3, 4)]),                             # implicit transpose
    ("ii->", [(4, 4)]),                           # trace
    ("ii", [(4, 4)]),                             # implicit trace
    ("ii->i", [(4, 4)]),                          # diagonal
    ("ijij->", [(2, 3, 2, 3)]),
    ("ijij->ij", [(2, 3, 2, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(6, 2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]),
    ("i...->...", [(3, 4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,ki->", [(3, 4), (4, 5), (5, 3)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("xwu,yxl,yzd,wzr->uldr", [(2, 3, 4), (5, 2, 6), (5, 3, 7), (3, 3, 8)]),
    ("xwu,yxl,yzd,wzr->uldr", [(3, 3, 4), (3, 3, 4), (3, 3, 4), (3, 3, 4)]),
    ("i,ij,j->", [(3,), (3, 4), (4,)]),
    ("ij, jk -> ik", [(3, 4), (4, 5)]),            # spaces
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("subscripts,shapes", EINSUM,
                         ids=[f"{s}:{'x'.join(map(str, sh))}" for s, sh in EINSUM])
def test_einsum(subscripts, shapes, dtype):
    arrays = [rand(s, dtype, 60 + k) for k, s in enumerate(shapes)]
    check_modes(lambda *xs: tp.einsum(subscripts, *xs), *arrays,
                ref=lambda *xs: np.einsum(subscripts, *xs))


def test_einsum_ellipsis_broadcasts_size_one_axes():
    """NumPy broadcasts the axes covered by '...' (size 1 against size 2)."""
    a, b = rand((1, 3, 4), seed=70), rand((2, 4, 5), seed=71)
    check_modes(lambda x, y: tp.einsum("...ij,...jk->...ik", x, y), a, b,
                ref=lambda x, y: np.einsum("...ij,...jk->...ik", x, y))


def test_einsum_same_operand_twice():
    a = rand((3, 3), seed=72)
    check_modes(lambda x: tp.einsum("ij,jk,kl->il", x, x, x), a,
                ref=lambda x: np.einsum("ij,jk,kl->il", x, x, x))


def test_einsum_with_ndarray_operand():
    const = rand((4, 5), seed=73)
    a = rand((3, 4), seed=74)
    check_modes(lambda x: tp.einsum("ij,jk->ik", x, const), a,
                ref=lambda x: np.einsum("ij,jk->ik", x, const))
    check_modes(lambda x: tp.einsum("jk,ij->ki", const, x), a,
                ref=lambda x: np.einsum("jk,ij->ki", const, x))


def test_trg_contraction_from_svd_factors():
    """The TRG step: 4 reshaped factors contracted into the new tensor."""
    D, k = 2, 4
    s = [rand((D, D, k), seed=75 + i) for i in range(4)]
    check_modes(lambda s1, s2, s3, s4: tp.einsum("xwu,yxl,yzd,wzr->uldr", s2, s3, s4, s1),
                *s, ref=lambda s1, s2, s3, s4: np.einsum("xwu,yxl,yzd,wzr->uldr",
                                                         s2, s3, s4, s1))


# ------------------------------------------------------------------ tensordot

TENSORDOT = [
    ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3, 4), (4, 5), 1),
    ((2, 3), (4, 5), 0),
    ((3, 4), (3, 4), 2),
    ((2, 3, 4), (4, 3, 5), ([1, 2], [1, 0])),
    ((2, 3, 4), (5, 2), ([0], [1])),
    ((2, 3, 4), (4, 5), (2, 0)),
    ((2, 3, 4), (4, 5), (-1, 0)),
    ((2, 3, 4), (3, 2), ([0, 1], [1, 0])),
    ((2, 3, 4), (3, 4, 2), ((1, 2, 0), (0, 1, 2))),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sa,sb,axes", TENSORDOT,
                         ids=[f"{a}{b}{ax}" for a, b, ax in TENSORDOT])
def test_tensordot(sa, sb, axes, dtype):
    check_modes(lambda a, b: tp.tensordot(a, b, axes), rand(sa, dtype, 80), rand(sb, dtype, 81),
                ref=lambda a, b: np.tensordot(a, b, axes))


def test_tensordot_default_axes():
    check_modes(lambda a, b: tp.tensordot(a, b), rand((2, 3, 4), seed=82),
                rand((3, 4, 5), seed=83), ref=np.tensordot)


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


# ------------------------------------------------------------------ interning (traced)

def test_same_expression_is_same_object():
    x = tp.input((3, 3), name="x")
    y = tp.input((3,), name="y")
    const = np.arange(9.0).reshape(3, 3)
    assert (x * x) is (x * x)
    assert (x + x) is (x + x)
    assert (x - y) is (x - y)                       # through implicit broadcasting
    assert (x / 2.0) is (x / 2.0)
    assert (x + 1.0) is (x + 1.0)
    assert (x + const) is (x + const.copy())        # equal constants merge
    assert (x @ x) is (x @ x)
    assert (x @ y) is (x @ y)
    assert x.T is x.T
    assert x.transpose(1, 0) is x.T
    assert x.reshape(9) is x.reshape(-1)
    assert x.sum() is x.sum()
    assert x.sum(axis=0, keepdims=True) is x.sum(axis=0, keepdims=True)
    assert x.max(axis=1) is tp.amax(x, axis=1)
    assert tp.exp(x) is tp.exp(x)
    assert tp.sin(x) is tp.sin(x)
    assert (x ** 2) is (x ** 2)
    assert x[:, :2] is x[:, :2]
    assert tp.einsum("ij,jk->ik", x, x) is tp.einsum("ij,jk->ik", x, x)
    assert tp.tensordot(x, x, 1) is tp.tensordot(x, x, 1)
    assert ((x * x) * 0.5).sum() is ((x * x) * 0.5).sum()


def test_different_expressions_are_different_objects():
    x = tp.input((3, 3))
    z = tp.input((3, 3))
    assert x is not z
    assert (x * x) is not (x * z)
    assert (x + 1.0) is not (x + 2.0)
    assert (x * 0.5) is not (x * 0.25)
    assert x.sum(axis=0) is not x.sum(axis=1)
    assert (x + np.zeros((3, 3))) is not (x + np.ones((3, 3)))
    assert (x + np.zeros((3, 3), np.float32)) is (x + np.zeros((3, 3)))  # same f64 constant
    assert tp.input((3, 3), name="x") is not tp.input((3, 3), name="x")


def test_value_of_shared_subexpression():
    x = tp.input((3,))
    y = x * x
    out = (y * y + y).sum()
    a = rand((3,), seed=86)
    np.testing.assert_allclose(tp.evaluate(out, {x: a}), (a ** 4 + a ** 2).sum(), rtol=1e-12)

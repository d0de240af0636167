"""Joining, splitting and padding in tenpy_ad.numpy against NumPy, in every mode:
``concatenate``/``stack`` and the ``*stack`` family, ``append``, ``unstack``, the
``split`` family, ``pad`` in every supported mode, ``r_``/``c_``, ``broadcast_arrays``
and ``atleast_*`` of several arrays; mixed tensors, arrays, lists and Python scalars;
promotion; gradients; errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad.errors import ArgumentError, ShapeError

from modes import ALL_MODES, GRAD_MODES, assert_matches, check_modes, grad_in, run
from surface_cases import DTYPES, rand

A = rand((3, 4, 5), seed=21)
M = rand((3, 4), seed=22)
V = rand((4,), seed=23)


def check_each(fn, *args, ref):
    """``fn`` returns several arrays (a list or tuple): each equals NumPy's in every
    mode."""
    expected = ref(*args)
    for mode in ALL_MODES:
        got = run(fn, mode, *args)
        assert len(got) == len(expected), f"{mode} mode: {len(got)} outputs"
        for k, (g, e) in enumerate(zip(got, expected)):
            assert_matches(g, e, f"{mode} mode, output {k}")


# ------------------------------------------------------------------ joins

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,build", [
    ("concatenate", lambda x: [x, x[:1]]), ("stack", lambda x: (x, 2.0 * x)),
    ("vstack", lambda x: [x, x[0]]), ("vstack", lambda x: [x[0], x[1]]),
    ("hstack", lambda x: [x, x[:, :1]]), ("hstack", lambda x: [x[0], x[1], x[2, :2]]),
    ("dstack", lambda x: [x, x]), ("dstack", lambda x: [x[0], x[1]]),
    ("column_stack", lambda x: [x[:, 0], x[:, 1:3], x[:, 3]]),
    ("concatenate", lambda x: x), ("vstack", lambda x: x), ("hstack", lambda x: (x,)),
])
def test_joins(name, build, dtype):
    check_modes(lambda x: getattr(tnp, name)(build(x)), rand((3, 4), dtype, seed=24),
                ref=lambda x: getattr(np, name)(build(x)))


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_concatenate_axes(axis):
    check_modes(lambda x: tnp.concatenate([x, x * x], axis=axis), M,
                ref=lambda x: np.concatenate([x, x * x], axis=axis))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack_axes(axis):
    check_modes(lambda x: tnp.stack([x, x * x], axis=axis), M,
                ref=lambda x: np.stack([x, x * x], axis=axis))


def test_joins_promote_and_mix_arrays_lists_scalars():
    f32 = M.astype(np.float32)
    for name, extra in (("concatenate", [[0.5] * 4]), ("vstack", [0.5] * 4),
                        ("hstack", [[1], [2], [3]])):
        check_modes(lambda x: getattr(tnp, name)([x, M, extra]), f32,
                    ref=lambda x: getattr(np, name)([x, M, extra]))
    check_modes(lambda x: tnp.stack([x, x.astype(np.complex64)]), f32,
                ref=lambda x: np.stack([x, x.astype(np.complex64)]))
    check_modes(lambda x: tnp.column_stack([x, 2.5 * np.ones(4), [1, 2, 3, 4]]), V,
                ref=lambda x: np.column_stack([x, 2.5 * np.ones(4), [1, 2, 3, 4]]))


def test_joins_with_dtype_and_casting():
    check_modes(lambda x: tnp.concatenate([x, x], dtype=np.complex128), M,
                ref=lambda x: np.concatenate([x, x], dtype=np.complex128))
    check_modes(lambda x: tnp.vstack([x, x], dtype="float32", casting="same_kind"), M,
                ref=lambda x: np.vstack([x, x], dtype="float32", casting="same_kind"))
    with pytest.raises(TypeError, match="cannot cast"):
        tnp.stack([tp.input((2,))], dtype=np.float32, casting="safe")


def test_row_stack_warns_as_numpy():
    if not hasattr(np, "row_stack"):
        pytest.skip("this NumPy has no row_stack")
    with pytest.warns(DeprecationWarning, match="row_stack"):
        got = tnp.row_stack([tp.tensor(V), tp.tensor(V)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        np.testing.assert_array_equal(got, np.row_stack([V, V]))


BLOCKS = [
    "[[x, x[:, :1]], [x[:1], 2.0]]", "[x, x]", "[[x]]", "[x[0], 1.0, x[1]]",
    "[[[x]], [[x]]]", "[[x, np.zeros((3, 2))]]", "x", "[[x[0, 0], x[0, 1]], [x[1, 0], 1]]",
]


@pytest.mark.parametrize("expr", BLOCKS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_block(expr, dtype):
    check_modes(lambda x: tnp.block(eval(expr, {"x": x, "np": np})), rand((3, 4), dtype,
                                                                          seed=36),
                ref=lambda x: np.block(eval(expr, {"x": x, "np": np})))


def test_block_errors():
    x = tp.input((2, 2))
    with pytest.raises(ValueError, match="depths are mismatched"):
        tnp.block([[x, x], x])
    with pytest.raises(TypeError, match="tuple"):
        tnp.block([(x, x)])
    with pytest.raises(ValueError, match="cannot be empty"):
        tnp.block([[x], []])


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_append(axis):
    values = M[:1] if axis in (0, None) else M[:, :2]
    check_modes(lambda x: tnp.append(x, values * x[:values.shape[0], :values.shape[1]],
                                     axis=axis), M,
                ref=lambda x: np.append(x, values * x[:values.shape[0], :values.shape[1]],
                                        axis=axis))
    check_modes(lambda x: tnp.append(1.5, x), V, ref=lambda x: np.append(1.5, x))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unstack(axis):
    check_each(lambda x: tnp.unstack(x, axis=axis), A,
               ref=lambda x: tuple(np.moveaxis(x, axis, 0)))


def test_join_errors():
    x = tp.input((2, 3))
    with pytest.raises(ShapeError, match="zero-dimensional"):
        tnp.concatenate([x[0, 0], x[0, 1]])
    with pytest.raises(ShapeError, match="do not match"):
        tnp.concatenate([x, x.T])
    with pytest.raises(ShapeError, match="one shape"):
        tnp.stack([x, x.T])
    with pytest.raises(ValueError, match="out= is taken by keyword"):
        tnp.concatenate([x, x], 0, np.zeros((4, 3)))
    with pytest.raises(ShapeError, match="out of range"):
        tnp.stack([x, x], axis=3)


def test_join_gradients_are_slices():
    w = rand((3, 8), seed=25)
    loss = lambda x: (tnp.hstack([x, x * x]) * w[:, :8]).sum()    # noqa: E731
    a = rand((3, 4), seed=26)
    expected = w[:, :4] + 2 * a * w[:, 4:]
    for mode in GRAD_MODES:
        np.testing.assert_allclose(grad_in(mode, loss, a), expected, rtol=1e-12)


# ------------------------------------------------------------------ splits

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,args,shape", [
    ("split", (2, 1), (3, 4, 5)), ("split", ([1, -1, 10], -1), (3, 4, 5)),
    ("split", ([], 0), (3, 4, 5)), ("split", ([2, 1], 1), (3, 4, 5)),
    ("split", (np.array([1, 2]),), (3, 4)),
    ("array_split", (3, 2), (3, 4, 5)), ("array_split", (7,), (4,)),
    ("array_split", (1,), (3, 4)), ("hsplit", (2,), (3, 4, 5)), ("hsplit", ([1],), (4,)),
    ("vsplit", ([1],), (3, 4, 5)), ("vsplit", (3,), (3, 4)), ("dsplit", ([1, 3],), (3, 4, 5)),
])
def test_splits(name, args, shape, dtype):
    check_each(lambda x: getattr(tnp, name)(x, *args), rand(shape, dtype, seed=27),
               ref=lambda x: getattr(np, name)(x, *args))


def test_split_errors():
    x = tp.input((3, 4))
    with pytest.raises(ValueError, match="equal division"):
        tnp.split(x, 3, axis=1)
    with pytest.raises(ValueError, match="larger than 0"):
        tnp.array_split(x, 0)
    with pytest.raises(ShapeError, match="3 or more dimensions"):
        tnp.dsplit(x, 2)
    with pytest.raises(ShapeError, match="2 or more dimensions"):
        tnp.vsplit(x[0], 2)


def test_split_pieces_that_miss_the_loss_get_zero_gradient():
    loss = lambda x: (tnp.split(x, [1, 3])[1] ** 2).sum()    # noqa: E731
    a = rand((5,), seed=28)
    for mode in GRAD_MODES:
        np.testing.assert_allclose(grad_in(mode, loss, a), [0, 2 * a[1], 2 * a[2], 0, 0])


# ------------------------------------------------------------------ pad

PAD_WIDTHS = [1, (2, 3), ((1, 0), (0, 7)), ((9, 11),), 0, {1: (2, 1)}, {0: 3}]


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
@pytest.mark.parametrize("width", PAD_WIDTHS, ids=range(len(PAD_WIDTHS)))
@pytest.mark.parametrize("shape", [(3, 4), (1, 3), (2, 1)])
def test_pad_modes(mode, width, shape):
    check_modes(lambda x: tnp.pad(x, width, mode=mode), rand(shape, seed=29),
                ref=lambda x: np.pad(x, width, mode=mode))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
@pytest.mark.parametrize("width", [1, (2, 3), (9, 11), ((0, 3), (5, 1))])
def test_pad_odd_reflection(mode, width, dtype):
    check_modes(lambda x: tnp.pad(x, width, mode=mode, reflect_type="odd"),
                rand((3, 4), dtype, seed=30),
                ref=lambda x: np.pad(x, width, mode=mode, reflect_type="odd"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("values", [7.0, (1.5, -2.0), ((1.5, 2.0), (-3.0, 4.0)),
                                    ((1.0,), (2.0,)), 0, -1e30])
def test_pad_constant_values(values, dtype):
    check_modes(lambda x: tnp.pad(x, ((1, 2), (3, 1)), constant_values=values),
                rand((3, 4), dtype, seed=31),
                ref=lambda x: np.pad(x, ((1, 2), (3, 1)), constant_values=values))


def test_pad_constant_infinity_stays_out_of_the_values():
    for mode in ALL_MODES:
        got = run(lambda x: tnp.pad(x, 1, constant_values=np.inf), mode, M)
        np.testing.assert_array_equal(got, np.pad(M, 1, constant_values=np.inf))


def test_pad_constant_values_tensors_are_differentiable():
    values = np.array([[1.5, 2.0], [-3.0, 4.0]])
    for mode in ALL_MODES[1:]:
        got = run(lambda x, c: tnp.pad(x, ((1, 2), (3, 1)), constant_values=c), mode, M,
                  values)
        np.testing.assert_array_equal(got, np.pad(M, ((1, 2), (3, 1)),
                                                  constant_values=values))
    c = tp.tensor(values, requires_grad=True)
    tnp.pad(tp.tensor(M), ((1, 2), (3, 1)), constant_values=c).sum().backward()
    # corners belong to the later axis, as NumPy fills them
    np.testing.assert_array_equal(c.grad, [[4.0, 8.0], [18.0, 6.0]])
    c = tp.tensor(2.0, requires_grad=True)
    padded = tnp.pad(M, 1, constant_values=c)
    assert isinstance(padded, tp.Tensor)
    padded.sum().backward()
    assert float(c.grad) == 5 * 6 - 12
    before = tp.tensor(1.0, requires_grad=True)      # a list holding a tensor
    tnp.pad(tp.tensor(M), 1, constant_values=[(before, 0.0)]).sum().backward()
    assert float(before.grad) == 4 + 5


def test_pad_other_dtypes_and_empty_mode():
    check_modes(lambda x: tnp.pad(x, 2, mode="edge"), M.astype(np.float32),
                ref=lambda x: np.pad(x, 2, mode="edge"))
    check_modes(lambda x: tnp.pad(x, ((1, 0), (0, 2)), mode="empty").shape[0] + 0 * x.sum(),
                M, ref=lambda x: np.float64(4.0))
    check_modes(lambda x: tnp.pad(x, ((0, 0), (2, 1)), mode="wrap"), np.zeros((0, 3)),
                ref=lambda x: np.pad(x, ((0, 0), (2, 1)), mode="wrap"))


def test_pad_gradient_counts_the_copies():
    a = rand((4,), seed=32)
    for mode in GRAD_MODES:
        np.testing.assert_allclose(
            grad_in(mode, lambda x: tnp.pad(x, (2, 3), mode="wrap").sum(), a),
            np.bincount(np.pad(np.arange(4), (2, 3), mode="wrap"), minlength=4))
        np.testing.assert_allclose(
            grad_in(mode, lambda x: tnp.pad(x, (5, 1), mode="edge").sum(), a), [6, 1, 1, 2])


def test_pad_errors():
    x = tp.input((3, 4))
    with pytest.raises(ArgumentError, match="mode 'mean' is not supported"):
        tnp.pad(x, 1, mode="mean")
    with pytest.raises(ArgumentError, match="not supported"):
        tnp.pad(x, 1, mode=lambda *args: None)
    with pytest.raises(ValueError, match="unsupported keyword"):
        tnp.pad(x, 1, mode="edge", constant_values=1.0)
    with pytest.raises(TypeError, match="integral"):
        tnp.pad(x, 1.5)
    with pytest.raises(ValueError, match="negative"):
        tnp.pad(x, -1)
    with pytest.raises(ValueError, match="reflect_type"):
        tnp.pad(x, 1, mode="reflect", reflect_type="neither")
    with pytest.raises(ShapeError, match="empty axis 0"):
        tnp.pad(tp.input((0, 2)), 1, mode="edge")


# ------------------------------------------------------------------ r_ and c_

R_CASES = [
    "r_[x, 0.0, 1:3, [2, 3]]", 'r_["0,2", x, x]', 'r_["-1,3,0", x, x]', 'r_["0,2,0", x, x]',
    "r_[x, -1:1:5j]", "c_[x, x, 0:4]", "c_[x[:, None], x]", "r_[x]", 'r_["0,3,-2", x, x]',
    "r_[[x, x], [x, x]]", "r_[x, np.float64(1.0)]",
]


@pytest.mark.parametrize("expr", R_CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_r_and_c(expr, dtype):
    check_modes(lambda x: eval(expr, {"r_": tnp.r_, "c_": tnp.c_, "np": np, "x": x}),
                rand((4,), dtype, seed=33),
                ref=lambda x: eval(expr, {"r_": np.r_, "c_": np.c_, "np": np, "x": x}))


def test_r_and_c_of_matrices_and_without_tensors():
    check_modes(lambda x: tnp.r_["1", x, x], M, ref=lambda x: np.r_["1", x, x])
    check_modes(lambda x: tnp.c_[x, x], M, ref=lambda x: np.c_[x, x])
    np.testing.assert_array_equal(tnp.r_[1:4, 7], np.r_[1:4, 7])
    assert len(tnp.r_) == 0


def test_r_errors():
    x = tp.input((3,))
    with pytest.raises(ValueError, match="first entry"):
        tnp.r_[x, "0"]
    with pytest.raises(ValueError, match="unknown special directive"):
        tnp.r_["x", x]
    with pytest.raises(ArgumentError, match="matrix"):
        tnp.r_["r", x]


# ------------------------------------------------------------------ several arrays

def test_broadcast_arrays():
    check_each(lambda x: tnp.broadcast_arrays(x, x[:1, :1], 2.0 * x[0]), M,
               ref=lambda x: np.broadcast_arrays(x, x[:1, :1], 2.0 * x[0]))
    got = tnp.broadcast_arrays(tp.input((3, 1)), np.ones(4))
    assert type(got[0]) is tp.TracedTensor and type(got[1]) is np.ndarray
    assert got[1].shape == (3, 4)
    with pytest.raises(ShapeError, match="cannot be broadcast"):
        tnp.broadcast_arrays(tp.input((3,)), np.ones(4))


def test_atleast_of_several_arrays():
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        check_each(lambda x: getattr(tnp, name)(x, x[0], x[0, 0]), M,
                   ref=lambda x: getattr(np, name)(x, x[0], x[0, 0]))


def test_array_and_asarray():
    check_modes(lambda x: tnp.array([x, 2.0 * x], ndmin=3), V,
                ref=lambda x: np.array([x, 2.0 * x], ndmin=3))
    check_modes(lambda x: tnp.asarray([x[0], 1.0, x[1]], dtype=np.complex128), V,
                ref=lambda x: np.asarray([x[0], 1.0, x[1]], dtype=np.complex128))
    check_modes(lambda x: tnp.asanyarray([x, x]) + tnp.ascontiguousarray([x, x]), V,
                ref=lambda x: np.asanyarray([x, x]) + np.ascontiguousarray([x, x]))
    t = tp.input((3,))
    assert tnp.asarray(t) is t and tnp.asanyarray(t) is t and tnp.ascontiguousarray(t) is t


NUMPY_JOINS = [
    lambda x: np.concatenate([x, x]), lambda x: np.stack([x, 1.0 + x]),
    lambda x: np.vstack([x, x]), lambda x: np.hstack([x, x]), lambda x: np.dstack([x, x]),
    lambda x: np.column_stack([x[0], x[1]]), lambda x: np.append(x, x),
    lambda x: np.split(x, 2)[1], lambda x: np.array_split(x, 3, axis=1)[0],
    lambda x: np.hsplit(x, 2)[0], lambda x: np.vsplit(x, [1])[1],
    lambda x: np.pad(x, 2, mode="reflect"), lambda x: np.pad(x, 1, constant_values=2.0),
    lambda x: np.broadcast_arrays(x, x[0])[1], lambda x: np.atleast_3d(x),
    lambda x: np.block([[x, x[:, :2]], [x[:1], x[:1, :2]]]),
]


@pytest.mark.parametrize("call", NUMPY_JOINS, ids=range(len(NUMPY_JOINS)))
def test_numpy_functions_dispatch_on_tensors(call):
    a = rand((4, 6), seed=34)
    check_modes(call, a)
    weights = rand(np.shape(call(a)), seed=35)
    loss = lambda x: (call(x) * weights).sum()       # noqa: E731
    expected = grad_in("transform", loss, a)
    for mode in GRAD_MODES:
        np.testing.assert_allclose(grad_in(mode, loss, a), expected, rtol=1e-12)

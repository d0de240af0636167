"""Shape and structure functions of tenpy_ad.numpy against NumPy, in every mode: reshapes
and axes, flips, rotations, rolls, tiles, repeats, diagonals, traces and triangles; their
arguments (axes, offsets, negative values, tuples), dtypes, the tensor methods, NumPy's
own functions on tensors, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad.errors import ArgumentError, ConcretizationError, ShapeError
from tenpy_ad.ops import structural as st

from modes import ALL_MODES, GRAD_MODES, TENSOR_MODES, check_modes, grad_in, run
from surface_cases import DTYPES, rand

A = rand((3, 4, 5), seed=1)
M = rand((4, 4), seed=2)
V = rand((5,), seed=3)


def check_both(x, name, *args, **kwargs):
    """``tnp.name(x, *args, **kwargs)`` in every mode equals ``np.name(x, ...)``."""
    check_modes(lambda x: getattr(tnp, name)(x, *args, **kwargs), x,
                ref=lambda x: getattr(np, name)(x, *args, **kwargs))


# ------------------------------------------------------------------ reshapes and axes

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,args,shape", [
    ("ravel", (), (3, 4, 5)), ("ravel", ("F",), (3, 4, 5)), ("ravel", ("K",), (2, 3)),
    ("squeeze", (), (3, 1, 4, 1)), ("squeeze", ((1, -1),), (3, 1, 4, 1)),
    ("squeeze", (0,), (1,)), ("expand_dims", (0,), (3, 4)),
    ("expand_dims", ((0, -1, 2),), (3, 4)), ("expand_dims", (-1,), ()),
    ("swapaxes", (0, -1), (3, 4, 5)), ("swapaxes", (1, 1), (3, 4)),
    ("moveaxis", (0, -1), (3, 4, 5)), ("moveaxis", ((0, 1), (-1, 0)), (3, 4, 5)),
    ("rollaxis", (2, 1), (3, 4, 5)), ("rollaxis", (0, 3), (3, 4, 5)),
    ("rollaxis", (-1, -3), (3, 4, 5)), ("transpose", ((1, -1, 0),), (3, 4, 5)),
    ("transpose", (), (3, 4, 5)), ("reshape", ((-1, 2),), (3, 4)),
    ("reshape", (12,), (3, 4)), ("atleast_1d", (), ()), ("atleast_2d", (), (5,)),
    ("atleast_3d", (), (5,)), ("atleast_3d", (), (3, 4)), ("atleast_3d", (), ()),
    ("atleast_2d", (), (2, 3, 4)), ("broadcast_to", ((2, 3, 4),), (3, 1)),
    ("broadcast_to", (5,), ()), ("copy", (), (3, 4)),
])
def test_reshapes_and_axes(name, args, shape, dtype):
    check_both(rand(shape, dtype, seed=4), name, *args)


def test_matrix_transpose():
    check_modes(tnp.matrix_transpose, A, ref=lambda x: np.swapaxes(x, -1, -2))
    check_modes(lambda x: x.mT, A, ref=lambda x: np.swapaxes(x, -1, -2))


@pytest.mark.parametrize("fn,expected", [
    (tnp.shape, (3, 4, 5)), (tnp.ndim, 3), (tnp.size, 60),
    (lambda x: tnp.size(x, 1), 4), (lambda x: tnp.size(x, (0, -1)), 15),
])
def test_queries_return_python_values(fn, expected):
    for value in (tp.tensor(A), tp.input(A.shape), A, [tp.tensor(A[0])] * 3):
        got = fn(value)
        assert got == expected and type(got) is type(expected)
    assert np.shape(tp.input((2, 3))) == (2, 3) and np.ndim(tp.tensor(A)) == 3
    assert np.size(tp.input((2, 3))) == 6


def test_copy_of_an_eager_tensor_is_a_new_tensor_that_writes_leave_apart():
    t = tp.tensor(M, requires_grad=True)
    for copy in (tnp.copy(t), np.copy(t), t.copy()):
        assert copy is not t
        np.testing.assert_array_equal(copy.data, M)
        copy[0, 0] = 7.0
        assert copy.data[0, 0] == 7.0 and t.data[0, 0] == M[0, 0]
        tnp.sum(copy).backward()
        expected = np.ones_like(M)
        expected[0, 0] = 0.0
        np.testing.assert_array_equal(t.grad, expected)
        t.grad = None


def test_copy_of_a_traced_tensor_is_a_new_node_of_its_value():
    """A copy computes nothing (an identity step), but it is a new array: a unique node,
    which in-place writes may go into (numpy/inplace.py)."""
    x = tp.input(M.shape)
    for copy in (tnp.copy(x), x.copy()):
        assert copy is not x and copy.prim.name == "copy" and copy.inputs[0] is x
    assert tnp.copy(x) is not tnp.copy(x)


def test_reshape_newshape_keyword_of_older_numpys():
    """Tensors take NumPy's older name of ``shape``; plain arrays are NumPy's own call
    (NumPy 2.4 removed ``newshape``)."""
    check_modes(lambda x: tnp.reshape(x, newshape=(2, -1)), M, ref=lambda x: x.reshape(2, 8),
                modes=TENSOR_MODES)
    with pytest.raises(TypeError, match="shape"):
        tnp.reshape(tp.input((2, 2)))
    try:
        expected = np.reshape(M, newshape=(2, -1))
    except TypeError:
        with pytest.raises(TypeError, match="newshape"):
            tnp.reshape(M, newshape=(2, -1))
    else:
        np.testing.assert_array_equal(tnp.reshape(M, newshape=(2, -1)), expected)


def test_reshape_other_orders_are_refused():
    with pytest.raises(ArgumentError, match="order='F'"):
        tnp.reshape(tp.input((2, 3)), (3, 2), order="F")
    np.testing.assert_array_equal(tnp.reshape(M, (2, 8), order="F"),
                                  np.reshape(M, (2, 8), order="F"))


@pytest.mark.parametrize("call,match", [
    (lambda x: tnp.squeeze(x, 0), "size is not one"),
    (lambda x: tnp.squeeze(x, 3), "out of range"),
    (lambda x: tnp.expand_dims(x, (0, 0)), "repeated axis"),
    (lambda x: tnp.expand_dims(x, 4), "out of range"),
    (lambda x: tnp.swapaxes(x, 0, 2), "out of range"),
    (lambda x: tnp.moveaxis(x, (0, 1), 0), "same number"),
    (lambda x: tnp.moveaxis(x, (0, 0), (1, 0)), "repeated axis"),
    (lambda x: tnp.transpose(x, (0, 0)), "not a permutation"),
    (lambda x: tnp.transpose(x, (0,)), "not a permutation"),
    (lambda x: tnp.transpose(x, (0, 2)), "not a permutation"),
    (lambda x: tnp.rollaxis(x, 0, 3), "out of range"),
    (lambda x: tnp.ravel(x, "Q"), "order"),
    (lambda x: tnp.broadcast_to(x, (3,)), "cannot be broadcast"),
    (lambda x: tnp.matrix_transpose(x[0]), "at least two axes"),
    (lambda x: tnp.atleast_1d(x).reshape(5), "cannot reshape"),
])
@pytest.mark.parametrize("kind", ["eager", "traced"])
def test_shape_errors(call, match, kind):
    x = tp.tensor(M[:3, :2]) if kind == "eager" else tp.input((3, 2))
    with pytest.raises(ValueError, match=match):
        call(x)


# ------------------------------------------------------------------ flips, rotations, rolls

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (2, 1, 0), ()])
def test_flip(axis, dtype):
    check_both(rand((3, 4, 5), dtype, seed=5), "flip", axis)


def test_fliplr_flipud():
    check_modes(tnp.fliplr, A, ref=np.fliplr)
    check_modes(tnp.flipud, A, ref=np.flipud)
    check_modes(tnp.flipud, V, ref=np.flipud)
    with pytest.raises(ShapeError, match=">= 2-d"):
        tnp.fliplr(tp.input((3,)))
    with pytest.raises(ShapeError, match=">= 1-d"):
        tnp.flipud(tp.tensor(1.0))


@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2, 3, 4, 7])
@pytest.mark.parametrize("axes", [(0, 1), (1, 0), (2, 0), (-1, 1)])
def test_rot90(k, axes):
    check_both(A, "rot90", k, axes)


def test_rot90_errors():
    x = tp.input((3, 4))
    with pytest.raises(ValueError, match="len"):
        tnp.rot90(x, axes=(0, 1, 1))
    with pytest.raises(ValueError, match="different"):
        tnp.rot90(x, axes=(0, -2))
    with pytest.raises(ValueError, match="out of range"):
        tnp.rot90(x, axes=(0, 3))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shift,axis", [
    (1, None), (-7, None), (61, None), (2, 0), (-1, -1), (0, 1), (4, 1), ((1, 2), (0, 2)),
    ((1, 1), (1, 1)), (3, (0, 1, 2)), ((2, -3), None), ((1, 2, 3), 1),
])
def test_roll(shift, axis, dtype):
    check_both(rand((3, 4, 5), dtype, seed=6), "roll", shift, axis)


def test_roll_of_an_empty_axis_and_mismatched_tuples():
    check_both(np.zeros((3, 0)), "roll", 2, 1)
    with pytest.raises(ValueError):
        tnp.roll(tp.input((3, 4)), (1, 2, 3), (0, 1))


@pytest.mark.parametrize("indices", [[0, 1, 2], [2, 1, 0, 0, 0, 1, 3], [4, 2, 0], [1], [],
                                     [3, 3], [0, 2, 4, 1, 3, 3, 2, 1, 0, 4, 4, 4]])
def test_take_static_matches_numpy_take(indices):
    """Rolls and pads gather by runs of one step: any static index list works."""
    a = rand((5, 3), seed=17)
    for axis, array in ((0, a), (1, a.T.copy())):
        expected = np.take(array, np.asarray(indices, dtype=int), axis)
        np.testing.assert_array_equal(st.take_static(array, indices, axis), expected)
        x = tp.input(array.shape)
        np.testing.assert_array_equal(tp.evaluate(st.take_static(x, indices, axis),
                                                  {x: array}), expected)


def _ops(y) -> list:
    return sorted(n.prim.name for n in tp.introspection.graph_nodes([y])
                  if n.prim.name != "input")


def test_rolls_flips_pads_and_tiles_cost_a_few_nodes():
    x = tp.input((5, 4))
    assert _ops(tnp.roll(x, 2, 0)) == ["concatenate", "slice", "slice"]
    assert _ops(tnp.flip(x)) == ["slice"]
    assert _ops(tnp.pad(x, ((3, 3), (0, 0)), mode="reflect")) == ["concatenate"] + ["slice"] * 3
    assert _ops(tnp.pad(x, 2)) == ["scatter_slice"]
    assert _ops(tnp.tile(x, (2, 3))) == ["broadcast_in_dim", "reshape"]
    assert _ops(tnp.repeat(x, 3, axis=1)) == ["broadcast_in_dim", "reshape"]
    assert _ops(tnp.diagonal(x)) == ["reshape", "slice"]


# ------------------------------------------------------------------ tile and repeat

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reps", [2, (2, 1), (1, 2, 1, 3), (0, 2), (), (3, 1, 1), 1])
def test_tile(reps, dtype):
    check_both(rand((3, 4, 5), dtype, seed=7), "tile", reps)
    check_both(rand((), dtype, seed=8), "tile", reps)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("repeats,axis", [
    (2, None), (3, 1), ([1, 0, 2], 0), ([0, 1, 2, 3, 0], -1), (1, 0), (0, 2), ([2], 1),
    (np.array([1, 2, 0, 1]), 1), ([0, 0, 0], 0), ((2,), None),
])
def test_repeat(repeats, axis, dtype):
    check_both(rand((3, 4, 5), dtype, seed=9), "repeat", repeats, axis)


def test_repeat_method_and_scalar():
    check_modes(lambda x: x.repeat(2, axis=0), M, ref=lambda x: x.repeat(2, axis=0))
    check_modes(lambda x: x.repeat([1, 2, 3, 0], 1), M, ref=lambda x: x.repeat([1, 2, 3, 0], 1))
    check_both(np.array(2.5), "repeat", 3)


def test_repeat_counts_gradient_sums_the_copies():
    counts = [2, 0, 3]
    weights = rand((5, 2), seed=10)
    loss = lambda x: (tnp.repeat(x, counts, axis=0) * weights).sum()   # noqa: E731
    expected = np.stack([weights[:2].sum(0), np.zeros(2), weights[2:].sum(0)])
    for mode in GRAD_MODES:
        np.testing.assert_allclose(grad_in(mode, loss, rand((3, 2), seed=11)), expected)


def test_repeat_errors():
    x = tp.input((3, 4))
    with pytest.raises(ShapeError, match="3 repeats for axis 1"):
        tnp.repeat(x, [1, 2, 3], axis=1)
    with pytest.raises(ValueError, match="negative"):
        tnp.repeat(x, -1)
    with pytest.raises(TypeError, match="integers"):
        tnp.repeat(x, 1.5)
    with pytest.raises(ConcretizationError, match="traced"):
        tnp.repeat(x, tp.input((), "int64"))
    counts = tp.tensor(np.array([1, 0, 2])).astype("int64")
    np.testing.assert_array_equal(tnp.repeat(tp.tensor(M[:3]), counts, 0),
                                  np.repeat(M[:3], [1, 0, 2], 0))


# ------------------------------------------------------------------ diagonals, triangles

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("offset", [-5, -2, 0, 1, 3, 9])
@pytest.mark.parametrize("axes", [(0, 1), (2, 0), (-1, 1), (1, -1)])
def test_diagonal_and_trace(offset, axes, dtype):
    a = rand((3, 4, 5), dtype, seed=12)
    check_both(a, "diagonal", offset, *axes)
    check_both(a, "trace", offset, *axes)


def test_diagonal_and_trace_methods():
    check_modes(lambda x: x.diagonal(), M, ref=lambda x: x.diagonal())
    check_modes(lambda x: x.diagonal(1, 2, 0), A, ref=lambda x: x.diagonal(1, 2, 0))
    check_modes(lambda x: x.trace(), M, ref=lambda x: x.trace())
    check_modes(lambda x: x.trace(offset=-1, axis1=1, axis2=2), A,
                ref=lambda x: x.trace(offset=-1, axis1=1, axis2=2))


def test_trace_dtypes():
    check_both(M, "trace", dtype="complex128")
    ints = np.arange(12).reshape(3, 4)
    for value in (tp.tensor(ints).astype("int64"), tp.tensor(ints) > 4):
        got = tnp.trace(value)
        assert got.dtype == np.int64
        assert np.asarray(got) == np.trace(np.asarray(value))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [-7, -2, 0, 1, 6])
@pytest.mark.parametrize("shape", [(5,), (4, 4), (3, 5), (0,)])
def test_diag(k, shape, dtype):
    check_both(rand(shape, dtype, seed=13), "diag", k)


@pytest.mark.parametrize("k", [-1, 0, 2])
def test_diagflat(k):
    check_both(M[:2, :3], "diagflat", k)
    check_both(np.array(1.5), "diagflat", k)


@pytest.mark.parametrize("name", ["tril", "triu"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [-9, -1, 0, 2, 9])
@pytest.mark.parametrize("shape", [(5,), (4, 4), (3, 5), (2, 3, 4)])
def test_triangles(name, k, shape, dtype):
    check_both(rand(shape, dtype, seed=14), name, k)


def test_triangles_keep_infinities_out_of_the_zeros():
    a = np.array([[1.0, np.inf], [np.nan, 2.0]])
    for mode in ALL_MODES:
        np.testing.assert_array_equal(run(tnp.tril, mode, a), [[1.0, 0.0], [np.nan, 2.0]])
        np.testing.assert_array_equal(run(tnp.triu, mode, a), [[1.0, np.inf], [0.0, 2.0]])


def test_triangle_and_diagonal_gradients_are_masks():
    a = rand((3, 4), seed=15)
    for mode in GRAD_MODES:
        np.testing.assert_array_equal(grad_in(mode, lambda x: tnp.tril(x, 1).sum(), a),
                                      np.tril(np.ones((3, 4)), 1))
        np.testing.assert_array_equal(grad_in(mode, lambda x: tnp.trace(x, 1), a),
                                      np.eye(3, 4, 1))


@pytest.mark.parametrize("call,match", [
    (lambda x: tnp.diagonal(x[0]), "two axes"),
    (lambda x: tnp.diagonal(x, 0, 1, -1), "cannot be the same"),
    (lambda x: tnp.diag(x[None]), "1- or 2-d"),
    (lambda x: tnp.tril(x[0, 0]), "matrix"),
    (lambda x: tnp.trace(x, 0, 0, 1, None, np.zeros(())), "out= is taken by keyword"),
])
def test_structure_errors(call, match):
    for x in (tp.tensor(M), tp.input((4, 4))):
        with pytest.raises(ValueError, match=match):
            call(x)


# ------------------------------------------------------------------ NumPy's own names

NUMPY_CALLS = [
    lambda x: np.ravel(x), lambda x: np.squeeze(x[None]), lambda x: np.expand_dims(x, 1),
    lambda x: np.swapaxes(x, 0, 1), lambda x: np.moveaxis(x, 0, 1), lambda x: np.flip(x),
    lambda x: np.fliplr(x), lambda x: np.flipud(x), lambda x: np.rot90(x),
    lambda x: np.roll(x, 1), lambda x: np.tile(x, 2), lambda x: np.repeat(x, 2, 0),
    lambda x: np.diag(x), lambda x: np.diagonal(x, 1), lambda x: np.diagflat(x),
    lambda x: np.trace(x), lambda x: np.tril(x), lambda x: np.triu(x, 1),
    lambda x: np.atleast_3d(x), lambda x: np.rollaxis(x, 1), lambda x: np.transpose(x),
    lambda x: np.reshape(x, -1), lambda x: np.broadcast_to(x, (2, 4, 4)),
]


@pytest.mark.parametrize("call", NUMPY_CALLS, ids=range(len(NUMPY_CALLS)))
def test_numpy_functions_dispatch_on_tensors(call):
    """``np.<name>(tensor)`` runs tenpy_ad's function: same values, and a gradient."""
    check_modes(call, M)
    weights = rand(np.shape(call(M)), seed=16)
    loss = lambda x: (call(x) * weights).sum()        # noqa: E731
    expected = grad_in("transform", loss, M)
    for mode in GRAD_MODES:
        np.testing.assert_allclose(grad_in(mode, loss, M), expected, rtol=1e-12)


def test_methods_of_tensors():
    check_modes(lambda x: x.ravel(), A, ref=lambda x: x.ravel())
    check_modes(lambda x: x.flatten(), A, ref=lambda x: x.flatten())
    check_modes(lambda x: x.squeeze(), A[:, :1], ref=lambda x: x.squeeze())
    check_modes(lambda x: x.squeeze(axis=1), A[:, :1], ref=lambda x: x.squeeze(axis=1))
    check_modes(lambda x: x.swapaxes(0, 2), A, ref=lambda x: x.swapaxes(0, 2))
    check_modes(lambda x: x.copy(), A, ref=lambda x: x.copy())


def test_lists_of_tensors_are_stacked_not_detached():
    x = tp.tensor(V, requires_grad=True)
    loss = tnp.trace(tnp.tile([x, 2.0 * x], (1, 1))[:, :2]) + tnp.roll([x, x], 1).sum()
    loss.backward()
    expected = np.full(5, 2.0)
    expected[:2] += [1.0, 2.0]
    np.testing.assert_allclose(x.grad, expected)

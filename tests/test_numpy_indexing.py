"""Advanced indexing, ``take``, ``take_along_axis``, ``x.at[...]`` and ``nonzero`` compute
what NumPy computes in every mode, with index arrays given as lists, ndarrays, eager int64
tensors and traced int64 values; their gradients scatter back (adding up at repeated
indices); bad indices fail early and clearly.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad.errors import (ArgumentError, ConcretizationError, DTypeError, IndexingError,
                             NotDifferentiableError, ShapeError)

from modes import GRAD_MODES, assert_matches, check_modes, grad_in
from surface_cases import rand

A = rand((4, 5, 6), "float64", 71)
MASK_45 = rand((4, 5), seed=72) > 0
MASK_6 = np.array([True, False, True, True, False, False])

# ------------------------------------------------------------------ x[index] against NumPy

INDICES = [
    [0, 2, 2],                               # a list, with a repeat
    np.array([[0, 1], [3, -1]]),             # 2-d, negative
    np.array([1, 3], dtype=np.int32),        # another integer width
    np.array([2], dtype=np.uint8),
    [],                                      # an empty list is an integer index
    (slice(None), [0, 4]),
    ([0, 1], [1, 2]),                        # adjacent arrays
    ([[0], [3]], [0, 1, 2]),                 # broadcast index arrays
    ([0, 1], slice(None), [2, 3]),           # apart: the advanced axes go first
    (1, slice(None), [0, 1]),                # an integer counts as advanced
    (slice(None), 1, [0, 1]),                # ... adjacent to the array here
    (Ellipsis, [1, 5]),
    ([1, 2], Ellipsis),
    (slice(None), [0, 1], Ellipsis, [1, 2]),  # an empty ellipsis still separates
    (None, [0, 1], Ellipsis),
    ([0, 1], None, [1, 2]),                  # so does None
    (slice(3, 0, -1), [4, 0], slice(None, None, 2)),
    MASK_45,                                 # a 2-d mask over the first two axes
    (slice(None), slice(None), MASK_6),
    (1, MASK_45[0], slice(1, 3)),
    (np.array([True, False, False, True]), [1, 2]),    # a mask beside an array
    np.zeros((4, 5, 6), dtype=bool),         # selects nothing
    True,                                    # a 0-d boolean: a new axis
    (slice(None), False),
    ([0, 1], True),
    np.array(2),                             # a 0-d integer array is an integer
]


@pytest.mark.parametrize("index", INDICES, ids=[repr(i)[:40] for i in INDICES])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_advanced_indexing_matches_numpy(index, dtype):
    a = A.astype(dtype) * (1 + 1j if dtype == "complex128" else 1)
    check_modes(lambda x: x[index], a, ref=lambda x: np.array(x[index]))


def _int_modes(fn, a, index, ref):
    """``fn(x, i)`` with ``i`` an int64 index given as an ndarray, an eager int64 tensor,
    a traced int64 input (evaluated and compiled) and under tp.jit."""
    expected = np.asarray(ref(a, index))
    assert_matches(fn(a, index), expected, "numpy")
    assert_matches(fn(tp.tensor(a), tp.tensor(index, dtype="int64")), expected, "eager")
    assert_matches(fn(tp.tensor(a), index), expected, "eager x, ndarray index")
    assert_matches(fn(a, tp.tensor(index, dtype="int64")), expected, "ndarray x, eager index")
    x, i = tp.input(a.shape, a.dtype), tp.input(index.shape, "int64")
    y = fn(x, i)
    assert_matches(tp.evaluate(y, {x: a, i: index}), expected, "traced")
    assert_matches(tp.compile([y], inputs=[x, i])(a, index)[0], expected, "compiled")
    assert_matches(tp.jit(fn)(a, index), expected, "jit")


INT_CASES = {
    "rows": (lambda x, i: x[i], lambda x, i: x[i]),
    "middle": (lambda x, i: x[:, i], lambda x, i: x[:, i]),
    "apart": (lambda x, i: x[i, :, i], lambda x, i: x[i, :, i]),
    "with_list": (lambda x, i: x[..., [0, 1], i], lambda x, i: x[..., [0, 1], i]),
    "nested_list": (lambda x, i: x[[i[0], i[1]]], lambda x, i: x[[i[0], i[1]]]),
}


@pytest.mark.parametrize("case", sorted(INT_CASES))
def test_index_arrays_of_every_kind(case):
    fn, ref = INT_CASES[case]
    _int_modes(fn, A[:, :, :4], np.array([[3, 0], [-1, 2]]), ref)


def test_index_tensor_of_ndarray_is_a_tensor():
    out = tnp.getitem(A, tp.tensor([1, 0], dtype="int64"))
    assert type(out) is tp.Tensor
    i = tp.input((2,), "int64")
    assert type(tnp.getitem(A, (slice(None), i))) is tp.TracedTensor


def test_index_from_argsort_in_a_trace():
    a = rand((5, 3), seed=73)
    check_modes(lambda x: x[tnp.argsort(x[:, 0])] * 2.0,
                a, ref=lambda x: x[np.argsort(x[:, 0])] * 2.0)


# ------------------------------------------------------------------ gradients

WEIGHTS = rand((3, 2, 6), seed=74)


@pytest.mark.parametrize("mode", GRAD_MODES)
def test_gradient_adds_up_at_repeated_indices(mode):
    index = ([2, 0, 2], slice(None, 4, 2))

    def loss(x):
        return (x[index] * WEIGHTS).sum()
    expected = np.zeros_like(A)
    np.add.at(expected, index, WEIGHTS)
    np.testing.assert_allclose(grad_in(mode, loss, A), expected, rtol=1e-14)


@pytest.mark.parametrize("mode", GRAD_MODES)
def test_gradient_through_a_mask(mode):
    def loss(x):
        return (x[MASK_45] ** 2).sum()
    np.testing.assert_allclose(grad_in(mode, loss, A), 2 * A * MASK_45[:, :, None],
                               rtol=1e-14)


def test_gradient_with_a_traced_index():
    x, i = tp.input(A.shape), tp.input((3,), "int64")
    g = tp.ad.grad(x[:, i].sum(), x)
    expected = np.zeros_like(A)
    np.add.at(expected, (slice(None), [4, 4, 0]), 1.0)
    np.testing.assert_array_equal(tp.evaluate(g, {x: A, i: np.array([4, -1, 0])}), expected)


# ------------------------------------------------------------------ errors

@pytest.mark.parametrize("index", [7, -5, [0, 4], ([1], slice(None), [6]),
                                   (0, 0, 0, 0), np.ones((3, 5), bool), (MASK_6,)])
def test_index_errors_are_index_errors(index):
    x = tp.tensor(A)
    with pytest.raises(IndexError) as excinfo:
        x[index]
    assert isinstance(excinfo.value, IndexingError)
    with pytest.raises(IndexError):
        A[index]


def test_traced_index_out_of_bounds_raises_when_run():
    x, i = tp.input(A.shape), tp.input((2,), "int64")
    y = x[i]
    with pytest.raises(IndexError, match="out of bounds"):
        tp.evaluate(y, {x: A, i: np.array([0, 9])})


@pytest.mark.parametrize("index", [1.5, [0.5, 1.0], np.array([1.0]), "a", {1: 2}])
def test_non_integer_indices_are_refused(index):
    with pytest.raises(TypeError) as excinfo:
        tp.tensor(A)[index]
    assert isinstance(excinfo.value, ArgumentError)


def test_two_ellipses():
    with pytest.raises(IndexError, match="single ellipsis"):
        tp.tensor(A)[..., 0, ...]


def test_traced_mask_is_refused_but_a_constant_mask_is_not():
    x = tp.input(A.shape)
    with pytest.raises(ConcretizationError, match="where"):
        x[x > 0]
    mask = tp.constant(MASK_45)
    np.testing.assert_array_equal(tp.evaluate(x[mask], {x: A}), A[MASK_45])


def test_eager_mask_is_concrete():
    x = tp.tensor(A)
    np.testing.assert_array_equal(np.asarray(x[x > 0]), A[A > 0])


def test_gather_index_dtype_is_checked():
    from tenpy_ad.ops import indexing as ix
    with pytest.raises(DTypeError):
        ix.gather(((("index", 0),), "raise"), tp.input((3,)), tp.input((2,)))


# ------------------------------------------------------------------ take, take_along_axis

TAKE_CASES = [
    dict(indices=[5, 0, 7]),                          # of the flattened array
    dict(indices=[[1, -1], [0, 2]], axis=1),
    dict(indices=3, axis=-1),
    dict(indices=np.array([2, 2], dtype=np.int32), axis=0),
    dict(indices=[7, -9, 3], axis=2, mode="wrap"),
    dict(indices=[[9], [-3]], axis=1, mode="clip"),
    dict(indices=[200, -1], mode="clip"),
    dict(indices=[], axis=1),
]


@pytest.mark.parametrize("kwargs", TAKE_CASES, ids=[str(k) for k in TAKE_CASES])
def test_take(kwargs):
    kwargs = dict(kwargs)
    indices = kwargs.pop("indices")
    check_modes(lambda x: tnp.take(x, indices, **kwargs), A,
                ref=lambda x: np.take(x, indices, **kwargs))


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_take_with_traced_indices(mode):
    index = np.array([[7, -8], [1, 0]])
    if mode == "raise":
        index = index % 4
    _int_modes(lambda x, i: tnp.take(x, i, axis=0, mode=mode), A, index,
               lambda x, i: np.take(x, i, axis=0, mode=mode))


def test_take_method_and_dispatch():
    x = tp.tensor(A)
    assert_matches(x.take([1, 2], axis=1), np.take(A, [1, 2], axis=1), "method")
    assert_matches(np.take(x, [3, 0]), np.take(A, [3, 0]), "np.take")


def test_take_errors():
    x = tp.tensor(A)
    with pytest.raises(IndexError):
        tnp.take(x, [4], axis=0)
    with pytest.raises(ValueError, match="mode"):
        tnp.take(x, [1], mode="drop")
    with pytest.raises(TypeError):
        tnp.take(x, [1.0])
    with pytest.raises(ArgumentError, match="out= is taken by keyword"):
        tnp.take(x, [1], 0, np.zeros(1))
    out = np.zeros(1)
    assert tnp.take(x, [1], out=out) is out                    # NumPy's out=: written
    np.testing.assert_array_equal(out, np.take(A, [1]))


TAKE_ALONG = [
    (np.array([[[0, 5, 5]]]), -1),                   # broadcast over the other axes
    (np.argsort(A, axis=1)[:, :2], 1),
    (np.array([[[3]], [[0]]]), 0),
    (np.array([7, 0, 100, -1]), None),
]


@pytest.mark.parametrize("indices,axis", TAKE_ALONG, ids=["bcast", "argsort", "axis0", "flat"])
def test_take_along_axis(indices, axis):
    check_modes(lambda x: tnp.take_along_axis(x, indices, axis=axis), A,
                ref=lambda x: np.take_along_axis(x, indices, axis=axis))


def test_take_along_axis_traced_indices_and_errors():
    index = np.argsort(A[:, :, :3], axis=-1)
    _int_modes(lambda x, i: tnp.take_along_axis(x, i, -1), A[:, :, :3], index,
               lambda x, i: np.take_along_axis(x, i, -1))
    with pytest.raises(ShapeError, match="same number of dimensions"):
        tnp.take_along_axis(tp.tensor(A), np.zeros((2, 2), int), 0)
    with pytest.raises(IndexError):
        tnp.take_along_axis(tp.tensor(A), np.full((1, 1, 1), 6), 2)


# ------------------------------------------------------------------ x.at[index]

def _reference(name, x, index, values):
    out = np.array(x, copy=True)
    values = np.asarray(values)
    while values.ndim > out[index].ndim:          # leading axes of length 1 go
        values = values[0]
    if name == "set":
        out[index] = values
    else:
        ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum,
                 "max": np.maximum}[name]
        ufunc.at(out, index, np.broadcast_to(values, out[index].shape))
    return out


UPDATES = [
    ([0, 0, 2], rand((3, 5, 6), seed=75)),            # repeated rows
    ((slice(None), [1, 1], 0), rand((4, 2), seed=76)),
    ((1, slice(None), [2, 4]), 0.5),                  # a Python scalar broadcasts
    (MASK_45, rand((6,), seed=77)),                   # a row broadcasts
    ((Ellipsis, 3), rand((1, 4, 5), seed=78)),        # a leading axis of length 1 goes
    ((slice(1, 3), slice(None, None, -2)), rand((2, 3, 6), seed=79)),   # basic index
]


@pytest.mark.parametrize("name", ["set", "add", "multiply", "min", "max"])
@pytest.mark.parametrize("case", range(len(UPDATES)))
def test_at_updates_match_numpy(name, case):
    index, values = UPDATES[case]
    check_modes(lambda x, v: getattr(tnp.index_update(x)[index], name)(v), A,
                values, ref=lambda x, v: _reference(name, x, index, v))


def test_at_is_functional_and_has_get():
    x = tp.tensor(A)
    y = x.at[0, 1].set(7.0)
    assert float(y[0, 1, 0].item()) == 7.0 and np.array_equal(np.asarray(x), A)
    assert_matches(x.at[[1, 0], 2].get(), A[[1, 0], 2], "get")
    assert_matches(x.at[2].mul(2.0), _reference("multiply", A, 2, 2.0), "mul")


def test_at_with_traced_indices():
    index = np.array([3, 0, 3])
    values = rand((3, 5, 6), seed=80)
    _int_modes(lambda x, i: tnp.index_update(x)[i].add(values), A, index,
               lambda x, i: _reference("add", x, i, values))
    _int_modes(lambda x, i: tnp.index_update(x)[:, i].set(2.0), A, index,
               lambda x, i: _reference("set", x, (slice(None), i), 2.0))


def test_at_dtypes():
    x = tp.tensor(A.astype(np.float32))
    y = x.at[0].set(np.full((5, 6), 1e-3))
    assert y.dtype == np.float32                     # values take the array's dtype
    z = tp.tensor(A).at[1].add(1)
    assert z.dtype == np.float64
    with pytest.raises(DTypeError, match="imaginary"):
        tp.tensor(A).at[0].set(1j)
    with pytest.raises(DTypeError, match="ordering"):
        tp.tensor(A + 0j).at[0].max(1.0)
    with pytest.raises(ShapeError, match="indexed shape"):
        tp.tensor(A).at[[0, 1]].add(np.ones(4))
    with pytest.raises(IndexError):
        tp.tensor(A).at[4].set(0.0)


@pytest.mark.parametrize("mode", GRAD_MODES)
def test_set_gradient_follows_the_kept_write(mode):
    """``.set`` with repeated indices keeps the last write (NumPy's order); only the kept
    value receives a derivative, and the overwritten entries of x receive none."""
    weights = np.array([1.0, 10.0, 100.0, 1000.0])

    def loss_v(v):
        return (tnp.index_update(np.arange(4.0))[[2, 0, 2]].set(v) * weights).sum()
    np.testing.assert_allclose(grad_in(mode, loss_v, np.array([1.0, 2.0, 3.0])),
                               [0.0, 1.0, 100.0])

    def loss_x(x):
        return (x.at[[2, 0, 2]].set(np.array([1.0, 2.0, 3.0])) * weights).sum()
    np.testing.assert_allclose(grad_in(mode, loss_x, np.arange(4.0)), [0, 10, 0, 1000])


@pytest.mark.parametrize("mode", GRAD_MODES)
def test_min_max_ties_split_the_derivative(mode):
    """``.max``/``.min``: the derivative is split evenly among the tied candidates (the
    original entry and every value written to it)."""
    def loss(x):
        values = tnp.stack([x[0], x[0], x[1]])           # three candidates for entry 2
        return x.at[[2, 2, 3]].max(values).sum() + x.at[[0]].min(x[1:2]).sum()
    x0 = np.array([1.0, -1.0, 1.0, 5.0])
    # max: entry 2 ties three ways (x[2] and x[0] written twice), entry 3 keeps x[3],
    # entries 0 and 1 pass through; min: entry 0 becomes x[1], the others pass through
    expected = np.array([1 + 2 / 3, 1 + 2, 1 / 3 + 1, 1 + 1])
    np.testing.assert_allclose(grad_in(mode, loss, x0), expected, rtol=1e-14)


def test_multiply_values_derivative_needs_unique_indices():
    t = tp.tensor(A, requires_grad=True)
    y = t.at[[0, 0]].multiply(t[1:3] * 2.0)
    with pytest.raises(NotDifferentiableError, match="reached 2 times"):
        y.sum().backward()
    x, i = tp.input(A.shape), tp.input((2,), "int64")
    g = tp.ad.grad(x.at[i].multiply(x[1:3]).sum(), x)
    np.testing.assert_allclose(tp.evaluate(g, {x: A, i: np.array([0, 3])}),
                               tp.grad(lambda z: z.at[[0, 3]].multiply(z[1:3]).sum())(A))
    with pytest.raises(NotDifferentiableError, match="multiply"):
        tp.evaluate(g, {x: A, i: np.array([0, 0])})


def test_multiply_array_derivative_with_repeats():
    v = np.array([2.0, 3.0])
    g = tp.grad(lambda x: x.at[[1, 1]].multiply(v).sum())(np.ones(3))
    np.testing.assert_allclose(g, [1.0, 6.0, 1.0])


# ------------------------------------------------------------------ nonzero & co

@pytest.mark.parametrize("name", ["nonzero", "argwhere", "flatnonzero"])
def test_nonzero_family(name):
    a = np.where(MASK_45, A[:, :, 0], 0.0)
    expected = getattr(np, name)(a)
    for x in (a, tp.tensor(a), tp.constant(a)):
        got = getattr(tnp, name)(x)
        got = got if isinstance(got, tuple) else (got,)
        ref = expected if isinstance(expected, tuple) else (expected,)
        for g, r in zip(got, ref):
            value = tp.evaluate(g, {}) if type(g) is tp.TracedTensor else np.asarray(g)
            np.testing.assert_array_equal(value, r)
            assert value.dtype == np.int64
    assert_matches(np.asarray(getattr(np, name)(tp.tensor(a))[0]),
                   np.asarray(expected[0]), "dispatch")
    with pytest.raises(ConcretizationError, match=name):
        getattr(tnp, name)(tp.input((3,)))


# ------------------------------------------------------------------ compress, extract, ...

@pytest.mark.parametrize("condition,axis", [([True, False, True, True], 0),
                                            ([False, True], 1), ([1, 0, 0, 1, 1], None),
                                            (np.array([True, False, True]), -1)])
def test_compress(condition, axis):
    check_modes(lambda x: tnp.compress(condition, x, axis=axis), A,
                ref=lambda x: np.compress(condition, x, axis=axis))
    assert_matches(np.compress(tp.tensor(condition, dtype="bool"), tp.tensor(A), axis=axis),
                   np.compress(condition, A, axis=axis), "dispatch, eager condition")


def test_extract_and_errors():
    condition = A[:, :, 0] > 0
    check_modes(lambda x: tnp.extract(condition, x), A[:, :, 0],
                ref=lambda x: np.extract(condition, x))
    assert_matches(tnp.extract(tp.tensor(A) > 0, A), np.extract(A > 0, A), "eager condition")
    with pytest.raises(ConcretizationError, match="compress"):
        tnp.compress(tp.input((4,), "bool"), tp.tensor(A), axis=0)
    with pytest.raises(ShapeError, match="1-d"):
        tnp.compress(np.ones((2, 2), bool), tp.tensor(A))
    with pytest.raises(IndexError):
        tnp.compress([True] * 5, tp.tensor(A), axis=0)


def test_indices_from_shapes():
    square, wide = tp.tensor(A[:, :4, 0]), tp.input((3, 5))
    for name, arr, kwargs in [("diag_indices_from", A[:3, :3, :3], {}),
                              ("tril_indices_from", np.ones((3, 5)), dict(k=1)),
                              ("triu_indices_from", np.ones((4, 4)), dict(k=-1))]:
        for tensor in (tp.tensor(arr), tp.input(arr.shape)):
            got = getattr(np, name)(tensor, **kwargs)
            expected = getattr(np, name)(arr, **kwargs)
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(np.asarray(square[np.triu_indices_from(square)]),
                                  A[:, :4, 0][np.triu_indices(4)])
    with pytest.raises(ValueError):
        np.diag_indices_from(wide)
    with pytest.raises(ValueError):
        np.tril_indices_from(tp.tensor(A))

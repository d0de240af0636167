"""``sort``, ``argsort``, ``partition``, ``argpartition``, ``searchsorted`` and ``unique``
compute what NumPy computes in every mode; sorted values are differentiable along the
permutation (ties: a stable sort), positions are int64 and never differentiated.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad.errors import ArgumentError, ConcretizationError, ShapeError

from modes import GRAD_MODES, assert_matches, check_modes, grad_in
from surface_cases import rand

A = rand((4, 5, 3), seed=81)
TIES = np.array([[3.0, 1.0, 3.0, 0.0, 1.0], [2.0, 2.0, 2.0, -1.0, 5.0]])


@pytest.mark.parametrize("axis", [-1, 0, 1, None])
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_sort_and_argsort(axis, dtype):
    a = A.astype(dtype) if dtype != "complex128" else rand(A.shape, dtype, 82)
    check_modes(lambda x: tnp.sort(x, axis=axis), a, ref=lambda x: np.sort(x, axis=axis))
    check_modes(lambda x: tnp.argsort(x, axis=axis), a,
                ref=lambda x: np.argsort(x, axis=axis))


@pytest.mark.parametrize("kwargs", [dict(kind="stable"), dict(stable=True),
                                    dict(kind="heapsort"), dict(axis=0, kind="mergesort")])
def test_sort_kinds_with_ties(kwargs):
    check_modes(lambda x: tnp.sort(x, **kwargs), TIES, ref=lambda x: np.sort(x, **kwargs))
    if kwargs.get("kind") != "heapsort":          # positions of ties: stable kinds only
        check_modes(lambda x: tnp.argsort(x, **kwargs), TIES,
                    ref=lambda x: np.argsort(x, **kwargs))


def test_sort_methods_and_dispatch():
    x = tp.tensor(A)
    assert_matches(x.argsort(axis=0), np.argsort(A, axis=0), "method")
    assert_matches(np.sort(x, axis=1), np.sort(A, axis=1), "np.sort")
    assert np.argsort(x).dtype == np.int64
    assert not hasattr(tp.Tensor, "sort")           # NumPy's method sorts in place


@pytest.mark.parametrize("mode", GRAD_MODES)
def test_sort_gradient_follows_the_permutation_and_ties_keep_order(mode):
    """Tied entries keep their order: the first 3.0 of the row lands before the second,
    so it receives the weight of the earlier output position."""
    row = TIES[0]                                   # sorted: 0, 1, 1, 3, 3
    weights = np.array([1.0, 10.0, 100.0, 1000.0, 10000.0])
    g = grad_in(mode, lambda x: (tnp.sort(x) * weights).sum(), row)
    # positions: 3.0 (#0) -> 3, 1.0 (#1) -> 1, 3.0 (#2) -> 4, 0.0 (#3) -> 0, 1.0 (#4) -> 2
    np.testing.assert_array_equal(g, [1000.0, 10.0, 10000.0, 1.0, 100.0])


def test_sort_errors():
    with pytest.raises(ShapeError):
        tnp.sort(tp.tensor(1.0))
    with pytest.raises(ArgumentError, match="order"):
        tnp.sort(tp.tensor(A), order="f")
    with pytest.raises(ShapeError):
        tnp.argsort(tp.tensor(A), axis=3)


@pytest.mark.parametrize("kth,axis", [(2, -1), ((0, 3), 1), (-1, 0), (5, None)])
def test_partition(kth, axis):
    check_modes(lambda x: tnp.partition(x, kth, axis=axis), A,
                ref=lambda x: np.partition(x, kth, axis=axis))
    check_modes(lambda x: tnp.argpartition(x, kth, axis=axis), A,
                ref=lambda x: np.argpartition(x, kth, axis=axis))


def test_partition_gradient_and_errors():
    row = np.array([4.0, -2.0, 7.0, 0.5])
    g = tp.grad(lambda x: tnp.partition(x, 1)[1] * 3.0)(row)
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0, 3.0])
    with pytest.raises(ShapeError, match="kth"):
        tnp.partition(tp.tensor(row), 4)
    with pytest.raises(ArgumentError, match="kth"):
        tnp.partition(tp.tensor(row), 1.5)


SORTED = np.array([-1.0, 0.0, 0.0, 2.5, 4.0])


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    values = rand((2, 3), seed=83) * 3
    check_modes(lambda a, v: tnp.searchsorted(a, v, side=side), SORTED, values,
                ref=lambda a, v: np.searchsorted(a, v, side=side))
    check_modes(lambda a: tnp.searchsorted(a, 0.0, side=side), SORTED,
                ref=lambda a: np.searchsorted(a, 0.0, side=side))
    check_modes(lambda v: tnp.searchsorted(SORTED, v, side=side), values,
                ref=lambda v: np.searchsorted(SORTED, v, side=side))


def test_searchsorted_sorter_dtypes_and_errors():
    a = np.array([4.0, -1.0, 2.5])
    sorter = np.argsort(a)
    check_modes(lambda x: tnp.searchsorted(x, [0.0, 3.0], sorter=sorter), a,
                ref=lambda x: np.searchsorted(x, [0.0, 3.0], sorter=sorter))
    got = tnp.searchsorted(tp.tensor(SORTED.astype(np.float32)), np.array([1.0, 3.0]))
    assert_matches(got, np.searchsorted(SORTED, [1.0, 3.0]), "mixed dtypes")
    with pytest.raises(ShapeError, match="1-d"):
        tnp.searchsorted(tp.tensor(A), 0.0)
    with pytest.raises(ValueError, match="side"):
        tnp.searchsorted(tp.tensor(SORTED), 0.0, side="middle")


UNIQUE = np.array([[2.0, 1.0, 2.0], [0.5, 1.0, 2.0], [2.0, 1.0, 2.0]])


@pytest.mark.parametrize("flags", [(False, False, False), (True, False, False),
                                   (True, True, True), (False, True, False)])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_unique(flags, axis):
    expected = np.unique(UNIQUE, *flags, axis=axis)
    for x in (UNIQUE, tp.tensor(UNIQUE)):
        got = tnp.unique(x, *flags, axis=axis)
        if not any(flags):
            got, expected_list = (got,), (expected,)
        else:
            expected_list = expected
        assert len(got) == len(expected_list)
        for g, e in zip(got, expected_list):
            assert_matches(np.asarray(g), e, "unique")
    traced = tnp.unique(tp.constant(UNIQUE), return_counts=True, axis=axis)
    np.testing.assert_array_equal(tp.evaluate(traced[0], {}), np.unique(UNIQUE, axis=axis))


def test_unique_gradient_goes_to_the_first_occurrence():
    def loss(x):
        return (tnp.unique(x) * np.array([1.0, 10.0, 100.0])).sum()
    g = grad_in("eager", loss, UNIQUE)              # unique: 0.5, 1.0, 2.0
    expected = np.zeros_like(UNIQUE)
    expected[1, 0], expected[0, 1], expected[0, 0] = 1.0, 10.0, 100.0
    np.testing.assert_array_equal(g, expected)
    with pytest.raises(ConcretizationError, match="unique"):
        tnp.unique(tp.input((3,)))


def test_lexsort():
    keys = np.array([[1.0, 0.0, 1.0, 0.0, 2.0], TIES[0]])
    check_modes(lambda k: tnp.lexsort(k), keys, ref=np.lexsort)
    check_modes(lambda x, y: tnp.lexsort([x, y]), keys[0], keys[1],
                ref=lambda x, y: np.lexsort([x, y]))
    check_modes(lambda x: tnp.lexsort((x, x[::-1]), axis=0), A[:, 0],
                ref=lambda x: np.lexsort((x, x[::-1]), axis=0))
    with pytest.raises(ShapeError):
        tnp.lexsort(tp.tensor(np.ones(3)))


def test_sort_complex():
    for a in (TIES, rand((3, 4), "complex64", 84)):
        check_modes(tnp.sort_complex, a, ref=np.sort_complex)
    g = tp.grad(lambda x: (tnp.sort_complex(x) * np.arange(3.0)).real.sum())(
        np.array([2.0, 0.5, 1.0]))
    np.testing.assert_array_equal(g, [2.0, 0.0, 1.0])


@pytest.mark.parametrize("bins", [np.array([-1.0, 0.0, 0.5, 2.0]), np.array([2.0, 0.5, 0.0])])
@pytest.mark.parametrize("right", [False, True])
def test_digitize(bins, right):
    values = np.concatenate([rand((6,), seed=85), bins])
    check_modes(lambda x: tnp.digitize(x, bins, right=right), values,
                ref=lambda x: np.digitize(x, bins, right=right))
    assert_matches(tnp.digitize(values, tp.tensor(bins), right), np.digitize(values, bins,
                                                                              right), "bins")
    with pytest.raises(ValueError, match="monotonic"):
        tnp.digitize(tp.tensor(values), [0.0, 2.0, 1.0])
    with pytest.raises(ConcretizationError):
        tnp.digitize(values, tp.input((3,)))

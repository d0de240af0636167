"""Derivatives of the reductions where they need a choice or care: ties of max/min (split
evenly), products and running products with zeros (exact, no division), NaN entries of the
nan* functions (zero), std at zero spread (zero), logsumexp with huge and infinite entries;
and the errors that bad arguments raise."""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad.errors import (ArgumentError, DTypeError, NotDifferentiableError, ShapeError,
                             UnsupportedError)
from tenpy_ad.testing import check_grads

from modes import GRAD_MODES, check_modes, grad_in
from surface_cases import rand


def assert_grad(loss_fn, a, expected):
    for mode in GRAD_MODES:
        np.testing.assert_allclose(grad_in(mode, loss_fn, np.asarray(a, dtype=float)),
                                   expected, rtol=1e-12, atol=1e-12, err_msg=mode)


# ------------------------------------------------------------------ subgradients

def test_max_min_ties_split_evenly():
    a = [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]
    assert_grad(lambda x: tnp.max(x, axis=1).sum(), a, [[0, 0.5, 0.5], [1 / 3] * 3])
    assert_grad(lambda x: x.min(), a, [[1.0, 0, 0], [0, 0, 0]])
    assert_grad(lambda x: tnp.amin(x, axis=0).sum(), [[1.0, 2.0, 2.0], [1.0, 3.0, 2.0]],
                [[0.5, 1, 0.5], [0.5, 0, 0.5]])
    assert_grad(lambda x: tnp.ptp(x, axis=1).sum(), a, [[-1, 0.5, 0.5], [0, 0, 0]])


def test_median_middle_entries_and_ties():
    assert_grad(lambda x: tnp.median(x), [3.0, 1.0, 2.0], [0, 0, 1])
    assert_grad(lambda x: tnp.median(x), [4.0, 1.0, 2.0, 3.0], [0, 0, 0.5, 0.5])
    assert_grad(lambda x: tnp.median(x), [2.0, 1.0, 2.0, 3.0], [0.5, 0, 0.5, 0])
    assert_grad(lambda x: tnp.median(x, axis=0).sum(), [[1.0, 5.0], [2.0, 0.0], [3.0, 1.0]],
                [[0, 0], [1, 0], [0, 1]])


def test_max_initial_takes_part_in_ties():
    a = [[0.5, -1.0], [-2.0, -3.0]]
    assert_grad(lambda x: tnp.max(x, axis=1, initial=0.5).sum(), a,
                [[0.5, 0], [0, 0]])


def test_nan_entries_get_zero_derivative():
    a = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        assert_grad(lambda x: tnp.nanmax(x, axis=1)[0], a, [[0, 0, 1], [0, 0, 0]])
    with np.errstate(invalid="ignore"):
        assert_grad(lambda x: tnp.nansum(x * 2.0), a, [[2, 0, 2], [0, 0, 0]])
        assert_grad(lambda x: tnp.nanmean(x, axis=1)[0], a, [[0.5, 0, 0.5], [0, 0, 0]])
        assert_grad(lambda x: tnp.nanmin(x[0]), a, [[1, 0, 0], [0, 0, 0]])


def test_nanmax_all_nan_slice_gives_zero_gradient():
    a = np.array([[1.0, 2.0], [np.nan, np.nan]])
    x = tp.tensor(a, requires_grad=True)
    with pytest.warns(RuntimeWarning):
        tnp.nanmax(x, axis=1).backward(np.ones(2))
    np.testing.assert_array_equal(x.grad, [[0, 1], [0, 0]])


def test_std_at_zero_spread_has_zero_derivative():
    assert_grad(lambda x: tnp.std(x), [2.0, 2.0, 2.0], [0, 0, 0])
    assert_grad(lambda x: x.std(axis=1).sum(), [[1.0, 1.0], [1.0, 3.0]], [[0, 0], [-0.5, 0.5]])


# ------------------------------------------------------------------ zeros in products

WITH_ZEROS = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 5.0], [1.5, -2.0, 3.0]])


def test_prod_gradient_with_zeros_is_exact():
    expected = [[6.0, 0, 0], [0, 0, 0], [-6.0, 4.5, -3.0]]
    assert_grad(lambda x: tnp.prod(x, axis=1).sum(), WITH_ZEROS, expected)
    assert_grad(lambda x: x.prod(), np.array([2.0, 0.0, 4.0]), [0, 8.0, 0])


@pytest.mark.parametrize("fn", [lambda x: tnp.prod(x, axis=1),
                                lambda x: tnp.prod(x, axis=(0, 1)),
                                lambda x: tnp.cumprod(x, axis=1),
                                lambda x: tnp.cumprod(x, axis=0) * x],
                         ids=["prod_axis", "prod_all", "cumprod_axis", "cumprod_times_x"])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_products_with_zeros_second_order(fn, dtype):
    a = WITH_ZEROS.astype(dtype) * (1.0 + 0.5j if dtype == "complex128" else 1.0)
    check_grads(fn, [a], order=2, eager=True, rng=np.random.default_rng(0))


def test_cumprod_gradient_with_a_zero():
    # d/dx sum(cumprod(x)) for x = (2, 0, 3): 1 + x1 + x1 x2 = 1 ; x0 + x0 x2 = 8 ; x0 x1 = 0
    assert_grad(lambda x: tnp.cumprod(x).sum(), [2.0, 0.0, 3.0], [1.0, 8.0, 0.0])


# ------------------------------------------------------------------ logsumexp

def softmax(a, axis):
    e = np.exp(a - np.max(a, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_logsumexp_gradient_is_softmax_for_huge_entries():
    a = rand((3, 4), seed=1) * 1000.0
    assert_grad(lambda x: tnp.logsumexp(x, axis=1).sum(), a, softmax(a, 1))


def test_logsumexp_gradient_with_minus_infinity():
    a = np.array([[-np.inf, 0.0, np.log(3.0)], [-np.inf, -np.inf, 5.0]])
    assert_grad(lambda x: tnp.logsumexp(x, axis=1).sum(), a,
                [[0, 0.25, 0.75], [0, 0, 1.0]])


def test_logsumexp_weights_gradient():
    a, b = rand((2, 3), seed=2), rand((2, 3), seed=3, positive=True)
    s = (b * np.exp(a)).sum(axis=1, keepdims=True)
    assert_grad(lambda x: tnp.logsumexp(x, axis=1, b=b).sum(), a, b * np.exp(a) / s)
    assert_grad(lambda w: tnp.logsumexp(a, axis=1, b=w).sum(), b, np.exp(a) / s)


# ------------------------------------------------------------------ errors

@pytest.fixture(params=["eager", "traced"])
def tensor(request):
    def make(a):
        a = np.asarray(a)
        return tp.tensor(a) if request.param == "eager" else tp.input(a.shape, a.dtype)
    return make


def test_complex_order_is_refused(tensor):
    z = tensor(np.ones(3, dtype=complex))
    for fn in [tnp.max, tnp.min, tnp.amax, tnp.ptp, tnp.nanmax, lambda t: t.min()]:
        with pytest.raises(DTypeError, match="no order"):
            fn(z)


def test_bad_axes_and_empty_reductions(tensor):
    x = tensor(np.ones((2, 3)))
    with pytest.raises(ShapeError, match="axis 2 is out of range"):
        tnp.mean(x, axis=2)
    with pytest.raises(ShapeError, match="repeated axis"):
        tnp.sum(x, axis=(1, -1))
    with pytest.raises(ShapeError, match="axis -3 is out of range"):
        tnp.cumsum(x, axis=-3)
    empty = tensor(np.ones((0, 3)))
    with pytest.raises(ShapeError, match="max: zero-size reduction"):
        tnp.max(empty, axis=0)
    with pytest.raises(ShapeError, match="empty sequence"):
        tnp.argmin(empty, axis=0)


def test_out_writes_a_tensor_and_refuses_what_would_drop_a_gradient():
    x = tp.tensor(np.ones((2, 3)), requires_grad=True)
    t = tp.tensor(np.zeros(3))
    assert np.sum(x, axis=0, out=t) is t
    np.testing.assert_array_equal(t.data, [2.0, 2.0, 2.0])
    with pytest.raises(NotDifferentiableError, match=r"np\.sum\(\.\.\., out=\.\.\.\)"):
        np.sum(x, axis=0, out=np.zeros(3))      # an ndarray would drop the gradient
    with pytest.raises(NotDifferentiableError, match="drop its gradient"):
        np.sum(tp.input((2, 3)), axis=0, out=np.zeros(3))
    with pytest.raises(NotDifferentiableError, match="traced.*drop its gradient"):
        np.sum(x, axis=0, out=np.zeros_like(tp.input((3,))))


def test_unsupported_arguments_are_refused(tensor):
    x = tensor(np.ones((2, 3)))
    with pytest.raises(ArgumentError, match="out= is taken by keyword"):
        tnp.sum(x, 0, None, np.zeros(3))
    with pytest.raises(ArgumentError, match="where= is not supported"):
        tnp.mean(x, where=np.ones((2, 3), bool))
    with pytest.raises(ValueError, match="ddof and correction"):
        tnp.var(x, ddof=1, correction=1)
    with pytest.raises(ValueError, match="order must be a non-negative"):
        tnp.diff(x, n=-1)
    with pytest.raises(ValueError, match="at least one dimensional"):
        tnp.diff(tensor(np.float64(1.0)))
    with pytest.raises(ArgumentError, match="axis must be specified"):
        tnp.average(x, weights=np.ones(3))
    with pytest.raises(ShapeError, match="shape of weights"):
        tnp.average(x, axis=1, weights=np.ones(2))


def test_weights_summing_to_zero():
    with pytest.raises(ZeroDivisionError, match="weights sum to zero"):
        tnp.average(tp.tensor(np.ones((2, 2))), axis=0, weights=np.array([1.0, -1.0]))


# ------------------------------------------------------------------ trapezoid

def _trapezoid_weights(points, axis):
    """d trapezoid(y, points) / dy: half of each neighbouring spacing along ``axis``."""
    spacing = np.moveaxis(np.diff(points, axis=axis), axis, -1)
    weights = np.zeros(spacing.shape[:-1] + (spacing.shape[-1] + 1,))
    weights[..., :-1] += spacing / 2
    weights[..., 1:] += spacing / 2
    return np.moveaxis(weights, -1, axis)


@pytest.mark.parametrize("points", ["dx", "x_1d", "x_full", "axis_0"])
def test_trapezoid_matches_numpy_and_its_derivatives(points):
    """Values against NumPy in every mode; derivatives in ``y`` (the rule's weights) and in
    the sample points ``x``."""
    y = rand((3, 5), seed=1)
    x = np.sort(rand((5,), seed=2))
    kwargs, grid = {"dx": ({"dx": 0.3}, np.arange(5) * 0.3),
                    "x_1d": ({"x": x}, x),
                    "x_full": ({"x": np.sort(y, axis=1)}, np.sort(y, axis=1)),
                    "axis_0": ({"x": x[:3], "axis": 0}, x[:3, None])}[points]
    axis = kwargs.get("axis", -1)
    check_modes(lambda a: np.trapezoid(a, **kwargs), y)
    expected = np.broadcast_to(_trapezoid_weights(np.broadcast_to(grid, y.shape), axis), y.shape)
    assert_grad(lambda a: np.trapezoid(a, **kwargs).sum(), y, expected)
    if "x" in kwargs:
        check_grads(lambda t: tnp.trapezoid(y, t, axis=axis).sum(), [kwargs["x"]])

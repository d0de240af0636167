"""The reductions, scans and statistics of tenpy_ad.numpy compute what NumPy (and SciPy's
logsumexp) compute, in every mode: axes (None, int, negative, tuple), keepdims, dtypes,
the tensor methods, NumPy's own functions and ufunc reductions on tensors, lists of
tensors and Python scalars."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest
import scipy.special

import tenpy_ad as tp
import tenpy_ad.numpy as tnp

from modes import TENSOR_MODES, assert_matches, check_modes, run
from surface_cases import rand

AXES = [None, 0, -1, (0, 2), (2, -3)]

#: name -> the dtypes it is checked in (max/min order real values only)
REDUCTIONS = {
    "sum": ("float64", "complex128", "int64", "bool"),
    "prod": ("float64", "complex128", "int64"),
    "mean": ("float64", "float32", "complex128", "int64"),
    "var": ("float64", "complex128", "int64"),
    "std": ("float64", "float32", "complex128"),
    "max": ("float64", "float32", "int64", "bool"),
    "min": ("float64", "int64"),
    "amax": ("float64",),
    "amin": ("float64",),
    "ptp": ("float64", "int64"),
    "all": ("float64", "complex128", "bool"),
    "any": ("float64", "int64", "bool"),
    "count_nonzero": ("float64", "complex128", "bool"),
    "nansum": ("float64", "complex128", "int64"),
    "nanmean": ("float64", "float32"),
    "nanmax": ("float64",),
    "nanmin": ("float64",),
    "median": ("float64", "int64"),
}
CASES = [(name, dtype) for name, dtypes in REDUCTIONS.items() for dtype in dtypes]


def data(shape, dtype, seed=0):
    """Random values of ``dtype`` with ties and zeros for the integer and bool kinds."""
    if dtype == "bool":
        return rand(shape, seed=seed) > 0
    if dtype == "int64":
        return np.round(rand(shape, seed=seed) * 3).astype(np.int64)
    return rand(shape, dtype, seed)


@pytest.mark.parametrize("name,dtype", CASES, ids=[f"{n}-{d}" for n, d in CASES])
def test_reduction_axes_and_keepdims(name, dtype):
    a = data((2, 3, 4), dtype, seed=1)
    for axis in AXES:
        for keepdims in (False, True):
            check_modes(lambda x: getattr(tnp, name)(x, axis=axis, keepdims=keepdims), a,
                        ref=lambda x: getattr(np, name)(x, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool", "complex128"])
def test_arg_reductions(name, dtype):
    a = data((2, 3, 4), dtype, seed=2)
    for axis in [None, 0, 1, -1]:
        for keepdims in (False, True):
            check_modes(lambda x: getattr(tnp, name)(x, axis=axis, keepdims=keepdims), a,
                        ref=lambda x: getattr(np, name)(x, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "int64", "bool"])
def test_scans(name, dtype):
    a = data((2, 3, 4), dtype, seed=3)
    for axis in [None, 0, 1, -1]:
        check_modes(lambda x: getattr(tnp, name)(x, axis=axis), a,
                    ref=lambda x: getattr(np, name)(x, axis=axis))
    check_modes(lambda x: getattr(tnp, name)(x, axis=1, dtype="complex128"), a,
                ref=lambda x: getattr(np, name)(x, axis=1, dtype="complex128"))
    check_modes(lambda x: getattr(tnp, name)(x), a[0, 0, 0], ref=getattr(np, name))


def test_dtype_arguments():
    a = data((3, 4), "float64", seed=4)
    for name in ["sum", "prod", "mean", "var", "std", "nansum", "nanmean"]:
        check_modes(lambda x: getattr(tnp, name)(x, axis=0, dtype="float32"), a,
                    ref=lambda x: getattr(np, name)(x, axis=0, dtype="float32"))
    check_modes(lambda x: tnp.sum(x, dtype="float64"), data((3, 4), "bool"),
                ref=lambda x: np.sum(x, dtype="float64"))


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "nansum", "nanmax"])
def test_initial(name):
    a = data((3, 4), "float64", seed=5)
    check_modes(lambda x: getattr(tnp, name)(x, axis=1, initial=0.5), a,
                ref=lambda x: getattr(np, name)(x, axis=1, initial=0.5))
    if name in ("max", "min", "nanmax"):        # an empty reduction needs the initial value
        empty = np.zeros((0, 3))
        check_modes(lambda x: getattr(tnp, name)(x, axis=0, initial=2.0), empty,
                    ref=lambda x: getattr(np, name)(x, axis=0, initial=2.0))


@pytest.mark.parametrize("ddof", [0, 1, 2.5, 5])
def test_var_std_ddof(ddof):
    a = data((4, 3), "complex128", seed=6)
    with np.errstate(divide="ignore", invalid="ignore"):
        for name in ["var", "std"]:
            with pytest.warns(RuntimeWarning) if ddof >= 4 else contextlib.nullcontext():
                check_modes(lambda x: getattr(tnp, name)(x, axis=0, ddof=ddof), a,
                            ref=lambda x: getattr(np, name)(x, axis=0, ddof=ddof))


def test_var_correction_and_mean_arguments():
    a = data((4, 3), "float64", seed=7)
    centre = a.mean(axis=0, keepdims=True)
    check_modes(lambda x: tnp.var(x, axis=0, correction=1), a,
                ref=lambda x: np.var(x, axis=0, correction=1))
    check_modes(lambda x: tnp.std(x, axis=0, mean=centre), a,
                ref=lambda x: np.std(x, axis=0, mean=centre))


def test_empty_slices_as_numpy():
    a = np.zeros((0, 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        for name in ["sum", "prod", "all", "any", "nansum", "count_nonzero"]:
            check_modes(lambda x: getattr(tnp, name)(x, axis=0), a,
                        ref=lambda x: getattr(np, name)(x, axis=0))
        with pytest.warns(RuntimeWarning):
            check_modes(lambda x: tnp.mean(x, axis=0), a, ref=lambda x: np.mean(x, axis=0))


def test_methods():
    a = data((3, 4), "float64", seed=8)
    for method in [lambda x: x.sum(1), lambda x: x.mean(0), lambda x: x.prod(),
                   lambda x: x.var(None, None, None, 1), lambda x: x.std(axis=1, keepdims=True),
                   lambda x: x.min(), lambda x: x.max(1), lambda x: x.cumsum(0),
                   lambda x: x.cumprod(), lambda x: x.all(), lambda x: x.any(0),
                   lambda x: x.argmax(), lambda x: x.argmin(1, keepdims=True)]:
        check_modes(method, a)


def test_numpy_functions_and_ufunc_reductions_dispatch():
    a = data((3, 4), "float64", seed=9)
    for fn in [lambda x: np.sum(x, axis=0), lambda x: np.mean(x), lambda x: np.var(x, ddof=1),
               lambda x: np.cumprod(x, axis=1), lambda x: np.diff(x, axis=0),
               lambda x: np.average(x, axis=1, weights=np.arange(1.0, 5.0)),
               lambda x: np.add.reduce(x, axis=1), lambda x: np.add.reduce(x),
               lambda x: np.multiply.reduce(x, axis=None), lambda x: np.maximum.reduce(x),
               lambda x: np.minimum.reduce(x, axis=1, keepdims=True),
               lambda x: np.fmax.reduce(x), lambda x: np.add.accumulate(x),
               lambda x: np.multiply.accumulate(x, axis=1),
               lambda x: np.logical_or.reduce(x > 0), lambda x: np.nanmax(x, axis=1)]:
        check_modes(fn, a)
    t = tp.tensor(a)
    assert type(np.add.reduce(t, axis=0)) is tp.Tensor


def test_lists_of_tensors_are_stacked_differentiably():
    x = tp.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    loss = tnp.sum([x, 2.0 * x], axis=0).sum() + tnp.max([x[0], x[2]]) + tnp.mean([x, x])
    loss.backward()
    np.testing.assert_allclose(x.grad, [3.0 + 1.0 / 3, 3.0 + 1.0 / 3, 4.0 + 1.0 / 3])


def test_plain_values_give_numpy_results():
    assert tnp.sum([1, 2, 3]) == 6 and type(tnp.sum([1, 2, 3])) is np.int64
    assert tnp.mean(3.0) == 3.0
    assert tnp.count_nonzero([0, 1, 2]) == np.count_nonzero([0, 1, 2])
    np.testing.assert_array_equal(tnp.cumsum([[1, 2], [3, 4]]), [1, 3, 6, 10])
    np.testing.assert_array_equal(tnp.diff([1, 4, 9], prepend=0), [1, 3, 5])


def test_python_scalars_and_float32_promotion():
    a = data((3, 4), "float32", seed=10)
    check_modes(lambda x: tnp.sum(x, axis=0, initial=1), a,
                ref=lambda x: np.sum(x, axis=0, initial=1))
    check_modes(lambda x: tnp.diff(x, append=0.5), a, ref=lambda x: np.diff(x, append=0.5))
    check_modes(lambda x: tnp.diff(x, axis=0, prepend=0), a,
                ref=lambda x: np.diff(x, axis=0, prepend=0))


# ------------------------------------------------------------------ diff, average

@pytest.mark.parametrize("dtype", ["float64", "complex128", "int64", "bool"])
def test_diff(dtype):
    a = data((3, 4), dtype, seed=11)
    for n in [0, 1, 2, 5]:
        for axis in [0, -1]:
            check_modes(lambda x: tnp.diff(x, n=n, axis=axis), a,
                        ref=lambda x: np.diff(x, n=n, axis=axis))
    edge = data((3, 2), dtype, seed=12)
    check_modes(lambda x, e: tnp.diff(x, prepend=e, append=e), a, edge,
                ref=lambda x, e: np.diff(x, prepend=e, append=e))


def test_average():
    a = data((2, 3, 4), "float64", seed=13)
    w3, w_axis, w_pair = rand((2, 3, 4), seed=14, positive=True), \
        rand((3,), seed=15, positive=True), rand((4, 2), seed=16, positive=True)
    for kwargs in [{}, {"axis": 1}, {"axis": (0, 2), "keepdims": True}, {"weights": w3},
                   {"axis": 1, "weights": w_axis}, {"axis": (2, 0), "weights": w_pair},
                   {"axis": -2, "weights": w_axis, "keepdims": True}]:
        for returned in (False, True):
            check_modes(lambda x: tnp.average(x, returned=returned, **kwargs), a,
                        ref=lambda x: np.average(x, returned=returned, **kwargs))
    check_modes(lambda w: tnp.average(a, axis=1, weights=w), w_axis,
                ref=lambda w: np.average(a, axis=1, weights=w))
    check_modes(lambda x: tnp.average(x, axis=0, weights=[1, 2]), data((2, 3), "int64"),
                ref=lambda x: np.average(x, axis=0, weights=[1, 2]))


# ------------------------------------------------------------------ logsumexp

LSE_INPUTS = {
    "normal": rand((3, 4), seed=17),
    "large": rand((3, 4), seed=18) * 1000.0,
    "infinite": np.array([[0.0, -np.inf, 1.0, 2.0], [-np.inf] * 4, [np.inf, 1.0, 2.0, 3.0]]),
    "complex": rand((3, 4), "complex128", seed=19),
    "float32": rand((3, 4), "float32", seed=20),
}


def check_with_nonfinite(fn, *arrays, ref):
    """Every mode against ``ref``, where infinities and NaNs must match exactly."""
    expected = ref(*arrays)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for mode in ("numpy",) + TENSOR_MODES:
        got = run(fn, mode, *arrays)
        for g, e in zip(got if isinstance(got, tuple) else (got,), expected):
            e = np.asarray(e)
            assert g.shape == e.shape and g.dtype == e.dtype, f"{mode} mode"
            rtol = 2e-6 if e.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol, err_msg=f"{mode} mode")


@pytest.mark.parametrize("kind", LSE_INPUTS)
def test_logsumexp_matches_scipy(kind):
    a = LSE_INPUTS[kind]
    b = rand((3, 4), seed=21)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for kwargs in [{}, {"axis": 1}, {"axis": (0, 1), "keepdims": True},
                       {"axis": 0, "b": np.abs(b)}, {"axis": -1, "b": b},
                       {"axis": 1, "b": b, "return_sign": True}, {"return_sign": True}]:
            check_with_nonfinite(lambda x: tnp.logsumexp(x, **kwargs), a,
                                 ref=lambda x: scipy.special.logsumexp(x, **kwargs))


def test_logsumexp_weights_as_tensors_and_zero_weights():
    a = np.array([[np.inf, 1.0, 2.0], [1000.0, 1.0, 0.0]])
    b = np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 1.0]])          # b = 0 leaves a term out
    check_with_nonfinite(lambda x, w: tnp.logsumexp(x, axis=1, b=w), a, b,
                         ref=lambda x, w: scipy.special.logsumexp(x, axis=1, b=w))
    check_with_nonfinite(lambda w: tp.scipy.special.logsumexp(a, b=w, return_sign=True), -b,
                         ref=lambda w: scipy.special.logsumexp(a, b=w, return_sign=True))


def test_logsumexp_names():
    assert tp.scipy.special.logsumexp is tnp.logsumexp
    for mode in TENSOR_MODES:
        np.testing.assert_allclose(run(lambda x: tnp.logsumexp(x), mode, np.zeros(4)),
                                   np.log(4.0))

"""Comparisons, ``clip`` and ``where`` compute what NumPy computes in every mode: every
argument form, promotion, broadcasting, complex (lexicographic) ordering; the
one-argument ``where`` (``nonzero``) on concrete values and its refusal in a trace.
(The binary comparisons are also in tests/test_numpy_elementwise.py's ufunc table.)"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad.errors import ConcretizationError

from elementwise_cases import DTYPES, check, sample
from modes import TENSOR_MODES, run

# each form is written once, for a module ``m``: tenpy_ad.numpy, or NumPy as the reference
CLIP_FORMS = {
    "scalars": lambda m, a, lo, hi: m.clip(a, -0.5, 0.7),
    "arrays": lambda m, a, lo, hi: m.clip(a, lo, hi),
    "lower_only": lambda m, a, lo, hi: m.clip(a, lo, None),
    "upper_only": lambda m, a, lo, hi: m.clip(a, None, hi),
    "keywords": lambda m, a, lo, hi: m.clip(a, min=lo, max=0.5),
    "max_keyword": lambda m, a, lo, hi: m.clip(a, max=hi),
    "no_bounds": lambda m, a, lo, hi: m.clip(a) * 1,
    "crossed": lambda m, a, lo, hi: m.clip(a, hi + 1, lo),
    "method": lambda m, a, lo, hi: a.clip(lo, hi),
    "numpy": lambda m, a, lo, hi: np.clip(a, lo, 0.3),
}


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize("form", sorted(CLIP_FORMS))
def test_clip_matches_numpy(form, dtype):
    fn = CLIP_FORMS[form]
    a = sample("any", dtype, (3, 4), 1)
    lo = sample("any", dtype, (4,), 2) * 0.3
    hi = sample("any", dtype, (3, 1), 3) * 0.3 + 0.5
    check(lambda *xs: fn(tnp, *xs), a, lo, hi, ref=lambda *xs: fn(np, *xs))


def test_clip_promotes_and_broadcasts_like_numpy():
    ints = np.arange(-3, 4)
    check(lambda a: tnp.clip(a, 1.5, 3), ints, ref=lambda a: np.clip(a, 1.5, 3))
    f32 = np.linspace(-1, 1, 5, dtype=np.float32)
    check(lambda a: tnp.clip(a, -0.5, 0.5), f32, ref=lambda a: np.clip(a, -0.5, 0.5))
    check(lambda a: tnp.clip(a, np.float64(-0.5), 0.5), f32,
          ref=lambda a: np.clip(a, np.float64(-0.5), 0.5))
    check(lambda a: tnp.clip(0.25, a, 1.0), f32, ref=lambda a: np.clip(0.25, a, 1.0))
    nans = np.array([np.nan, 0.1, 2.0])
    check(lambda a: tnp.clip(a, 0.0, 1.0), nans, ref=lambda a: np.clip(a, 0.0, 1.0))


def test_clip_argument_errors_are_numpy_s():
    x = tp.tensor(np.ones(3))
    with pytest.raises(TypeError, match="a_max"):
        tnp.clip(x, 0.5)
    with pytest.raises(ValueError, match="min= or max="):
        tnp.clip(x, 0.0, 1.0, min=0.5)


# ------------------------------------------------------------------ where

WHERE_FORMS = {
    "tensors": lambda m, c, x, y: m.where(c > 0, x, y),
    "scalar_other": lambda m, c, x, y: m.where(c > 0, x, 0.0),
    "scalar_first": lambda m, c, x, y: m.where(c < 0, -1, y),
    "float_condition": lambda m, c, x, y: m.where(c, x, y),
    "plain_condition": lambda m, c, x, y: m.where(np.array([True, False, True, False]), x, y),
    "numpy": lambda m, c, x, y: np.where(c > 0, x, y * 2),
    "list": lambda m, c, x, y: m.where([True, False, True, True], x, y),
}


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "int64", "bool"])
@pytest.mark.parametrize("form", sorted(WHERE_FORMS))
def test_where_matches_numpy(form, dtype):
    fn = WHERE_FORMS[form]
    c = sample("any", "float64", (3, 1), 4)
    x, y = sample("any", dtype, (3, 4), 5), sample("any", dtype, (4,), 6)
    check(lambda *xs: fn(tnp, *xs), c, x, y, ref=lambda *xs: fn(np, *xs))


def test_where_promotes_its_operands():
    f32, ints = np.ones(3, np.float32), np.arange(3)
    check(lambda x, y: tnp.where(x > 0, x, y), f32, ints,
          ref=lambda x, y: np.where(x > 0, x, y))
    check(lambda x: tnp.where(x > 0, x, 2.5), f32, ref=lambda x: np.where(x > 0, x, 2.5))


def test_where_needs_both_or_neither_operand():
    with pytest.raises(ValueError, match="both or neither"):
        tnp.where(tp.tensor(np.ones(2)) > 0, 1.0)


def test_one_argument_where_is_nonzero_on_concrete_values():
    a = np.array([[0.0, 1.5], [2.0, 0.0]])
    for mode in ("numpy", "eager"):
        got = run(lambda x: tnp.where(x > 1), mode, a)
        for g, e in zip(got, np.nonzero(a > 1)):
            np.testing.assert_array_equal(g, e)
            assert g.dtype == e.dtype
    with pytest.raises(ConcretizationError, match="nonzero"):
        tnp.where(tp.input((2, 2)) > 1)
    with pytest.raises(ConcretizationError, match="nonzero"):
        np.where(tp.input((2, 2)) > 1)


# ------------------------------------------------------------------ comparisons

@pytest.mark.parametrize("dtype", DTYPES)
def test_comparison_operators(dtype):
    a, b = sample("small", dtype, (3, 1), 7), sample("small", dtype, (4,), 8)
    for fn in (lambda x, y: x == y, lambda x, y: x != y, lambda x, y: x < y,
               lambda x, y: x <= y, lambda x, y: x > y, lambda x, y: x >= y,
               lambda x, y: x == 1, lambda x, y: 2.5 > y, lambda x, y: (x < y) & (y >= 1)):
        check(fn, a, b, ref=fn)


def test_complex_numbers_are_ordered_lexicographically_as_numpy_does():
    a = np.array([1 + 2j, 1 - 1j, 0 + 5j, 2 + 0j])
    b = np.array([1 + 1j, 1 - 1j, 1 + 0j, 2 + 0j])
    for fn in (lambda m, x, y: x < y, lambda m, x, y: x >= y,
               lambda m, x, y: m.maximum(x, y), lambda m, x, y: m.minimum(x, y)):
        check(lambda *xs: fn(tnp, *xs), a, b, ref=lambda *xs: fn(np, *xs))


def test_maximum_minimum_propagate_nan_and_fmax_fmin_ignore_it():
    a, b = np.array([np.nan, 1.0, np.nan, 3.0]), np.array([0.5, np.nan, np.nan, 1.0])
    for name in ("maximum", "minimum", "fmax", "fmin"):
        check(getattr(tnp, name), a, b, ref=getattr(np, name))


def test_comparisons_of_tensors_are_elementwise_and_not_recorded():
    x = tp.tensor(np.arange(3.0), requires_grad=True)
    mask = x == 1.0
    assert mask.dtype == np.bool_ and not mask.requires_grad
    np.testing.assert_array_equal(mask.numpy(), [False, True, False])
    for mode in TENSOR_MODES:
        assert run(lambda v: v > 0, mode, np.arange(3.0)).dtype == np.bool_

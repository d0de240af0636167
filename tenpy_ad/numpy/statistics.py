"""Statistics over axes: ``mean``, ``average``, ``var``, ``std``, ``median``, the
NaN-ignoring ``nansum``/``nanmean``/``nanmax``/``nanmin``, and SciPy's ``logsumexp``.

NumPy's signatures and dtypes (integers and booleans average in float64; the variance of
complex values is real).  Subgradients: ``std`` where all entries of a slice are equal
(zero spread) has derivative 0, the choice ``tp.linalg.norm`` makes at 0; NaN entries of
the ``nan*`` functions have derivative 0; ``nanmax``/``nanmin`` split the derivative
evenly among ties as ``max``/``min`` do, and ``median`` among the entries tied with a
middle value.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .. import dtypes
from ..errors import ArgumentError, ArgumentValueError, ShapeError
from ..ops import elementwise as ew
from ..ops import reductions as red
from ..ops import structural as st
from ..ops.indexing import concrete_value
from ..primitive import code_of_value, shape_of
from ._arrays import as_array, tensor_or_array
from ._dispatch import implements
from ._operands import broadcast_shapes, common, normalize_axes, normalize_axis, result_code
from ._operands import value_like
from ._ufuncs import new_result
from .arithmetic import add, divide, multiply, subtract
from .reductions import (NO_VALUE, accumulating, extremum, filled, keep_dims, ordered,
                         reduced_size, refuse_out_where)
from .reductions import sum as _sum
from .transcendental import log


def inexact(x, dtype=None):
    """``x`` in ``dtype`` if given, else in float64 if it holds booleans or integers."""
    if dtype is not None:
        return ew.convert(x, dtypes.code_of(dtype))
    code = code_of_value(x)
    return x if dtypes.is_inexact(code) else ew.convert(x, dtypes.FLOAT64)


def _common_inexact(name: str, *values) -> list:
    """``values`` (tensors or array-likes) in their common inexact dtype and one mode
    (so that a result computed from the array-likes alone is a tensor too)."""
    values = [tensor_or_array(v, name) for v in values]
    code = result_code(name, *values)
    xs = common(name, *values, code=code if dtypes.is_inexact(code) else dtypes.FLOAT64)
    tensor = next((x for x in xs if not isinstance(x, np.ndarray)), None)
    return [value_like(tensor, x) if isinstance(x, np.ndarray) else x for x in xs]


def _statistic_operand(name: str, a, axis, dtype=None, out=None, where=True) -> tuple:
    """``a`` in the floating dtype a statistic computes in, its shape and the reduced axes
    (``out=`` and ``where=`` are refused)."""
    refuse_out_where(name, out, where)
    x = inexact(tensor_or_array(a, name), dtype)
    shape = shape_of(x)
    return x, shape, normalize_axes(name, axis, len(shape))


def _mean(x, axes: tuple):
    n = reduced_size(shape_of(x), axes)
    return ew.scale(st.reduce_sum(x, axes), 1.0 / n if n else math.nan)


# ------------------------------------------------------------------ mean, average

@implements("numpy.mean")
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Arithmetic mean over ``axis`` (NaN for an empty slice, as NumPy)."""
    x, shape, axes = _statistic_operand("mean", a, axis, dtype, out, where)
    return new_result(keep_dims(_mean(x, axes), shape, axes, keepdims), (x, a))


def _weights_along(w, shape: tuple, axis) -> tuple:
    """The weights shaped to broadcast against ``a`` (NumPy's rules), and the axes."""
    if axis is None:
        if shape_of(w) != shape:
            raise ArgumentError("average: axis must be specified when shapes of a and "
                                "weights differ")
        return w, None
    given = tuple(normalize_axis("average", ax, len(shape))
                  for ax in ((axis,) if np.ndim(axis) == 0 else axis))
    if shape_of(w) != shape:
        if shape_of(w) != tuple(shape[ax] for ax in given):
            raise ShapeError("average: shape of weights must be consistent with shape of "
                             "a along the specified axis")
        w = st.transpose(w, tuple(int(i) for i in np.argsort(given)))
        w = st.reshape(w, tuple(d if i in given else 1 for i, d in enumerate(shape)))
    return w, given


@implements("numpy.average")
def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted average over ``axis``; both ``a`` and ``weights`` are differentiated.
    Weights summing to zero raise ``ZeroDivisionError`` when their value is known
    (eager tensors, arrays); in a traced graph they give inf/NaN."""
    a = tensor_or_array(a, "average")
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        scale = math.prod(shape_of(a)) / max(math.prod(shape_of(avg)), 1)
        return (avg, filled(avg, shape_of(avg), scale)) if returned else avg
    x, w = _common_inexact("average", a, weights)
    w, axes = _weights_along(w, shape_of(x), axis)
    total = _sum(w, axis=axes, keepdims=keepdims)
    value = concrete_value(total)
    if value is not None and np.any(value == 0):
        raise ZeroDivisionError("average: weights sum to zero, can't be normalized")
    avg = divide(_sum(multiply(x, w), axis=axes, keepdims=keepdims), total)
    if not returned:
        return avg
    return avg, st.broadcast_to(total, shape_of(avg))


# ------------------------------------------------------------------ var, std

def _variance(name, a, axis, dtype, out, ddof, keepdims, where, mean, correction):
    """``sum(|a - mean|^2) / (n - ddof)`` over ``axis`` (real for complex ``a``)."""
    refuse_out_where(name, out, where)
    if correction is not NO_VALUE:
        if ddof != 0:
            raise ArgumentValueError(f"{name}: ddof and correction can't be provided "
                                     "simultaneously")
        ddof = correction
    if isinstance(ddof, bool) or not isinstance(ddof, numbers.Real):
        raise ArgumentError(f"{name}: ddof must be a number, got {ddof!r}")
    x, shape, axes = _statistic_operand(name, a, axis, dtype)
    centre = keep_dims(_mean(x, axes), shape, axes, True) if mean is NO_VALUE else mean
    d = subtract(x, as_array(centre))
    squares = ew.real(ew.mul(d, ew.conj(d))) if dtypes.is_complex(code_of_value(d)) \
        else ew.mul(d, d)
    dof = reduced_size(shape, axes) - ddof
    if dof <= 0:
        warnings.warn(f"{name}: degrees of freedom <= 0 for slice", RuntimeWarning,
                      stacklevel=3)
    spread = ew.scale(st.reduce_sum(squares, axes), 1.0 / dof if dof > 0 else math.inf)
    return keep_dims(spread, shape, axes, keepdims)


@implements("numpy.var")
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=NO_VALUE, correction=NO_VALUE):
    """Variance over ``axis`` with ``ddof`` (or ``correction``) degrees of freedom."""
    return _variance("var", a, axis, dtype, out, ddof, keepdims, where, mean, correction)


@implements("numpy.std")
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=NO_VALUE, correction=NO_VALUE):
    """Standard deviation over ``axis``; where a slice has zero spread the derivative is
    taken as 0 (a subgradient: the square root has none there)."""
    return ew.safe_sqrt(
        _variance("std", a, axis, dtype, out, ddof, keepdims, where, mean, correction))


# ------------------------------------------------------------------ NaN-ignoring

@implements("numpy.nansum")
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=NO_VALUE,
           where=NO_VALUE):
    """Sum treating NaN as zero (NaN entries get derivative 0)."""
    refuse_out_where("nansum", out, where)
    x = accumulating(tensor_or_array(a, "nansum"), dtype)
    if dtypes.is_inexact(code_of_value(x)):
        x = red.zero_nans(x)
    return _sum(x, axis, keepdims=keepdims, initial=initial)


@implements("numpy.nanmean")
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=NO_VALUE):
    """Mean of the non-NaN entries (NaN for an all-NaN slice; NaN entries get 0)."""
    x, shape, axes = _statistic_operand("nanmean", a, axis, dtype, out, where)
    counts = st.reduce_sum(ew.eq_mask(x, x), axes)          # the entries that are numbers
    result = ew.div(st.reduce_sum(red.zero_nans(x), axes), counts)
    return keep_dims(result, shape, axes, keepdims)


@implements("numpy.nanmax")
def nanmax(a, axis=None, out=None, keepdims=False, initial=NO_VALUE, where=NO_VALUE):
    """Maximum ignoring NaNs (NaN for an all-NaN slice, whose derivative is 0)."""
    return extremum("nanmax", red.reduce_nanmax, a, axis, out, keepdims, initial, where)


@implements("numpy.nanmin")
def nanmin(a, axis=None, out=None, keepdims=False, initial=NO_VALUE, where=NO_VALUE):
    """Minimum ignoring NaNs (NaN for an all-NaN slice, whose derivative is 0)."""
    return extremum("nanmin", red.reduce_nanmin, a, axis, out, keepdims, initial, where)


# ------------------------------------------------------------------ logsumexp

@implements("scipy.special.logsumexp")       # tp.scipy.special's: SciPy's on plain arrays
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log(sum(b * exp(a)))`` over ``axis``, SciPy's ``scipy.special.logsumexp``:
    stable for large and infinite entries; terms with ``b == 0`` are left out.  With
    ``return_sign`` it returns ``(log|s|, sign(s))`` (``s/|s|`` for complex ``s``); without
    it, a negative real sum gives NaN and complex values the principal logarithm.  Both
    ``a`` and ``b`` are differentiated, exactly at any order: the derivative in ``a`` is
    the softmax ``b exp(a - m) / sum(b exp(a - m))`` (``m`` the largest entry, so entries
    of any size keep every digit); where ``m`` is infinite the entries equal to it share
    evenly (all ``-inf``: ``1/n`` each), as ``logaddexp`` does.  A 0-d ``a`` is one entry
    of a 1-d array, as SciPy reads it (``keepdims=True`` gives shape ``(1,)``)."""
    a = as_array(a)
    b = None if b is None else as_array(b)
    xs = _common_inexact("logsumexp", *((a,) if b is None else (a, b)))
    code = code_of_value(xs[0])
    # SciPy reads a 0-d input as one entry of a 1-d array (axis 0 and keepdims apply)
    shape = broadcast_shapes("logsumexp", *[shape_of(v) for v in xs]) or (1,)
    xs = [st.broadcast_to(v, shape) for v in xs]
    axes = normalize_axes("logsumexp", axis, len(shape))
    log_size, sign = red.logsumexp(xs[0], axes, xs[1] if b is not None else None)
    if return_sign:
        return keep_dims(log_size, shape, axes, keepdims), keep_dims(sign, shape, axes,
                                                                      keepdims)
    if b is not None or dtypes.is_complex(code):
        with np.errstate(invalid="ignore", divide="ignore"):   # log(-1) is NaN, as SciPy
            log_size = add(ew.convert(log_size, code), log(sign))
    return keep_dims(log_size, shape, axes, keepdims)


# ------------------------------------------------------------------ median

@implements("numpy.median")
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over ``axis`` (NaN if a slice holds a NaN, as NumPy).  The derivative goes
    to the middle entry, or half to each of the two middle entries of an even count;
    entries tied with a middle value share its part evenly."""
    x, shape, axes = _statistic_operand("median", a, axis, out=out)
    ordered("median", x)
    n = reduced_size(shape, axes)
    if n == 0:
        warnings.warn("median: mean of empty slice", RuntimeWarning, stacklevel=2)
        return keep_dims(_mean(x, axes), shape, axes, keepdims)
    rows = red.merge_axes_last(x, axes)[0]
    last = len(shape) - len(axes)
    lower = red.order_statistic(rows, last, (n - 1) // 2)
    if n % 2 == 0:
        lower = ew.scale(ew.add(lower, red.order_statistic(rows, last, n // 2)), 0.5)
    return keep_dims(lower, shape, axes, keepdims)


__all__ = ["mean", "average", "var", "std", "nansum", "nanmean", "nanmax", "nanmin",
           "logsumexp", "median"]

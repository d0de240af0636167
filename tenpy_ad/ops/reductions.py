"""Reductions over axes beyond ``reduce_sum``/``reduce_max`` (in ``structural.py``):
products, selections (minimum, NaN-ignoring extrema, order statistics), logical
reductions, arg-extrema and a stable ``logsumexp``.  ``axes`` are sorted non-negative
ints, as for ``reduce_sum``.

Derivative choices:

* ``reduce_prod``: the derivative of ``x_i`` is the product of the *other* entries,
  computed from running products from both ends, never as ``prod / x_i``, so it is exact
  with zeros in the input (at any order: the running products' own rules divide by nothing).
* selections: the derivative goes to the entries equal to the selected value, split
  evenly among ties (a subgradient); NaN entries of ``reduce_nanmax``/``reduce_nanmin``
  get zero.
* ``zero_nans``: NaN entries get derivative zero, even from a NaN cotangent.
* ``logsumexp``: the weights ``exp(x - m) / sum(b exp(x - m))`` with the slice's largest
  entry ``m`` a constant (the softmax, smooth at every order, accurate at any size);
  where ``m`` is infinite the entries equal to it share evenly; a zero-weight term whose
  exponential overflows is left out, as from the value.
* ``reduce_all``/``reduce_any``/``argmax``/``argmin``: booleans and indices, not
  differentiated.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..errors import DTypeError, ShapeError
from ..param_schema import AXES, AXIS, SIZE, Struct
from ..primitive import bind, bind1, bind2, code_of_value, describe, primitive, shape_of
from ..rules import defjvp, defrules, defvjp, zero_rule
from . import elementwise as ew
from . import scans
from . import structural as st
from .logic import isinf, logical_and, logical_not


def _kept_dims(axes, ndim: int) -> tuple:
    return tuple(i for i in range(ndim) if i not in axes)


def _reduced_shape(name: str, axes, x) -> tuple:
    ndim = x.ndim
    if any(not 0 <= a < ndim for a in axes) or len(set(axes)) != len(axes):
        raise ShapeError(f"{name}: axes {list(axes)} out of range for {describe(x)}")
    shape = x.shape
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _spread(value, axes, x):
    """A reduced ``value`` broadcast back over ``x``'s shape."""
    shape = shape_of(x)
    return st.broadcast_in_dim(value, shape, _kept_dims(axes, len(shape)))


def _format_axes(axes) -> str:
    return f"axes={list(axes)}"


# ------------------------------------------------------------------ product

def merge_axes_last(x, axes: tuple):
    """``x`` with ``axes`` moved to the end and merged into one axis; also the
    permutation and the permuted shape, to undo it."""
    shape = shape_of(x)
    kept = _kept_dims(axes, len(shape))
    perm = kept + tuple(axes)
    moved_shape = tuple(shape[i] for i in perm)
    n = math.prod(shape[a] for a in axes)
    return st.reshape(st.transpose(x, perm), moved_shape[:len(kept)] + (n,)), perm, moved_shape


def _others(axes, x):
    """For each entry of ``x``, the product of the other entries of its reduced slice."""
    rows, perm, moved_shape = merge_axes_last(x, axes)
    last = len(perm) - len(axes)
    before = scans.shift(scans.cumprod(rows, last), last, False, 1)
    after = scans.shift(scans.cumprod(rows, last, reverse=True), last, True, 1)
    others = st.reshape(ew.mul(before, after), moved_shape)
    return st.transpose(others, tuple(perm.index(i) for i in range(len(perm))))


reduce_prod_p = primitive("reduce_prod",      # in the operand's dtype, as the rule says
                          lambda axes, x: np.prod(x, axis=axes, dtype=x.dtype),
                          lambda axes, x: (code_of_value(x),
                                           _reduced_shape("reduce_prod", axes, x)),
                          format_params=_format_axes, params=AXES)
defjvp(reduce_prod_p,
       lambda axes, t, out, x: st.reduce_sum(ew.mul(t, _others(axes, x)), axes))
defvjp(reduce_prod_p,
       lambda axes, ct, out, x: ew.mul(_spread(ct, axes, x), ew.conj(_others(axes, x))))


def reduce_prod(x, axes: tuple):
    """Product over ``axes``; its derivative is exact with zeros in ``x``."""
    if not axes:
        return x
    return bind1(reduce_prod_p, tuple(sorted(axes)), x)


# ------------------------------------------------------------------ extrema

def _ordered_rule(name):
    def rule(axes, x):
        if dtypes.is_complex(code_of_value(x)):
            raise DTypeError(f"{name}: complex input {describe(x)} has no ordering")
        return code_of_value(x), _reduced_shape(name, axes, x)
    return rule


def _selection_share(axes, out, x, ignore_nan: bool):
    """1/(number of ties) at the entries equal to the selected value, 0 elsewhere.  With
    ``ignore_nan`` an all-NaN slice (no entry equals its NaN result) shares nothing."""
    mask = ew.eq_mask(x, _spread(out, axes, x))
    count = st.reduce_sum(mask, axes)
    if ignore_nan:
        count = ew.add(count, ew.eq_mask(count, st.full_like(count, 0)))
    return mask, count


def selection(name: str, impl, axes_of=lambda params: params, ignore_nan: bool = False,
              format_params=_format_axes, params=AXES, rule=None):
    """A reduction that selects one of the values of each slice (the maximum, the k-th
    smallest, ...): the derivative goes to the entries equal to it, ties sharing it
    evenly.  ``axes_of(params)`` are the reduced axes; ``params`` their schema; ``rule``
    (optional) checks the params against the operand too."""
    def jvp(params, tangents, out, xs):
        axes = axes_of(params)
        mask, count = _selection_share(axes, out, xs[0], ignore_nan)
        return ew.div(st.reduce_sum(ew.mul(tangents[0], mask), axes), count)

    def vjp(params, ct, out, xs, active):
        axes = axes_of(params)
        mask, count = _selection_share(axes, out, xs[0], ignore_nan)
        return (ew.mul(_spread(ew.div(ct, count), axes, xs[0]), mask),)

    ordered = _ordered_rule(name)

    def shape_rule(p, x):
        if rule is not None:
            rule(p, x)
        return ordered(axes_of(p), x)
    prim = primitive(name, impl, shape_rule, format_params=format_params, params=params)
    return defrules(prim, jvp, vjp)


reduce_min_p = selection("reduce_min", lambda axes, x: np.min(x, axis=axes))
reduce_nanmax_p = selection("reduce_nanmax", lambda axes, x: np.nanmax(x, axis=axes),
                            ignore_nan=True)
reduce_nanmin_p = selection("reduce_nanmin", lambda axes, x: np.nanmin(x, axis=axes),
                            ignore_nan=True)


def reduce_min(x, axes: tuple):
    """Minimum over ``axes``; the derivative is split evenly among tied minima."""
    return bind1(reduce_min_p, tuple(sorted(axes)), x) if axes else x


def reduce_nanmax(x, axes: tuple):
    """Maximum over ``axes`` ignoring NaNs (NaN for an all-NaN slice)."""
    return bind1(reduce_nanmax_p, tuple(sorted(axes)), x) if axes else x


def reduce_nanmin(x, axes: tuple):
    """Minimum over ``axes`` ignoring NaNs (NaN for an all-NaN slice)."""
    return bind1(reduce_nanmin_p, tuple(sorted(axes)), x) if axes else x


def _kth_impl(params, x):
    axis, k = params
    value = np.take(np.partition(x, k, axis=axis), k, axis=axis)
    return np.where(np.isnan(x).any(axis=axis), np.nan, value).astype(x.dtype, copy=False)


def _kth_rule(params, x):
    axis, k = params
    shape = shape_of(x)
    if axis < len(shape) and not k < shape[axis]:
        raise ShapeError(f"order_statistic: k = {k} is out of bounds for axis {axis} of "
                         f"{describe(x)}")


order_statistic_p = selection("order_statistic", _kth_impl, lambda params: (params[0],),
                              format_params=lambda p: f"axis={p[0]} k={p[1]}",
                              params=Struct(AXIS, SIZE), rule=_kth_rule)


def order_statistic(x, axis: int, k: int):
    """The ``k``-th smallest entry along ``axis`` (0-based; NaN if the slice holds a NaN);
    the derivative is split evenly among the entries equal to it."""
    return bind1(order_statistic_p, (axis, k), x)


# ------------------------------------------------------------------ NaN to zero

zero_where_nan_p = ew.binary(
    "zero_where_nan", lambda v, x: np.where(np.isnan(x), 0, v).astype(v.dtype, copy=False))
# linear in v and a selection, not a product with a mask, so that a NaN cotangent (of
# an all-NaN slice) cannot leak into the entries it leaves out
defjvp(zero_where_nan_p, lambda p, t, out, v, x: zero_where_nan(t, x), zero_rule)
defvjp(zero_where_nan_p, lambda p, ct, out, v, x: zero_where_nan(ct, x), zero_rule)


def zero_where_nan(v, x):
    """``v`` with zeros where ``x`` (of ``v``'s shape and dtype) is NaN."""
    return bind2(zero_where_nan_p, None, v, x)


def zero_nans(x):
    """``x`` with its NaN entries replaced by 0 (their derivative is 0)."""
    return zero_where_nan(x, x)


# ------------------------------------------------------------------ booleans and indices

def _not_differentiated(name: str, impl, code: int, empty_error: str = "", params=AXES):
    """A reduction to booleans or indices: zero derivative rules."""
    def rule(axes, x):
        shape = _reduced_shape(name, axes, x)
        if empty_error and any(x.shape[a] == 0 for a in axes):
            raise ShapeError(f"{name}: {empty_error} ({describe(x)})")
        return code, shape

    prim = primitive(name, impl, rule, format_params=_format_axes, params=params)
    defjvp(prim, zero_rule)
    defvjp(prim, zero_rule)
    return prim


reduce_all_p = _not_differentiated("reduce_all", lambda axes, x: np.all(x, axis=axes),
                                   dtypes.BOOL)
reduce_any_p = _not_differentiated("reduce_any", lambda axes, x: np.any(x, axis=axes),
                                   dtypes.BOOL)
argmax_p = _not_differentiated("argmax", lambda axes, x: np.argmax(x, axis=axes[0]),
                               dtypes.INT64, "attempt to get argmax of an empty sequence",
                               Struct(AXIS))
argmin_p = _not_differentiated("argmin", lambda axes, x: np.argmin(x, axis=axes[0]),
                               dtypes.INT64, "attempt to get argmin of an empty sequence",
                               Struct(AXIS))


def reduce_all(x, axes: tuple):
    """Whether every entry over ``axes`` is non-zero (bool)."""
    return bind1(reduce_all_p, tuple(sorted(axes)), x)


def reduce_any(x, axes: tuple):
    """Whether some entry over ``axes`` is non-zero (bool)."""
    return bind1(reduce_any_p, tuple(sorted(axes)), x)


def argmax(x, axis: int):
    """Index of the first maximum along ``axis`` (int64)."""
    return bind1(argmax_p, (axis,), x)


def argmin(x, axis: int):
    """Index of the first minimum along ``axis`` (int64)."""
    return bind1(argmin_p, (axis,), x)


# ------------------------------------------------------------------ logsumexp

def _logsumexp_rule(axes, x, *b):
    if b and (tuple(b[0].shape) != tuple(x.shape) or code_of_value(b[0]) != code_of_value(x)):
        raise ShapeError(f"logsumexp: weights {describe(b[0])} differ from {describe(x)}")
    shape = _reduced_shape("logsumexp", axes, x)
    code = code_of_value(x)
    return [(dtypes.real_code(code), shape), (code, shape)]


def _logsumexp_impl(axes, x, b=None):
    """``log|s|`` and ``s/|s|`` for ``s = sum(b exp(x))``, shifted by the largest real
    part (0 if that is infinite) so that nothing overflows; terms with ``b = 0`` are
    left out, whatever their ``x``."""
    real = np.real(x) if b is None else np.where(b == 0, -np.inf, np.real(x))
    shift = np.max(real, axis=axes, keepdims=True, initial=-np.inf)
    shift = np.where(np.isfinite(shift), shift, 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        terms = np.exp(x - shift)
        if b is not None:
            terms = np.where(b == 0, 0, b * terms)
        s = np.sum(terms, axis=axes)
        size = np.abs(s)
        log_size = np.log(size) + np.squeeze(shift, axis=axes)
    return log_size.astype(size.dtype, copy=False), np.sign(s)


def _shifted_exponents(axes, x, b):
    """``x - m``, ``m`` the largest real part of each slice among the terms with
    ``b != 0``, taken as a constant (0 if it is -inf); where ``m`` is +inf the entries
    equal to it get 0 (so that they share evenly, as in ``logaddexp``), the others
    -inf."""
    real = ew.real(x)
    if b is not None:
        real = ew.select(ew.is_zero(b), st.full_like(real, -math.inf), real)
    top = _spread(st.reduce_max(ew.stop_gradient(real), axes), axes, x)
    at_infinite_top = logical_and(ew.equal(real, top), isinf(top))
    shift = ew.select(ew.equal(top, st.full_like(top, -math.inf)), st.full_like(top, 0), top)
    difference = ew.sub(x, ew.convert(shift, code_of_value(x)))
    return ew.select(at_infinite_top, st.full_like(x, 0), difference)


def _beyond_range(exponents):
    """Where ``exp`` of ``exponents`` (real parts) overflows the dtype, or is NaN."""
    real = ew.real(exponents)
    limit = math.log(np.finfo(dtypes.DTYPES[code_of_value(real)]).max)
    return logical_not(bind2(ew.less_equal_p, None, real, st.full_like(real, limit)))


def _relative_terms(axes, xs):
    """``w = exp(x) / |s|``, each term's share of ``|s|`` before its weight, and ``w b``
    (``w`` when there are no weights).

    Computed as ``exp(x - m) / |sum(b exp(x - m))|`` (:func:`_shifted_exponents`): the
    quotient does not depend on the constant ``m``, so its derivatives are exact at every
    order, and it is accurate for entries of any size (``exp(x - log|s|)`` would carry
    the rounding of ``log|s|``).  A term with ``b = 0`` whose ``exp(x - m)`` overflows (or
    is NaN) is left out of the sum, as the value leaves it out, and out of ``w b`` (no
    ``0 * inf`` there, nor in its derivatives); its ``w`` stays infinite: the derivative in
    that ``b``."""
    x = xs[0]
    if any(shape_of(x)[a] == 0 for a in axes):
        return x, x                              # no entries: nothing to weigh
    code = code_of_value(x)
    exponents = _shifted_exponents(axes, x, xs[1] if len(xs) == 2 else None)
    if len(xs) == 1:
        terms = ew.exp(exponents)
        total = st.reduce_sum(terms, axes)
        if dtypes.is_complex(code):
            total = ew.convert(ew.abs(total), code)
        w = ew.div(terms, _spread(total, axes, x))
        return w, w
    b = xs[1]
    left_out = logical_and(ew.is_zero(b), _beyond_range(exponents))
    zero = st.full_like(x, 0)
    kept = ew.select(left_out, zero, ew.exp(ew.select(left_out, zero, exponents)))
    size = _spread(ew.convert(ew.abs(st.reduce_sum(ew.mul(kept, b), axes)), code), axes, x)
    return ew.div(ew.exp(exponents), size), ew.mul(ew.div(kept, size), b)


def _logsumexp_jvp(axes, tangents, out, xs):
    """``ds/|s| = sum(w b dx + w db)``; ``d log|s| = Re(conj(sign) ds/|s|)``, and the
    sign turns by ``i Im(conj(sign) ds/|s|)`` (complex only)."""
    w, weighted = _relative_terms(axes, xs)
    ds = None if tangents[0] is None else st.reduce_sum(ew.mul(weighted, tangents[0]), axes)
    if len(xs) == 2 and tangents[1] is not None:
        by_b = st.reduce_sum(ew.mul(w, tangents[1]), axes)
        ds = by_b if ds is None else ew.add(ds, by_b)
    sign = out[1]
    code = code_of_value(sign)
    if not dtypes.is_complex(code):
        return (ds if len(xs) == 1 else ew.mul(sign, ds)), None
    turn = ew.mul(ew.conj(sign), ds)
    return ew.real(turn), ew.mul(ew.scale(ew.convert(ew.imag(turn), code), 1j), sign)


def _logsumexp_vjp(axes, cts, out, xs, active):
    ct_log, ct_sign = cts
    sign = out[1]
    code = code_of_value(sign)
    complex_ = dtypes.is_complex(code)
    ct_ds = None
    if ct_log is not None:
        ct_ds = ew.convert(ct_log, code)
        if complex_ or len(xs) == 2:
            ct_ds = ew.mul(ct_ds, sign)
    if ct_sign is not None and complex_:
        turn = ew.neg(ew.imag(ew.mul(ew.conj(ct_sign), sign)))
        term = ew.mul(ew.scale(ew.convert(turn, code), 1j), sign)
        ct_ds = term if ct_ds is None else ew.add(ct_ds, term)
    if ct_ds is None:
        return (None,) * len(xs)
    w, weighted = _relative_terms(axes, xs)
    spread = _spread(ct_ds, axes, xs[0])
    ct_x = ew.mul(spread, ew.conj(weighted)) if active[0] else None
    if len(xs) == 1:
        return (ct_x,)
    return ct_x, (ew.mul(spread, ew.conj(w)) if active[1] else None)


logsumexp_p = primitive("logsumexp", _logsumexp_impl, _logsumexp_rule, n_outputs=2,
                        format_params=_format_axes, params=AXES)
defrules(logsumexp_p, _logsumexp_jvp, _logsumexp_vjp)


def logsumexp(x, axes: tuple, b=None):
    """``(log|s|, sign(s))`` for ``s = sum(b * exp(x))`` over ``axes`` (``b`` of ``x``'s
    shape and dtype, or None for ones); ``sign`` is ``s/|s|`` for complex values.
    Stable for large and infinite ``x``; the derivative is exact to any order."""
    operands = (x,) if b is None else (x, b)
    return bind(logsumexp_p, tuple(sorted(axes)), *operands)


__all__ = ["merge_axes_last", "reduce_prod", "reduce_min", "reduce_nanmax", "reduce_nanmin",
           "order_statistic", "selection", "zero_nans", "zero_where_nan", "reduce_all",
           "reduce_any", "argmax", "argmin", "logsumexp"]

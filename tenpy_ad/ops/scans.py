"""Scans along one axis: ``cumsum``, ``cumprod`` and the first-order linear recurrence
``h_i = a_i h_{i-1} + b_i`` that their derivatives are made of.

Each primitive takes ``(axis, reverse)``: ``reverse=True`` runs from the last entry to the
first (``h_i = a_i h_{i+1} + b_i``), which is what transposing a forward scan gives.

No rule divides by the input: the derivative of ``cumprod`` is a linear recurrence whose
coefficients are the input itself, so it is exact when entries are zero, and the
recurrence's own derivatives are recurrences again (closed under differentiation).
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..param_schema import AXIS, BOOL, Struct
from ..primitive import bind1, bind2, describe, primitive, same_meta, shape_of
from ..rules import defjvp, deflinear, defrules, defvjp
from . import elementwise as ew
from . import structural as st


def _scan_rule(name):
    def rule(params, *xs):
        axis = params[0]
        x = xs[0]
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"{name}: axis {axis} is out of range for {describe(x)}")
        if len(xs) == 2 and not same_meta(xs[0], xs[1]):
            raise ShapeError(f"{name}: coefficients {describe(xs[0])} and terms "
                             f"{describe(xs[1])} differ in shape or dtype")
        return x
    return rule


#: (axis, reverse)
_PARAMS = Struct(AXIS, BOOL)


def _format(params) -> str:
    return f"axis={params[0]}" + (" reverse" if params[1] else "")


def _along(fn, axis, reverse, x):
    """``fn(x, axis)``, run from the end of the axis when ``reverse``."""
    if not reverse:        # in the operand's dtype, as the rule says (NumPy widens integers)
        return fn(x, axis=axis, dtype=x.dtype)
    return np.flip(fn(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)


def shift(x, axis: int, reverse: bool, fill):
    """``x`` moved one place along ``axis`` in the scan's direction: entry ``i`` holds
    ``x[i-1]`` (``x[i+1]`` when ``reverse``), the vacated end holds ``fill``."""
    shape = shape_of(x)
    n = shape[axis]
    if n == 0:
        return x

    def part(start, stop):
        return st.slice_axes(x, tuple((start, stop, 1) if i == axis else (0, d, 1)
                                      for i, d in enumerate(shape)))

    edge = st.full_like(part(0, 1), fill)
    if n == 1:
        return edge
    return st.concatenate([part(1, n), edge] if reverse else [edge, part(0, n - 1)], axis)


# ------------------------------------------------------------------ cumsum

cumsum_p = primitive("cumsum", lambda p, x: _along(np.cumsum, p[0], p[1], x),
                     _scan_rule("cumsum"), format_params=_format, params=_PARAMS)
# the transpose of a running sum is the running sum from the other end
deflinear(cumsum_p, lambda p, ct, out, x: cumsum(ct, p[0], not p[1]))


def cumsum(x, axis: int, reverse: bool = False):
    """Running sum along ``axis`` (a non-negative int)."""
    return bind1(cumsum_p, (axis, bool(reverse)), x)


# ------------------------------------------------------------------ linear recurrence

def _recurrence_impl(params, a, b):
    axis, reverse = params
    a, b = np.moveaxis(a, axis, 0), np.moveaxis(b, axis, 0)
    h = np.empty_like(b)
    previous = None                                 # h before the first step is 0
    for i in (range(len(b) - 1, -1, -1) if reverse else range(len(b))):
        h[i] = b[i] if previous is None else a[i] * h[previous] + b[i]
        previous = i
    return np.moveaxis(h, 0, axis)


def _recurrence_jvp(params, tangents, out, xs):
    """``dh`` obeys the same recurrence, driven by ``da_i h_{i-1} + db_i``."""
    axis, reverse = params
    da, db = tangents
    drive = db
    if da is not None:
        term = ew.mul(da, shift(out, axis, reverse, 0))
        drive = term if db is None else ew.add(term, db)
    return linear_recurrence(xs[0], drive, axis, reverse)


def _recurrence_vjp(params, ct, out, xs, active):
    """The transpose runs from the other end with the coefficients shifted by one."""
    axis, reverse = params
    coefficients = shift(ew.conj(xs[0]), axis, not reverse, 0)
    ct_b = linear_recurrence(coefficients, ct, axis, not reverse)
    ct_a = ew.mul(ct_b, ew.conj(shift(out, axis, reverse, 0))) if active[0] else None
    return ct_a, ct_b if active[1] else None


linear_recurrence_p = primitive("linear_recurrence", _recurrence_impl,
                                _scan_rule("linear_recurrence"), format_params=_format,
                                params=_PARAMS)
defrules(linear_recurrence_p, _recurrence_jvp, _recurrence_vjp)


def linear_recurrence(a, b, axis: int, reverse: bool = False):
    """``h_i = a_i h_{i-1} + b_i`` along ``axis`` from ``h_{-1} = 0`` (``a``, ``b`` of one
    shape and dtype); with ``reverse``, ``h_i = a_i h_{i+1} + b_i`` from the end.  It runs
    as a loop over the axis, vectorised over the other axes (NumPy has no such scan)."""
    return bind2(linear_recurrence_p, (axis, bool(reverse)), a, b)


# ------------------------------------------------------------------ cumprod

def _exclusive(out, params):
    """The product of the entries before each one (1 for the first)."""
    axis, reverse = params
    return shift(out, axis, reverse, 1)


cumprod_p = primitive("cumprod", lambda p, x: _along(np.cumprod, p[0], p[1], x),
                      _scan_rule("cumprod"), format_params=_format, params=_PARAMS)
# out_i = x_i out_{i-1}: d out_i = x_i d out_{i-1} + t_i out_{i-1}
defjvp(cumprod_p, lambda p, t, out, x: linear_recurrence(
    x, ew.mul(t, _exclusive(out, p)), p[0], p[1]))
defvjp(cumprod_p, lambda p, ct, out, x: ew.mul(
    linear_recurrence(shift(ew.conj(x), p[0], not p[1], 0), ct, p[0], not p[1]),
    ew.conj(_exclusive(out, p))))


def cumprod(x, axis: int, reverse: bool = False):
    """Running product along ``axis`` (a non-negative int); exact derivatives with zeros."""
    return bind1(cumprod_p, (axis, bool(reverse)), x)


__all__ = ["cumsum", "cumprod", "linear_recurrence", "shift"]

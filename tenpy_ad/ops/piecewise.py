"""Elementwise primitives that are piecewise smooth: rounding, integer division and
remainders, extrema of two operands, clipping, ``heaviside``, ``copysign`` and
``nan_to_num``.

Where NumPy's function has no derivative (at a jump or a kink) the rules pick one, and the
function's docstring says which:

* rounding (``floor``, ``ceil``, ``trunc``, ``rint``, ``round``) and ``floor_divide`` are
  locally constant: derivative zero, also at the jumps;
* ``remainder``/``fmod``: derivative 1 in the dividend and ``-q`` in the divisor, ``q`` the
  integer quotient that NumPy's result ``x - q y`` uses (also at the jumps);
* ``maximum``/``minimum``/``fmax``/``fmin``: ties split the derivative evenly (as autograd
  and JAX do);
* clipping passes the derivative to the clipped operand on the closed interval (at a
  bound too), to a bound only where it replaced the operand.

Each choice is built from masks, which have derivative zero, so every second derivative is
0, at the special points too (the functions are piecewise linear, or constant), in every
mode; tests/specs lists the points (``Spec.special``).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .. import dtypes
from .._compiled import _core
from ..param_schema import Int, Struct, ScalarOf
from ..primitive import bind1, bind2, code_of_value, primitive
from ..rules import defjvp, defvjp, zero_rule
from . import structural as st
from .elementwise import (add, binary, convert, div, eq_mask, imag, mul, neg, real,
                          same_as_input, scale, sign, sub, unary)
from .logic import isfinite

Scalar = _core.Scalar


def piecewise_constant(prim, n_operands: int = 1):
    """Declare a primitive locally constant: zero derivative in every operand."""
    defjvp(prim, *[zero_rule] * n_operands)
    defvjp(prim, *[zero_rule] * n_operands)
    return prim


# ------------------------------------------------------------------ rounding

floor_p = piecewise_constant(unary("floor", np.floor))
ceil_p = piecewise_constant(unary("ceil", np.ceil))
trunc_p = piecewise_constant(unary("trunc", np.trunc))
rint_p = piecewise_constant(unary("rint", np.rint))
round_p = piecewise_constant(primitive("round", lambda decimals, x: np.round(x, decimals),
                                       same_as_input, elementwise=True,
                                       format_params=lambda decimals: f"decimals={decimals}",
                                       params=Int()))


def floor(x):
    return bind1(floor_p, None, x)


def ceil(x):
    return bind1(ceil_p, None, x)


def trunc(x):
    return bind1(trunc_p, None, x)


def rint(x):
    return bind1(rint_p, None, x)


def round(x, decimals: int = 0):  # noqa: A001 - NumPy's name
    """Round half to even at ``decimals`` decimal places (negative: left of the point)."""
    return bind1(round_p, int(decimals), x)


# ------------------------------------------------------------------ division and remainders

floor_divide_p = piecewise_constant(binary("floor_divide", np.floor_divide), 2)


def floor_divide(x, y):
    return bind2(floor_divide_p, None, x, y)


def _remainder(name: str, fn: Callable, quotient: Callable):
    """``x - q y`` computed by ``fn``, with ``quotient(x, y, out)`` the integer ``q``."""
    prim = binary(name, fn)
    defjvp(prim, lambda p, t, out, x, y: t,
           lambda p, t, out, x, y: neg(mul(t, quotient(x, y, out))))
    defvjp(prim, lambda p, ct, out, x, y: ct,
           lambda p, ct, out, x, y: neg(mul(ct, quotient(x, y, out))))
    return prim


# NumPy's floor_divide is consistent with its remainder: x == q y + r to rounding
remainder_p = _remainder("remainder", np.remainder, lambda x, y, out: floor_divide(x, y))
# fmod's quotient (x - r)/y is an integer up to rounding: rint makes it exact
fmod_p = _remainder("fmod", np.fmod, lambda x, y, out: rint(div(sub(x, out), y)))


def remainder(x, y):
    """``x mod y`` with the sign of ``y``; derivatives 1 (in ``x``) and ``-floor(x/y)``."""
    return bind2(remainder_p, None, x, y)


def fmod(x, y):
    """C's ``fmod``: the sign of ``x``; derivatives 1 (in ``x``) and ``-trunc(x/y)``."""
    return bind2(fmod_p, None, x, y)


# ------------------------------------------------------------------ extrema of two operands

def _tie_share(x, y, out):
    """1 where ``x`` is the result, 0 where ``y`` is, 1/2 on ties (also 0 at NaN)."""
    return sub(eq_mask(x, out), scale(eq_mask(x, y), 0.5))


def _swapped(rule):
    return lambda x, y, out: rule(y, x, out)


maximum_p = binary("maximum", np.maximum, _tie_share, _swapped(_tie_share))
minimum_p = binary("minimum", np.minimum, _tie_share, _swapped(_tie_share))
fmax_p = binary("fmax", np.fmax, _tie_share, _swapped(_tie_share))
fmin_p = binary("fmin", np.fmin, _tie_share, _swapped(_tie_share))


def maximum(x, y):
    """Elementwise maximum (NaN propagates); ties split the derivative evenly."""
    return bind2(maximum_p, None, x, y)


def minimum(x, y):
    """Elementwise minimum (NaN propagates); ties split the derivative evenly."""
    return bind2(minimum_p, None, x, y)


def fmax(x, y):
    """Elementwise maximum ignoring NaN; ties split the derivative evenly."""
    return bind2(fmax_p, None, x, y)


def fmin(x, y):
    """Elementwise minimum ignoring NaN; ties split the derivative evenly."""
    return bind2(fmin_p, None, x, y)


# ------------------------------------------------------------------ clipping

def _clip_d_operand(x, bound, out):
    return eq_mask(x, out)                     # 1 also at the bound


def _clip_d_bound(x, bound, out):
    return sub(eq_mask(bound, out), eq_mask(x, bound))


clip_lower_p = binary("clip_lower", np.maximum, _clip_d_operand, _clip_d_bound)
clip_upper_p = binary("clip_upper", np.minimum, _clip_d_operand, _clip_d_bound)


def clip_lower(x, bound):
    """``max(x, bound)`` whose derivative goes to ``x`` on ties (a clip from below)."""
    return bind2(clip_lower_p, None, x, bound)


def clip_upper(x, bound):
    """``min(x, bound)`` whose derivative goes to ``x`` on ties (a clip from above)."""
    return bind2(clip_upper_p, None, x, bound)


# ------------------------------------------------------------------ heaviside, copysign

heaviside_p = binary("heaviside", np.heaviside)
defjvp(heaviside_p, zero_rule,
       lambda p, t, out, x, y: mul(t, eq_mask(x, st.full_like(x, 0))))
defvjp(heaviside_p, zero_rule,
       lambda p, ct, out, x, y: mul(ct, eq_mask(x, st.full_like(x, 0))))


def heaviside(x, h0):
    """0 for ``x < 0``, ``h0`` at 0, 1 for ``x > 0``: derivative 0 in ``x`` (also at the
    jump), 1 in ``h0`` where ``x == 0``."""
    return bind2(heaviside_p, None, x, h0)


def _copysign_d_x(x, y):
    return mul(sign(x), copysign(st.full_like(y, 1), y))


copysign_p = binary("copysign", np.copysign)
defjvp(copysign_p, lambda p, t, out, x, y: mul(t, _copysign_d_x(x, y)), zero_rule)
defvjp(copysign_p, lambda p, ct, out, x, y: mul(ct, _copysign_d_x(x, y)), zero_rule)


def copysign(x, y):
    """``|x|`` with the sign of ``y``: derivative ``±sign(x)`` in ``x`` (0 at ``x == 0``,
    as for ``abs``), 0 in ``y``."""
    return bind2(copysign_p, None, x, y)


# ------------------------------------------------------------------ nan_to_num

def _finite_part(x, t):
    """``t`` where ``x`` is finite, else 0 (real and imaginary parts apart)."""
    if not dtypes.is_complex(code_of_value(x)):
        return mul(t, convert(isfinite(x), code_of_value(x)))
    code, part_code = code_of_value(x), dtypes.real_code(code_of_value(x))
    re = mul(real(t), convert(isfinite(real(x)), part_code))
    im = mul(imag(t), convert(isfinite(imag(x)), part_code))
    return add(convert(re, code), scale(convert(im, code), 1j))


def _nan_to_num_impl(params, x):
    nan, posinf, neginf = (s.value for s in params)
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


nan_to_num_p = primitive("nan_to_num", _nan_to_num_impl, same_as_input, elementwise=True,
                         format_params=lambda p: "nan={} posinf={} neginf={}".format(
                             *(s.value for s in p)),
                         params=Struct(*[ScalarOf(float)] * 3))
defjvp(nan_to_num_p, lambda p, t, out, x: _finite_part(x, t))
defvjp(nan_to_num_p, lambda p, ct, out, x: _finite_part(x, ct))


def nan_to_num(x, nan: float, posinf: float, neginf: float):
    """NaN and infinities replaced by the given finite values: derivative 1 where ``x`` is
    finite, 0 where a value was replaced (per part, for complex ``x``)."""
    return bind1(nan_to_num_p, (Scalar(float(nan)), Scalar(float(posinf)),
                                Scalar(float(neginf))), x)

"""Transcendental elementwise primitives beyond the basic ones of :mod:`.elementwise`:
exponentials and logarithms, trigonometric and hyperbolic functions and their inverses,
``sinc``, ``cbrt``, and the binary ``arctan2``, ``hypot``, ``logaddexp``, ``logaddexp2``
and ``power`` with a tensor exponent.

Each is one primitive computing NumPy's function (so values are NumPy's to the bit) with
its derivative written with the library's own operations, which differentiates again to
any order.  Derivatives that would divide by a vanishing quantity at an isolated point
pick a value there, documented with the function.  Holomorphic functions follow the
complex convention of :mod:`.elementwise` (VJP ``ct * conj(f'(z))``).
"""
from __future__ import annotations

import math

import numpy as np

from ..param_schema import Int
from ..primitive import bind1, bind2, primitive
from ..rules import defjvp, defvjp
from . import structural as st
from .elementwise import (add, binary, conj, cos, div, equal, exp, is_zero, log, mul, neg,
                          scale, select, sqrt, sub, unary)
from .logic import logical_and

LN2, LN10 = math.log(2.0), math.log(10.0)


def _ones(x):
    return st.full_like(x, 1)


def quotient(name: str, fn, denominator, negate: bool = False):
    """A unary primitive whose derivative is ``±1/denominator(x, out)``: the rules divide
    by it (one division instead of a reciprocal and a product)."""
    prim = unary(name, fn)
    sign = neg if negate else (lambda v: v)
    defjvp(prim, lambda p, t, out, x: sign(div(t, denominator(x, out))))
    defvjp(prim, lambda p, ct, out, x: sign(div(ct, conj(denominator(x, out)))))
    return prim


def _one_minus_square(x):
    return mul(sub(_ones(x), x), add(_ones(x), x))     # (1 - x)(1 + x): exact near |x| = 1


# ------------------------------------------------------------------ exponentials, logarithms

exp2_p = unary("exp2", np.exp2, lambda x, out: scale(out, LN2))
expm1_p = unary("expm1", np.expm1, lambda x, out: exp(x))
log2_p = quotient("log2", np.log2, lambda x, out: scale(x, LN2))
log10_p = quotient("log10", np.log10, lambda x, out: scale(x, LN10))
log1p_p = quotient("log1p", np.log1p, lambda x, out: add(_ones(x), x))
cbrt_p = quotient("cbrt", np.cbrt, lambda x, out: scale(mul(out, out), 3.0))


def exp2(x):
    return bind1(exp2_p, None, x)


def expm1(x):
    return bind1(expm1_p, None, x)


def log2(x):
    return bind1(log2_p, None, x)


def log10(x):
    return bind1(log10_p, None, x)


def log1p(x):
    return bind1(log1p_p, None, x)


def cbrt(x):
    """Real cube root; its derivative ``1/(3 cbrt(x)^2)`` is infinite at 0."""
    return bind1(cbrt_p, None, x)


# ------------------------------------------------------------------ trigonometric, hyperbolic

tan_p = unary("tan", np.tan, lambda x, out: add(_ones(out), mul(out, out)))
sinh_p = unary("sinh", np.sinh, lambda x, out: cosh(x))
cosh_p = unary("cosh", np.cosh, lambda x, out: sinh(x))
# the square roots of (1 - x)(1 + x) taken apart follow the branch cuts of NumPy's
# principal inverses for complex arguments
arcsin_p = quotient("arcsin", np.arcsin,
                    lambda x, out: mul(sqrt(sub(_ones(x), x)), sqrt(add(_ones(x), x))))
arccos_p = quotient("arccos", np.arccos,
                    lambda x, out: mul(sqrt(sub(_ones(x), x)), sqrt(add(_ones(x), x))),
                    negate=True)
arctan_p = quotient("arctan", np.arctan, lambda x, out: add(_ones(x), mul(x, x)))
arcsinh_p = quotient("arcsinh", np.arcsinh, lambda x, out: sqrt(add(_ones(x), mul(x, x))))
arccosh_p = quotient("arccosh", np.arccosh,
                     lambda x, out: mul(sqrt(sub(x, _ones(x))), sqrt(add(x, _ones(x)))))
arctanh_p = quotient("arctanh", np.arctanh, lambda x, out: _one_minus_square(x))


def tan(x):
    return bind1(tan_p, None, x)


def sinh(x):
    return bind1(sinh_p, None, x)


def cosh(x):
    return bind1(cosh_p, None, x)


def arcsin(x):
    return bind1(arcsin_p, None, x)


def arccos(x):
    return bind1(arccos_p, None, x)


def arctan(x):
    return bind1(arctan_p, None, x)


def arcsinh(x):
    return bind1(arcsinh_p, None, x)


def arccosh(x):
    return bind1(arccosh_p, None, x)


def arctanh(x):
    return bind1(arctanh_p, None, x)


# ------------------------------------------------------------------ sinc

def _sinc_taylor_coefficient(k: int) -> float:
    """The k-th derivative of sinc at 0: (-1)^(k/2) pi^k / (k + 1) for even k, else 0."""
    return 0.0 if k % 2 else (-1) ** (k // 2) * math.pi ** k / (k + 1)


# k: the derivative's order (from 512 on, pi^k / (k + 1) overflows float64 anyway)
sinc_taylor_p = primitive("sinc_taylor",
                          lambda k, x: np.full_like(x, _sinc_taylor_coefficient(k)),
                          lambda k, x: x, format_params=lambda k: f"k={k}", elementwise=True,
                          params=Int(0, 511))
defjvp(sinc_taylor_p, lambda k, t, out, x: mul(t, sinc_taylor(x, k + 1)))
defvjp(sinc_taylor_p, lambda k, ct, out, x: mul(ct, sinc_taylor(x, k + 1)))


def sinc_taylor(x, k: int):
    """``x``'s shape filled with the k-th derivative of sinc at 0, whose derivative is the
    (k+1)-th: the value of sinc's derivatives where ``x == 0``, exact to every order."""
    return bind1(sinc_taylor_p, k, x)


def _sinc_derivative(x, out):
    """``(cos(pi x) - sinc(x)) / x``, and its limit (to every order) at ``x == 0``; the
    quotient is evaluated at 1 there so that no NaN enters any derivative."""
    zero = is_zero(x)
    safe = select(zero, _ones(x), x)
    away = div(sub(cos(scale(safe, math.pi)), sinc(safe)), safe)
    return select(zero, sinc_taylor(x, 1), away)


sinc_p = unary("sinc", np.sinc, _sinc_derivative)


def sinc(x):
    """``sin(pi x)/(pi x)`` (1 at 0), differentiable to any order everywhere."""
    return bind1(sinc_p, None, x)


# ------------------------------------------------------------------ arctan2, hypot

def _nonzero(h):
    return select(is_zero(h), _ones(h), h)


def _arctan2_d_y(y, x, out):
    h = _nonzero(hypot(y, x))                  # x / h / h never under- or overflows
    return div(div(x, h), h)


def _arctan2_d_x(y, x, out):
    h = _nonzero(hypot(y, x))
    return neg(div(div(y, h), h))


arctan2_p = binary("arctan2", np.arctan2, _arctan2_d_y, _arctan2_d_x)
hypot_p = binary("hypot", np.hypot, lambda x, y, out: div(x, _nonzero(out)),
                 lambda x, y, out: div(y, _nonzero(out)))


def arctan2(y, x):
    """The angle of the point ``(x, y)``; its derivative at the origin is taken as 0."""
    return bind2(arctan2_p, None, y, x)


def hypot(x, y):
    """``sqrt(x^2 + y^2)`` without overflow; its derivative at the origin is taken as 0
    (the subgradient ``abs`` uses at 0)."""
    return bind2(hypot_p, None, x, y)


# ------------------------------------------------------------------ logaddexp, logaddexp2

def _log_share(base_exp, log_half):
    """``d logaddexp_b(x, y)/dx = b^(x - out)``, with ``b^(x - out) = 1/2`` where
    ``x == y`` (also both infinite, where ``x - out`` is NaN)."""
    def share(x, y, out):
        return base_exp(select(equal(x, y), st.full_like(x, log_half), sub(x, out)))
    return share


def _swapped(share):
    return lambda x, y, out: share(y, x, out)


_e_share, _2_share = _log_share(exp, -LN2), _log_share(exp2, -1.0)
logaddexp_p = binary("logaddexp", np.logaddexp, _e_share, _swapped(_e_share))
logaddexp2_p = binary("logaddexp2", np.logaddexp2, _2_share, _swapped(_2_share))


def logaddexp(x, y):
    """``log(exp(x) + exp(y))``; ties (also ``-inf`` with ``-inf``) share the derivative
    evenly."""
    return bind2(logaddexp_p, None, x, y)


def logaddexp2(x, y):
    """``log2(2^x + 2^y)``; ties share the derivative evenly."""
    return bind2(logaddexp2_p, None, x, y)


# ------------------------------------------------------------------ power, tensor exponent

def _power_d_base(x, y, out):
    """``y x^(y-1)``; at ``0 ** 0`` (where ``x ** y`` is not continuous) the base is
    taken as 1, which gives the derivative along ``y == 0`` (zero) without a NaN."""
    singular = logical_and(is_zero(x), is_zero(y))
    base = select(singular, _ones(x), x)
    return mul(y, power(base, sub(y, _ones(y))))


def _power_d_exponent(x, y, out):
    """``x^y log(x)``; 0 where ``x == 0`` (the limit for ``y > 0``)."""
    return mul(out, log(select(is_zero(x), _ones(x), x)))


power_p = binary("power", np.power, _power_d_base, _power_d_exponent)


def power(x, y):
    """``x ** y`` elementwise, differentiable in both (see the partial derivatives)."""
    return bind2(power_p, None, x, y)


__all__ = ["exp2", "expm1", "log2", "log10", "log1p", "cbrt", "tan", "sinh", "cosh",
           "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "sinc",
           "sinc_taylor", "arctan2", "hypot", "logaddexp", "logaddexp2", "power"]

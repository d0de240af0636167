"""Transcendental elementwise primitives beyond the basic ones of :mod:`.elementwise`:
exponentials and logarithms, trigonometric and hyperbolic functions and their inverses,
``sinc``, ``cbrt``, and the binary ``arctan2``, ``hypot``, ``logaddexp``, ``logaddexp2``
and ``power`` with a tensor exponent.

Each is one primitive computing NumPy's function (so values are NumPy's to the bit) with
its derivative written with the library's own operations, which differentiates again to
any order.  Holomorphic functions follow the complex convention of :mod:`.elementwise`
(VJP ``ct * conj(f'(z))``).

Smooth functions have derivative rules that are smooth expressions themselves, so every
order is right everywhere: no ``select`` or tie rule decides a value that the function
does not have a kink at (a selected constant has derivative zero, which would lose the
curvature at the next order).  Where a function has no derivative (the origin of
``hypot``/``arctan2``, ``x == 0`` of ``power`` with a tensor exponent) the rules pick a
value, documented with the function, whose own derivatives are picked too (zero), the
same in every mode.  Where the derivative is infinite (``arcsin`` at ``±1``, ``cbrt`` and
``log1p`` at their singular points) the rules return the IEEE infinity, and at the
second order the infinity of the second derivative's formula (``cbrt``: NaN).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..param_schema import Int
from ..primitive import bind1, bind2, is_complex_value, primitive
from ..rules import defjvp, defvjp
from . import structural as st
from .elementwise import (add, binary, conj, div, equal, exp, is_zero, log, mul, neg,
                          scale, select, shift, sqrt, stop_gradient, sub, unary)
from .logic import isinf, logical_and

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


def _zeros(x):
    return st.full_like(x, 0)


# (1 - x)(1 + x), accurate near |x| = 1, as one primitive with derivative -2x: written as
# a product its VJP would multiply an infinite cotangent by the vanishing factor (NaN at
# x = ±1, where the forward mode gives the infinity of the second derivative)
one_minus_square_p = unary("one_minus_square", lambda x: (1 - x) * (1 + x),
                           lambda x, out: scale(x, -2.0))


def one_minus_square(x):
    """``1 - x^2`` computed as ``(1 - x)(1 + x)``."""
    return bind1(one_minus_square_p, None, x)


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


def _arcsin_denominator(x, out):
    """``sqrt(1 - x^2)``.  For complex arguments the square roots of ``1 - x`` and
    ``1 + x`` taken apart follow the branch cuts of NumPy's principal inverses."""
    if is_complex_value(x):
        return mul(sqrt(sub(_ones(x), x)), sqrt(add(_ones(x), x)))
    return sqrt(one_minus_square(x))


def _arccosh_denominator(x, out):
    """``sqrt(x^2 - 1)`` (complex: ``sqrt(x - 1) sqrt(x + 1)``, NumPy's branch cuts)."""
    if is_complex_value(x):
        return mul(sqrt(sub(x, _ones(x))), sqrt(add(x, _ones(x))))
    return sqrt(shift(neg(one_minus_square(x)), 0.0))    # + 0.0: sqrt(-0.0) is -0.0


arcsin_p = quotient("arcsin", np.arcsin, _arcsin_denominator)
arccos_p = quotient("arccos", np.arccos, _arcsin_denominator, negate=True)
arctan_p = quotient("arctan", np.arctan, lambda x, out: add(_ones(x), mul(x, x)))
arcsinh_p = quotient("arcsinh", np.arcsinh, lambda x, out: sqrt(add(_ones(x), mul(x, x))))
arccosh_p = quotient("arccosh", np.arccosh, _arccosh_denominator)
arctanh_p = quotient("arctanh", np.arctanh, lambda x, out: one_minus_square(x))


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

def _series_radius(k: int) -> float:
    """Below this ``|pi x|`` the power series of the k-th derivative of ``sin(z)/z`` is
    the more accurate form (its terms grow like ``e^|z|``), above it Leibniz's rule (whose
    terms grow like ``k!/|z|^(k+1)``): both stay within about 1e-14 of the value."""
    return max(2.0, (k + 1) / 2 + 1)


@functools.lru_cache(maxsize=None)
def _series_terms(k: int) -> int:
    """How many terms of :func:`_sinc_series` reach 1e-18 within its radius."""
    radius, m, count = _series_radius(k), k % 2, 1
    while radius ** m / math.factorial(m) > 1e-18:
        m, count = m + 2, count + 1
    return count


def _sinc_series(k: int, z):
    """``sum_m (-1)^n z^m / (m! (m + k + 1))`` over ``m = 2n - k >= 0``: the k-th
    derivative of ``sin(z)/z = sum_n (-1)^n z^(2n) / (2n + 1)!``, term by term."""
    m = k % 2
    n = (m + k) // 2
    term = z if m else np.ones_like(z)
    total = np.zeros_like(z)
    z2 = z * z
    for _ in range(_series_terms(k)):
        total = total + (-1) ** n * term / (m + k + 1)
        term = term * z2 / ((m + 1) * (m + 2))
        m, n = m + 2, n + 1
    return total


def _sinc_leibniz(k: int, z):
    """``sum_j C(k, j) sin^(k-j)(z) (-1)^j j! / z^(j+1)``: Leibniz's rule for
    ``sin(z) * (1/z)``."""
    sin, cos = np.sin(z), np.cos(z)
    cycle = (sin, cos, -sin, -cos)              # sin(z + m pi/2) for m mod 4
    inverse = 1 / z
    total, factor = np.zeros_like(z), inverse   # factor: (-1)^j j! / z^(j+1)
    for j in range(k + 1):
        total = total + math.comb(k, j) * cycle[(k - j) % 4] * factor
        factor = factor * (-(j + 1)) * inverse
    return total


def _sinc_derivative_values(k: int, x):
    """The k-th derivative of ``sinc`` at ``x`` (``k >= 1``): ``pi^k g(pi x)``, ``g`` the
    k-th derivative of ``sin(z)/z``, by its series near 0 and Leibniz's rule elsewhere (the
    closed form alone loses every digit as ``x -> 0``)."""
    x = np.asarray(x)
    z = np.pi * x
    near = np.abs(z) < _series_radius(k)
    values = np.empty_like(z)
    with np.errstate(all="ignore"):              # inf and NaN give NaN, as np.sinc
        values[near] = _sinc_series(k, z[near])
        values[~near] = _sinc_leibniz(k, z[~near])
    return (values * np.pi ** k).astype(x.dtype, copy=False)


sinc_derivative_p = primitive("sinc_derivative", _sinc_derivative_values,
                              lambda k, x: x, format_params=lambda k: f"k={k}",
                              elementwise=True, params=Int(1, 511))
defjvp(sinc_derivative_p, lambda k, t, out, x: mul(t, sinc_derivative(x, k + 1)))
defvjp(sinc_derivative_p, lambda k, ct, out, x: mul(ct, conj(sinc_derivative(x, k + 1))))


def sinc_derivative(x, k: int):
    """The k-th derivative of :func:`sinc` at ``x`` (``k >= 1``), whose derivative is the
    (k+1)-th: exact to every order, at 0 and near it too."""
    return bind1(sinc_derivative_p, k, x)


sinc_p = unary("sinc", np.sinc, lambda x, out: sinc_derivative(x, 1))


def sinc(x):
    """``sin(pi x)/(pi x)`` (1 at 0), differentiable to any order everywhere."""
    return bind1(sinc_p, None, x)


# ------------------------------------------------------------------ arctan2, hypot

def _nonzero(h):
    return select(is_zero(h), _ones(h), h)


def _off_origin(h, value):
    """``value`` where ``h != 0``; 0 at the origin (``h == 0``), where the function has a
    cone or a jump: the chosen derivative is 0 there, and so are all of its derivatives
    (the choice ``abs`` makes at 0).  ``value`` is computed with ``_nonzero(h)``, so it is
    finite at the origin and no NaN reaches the other branch's derivatives."""
    return select(is_zero(h), _zeros(value), value)


def _arctan2_d_y(y, x, out):
    radius = hypot(y, x)
    h = _nonzero(radius)                       # x / h / h never under- or overflows
    return _off_origin(radius, div(div(x, h), h))


def _arctan2_d_x(y, x, out):
    radius = hypot(y, x)
    h = _nonzero(radius)
    return _off_origin(radius, neg(div(div(y, h), h)))


arctan2_p = binary("arctan2", np.arctan2, _arctan2_d_y, _arctan2_d_x)
hypot_p = binary("hypot", np.hypot, lambda x, y, out: _off_origin(out, div(x, _nonzero(out))),
                 lambda x, y, out: _off_origin(out, div(y, _nonzero(out))))


def arctan2(y, x):
    """The angle of the point ``(x, y)``; its derivatives at the origin (of every order)
    are taken as 0."""
    return bind2(arctan2_p, None, y, x)


def hypot(x, y):
    """``sqrt(x^2 + y^2)`` without overflow; its derivatives at the origin (of every
    order) are taken as 0 (the subgradient ``abs`` uses at 0)."""
    return bind2(hypot_p, None, x, y)


# ------------------------------------------------------------------ expit, logaddexp(2)

def _expit(x):
    """``1 / (1 + exp(-x))`` from ``exp(-|x|)`` only, so that nothing overflows."""
    x = np.asarray(x)
    small = np.exp(-np.abs(x))
    with np.errstate(invalid="ignore"):
        return np.where(x >= 0, 1 / (1 + small), small / (1 + small)).astype(x.dtype,
                                                                             copy=False)


# expit'(x) = expit(x) expit(-x): accurate in both tails, and smooth again
expit_p = unary("expit", _expit, lambda x, out: mul(out, expit(neg(x))))


def expit(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))`` of real ``x``, stable for every ``x``."""
    return bind1(expit_p, None, x)


def _difference(x, y):
    """``x - y``, and 0 where both are the same infinity (where ``x - y`` is NaN and
    ``logaddexp`` is that infinity: the two then share the derivative evenly)."""
    same_infinity = logical_and(equal(x, y), isinf(x))
    return select(same_infinity, _zeros(x), sub(x, y))


def _e_share(x, y, out):
    """``d logaddexp(x, y)/dx = exp(x) / (exp(x) + exp(y)) = expit(x - y)``: a smooth
    expression of ``x`` and ``y``, so the second derivative is right at ``x == y`` too
    (``1/4``)."""
    return expit(_difference(x, y))


def _2_share(x, y, out):
    """``d logaddexp2(x, y)/dx = 2^x / (2^x + 2^y) = expit(ln2 (x - y))``."""
    return expit(scale(_difference(x, y), LN2))


def _swapped(share):
    return lambda x, y, out: share(y, x, out)


logaddexp_p = binary("logaddexp", np.logaddexp, _e_share, _swapped(_e_share))
logaddexp2_p = binary("logaddexp2", np.logaddexp2, _2_share, _swapped(_2_share))


def logaddexp(x, y):
    """``log(exp(x) + exp(y))``; its derivatives are smooth, so ties (``x == y``) get
    ``1/2`` each and the second derivative ``±1/4``; two equal infinities share the
    first derivative evenly too."""
    return bind2(logaddexp_p, None, x, y)


def logaddexp2(x, y):
    """``log2(2^x + 2^y)``; ties get ``1/2`` each and the second derivative
    ``±ln2/4``."""
    return bind2(logaddexp2_p, None, x, y)


# ------------------------------------------------------------------ power, tensor exponent

def _power_d_base(x, y, out):
    """``y x^(y-1)``.  At ``x == 0`` its value (0, 1 or inf) is locally constant in ``y``,
    so its ``y`` derivative is taken as 0 there (its ``x`` derivatives stay: ``x ** 2``
    has second derivative 2 at 0); at ``0 ** 0`` (where ``x ** y`` is not continuous) the
    base is taken as 1, which gives the derivative along ``y == 0`` (zero) without a
    NaN."""
    zero_base = is_zero(x)
    # at x == 0 the exponent enters as a constant (no tangent, not even a zero one, to
    # multiply an infinite x^(y-1) by); elsewhere the base is kept away from 0, so the
    # zero cotangent this branch gets there meets finite derivatives only
    fixed = stop_gradient(y)
    singular = logical_and(zero_base, is_zero(y))
    at_zero = mul(fixed, power(select(singular, _ones(x), x), sub(fixed, _ones(y))))
    elsewhere = mul(y, power(select(zero_base, _ones(x), x), sub(y, _ones(y))))
    return select(zero_base, at_zero, elsewhere)


def _power_d_exponent(x, y, out):
    """``x^y log(x)``; 0 where ``x == 0`` (the limit for ``y > 0``), with derivatives 0
    there too (so the mixed second derivative is 0 both ways, matching the base's)."""
    zero_base = is_zero(x)
    base = select(zero_base, _ones(x), x)
    # power(base, y) is ``out`` where it is used; the other branch of the select gets a
    # zero cotangent, which ``out``'s own rule would multiply by an infinite derivative
    return select(zero_base, _zeros(x), mul(power(base, y), log(base)))


power_p = binary("power", np.power, _power_d_base, _power_d_exponent)


def power(x, y):
    """``x ** y`` elementwise, differentiable in both (see the partial derivatives)."""
    return bind2(power_p, None, x, y)


__all__ = ["exp2", "expm1", "log2", "log10", "log1p", "cbrt", "tan", "sinh", "cosh",
           "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "one_minus_square",
           "sinc", "sinc_derivative", "arctan2", "hypot", "expit", "logaddexp",
           "logaddexp2", "power"]

"""Special functions of ``scipy.special``: the error function and its inverses, the gamma
family (``gamma``, ``gammaln``, ``loggamma``, ``digamma`` and ``polygamma(n, .)`` for a
static order ``n``), ``logit`` and ``log_expit``, the information-theory functions
``xlogy``, ``xlog1py``, ``entr``, ``rel_entr`` and ``kl_div``, the normal distribution
(``erfcx``, ``ndtr``, ``log_ndtr``), the modified Bessel functions ``iv(n, .)`` and
``ive(n, .)`` of static integer order (``i0``, ``i1``, ``i0e``, ``i1e``) and the
regularized incomplete gamma and beta functions (``gammainc``, ``gammaincc``, ``chdtr``,
``chdtrc``, ``betainc``, ``betaincc``) and Student's t distribution (``stdtr``),
differentiable in their shape parameters too: SciPy has no closed form for those
derivatives, so they are primitives of their own (``gammainc_shape_derivative``,
``betainc_shape_derivative``, ``stdtr_shape_derivative``, with the order as a static
param), computed by quadrature (:mod:`.shape_derivatives`), whose derivatives are the next
order and a closed form in ``x``.

Each primitive computes SciPy's own function, so values are SciPy's to the bit, with its
derivative written with the library's own operations, which differentiates again to any
order (``digamma``'s derivative is ``polygamma(1, .)``, whose derivative is
``polygamma(2, .)``, ...).  Holomorphic functions follow the complex convention of
:mod:`.elementwise` (VJP ``ct * conj(f'(z))``); SciPy has no complex ``polygamma``, so the
derivatives that need it (``digamma`` of complex ``z``, the second derivative of complex
``gamma`` and ``loggamma``) raise :class:`~tenpy_ad.errors.DTypeError`.

Where a function is smooth its rules are smooth expressions.  A ``select`` marks the
points where it is not (``xlogy``'s ``x == 0 == y``, the edges of the domains of
``entr``, ``rel_entr`` and ``kl_div``); the derivatives chosen there are documented with
each function, the ones they discard are computed on operands kept away from the
singularity (finite, so no NaN reaches the other branch), and the chosen ones have
derivative 0 there themselves.  Infinite derivatives (``erfinv`` at ``±1``, ``gamma`` at
its poles, ``logit`` at 0 and 1, ``entr`` at 0) are IEEE infinities.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as sc
# the ufuncs themselves (with SCIPY_ARRAY_API=1 scipy.special's names are wrappers of them)
from scipy.special import _ufuncs as scu

from ..errors import DTypeError, ShapeError
from ..param_schema import Int, TupleOf
from ..primitive import bind, bind1, bind2, describe, is_complex_value, primitive, same_meta
from ..rules import defjvp, defvjp
from . import shape_derivatives as sd
from . import structural as st
from .elementwise import (add, binary, div, equal, exp, is_zero, less_p, log, mul, neg, real,
                          same_operands, scale, select, shift, sign, sqrt, stop_gradient, sub,
                          unary)
from .logic import isinf, logical_and, logical_or
from .transcendental import cosh, expit, log1p, power, sinh

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
HALF_SQRT_PI = math.sqrt(math.pi) / 2.0
INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
SQRT_HALF = math.sqrt(0.5)


def _ones(x):
    return st.full_like(x, 1)


def _zeros(x):
    return st.full_like(x, 0)


def _negative(x):
    """The bool mask of the entries below 0."""
    return bind2(less_p, None, x, _zeros(x))


def _positive(x):
    return bind2(less_p, None, _zeros(x), x)


# ------------------------------------------------------------------ error function

def _gaussian(x):
    return exp(neg(mul(x, x)))


erf_p = unary("erf", scu.erf, lambda x, out: scale(_gaussian(x), TWO_OVER_SQRT_PI))
erfc_p = unary("erfc", scu.erfc, lambda x, out: scale(_gaussian(x), -TWO_OVER_SQRT_PI))
# (erfinv)'(x) = sqrt(pi)/2 exp(erfinv(x)^2): +inf at ±1, where erfinv is ±inf
erfinv_p = unary("erfinv", scu.erfinv,
                 lambda x, out: scale(exp(mul(out, out)), HALF_SQRT_PI))
erfcinv_p = unary("erfcinv", scu.erfcinv,
                  lambda x, out: scale(exp(mul(out, out)), -HALF_SQRT_PI))


def erf(x):
    """The error function ``2/sqrt(pi) int_0^x exp(-t^2) dt`` (real or complex)."""
    return bind1(erf_p, None, x)


def erfc(x):
    """``1 - erf(x)``, accurate where ``erf(x)`` is close to 1."""
    return bind1(erfc_p, None, x)


def erfinv(x):
    """The inverse of ``erf`` on ``[-1, 1]`` (real): ``±inf`` at ``±1``."""
    return bind1(erfinv_p, None, x)


def erfcinv(x):
    """The inverse of ``erfc`` on ``[0, 2]`` (real): ``inf`` at 0, ``-inf`` at 2."""
    return bind1(erfcinv_p, None, x)


# ------------------------------------------------------------------ gamma family

def _polygamma_rule(n, x):
    if is_complex_value(x):
        raise DTypeError(f"polygamma: SciPy has no complex polygamma, so polygamma({n}, .) "
                         f"of {describe(x)} (the derivative of digamma, and the second "
                         "derivative of gamma and loggamma, of complex arguments) is not "
                         "available")
    return x


def _polygamma_values(n, x):
    x = np.asarray(x)
    return np.asarray(sc.polygamma(n, x)).astype(x.dtype, copy=False)


polygamma_p = primitive("polygamma", _polygamma_values, _polygamma_rule,
                        format_params=lambda n: f"n={n}", elementwise=True,
                        params=Int(1, 511))
defjvp(polygamma_p, lambda n, t, out, x: mul(t, polygamma(n + 1, x)))
defvjp(polygamma_p, lambda n, ct, out, x: mul(ct, polygamma(n + 1, x)))

digamma_p = unary("digamma", scu.psi, lambda x, out: polygamma(1, x))
gamma_p = unary("gamma", scu.gamma, lambda x, out: mul(out, digamma(x)))
gammaln_p = unary("gammaln", scu.gammaln, lambda x, out: digamma(x))
loggamma_p = unary("loggamma", scu.loggamma, lambda x, out: digamma(x))


def polygamma(n: int, x):
    """The ``n``-th derivative of ``digamma`` (``n >= 1`` static) of real ``x``, in
    ``x``'s dtype; its derivative is ``polygamma(n + 1, x)``."""
    if n == 0:
        return digamma(x)
    _polygamma_rule(n, x)      # bound, elementwise primitives skip their rule: every mode
    return bind1(polygamma_p, int(n), x)


def digamma(x):
    """``psi(x) = gamma'(x) / gamma(x)``; its derivative is ``polygamma(1, x)``."""
    return bind1(digamma_p, None, x)


def gamma(x):
    """The gamma function (real or complex); its derivative is ``gamma(x) psi(x)``."""
    return bind1(gamma_p, None, x)


def gammaln(x):
    """``log|gamma(x)|`` of real ``x``; its derivative is ``psi(x)``."""
    return bind1(gammaln_p, None, x)


def loggamma(x):
    """The principal branch of ``log(gamma(x))`` (real ``x > 0`` or complex)."""
    return bind1(loggamma_p, None, x)


# ------------------------------------------------------------------ logit, log_expit

def _logit_slope(g, x):
    """``g / (p (1 - p))`` as ``g/p + g/(1 - p)``: at ``p = 0`` or 1 the product form's
    reverse rule would multiply the infinite cotangent of ``1 / (p (1 - p))`` by the
    vanishing factor (NaN); the sum's second derivative is the infinity of its formula."""
    return add(div(g, x), div(g, sub(_ones(x), x)))


logit_p = unary("logit", scu.logit)
defjvp(logit_p, lambda p, t, out, x: _logit_slope(t, x))
defvjp(logit_p, lambda p, ct, out, x: _logit_slope(ct, x))
# log(expit(x))' = expit(-x): smooth, and accurate in both tails
log_expit_p = unary("log_expit", scu.log_expit, lambda x, out: expit(neg(x)))


def logit(x):
    """``log(p / (1 - p))`` of real ``p``: the inverse of ``expit``."""
    return bind1(logit_p, None, x)


def log_expit(x):
    """``log(expit(x))`` of real ``x``, accurate for every ``x``."""
    return bind1(log_expit_p, None, x)


# ------------------------------------------------------------------ xlogy, xlog1py

def _log_rules(logarithm, denominator, singular: float, safe: float):
    """The partial derivatives of ``x * logarithm(y)`` (0 where ``x == 0``):
    ``logarithm(y)`` and ``x / denominator(y)``, smooth wherever ``y != singular``.  At
    ``x == 0, y == singular`` (where ``x / denominator(y)`` is ``0/0``) they are
    ``logarithm(singular) = -inf`` and 0 (``f(0, y) = 0`` for every ``y``), both with
    derivative 0; the branches they replace there see ``y = safe`` instead (finite, so the
    zero cotangent they get meets finite derivatives)."""
    def at_pair(x, y):
        return logical_and(is_zero(x), equal(y, st.full_like(y, singular)))

    def d_x(x, y, out):
        pair = at_pair(x, y)
        away = logarithm(select(pair, st.full_like(y, safe), y))
        return select(pair, logarithm(stop_gradient(y)), away)

    def d_y(x, y, out):
        pair = at_pair(x, y)
        away = div(x, denominator(select(pair, st.full_like(y, safe), y)))
        return select(pair, _zeros(y), away)
    return d_x, d_y


xlogy_p = binary("xlogy", scu.xlogy, *_log_rules(log, lambda y: y, 0.0, 1.0))
xlog1py_p = binary("xlog1py", scu.xlog1py,
                   *_log_rules(log1p, lambda y: shift(y, 1.0), -1.0, 0.0))


def xlogy(x, y):
    """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is NaN).  Derivatives: ``log(y)``
    and ``x / y``, smooth wherever ``y != 0`` (``x == 0`` included: ``d/dy = 0``, mixed
    second derivative ``1/y``); at ``x == 0 == y`` the ``y`` derivative is 0 (``f(0, y)
    = 0``) and the ``x`` derivative ``log 0 = -inf``, both with derivatives 0."""
    return bind2(xlogy_p, None, x, y)


def xlog1py(x, y):
    """``x * log1p(y)``, 0 where ``x == 0``; derivatives as :func:`xlogy`'s with
    ``1 + y`` for ``y`` (the singular point is ``x == 0``, ``y == -1``)."""
    return bind2(xlog1py_p, None, x, y)


# ------------------------------------------------------------------ entr, rel_entr, kl_div

def _entr_derivative(x, out):
    """``-(log x + 1)`` for ``x >= 0`` (``+inf`` at 0); 0 for ``x < 0``, where ``entr`` is
    the constant ``-inf``."""
    outside = _negative(x)
    inside = shift(neg(log(select(outside, _ones(x), x))), -1.0)
    return select(outside, _zeros(x), inside)


entr_p = unary("entr", scu.entr, _entr_derivative)


def entr(x):
    """``-x log(x)`` for ``x > 0``, 0 at 0, ``-inf`` below (real ``x``)."""
    return bind1(entr_p, None, x)


def _domain(x, y):
    """Where ``rel_entr`` and ``kl_div`` are ``x log(x/y) (- x + y)``: ``x >= 0``,
    ``y > 0``; and the operands there, 1 elsewhere (outside, the functions are 0, ``y``
    or ``+inf``: their formulas' derivatives are not used, and kept finite)."""
    inside = logical_and(logical_or(_positive(x), is_zero(x)), _positive(y))
    return inside, select(inside, x, _ones(x)), select(inside, y, _ones(y))


def _log_ratio(x, y):
    return sub(log(x), log(y))     # not log(x / y), which overflows for large ratios


def _rel_entr_d_x(x, y, out):
    inside, xs, ys = _domain(x, y)
    return select(inside, shift(_log_ratio(xs, ys), 1.0), _zeros(x))


def _rel_entr_d_y(x, y, out):
    inside, xs, ys = _domain(x, y)
    return select(inside, neg(div(xs, ys)), _zeros(y))


def _kl_div_d_x(x, y, out):
    inside, xs, ys = _domain(x, y)
    return select(inside, _log_ratio(xs, ys), _zeros(x))


def _kl_div_d_y(x, y, out):
    """``1 - x/y`` inside; at ``x == 0 == y`` 1 (``kl_div(0, y) = y`` for ``y >= 0``);
    0 where ``kl_div`` is ``+inf``."""
    inside, xs, ys = _domain(x, y)
    origin = logical_and(is_zero(x), is_zero(y))
    edge = select(origin, _ones(y), _zeros(y))
    return select(inside, sub(_ones(y), div(xs, ys)), edge)


rel_entr_p = binary("rel_entr", scu.rel_entr, _rel_entr_d_x, _rel_entr_d_y)
kl_div_p = binary("kl_div", scu.kl_div, _kl_div_d_x, _kl_div_d_y)


def rel_entr(x, y):
    """``x log(x/y)`` for ``x > 0, y > 0``; 0 for ``x == 0, y >= 0``; ``+inf``
    elsewhere (real operands).  Inside the domain (``x == 0`` included) the derivatives
    are ``log(x/y) + 1`` and ``-x/y``; at ``x == 0 == y`` and where the value is ``+inf``
    they are taken as 0."""
    return bind2(rel_entr_p, None, x, y)


def kl_div(x, y):
    """``x log(x/y) - x + y`` for ``x > 0, y > 0``; ``y`` for ``x == 0, y >= 0``;
    ``+inf`` elsewhere (real operands).  Derivatives ``log(x/y)`` and ``1 - x/y`` inside
    the domain; at ``x == 0 == y``: 0 and 1 (``kl_div(0, y) = y``); 0 where the value is
    ``+inf``."""
    return bind2(kl_div_p, None, x, y)


# ------------------------------------------------------------------ erfcx, ndtr, log_ndtr

#: above this erfcx' is its asymptotic series: 2 x erfcx(x) - 2/sqrt(pi) cancels there
#: (relative error ~ eps x^2), the series' truncation error is below 1e-14
ERFCX_TAIL = 20.0
#: (2n+1)!! / 2^n, n = 0..6: erfcx'(x) ~ -1/(sqrt(pi) x^2) sum_n (-1)^n c_n x^(-2n)
_ERFCX_SLOPE_SERIES = (1.0, 1.5, 3.75, 13.125, 59.0625, 324.84375, 2111.484375)


def _erfcx_tail_slope(x):
    """The asymptotic series of ``erfcx'`` (``x >= ERFCX_TAIL``), in ``u = 1/x^2``."""
    inverse = div(_ones(x), x)          # not 1/x^2, whose derivative is 0 * inf at inf
    u = mul(inverse, inverse)
    series = st.full_like(x, _ERFCX_SLOPE_SERIES[-1] * (-1) ** (len(_ERFCX_SLOPE_SERIES) - 1))
    for n in range(len(_ERFCX_SLOPE_SERIES) - 2, -1, -1):
        series = shift(mul(series, u), _ERFCX_SLOPE_SERIES[n] * (-1) ** n)
    return scale(mul(u, series), -INV_SQRT_PI)


def _erfcx_slope(x, out):
    """``erfcx'(x) = 2 x erfcx(x) - 2/sqrt(pi)``; for real ``x > ERFCX_TAIL`` the series
    (the formula's operands kept at the threshold there, and the series' below it, so
    neither branch of the select sees an infinity)."""
    if is_complex_value(x):
        return shift(scale(mul(x, out), 2.0), -TWO_OVER_SQRT_PI)
    tail = _positive(shift(x, -ERFCX_TAIL))
    threshold = st.full_like(x, ERFCX_TAIL)
    near = select(tail, threshold, x)
    value = select(tail, st.full_like(out, 0), out)
    formula = shift(scale(mul(near, value), 2.0), -TWO_OVER_SQRT_PI)
    return select(tail, _erfcx_tail_slope(select(tail, x, threshold)), formula)


erfcx_p = unary("erfcx", scu.erfcx, _erfcx_slope)


def _normal_density(x):
    return scale(exp(scale(mul(x, x), -0.5)), INV_SQRT_2PI)


ndtr_p = unary("ndtr", scu.ndtr, lambda x, out: _normal_density(x))


def _log_ndtr_slope(x, out):
    """``phi(x) / ndtr(x)``.  Left of 0 (real part) as ``sqrt(2/pi) / erfcx(-x/sqrt(2))``
    (``ndtr(x) = erfcx(-x/sqrt(2)) exp(-x^2/2) / 2``: the Gaussians cancel, so nothing
    underflows in the left tail, where the slope grows like ``-x``); right of it as
    written (``ndtr >= 1/2``; the density underflows to the right limit 0).  Each branch
    sees 0 where the other is taken."""
    left = _negative(real(x))
    zeros = _zeros(x)
    on_left, on_right = select(left, x, zeros), select(left, zeros, x)
    left_slope = div(st.full_like(x, SQRT_2_OVER_PI), erfcx(scale(on_left, -SQRT_HALF)))
    right_slope = div(_normal_density(on_right), ndtr(on_right))
    return select(left, left_slope, right_slope)


log_ndtr_p = unary("log_ndtr", scu.log_ndtr, _log_ndtr_slope)


def erfcx(x):
    """The scaled complementary error function ``exp(x^2) erfc(x)`` (real or complex); its
    derivative is ``2 x erfcx(x) - 2/sqrt(pi)`` (an asymptotic series for real
    ``x > 20``, where that difference cancels)."""
    return bind1(erfcx_p, None, x)


def ndtr(x):
    """The standard normal distribution function (real or complex); its derivative is the
    normal density ``exp(-x^2/2) / sqrt(2 pi)``."""
    return bind1(ndtr_p, None, x)


def log_ndtr(x):
    """``log(ndtr(x))``, accurate in both tails (real or complex); its derivative
    ``phi(x) / ndtr(x)`` is computed without underflow (through ``erfcx`` left of 0)."""
    return bind1(log_ndtr_p, None, x)


# ------------------------------------------------------------------ modified Bessel functions

def _real_only(name: str):
    def rule(n, x):
        if is_complex_value(x):
            raise DTypeError(f"{name}: real arguments only (SciPy's i0, i0e, i1 and i1e have "
                             f"no complex version), got {describe(x)}")
        return x
    return rule


def _bessel_values(scaled: bool):
    """SciPy's ``i0``/``i1`` (``i0e``/``i1e``) for orders 0 and 1, ``iv`` (``ive``) above,
    in ``x``'s dtype."""
    first = (scu.i0e, scu.i1e) if scaled else (scu.i0, scu.i1)
    general = scu.ive if scaled else scu.iv

    def values(n, x):
        x = np.asarray(x)
        result = first[n](x) if n < 2 else general(n, x)
        return np.asarray(result).astype(x.dtype, copy=False)
    return values


def _bessel_slope(n: int, x, bessel):
    """``I_n' = (I_(n-1) + I_(n+1)) / 2`` (``I_0' = I_1``): no ``I_1 / x``, whose 0/0 at
    ``x = 0`` and cancellation near it the recurrence avoids at every order."""
    if n == 0:
        return bessel(1, x)
    return scale(add(bessel(n - 1, x), bessel(n + 1, x)), 0.5)


iv_p = primitive("iv", _bessel_values(False), _real_only("iv"),
                 format_params=lambda n: f"n={n}", elementwise=True, params=Int(0, 511))
defjvp(iv_p, lambda n, t, out, x: mul(t, _bessel_slope(n, x, iv)))
defvjp(iv_p, lambda n, ct, out, x: mul(ct, _bessel_slope(n, x, iv)))


def _ive_slope(n: int, x, out):
    """``d/dx exp(-|x|) I_n(x) = exp(-|x|) I_n'(x) - sign(x) ive(n, x)``.  At ``x = 0``
    (a kink of ``i0e``: one-sided slopes -1 and +1; of a higher derivative for ``n >= 1``)
    the derivatives of ``cosh(x) I_n(x)``, the function with the same even part: their
    odd orders are the means of the one-sided ones (0 for ``i0e'``) and their even orders
    the one-sided limits, which agree (``i0e''(0) = 3/2``)."""
    at_zero = is_zero(x)
    origin = select(at_zero, x, _zeros(x))
    symmetric = add(mul(sinh(origin), iv(n, origin)),
                    mul(cosh(origin), _bessel_slope(n, origin, iv)))
    away = sub(_bessel_slope(n, x, ive), mul(sign(x), out))
    return select(at_zero, symmetric, away)


ive_p = primitive("ive", _bessel_values(True), _real_only("ive"),
                  format_params=lambda n: f"n={n}", elementwise=True, params=Int(0, 511))
defjvp(ive_p, lambda n, t, out, x: mul(t, _ive_slope(n, x, out)))
defvjp(ive_p, lambda n, ct, out, x: mul(ct, _ive_slope(n, x, out)))


def iv(n: int, x):
    """The modified Bessel function ``I_n(x)`` of integer order ``n >= 0`` (static) and
    real ``x`` (SciPy's ``i0``, ``i1`` for ``n = 0, 1``); its derivative is
    ``(I_(n-1) + I_(n+1)) / 2`` (``I_0' = I_1``)."""
    _real_only("iv")(n, x)      # bound, elementwise primitives skip their rule: every mode
    return bind1(iv_p, int(n), x)


def ive(n: int, x):
    """The exponentially scaled ``exp(-|x|) I_n(x)`` (SciPy's ``i0e``, ``i1e``, ``ive``)."""
    _real_only("ive")(n, x)
    return bind1(ive_p, int(n), x)


# ------------------------------------------------------------------ shape-parameter families

# The derivatives of gammainc and betainc in their shape parameters are primitives whose
# param is the order (k in a; (m, n) in (a, b)): their derivatives in the shape parameters
# are the next members of the family, the one in x a closed form (the density times a
# polynomial in centred logarithms, shape_derivatives.py), so every order has rules.
_LIBRARY = sd.Arithmetic(add, sub, mul, scale, polygamma)
_SHAPE_ORDERS = TupleOf(Int(0, 511), min_length=2, max_length=2,
                        valid=lambda mn: mn[0] + mn[1] >= 1, rule="of total order >= 1",
                        example=(1, 0))


def _bell_sum(m: int, n: int, higher, u, v):
    """``Y_{m,n} = sum C(m,i) C(n,j) u^i v^j V_{m-i,n-j}`` (:mod:`.shape_derivatives`) in
    the centred logarithms ``u`` and ``v`` (``u`` unused when ``m == 0``, ``v`` when
    ``n == 0``), ``higher`` the log-derivatives of the density's normalisation."""
    coefficients = sd.bell_coefficients(m, n, sd.centred(higher), _LIBRARY)
    total = None
    for weight, i, j, value in sd.polynomial_terms(m, n, coefficients):
        term = None if value is sd.ONE else value
        for base, power_ in ((u, i), (v, j)):
            for _ in range(power_):
                term = base if term is None else mul(term, base)
        term = _ones(u if v is None else v) if term is None else term
        term = scale(term, float(weight)) if weight != 1 else term
        total = term if total is None else add(total, term)
    return total


# ------------------------------------------------------------------ incomplete gamma

def _gamma_density(a, x):
    """``x^(a-1) exp(-x) / Gamma(a)``, the slope of ``gammainc(a, .)``: through logarithms
    (``x^(a-1)`` and ``Gamma(a)`` overflow long before their ratio does); at ``x == 0`` as
    the power itself, whose derivatives at base 0 are right for every ``a`` (``a = 2``:
    slope 1; a logarithm would give ``0 * inf``); 0 at ``x == inf``.  Each branch sees
    operands where it is finite (``x = 0, a = 1`` or ``x = 1``) where it is not taken."""
    at_zero, at_infinity = is_zero(x), isinf(x)
    ones = _ones(x)
    inside = select(logical_or(at_zero, at_infinity), ones, x)
    logs = sub(sub(xlogy(shift(a, -1.0), inside), inside), gammaln(a))
    origin_x = select(at_zero, x, _zeros(x))
    origin_a = select(at_zero, a, ones)
    origin = div(mul(power(origin_x, shift(origin_a, -1.0)), exp(neg(origin_x))),
                 gamma(origin_a))
    away = select(at_infinity, _zeros(x), exp(logs))
    return select(at_zero, origin, away)


gammainc_shape_p = primitive("gammainc_shape_derivative",
                             lambda k, a, x: sd.gammainc_derivative(k, a, x),
                             same_operands("gammainc_shape_derivative"),
                             format_params=lambda k: f"k={k}", elementwise=True,
                             params=Int(1, 511))


def gammainc_shape_derivative(k: int, a, x):
    """``d^k/da^k gammainc(a, x)`` (static ``k >= 1``; operands of one shape and dtype), by
    quadrature (:mod:`.shape_derivatives`): 0 at ``x = 0`` and ``inf``, NaN outside
    ``a > 0, x >= 0``.  Its derivative in ``a`` is the order ``k + 1``, the one in ``x``
    the closed form ``x^(a-1) exp(-x) / Gamma(a) Y_k(ln x - psi(a))``."""
    return bind2(gammainc_shape_p, int(k), a, x)


def _gamma_shape_slope(k: int, a, x):
    """``d/dx d^k/da^k gammainc(a, x)``: the gamma density times ``Y_k(u)``,
    ``u = ln x - psi(a)`` (NaN at ``x = 0``, where the density is 0 or infinite against
    a log)."""
    u = sub(log(x), digamma(a))
    higher = sd.gamma_log_derivatives(a, _LIBRARY)
    return mul(_gamma_density(a, x), _bell_sum(k, 0, higher, u, None))


defjvp(gammainc_shape_p,
       lambda k, t, out, a, x: mul(t, gammainc_shape_derivative(k + 1, a, x)),
       lambda k, t, out, a, x: mul(t, _gamma_shape_slope(k, a, x)))
defvjp(gammainc_shape_p,
       lambda k, ct, out, a, x: mul(ct, gammainc_shape_derivative(k + 1, a, x)),
       lambda k, ct, out, a, x: mul(ct, _gamma_shape_slope(k, a, x)))


def _incomplete_gamma(name: str, fn, half: bool, sign: float):
    """``fn(p, x)``: ``gammainc``/``gammaincc`` of ``(p, x)``, or of ``(p/2, x/2)`` for
    ``half`` (``chdtr``/``chdtrc``); ``sign`` that of the slope in ``x`` (and of the
    derivatives in ``p``: ``gammaincc = 1 - gammainc``)."""
    factor = sign * (0.5 if half else 1.0)

    def arguments(p, x):
        return (scale(p, 0.5), scale(x, 0.5)) if half else (p, x)

    def d_p(p, x, out):
        return scale(gammainc_shape_derivative(1, *arguments(p, x)), factor)

    def d_x(p, x, out):
        return scale(_gamma_density(*arguments(p, x)), factor)
    return binary(name, fn, d_p, d_x)


gammainc_p = _incomplete_gamma("gammainc", scu.gammainc, False, 1.0)
gammaincc_p = _incomplete_gamma("gammaincc", scu.gammaincc, False, -1.0)
chdtr_p = _incomplete_gamma("chdtr", scu.chdtr, True, 1.0)
chdtrc_p = _incomplete_gamma("chdtrc", scu.chdtrc, True, -1.0)


# ------------------------------------------------------------------ incomplete beta, Student t

def _same_three(params, a, b, x):
    """Shape rule of a three-operand elementwise primitive: operands of one shape and
    dtype (the NumPy surface broadcasts and promotes first)."""
    if not (same_meta(a, b) and same_meta(a, x)):
        raise ShapeError(f"incomplete beta: operands {describe(a)}, {describe(b)} and {describe(x)} "
                         "differ; use tp.scipy.special.betainc for broadcasting")
    return a


def _beta_density(a, b, x):
    """``x^(a-1) (1-x)^(b-1) / B(a, b)``, the slope of ``betainc(a, b, .)``, through
    logarithms (xlogy and xlog1py are 0 where their factor is: ``a = 1`` at ``x = 0``)."""
    logs = add(xlogy(shift(a, -1.0), x), xlog1py(shift(b, -1.0), neg(x)))
    log_beta = sub(add(gammaln(a), gammaln(b)), gammaln(add(a, b)))
    return exp(sub(logs, log_beta))


def _shape_slope(m: int, n: int, a, b, x):
    """``d/dx d^m/da^m d^n/db^n betainc(a, b, x) = f(x) Y_{m,n}``, ``f`` the beta density
    and ``Y`` in ``u = ln x - psi(a) + psi(a+b)``, ``v = ln(1-x) - psi(b) + psi(a+b)``
    (NaN at ``x = 0`` and ``x = 1``, where ``f`` is 0 or infinite against a log)."""
    psi_total = digamma(add(a, b))
    u = add(log(x), sub(psi_total, digamma(a))) if m else None
    v = add(log1p(neg(x)), sub(psi_total, digamma(b))) if n else None
    higher = sd.beta_log_derivatives(a, b, _LIBRARY)
    return mul(_beta_density(a, b, x), _bell_sum(m, n, higher, u, v))


def _shape_values(orders, a, b, x):
    return sd.betainc_derivative(orders[0], orders[1], a, b, x)


betainc_shape_p = primitive("betainc_shape_derivative", _shape_values, _same_three,
                            format_params=lambda mn: f"m={mn[0]}, n={mn[1]}",
                            elementwise=True, params=_SHAPE_ORDERS)


def betainc_shape_derivative(m: int, n: int, a, b, x):
    """``d^m/da^m d^n/db^n betainc(a, b, x)`` (static ``m + n >= 1``; operands of one shape
    and dtype), by quadrature (:mod:`.shape_derivatives`): 0 at ``x = 0`` and 1, NaN
    outside ``a > 0, b > 0, 0 <= x <= 1``.  Its derivatives in ``a`` and ``b`` are the
    orders ``(m+1, n)`` and ``(m, n+1)``, the one in ``x`` the closed form
    ``f(x) Y_{m,n}``."""
    return bind(betainc_shape_p, (int(m), int(n)), a, b, x)


defjvp(betainc_shape_p,
       lambda mn, t, out, a, b, x: mul(t, betainc_shape_derivative(mn[0] + 1, mn[1], a, b, x)),
       lambda mn, t, out, a, b, x: mul(t, betainc_shape_derivative(mn[0], mn[1] + 1, a, b, x)),
       lambda mn, t, out, a, b, x: mul(t, _shape_slope(mn[0], mn[1], a, b, x)))
defvjp(betainc_shape_p,
       lambda mn, ct, out, a, b, x: mul(ct, betainc_shape_derivative(mn[0] + 1, mn[1], a, b, x)),
       lambda mn, ct, out, a, b, x: mul(ct, betainc_shape_derivative(mn[0], mn[1] + 1, a, b, x)),
       lambda mn, ct, out, a, b, x: mul(ct, _shape_slope(mn[0], mn[1], a, b, x)))


def _incomplete_beta(name: str, fn, sign: float):
    """``fn(a, b, x)``: ``betainc`` (``sign`` +1) or ``betaincc`` (-1); SciPy's value, and
    its derivatives in ``a`` and ``b`` those of the shape family (sign flipped for
    ``betaincc = 1 - betainc``)."""
    prim = primitive(name, lambda params, a, b, x: fn(a, b, x), _same_three, array_fn=fn,
                     elementwise=True)

    def signed(value):
        return value if sign > 0 else neg(value)

    def in_a(a, b, x):
        return signed(betainc_shape_derivative(1, 0, a, b, x))

    def in_b(a, b, x):
        return signed(betainc_shape_derivative(0, 1, a, b, x))

    def in_x(a, b, x):
        return signed(_beta_density(a, b, x))
    partials = (in_a, in_b, in_x)
    defjvp(prim, *[(lambda d: lambda p, t, out, a, b, x: mul(t, d(a, b, x)))(d)
                   for d in partials])
    defvjp(prim, *[(lambda d: lambda p, ct, out, a, b, x: mul(ct, d(a, b, x)))(d)
                   for d in partials])
    return prim


betainc_p = _incomplete_beta("betainc", scu.betainc, 1.0)
betaincc_p = _incomplete_beta("betaincc", scu.betaincc, -1.0)


def betainc(a, b, x):
    """The regularized incomplete beta function ``I_x(a, b)`` (real operands of one shape
    and dtype), SciPy's value; differentiable to any order in ``a``, ``b`` and ``x``: in
    ``x`` the density ``x^(a-1) (1-x)^(b-1) / B(a, b)``, in ``a`` and ``b``
    :func:`betainc_shape_derivative`."""
    return bind(betainc_p, None, a, b, x)


def betaincc(a, b, x):
    """``1 - betainc(a, b, x)``, accurate where ``betainc`` is near 1."""
    return bind(betaincc_p, None, a, b, x)


def _t_density(df, t):
    """The Student t density with ``df`` degrees of freedom, through logarithms."""
    half = scale(shift(df, 1.0), 0.5)
    logs = sub(sub(gammaln(half), gammaln(scale(df, 0.5))),
               add(scale(log(scale(df, math.pi)), 0.5),
                   mul(half, log1p(div(mul(t, t), df)))))
    return exp(logs)


# stdtr(df, t) = 1/2 + J(df/2, q)/2 with q = t / sqrt(df + t^2) and J(h, q) = sign(q)
# betainc(1/2, h, q^2) (SciPy's 1 - betainc(df/2, 1/2, df/(df + t^2))/2 for t > 0, mirrored
# below).  J is smooth (odd) in q, where betainc of t^2 has a square-root kink at t = 0, so
# stdtr's df derivatives are the family d^k/dh^k J, whose q derivative is a closed form.

def _odd_values(k, h, q):
    return sd.odd_betainc_derivative(k, h, q)


stdtr_shape_p = primitive("stdtr_shape_derivative", _odd_values,
                          same_operands("stdtr_shape_derivative"),
                          format_params=lambda k: f"k={k}", elementwise=True,
                          params=Int(1, 511))


def stdtr_shape_derivative(k: int, h, q):
    """``d^k/dh^k [sign(q) betainc(1/2, h, q^2)]`` (static ``k >= 1``): the ``k``-th
    derivative of ``2 stdtr(2h, t) - 1`` in ``h`` at fixed ``q = t / sqrt(2h + t^2)``."""
    return bind2(stdtr_shape_p, int(k), h, q)


def _odd_slope(k: int, h, q):
    """``d/dq d^k/dh^k J(h, q) = 2 (1-q^2)^(h-1) / B(1/2, h) Y_{0,k}(v)``, ``v = ln(1-q^2)
    - psi(h) + psi(h + 1/2)``: ``d/dq betainc(1/2, h, q^2) = 2 |q| f(q^2)``, whose
    ``|q|`` cancels the density's ``(q^2)^(-1/2)``."""
    half = st.full_like(h, 0.5)
    log_rest = log1p(neg(mul(q, q)))
    log_beta = sub(add(gammaln(half), gammaln(h)), gammaln(shift(h, 0.5)))
    density = scale(exp(sub(mul(shift(h, -1.0), log_rest), log_beta)), 2.0)
    v = add(log_rest, sub(digamma(shift(h, 0.5)), digamma(h)))
    higher = sd.beta_log_derivatives(half, h, _LIBRARY)
    return mul(density, _bell_sum(0, k, higher, None, v))


defjvp(stdtr_shape_p,
       lambda k, t, out, h, q: mul(t, stdtr_shape_derivative(k + 1, h, q)),
       lambda k, t, out, h, q: mul(t, _odd_slope(k, h, q)))
defvjp(stdtr_shape_p,
       lambda k, ct, out, h, q: mul(ct, stdtr_shape_derivative(k + 1, h, q)),
       lambda k, ct, out, h, q: mul(ct, _odd_slope(k, h, q)))


def _stdtr_df_slope(df, t, out):
    """``d stdtr / d df = dJ/dh / 4 + dJ/dq dq/ddf / 2 = K_1(df/2, q) / 4 - t f(t) / (2 df)``
    (``dq/ddf = -t / (2 (df + t^2)^(3/2))`` and ``f = dJ/dq dq/dt / 2``, ``dq/dt = df /
    (df + t^2)^(3/2)``): smooth through ``t = 0``."""
    q = div(t, sqrt(add(df, mul(t, t))))
    shape = stdtr_shape_derivative(1, scale(df, 0.5), q)
    return sub(scale(shape, 0.25), div(mul(t, _t_density(df, t)), scale(df, 2.0)))


stdtr_p = binary("stdtr", scu.stdtr, _stdtr_df_slope, lambda df, t, out: _t_density(df, t))


def stdtr(df, t):
    """The Student t distribution function with ``df`` degrees of freedom, SciPy's value;
    differentiable to any order: in ``t`` the t density, in ``df`` through
    :func:`stdtr_shape_derivative`."""
    return bind2(stdtr_p, None, df, t)


def gammainc(a, x):
    """The regularized lower incomplete gamma function ``P(a, x)`` (real operands), SciPy's
    value; its derivative in ``x`` is ``x^(a-1) exp(-x) / Gamma(a)``, those in ``a``
    :func:`gammainc_shape_derivative`."""
    return bind2(gammainc_p, None, a, x)


def gammaincc(a, x):
    """``Q(a, x) = 1 - P(a, x)``, the regularized upper incomplete gamma function."""
    return bind2(gammaincc_p, None, a, x)


def chdtr(v, x):
    """The chi-square distribution function with ``v`` degrees of freedom,
    ``gammainc(v/2, x/2)``; derivatives as :func:`gammainc`'s."""
    return bind2(chdtr_p, None, v, x)


def chdtrc(v, x):
    """The chi-square survival function ``gammaincc(v/2, x/2)``."""
    return bind2(chdtrc_p, None, v, x)


__all__ = ["erf", "erfc", "erfinv", "erfcinv", "polygamma", "digamma", "gamma", "gammaln",
           "loggamma", "logit", "log_expit", "xlogy", "xlog1py", "entr", "rel_entr",
           "kl_div", "erfcx", "ndtr", "log_ndtr", "iv", "ive", "gammainc", "gammaincc",
           "chdtr", "chdtrc", "betainc", "betaincc", "stdtr"]

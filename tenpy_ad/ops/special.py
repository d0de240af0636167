"""Special functions of ``scipy.special``: the error function and its inverses, the gamma
family (``gamma``, ``gammaln``, ``loggamma``, ``digamma`` and ``polygamma(n, .)`` for a
static order ``n``), ``logit`` and ``log_expit``, and the information-theory functions
``xlogy``, ``xlog1py``, ``entr``, ``rel_entr`` and ``kl_div``.

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

from ..errors import DTypeError
from ..param_schema import Int
from ..primitive import bind1, bind2, describe, is_complex_value, primitive
from ..rules import defjvp, defvjp
from . import structural as st
from .elementwise import (add, binary, div, equal, exp, is_zero, less_p, log, mul, neg,
                          scale, select, shift, stop_gradient, sub, unary)
from .logic import logical_and, logical_or
from .transcendental import expit, log1p

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
HALF_SQRT_PI = math.sqrt(math.pi) / 2.0


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


__all__ = ["erf", "erfc", "erfinv", "erfcinv", "polygamma", "digamma", "gamma", "gammaln",
           "loggamma", "logit", "log_expit", "xlogy", "xlog1py", "entr", "rel_entr",
           "kl_div"]

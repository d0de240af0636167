"""The derivatives of the regularized incomplete beta function in its shape parameters,
``D_{m,n}(a, b, x) = d^m/da^m d^n/db^n I_x(a, b)`` (``m + n >= 1``), and of the
regularized incomplete gamma function ``P(a, x)`` in ``a``, as numbers.

``I_x(a, b) = int_0^x f(t) dt`` with the beta density ``f = exp(L)``,
``L = (a-1) ln t + (b-1) ln(1-t) + c(a, b)``, ``c = -ln B(a, b)``.  Differentiating under
the integral, ``d^m/da^m d^n/db^n f = f Y_{m,n}`` with ``Y`` the complete Bell polynomial
of the partial derivatives of ``L``: ``L_a = ln t + c_a``, ``L_b = ln(1-t) + c_b`` and,
above the first order, those of ``c`` alone (polygammas, independent of ``t``).  Written
in ``u = ln t + c_a`` and ``v = ln(1-t) + c_b`` (the centred logarithms; ``c_a = psi(a+b)
- psi(a)``),

    Y_{m,n} = sum_{i <= m, j <= n} C(m, i) C(n, j) u^i v^j V_{m-i,n-j}(a, b),

where ``V`` is the Bell polynomial with its first-order entries set to 0
(:func:`bell_coefficients` of :func:`centred` derivatives).  Centring keeps ``ln t``
from cancelling against ``c_a`` in the bulk of the density.  Near an end where a logarithm
vanishes (``ln(1-t)`` at ``t -> 0``) that one is better raw, its ``c_b`` kept in ``V``
(for ``b = 1`` the centred ``Y`` cancels to ``O(t)`` near ``t = 1``): each side of the
integral centres only the logarithm that does not vanish on it.

``D_{m,n}`` is then one integral.  Since ``I_1(a, b) = 1`` for all ``a, b``,
``int_0^1 f Y_{m,n} dt = 0``: ``D = int_0^x f Y = -int_x^1 f Y``.  The side away from the
bulk of the density is integrated (``[0, x]`` left of the mean ``a / (a+b)``, ``[x, 1]``
right of it), so neither tail loses digits to the other.  On ``[0, y]`` an endpoint power
``s^(alpha-1)`` with ``alpha < 1`` is taken out by ``s = y w^(1/alpha)`` (``ds
s^(alpha-1) = y^alpha / alpha dw``): what is left is smooth but for powers of ``ln w``,
which SciPy's QAGS handles to ~1e-13; above 1 there is no substitution (it would squeeze
the density into a boundary layer); the interval is split at the density's mode.

The coefficients are computed with a first-order bound of their rounding (:data:`ROUNDED`),
carried through ``Y``: where ``Y`` cancels far below its terms (``a = 1`` near ``x = 0``,
whose ``V_{0,k}`` vanish exactly as differences of polygammas), the bound exceeds the
result and the derivative is NaN rather than a number with few correct digits.  The same
helpers, given the library's operations instead of NumPy's, build the rules' expressions
(:mod:`.special`), so the numbers and the derivative rules share one formula.

``P(a, x) = int_0^x t^(a-1) exp(-t) / Gamma(a) dt`` is the same with one shape parameter:
``L = (a-1) ln t - t - ln Gamma(a)``, ``u = ln t - psi(a)``, the higher derivatives
``-psi^(i-1)(a)``; its sides are ``[0, x]`` (``t = x w^(1/a)`` for ``a < 1``) and
``[x, inf)``, split at the mean ``a``.
"""
from __future__ import annotations

import math
import warnings
from typing import Callable, NamedTuple

import numpy as np
import scipy.special as sc
from scipy import integrate

#: QAGS' relative tolerance; a result whose error (QAGS' estimate plus a bound of the
#: rounding in Y) is above ACCEPTED relative to the integral of |f Y| is NaN rather than
#: an inaccurate derivative
TOLERANCE = 1e-13
ACCEPTED = 1e-9
LIMIT = 400
#: the rounding of Y: ROUNDING * eps times its first-order bound (_evaluate)
ROUNDING = 4.0
EPS = float(np.finfo(np.float64).eps)


class _One:
    """``V_{0,0}``: the unit, kept apart from the values (a NumPy scalar is a float)."""

    def __repr__(self) -> str:
        return "ONE"


ONE = _One()


class Arithmetic(NamedTuple):
    """The operations the formulas are written in: NumPy's for the numbers, the library's
    for the derivative rules (``polygamma(k, x)``, ``k >= 0``: ``psi`` for 0)."""
    add: Callable
    sub: Callable
    mul: Callable
    scale: Callable
    polygamma: Callable


NUMPY = Arithmetic(np.add, np.subtract, np.multiply, lambda x, c: x * c,
                   lambda k, x: sc.polygamma(k, x) if k else sc.psi(x))


class Rounded(NamedTuple):
    """A value and a first-order bound of its rounding error in units of eps."""
    value: np.ndarray
    error: np.ndarray


def _rounded_sum(sign: float):
    def combine(x: Rounded, y: Rounded) -> Rounded:
        value = x.value + sign * y.value
        return Rounded(value, x.error + y.error + np.abs(value))
    return combine


def _rounded_product(x: Rounded, y: Rounded) -> Rounded:
    value = x.value * y.value
    return Rounded(value, np.abs(x.value) * y.error + np.abs(y.value) * x.error
                   + np.abs(value))


def _rounded_polygamma(k: int, x: Rounded) -> Rounded:
    value = NUMPY.polygamma(k, x.value)       # SciPy's: within a few ulps
    return Rounded(value, 4.0 * np.abs(value))


#: the same formulas with their rounding errors (first order): where a coefficient is a
#: difference of polygammas far below its parts, the error says so
ROUNDED = Arithmetic(_rounded_sum(1.0), _rounded_sum(-1.0), _rounded_product,
                     lambda x, c: Rounded(x.value * c, abs(c) * x.error + np.abs(x.value * c)),
                     _rounded_polygamma)


def beta_log_derivatives(a, b, ops: Arithmetic) -> Callable:
    """``(i, j) -> d^i/da^i d^j/db^j c(a, b)`` (``i + j >= 1``), ``c = -ln B(a, b) =
    ln Gamma(a+b) - ln Gamma(a) - ln Gamma(b)``: with ``ln t`` and ``ln(1-t)`` added to
    the first ones, the derivatives of the beta density's logarithm."""
    def derivative(i: int, j: int):
        upper = ops.polygamma(i + j - 1, ops.add(a, b))
        if j == 0:
            return ops.sub(upper, ops.polygamma(i - 1, a))
        if i == 0:
            return ops.sub(upper, ops.polygamma(j - 1, b))
        return upper
    return derivative


def gamma_log_derivatives(a, ops: Arithmetic) -> Callable:
    """``(i, 0) -> d^i/da^i (-ln Gamma(a)) = -psi^(i-1)(a)`` (``i >= 1``): with ``ln t``
    added to the first, the derivatives of the logarithm of the gamma density
    ``t^(a-1) exp(-t) / Gamma(a)``."""
    return lambda i, j: ops.scale(ops.polygamma(i - 1, a), -1.0)


def centred(derivative: Callable, first: tuple = ((1, 0), (0, 1))) -> Callable:
    """``derivative`` with the first-order entries in ``first`` set to 0 (``None``): those
    that go into the centred logarithms instead."""
    return lambda i, j: None if (i, j) in first else derivative(i, j)


def bell_coefficients(m: int, n: int, derivative: Callable, ops: Arithmetic) -> dict:
    """``V_{p,q}`` for ``p <= m, q <= n``: the Bell polynomials of ``derivative(i, j)``
    (``None`` for a zero entry), ``None`` for a zero, :data:`ONE` for ``V_{0,0}``.
    Leibniz on ``d/da exp(L) = L_a exp(L)``: ``V_{p+1,q} = sum_{i<=p, j<=q} C(p,i) C(q,j)
    L_{i+1,j} V_{p-i,q-j}`` (``d/db`` likewise for ``p = 0``)."""
    derivatives: dict = {}

    def cached(i, j):
        if (i, j) not in derivatives:
            derivatives[i, j] = derivative(i, j)
        return derivatives[i, j]

    coefficients: dict = {(0, 0): ONE}
    for p in range(m + 1):
        for q in range(n + 1):
            if (p, q) == (0, 0):
                continue
            if p > 0:           # d/da of V_{p-1,q}
                terms = [(math.comb(p - 1, i) * math.comb(q, j), (i + 1, j), (p - 1 - i, q - j))
                         for i in range(p) for j in range(q + 1)]
            else:               # d/db of V_{0,q-1}
                terms = [(math.comb(q - 1, j), (0, j + 1), (0, q - 1 - j)) for j in range(q)]
            coefficients[p, q] = _sum_of_products(terms, cached, coefficients, ops)
    return coefficients


def _sum_of_products(terms, higher, coefficients, ops: Arithmetic):
    """``sum weight * L_{i,j} * V_{p,q}`` over ``terms``, skipping zeros (``None``)."""
    total = None
    for weight, (i, j), index in terms:
        factor = coefficients[index]
        entry = None if factor is None else higher(i, j)
        if entry is None:
            continue
        term = entry if factor is ONE else ops.mul(entry, factor)
        term = ops.scale(term, float(weight)) if weight != 1 else term
        total = term if total is None else ops.add(total, term)
    return total


def polynomial_terms(m: int, n: int, coefficients: dict) -> list:
    """``[(weight, i, j, V)]``: ``Y_{m,n} = sum weight u^i v^j V`` (``V`` never ``None``)."""
    return [(math.comb(m, i) * math.comb(n, j), i, j, coefficients[m - i, n - j])
            for i in range(m + 1) for j in range(n + 1)
            if coefficients[m - i, n - j] is not None]


# ------------------------------------------------------------------ the integrals

def _quadrature(parts: Callable, lower: float, upper: float,
                peak: float | None = None) -> float:
    """``int f Y`` by QAGS (QAGI for an infinite ``upper``) to ``TOLERANCE``, split at
    ``peak`` when it is inside; ``parts(t) = (f, Y, E)`` with ``E`` the bound of ``Y``'s
    rounding error in units of eps (:func:`_evaluate`).  NaN when QAGS' error estimate
    plus ``ROUNDING eps int f E`` exceeds ``ACCEPTED`` times ``int |f Y|`` (where ``Y``
    cancels to far below its terms, as for ``b = 1`` near ``x = 1``, the rounding would
    be the result): no inaccurate derivative."""
    points = [peak] if peak is not None and lower < peak < upper else None

    def integral(fn, tolerance):
        return integrate.quad(fn, lower, upper, epsabs=0.0, epsrel=tolerance, limit=LIMIT,
                              points=points)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        value, error = integral(lambda t: _product(parts(t)), TOLERANCE)
        magnitude, _ = integral(lambda t: _size(parts(t)), 1e-4)
        noise = error + ROUNDING * EPS * magnitude
        if noise <= ACCEPTED * abs(value):
            return value
        size, _ = integral(lambda t: abs(_product(parts(t))), 1e-6)
    return value if noise <= ACCEPTED * size else math.nan


def _product(parts: tuple) -> float:
    return parts[0] * parts[1]


def _size(parts: tuple) -> float:
    return parts[0] * parts[2]


def _power_substitution(alpha: float) -> float:
    """The exponent ``gamma`` of ``s = y w^(1/gamma)`` on ``[0, y]``: ``alpha`` below 1,
    which turns the endpoint singularity ``s^(alpha-1)`` into a constant; 1 (no
    substitution) above, where ``s^(alpha-1)`` is bounded and a power ``w^(1/alpha)``
    would squeeze the density into a boundary layer at ``w = 0``."""
    return min(alpha, 1.0)


def _evaluate(terms: list, u: float, v: float, u_size: float, v_size: float) -> tuple:
    """``sum weight V u^i v^j`` over ``terms`` (:func:`_float_terms`), and a bound of its
    rounding error in units of eps, to first order: each ``V``'s (``eps`` times its size
    bound), ``u``'s and ``v``'s (``eps u_size``, ``eps v_size``: the sums they are) carried
    through the powers, and the products' own."""
    total = error = 0.0
    for weight, i, j, value, bound in terms:
        power_u, power_v = u ** i, v ** j
        term = weight * value * power_u * power_v
        total += term
        error += weight * bound * abs(power_u * power_v) + (i + j + 1) * abs(term)
        if i:
            error += weight * abs(value) * i * abs(u) ** (i - 1) * abs(power_v) * u_size
        if j:
            error += weight * abs(value) * j * abs(v) ** (j - 1) * abs(power_u) * v_size
    return total, error


def _side_integral(alpha: float, beta: float, y: float, prefactor: float,
                   centre_near: Rounded, centre_far: Rounded, terms_near_far: list) -> float:
    """``int_0^y s^(alpha-1) (1-s)^(beta-1) exp(prefactor) Y ds`` with ``Y = sum weight
    u^i v^j V`` in the centred logarithms ``u = ln s + centre_near``, ``v = ln(1-s) +
    centre_far``; through ``s = y w^(1/gamma)`` (``ds s^(alpha-1) = y^alpha / gamma
    w^(alpha/gamma - 1) dw``), split at the density's mode."""
    gamma = _power_substitution(alpha)
    log_y = math.log(y)
    head = prefactor + alpha * log_y - math.log(gamma)
    power = alpha / gamma - 1.0

    def parts(w: float) -> tuple:
        log_w = math.log(w)
        log_s = log_y + log_w / gamma
        log_rest = math.log1p(-math.exp(log_s))
        u, v = log_s + centre_near.value, log_rest + centre_far.value
        polynomial, size = _evaluate(
            terms_near_far, u, v, abs(log_s) + centre_near.error + abs(u),
            abs(log_rest) + centre_far.error + abs(v))
        return math.exp(head + power * log_w + (beta - 1.0) * log_rest), polynomial, size
    mode = (alpha - 1.0) / (alpha + beta - 2.0) if alpha > 1 and beta > 1 else None
    peak = None if mode is None else (mode / y) ** gamma
    return _quadrature(parts, 0.0, 1.0, peak)


def _one(a: float, b: float, x: float, lower: list, upper: list) -> float:
    """``D_{m,n}(a, b, x)`` of floats (``m + n >= 1``): ``lower`` and ``upper`` the terms
    of ``Y_{m,n}`` centred in ``ln t`` and in ``ln(1-t)`` (floats)."""
    if not (a > 0 and b > 0 and 0 <= x <= 1) or math.isinf(a) or math.isinf(b):
        return math.nan             # outside the domain (NaN operands included)
    if x == 0 or x == 1:
        return 0.0                  # I_0 = 0 and I_1 = 1 for every a, b
    prefactor = -sc.betaln(a, b)
    raw = Rounded(0.0, 0.0)
    if x <= a / (a + b):
        return _side_integral(a, b, x, prefactor, _centre(a, b), raw, lower)
    # s = 1 - t: the roles of (a, u) and (b, v) swap
    mirrored = [(weight, j, i, value, bound) for weight, i, j, value, bound in upper]
    return -_side_integral(b, a, 1.0 - x, prefactor, _centre(b, a), raw, mirrored)


def _centre(a: float, b: float) -> Rounded:
    """``psi(a+b) - psi(a)``, the centre of ``ln t``, and its rounding error."""
    total, own = sc.psi(a + b), sc.psi(a)
    value = total - own
    return Rounded(value, 4.0 * (abs(total) + abs(own)) + abs(value))


def betainc_derivative(m: int, n: int, a: np.ndarray, b: np.ndarray,
                       x: np.ndarray) -> np.ndarray:
    """``d^m/da^m d^n/db^n betainc(a, b, x)`` (``m + n >= 1``) of arrays of one shape,
    in their dtype (computed in float64): 0 at ``x = 0`` and ``x = 1`` (``I_x`` is 0 and 1
    there for every ``a, b``); NaN outside ``a > 0, b > 0, 0 <= x <= 1``."""
    a, b, x = (np.asarray(v) for v in (a, b, x))
    wide = [v.astype(np.float64) for v in (a, b, x)]
    with np.errstate(all="ignore"):
        derivative = beta_log_derivatives(_exact(wide[0]), _exact(wide[1]), ROUNDED)
        sides = [bell_coefficients(m, n, centred(derivative, (first,)), ROUNDED)
                 for first in ((1, 0), (0, 1))]
    out = np.empty(wide[0].shape, np.float64)
    for index in np.ndindex(out.shape):
        lower, upper = (_float_terms(m, n, side, index) for side in sides)
        out[index] = _one(*(float(v[index]) for v in wide), lower, upper)
    return out.astype(x.dtype, copy=False)


def _exact(x: np.ndarray) -> Rounded:
    return Rounded(x, np.zeros_like(x))


def _float_terms(m: int, n: int, coefficients: dict, index: tuple) -> list:
    """``[(weight, i, j, V, V's error bound)]`` of ``Y_{m,n}`` at one index, as floats
    (``coefficients`` in :data:`ROUNDED` arithmetic)."""
    def entry(value: Rounded) -> tuple:
        if value is ONE:
            return 1.0, 0.0
        return float(np.asarray(value.value)[index]), float(np.asarray(value.error)[index])
    return [(weight, i, j, *entry(value))
            for weight, i, j, value in polynomial_terms(m, n, coefficients)]


def odd_betainc_derivative(k: int, h: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``d^k/dh^k [sign(q) betainc(1/2, h, q^2)]`` (``k >= 1``), the derivatives of
    ``2 stdtr(df, t) - 1`` in ``h = df/2`` at fixed ``q = t / sqrt(df + t^2)``."""
    h, q = np.asarray(h), np.asarray(q)
    half = np.full(h.shape, 0.5, h.dtype)
    wide_q = q.astype(np.float64)
    inner = betainc_derivative(0, k, half, h, wide_q * wide_q)
    return (np.sign(wide_q) * inner).astype(q.dtype, copy=False)


# ------------------------------------------------------------------ incomplete gamma

def _one_gamma(k: int, a: float, x: float, terms: list) -> float:
    """``d^k/da^k gammainc(a, x)`` of floats (``k >= 1``): ``int_0^x`` left of the mean
    ``a``, ``-int_x^inf`` right of it, of ``t^(a-1) exp(-t) / Gamma(a) Y_k(u)``,
    ``u = ln t - psi(a)``."""
    if not (a > 0 and x >= 0) or math.isinf(a):
        return math.nan
    if x == 0 or math.isinf(x):
        return 0.0                  # P(a, 0) = 0 and P(a, inf) = 1 for every a
    log_gamma, centre = sc.gammaln(a), -sc.psi(a)
    centre_error = 4.0 * abs(centre)
    if x <= a:
        gamma = _power_substitution(a)
        log_x = math.log(x)
        head = a * log_x - math.log(gamma) - log_gamma     # t = x w^(1/gamma)
        power = a / gamma - 1.0

        def lower(w: float) -> tuple:
            log_w = math.log(w)
            log_t = log_x + log_w / gamma
            u = log_t + centre
            polynomial, size = _evaluate(terms, u, 0.0, abs(log_t) + centre_error + abs(u), 0.0)
            return math.exp(head + power * log_w - math.exp(log_t)), polynomial, size
        peak = ((a - 1.0) / x) ** gamma if a > 1 else None
        return _quadrature(lower, 0.0, 1.0, peak)

    def upper(t: float) -> tuple:
        log_t = math.log(t)
        u = log_t + centre
        polynomial, size = _evaluate(terms, u, 0.0, abs(log_t) + centre_error + abs(u), 0.0)
        return math.exp((a - 1.0) * log_t - t - log_gamma), polynomial, size
    return -_quadrature(upper, x, math.inf)


def gammainc_derivative(k: int, a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``d^k/da^k gammainc(a, x)`` (``k >= 1``) of arrays of one shape, in their dtype
    (computed in float64): 0 at ``x = 0`` and ``x = inf``; NaN outside ``a > 0,
    x >= 0``.  The complete integral is 1 for every ``a``, so its derivatives' integrand
    integrates to 0 over ``[0, inf)`` and either side gives the value."""
    a, x = np.asarray(a), np.asarray(x)
    wide = [v.astype(np.float64) for v in (a, x)]
    with np.errstate(all="ignore"):
        side = bell_coefficients(k, 0, centred(gamma_log_derivatives(_exact(wide[0]), ROUNDED)),
                                 ROUNDED)
    out = np.empty(wide[0].shape, np.float64)
    for index in np.ndindex(out.shape):
        terms = _float_terms(k, 0, side, index)
        out[index] = _one_gamma(k, float(wide[0][index]), float(wide[1][index]), terms)
    return out.astype(x.dtype, copy=False)

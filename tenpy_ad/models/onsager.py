"""Onsager's exact solution of the 2D Ising model (J = 1, zero field, k_B = 1), per site.

    lnZ/N = ln(2 cosh 2b) + 1/(2 pi) int_0^pi ln[(1 + sqrt(1 - k^2 sin^2 t)) / 2] dt
    u     = -d(lnZ/N)/db = -coth 2b [1 + (2/pi)(2 tanh^2 2b - 1) K(k)]
    c     = b^2 d^2(lnZ/N)/db^2
          = (4/pi) (b coth 2b)^2 [K(k) - E(k) - (1 - tanh^2 2b)(pi/2 + (2 tanh^2 2b - 1) K(k))]

with ``k = 2 sinh 2b / cosh^2 2b`` and the complete elliptic integrals ``K``, ``E`` (SciPy's
``ellipk``/``ellipe`` take ``m = k^2``).  The specific heat diverges at the critical point
``b_c = ln(1 + sqrt 2) / 2``.  Yang's spontaneous magnetization is
``|m| = (1 - sinh(2b)^-4)^(1/8)`` below T_c (b > b_c), 0 above.
"""
from __future__ import annotations

import math

from scipy import integrate, special

BETA_C = math.log(1.0 + math.sqrt(2.0)) / 2.0


def _modulus(beta: float) -> float:
    return 2.0 * math.sinh(2.0 * beta) / math.cosh(2.0 * beta) ** 2


def lnz(beta: float) -> float:
    """ln Z / N in the thermodynamic limit."""
    k2 = _modulus(beta) ** 2

    def integrand(theta):
        return math.log((1.0 + math.sqrt(max(0.0, 1.0 - k2 * math.sin(theta) ** 2))) / 2.0)

    integral, _ = integrate.quad(integrand, 0.0, math.pi, limit=200)
    return math.log(2.0 * math.cosh(2.0 * beta)) + integral / (2.0 * math.pi)


def energy(beta: float) -> float:
    """Internal energy per site, ``u = -d(lnZ/N)/d beta``."""
    k = _modulus(beta)
    t2 = math.tanh(2.0 * beta) ** 2
    coth = 1.0 / math.tanh(2.0 * beta)
    if k * k >= 1.0 - 1e-15:        # at b_c: (2 tanh^2 - 1) K(k) -> 0 (a zero times a log)
        return -coth
    return -coth * (1.0 + (2.0 / math.pi) * (2.0 * t2 - 1.0) * special.ellipk(k * k))


def specific_heat(beta: float) -> float:
    """Specific heat per site, ``c = beta^2 d^2(lnZ/N)/d beta^2`` (inf at the critical
    point)."""
    k = _modulus(beta)
    if k * k >= 1.0 - 1e-15:
        return math.inf
    kk, ee = special.ellipk(k * k), special.ellipe(k * k)
    t2 = math.tanh(2.0 * beta) ** 2
    coth = 1.0 / math.tanh(2.0 * beta)
    return (4.0 / math.pi) * (beta * coth) ** 2 * (
        kk - ee - (1.0 - t2) * (math.pi / 2.0 + (2.0 * t2 - 1.0) * kk))


def magnetization(beta: float) -> float:
    """Yang's spontaneous magnetization per site, ``|m|`` (0 for beta <= b_c)."""
    if beta <= BETA_C:
        return 0.0
    return (1.0 - math.sinh(2.0 * beta) ** -4) ** 0.125


__all__ = ["BETA_C", "lnz", "energy", "specific_heat", "magnetization"]

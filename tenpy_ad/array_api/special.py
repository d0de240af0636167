"""``xp.special``: where SciPy's array-API code (``SCIPY_ARRAY_API=1``) looks for the
special functions of a namespace.  Every function of :mod:`tenpy_ad.scipy.special`
(``ndtr``, ``log_ndtr``, ``erfcx``, the Bessel functions ``i0``, ``i0e``, ``i1``, ``i1e``,
``gammainc``, ``gammaincc``, ``chdtr``, ``chdtrc``, ``betainc``, ``betaincc``, ``stdtr``,
``fdtr`` and ``fdtrc`` among them), and the ones SciPy's statistics ask for that are exact
compositions of them (``exp2``, ``sinc``, ``multigammaln``), so the p-values of
``scipy.stats``' tests (normal, chi-square, t and F distributions) stay on the tape.

A name missing here (``iv``, ``stdtrit``, ...) makes SciPy convert the tensor with
``np.asarray``, which raises :class:`~tenpy_ad.errors.NotDifferentiableError` for a
tensor that requires grad.
"""
from __future__ import annotations

import math

from .. import numpy as tnp
from ..errors import ArgumentError
from ..scipy.special import *                          # noqa: F401,F403 - re-exported
from ..scipy.special import __all__ as _scipy_names
from ..scipy.special import gammaln
from ._convert import tensors


def exp2(x):
    """``2 ** x``."""
    return tensors(tnp.exp2(x))


def sinc(x):
    """The normalized sinc ``sin(pi x) / (pi x)`` (1 at 0)."""
    return tensors(tnp.sinc(x))


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension ``d`` (a static integer):
    ``d (d - 1) / 4 log(pi) + sum_j gammaln(a - j / 2)``, ``j = 0 .. d - 1``."""
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise ArgumentError(f"multigammaln: the dimension d must be an integer >= 1, got "
                            f"{d!r}")
    total = d * (d - 1) / 4.0 * math.log(math.pi)
    for j in range(d):
        total = tnp.add(total, gammaln(tnp.subtract(a, j / 2.0)))
    return tensors(total)


__all__ = [*_scipy_names, "exp2", "sinc", "multigammaln"]

"""``tp.scipy.special``: SciPy's special functions with SciPy's names, signatures and
dtypes, differentiable to any order in every mode.

The ufuncs (``erf``, ``erfc``, ``erfinv``, ``erfcinv``, ``erfcx``, ``ndtr``,
``log_ndtr``, ``gamma``, ``gammaln``, ``loggamma``, ``psi``/``digamma``, ``gammainc``,
``gammaincc``, ``chdtr``, ``chdtrc``, ``i0``, ``i0e``, ``i1``, ``i1e``, ``expit``,
``logit``, ``log_expit``, ``xlogy``, ``xlog1py``, ``entr``, ``rel_entr``, ``kl_div``) are
registered under their qualified names, so ``scipy.special.erf(t)`` on a tensor runs
tenpy_ad's version (NumPy's ``__array_ufunc__`` protocol); they take NumPy's ufunc
calling convention (broadcasting, Python scalars, ``dtype=``) and compute in the dtype of
the loop SciPy runs (float32 stays float32; complex where SciPy has a complex loop:
``erf``, ``erfc``, ``erfcx``, ``ndtr``, ``log_ndtr``, ``gamma``, ``loggamma``, ``psi``,
``xlogy``, ``xlog1py``; elsewhere a complex operand raises
:class:`~tenpy_ad.errors.DTypeError` naming the function).  ``polygamma(n, x)`` (a static
integer order ``n``), ``softmax``, ``log_softmax`` and ``logsumexp`` are plain functions:
call them as ``tp.scipy.special.softmax(t)``.  Without a tensor among the arguments
every function is SciPy's own, results and errors.

The values are SciPy's (each primitive calls SciPy's function; ``expit`` is the engine's
overflow-free logistic, within an ulp of SciPy's).  The derivatives at special points:

* ``xlogy(x, y)``: ``d/dy = x / y`` is 0 wherever ``x == 0`` (``xlogy(0, y) = 0`` for
  every ``y``); at ``x == 0 == y`` the derivatives are ``(-inf, 0)`` and the second ones
  0.  Where ``x == 0`` and ``y != 0`` the function is smooth and so are the rules (the
  mixed second derivative is ``1/y``).  ``xlog1py`` likewise at ``y == -1``.
* ``entr`` at 0: ``+inf`` (then ``-inf``); below 0 (the constant ``-inf``): 0.
* ``rel_entr``/``kl_div``: the formulas on ``x >= 0, y > 0`` (``d/dx = -inf`` at
  ``x == 0``); at ``x == 0 == y`` 0 and 0 (``kl_div``: 0 and 1, since
  ``kl_div(0, y) = y``); 0 where the value is ``+inf``.
* ``erfinv`` at ``±1``, ``erfcinv`` at 0 and 2, ``logit`` at 0 and 1, ``gamma`` and
  ``gammaln`` at their poles: the IEEE infinities of the derivatives' formulas.
* ``i0e`` at its kink ``x = 0``: 0 (the mean of the one-sided slopes -1 and +1).
* ``gammainc(a, x)`` at ``x = 0``: ``x**(a-1) / gamma(a)`` (0, 1 or ``+inf`` for ``a``
  above, at or below 1) and its derivatives as the power's; 0 at ``x = inf``.

``gammainc``, ``gammaincc`` (in ``a``), ``chdtr``, ``chdtrc`` (in ``v``), ``stdtr`` (in
``df``), ``betainc``, ``betaincc`` (in ``a`` and ``b``) and ``fdtr``, ``fdtrc`` (in the
degrees of freedom) are differentiable in their shape parameters too, to any order and
exactly (SciPy has no closed form for these derivatives; PyTorch refuses them): they are
integrals of the density times powers of logarithms, computed by adaptive quadrature to
~1e-13 relative (:mod:`tenpy_ad.ops.shape_derivatives`), whose own derivatives are the
next such integral and a closed form.  At ``x = 0`` and ``x = 1`` (``gammainc``: 0 and
``inf``) they are 0 (the value is 0 or 1 for every shape); outside the domain, where
SciPy's value is NaN, so are they; mixed derivatives in ``x`` and a shape parameter are
NaN at those ends of ``x``, where the density meets an infinite logarithm.  A derivative
whose error bound (the quadrature's estimate plus the rounding of its integrand) exceeds
1e-9 of the integral of the integrand's magnitude is NaN, not an inaccurate number: where
the integrand cancels far below its terms (third derivatives in ``b`` at ``a = 1`` within
~1e-5 of ``x = 0``, and such), which are tails where the derivative is tiny.

SciPy has no complex ``polygamma``: the derivative of complex ``digamma`` and the second
derivative of complex ``gamma``/``loggamma`` raise ``DTypeError``.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes
from .. import numpy as tnp
from ..errors import ArgumentError, ArgumentValueError, DTypeError
from ..numpy._arrays import tensor_or_array
from ..numpy._dispatch import implements
from ..numpy._ufuncs import inexact, ufunc_function
from ..numpy.statistics import logsumexp
from ..ops import elementwise as ew
from ..ops import special as sp
from ..ops import transcendental as tr
from .._sequences import is_tensor
from ..primitive import code_of_value


def _ufunc(name: str, strict, doc: str):
    fn = ufunc_function(f"scipy.special.{name}", strict, doc)
    fn.__module__ = __name__
    return fn


erf = _ufunc("erf", sp.erf, "The error function ``2/sqrt(pi) int_0^x exp(-t**2) dt`` "
             "(real or complex).")
erfc = _ufunc("erfc", sp.erfc, "The complementary error function ``1 - erf(x)`` (real "
              "or complex).")
erfinv = _ufunc("erfinv", sp.erfinv, "The inverse of ``erf`` on ``[-1, 1]``: ``±inf`` "
                "at ``±1``, where its derivative ``sqrt(pi)/2 exp(erfinv(x)**2)`` is "
                "``+inf``.")
erfcinv = _ufunc("erfcinv", sp.erfcinv, "The inverse of ``erfc`` on ``[0, 2]``.")
gamma = _ufunc("gamma", sp.gamma, "The gamma function (real or complex); its derivative "
               "is ``gamma(x) psi(x)``, infinite at the poles.")
gammaln = _ufunc("gammaln", sp.gammaln, "``log|gamma(x)|`` of real ``x``; its derivative "
                 "is ``psi(x)``.")
loggamma = _ufunc("loggamma", sp.loggamma, "The principal branch of ``log(gamma(z))`` "
                  "(real ``x > 0`` or complex); its derivative is ``psi(z)``.")
psi = digamma = _ufunc("psi", sp.digamma, "The digamma function ``gamma'(x)/gamma(x)`` "
                       "(real or complex); its derivative is ``polygamma(1, x)``, of real "
                       "``x`` only (SciPy has no complex ``polygamma``).")
implements("scipy.special.digamma")(digamma)
expit = _ufunc("expit", tr.expit, "The logistic sigmoid ``1 / (1 + exp(-x))`` of real "
               "``x``, stable for every ``x``.")
logit = _ufunc("logit", sp.logit, "``log(p / (1 - p))`` of real ``p``, the inverse of "
               "``expit`` (``∓inf`` at 0 and 1, where its derivative is ``+inf``).")
log_expit = _ufunc("log_expit", sp.log_expit, "``log(expit(x))`` of real ``x``, accurate "
                   "for every ``x``; its derivative is ``expit(-x)``.")
xlogy = _ufunc("xlogy", sp.xlogy, "``x * log(y)``, 0 where ``x == 0`` (real or complex); "
               "the derivative in ``y`` is 0 wherever ``x == 0``.")
xlog1py = _ufunc("xlog1py", sp.xlog1py, "``x * log1p(y)``, 0 where ``x == 0`` (real or "
                 "complex); the derivative in ``y`` is 0 wherever ``x == 0``.")
entr = _ufunc("entr", sp.entr, "``-x log(x)`` for ``x > 0``, 0 at 0, ``-inf`` below "
              "(real ``x``; the derivative at 0 is ``+inf``).")
rel_entr = _ufunc("rel_entr", sp.rel_entr, "``x log(x/y)`` for ``x > 0, y > 0``, 0 for "
                  "``x == 0, y >= 0``, ``+inf`` elsewhere (real operands).")
kl_div = _ufunc("kl_div", sp.kl_div, "``x log(x/y) - x + y`` for ``x > 0, y > 0``, ``y`` "
                "for ``x == 0, y >= 0``, ``+inf`` elsewhere (real operands).")

erfcx = _ufunc("erfcx", sp.erfcx, "The scaled complementary error function "
               "``exp(x**2) erfc(x)`` (real or complex); its derivative is "
               "``2 x erfcx(x) - 2/sqrt(pi)`` (for real ``x > 20`` its asymptotic series, "
               "where that difference cancels).")
ndtr = _ufunc("ndtr", sp.ndtr, "The standard normal distribution function (real or "
              "complex); its derivative is the normal density ``exp(-x**2/2) / sqrt(2 pi)``.")
log_ndtr = _ufunc("log_ndtr", sp.log_ndtr, "``log(ndtr(x))``, accurate in both tails (real "
                  "or complex); its derivative ``phi(x) / ndtr(x)`` does not underflow (it "
                  "tends to ``-x`` in the left tail).")
i0 = _ufunc("i0", lambda x: sp.iv(0, x), "The modified Bessel function of order 0 of real "
            "``x``; its derivative is ``i1``.")
i1 = _ufunc("i1", lambda x: sp.iv(1, x), "The modified Bessel function of order 1 of real "
            "``x``; its derivative is ``(i0(x) + iv(2, x)) / 2`` (``i0 - i1/x``, 1/2 at 0).")
i0e = _ufunc("i0e", lambda x: sp.ive(0, x), "The exponentially scaled ``exp(-|x|) i0(x)`` "
             "of real ``x``; its derivative is ``i1e(x) - sign(x) i0e(x)`` (0 at the kink "
             "``x = 0``).")
i1e = _ufunc("i1e", lambda x: sp.ive(1, x), "The exponentially scaled ``exp(-|x|) i1(x)`` "
             "of real ``x``; its derivative is ``(i0e(x) + ive(2, x)) / 2 - sign(x) "
             "i1e(x)``.")
gammainc = _ufunc("gammainc", sp.gammainc, "The regularized lower incomplete gamma function "
                  "``P(a, x)`` (real operands); its derivative in ``x`` is ``x**(a-1) "
                  "exp(-x) / gamma(a)``, those in ``a`` integrals (any order).")
gammaincc = _ufunc("gammaincc", sp.gammaincc, "The regularized upper incomplete gamma "
                   "function ``Q(a, x) = 1 - P(a, x)`` (real operands); its derivative in "
                   "``x`` is ``-x**(a-1) exp(-x) / gamma(a)``, those in ``a`` minus "
                   "``gammainc``'s.")
chdtr = _ufunc("chdtr", sp.chdtr, "The chi-square distribution function "
               "``gammainc(v/2, x/2)`` (real operands); differentiable in ``x`` and "
               "``v``.")
chdtrc = _ufunc("chdtrc", sp.chdtrc, "The chi-square survival function "
                "``gammaincc(v/2, x/2)`` (real operands); differentiable in ``x`` and "
                "``v``.")
betainc = _ufunc("betainc", sp.betainc, "The regularized incomplete beta function "
                 "``I_x(a, b)`` (real operands); its derivative in ``x`` is ``x**(a-1) "
                 "(1-x)**(b-1) / B(a, b)``, those in ``a`` and ``b`` integrals (any "
                 "order).")
betaincc = _ufunc("betaincc", sp.betaincc, "``1 - betainc(a, b, x)``, accurate where "
                  "``betainc`` is near 1 (real operands); differentiable in every "
                  "argument.")
stdtr = _ufunc("stdtr", sp.stdtr, "The Student t distribution function with ``df`` "
               "degrees of freedom (real operands); its derivative in ``t`` is the t "
               "density, those in ``df`` integrals (any order, smooth through ``t = 0``).")


# ------------------------------------------------------------------ polygamma

def _static_order(n) -> int:
    if is_tensor(n):
        raise ArgumentError("polygamma: the order n must be a static integer, not a tensor "
                            "(it is not differentiable)")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise ArgumentError(f"polygamma: the order n must be an integer, got {n!r}")
    if n < 0:
        raise ArgumentValueError(f"polygamma: the order n must be >= 0, got {n}")
    return int(n)


@implements("scipy.special.polygamma")
def polygamma(n, x):
    """The ``n``-th derivative of ``psi`` at real ``x`` (``n`` a static integer ``>= 0``),
    in float64 as SciPy computes it (``n = 0``: ``psi`` in ``x``'s dtype, then float64,
    as SciPy); its derivative is ``polygamma(n + 1, x)``."""
    order = _static_order(n)
    x = inexact(tensor_or_array(x, "polygamma"))
    if dtypes.is_complex(code_of_value(x)):
        raise DTypeError("polygamma: real arguments only (SciPy's polygamma has no complex "
                         "version)")
    if order == 0:
        return ew.convert(sp.digamma(x), dtypes.FLOAT64)
    return sp.polygamma(order, ew.convert(x, dtypes.FLOAT64))


# ------------------------------------------------------------------ softmax, log_softmax

def _shifted(name: str, x, axis, finite: bool):
    """``x - m``, ``m`` the largest entry over ``axis`` (of the real parts, for complex
    ``x``) taken as a constant, as SciPy shifts (``finite``: a non-finite ``m`` is 0).  The
    functions do not depend on the shift, so their derivatives are exact at every order
    with ``m``'s left out."""
    x = inexact(tensor_or_array(x, name))
    largest = ew.stop_gradient(tnp.max(tnp.real(x), axis=axis, keepdims=True))
    if finite:
        largest = tnp.where(tnp.isfinite(largest), largest, 0.0)
    return tnp.subtract(x, largest)


@implements("scipy.special.softmax")
def softmax(x, axis=None):
    """``exp(x) / sum(exp(x))`` over ``axis`` (None: all entries; an int or a tuple),
    SciPy's ``softmax``: ``exp(x - m) / sum(exp(x - m))`` with ``m`` the largest entry,
    stable for entries of any size and exact to every order (real or complex)."""
    shifted = tnp.exp(_shifted("softmax", x, axis, finite=False))
    return tnp.divide(shifted, tnp.sum(shifted, axis=axis, keepdims=True))


@implements("scipy.special.log_softmax")
def log_softmax(x, axis=None):
    """``x - logsumexp(x)`` over ``axis`` (None: all entries; an int or a tuple), SciPy's
    ``log_softmax``: ``(x - m) - log(sum(exp(x - m)))``, ``m`` the largest finite entry
    (real ``x``: SciPy's complex result depends on the branch of its logarithm)."""
    x = tensor_or_array(x, "log_softmax")
    if dtypes.is_complex(code_of_value(x)):
        raise DTypeError("log_softmax: real arguments only (the imaginary part of SciPy's "
                         "complex log_softmax is one branch of the logarithm, not "
                         "reproduced)")
    shifted = _shifted("log_softmax", x, axis, finite=True)
    with np.errstate(divide="ignore"):              # log 0 = -inf, as SciPy's
        total = tnp.log(tnp.sum(tnp.exp(shifted), axis=axis, keepdims=True))
    return tnp.subtract(shifted, total)


@implements("scipy.special.fdtr")
def fdtr(dfn, dfd, x):
    """The F distribution function, ``betainc(dfn/2, dfd/2, dfn x / (dfn x + dfd))`` (as
    SciPy computes it); differentiable in ``x`` and in the degrees of freedom."""
    scaled = tnp.multiply(dfn, x)
    return betainc(tnp.multiply(dfn, 0.5), tnp.multiply(dfd, 0.5),
                   tnp.divide(scaled, tnp.add(scaled, dfd)))


@implements("scipy.special.fdtrc")
def fdtrc(dfn, dfd, x):
    """The F survival function, ``betainc(dfd/2, dfn/2, dfd / (dfd + dfn x))``."""
    return betainc(tnp.multiply(dfd, 0.5), tnp.multiply(dfn, 0.5),
                   tnp.divide(dfd, tnp.add(dfd, tnp.multiply(dfn, x))))


@implements("scipy.special.ndtri")
def ndtri(p):
    """The inverse of ``ndtr`` on ``[0, 1]``: ``-sqrt(2) erfcinv(2 p)`` (``∓inf`` at 0
    and 1; real ``p``)."""
    return tnp.multiply(-np.sqrt(2.0), erfcinv(tnp.multiply(2.0, p)))


__all__ = ["erf", "erfc", "erfinv", "erfcinv", "gamma", "gammaln", "loggamma", "psi",
           "digamma", "polygamma", "expit", "logit", "log_expit", "xlogy", "xlog1py",
           "entr", "rel_entr", "kl_div", "erfcx", "ndtr", "log_ndtr", "i0", "i0e", "i1",
           "i1e", "gammainc", "gammaincc", "chdtr", "chdtrc", "betainc", "betaincc",
           "stdtr", "fdtr", "fdtrc", "ndtri", "softmax",
           "log_softmax", "logsumexp"]


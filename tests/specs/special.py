"""The special functions of ``tp.scipy.special`` (primitives of ``tenpy_ad/ops/special.py``).

Domains the table does not name are made inside ``fn`` (``erfinv(0.2 x)`` for ``|x| < 1``);
the functions SciPy has complex loops for run in complex128 too, except where the second
derivative needs ``polygamma`` of a complex argument, which SciPy lacks
(tests/test_scipy_special.py checks their first order and the error).  The special points
are the derivatives chosen or infinite at poles, bounds and ``0 log 0``, at the kinks of
``i0e``/``i1e``, the seams of the piecewise rules (``log_ndtr`` at 0, ``erfcx``'s tail)
and ``gammainc`` at ``x = 0`` and ``inf``.  The incomplete gamma and beta functions and
``stdtr`` are differentiated in ``x`` alone and with their shape parameters (the
``*_shape_derivative`` primitives' rules).
"""
import math

import tenpy_ad as tp

from .table import INF, REAL, Spec, SpecialPoint, flat

S = tp.scipy.special
TWO = ((3, 4), (3, 4))
LN2 = math.log(2.0)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)

SPECS = [
    Spec("erf", S.erf, ((5,),)),
    Spec("erfc", S.erfc, ((5,),)),
    Spec("erfinv", lambda x: S.erfinv(0.2 * x), ((5,),), dtypes=REAL, special=(
        SpecialPoint((1.0,), (INF,), ((INF,),), "erfinv at 1: sqrt(pi)/2 exp(erfinv^2) "
                     "and 2 erfinv erfinv'^2 are +inf", fn=S.erfinv),
        SpecialPoint((-1.0,), (INF,), ((-INF,),), "at -1: +inf, -inf", fn=S.erfinv),
    )),
    Spec("erfcinv", lambda x: S.erfcinv(1.0 + 0.2 * x), ((5,),), dtypes=REAL, special=(
        SpecialPoint((0.0,), (-INF,), ((INF,),), "erfcinv at 0 (= erfinv at 1): -inf, +inf",
                     fn=S.erfcinv),
        SpecialPoint((2.0,), (-INF,), ((-INF,),), "at 2: -inf, -inf", fn=S.erfcinv),
    )),
    Spec("gamma", S.gamma, ((5,),), domain="positive", dtypes=REAL, special=(
        SpecialPoint((0.0,), (-INF,), ((INF,),), "the pole at +0: gamma ~ 1/x, "
                     "gamma psi = -inf, gamma (psi^2 + psi') = +inf", fn=S.gamma),
        SpecialPoint((-0.0,), (-INF,), ((-INF,),), "at -0: gamma ~ 1/x from below: -inf, "
                     "-inf", fn=S.gamma),
    )),
    Spec("gamma_negative", lambda x: S.gamma(-2.5 + 0.1 * x), ((4,),), dtypes=REAL),
    Spec("gammaln", S.gammaln, ((5,),), domain="positive", dtypes=REAL, special=(
        SpecialPoint((0.0,), (-INF,), ((INF,),), "the pole at 0: psi(0) = -inf, "
                     "polygamma(1, 0) = +inf", fn=S.gammaln),
    )),
    Spec("gammaln_negative", lambda x: S.gammaln(-1.5 + 0.1 * x), ((4,),), dtypes=REAL),
    Spec("loggamma", S.loggamma, ((5,),), domain="positive", dtypes=REAL),
    Spec("digamma", S.psi, ((5,),), domain="positive", dtypes=REAL, special=(
        SpecialPoint((0.0,), (INF,), ((-INF,),), "psi at 0: polygamma(1, 0) = +inf, "
                     "polygamma(2, 0) = -inf", fn=S.psi),
    )),
    Spec("polygamma", lambda x: S.polygamma(2, x + 0.3), ((4,),), domain="positive",
         dtypes=REAL, special=(
             SpecialPoint((0.0,), (-INF,), ((INF,),), "the pole at 0: polygamma(2, 0) = "
                          "-inf, polygamma(3, 0) = +inf", fn=lambda x: S.polygamma(1, x)),
         )),
    Spec("polygamma_negative", lambda x: S.polygamma(3, -0.5 + 0.1 * x), ((4,),),
         dtypes=REAL),
    Spec("logit", lambda x: S.logit(0.5 + 0.1 * x), ((5,),), dtypes=REAL, special=(
        SpecialPoint((0.0,), (INF,), ((-INF,),), "logit at 0: 1/p + 1/(1-p) = +inf, "
                     "-1/p^2 + 1/(1-p)^2 = -inf", fn=S.logit),
        SpecialPoint((1.0,), (INF,), ((INF,),), "at 1: +inf, +inf", fn=S.logit),
    )),
    Spec("log_expit", S.log_expit, ((5,),), dtypes=REAL),
    Spec("xlogy", S.xlogy, TWO, domain="positive", special=(
        SpecialPoint((0.0, 2.0), (LN2, 0.0), ((0.0, 0.5), (0.5, 0.0)),
                     "x == 0, y > 0: smooth (x log y); d/dy = 0, mixed second derivative "
                     "1/y"),
        SpecialPoint((0.0, 0.0), (-INF, 0.0), flat(2),
                     "0 log 0 = 0: d/dy = 0 (xlogy(0, y) = 0 for every y), d/dx = log 0; "
                     "both with derivatives 0"),
        SpecialPoint((1.0, 0.0), (-INF, INF), ((0.0, INF), (INF, -INF)),
                     "y == 0, x != 0: the infinities of log y, x/y, 1/y, -x/y^2"),
    )),
    Spec("xlog1py", S.xlog1py, TWO, domain="positive", special=(
        SpecialPoint((0.0, 1.0), (LN2, 0.0), ((0.0, 0.5), (0.5, 0.0)),
                     "x == 0: smooth; d/dy = 0, mixed second derivative 1/(1 + y)"),
        SpecialPoint((0.0, -1.0), (-INF, 0.0), flat(2),
                     "x == 0, y == -1: d/dy = 0, d/dx = log1p(-1) = -inf"),
    )),
    Spec("entr", S.entr, ((5,),), domain="positive", dtypes=REAL, special=(
        SpecialPoint((0.0,), (INF,), ((-INF,),), "entr at 0: -(log x + 1) = +inf, -1/x"),
        SpecialPoint((-1.0,), (0.0,), flat(1), "below 0 entr is the constant -inf: 0"),
    )),
    Spec("rel_entr", S.rel_entr, TWO, domain="positive", dtypes=REAL, special=(
        SpecialPoint((0.0, 2.0), (-INF, 0.0), ((INF, -0.5), (-0.5, 0.0)),
                     "x == 0, y > 0: log(x/y) + 1 = -inf, -x/y = 0; 1/x = +inf, -1/y"),
        SpecialPoint((0.0, 0.0), (0.0, 0.0), flat(2), "x == 0 == y (0 nearby along x == 0, "
                     "+inf along y == 0): taken as 0"),
        SpecialPoint((1.0, 0.0), (0.0, 0.0), flat(2), "y == 0 < x: the value +inf, "
                     "derivatives 0"),
    )),
    Spec("kl_div", S.kl_div, TWO, domain="positive", dtypes=REAL, special=(
        SpecialPoint((0.0, 2.0), (-INF, 1.0), ((INF, -0.5), (-0.5, 0.0)),
                     "x == 0, y > 0: log(x/y) = -inf, 1 - x/y = 1; 1/x = +inf, -1/y"),
        SpecialPoint((0.0, 0.0), (0.0, 1.0), flat(2),
                     "x == 0 == y: d/dy = 1 (kl_div(0, y) = y for y >= 0), d/dx 0"),
        SpecialPoint((-1.0, 1.0), (0.0, 0.0), flat(2), "x < 0: the value +inf, "
                     "derivatives 0"),
    )),
    Spec("erfcx", S.erfcx, ((5,),)),
    Spec("erfcx_tail", lambda x: S.erfcx(30.0 + 5.0 * x), ((5,),), dtypes=REAL, special=(
        SpecialPoint((INF,), (0.0,), ((0.0,),), "erfcx at +inf: the asymptotic series of "
                     "its slope, 0, and of its derivative, 0 (no 0 * inf)", fn=S.erfcx),
    )),
    Spec("ndtr", S.ndtr, ((5,),)),
    Spec("log_ndtr", S.log_ndtr, ((5,),), special=(
        SpecialPoint((0.0,), (SQRT_2_OVER_PI,), ((-2.0 / math.pi,),), "the seam of the "
                     "two forms of its slope g = phi/ndtr: g(0) = sqrt(2/pi), g'(0) = "
                     "-g(0)^2 = -2/pi", fn=S.log_ndtr),
    )),
    Spec("log_ndtr_left_tail", lambda x: S.log_ndtr(-30.0 + 3.0 * x), ((5,),),
         dtypes=REAL),
    Spec("i0", S.i0, ((5,),), dtypes=REAL),
    Spec("i1", S.i1, ((5,),), dtypes=REAL, special=(
        SpecialPoint((0.0,), (0.5,), ((0.0,),), "i1' = i0 - i1/x is 1/2 at 0 (through "
                     "(i0 + iv(2, .))/2, no 0/0), i1'' = 0", fn=S.i1),
    )),
    Spec("i0e", S.i0e, ((5,),), domain="away_from_zero", dtypes=REAL, special=(
        SpecialPoint((0.0,), (0.0,), ((1.5,),), "the kink of exp(-|x|) i0(x) at 0: slope "
                     "0 (the mean of -1 and +1), second derivative 3/2 (both one-sided "
                     "limits)", fn=S.i0e),
    )),
    Spec("i1e", S.i1e, ((5,),), domain="away_from_zero", dtypes=REAL, special=(
        SpecialPoint((0.0,), (0.5,), ((0.0,),), "exp(-|x|) i1(x) at 0: slope 1/2, second "
                     "derivative 0 (the mean of -1 and +1)", fn=S.i1e),
    )),
    Spec("gammainc", lambda x: S.gammainc(2.5, x), ((5,),), domain="positive",
         dtypes=REAL, special=(
             SpecialPoint((0.0,), (1.0,), ((-1.0,),), "a = 1 at x = 0: x^0 exp(-x), 1 "
                          "and -1 (a logarithm would give 0 log 0)",
                          fn=lambda x: S.gammainc(1.0, x)),
             SpecialPoint((0.0,), (0.0,), ((1.0,),), "a = 2 at x = 0: x exp(-x), 0 and 1",
                          fn=lambda x: S.gammainc(2.0, x)),
             SpecialPoint((0.0,), (INF,), ((-INF,),), "a = 1/2 at x = 0: x^(-1/2) "
                          "exp(-x) / gamma(1/2), +inf and -inf",
                          fn=lambda x: S.gammainc(0.5, x)),
             SpecialPoint((INF,), (0.0,), ((0.0,),), "x = inf: the value 1, slopes 0",
                          fn=lambda x: S.gammainc(2.5, x)),
         )),
    Spec("gammaincc", lambda x: S.gammaincc(0.7, x), ((5,),), domain="positive",
         dtypes=REAL),
    Spec("chdtr", lambda x: S.chdtr(3.0, x), ((5,),), domain="positive", dtypes=REAL,
         special=(
             SpecialPoint((0.0,), (0.5,), ((-0.25,),), "v = 2 at x = 0: exp(-x/2) / 2",
                          fn=lambda x: S.chdtr(2.0, x)),
         )),
    Spec("chdtrc", lambda x: S.chdtrc(5.0, x), ((5,),), domain="positive", dtypes=REAL),
    # x = p / (1 + p) maps the positive domain into (0, 1)
    Spec("betainc", lambda p: S.betainc(2.5, 1.5, p / (1.0 + p)), ((5,),), domain="positive",
         dtypes=REAL),
    Spec("betaincc", lambda p: S.betaincc(0.7, 3.0, p / (1.0 + p)), ((5,),),
         domain="positive", dtypes=REAL),
    Spec("stdtr", lambda t: S.stdtr(4.0, t), ((5,),), dtypes=REAL),
    # the shape parameters (and x with them): the shape-derivative primitives' rules
    Spec("betainc_shape", lambda a, b, p: S.betainc(a, b, p / (1.0 + p)),
         ((4,), (4,), (4,)), domain="positive", dtypes=REAL),
    Spec("betaincc_shape", lambda a, b: S.betaincc(a, b, 0.35), ((4,), (4,)),
         domain="positive", dtypes=REAL),
    Spec("stdtr_df", lambda df, t: S.stdtr(df, t - 1.0), ((5,), (5,)), domain="positive",
         dtypes=REAL),
    Spec("gammainc_shape", lambda a, x: S.gammainc(a, x), ((5,), (5,)), domain="positive",
         dtypes=REAL),
    Spec("chdtrc_shape", lambda v, x: S.chdtrc(v, 2.0 * x), ((5,), (5,)),
         domain="positive", dtypes=REAL),
]

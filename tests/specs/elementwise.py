"""The elementwise family of tenpy_ad.numpy: transcendental functions, rounding (zero
derivative), extrema and clipping, remainders, powers with tensor exponents, ``where``,
``nan_to_num``, ``stop_gradient`` and the bool-valued tests used as masks.

Domains the table does not name are made inside ``fn`` (``0.3 * x`` for |x| < 1); the
derivatives at ties, bounds, jumps, singular points and branch cuts are the entries'
``special`` points (a point's own ``fn`` is the bare function where the spec's rescales).
"""
import math

import numpy as np

import tenpy_ad as tp
import tenpy_ad.numpy as tnp

from .table import INF, NAN, REAL, Spec, SpecialPoint, flat

PI2 = math.pi ** 2
LN2, LN3 = math.log(2.0), math.log(3.0)
TIE_CURVATURE = ((0.25, -0.25), (-0.25, 0.25))     # of logaddexp at x == y: sigmoid' = 1/4

TWO = ((3, 4), (3, 4))

SPECS = [
    # exponentials and logarithms
    Spec("exp2", tnp.exp2, ((3, 2),)),
    Spec("expm1", tnp.expm1, ((3, 2),)),
    Spec("log2", tnp.log2, ((3, 2),), domain="positive", special=(
        SpecialPoint((0.0,), (INF,), ((-INF,),), "log2 at 0: 1/(x ln2), infinite"),
    )),
    Spec("log10", tnp.log10, ((3, 2),), domain="positive"),
    Spec("log1p", tnp.log1p, ((3, 2),), domain="positive", special=(
        SpecialPoint((-1.0,), (INF,), ((-INF,),), "log1p at -1: infinite"),
    )),
    Spec("cbrt", tnp.cbrt, ((5,),), domain="away_from_zero", dtypes=REAL, special=(
        SpecialPoint((0.0,), (INF,), ((NAN,),), "cbrt at 0: 1/(3 cbrt(x)^2) is +inf; the "
                     "second derivative -2/(9 x^(5/3)) has limits of both signs: NaN"),
    )),
    Spec("logaddexp", tnp.logaddexp, TWO, dtypes=REAL, special=(
        SpecialPoint((0.3, 0.3), (0.5, 0.5), TIE_CURVATURE,
                     "a tie is no special point: sigmoid(x - y) and its derivative"),
        SpecialPoint((1e17, 1e17), (0.5, 0.5), TIE_CURVATURE,
                     "a tie of large entries: x - y, not x - logaddexp(x, y), is exact"),
        SpecialPoint((0.0, LN3), (0.25, 0.75), ((3 / 16, -3 / 16), (-3 / 16, 3 / 16)),
                     "away from ties: the same expression"),
        SpecialPoint((-INF, -INF), (0.5, 0.5), flat(2),
                     "two equal infinities share evenly; the shares are constant there"),
        SpecialPoint((INF, INF), (0.5, 0.5), flat(2), "the same at +inf"),
        SpecialPoint((INF, 0.0), (1.0, 0.0), flat(2), "one infinite operand takes all"),
        SpecialPoint((0.0,), (0.5,), ((0.25,),), "softplus at 0 (a tie with the constant)",
                     fn=lambda x: tnp.logaddexp(0.0, x)),
    )),
    Spec("logaddexp2", tnp.logaddexp2, TWO, dtypes=REAL, special=(
        SpecialPoint((0.3, 0.3), (0.5, 0.5),
                     ((LN2 / 4, -LN2 / 4), (-LN2 / 4, LN2 / 4)),
                     "a tie: sigmoid(ln2 (x - y)) and its derivative ln2/4"),
        SpecialPoint((-INF, -INF), (0.5, 0.5), flat(2), "two equal infinities: even"),
    )),
    # trigonometric and hyperbolic
    Spec("tan", lambda x: tnp.tan(0.5 * x), ((4,),)),
    Spec("sinh", tnp.sinh, ((4,),)),
    Spec("cosh", tnp.cosh, ((4,),)),
    Spec("arcsin", lambda x: tnp.arcsin(0.3 * x), ((5,),), special=(
        SpecialPoint((1.0,), (INF,), ((INF,),), "arcsin at 1: 1/sqrt(1 - x^2) and "
                     "x/(1 - x^2)^(3/2) are +inf", fn=tnp.arcsin),
        SpecialPoint((-1.0,), (INF,), ((-INF,),), "at -1: +inf and -inf", fn=tnp.arcsin),
    )),
    Spec("arccos", lambda x: tnp.arccos(0.3 * x), ((5,),), special=(
        SpecialPoint((1.0,), (-INF,), ((-INF,),), "arccos at 1: -inf, -inf", fn=tnp.arccos),
        SpecialPoint((-1.0,), (-INF,), ((INF,),), "at -1: -inf, +inf", fn=tnp.arccos),
    )),
    Spec("arctan", lambda x: tnp.arctan(0.5 * x), ((5,),)),
    Spec("arcsinh", tnp.arcsinh, ((5,),)),
    Spec("arccosh", lambda x: tnp.arccosh(x + 1.5), ((5,),), domain="positive", special=(
        SpecialPoint((1.0,), (INF,), ((-INF,),), "arccosh at 1: 1/sqrt(x^2 - 1) is +inf, "
                     "its derivative -inf", fn=tnp.arccosh),
    )),
    Spec("arctanh", lambda x: tnp.arctanh(0.3 * x), ((5,),), special=(
        SpecialPoint((1.0,), (INF,), ((INF,),), "arctanh at 1: 1/(1 - x^2), +inf, +inf",
                     fn=tnp.arctanh),
        SpecialPoint((-1.0,), (INF,), ((-INF,),), "at -1: +inf, -inf", fn=tnp.arctanh),
    )),
    Spec("sinc", tnp.sinc, ((6,),), special=(
        SpecialPoint((0.0,), (0.0,), ((-PI2 / 3,),), "sinc at 0: its Taylor series"),
        SpecialPoint((1e-8,), (-PI2 / 3 * 1e-8,), ((-PI2 / 3 + PI2 ** 2 / 10 * 1e-16,),),
                     "near 0: the series (the closed form (cos(pi x) - sinc x)/x cancels)"),
        SpecialPoint((0j,), (0.0, 0.0), ((-PI2 / 3, 0.0), (0.0, PI2 / 3)),
                     "complex sinc at 0: holomorphic, f'' = -pi^2/3"),
    )),
    Spec("arctan2", tnp.arctan2, TWO, dtypes=REAL, special=(
        SpecialPoint((0.0, 0.0), (0.0, 0.0), flat(2),
                     "the origin (a jump): derivative 0, second derivatives 0"),
        SpecialPoint((0.0, -1.0), (-1.0, 0.0), ((0.0, -1.0), (-1.0, 0.0)),
                     "the negative x axis: the angle jumps by 2 pi, its derivatives are "
                     "continuous"),
    )),
    Spec("hypot", tnp.hypot, TWO, dtypes=REAL, special=(
        SpecialPoint((0.0, 0.0), (0.0, 0.0), flat(2),
                     "the origin (a cone): derivative 0 and second derivatives 0, as abs"),
    )),
    Spec("angle", lambda x: tnp.angle(x) * tnp.abs(x), ((5,),), domain="away_from_zero",
         special=(
             SpecialPoint((0j,), (0.0, 0.0), flat(2), "angle at 0: 0 (arctan2's origin)",
                          fn=tnp.angle),
             SpecialPoint((-1.0,), (0.0,), flat(1), "real x: the angle is 0 or pi, "
                          "locally constant", fn=tnp.angle),
         )),
    # powers
    Spec("power_tensor_exponent", lambda x, y: x ** y, TWO, domain="positive", special=(
        SpecialPoint((0.0, 0.0), (0.0, 0.0), flat(2),
                     "0 ** 0: the derivatives along y == 0 (x ** 0 = 1): zero"),
        SpecialPoint((0.0, 1.0), (1.0, 0.0), flat(2),
                     "base 0: the base derivative y 0^(y-1) is locally constant in y; the "
                     "exponent derivative x^y log x is 0 (its limit), with derivatives 0"),
        SpecialPoint((0.0, 2.0), (0.0, 0.0), ((2.0, 0.0), (0.0, 0.0)),
                     "base 0: x ** 2 keeps its second derivative 2"),
        SpecialPoint((0.0, 0.5), (INF, 0.0), ((-INF, 0.0), (0.0, 0.0)),
                     "base 0, y < 1: infinite base derivatives, y (-1 + y) x^(y-2) = -inf"),
    )),
    Spec("power_scalar_base", lambda x: 2.0 ** x, ((4,),)),
    Spec("power_broadcast_exponent", lambda x, y: tnp.power(x, y), ((3, 4), (4,)),
         domain="positive"),
    Spec("power_constant_exponents", lambda x: x ** np.array([0.0, 1.0, 2.0, -1.5]),
         ((3, 4),), domain="positive"),
    Spec("float_power", tnp.float_power, TWO, domain="positive", dtypes=REAL),
    Spec("reciprocal", tnp.reciprocal, ((5,),), domain="away_from_zero", special=(
        SpecialPoint((0.0,), (-INF,), ((INF,),), "1/x at +0: -1/x^2, 2/x^3"),
    )),
    Spec("square", tnp.square, ((5,),)),
    # piecewise
    Spec("rounding", lambda x: x * tnp.floor(x) + tnp.ceil(x) * x * x - tnp.trunc(x) * x
         + tnp.round(x, 1) * x, ((6,),), dtypes=REAL, special=(
             SpecialPoint((1.0,), (3.0,), ((2.0,),), "at a jump of each: derivative 0, so "
                          "only the factors x count: 1 + 2 - 1 + 1 and 2 ceil(x)"),
         )),
    Spec("rint", lambda x: x * tnp.rint(x), ((6,),), special=(
        SpecialPoint((0.5,), (0.0,), flat(1), "half to even (0): a jump, derivative 0"),
    )),
    Spec("round_complex", lambda x: tnp.around(x) * x, ((6,),)),
    Spec("sign", lambda x: tnp.sign(x) * x, ((5,),), domain="away_from_zero", special=(
        SpecialPoint((0.0,), (0.0,), flat(1), "sign at 0 (a jump): derivative 0"),
        SpecialPoint((0j,), (0.0, 0.0), flat(2), "z/|z| at 0: derivative 0, as for real x"),
        SpecialPoint((0j,), (0.0, 0.0), flat(2), "z/|z| at 0", fn=tnp.sign),
    )),
    Spec("fabs", tnp.fabs, ((5,),), domain="away_from_zero", dtypes=REAL, special=(
        SpecialPoint((0.0,), (0.0,), flat(1), "|x| at 0: the subgradient 0"),
    )),
    Spec("copysign", tnp.copysign, TWO, domain="away_from_zero", dtypes=REAL, special=(
        SpecialPoint((0.0, -1.0), (0.0, 0.0), flat(2), "|x| at 0: 0 (as abs); y: jumps only"),
        SpecialPoint((2.0, -0.0), (-1.0, 0.0), flat(2), "the sign of -0.0 counts"),
    )),
    Spec("heaviside", lambda x, y: tnp.heaviside(x, y) + x * y, TWO, dtypes=REAL, special=(
        SpecialPoint((0.0, 0.4), (0.4, 1.0), ((0.0, 1.0), (1.0, 0.0)),
                     "the jump at x = 0: 0 in x, 1 in h0 (its value there); plus x y's"),
    )),
    Spec("floor_divide", lambda x, y: x * (x // y), TWO, domain="positive", dtypes=REAL,
         special=(SpecialPoint((1.0, 1.0), (1.0, 0.0), flat(2),
                               "a jump of x // y: derivative 0, so x's factor only"),)),
    Spec("remainder", lambda x, y: x % y, TWO, domain="positive", dtypes=REAL, special=(
        SpecialPoint((2.0, 1.0), (1.0, -2.0), flat(2),
                     "at a jump: 1 and -q, q = floor(x / y) the quotient NumPy's result uses"),
    )),
    Spec("fmod", lambda x, y: tnp.fmod(-x, y), TWO, domain="positive", dtypes=REAL, special=(
        SpecialPoint((2.0, 1.0), (-1.0, 2.0), flat(2),
                     "fmod(-2, 1) = -0.0 at a jump: 1 and -q (q = trunc(-2/1) = -2), "
                     "times the chain rule's -1 in x"),
    )),
    Spec("maximum", tnp.maximum, TWO, domain="distinct", special=(
        SpecialPoint((0.3, 0.3), (0.5, 0.5), flat(2), "a tie: split evenly (as JAX)"),
        SpecialPoint((NAN, 1.0), (0.0, 0.0), flat(2), "NaN propagates: derivative 0"),
    )),
    Spec("minimum", tnp.minimum, ((3, 4), (4,)), domain="distinct", special=(
        SpecialPoint((0.3, 0.3), (0.5, 0.5), flat(2), "a tie: split evenly"),
    )),
    Spec("fmax_fmin", lambda x, y: tnp.fmax(x, y) * tnp.fmin(x, y), TWO, domain="distinct",
         dtypes=REAL, special=(
             SpecialPoint((0.3, 0.3), (0.5, 0.5), flat(2), "a tie: even", fn=tnp.fmax),
             SpecialPoint((NAN, 1.0), (0.0, 1.0), flat(2), "NaN ignored: to the number",
                          fn=tnp.fmax),
             SpecialPoint((1.0, NAN), (1.0, 0.0), flat(2), "NaN ignored", fn=tnp.fmin),
             SpecialPoint((0.3, 0.3), (0.3, 0.3), ((0.5, 0.5), (0.5, 0.5)),
                          "the product of two even splits: each share 1/2 at every tie"),
         )),
    Spec("clip_scalar_bounds", lambda x: tnp.clip(x, -0.5, 0.5), ((3, 4),), dtypes=REAL,
         special=(
             SpecialPoint((-0.5,), (1.0,), flat(1), "at a bound: to x (closed interval)"),
             SpecialPoint((0.5,), (1.0,), flat(1), "at the upper bound: to x"),
             SpecialPoint((0.7,), (0.0,), flat(1), "clipped: to the bound"),
         )),
    Spec("clip_tensor_bounds", lambda x, y, z: tnp.clip(x, y, z), ((3, 4),) * 3,
         domain="distinct", dtypes=REAL, special=(
             SpecialPoint((0.5, 0.5, 0.5), (1.0, 0.0, 0.0), flat(3), "x on both bounds: x"),
             SpecialPoint((0.0, 1.0, -1.0), (0.0, 0.0, 1.0), flat(3),
                          "crossed bounds: min(max(x, lo), hi) = hi, as NumPy"),
         )),
    Spec("clip_one_bound", lambda x, y: x.clip(max=y) + tnp.clip(y, x, None), TWO,
         domain="distinct", dtypes=REAL),
    Spec("nan_to_num", lambda x: tnp.nan_to_num(x) * x, ((5,),), special=(
        SpecialPoint((INF,), (0.0,), flat(1), "a replaced value: 0", fn=tnp.nan_to_num),
        SpecialPoint((NAN,), (0.0,), flat(1), "NaN replaced: 0", fn=tnp.nan_to_num),
    )),
    # selection and masks
    Spec("where", lambda x, y: tnp.where(tnp.real(x) > 0, x * x, tnp.sin(y)), TWO, special=(
        SpecialPoint((0.0, 0.5), (0.0, math.cos(0.5)), ((0.0, 0.0), (0.0, -math.sin(0.5))),
                     "on the condition's boundary: the selected operand's derivatives"),
    )),
    Spec("where_broadcast_scalar", lambda x: tnp.where(x.real > 0.2, 1.0, x), ((3, 4),)),
    Spec("stop_gradient", lambda x: x * tp.stop_gradient(tnp.round(x)), ((5,),),
         dtypes=REAL),
    Spec("predicates", lambda x: x * tnp.isfinite(x) + x * ~tnp.isnan(x)
         - x * tnp.logical_not(tnp.isinf(x)) - x * tnp.signbit(x), ((6,),), dtypes=REAL),
    Spec("logical", lambda x, y: x * tnp.logical_and(x > 0, y > 0)
         + y * tnp.logical_or(x > 0, y < 0) - x * tnp.logical_xor(x > 0, y > 0), TWO,
         dtypes=REAL),
    Spec("bitwise", lambda x, y: x * ((x > 0) & (y < 0)) + y * ((x > 0) | (y > 0))
         - x * ((x > 0) ^ (y > 0)), TWO, dtypes=REAL),
]

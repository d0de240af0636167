"""The elementwise family of tenpy_ad.numpy: transcendental functions, rounding (zero
derivative), extrema and clipping, remainders, powers with tensor exponents, ``where``,
``nan_to_num``, ``stop_gradient`` and the bool-valued tests used as masks.

Domains the table does not name are made inside ``fn`` (``0.3 * x`` for |x| < 1); the
subgradients at ties, bounds and jumps are tested in tests/test_numpy_elementwise_grads.py.
"""
import numpy as np

import tenpy_ad as tp
import tenpy_ad.numpy as tnp

from .table import REAL, Spec

TWO = ((3, 4), (3, 4))

SPECS = [
    # exponentials and logarithms
    Spec("exp2", tnp.exp2, ((3, 2),)),
    Spec("expm1", tnp.expm1, ((3, 2),)),
    Spec("log2", tnp.log2, ((3, 2),), domain="positive"),
    Spec("log10", tnp.log10, ((3, 2),), domain="positive"),
    Spec("log1p", tnp.log1p, ((3, 2),), domain="positive"),
    Spec("cbrt", tnp.cbrt, ((5,),), domain="away_from_zero", dtypes=REAL),
    Spec("logaddexp", tnp.logaddexp, TWO, dtypes=REAL),
    Spec("logaddexp2", tnp.logaddexp2, TWO, dtypes=REAL),
    # trigonometric and hyperbolic
    Spec("tan", lambda x: tnp.tan(0.5 * x), ((4,),)),
    Spec("sinh", tnp.sinh, ((4,),)),
    Spec("cosh", tnp.cosh, ((4,),)),
    Spec("arcsin", lambda x: tnp.arcsin(0.3 * x), ((5,),)),
    Spec("arccos", lambda x: tnp.arccos(0.3 * x), ((5,),)),
    Spec("arctan", lambda x: tnp.arctan(0.5 * x), ((5,),)),
    Spec("arcsinh", tnp.arcsinh, ((5,),)),
    Spec("arccosh", lambda x: tnp.arccosh(x + 1.5), ((5,),), domain="positive"),
    Spec("arctanh", lambda x: tnp.arctanh(0.3 * x), ((5,),)),
    Spec("sinc", tnp.sinc, ((6,),)),
    Spec("arctan2", tnp.arctan2, TWO, dtypes=REAL),
    Spec("hypot", tnp.hypot, TWO, dtypes=REAL),
    Spec("angle", lambda x: tnp.angle(x) * tnp.abs(x), ((5,),), domain="away_from_zero"),
    # powers
    Spec("power_tensor_exponent", lambda x, y: x ** y, TWO, domain="positive"),
    Spec("power_scalar_base", lambda x: 2.0 ** x, ((4,),)),
    Spec("power_broadcast_exponent", lambda x, y: tnp.power(x, y), ((3, 4), (4,)),
         domain="positive"),
    Spec("power_constant_exponents", lambda x: x ** np.array([0.0, 1.0, 2.0, -1.5]),
         ((3, 4),), domain="positive"),
    Spec("float_power", tnp.float_power, TWO, domain="positive", dtypes=REAL),
    Spec("reciprocal", tnp.reciprocal, ((5,),), domain="away_from_zero"),
    Spec("square", tnp.square, ((5,),)),
    # piecewise
    Spec("rounding", lambda x: x * tnp.floor(x) + tnp.ceil(x) * x * x - tnp.trunc(x) * x
         + tnp.round(x, 1) * x, ((6,),), dtypes=REAL),
    Spec("rint", lambda x: x * tnp.rint(x), ((6,),)),
    Spec("round_complex", lambda x: tnp.around(x) * x, ((6,),)),
    Spec("sign", lambda x: tnp.sign(x) * x, ((5,),), domain="away_from_zero"),
    Spec("fabs", tnp.fabs, ((5,),), domain="away_from_zero", dtypes=REAL),
    Spec("copysign", tnp.copysign, TWO, domain="away_from_zero", dtypes=REAL),
    Spec("heaviside", lambda x, y: tnp.heaviside(x, y) + x * y, TWO, dtypes=REAL),
    Spec("floor_divide", lambda x, y: x * (x // y), TWO, domain="positive", dtypes=REAL),
    Spec("remainder", lambda x, y: x % y, TWO, domain="positive", dtypes=REAL),
    Spec("fmod", lambda x, y: tnp.fmod(-x, y), TWO, domain="positive", dtypes=REAL),
    Spec("maximum", tnp.maximum, TWO, domain="distinct"),
    Spec("minimum", tnp.minimum, ((3, 4), (4,)), domain="distinct"),
    Spec("fmax_fmin", lambda x, y: tnp.fmax(x, y) * tnp.fmin(x, y), TWO, domain="distinct",
         dtypes=REAL),
    Spec("clip_scalar_bounds", lambda x: tnp.clip(x, -0.5, 0.5), ((3, 4),), dtypes=REAL),
    Spec("clip_tensor_bounds", lambda x, y, z: tnp.clip(x, y, z), ((3, 4),) * 3,
         domain="distinct", dtypes=REAL),
    Spec("clip_one_bound", lambda x, y: x.clip(max=y) + tnp.clip(y, x, None), TWO,
         domain="distinct", dtypes=REAL),
    Spec("nan_to_num", lambda x: tnp.nan_to_num(x) * x, ((5,),)),
    # selection and masks
    Spec("where", lambda x, y: tnp.where(tnp.real(x) > 0, x * x, tnp.sin(y)), TWO),
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

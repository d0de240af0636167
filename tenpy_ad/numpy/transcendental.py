"""Exponentials and logarithms, trigonometric and hyperbolic functions and their
inverses, angle conversions and ``sinc``, with NumPy's ufunc signatures (integers and
bools compute in float64).

Derivative rules of smooth functions are smooth expressions (``logaddexp``'s is
``sigmoid(x1 - x2)``), right at every order everywhere: ties of ``logaddexp``/``logaddexp2``
are no special points (1/2 each, second derivative ``±1/4`` or ``±ln2/4``; two
infinities of one sign share evenly), ``sinc`` is exact to every order at and near 0.
At the origin ``arctan2`` and ``hypot`` have derivatives taken as 0, of every order (the
choice ``abs`` makes at 0).  Where a derivative is infinite (``arcsin`` at ``±1``, ``log``
at 0) the rules give IEEE infinities, the same in every mode.
"""
from __future__ import annotations

import math

from ..ops import elementwise as ew
from ..ops import transcendental as tr
from ._arrays import tensor_or_array
from ._dispatch import implements
from ._ufuncs import inexact, ufunc_function

exp = ufunc_function("numpy.exp", ew.exp, "``e**x`` elementwise.")
exp2 = ufunc_function("numpy.exp2", tr.exp2, "``2**x`` elementwise.")
expm1 = ufunc_function("numpy.expm1", tr.expm1, "``exp(x) - 1``, accurate for small ``x``.")
log = ufunc_function("numpy.log", ew.log, "Natural logarithm, elementwise.")
log2 = ufunc_function("numpy.log2", tr.log2, "Base-2 logarithm, elementwise.")
log10 = ufunc_function("numpy.log10", tr.log10, "Base-10 logarithm, elementwise.")
log1p = ufunc_function("numpy.log1p", tr.log1p, "``log(1 + x)``, accurate for small ``x``.")
logaddexp = ufunc_function(
    "numpy.logaddexp", tr.logaddexp,
    "``log(exp(x1) + exp(x2))`` without overflow, with smooth derivatives "
    "(``sigmoid(x1 - x2)``: a tie gets 1/2 each and second derivatives ``±1/4``; two "
    "equal infinities share evenly).")
logaddexp2 = ufunc_function("numpy.logaddexp2", tr.logaddexp2,
                            "``log2(2**x1 + 2**x2)``, with smooth derivatives (a tie gets "
                            "1/2 each and second derivatives ``±ln2/4``).")
sqrt = ufunc_function("numpy.sqrt", ew.sqrt, "Square root, elementwise.")
cbrt = ufunc_function("numpy.cbrt", tr.cbrt,
                      "Real cube root (its derivative is infinite at 0).")
sin = ufunc_function("numpy.sin", ew.sin, "Sine, elementwise.")
cos = ufunc_function("numpy.cos", ew.cos, "Cosine, elementwise.")
tan = ufunc_function("numpy.tan", tr.tan, "Tangent, elementwise.")
arcsin = ufunc_function("numpy.arcsin", tr.arcsin, "Inverse sine (principal branch).")
arccos = ufunc_function("numpy.arccos", tr.arccos, "Inverse cosine (principal branch).")
arctan = ufunc_function("numpy.arctan", tr.arctan, "Inverse tangent (principal branch).")
arctan2 = ufunc_function(
    "numpy.arctan2", tr.arctan2,
    "The angle of the point ``(x2, x1)`` in ``[-pi, pi]``; its derivatives at the "
    "origin (of every order) are taken as 0.")
hypot = ufunc_function(
    "numpy.hypot", tr.hypot,
    "``sqrt(x1**2 + x2**2)`` without overflow; its derivatives at the origin (of every "
    "order) are taken as 0, as for ``abs``.")
sinh = ufunc_function("numpy.sinh", tr.sinh, "Hyperbolic sine, elementwise.")
cosh = ufunc_function("numpy.cosh", tr.cosh, "Hyperbolic cosine, elementwise.")
tanh = ufunc_function("numpy.tanh", ew.tanh, "Hyperbolic tangent, elementwise.")
arcsinh = ufunc_function("numpy.arcsinh", tr.arcsinh, "Inverse hyperbolic sine.")
arccosh = ufunc_function("numpy.arccosh", tr.arccosh, "Inverse hyperbolic cosine.")
arctanh = ufunc_function("numpy.arctanh", tr.arctanh, "Inverse hyperbolic tangent.")
# NumPy multiplies by the rounded constants pi/180 and 180/pi: so does ``scale``
deg2rad = radians = ufunc_function("numpy.deg2rad", lambda x: ew.scale(x, math.pi / 180.0),
                                   "Degrees to radians.")
implements("numpy.radians")(radians)
rad2deg = degrees = ufunc_function("numpy.rad2deg", lambda x: ew.scale(x, 180.0 / math.pi),
                                   "Radians to degrees.")
implements("numpy.degrees")(degrees)


@implements("numpy.sinc")
def sinc(x):
    """``sin(pi x) / (pi x)``, 1 at 0; differentiable to any order everywhere (near 0
    its derivatives come from the Taylor series, exactly)."""
    return tr.sinc(inexact(tensor_or_array(x)))


__all__ = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp",
           "logaddexp2", "sqrt", "cbrt", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
           "arctan2", "hypot", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
           "deg2rad", "radians", "rad2deg", "degrees", "sinc"]

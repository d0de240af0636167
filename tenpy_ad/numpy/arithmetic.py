"""Arithmetic with NumPy's broadcasting, promotion and ufunc signatures: ``add``,
``subtract``, ``multiply``, ``divide``, ``floor_divide``, ``remainder``/``mod``,
``fmod``, ``power``/``float_power`` (tensor base, tensor exponent or both), ``negative``,
``positive``, ``reciprocal``, ``square``, ``absolute``/``abs``, ``fabs``, ``sign``,
``copysign``, ``heaviside``, and ``scale``/``astype``.

Subgradients where NumPy's function has a kink or a jump (see :mod:`tenpy_ad.ops.piecewise`):
``abs``/``fabs``/``sign``/``copysign`` at 0 (0, and second derivatives 0, also for complex
``abs`` and ``sign``), ``floor_divide`` (zero), ``remainder``/``fmod`` in the divisor
(``-q``, the integer quotient); ``power`` with a tensor exponent at a zero base (see its
docstring).  The table of these choices is ``Spec.special`` in tests/specs.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes
from ..errors import ArgumentError, DTypeError
from ..ops import elementwise as ew
from ..ops import piecewise as pw
from ..ops import transcendental as tr
from ..primitive import as_array_result, code_of_value
from ._dispatch import implements
from ._operands import is_tensor
from ._ufuncs import loop_codes, ufunc_function


def _inexact_tensor(x) -> bool:
    return is_tensor(x) and dtypes.is_inexact(code_of_value(x))


def _scalar_value(x):
    """The Python value of a scalar operand (Python or NumPy scalar, 0-d array), or
    None for anything else."""
    t = type(x)
    if t is float or t is int or t is complex or t is bool:
        return x
    if isinstance(x, np.generic) or (t is np.ndarray and x.ndim == 0):
        return x.item() if x.dtype.kind in "biufc" else None
    return None


def _static_scalar(ufunc, op, x1, x2):
    """``ufunc(x1, x2)`` of a floating tensor and a scalar (either first) as one node
    ``op(tensor, value, scalar_first)`` with the scalar's value as a static parameter; the
    tensor is converted first to the dtype NumPy's promotion gives (a NumPy scalar is not
    weak).  None where that does not apply."""
    if _inexact_tensor(x1):
        tensor, scalar, scalar_first = x1, x2, False
    elif _inexact_tensor(x2):
        tensor, scalar, scalar_first = x2, x1, True
    else:
        return None
    value = _scalar_value(scalar)
    if value is None:
        return None
    if type(scalar) is float or type(scalar) is int:
        code = code_of_value(tensor)           # a weak scalar keeps the tensor's dtype
    else:
        code = loop_codes(ufunc, (x1, x2))[-1]
    if code != code_of_value(tensor):
        tensor = ew.convert(tensor, code)
    if isinstance(value, complex) and not dtypes.is_complex(code):
        return None
    return op(tensor, value, scalar_first)


def _scaled(x1, x2):
    """A scalar factor of a floating tensor stays a static parameter (``scale``)."""
    return _static_scalar(np.multiply, lambda t, v, _: ew.scale(t, v), x1, x2)


def _shifted(x1, x2):
    """A scalar term of a floating tensor stays a static parameter (``shift``)."""
    return _static_scalar(np.add, lambda t, v, _: ew.shift(t, v), x1, x2)


def _shifted_difference(x1, x2):
    """``x - c`` is ``x + (-c)`` and ``c - x`` is ``(-x) + c``, exactly, in IEEE
    arithmetic: one ``shift`` node (after a negation)."""
    return _static_scalar(np.subtract, lambda t, v, scalar_first: (
        ew.shift(ew.neg(t), v) if scalar_first else ew.shift(t, -v)), x1, x2)


def _static_power(ufunc):
    """A real scalar exponent of a tensor stays a static parameter (``x ** 2``)."""
    weak_keeps_dtype = ufunc is np.power         # float_power computes in float64

    def shortcut(x, exponent):
        if not is_tensor(x) or not _real_scalar(exponent):
            return None
        if weak_keeps_dtype and type(exponent) in (int, float) \
                and dtypes.is_inexact(code_of_value(x)):
            return ew.power(x, exponent)         # a weak scalar keeps the tensor's dtype
        code = loop_codes(ufunc, (x, exponent))[0]
        value = exponent.item() if isinstance(exponent, np.generic) else exponent
        if dtypes.is_integer(code) and value < 0:
            raise DTypeError(f"{ufunc.__name__}: integers to negative integer powers are not "
                             "allowed (as in NumPy); convert the base to float first")
        return ew.power(ew.convert(x, code), value)
    return shortcut


def _real_scalar(x) -> bool:
    t = type(x)
    if t is int or t is float or t is bool:
        return True
    return isinstance(x, np.generic) and x.dtype.kind in "biuf"


add = ufunc_function("numpy.add", ew.add,
                     "``x1 + x2`` elementwise; a scalar term of a floating tensor is a static "
                     "``shift``.", shortcut=_shifted)
subtract = ufunc_function("numpy.subtract", ew.sub,
                          "``x1 - x2`` elementwise; a scalar operand of a floating tensor is "
                          "a static ``shift``.", shortcut=_shifted_difference)
multiply = ufunc_function("numpy.multiply", ew.mul, "``x1 * x2`` elementwise; a Python scalar "
                          "factor of a floating tensor is a static ``scale``.",
                          shortcut=_scaled)
divide = true_divide = ufunc_function("numpy.divide", ew.div,
                                      "``x1 / x2`` elementwise (integers divide to float64).")
floor_divide = ufunc_function(
    "numpy.floor_divide", pw.floor_divide,
    "``x1 // x2`` elementwise; locally constant, so its derivative is zero (also at the "
    "jumps).")
remainder = mod = ufunc_function(
    "numpy.remainder", pw.remainder,
    "``x1 % x2`` with the sign of ``x2``: derivative 1 in ``x1`` and ``-floor(x1/x2)`` "
    "in ``x2`` (the quotient NumPy's result uses, also at the jumps).")
fmod = ufunc_function(
    "numpy.fmod", pw.fmod,
    "C's remainder, with the sign of ``x1``: derivative 1 in ``x1`` and ``-trunc(x1/x2)`` "
    "in ``x2`` (also at the jumps).")
power = ufunc_function(
    "numpy.power", tr.power,
    "``x1 ** x2`` elementwise.  A real scalar exponent is a static parameter; a tensor "
    "exponent is differentiated too (``x2`` derivative ``x1**x2 log(x1)``, 0 where "
    "``x1 == 0``; at ``0 ** 0`` the ``x1`` derivative is that along ``x2 == 0``: 0; at "
    "``x1 == 0`` the mixed second derivatives are 0).",
    shortcut=_static_power(np.power))
float_power = ufunc_function(
    "numpy.float_power", tr.power,
    "``x1 ** x2`` computed in float64 (complex128 for complex operands), as "
    ":func:`power` otherwise.", shortcut=_static_power(np.float_power))
negative = ufunc_function("numpy.negative", ew.neg, "``-x`` elementwise.")
positive = ufunc_function("numpy.positive", ew.fresh_array,
                          "``+x``: a new tensor of the same value (writes leave ``x`` alone).")
reciprocal = ufunc_function("numpy.reciprocal", ew.reciprocal,
                            "``1/x`` elementwise (integers: integer division, as NumPy).")
square = ufunc_function("numpy.square", lambda x: ew.mul(x, x), "``x * x`` elementwise.")
absolute = ufunc_function(
    "numpy.absolute", ew.abs,
    "``|x|`` elementwise (real for complex ``x``); its derivatives at 0 (first and "
    "second) are taken as 0.")
abs = absolute  # noqa: A001 - NumPy's name
fabs = ufunc_function("numpy.fabs", ew.abs,
                      "``|x|`` of real ``x`` as a float; its derivative at 0 is taken as 0.")
sign = ufunc_function(
    "numpy.sign", ew.sign,
    "-1, 0 or 1 (``z/|z|`` for complex ``z``, 0 at 0): derivative 0 for real ``x`` and "
    "at 0.")
copysign = ufunc_function(
    "numpy.copysign", pw.copysign,
    "``|x1|`` with the sign of ``x2``: derivative ``±sign(x1)`` in ``x1`` (0 at 0, as for "
    "``abs``) and 0 in ``x2``.")
heaviside = ufunc_function(
    "numpy.heaviside", pw.heaviside,
    "0 for ``x1 < 0``, ``x2`` at 0, 1 for ``x1 > 0``: derivative 0 in ``x1`` (also at the "
    "jump) and 1 in ``x2`` where ``x1 == 0``.")


def scale(x, factor):
    """``x * factor`` for a scalar factor stored in the graph as a static parameter."""
    if isinstance(factor, (np.generic, np.ndarray)) and np.ndim(factor) == 0:
        factor = factor.item()
    if not isinstance(factor, numbers.Number):
        raise ArgumentError(f"scale: the factor must be a scalar, got {type(factor).__name__}")
    if not _inexact_tensor(x):
        return multiply(x, factor)       # NumPy's promotion of int/bool tensors and arrays
    if isinstance(factor, complex) and not dtypes.is_complex(code_of_value(x)):
        x = ew.convert(x, dtypes.complex_code(code_of_value(x)))
    return ew.scale(x, factor)


def scale_real(x, factor):
    """``x * factor`` for a real scalar ``factor`` kept as a static parameter of the graph
    (the ``.scale_real`` method); a complex factor is refused: write ``x * factor``."""
    if isinstance(factor, complex) or np.iscomplexobj(factor):
        raise ArgumentError(f"scale_real: the factor must be real, got {factor!r}; "
                            "multiply by a complex number with x * factor")
    return scale(x, factor)


@implements("numpy.astype")
def astype(x, dtype, *, copy: bool = True, device=None):
    """Convert to ``dtype`` (complex to real is refused: take ``.real`` explicitly): a new
    array, which writes leave apart from ``x``, unless ``copy=False`` and the dtype is
    ``x``'s; ``device`` is None or ``"cpu"``."""
    if device not in (None, "cpu"):
        raise ArgumentError(f"astype: device must be None or 'cpu', got {device!r}")
    result = ew.convert(x, dtypes.code_of(dtype))
    return as_array_result(ew.fresh_array(result) if copy and result is x else result)


__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide",
           "remainder", "mod", "fmod", "power", "float_power", "negative", "positive",
           "reciprocal", "square", "absolute", "abs", "fabs", "sign", "copysign",
           "heaviside", "scale", "scale_real", "astype"]

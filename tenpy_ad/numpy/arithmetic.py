"""Elementwise arithmetic and functions with NumPy's broadcasting and promotion."""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes
from ..errors import ArgumentError
from ..ops import elementwise as ew
from ..ops import structural as st
from ..primitive import Tensor, TracedTensor, bind2, code_of_value, elementwise_ready, shape_of
from ._dispatch import implements
from ._operands import PY_SCALARS, broadcast_shapes, is_tensor, is_traced, operand, result_code


def _binary(name, prim, a, b):
    """Apply an elementwise binary primitive with NumPy's broadcasting and promotion
    (``name``, NumPy's name of the operation, is the one error messages use)."""
    if elementwise_ready(a, b):
        return bind2(prim, None, a, b)
    traced = is_traced(a) or is_traced(b)
    code = result_code(name, a, b)
    a, b = operand(a, code, traced), operand(b, code, traced)
    shape = broadcast_shapes(name, shape_of(a), shape_of(b))
    return bind2(prim, None, st.broadcast_to(a, shape), st.broadcast_to(b, shape))


def add(a, b):
    """Elementwise ``a + b`` with NumPy broadcasting and promotion."""
    return _binary("add", ew.add_p, a, b)


def subtract(a, b):
    """Elementwise ``a - b``."""
    return _binary("subtract", ew.sub_p, a, b)


def _is_static_scalar(x) -> bool:
    return type(x) in PY_SCALARS


def multiply(a, b):
    """Elementwise ``a * b``; a Python scalar factor becomes a static ``scale``."""
    if _is_static_scalar(b) and is_tensor(a):
        return scale(a, b)
    if _is_static_scalar(a) and is_tensor(b):
        return scale(b, a)
    return _binary("multiply", ew.mul_p, a, b)


def divide(a, b):
    """Elementwise ``a / b``."""
    return _binary("divide", ew.div_p, a, b)


def scale(x, factor):
    """``x * factor`` for a scalar factor stored in the graph as a static parameter."""
    if type(factor) is float:                   # the common case, kept short
        t = type(x)
        if t is TracedTensor or t is Tensor:
            return ew.scale(x, factor)
    if not is_tensor(x):
        return np.multiply(x, factor)
    if isinstance(factor, (np.generic, np.ndarray)) and np.ndim(factor) == 0:
        factor = factor.item()
    if not isinstance(factor, numbers.Number):
        raise ArgumentError(f"scale: the factor must be a scalar, got {type(factor).__name__}")
    code = x.dtype_code if type(x) is TracedTensor else code_of_value(x)
    if isinstance(factor, complex) and not dtypes.is_complex(code):
        x = ew.convert(x, dtypes.complex_code(code))
    return ew.scale(x, factor)


def scale_real(x, factor):
    """``x * factor`` for a real scalar ``factor`` kept as a static parameter of the graph
    (the ``.scale_real`` method); a complex factor is refused: write ``x * factor``."""
    if isinstance(factor, complex) or np.iscomplexobj(factor):
        raise ArgumentError(f"scale_real: the factor must be real, got {factor!r}; "
                            "multiply by a complex number with x * factor")
    return scale(x, factor)


def power(x, exponent):
    """``x ** exponent`` for a scalar exponent."""
    if not is_tensor(x):
        if is_tensor(exponent):
            raise ArgumentError("power: the exponent must be a scalar, not a tensor")
        return np.power(x, exponent)
    if isinstance(exponent, (np.generic, np.ndarray)) and np.ndim(exponent) == 0:
        exponent = exponent.item()
    if not isinstance(exponent, numbers.Real):
        raise ArgumentError("power: only a real scalar exponent is supported; write "
                        "tp.exp(y * tp.log(x)) for a tensor exponent")
    return ew.power(x, exponent)


# elementwise functions: the primitives' own binders apply NumPy semantics to plain values
exp, log, sqrt, sin, cos, tanh = ew.exp, ew.log, ew.sqrt, ew.sin, ew.cos, ew.tanh
abs, conj, real, imag, sign = ew.abs, ew.conj, ew.real, ew.imag, ew.sign  # noqa: A001
negative = ew.neg


def astype(x, dtype):
    """Convert to ``dtype`` (complex to real is refused: take ``.real`` explicitly)."""
    if not is_tensor(x):
        return np.asarray(x).astype(dtype)
    return ew.convert(x, dtypes.code_of(dtype))


for _numpy_fn, _ours in [(np.add, add), (np.subtract, subtract), (np.multiply, multiply),
                         (np.divide, divide), (np.power, power), (np.negative, negative),
                         (np.exp, exp), (np.log, log), (np.sqrt, sqrt), (np.sin, sin),
                         (np.cos, cos), (np.tanh, tanh), (np.abs, abs), (np.conj, conj),
                         (np.real, real), (np.imag, imag), (np.sign, sign)]:
    implements(_numpy_fn)(_ours)

__all__ = ['add', 'subtract', 'multiply', 'divide', 'scale', 'scale_real', 'power', 'negative', 'exp', 'log', 'sqrt', 'sin', 'cos', 'tanh', 'abs', 'conj', 'real', 'imag', 'sign', 'astype']

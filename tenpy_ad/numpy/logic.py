"""Truth values and selections: ``where``, the tests ``isnan``, ``isfinite``, ``isinf``,
``signbit``, ``isposinf``, ``isneginf``, ``iscomplex``, ``isreal`` (and the dtype tests
``iscomplexobj``, ``isrealobj``), the logical and bitwise operations (``&``, ``|``,
``^``, ``~`` on bool and integer tensors), and ``nan_to_num``.

Bool and integer results are never differentiated.  ``where(condition, x, y)``
differentiates into ``x`` and ``y`` where each is selected; the condition gets no
derivative.  ``nan_to_num`` has derivative 1 where ``x`` is finite, 0 where it replaced a
value.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import ArgumentValueError, ConcretizationError, DTypeError
from ..ops import elementwise as ew
from ..ops import logic as lg
from ..ops import piecewise as pw
from ..ops import structural as st
from ..ops.indexing import concrete_value
from ..primitive import as_array_result, code_of_value, is_complex_value, shape_of
from ._arrays import as_array, tensor_or_array
from ._dispatch import implements
from ._operands import broadcast_shapes, in_one_mode, result_code, value_like
from ._ufuncs import options, ufunc_function

isnan = ufunc_function("numpy.isnan", lg.isnan, "Where ``x`` is NaN (complex: either part).")
isfinite = ufunc_function("numpy.isfinite", lg.isfinite,
                          "Where ``x`` is neither NaN nor infinite.")
isinf = ufunc_function("numpy.isinf", lg.isinf, "Where ``x`` is infinite.")
signbit = ufunc_function("numpy.signbit", lg.signbit,
                         "Where the sign bit of real ``x`` is set (also ``-0.0``).")
logical_and = ufunc_function("numpy.logical_and", lg.logical_and, "Truth of ``x1 and x2``.")
logical_or = ufunc_function("numpy.logical_or", lg.logical_or, "Truth of ``x1 or x2``.")
logical_xor = ufunc_function("numpy.logical_xor", lg.logical_xor, "Truth of ``x1 xor x2``.")
logical_not = ufunc_function("numpy.logical_not", lg.logical_not, "Truth of ``not x``.")
bitwise_and = ufunc_function("numpy.bitwise_and", lg.bitwise_and,
                             "``x1 & x2`` of bool or integer tensors.")
bitwise_or = ufunc_function("numpy.bitwise_or", lg.bitwise_or,
                            "``x1 | x2`` of bool or integer tensors.")
bitwise_xor = ufunc_function("numpy.bitwise_xor", lg.bitwise_xor,
                             "``x1 ^ x2`` of bool or integer tensors.")
invert = bitwise_not = ufunc_function("numpy.invert", lg.invert,
                                      "``~x``: logical not of bools, ``-x - 1`` of integers.")


def _infinite_of_sign(name, x, out, negative: bool):
    """``isposinf``/``isneginf``: real ``x`` only, as NumPy."""
    options(name, out, {})
    x = tensor_or_array(x, name)
    if dtypes.is_complex(code_of_value(x)):
        raise DTypeError(f"{name}: not supported for complex values (ambiguous, as in NumPy)")
    sign = lg.signbit(x) if negative else lg.logical_not(lg.signbit(x))
    return lg.logical_and(lg.isinf(x), sign)


@implements("numpy.isposinf")
def isposinf(x, out=None):
    """Where real ``x`` is ``+inf``."""
    return _infinite_of_sign("isposinf", x, out, negative=False)


@implements("numpy.isneginf")
def isneginf(x, out=None):
    """Where real ``x`` is ``-inf``."""
    return _infinite_of_sign("isneginf", x, out, negative=True)


@implements("numpy.iscomplex")
def iscomplex(x):
    """Where the imaginary part is non-zero (all False for real ``x``)."""
    return ew.convert(ew.imag(tensor_or_array(x, "iscomplex")), dtypes.BOOL)


@implements("numpy.isreal")
def isreal(x):
    """Where the imaginary part is zero (all True for real ``x``)."""
    return lg.logical_not(iscomplex(x))


@implements("numpy.iscomplexobj")
def iscomplexobj(x):
    """Whether the dtype is complex (a Python bool)."""
    return is_complex_value(as_array(x))


@implements("numpy.isrealobj")
def isrealobj(x):
    """Whether the dtype is not complex (a Python bool)."""
    return not iscomplexobj(x)


@implements("numpy.where")
def where(condition, x=None, y=None, /):
    """``x`` where ``condition`` holds, else ``y`` (broadcast together; the dtype is the
    promotion of ``x`` and ``y``).  The derivative flows into the operand selected at each
    entry; the condition gets none.

    With the condition alone this is ``nonzero(condition)``: integer indices, whose
    number depends on the values, so a traced condition is refused."""
    if x is None and y is None:
        return _nonzero(tensor_or_array(condition, "where"))
    if x is None or y is None:
        raise ArgumentValueError("where: either both or neither of x and y should be given")
    condition, x, y = as_array(condition), as_array(x), as_array(y)
    code = result_code("where", x, y)
    xs = in_one_mode((condition, x, y), (dtypes.BOOL, code, code))
    shape = broadcast_shapes("where", *[shape_of(v) for v in xs])
    return as_array_result(ew.select(*[st.broadcast_to(v, shape) for v in xs]))


def _nonzero(condition):
    value = concrete_value(condition)
    if value is None:
        raise ConcretizationError(
            "where(condition) with one argument is nonzero(condition): how many indices it "
            "returns depends on the values, which a traced tensor does not have; use "
            "where(condition, x, y) to select values")
    return tuple(value_like(condition, i) for i in np.nonzero(value))


@implements("numpy.nan_to_num")
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN replaced by ``nan``, infinities by ``posinf``/``neginf`` (default: the
    largest finite values of the dtype), per part for complex ``x``.  Derivative 1 where
    ``x`` is finite, 0 where a value was replaced.  Tensors are immutable, so ``copy``
    has no effect on them."""
    x = tensor_or_array(x, "nan_to_num")
    code = code_of_value(x)
    if not dtypes.is_inexact(code):
        return x
    info = np.finfo(dtypes.DTYPES[dtypes.real_code(code)])
    return pw.nan_to_num(x, nan, info.max if posinf is None else posinf,
                         info.min if neginf is None else neginf)


__all__ = ["where", "isnan", "isfinite", "isinf", "signbit", "isposinf", "isneginf",
           "iscomplex", "isreal", "iscomplexobj", "isrealobj", "logical_and", "logical_or",
           "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
           "invert", "bitwise_not", "nan_to_num"]

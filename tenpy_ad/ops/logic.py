"""Elementwise primitives with bool or integer results, which are never differentiated:
the predicates ``isnan``, ``isfinite``, ``isinf``, ``signbit``, the logical operations on
truth values and the bitwise operations on bools and int64.

They take operands of one dtype (and, binary ones, one shape): the NumPy-style surface has
already promoted and broadcast them.  Their outputs carry no derivative, so their rules are
zero; masks made of them enter derivatives only as factors or as ``select`` conditions.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .. import dtypes
from ..errors import DTypeError
from ..primitive import bind1, bind2, code_of_value, describe, primitive
from ..rules import defjvp, defvjp, zero_rule
from .elementwise import comparison, same_operands


def _not_differentiated(prim, n_operands: int):
    defjvp(prim, *[zero_rule] * n_operands)
    defvjp(prim, *[zero_rule] * n_operands)
    return prim


def _predicate_rule(params, x):
    return dtypes.BOOL, x.shape


def predicate(name: str, fn: Callable):
    """An elementwise test of one operand: a bool result, not differentiated."""
    return _not_differentiated(primitive(name, lambda params, x: fn(x), _predicate_rule,
                                         array_fn=fn), 1)


isnan_p = predicate("isnan", np.isnan)
isfinite_p = predicate("isfinite", np.isfinite)
isinf_p = predicate("isinf", np.isinf)
signbit_p = predicate("signbit", np.signbit)
logical_not_p = predicate("logical_not", np.logical_not)

logical_and_p = comparison("logical_and", np.logical_and)
logical_or_p = comparison("logical_or", np.logical_or)
logical_xor_p = comparison("logical_xor", np.logical_xor)


def isnan(x):
    return bind1(isnan_p, None, x)


def isfinite(x):
    return bind1(isfinite_p, None, x)


def isinf(x):
    return bind1(isinf_p, None, x)


def signbit(x):
    return bind1(signbit_p, None, x)


def logical_not(x):
    return bind1(logical_not_p, None, x)


def logical_and(x, y):
    return bind2(logical_and_p, None, x, y)


def logical_or(x, y):
    return bind2(logical_or_p, None, x, y)


def logical_xor(x, y):
    return bind2(logical_xor_p, None, x, y)


# ------------------------------------------------------------------ bitwise (bool, int64)

def _check_integral(name, x):
    if code_of_value(x) < dtypes.BOOL:
        raise DTypeError(f"{name}: needs bool or integer operands, got {describe(x)}")


def _bitwise_rule(name):
    same = same_operands(name)

    def rule(params, x, y):
        same(params, x, y)
        _check_integral(name, x)
        return x
    return rule


def _invert_rule(params, x):
    _check_integral("invert", x)
    return x


def bitwise(name: str, fn: Callable):
    """A bitwise operation on two bool or int64 operands of one shape and dtype."""
    return _not_differentiated(primitive(name, lambda params, x, y: fn(x, y),
                                         _bitwise_rule(name), array_fn=fn), 2)


bitwise_and_p = bitwise("bitwise_and", np.bitwise_and)
bitwise_or_p = bitwise("bitwise_or", np.bitwise_or)
bitwise_xor_p = bitwise("bitwise_xor", np.bitwise_xor)
invert_p = _not_differentiated(primitive("invert", lambda params, x: np.invert(x),
                                         _invert_rule, array_fn=np.invert), 1)


def bitwise_and(x, y):
    return bind2(bitwise_and_p, None, x, y)


def bitwise_or(x, y):
    return bind2(bitwise_or_p, None, x, y)


def bitwise_xor(x, y):
    return bind2(bitwise_xor_p, None, x, y)


def invert(x):
    """Bitwise not: logical not of bools, ``~n = -n - 1`` of integers."""
    return bind1(invert_p, None, x)

"""Orderings: ``argsort``, ``lexsort``, ``argpartition`` and ``searchsorted``.

Their results are integer positions, never differentiated (zero rules): sorted *values*
are gathered with these positions (``tenpy_ad.numpy.sort``), so their derivative follows
the permutation through the gather.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import DTypeError, ShapeError
from ..param_schema import AXIS, Exactly, Int, Maybe, Struct, TupleOf
from ..primitive import code_of_value, describe, primitive
from ..rules import defjvp, defvjp, zero_rule


def _axis_rule(name):
    def rule(params, x):
        axis = params[-1]
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"{name}: axis {axis} is out of range for {describe(x)}")
        return dtypes.INT64, tuple(x.shape)
    return rule


argsort_p = primitive("argsort", lambda p, x: np.argsort(x, axis=p[1], kind=p[0]),
                      _axis_rule("argsort"),
                      format_params=lambda p: f"kind={p[0]} axis={p[1]}",
                      params=Struct(Maybe(Exactly("quicksort", "mergesort", "heapsort",
                                                  "stable")), AXIS))
defjvp(argsort_p, zero_rule)
defvjp(argsort_p, zero_rule)


def _lexsort_rule(axis, keys):
    if keys.ndim < 2 or not 0 <= axis < keys.ndim - 1:
        raise ShapeError(f"lexsort: keys {describe(keys)} need a leading axis of keys and "
                         f"axis {axis} among the others")
    return dtypes.INT64, tuple(keys.shape)[1:]


#: ``keys`` stacked on a leading axis, the last key the primary one (NumPy's order)
lexsort_p = primitive("lexsort", lambda axis, keys: np.lexsort(keys, axis=axis),
                      _lexsort_rule, format_params=lambda axis: f"axis={axis}", params=AXIS)
defjvp(lexsort_p, zero_rule)
defvjp(lexsort_p, zero_rule)


def _argpartition_rule(params, x):
    kth, axis = params
    code, shape = _axis_rule("argpartition")(params, x)
    n = shape[axis]
    for k in kth:
        if not -n <= k < n:
            raise ShapeError(f"argpartition: kth {k} is out of bounds for axis {axis} of "
                             f"{describe(x)}")
    return code, shape


argpartition_p = primitive("argpartition",
                           lambda p, x: np.argpartition(x, list(p[0]), axis=p[1]),
                           _argpartition_rule,
                           format_params=lambda p: f"kth={list(p[0])} axis={p[1]}",
                           params=Struct(TupleOf(Int()), AXIS))
defjvp(argpartition_p, zero_rule)
defvjp(argpartition_p, zero_rule)


def _searchsorted_rule(side, a, v):
    if a.ndim != 1:
        raise ShapeError(f"searchsorted: the sorted array must be 1-d, got {describe(a)}")
    if code_of_value(a) != code_of_value(v):
        raise DTypeError(f"searchsorted: operands {describe(a)} and {describe(v)} differ in "
                         "dtype")
    return dtypes.INT64, tuple(v.shape)


searchsorted_p = primitive("searchsorted",
                           lambda side, a, v: np.asarray(np.searchsorted(a, v, side=side)),
                           _searchsorted_rule, format_params=lambda side: f"side={side}",
                           params=Exactly("left", "right"))
defjvp(searchsorted_p, zero_rule, zero_rule)
defvjp(searchsorted_p, zero_rule, zero_rule)

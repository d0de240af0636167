"""Reductions over axes: ``sum``, ``prod``, ``max``/``min``, ``ptp``, ``all``/``any``,
``argmax``/``argmin``, ``count_nonzero``.

NumPy's signatures: ``axis`` None (all axes), an int or a tuple, negative counting from the
end; ``keepdims``; ``dtype`` where NumPy has it; ``initial`` for ``sum``, ``prod``, ``max``
and ``min``.  ``np.sum(x, out=t)`` writes into the tensor ``t`` (numpy/inplace.py;
``tnp.sum(x, out=...)`` is refused); ``where=`` is refused for tensors (mask the operand instead).  Without a tensor among the arguments NumPy's own function runs.

Subgradients: ``max``/``min`` (and ``ptp``) give the derivative to the entries equal to
the extremum, split evenly among ties (``max([1., 3., 3.])`` -> ``[0, 0.5, 0.5]``);
``prod`` is exact with zeros in the input.  Complex values have no order: ``max``,
``min`` and ``ptp`` refuse them.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import dtypes
from ..errors import ArgumentError, DTypeError, ShapeError
from ..ops import elementwise as ew
from ..ops import reductions as red
from ..ops import structural as st
from ..primitive import code_of_value, constant, describe, shape_of
from ._arrays import tensor_or_array
from ._dispatch import implements
from ._operands import is_traced, normalize_axes, normalize_axis, value_like
from ._ufuncs import new_result
from .arithmetic import add, multiply, subtract

#: the default of NumPy arguments that are left out when not given (``initial``, ...)
NO_VALUE = np._NoValue


def refuse_out_where(name: str, out=None, where=True) -> None:
    """``out=`` reaching a reduction by position (by keyword the dispatch writes it:
    numpy/_dispatch.py) and masked reductions are not provided: say so."""
    if out is not None:
        raise ArgumentError(f"{name}: out= is taken by keyword (out=t writes the result "
                            "into t)")
    if where is not True and where is not np.True_ and where is not NO_VALUE:
        raise ArgumentError(f"{name}: where= is not supported for tensors; mask the "
                            "operand instead (e.g. tnp.where(mask, x, 0))")


def keep_dims(result, shape: tuple, axes: tuple, keepdims: bool):
    """``result`` reduced over ``axes`` of ``shape``, with those axes kept as length 1."""
    if not keepdims:
        return result
    return st.reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def reduced_size(shape: tuple, axes: tuple) -> int:
    """How many entries each reduced slice holds."""
    return math.prod(shape[i] for i in axes)


def filled(like, shape: tuple, value):
    """A tensor of ``shape`` in ``like``'s dtype and mode holding ``value`` everywhere."""
    if is_traced(like):
        return st.broadcast_in_dim(constant(value, like.dtype_code), shape, ())
    return value_like(like, np.full(shape, value, dtype=dtypes.DTYPES[code_of_value(like)]))


def accumulating(x, dtype):
    """``x`` in the dtype a sum or product accumulates in: ``dtype`` if given, else NumPy's
    default (bools and narrow integers widen to int64 / uint64)."""
    if dtype is not None:
        return ew.convert(x, dtypes.code_of(dtype))
    return ew.convert(x, dtypes.accumulator_code(code_of_value(x)))


# ------------------------------------------------------------------ sum, prod

def _accumulated(name, reduce, combine, a, axis, dtype, out, keepdims, initial, where):
    """``sum``/``prod``: ``reduce`` over ``axis`` in the accumulating dtype, then
    ``combine``-d with ``initial`` if given."""
    refuse_out_where(name, out, where)
    x = accumulating(tensor_or_array(a, name), dtype)
    shape = shape_of(x)
    axes = normalize_axes(name, axis, len(shape))
    result = keep_dims(reduce(x, axes), shape, axes, keepdims)
    if initial is not NO_VALUE:
        result = combine(result, initial)
    return new_result(result, (x, a))      # over no axes: NumPy's result is a new array


@implements("numpy.sum")
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=NO_VALUE,  # noqa: A001
        where=True):
    """Sum over ``axis`` (all axes by default), like ``np.sum``."""
    return _accumulated("sum", st.reduce_sum, add, a, axis, dtype, out, keepdims, initial,
                        where)


@implements("numpy.prod")
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=NO_VALUE, where=True):
    """Product over ``axis``; the derivative is the product of the other entries (exact
    with zeros in ``a``: no division)."""
    return _accumulated("prod", red.reduce_prod, multiply, a, axis, dtype, out, keepdims,
                        initial, where)


# ------------------------------------------------------------------ extrema

def ordered(name: str, a):
    """Refuse complex operands of an order-based reduction."""
    if dtypes.is_complex(code_of_value(a)):
        raise DTypeError(f"{name}: complex values have no order (NumPy's lexicographic "
                         f"order has no derivative); got {describe(a)}, reduce its .real "
                         "or abs() instead")


def extremum(name, reduce, a, axis, out, keepdims, initial, where):
    """``max``/``min``-like reductions with NumPy's arguments (ties share the derivative
    evenly, ``initial`` included)."""
    a = tensor_or_array(a, name)
    refuse_out_where(name, out, where)
    ordered(name, a)
    shape = shape_of(a)
    axes = normalize_axes(name, axis, len(shape))
    empty = builtins.any(shape[i] == 0 for i in axes)
    if initial is NO_VALUE:
        if empty:
            raise ShapeError(f"{name}: zero-size reduction over {describe(a)} has no "
                             "identity; pass initial=")
        result = keep_dims(reduce(a, axes), shape, axes, keepdims)
        return new_result(result, (a,))                      # axis=(): a copy
    start = filled(a, tuple(d for i, d in enumerate(shape) if i not in axes), initial)
    if empty:
        return keep_dims(start, shape, axes, keepdims)
    result = reduce(a, axes)
    pair = (1,) + shape_of(result)
    both = st.concatenate([st.reshape(result, pair), st.reshape(start, pair)], 0)
    return keep_dims(reduce(both, (0,)), shape, axes, keepdims)


@implements("numpy.max", "numpy.amax")
def amax(a, axis=None, out=None, keepdims=False, initial=NO_VALUE, where=True):
    """Maximum over ``axis``; the derivative goes to the maxima, split evenly on ties."""
    return extremum("max", st.reduce_max, a, axis, out, keepdims, initial, where)


@implements("numpy.min", "numpy.amin")
def amin(a, axis=None, out=None, keepdims=False, initial=NO_VALUE, where=True):
    """Minimum over ``axis``; the derivative goes to the minima, split evenly on ties."""
    return extremum("min", red.reduce_min, a, axis, out, keepdims, initial, where)


max = amax  # noqa: A001 - NumPy's names
min = amin  # noqa: A001


@implements("numpy.ptp")
def ptp(a, axis=None, out=None, keepdims=False):
    """``max - min`` over ``axis`` (ties of either share its derivative evenly)."""
    a = tensor_or_array(a, "ptp")
    return subtract(amax(a, axis, out, keepdims), amin(a, axis, out, keepdims))


# ------------------------------------------------------------------ booleans, indices

def _logical(name, reduce, a, axis, out, keepdims, where):
    a = tensor_or_array(a, name)
    refuse_out_where(name, out, where)
    shape = shape_of(a)
    axes = normalize_axes(name, axis, len(shape))
    return keep_dims(reduce(a, axes), shape, axes, keepdims)


@implements("numpy.all")
def all(a, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    """Whether all entries over ``axis`` are non-zero (bool, not differentiated)."""
    return _logical("all", red.reduce_all, a, axis, out, keepdims, where)


@implements("numpy.any")
def any(a, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    """Whether any entry over ``axis`` is non-zero (bool, not differentiated)."""
    return _logical("any", red.reduce_any, a, axis, out, keepdims, where)


def _arg(name, reduce, a, axis, out, keepdims):
    a = tensor_or_array(a, name)
    refuse_out_where(name, out)
    shape = shape_of(a)
    if axis is None:
        index = reduce(st.reshape(a, (math.prod(shape),)), 0)
        return st.reshape(index, (1,) * len(shape)) if keepdims else index
    axis = normalize_axis(name, axis, len(shape))
    return keep_dims(reduce(a, axis), shape, (axis,), keepdims)


@implements("numpy.argmax")
def argmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the first maximum (of the flattened ``a`` when ``axis`` is None); int64,
    not differentiated."""
    return _arg("argmax", red.argmax, a, axis, out, keepdims)


@implements("numpy.argmin")
def argmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the first minimum; int64, not differentiated."""
    return _arg("argmin", red.argmin, a, axis, out, keepdims)


@implements("numpy.count_nonzero")
def count_nonzero(a, axis=None, *, keepdims=False):
    """How many entries over ``axis`` are non-zero (int64, not differentiated)."""
    a = tensor_or_array(a, "count_nonzero")
    shape = shape_of(a)
    axes = normalize_axes("count_nonzero", axis, len(shape))
    nonzero = red.reduce_any(a, ())        # elementwise truth, as a bool tensor
    counts = st.reduce_sum(ew.convert(nonzero, dtypes.INT64), axes)
    return keep_dims(counts, shape, axes, keepdims)


__all__ = ["sum", "prod", "amax", "amin", "max", "min", "ptp", "all", "any", "argmax",
           "argmin", "count_nonzero"]

"""Reductions over axes: ``sum``, ``prod``, ``max``/``min``, ``ptp``, ``all``/``any``,
``argmax``/``argmin``, ``count_nonzero``.

NumPy's signatures: ``axis`` None (all axes), an int or a tuple, negative counting from the
end; ``keepdims``; ``dtype`` where NumPy has it; ``initial`` for ``sum``, ``prod``, ``max``
and ``min``.  ``out=`` and ``where=`` are refused for tensors (tensors are immutable; mask
the operand instead).  Without a tensor among the arguments NumPy's own result is returned.

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
from ..primitive import Tensor, code_of_value, constant, describe, shape_of
from ._dispatch import implements
from ._operands import is_tensor, is_traced, normalize_axes, normalize_axis
from .arithmetic import add, multiply, subtract
from .joining import as_array

#: the default of NumPy arguments that are left out when not given (``initial``, ...)
NO_VALUE = np._NoValue


def numpy_result(fn, *args, **kwargs):
    """``fn`` of NumPy on plain values, passing on only the keywords that were given."""
    return fn(*args, **{k: v for k, v in kwargs.items() if v is not NO_VALUE})


def refuse_out_where(name: str, out=None, where=True) -> None:
    """Tensors are immutable and masked reductions are not provided: say so."""
    if out is not None:
        raise ArgumentError(f"{name}: out= is not supported for tensors (they are "
                            "immutable); use the returned value")
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
    array = np.full(shape, value, dtype=dtypes.DTYPES[code_of_value(like)])
    return Tensor(array) if type(like) is Tensor else array


def accumulating(x, dtype):
    """``x`` in the dtype a sum or product accumulates in: ``dtype`` if given, else int64
    for booleans (as NumPy), else its own."""
    if dtype is not None:
        return ew.convert(x, dtypes.code_of(dtype))
    return ew.convert(x, dtypes.INT64) if code_of_value(x) == dtypes.BOOL else x


# ------------------------------------------------------------------ sum, prod

@implements(np.sum)
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=NO_VALUE,  # noqa: A001
        where=True):
    """Sum over ``axis`` (all axes by default), like ``np.sum``."""
    a = as_array(a)
    if not is_tensor(a):
        return numpy_result(np.sum, a, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                            initial=initial, where=where)
    refuse_out_where("sum", out, where)
    x = accumulating(a, dtype)
    shape = shape_of(x)
    axes = normalize_axes("sum", axis, len(shape))
    result = keep_dims(st.reduce_sum(x, axes), shape, axes, keepdims)
    return result if initial is NO_VALUE else add(result, initial)


@implements(np.prod)
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=NO_VALUE, where=True):
    """Product over ``axis``; the derivative is the product of the other entries (exact
    with zeros in ``a``: no division)."""
    a = as_array(a)
    if not is_tensor(a):
        return numpy_result(np.prod, a, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                            initial=initial, where=where)
    refuse_out_where("prod", out, where)
    x = accumulating(a, dtype)
    shape = shape_of(x)
    axes = normalize_axes("prod", axis, len(shape))
    result = keep_dims(red.reduce_prod(x, axes), shape, axes, keepdims)
    return result if initial is NO_VALUE else multiply(result, initial)


# ------------------------------------------------------------------ extrema

def ordered(name: str, a):
    """Refuse complex operands of an order-based reduction."""
    if dtypes.is_complex(code_of_value(a)):
        raise DTypeError(f"{name}: complex values have no order (NumPy's lexicographic "
                         f"order has no derivative); got {describe(a)}, reduce its .real "
                         "or abs() instead")


def extremum(name, reduce, numpy_fn, a, axis, out, keepdims, initial, where):
    """``max``/``min``-like reductions with NumPy's arguments (ties share the derivative
    evenly, ``initial`` included)."""
    a = as_array(a)
    if not is_tensor(a):
        return numpy_result(numpy_fn, a, axis=axis, out=out, keepdims=keepdims,
                            initial=initial, where=where)
    refuse_out_where(name, out, where)
    ordered(name, a)
    shape = shape_of(a)
    axes = normalize_axes(name, axis, len(shape))
    empty = builtins.any(shape[i] == 0 for i in axes)
    if initial is NO_VALUE:
        if empty:
            raise ShapeError(f"{name}: zero-size reduction over {describe(a)} has no "
                             "identity; pass initial=")
        return keep_dims(reduce(a, axes), shape, axes, keepdims)
    start = filled(a, tuple(d for i, d in enumerate(shape) if i not in axes), initial)
    if empty:
        return keep_dims(start, shape, axes, keepdims)
    result = reduce(a, axes)
    pair = (1,) + shape_of(result)
    both = st.concatenate([st.reshape(result, pair), st.reshape(start, pair)], 0)
    return keep_dims(reduce(both, (0,)), shape, axes, keepdims)


@implements(np.max, np.amax)
def amax(a, axis=None, out=None, keepdims=False, initial=NO_VALUE, where=True):
    """Maximum over ``axis``; the derivative goes to the maxima, split evenly on ties."""
    return extremum("max", st.reduce_max, np.max, a, axis, out, keepdims, initial, where)


@implements(np.min, np.amin)
def amin(a, axis=None, out=None, keepdims=False, initial=NO_VALUE, where=True):
    """Minimum over ``axis``; the derivative goes to the minima, split evenly on ties."""
    return extremum("min", red.reduce_min, np.min, a, axis, out, keepdims, initial, where)


max = amax  # noqa: A001 - NumPy's names
min = amin  # noqa: A001


@implements(np.ptp)
def ptp(a, axis=None, out=None, keepdims=False):
    """``max - min`` over ``axis`` (ties of either share its derivative evenly)."""
    a = as_array(a)
    if not is_tensor(a):
        return np.ptp(a, axis=axis, out=out, keepdims=keepdims)
    return subtract(amax(a, axis, out, keepdims), amin(a, axis, out, keepdims))


# ------------------------------------------------------------------ booleans, indices

def _logical(name, reduce, numpy_fn, a, axis, out, keepdims, where):
    a = as_array(a)
    if not is_tensor(a):
        return numpy_result(numpy_fn, a, axis=axis, out=out, keepdims=keepdims, where=where)
    refuse_out_where(name, out, where)
    shape = shape_of(a)
    axes = normalize_axes(name, axis, len(shape))
    return keep_dims(reduce(a, axes), shape, axes, keepdims)


@implements(np.all)
def all(a, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    """Whether all entries over ``axis`` are non-zero (bool, not differentiated)."""
    return _logical("all", red.reduce_all, np.all, a, axis, out, keepdims, where)


@implements(np.any)
def any(a, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    """Whether any entry over ``axis`` is non-zero (bool, not differentiated)."""
    return _logical("any", red.reduce_any, np.any, a, axis, out, keepdims, where)


def _arg(name, reduce, numpy_fn, a, axis, out, keepdims):
    a = as_array(a)
    if not is_tensor(a):
        return numpy_fn(a, axis=axis, out=out, keepdims=keepdims)
    refuse_out_where(name, out)
    shape = shape_of(a)
    if axis is None:
        index = reduce(st.reshape(a, (math.prod(shape),)), 0)
        return st.reshape(index, (1,) * len(shape)) if keepdims else index
    axis = normalize_axis(name, axis, len(shape))
    return keep_dims(reduce(a, axis), shape, (axis,), keepdims)


@implements(np.argmax)
def argmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the first maximum (of the flattened ``a`` when ``axis`` is None); int64,
    not differentiated."""
    return _arg("argmax", red.argmax, np.argmax, a, axis, out, keepdims)


@implements(np.argmin)
def argmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the first minimum; int64, not differentiated."""
    return _arg("argmin", red.argmin, np.argmin, a, axis, out, keepdims)


@implements(np.count_nonzero)
def count_nonzero(a, axis=None, *, keepdims=False):
    """How many entries over ``axis`` are non-zero (int64, not differentiated)."""
    a = as_array(a)
    if not is_tensor(a):
        return np.count_nonzero(a, axis=axis, keepdims=keepdims)
    shape = shape_of(a)
    axes = normalize_axes("count_nonzero", axis, len(shape))
    nonzero = red.reduce_any(a, ())        # elementwise truth, as a bool tensor
    counts = st.reduce_sum(ew.convert(nonzero, dtypes.INT64), axes)
    return keep_dims(counts, shape, axes, keepdims)


__all__ = ["sum", "prod", "amax", "amin", "max", "min", "ptp", "all", "any", "argmax",
           "argmin", "count_nonzero"]

"""Arrays built from shapes and values: ``zeros``, ``ones``, ``empty``, ``full``, ``eye``,
``identity``, ``arange``, ``linspace`` and the ``*_like`` functions.

From Python numbers they return NumPy's own arrays (constants mix into any mode).  A
tensor argument makes the result a tensor of its kind, differentiable in that argument:
``full(shape, t)``, ``full_like(a, t)``, ``linspace(t0, t1, n)`` (in both endpoints),
``arange`` with eager tensors (in ``start`` and ``step``).  ``zeros_like(t)`` and its
relatives return a tensor of ``t``'s kind that does not depend on ``t``.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes
from ..errors import ArgumentError, ArgumentValueError, ConcretizationError, DTypeError, ShapeError
from ..ops import elementwise as ew
from ..ops import structural as st
from ..ops.indexing import concrete_value
from ..primitive import Tensor, code_of_value, constant, describe, is_eager, shape_of
from ._arrays import as_array, tensor_or_array
from ._dispatch import implements
from ._views import laid_out_as
from ._operands import (broadcast_shapes, common, int_tuple, is_tensor, operand, result_code,
                        tensor_among, traced_among)
from .shaping import moveaxis


def _shape_tuple(name: str, shape) -> tuple:
    shape = int_tuple(name, "shape", shape)
    if any(d < 0 for d in shape):
        raise ShapeError(f"{name}: negative dimension in shape {list(shape)}")
    return shape


# ------------------------------------------------------------------ constants

@implements("numpy.zeros")
def zeros(shape, dtype=None, order="C", **kwargs) -> np.ndarray:
    """An array of zeros (NumPy's: a constant in any mode)."""
    return np.zeros(shape, dtype=dtype, order=order)


@implements("numpy.ones")
def ones(shape, dtype=None, order="C", **kwargs) -> np.ndarray:
    """An array of ones (NumPy's: a constant in any mode)."""
    return np.ones(shape, dtype=dtype, order=order)


@implements("numpy.empty")
def empty(shape, dtype=None, order="C", **kwargs) -> np.ndarray:
    """An uninitialised array (NumPy's)."""
    return np.empty(shape, dtype=dtype, order=order)


@implements("numpy.eye")
def eye(N, M=None, k=0, dtype=float, order="C", **kwargs) -> np.ndarray:  # noqa: N803
    """Ones on the ``k``-th diagonal of an ``N x M`` array (NumPy's)."""
    return np.eye(N, M, k, dtype=dtype, order=order)


@implements("numpy.identity")
def identity(n, dtype=None, **kwargs) -> np.ndarray:
    """The ``n x n`` identity (NumPy's)."""
    return np.identity(n, dtype=dtype)


def _filled(shape: tuple, fill_value, code: int, like=None, order: str = "C"):
    """An array of ``shape`` filled with ``fill_value`` (a tensor is broadcast to it,
    differentiably) in dtype ``code``: a node if ``fill_value`` or ``like`` is traced, else
    an eager Tensor (of ``like``'s shape: laid out as NumPy's ``full_like`` with
    ``order``)."""
    traced = traced_among((like, fill_value))
    if is_tensor(fill_value):
        value = operand(fill_value, code, traced)
        if broadcast_shapes("full", shape_of(value), shape) != shape:
            raise ShapeError(f"full: cannot broadcast the fill value {describe(value)} to "
                             f"{list(shape)}")
        filled = st.broadcast_to(value, shape)
        return laid_out_as(ew.fresh_array(filled), like, order) if traced else filled
    if traced:                           # a new array: a unique node, writable
        return laid_out_as(ew.fresh_array(st.broadcast_to(
            constant(np.asarray(fill_value, dtypes.DTYPES[code]), code), shape)), like,
            order)
    if is_eager(like) and shape == shape_of(like):
        return Tensor(np.full_like(like.data, fill_value, dtypes.DTYPES[code], order))
    return Tensor(np.full(shape, fill_value, dtype=dtypes.DTYPES[code]))


def _code(dtype, default: int) -> int:
    return default if dtype is None else dtypes.code_of(dtype)


@implements("numpy.full")
def full(shape, fill_value, dtype=None, order="C", **kwargs):
    """An array of ``shape`` filled with ``fill_value``; a tensor fill value (broadcast
    to ``shape``) makes it a tensor differentiable in that value."""
    fill_value = as_array(fill_value)
    code = _code(dtype, code_of_value(fill_value))
    return _filled(_shape_tuple("full", shape), fill_value, code)


def _like(a, fill_value, dtype, shape, order="K"):
    """The ``*_like`` functions for a tensor ``a`` or a tensor ``fill_value`` (an eager
    result laid out as NumPy's, in the prototype's layout for order "K")."""
    like = tensor_or_array(a, "full_like")
    code = _code(dtype, code_of_value(like))
    shape = shape_of(like) if shape is None else _shape_tuple("full_like", shape)
    return _filled(shape, as_array(fill_value), code, like, order)


@implements("numpy.full_like")
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    """An array like ``a`` (its shape and dtype, unless given) filled with
    ``fill_value``; a tensor fill value is broadcast, differentiably."""
    return _like(a, fill_value, dtype, shape, order)


@implements("numpy.zeros_like")
def zeros_like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
    """Zeros like ``a``: for a tensor, a tensor of its kind (not depending on it)."""
    return _like(a, 0, dtype, shape, order)


@implements("numpy.ones_like")
def ones_like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
    """Ones like ``a``: for a tensor, a tensor of its kind (not depending on it)."""
    return _like(a, 1, dtype, shape, order)


@implements("numpy.empty_like")
def empty_like(prototype, /, dtype=None, order="K", subok=True, shape=None, **kwargs):
    """An array like ``prototype``; for a tensor, zeros (a tensor has no uninitialised
    memory to hand out)."""
    return _like(prototype, 0, dtype, shape, order)


# ------------------------------------------------------------------ ranges

def _constant(array: np.ndarray, code: int) -> np.ndarray:
    """A constant operand in dtype ``code`` (it joins any mode)."""
    return array.astype(dtypes.DTYPES[code])


@implements("numpy.linspace")
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
             **kwargs):
    """``num`` evenly spaced samples from ``start`` to ``stop`` (array endpoints give one
    sequence per entry, along ``axis``); differentiable in tensor endpoints:
    ``start + (stop - start) * i / div`` with the last sample exactly ``stop``."""
    start, stop = as_array(start), as_array(stop)
    if isinstance(num, bool) or not isinstance(num, numbers.Integral):
        raise ArgumentError(f"linspace: num must be an integer, got {num!r}")
    num = int(num)
    if num < 0:
        raise ArgumentValueError(f"linspace: number of samples, {num}, must be non-negative")
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise DTypeError(f"linspace: dtype {np.dtype(dtype)} with tensor endpoints is not "
                         "supported (not differentiable); convert the result explicitly")
    code = result_code("linspace", start, stop)
    code = dtypes.FLOAT64 if not dtypes.is_inexact(code) else code
    start, stop = common("linspace", start, stop, code=code)
    shape = broadcast_shapes("linspace", shape_of(start), shape_of(stop))
    start, stop = st.broadcast_to(start, shape), st.broadcast_to(stop, shape)
    delta = ew.sub(stop, start)
    div = num - 1 if endpoint else num
    step = ew.div(delta, _constant(np.full(shape, div), code)) if div > 0 else np.nan
    samples, dims = (num,) + shape, tuple(range(1, len(shape) + 1))
    ramp = np.arange(num).reshape((num,) + (1,) * len(shape)) * np.ones(shape)
    ramp = _constant(ramp, code)                  # 0, 1, ..., num - 1 along the first axis
    y = ew.mul(ramp, st.broadcast_in_dim(delta if div <= 0 else step, samples, dims))
    y = ew.add(y, st.broadcast_in_dim(start, samples, dims))
    if endpoint and num > 1:
        head = st.slice_axes(y, ((0, num - 1, 1),) + tuple((0, d, 1) for d in shape))
        y = st.concatenate([head, st.reshape(stop, (1,) + shape)], 0)
    if axis != 0:
        y = moveaxis(y, 0, axis)
    if dtype is not None:
        y = ew.convert(y, dtypes.code_of(dtype))
    return (y, step) if retstep else y


def _value(v):
    """An eager tensor's values; other arguments as they are."""
    value = concrete_value(v)
    return v if value is None else value


@implements("numpy.arange")
def arange(start_or_stop, /, stop=None, step=1, *, dtype=None, **kwargs):
    """Evenly spaced values in ``[start, stop)``.  Eager tensor arguments give a tensor
    differentiable in ``start`` and ``step`` (its length comes from their values); a
    traced argument is refused: the length would depend on values not yet known."""
    args = (start_or_stop, stop, step)
    if traced_among(args):
        raise ConcretizationError(
            "arange: the number of entries depends on the values of its arguments, which "
            "a traced tensor does not have; pass numbers, or write start + step * "
            "np.arange(n) for a differentiable range of known length")
    values = np.arange(*[_value(v) for v in args], dtype=dtype)
    code = dtypes.value_code(values.dtype)
    start = 0 if stop is None else start_or_stop
    if not dtypes.is_inexact(code) or not tensor_among((start, step)):
        return Tensor(values)                 # nothing to track (the stop has no derivative)
    n = len(values)
    ramp = np.arange(n, dtype=values.dtype)
    first = st.broadcast_to(operand(start, code, False), (n,))
    increment = st.broadcast_to(operand(step, code, False), (n,))
    return ew.add(ew.mul(increment, ramp), first)


__all__ = ["zeros", "ones", "empty", "full", "eye", "identity", "zeros_like", "ones_like",
           "empty_like", "full_like", "linspace", "arange"]

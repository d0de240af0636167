"""How the NumPy-style functions treat their operands: which are tensors, the dtype an
operation computes in (NumPy 2 promotion, Python scalars weak), broadcasting, axes."""
from __future__ import annotations

import numbers
import operator

import numpy as np

from .. import dtypes
from ..errors import ArgumentError, DTypeError, NotDifferentiableError, ShapeError
from ..ops import elementwise as ew
from ..primitive import Tensor, TracedTensor, constant

PY_SCALARS = (float, int, complex, bool)


def is_tensor(x) -> bool:
    t = type(x)
    return t is TracedTensor or t is Tensor


def is_traced(x) -> bool:
    return type(x) is TracedTensor


def _dtype_key(x):
    """A tensor's/array's dtype, or the Python type for a weak scalar."""
    t = type(x)
    if t is TracedTensor:
        return x.dtype
    if t is Tensor:
        return x.data.dtype
    if t in PY_SCALARS:
        return t
    return np.asarray(x).dtype


def operand(x, code: int, traced: bool):
    """``x`` in dtype ``code``, as a node (traced mode) or a Tensor/ndarray (eager mode)."""
    if is_tensor(x):
        if type(x) is Tensor and traced:
            if x.requires_grad:
                raise NotDifferentiableError(
                    "an eager tensor that requires grad cannot enter a traced computation "
                    "(its gradient would be lost); pass it as an input of the trace, or "
                    "x.detach() to use its value as a constant")
            return constant(x.data, code)
        return ew.convert(x, code)
    if traced:
        return constant(x, code)
    return np.asarray(x, dtype=dtypes.DTYPES[code])


_result_codes: dict = {}


def result_code(name: str, *operands) -> int:
    """The dtype code an operation on ``operands`` computes in (NumPy 2 promotion)."""
    keys = tuple(_dtype_key(x) for x in operands)
    code = _result_codes.get(keys)
    if code is None:
        key = keys[0]
        for other in keys[1:]:
            key = dtypes.promote(key, other)
        try:
            code = dtypes.value_code(np.dtype(key))
        except DTypeError as error:
            raise DTypeError(f"{name}: {error}") from None
        _result_codes[keys] = code
    return code


def broadcast_shapes(name: str, *shapes) -> tuple:
    """NumPy's broadcast of ``shapes``; a ShapeError naming ``name`` if impossible."""
    result = shapes[0]
    for shape in shapes[1:]:
        if shape == result:
            continue
        if len(shape) > len(result):
            result, shape = shape, result
        merged = list(result)
        offset = len(result) - len(shape)
        for i, d in enumerate(shape):
            r = merged[offset + i]
            if r == 1:
                merged[offset + i] = d
            elif d != 1 and d != r:
                raise ShapeError(f"{name}: shapes "
                                 f"{', '.join(str(list(s)) for s in shapes)} cannot be "
                                 "broadcast together")
        result = tuple(merged)
    return result


def int_value(name: str, what: str, value) -> int:
    """One integer argument (an offset, a count) as a Python int; a float or a string is
    an ArgumentError naming the function, as NumPy refuses them."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        try:
            return operator.index(value)      # an integer 0-d tensor or array
        except TypeError:
            raise ArgumentError(f"{name}: {what} must be an integer, got {value!r}") from None
    return int(value)


def int_tuple(name: str, what: str, value) -> tuple:
    """An int or a sequence of ints (a shape, axes) as a tuple of Python ints, as NumPy
    reads them: a float, a string or a non-integer entry is an ArgumentError naming the
    function (``int()`` would truncate 2.5 silently)."""
    if type(value) is int:
        return (value,)
    if type(value) is tuple and all(type(v) is int for v in value):
        return value                    # the common case: nothing to convert
    if isinstance(value, numbers.Integral):
        return (int(value),)
    try:
        items = tuple(value)
    except TypeError:
        items = None
    if items is None or isinstance(value, (str, bytes)):
        raise ArgumentError(f"{name}: {what} must be an integer or a sequence of integers, "
                            f"got {value!r}")
    try:
        return tuple(operator.index(v) for v in items)
    except TypeError:
        raise ArgumentError(f"{name}: {what} must be integers, got {value!r}") from None


def normalize_axes(name, axis, ndim) -> tuple:
    """``axis`` (None for all, an int or a sequence) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = int_tuple(name, "axis", axis)
    normalized = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ShapeError(f"{name}: axis {a} is out of range for a {ndim}-d tensor")
        normalized.append(int(a) % ndim if ndim else 0)
    if len(set(normalized)) != len(normalized):
        raise ShapeError(f"{name}: repeated axis in {axes}")
    return tuple(sorted(normalized))




def normalize_axis(name: str, axis, ndim: int) -> int:
    """One axis in ``[0, ndim)`` (negative axes count from the end)."""
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise ArgumentError(f"{name}: axis must be an integer, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{name}: axis {axis} is out of range for a {ndim}-d tensor")
    return int(axis) % ndim

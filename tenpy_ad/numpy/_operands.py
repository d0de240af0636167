"""How the NumPy-style functions treat their operands: which are tensors (the one test
that decides between tenpy_ad's version of a NumPy function and NumPy's own), the dtype an
operation computes in (NumPy 2 promotion, Python scalars weak), modes, broadcasting, axes."""
from __future__ import annotations

import numbers
import operator

import numpy as np

from .. import dtypes
from ..errors import ArgumentError, DTypeError, NotDifferentiableError, ShapeError
from ..ops import elementwise as ew
# (holds_tensor, is_traced, tensor_among and value_like: the families import them here)
from ..primitive import (_lifts, any_traced, constant, dtype_key, holds_tensor, is_eager,
                         is_tensor, is_traced, lifted, tensor_among, value_like)

PY_SCALARS = (float, int, complex, bool)


# ------------------------------------------------------------------ which operands are tensors
# Decided in the core (operands.pxi), in C: every registered call asks.
#
# is_tensor(x): a traced or an eager tensor; is_traced(x): a traced one.
# holds_tensor(x): a tensor, or a (nested) list or tuple with one inside.
# tensor_among(args, kwargs): whether a tensor is among a call's arguments, looking where
#   NumPy's dispatch looks (every argument, inside nested lists and tuples).  Without one, a
#   function of tenpy_ad.numpy is NumPy's own.  ``like=`` is left to NumPy, which hands the
#   call back without it (``tnp.eye(3, like=t)`` is ``np.eye(3)``, as ``np.eye(3, like=t)``).
# traced_among(xs): whether any of ``xs`` is traced: then the operation builds graph nodes.
# value_like(x, array): ``array`` as a value of ``x``'s kind (constant node, eager Tensor,
#   or the array itself).
# dtype_key(x): what NumPy's type resolution sees of an operand: its dtype, or the Python
#   type of a weak scalar (a Python bool is NumPy's bool).
traced_among = any_traced


def operand(x, code: int, traced: bool):
    """``x`` in dtype ``code``, as a node (traced mode) or a Tensor/ndarray (eager mode)."""
    if traced and is_eager(x):
        if x.requires_grad:
            node = lifted(x, code) if _lifts else None
            if node is not None:        # a matvec traced with its eager tensors lifted
                return node
            raise NotDifferentiableError(
                "an eager tensor that requires grad cannot enter a traced computation "
                "(its gradient would be lost); pass it as an input of the trace, or "
                "x.detach() to use its value as a constant")
        return constant(x.data, code)
    if is_tensor(x):
        return ew.convert(x, code)
    if traced:
        return constant(x, code)
    return np.asarray(x, dtype=dtypes.DTYPES[code])


def in_one_mode(xs, codes) -> list:
    """Each of ``xs`` in its dtype of ``codes``, all in one mode: nodes if any is traced,
    else eager Tensors and arrays."""
    traced = traced_among(xs)
    return [operand(x, code, traced) for x, code in zip(xs, codes)]


def common(name: str, *xs, code: int | None = None) -> list:
    """``xs`` in one dtype (``code``, else NumPy's promotion of them) and one mode."""
    if code is None:
        code = result_code(name, *xs)
    traced = traced_among(xs)
    return [operand(x, code, traced) for x in xs]


_result_codes: dict = {}


def result_code(name: str, *operands) -> int:
    """The dtype code an operation on ``operands`` computes in (NumPy 2 promotion)."""
    keys = tuple([dtype_key(x) for x in operands])
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


def broadcasts_to(shape: tuple, target: tuple) -> bool:
    """Whether an array of ``shape`` broadcasts to ``target`` (as a value written into an
    array of that shape)."""
    try:
        return np.broadcast_shapes(tuple(shape), tuple(target)) == tuple(target)
    except ValueError:
        return False


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

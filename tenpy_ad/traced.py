"""Traced mode: placeholders that build a graph instead of computing.

:class:`TracedTensor` is the interned graph node defined in the compiled core; operations on
it (``+``, ``@``, ``tp.exp``, ...) intern new nodes.  Nothing is computed until a graph is
compiled into a :class:`~tenpy_ad.compiler.Program` or evaluated.
"""
from __future__ import annotations

import gc
import math
import numbers
import operator

from . import dtypes
from ._compiled import _core
from .errors import ArgumentError, InternalError, ShapeError
from .param_schema import Maybe, Text
from .primitive import TracedTensor, primitive


def _input_rule(params, *xs):  # pragma: no cover - inputs are never re-bound
    raise ShapeError("input nodes are created by tp.input")


def _input_impl(params):  # pragma: no cover - a Program binds inputs directly
    raise InternalError("input: an input has no value of its own; pass it to the Program")


input_p = primitive("input", _input_impl, _input_rule, format_params=repr,
                    params=Maybe(Text("a name", max_length=1 << 12, example="x")))


def input(shape=(), dtype="float64", name: str | None = None) -> TracedTensor:  # noqa: A001
    """A placeholder of the given shape and dtype (default float64).

    Every call creates a new, distinct placeholder, even for equal shapes and names.
    """
    shape = _checked_shape(shape)
    if name is not None and not isinstance(name, str):
        raise ArgumentError(f"tp.input: name must be a string, got {type(name).__name__}")
    code = dtypes.code_of(dtype)
    _check_size(shape, code)
    return _core.unique_node(input_p, name, code, shape)


def _checked_shape(shape) -> tuple:
    """A shape as NumPy accepts it: an int or a sequence of ints, each in [0, 2**63)."""
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise ShapeError(f"tp.input: shape must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise ShapeError(f"tp.input: negative dimension in shape {list(shape)}")
    if len(shape) > _MAX_RANK:
        raise ShapeError(f"tp.input: a shape of {len(shape)} dimensions, more than NumPy's "
                         f"maximum of {_MAX_RANK}")
    return shape


def _check_size(shape: tuple, code: int) -> None:
    """The array a program would be fed must be one NumPy can make: as NumPy counts, the
    product of the nonzero dimensions times the item size fits in 2**63 - 1 bytes."""
    itemsize = dtypes.DTYPES[code].itemsize
    if math.prod(max(d, 1) for d in shape) * itemsize > _MAX_BYTES:
        raise ShapeError(f"tp.input: shape {list(shape)} is too big for an array of "
                         f"{dtypes.DTYPES[code].name} (NumPy's limit is 2**63 - 1 bytes)")


_MAX_RANK = 64                    # NumPy 2's limit on dimensions
_MAX_BYTES = 2**63 - 1            # NumPy's limit on an array's size in bytes (intp)


__all__ = ["TracedTensor", "input", "input_p"]


def _after_a_full_collection(phase: str, info: dict) -> None:
    """Python's collector cannot see the cycles in-place writes make in a graph built by
    hand (``a[i] = a[i - 1]`` outside any traced function); after each of its full
    collections the core releases the written nodes nothing else holds."""
    if phase == "stop" and info.get("generation") == 2:
        _core.release_unreachable_writes()


gc.callbacks.append(_after_a_full_collection)


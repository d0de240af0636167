"""Traced mode: placeholders that build a graph instead of computing.

:class:`TracedTensor` is the interned graph node defined in the compiled core; operations on
it (``+``, ``@``, ``tp.exp``, ...) intern new nodes.  Nothing is computed until a graph is
compiled into a :class:`~tenpy_ad.program.Program` or evaluated.
"""
from __future__ import annotations

import numbers
import operator

from . import dtypes
from ._compiled import _core
from .errors import ArgumentError, ShapeError
from .param_schema import Maybe, Text
from .primitive import TracedTensor, primitive


def _input_rule(params, *xs):  # pragma: no cover - inputs are never re-bound
    raise ShapeError("input nodes are created by tp.input")


def _input_impl(params):  # pragma: no cover - a Program binds inputs directly
    raise RuntimeError("an input has no value of its own; pass it to the Program")


input_p = primitive("input", _input_impl, _input_rule, format_params=repr,
                    params=Maybe(Text("a name", max_length=1 << 12, example="x")))


def input(shape=(), dtype="float64", name: str | None = None) -> TracedTensor:  # noqa: A001
    """A placeholder of the given shape and dtype (default float64).

    Every call creates a new, distinct placeholder, even for equal shapes and names.
    """
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise ShapeError(f"tp.input: shape must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise ShapeError(f"tp.input: negative dimension in shape {list(shape)}")
    if name is not None and not isinstance(name, str):
        raise ArgumentError(f"tp.input: name must be a string, got {type(name).__name__}")
    return _core.unique_node(input_p, name, dtypes.code_of(dtype), shape)


__all__ = ["TracedTensor", "input", "input_p"]

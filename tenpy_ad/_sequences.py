"""Arguments that are "a tensor or a sequence of them" (PyTorch's ``autograd.grad``
convention, used by ``tp.grad_of``, ``tp.ad.vjp/jvp/grad`` and ``tp.compile``), and nested
sequences turned into arrays.

A tensor is never iterated as if it were the sequence: ``list(y)`` of a 1-d tensor gives its
elements, which are tensors too, so a bare output or input would silently turn into its
slices (and a wrong derivative).
"""
from __future__ import annotations


import numpy as np

from ._compiled import _core
from .errors import ArgumentError, GraphError, ShapeError

is_tensor = _core.is_tensor               # a traced or an eager tensor
_is_value = _core.is_value                # an eager Tensor, an ndarray or a scalar


def tensor_list(values, api: str, what: str) -> list:
    """``values`` (one tensor, or a list or tuple of them) as a list."""
    if is_tensor(values):
        return [values]
    if isinstance(values, (list, tuple)):
        return list(values)
    raise ArgumentError(f"{api}: {what} must be a tensor or a list/tuple of tensors, got "
                        f"{type(values).__name__}")


def value_list(values, count: int, api: str, what: str, per: str) -> list:
    """Values paired with ``count`` outputs or inputs (``per``), such as cotangents:
    ``None`` (none given), one value (a tensor, an ndarray or a number), or a list/tuple
    of ``count`` values."""
    if values is None:
        return [None] * count
    if is_tensor(values) or _is_value(values):
        values = [values]
    elif isinstance(values, (list, tuple)):
        values = list(values)
    else:
        raise ArgumentError(f"{api}: {what} must be a tensor, an array, a number or a "
                            f"list/tuple of them, got {type(values).__name__}")
    if len(values) != count:
        raise GraphError(f"{api}: {len(values)} {what} for {count} {per}")
    return values


def array_of(data, api: str, dtype=None, copy: bool = True) -> np.ndarray:
    """``np.array(data)`` (``np.asarray`` without ``copy``), with a ragged nested sequence
    (``[[1, 2], [3]]``) reported as a ShapeError naming ``api``."""
    return numpy_array(api, np.array if copy else np.asarray, data, dtype=dtype)


def numpy_array(api: str, make, *args, **kwargs) -> np.ndarray:
    """``make(*args, **kwargs)`` (``np.array``, ``np.asarray``, any NumPy function of
    array-likes), with a ragged nested sequence reported as a ShapeError (a ValueError, as
    NumPy's) naming ``api``."""
    try:
        return make(*args, **kwargs)
    except ValueError as error:
        if "inhomogeneous" not in str(error):
            raise
        raise ShapeError(f"{api}: the nested sequence is ragged (its lists differ in "
                         f"length), so it is not an array; NumPy says: {error}") from None


__all__ = ["is_tensor", "tensor_list", "value_list", "array_of", "numpy_array"]

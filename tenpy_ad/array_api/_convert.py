"""Making results tensors: the namespace's functions return eager Tensors for values that
tenpy_ad.numpy hands back as ndarrays (it follows NumPy there: no tensor in, NumPy out)."""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from ..errors import ArgumentValueError, ConcretizationError
from ..primitive import Tensor, TracedTensor, as_array_result


class Device:
    """The one device tenpy_ad computes on: the host CPU."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Device('cpu')"

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) or other == "cpu"

    def __hash__(self) -> int:
        return hash("cpu")


CPU_DEVICE = Device()


def check_device(name: str, device) -> None:
    """Refuse a device other than the CPU (``None`` means the default, the CPU)."""
    if device is not None and not (isinstance(device, Device) or device == "cpu"):
        raise ArgumentValueError(f"{name}: unsupported device {device!r}; tenpy_ad computes "
                                 "on the CPU only (Device('cpu'))")


def as_tensor(value):
    """``value`` as a tensor: tensors as they are, arrays and NumPy scalars wrapped (a
    Python scalar becomes a 0-d tensor of NumPy's default dtype for it)."""
    if isinstance(value, (Tensor, TracedTensor)):
        return value
    return Tensor(np.asarray(value))


def tensors(result):
    """``result`` with every ndarray or NumPy scalar in it (also inside a tuple or a named
    tuple) made an eager Tensor; tensors and other values unchanged (0-d ones made 0-d
    arrays: the standard has no scalars, and library code writes into its 0-d results)."""
    if isinstance(result, (Tensor, TracedTensor)):
        return as_array_result(result)
    if isinstance(result, (np.ndarray, np.generic)):
        return Tensor(np.asarray(result))
    if isinstance(result, tuple):
        items = [tensors(item) for item in result]
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    if isinstance(result, list):
        return [tensors(item) for item in result]
    return result


def fresh(result, operands):
    """``result``, or a new handle of its value where it is one of ``operands``.

    tenpy_ad.numpy hands an operand back when an operation changes nothing (one array
    concatenated, a cast to its own dtype, a roll by 0); NumPy returns a new array there,
    and library code writes into it (``out = xp.concat(...); out[:n] = 0``).  A write into
    the operand itself would change the caller's tensor, or raise for a leaf."""
    if any(result is operand for operand in operands):
        from ..numpy.inplace import copy_tensor
        return copy_tensor(result)
    return result


def new_array(fn: Callable) -> Callable:
    """``fn`` (a function the standard defines to return a new array) with an operand
    handed back replaced by a new handle (:func:`fresh`)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        operands = [*args, *(kwargs.values())]
        operands += [a for arg in args if isinstance(arg, (list, tuple)) for a in arg]
        return fresh(fn(*args, **kwargs), operands)
    return wrapper


def returning_tensors(fn: Callable, name: str | None = None) -> Callable:
    """``fn`` with its results made tensors (:func:`tensors`), under the standard's name;
    a result that is an operand is a new handle (:func:`fresh`: elementwise results are
    new arrays)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fresh(tensors(fn(*args, **kwargs)), args)
    if name is not None:
        wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__module__ = "tenpy_ad.array_api"
    return wrapper


def concrete_data(name: str, x) -> np.ndarray:
    """The value of ``x`` for a function that needs concrete values (``unique_*``, the
    shifts): an ndarray; a Python scalar is kept; a traced ``x`` raises ConcretizationError naming ``name``."""
    if isinstance(x, TracedTensor):
        raise ConcretizationError(
            f"{name}: needs the concrete values of its operand (its result depends on them); "
            "a traced placeholder has none: call it on an eager tensor or an array")
    if isinstance(x, Tensor):
        return x.data
    if isinstance(x, (int, float, complex)):
        return x                # a weak Python scalar: NumPy adopts the other's dtype
    return np.asarray(x)

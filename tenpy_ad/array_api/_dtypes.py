"""The standard's dtype objects (NumPy's dtypes: ``x.dtype == float32`` and hashing agree
with NumPy's) and its data type functions."""
from __future__ import annotations

import numpy as np

from ..errors import ArgumentError, ArgumentValueError, DTypeError
from ..primitive import Tensor, TracedTensor

bool = np.dtype("bool")          # noqa: A001 - the standard's name
int8, int16, int32, int64 = (np.dtype(f"int{b}") for b in (8, 16, 32, 64))
uint8, uint16, uint32, uint64 = (np.dtype(f"uint{b}") for b in (8, 16, 32, 64))
float32, float64 = np.dtype("float32"), np.dtype("float64")
complex64, complex128 = np.dtype("complex64"), np.dtype("complex128")

#: the supported dtypes by name, in the order ``__array_namespace_info__().dtypes()`` lists
ALL = {d.name: d for d in (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                           float32, float64, complex64, complex128)}
#: the standard's dtype kinds (``isdtype`` and ``dtypes(kind=...)``)
KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
         "real floating": "f", "complex floating": "c", "numeric": "iufc"}


def dtype_of(x) -> np.dtype:
    """The dtype of a tensor, an array or a dtype given as an object or a name."""
    if isinstance(x, (Tensor, TracedTensor, np.ndarray, np.generic)):
        return x.dtype
    dtype = np.dtype(x)
    if dtype.name not in ALL:
        raise DTypeError(f"dtype {dtype.name} is not one of the standard's: {', '.join(ALL)}")
    return dtype


def isdtype(dtype, kind) -> builtins_bool:
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name ("bool", "signed integer",
    "unsigned integer", "integral", "real floating", "complex floating", "numeric") or a
    tuple of these."""
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in KINDS:
            raise ArgumentValueError(f"isdtype: unknown kind {kind!r}; one of "
                                     f"{', '.join(KINDS)}")
        return np.dtype(dtype).kind in KINDS[kind]
    return np.dtype(dtype) == np.dtype(kind)


builtins_bool = type(True)


def result_type(*arrays_and_dtypes) -> np.dtype:
    """The dtype the standard's promotion gives these tensors, arrays, dtypes and Python
    scalars (scalars are weak: they adopt the other operands' kind and precision)."""
    operands = [x.dtype if isinstance(x, (Tensor, TracedTensor)) else x
                for x in arrays_and_dtypes]
    if not any(not isinstance(x, (int, float, complex)) for x in operands):
        raise ArgumentError("result_type: needs at least one array or dtype")
    return np.result_type(*operands)


def can_cast(from_, to, /) -> builtins_bool:
    """Whether the standard's casting rules cast ``from_`` (a dtype or a tensor) to ``to``
    without loss (NumPy's "safe" casting)."""
    return builtins_bool(np.can_cast(dtype_of(from_), np.dtype(to)))


def finfo(type, /):                                       # noqa: A002 - the standard's name
    """Machine limits of a floating dtype (or of a tensor's dtype): bits, eps, max, min,
    smallest_normal, dtype."""
    info = np.finfo(dtype_of(type))
    return _Info(bits=info.bits, eps=float(info.eps), max=float(info.max),
                 min=float(info.min), smallest_normal=float(info.smallest_normal),
                 dtype=np.dtype(info.dtype))


def iinfo(type, /):                                       # noqa: A002
    """Machine limits of an integer dtype (or of a tensor's dtype): bits, max, min, dtype."""
    info = np.iinfo(dtype_of(type))
    return _Info(bits=info.bits, max=int(info.max), min=int(info.min), dtype=np.dtype(info.dtype))


class _Info:
    """The fields of ``finfo``/``iinfo`` as attributes."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"info({body})"

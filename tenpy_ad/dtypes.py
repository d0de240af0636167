"""Supported dtypes, their integer codes in the metadata table, and NumPy's promotion.

tenpy_ad differentiates in float32, float64 (the default), complex64 and complex128.  It
also carries bool and the eight integer dtypes (int8 ... int64, uint8 ... uint64, the Array
API standard's), which are never differentiated: comparison results, masks,
``argsort``/``argmax`` indices, integer index arrays, counts.  Promotion follows NumPy 2
(NEP 50): Python scalars are "weak" and adopt the tensor's precision, so
``float32_tensor * 0.5`` stays float32 and ``float32_tensor * 1j`` becomes complex64.
Codes below ``BOOL`` are the inexact (differentiable) ones.
"""
from __future__ import annotations

import numpy as np

from .errors import DTypeError

FLOAT32, FLOAT64, COMPLEX64, COMPLEX128, BOOL, INT64 = 0, 1, 2, 3, 4, 5
INT8, INT16, INT32, UINT8, UINT16, UINT32, UINT64 = 6, 7, 8, 9, 10, 11, 12
DTYPES = tuple(np.dtype(name) for name in (
    "float32", "float64", "complex64", "complex128", "bool", "int64",
    "int8", "int16", "int32", "uint8", "uint16", "uint32", "uint64"))
DEFAULT = FLOAT64
_CODE_OF = {dtype: code for code, dtype in enumerate(DTYPES)}
_REAL_OF = (FLOAT32, FLOAT64, FLOAT32, FLOAT64) + tuple(range(BOOL, len(DTYPES)))
_COMPLEX_OF = (COMPLEX64, COMPLEX128, COMPLEX64, COMPLEX128) + (COMPLEX128,) * (
    len(DTYPES) - BOOL)
_promotion_cache: dict = {}
#: per code, the code NumPy's sums, products and their running forms accumulate it in
#: (``np.add.reduce``'s default: bool and narrow integers widen to int64 / uint64)
_ACCUMULATOR_OF = tuple(_CODE_OF[np.add.reduce(np.zeros(1, dtype)).dtype] for dtype in DTYPES)


def code_of(dtype) -> int:
    """The code of a supported dtype given as a string, NumPy dtype or scalar type."""
    try:
        return _CODE_OF[dtype]
    except (KeyError, TypeError):
        pass
    try:
        np_dtype = np.dtype(dtype)
    except TypeError as error:
        raise DTypeError(f"not a dtype: {dtype!r}") from error
    code = _CODE_OF.get(np_dtype)
    if code is None:
        raise DTypeError(
            f"dtype {np_dtype.name} is not supported; use float32, float64, complex64, "
            "complex128 (differentiable), bool or an integer dtype (int8 ... uint64)")
    return code


def value_code(np_dtype: np.dtype) -> int:
    """The code an array of ``np_dtype`` is carried in (float16 and longdouble as the
    nearest supported float or complex)."""
    code = _CODE_OF.get(np_dtype)
    if code is not None:
        return code
    if np_dtype.kind in "iu":         # another spelling of a supported width
        return _CODE_OF[np.dtype(f"{np_dtype.kind}{np_dtype.itemsize}")]
    if np_dtype.kind == "f":          # float16 / longdouble
        return FLOAT64 if np_dtype.itemsize > 4 else FLOAT32
    if np_dtype.kind == "c":
        return COMPLEX128
    raise DTypeError(f"arrays of dtype {np_dtype} cannot enter a tensor computation")


def inexact_code(np_dtype: np.dtype) -> int:
    """The floating code a value of ``np_dtype`` is differentiated in: bools and integers
    become float64 (NumPy's ``np.exp(int_array)`` is float64 too)."""
    code = value_code(np_dtype)
    return FLOAT64 if code >= BOOL else code


def is_complex(code: int) -> bool:
    return code == COMPLEX64 or code == COMPLEX128


def accumulator_code(code: int) -> int:
    """The code a sum or product of values of ``code`` has (NumPy's default)."""
    return _ACCUMULATOR_OF[code]


def is_integer(code: int) -> bool:
    """Whether values of this code are integers (signed or unsigned; not bool)."""
    return code == INT64 or code > INT64


def is_inexact(code: int) -> bool:
    """Whether values of this code can be differentiated (floating or complex)."""
    return code < BOOL


def real_code(code: int) -> int:
    return _REAL_OF[code]


def complex_code(code: int) -> int:
    return _COMPLEX_OF[code]


_WEAK_SAMPLE = {float: 0.0, complex: 0j, int: 0, bool: False}


def promote(a, b) -> np.dtype:
    """NumPy's result dtype for two operands, each a dtype or a Python scalar *type*.

    Passing ``float``/``complex``/``int`` (the type) stands for a weak Python scalar.
    """
    key = (a, b)
    result = _promotion_cache.get(key)
    if result is None:
        result = np.result_type(_WEAK_SAMPLE.get(a, a), _WEAK_SAMPLE.get(b, b))
        _promotion_cache[key] = result
    return result

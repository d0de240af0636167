"""``tenpy_ad.array_api``: the Python Array API standard (2024.12) for tenpy_ad tensors.

    import tenpy_ad.array_api as xp           # or: xp = x.__array_namespace__()
    x = xp.asarray([1.0, 2.0])                # an eager Tensor
    y = xp.sum(xp.sin(x) ** 2)

Creation functions return eager Tensors; functions of tensors return tensors of the same
kind (eager in, eager out; traced in, traced out) and are differentiable where tenpy_ad
differentiates (floating and complex dtypes).  Most names are tenpy_ad.numpy's functions
under the standard's names; adapters cover where the standard's signatures or semantics
differ from NumPy's.  Functions whose result shape depends on the values (``unique_*``,
``nonzero``) or that are computed from the values only (the bit shifts, ``nextafter``)
need concrete operands: on a traced tensor they raise ConcretizationError.
"""
from __future__ import annotations

import numpy as _np

from .. import numpy as _tnp
# SciPy's array-API code (SCIPY_ARRAY_API=1) looks for the special functions at xp.special
from . import fft, linalg, special
from ._convert import CPU_DEVICE, Device, returning_tensors as _returning_tensors
from ._creation import (arange, asarray, empty, empty_like, eye, from_dlpack, full,
                        full_like, linspace, meshgrid, ones, ones_like, tril, triu, zeros,
                        zeros_like)
from ._dtypes import (bool, can_cast, complex64, complex128, finfo, float32, float64,
                      iinfo, int8, int16, int32, int64, isdtype, result_type, uint8, uint16,
                      uint32, uint64)
from ._functions import (all, any, argmax, argmin, argsort, astype, bitwise_left_shift,
                         bitwise_right_shift, broadcast_arrays, broadcast_to, clip, concat,
                         count_nonzero, cumulative_prod, cumulative_sum, diff, expand_dims,
                         flip, matmul, matrix_transpose, max, mean, min, moveaxis,
                         nextafter, nonzero, permute_dims, prod, repeat, reshape, roll,
                         searchsorted, sort, squeeze, stack, std, sum, take,
                         take_along_axis, tensordot, tile, unique_all, unique_counts,
                         unique_inverse, unique_values, unstack, var, vecdot, where)
from ._info import __array_namespace_info__

__array_api_version__ = "2024.12"

e, pi, inf, nan, newaxis = _np.e, _np.pi, _np.inf, _np.nan, None

#: the standard's elementwise names -> tenpy_ad.numpy's
_ELEMENTWISE = {
    "abs": "abs", "acos": "arccos", "acosh": "arccosh", "add": "add", "asin": "arcsin",
    "asinh": "arcsinh", "atan": "arctan", "atan2": "arctan2", "atanh": "arctanh",
    "bitwise_and": "bitwise_and", "bitwise_invert": "invert", "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor", "ceil": "ceil", "conj": "conj", "copysign": "copysign",
    "cos": "cos", "cosh": "cosh", "divide": "divide", "equal": "equal", "exp": "exp",
    "expm1": "expm1", "floor": "floor", "floor_divide": "floor_divide",
    "greater": "greater", "greater_equal": "greater_equal", "hypot": "hypot",
    "imag": "imag", "isfinite": "isfinite", "isinf": "isinf", "isnan": "isnan",
    "less": "less", "less_equal": "less_equal", "log": "log", "log1p": "log1p",
    "log2": "log2", "log10": "log10", "logaddexp": "logaddexp",
    "logical_and": "logical_and", "logical_not": "logical_not", "logical_or": "logical_or",
    "logical_xor": "logical_xor", "maximum": "maximum", "minimum": "minimum",
    "multiply": "multiply", "negative": "negative", "not_equal": "not_equal",
    "positive": "positive", "pow": "power", "real": "real", "reciprocal": "reciprocal",
    "remainder": "remainder", "round": "round", "sign": "sign", "signbit": "signbit",
    "sin": "sin", "sinh": "sinh", "square": "square", "sqrt": "sqrt",
    "subtract": "subtract", "tan": "tan", "tanh": "tanh", "trunc": "trunc",
}
globals().update({name: _returning_tensors(getattr(_tnp, numpy_name), name)
                  for name, numpy_name in _ELEMENTWISE.items()})

_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float32", "float64", "complex64", "complex128"]
_CONSTANTS = ["e", "pi", "inf", "nan", "newaxis"]
_OTHERS = [
    "arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like",
    "linspace", "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like",
    "astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type",
    "bitwise_left_shift", "bitwise_right_shift", "clip", "nextafter",
    "take", "take_along_axis", "matmul", "matrix_transpose", "tensordot", "vecdot",
    "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis",
    "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack",
    "argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where",
    "unique_all", "unique_counts", "unique_inverse", "unique_values", "argsort", "sort",
    "cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var",
    "all", "any", "diff", "__array_namespace_info__", "fft", "linalg", "special", "Device",
    "CPU_DEVICE",
]
__all__ = sorted(_ELEMENTWISE) + _DTYPES + _CONSTANTS + _OTHERS

"""NumPy's calling convention for ufuncs, shared by the elementwise functions.

``ufunc_function("numpy.exp", ew.exp, doc)`` makes and registers
``exp(x, /, out=None, *, where=True, casting="same_kind", order="K", dtype=None,
subok=True)``, which

* returns NumPy's own result when no operand is a tensor (nor a list holding one), the
  fallback every function of :mod:`tenpy_ad.numpy` has, here on the operators' hot path;
* stacks lists of tensors (:func:`~tenpy_ad.numpy._arrays.as_array`);
* otherwise converts the operands to the dtypes of the loop NumPy runs for them
  (``ufunc.resolve_dtypes``: NEP 50 promotion with weak Python scalars, ``dtype=`` and
  ``casting=``), broadcasts them and applies the strict operation, which returns a node
  (any operand traced) or an eager Tensor;
* goes straight to the strict operation for tensors of one kind, shape and a dtype the
  loop takes as it is (the operators' hot path).

tenpy_ad carries neither float16 nor narrow integers: where NumPy's loop is float16 (a
bool into an inexact function) it computes in float64, as for integers; narrow integer
loops run in int64.
"""
from __future__ import annotations

import inspect
import math
from typing import Callable

import numpy as np

from .. import dtypes
from .._sequences import numpy_array
from ..errors import ArgumentError, DTypeError, InternalError, NotDifferentiableError
from ..ops import elementwise as ew
from ..ops import structural as st
from ..primitive import as_scalar_result, code_of_value, native_pair, native_tensor, shape_of
from ._arrays import as_array
from ._dispatch import implements, resolve
from ._dispatch import written as write_into
from ._operands import (broadcast_shapes, dtype_key, in_one_mode, operand, tensor_among,
                        traced_among)

_FLOAT16 = np.dtype(np.float16)
_OPTIONS = {"where": True, "casting": "same_kind", "order": "K", "dtype": None,
            "subok": True, "signature": None}
_loops: dict = {}


def _carried(name: str, dtype: np.dtype) -> int:
    if dtype == _FLOAT16:
        return dtypes.FLOAT64
    try:
        return dtypes.value_code(dtype)
    except DTypeError as error:
        raise DTypeError(f"{name}: {error}") from None


def _describe(key) -> str:
    return f"Python {key.__name__}" if isinstance(key, type) else str(key)


def _resolve(ufunc, keys: tuple, dtype, casting) -> tuple:
    given = {} if dtype is None else {"signature": (None,) * ufunc.nin + (np.dtype(dtype),)}
    try:
        loop = ufunc.resolve_dtypes(keys + (None,) * ufunc.nout, casting=casting, **given)
    except TypeError as error:
        raise DTypeError(f"{ufunc.__name__}: not defined for "
                         f"{', '.join(_describe(k) for k in keys)} (NumPy: {error})") from None
    return tuple(_carried(ufunc.__name__, d) for d in loop)


def loop_codes(ufunc, operands, dtype=None, casting: str = "same_kind") -> tuple:
    """The dtype codes of the loop NumPy runs ``ufunc`` with on ``operands``: one per
    operand, then the output's."""
    keys = tuple([dtype_key(x) for x in operands])
    cache_key = (ufunc, dtype, casting, keys)         # as apply2 spells it
    codes = _loops.get(cache_key)
    if codes is None:
        codes = _loops[cache_key] = _resolve(ufunc, keys, dtype, casting)
    return codes


def _native_codes(ufunc) -> tuple:
    """For each dtype code, whether the loop takes operands of it as they are."""
    native = []
    for code in range(len(dtypes.DTYPES)):
        try:
            codes = loop_codes(ufunc, [np.empty(0, dtypes.DTYPES[code])] * ufunc.nin)
        except DTypeError:
            codes = ()
        native.append(codes[:ufunc.nin] == (code,) * ufunc.nin)
    return tuple(native)


def prepared(ufunc, operands, dtype=None, casting: str = "same_kind") -> list:
    """``operands`` as a strict primitive takes them: in the dtypes of NumPy's loop,
    broadcast to one shape, constants made nodes when any operand is traced."""
    codes = loop_codes(ufunc, operands, dtype, casting)
    xs = in_one_mode(operands, codes)
    shape = broadcast_shapes(ufunc.__name__, *[shape_of(x) for x in xs])
    return [_broadcast(x, shape) for x in xs]


def _broadcast(x, shape: tuple):
    """``x`` broadcast to ``shape``; a constant of an eager operation as a fresh array
    when small (cheaper to make than NumPy's read-only view, which large ones get)."""
    if type(x) is not np.ndarray:
        return st.broadcast_to(x, shape)
    if x.shape == shape:
        return x
    if math.prod(shape) >= 4096:
        return np.broadcast_to(x, shape)
    result = np.empty(shape, x.dtype)
    np.copyto(result, x)
    return result


def options(name: str, out, kwargs: dict) -> tuple:
    """``(dtype, casting)`` from a ufunc's keyword arguments; what a tensor result cannot
    honour is refused (``out=`` reaches here only from functions that do not write it)."""
    if out is not None:
        raise NotDifferentiableError(
            f"np.{name}(..., out=...) is not supported on tensors; use the returned tensor")
    for key in kwargs:
        if key not in _OPTIONS:
            raise ArgumentError(f"{name}() got an unexpected keyword argument {key!r}")
    where = kwargs.get("where", True)
    if not (isinstance(where, (bool, np.bool_)) and where):
        raise ArgumentError(f"{name}: where= is not supported on tensors (the entries it "
                            f"skips would be undefined); use tnp.where(mask, "
                            f"tnp.{name}(...), other)")
    if kwargs.get("signature") is not None:
        raise ArgumentError(f"{name}: signature= is not supported on tensors; use dtype=")
    return kwargs.get("dtype"), kwargs.get("casting", "same_kind")


def written(ufunc, out, result):
    """``tnp.add(a, b, out=t)``: ``result`` written into ``out`` (numpy/inplace.py)."""
    return write_into(out, result, f"np.{ufunc.__name__}(..., out=...)")


def _numpy(ufunc, operands, out, kwargs: dict):
    """NumPy's own ufunc on operands without a tensor (a ragged list is a ShapeError)."""
    if out is not None:
        kwargs = dict(kwargs, out=out)
    return numpy_array(ufunc.__name__, ufunc, *operands, **kwargs)


def _listed(ufunc, x):
    """A list/tuple operand: stacked if it holds tensors, else NumPy's array of it (a
    ragged one is a ShapeError naming the ufunc)."""
    x = as_array(x)
    if type(x) is list or type(x) is tuple:
        return numpy_array(ufunc.__name__, np.asarray, x)
    return x


def apply(ufunc, strict: Callable, operands: tuple, out=None, kwargs: dict | None = None):
    """``ufunc(*operands, out=out, **kwargs)`` computed by ``strict`` on tensors."""
    kwargs = kwargs or {}
    if not tensor_among(operands):
        return _numpy(ufunc, operands, out, kwargs)
    if out is not None:
        return written(ufunc, out, apply(ufunc, strict, operands, None, kwargs))
    operands = [_listed(ufunc, x) if type(x) is list or type(x) is tuple else x
                for x in operands]
    dtype, casting = options(ufunc.__name__, out, kwargs)
    return new_result(strict(*prepared(ufunc, operands, dtype, casting)), operands)


def new_result(result, operands):
    """A ufunc's or a reduction's result is a new array in NumPy: an identity shortcut's
    (``x * 1``, ``+x``, ``np.sum(a, axis=())``) is made one (writes into it must leave the
    operand alone), a 0-d one a scalar (an eager shortcut's fresh handle is new: marked as
    one here)."""
    for x in operands:
        if result is x:
            return ew.fresh_result(result)
    return as_scalar_result(result)


def apply2(ufunc, strict: Callable, x1, x2, out, kwargs: dict):
    """:func:`apply` for two operands, spelled out: ``x + 1.0`` and ``x > 0`` take it."""
    if not tensor_among((x1, x2)):
        return _numpy(ufunc, (x1, x2), out, kwargs)
    if out is not None:
        return written(ufunc, out, apply2(ufunc, strict, x1, x2, None, kwargs))
    if type(x1) is list or type(x1) is tuple:
        x1 = _listed(ufunc, x1)
    if type(x2) is list or type(x2) is tuple:
        x2 = _listed(ufunc, x2)
    dtype, casting = options(ufunc.__name__, out, kwargs) if kwargs or out is not None \
        else (None, "same_kind")
    cache_key = (ufunc, dtype, casting, (dtype_key(x1), dtype_key(x2)))
    codes = _loops.get(cache_key)
    if codes is None:
        codes = loop_codes(ufunc, (x1, x2), dtype, casting)
    traced = traced_among((x1, x2))
    x1, x2 = operand(x1, codes[0], traced), operand(x2, codes[1], traced)
    shape1, shape2 = shape_of(x1), shape_of(x2)
    if shape1 != shape2:
        shape = broadcast_shapes(ufunc.__name__, shape1, shape2)
        x1, x2 = _broadcast(x1, shape), _broadcast(x2, shape)
    return new_result(strict(x1, x2), (x1, x2))


def _signature(nin: int) -> inspect.Signature:
    P = inspect.Parameter
    names = ["x"] if nin == 1 else [f"x{i + 1}" for i in range(nin)]
    return inspect.Signature(
        [P(n, P.POSITIONAL_ONLY) for n in names] + [P("out", P.POSITIONAL_OR_KEYWORD,
                                                      default=None)]
        + [P(k, P.KEYWORD_ONLY, default=v) for k, v in _OPTIONS.items()])


def ufunc_function(name: str, strict: Callable, doc: str,
                   shortcut: Callable | None = None) -> Callable:
    """The tenpy_ad version of the ufunc ``name`` (``"numpy.exp"``; one to three operands)
    computed by ``strict``, registered.

    ``shortcut(x1, x2)``, if given, is tried for two operands that are not tensors of one
    kind and shape (a Python scalar factor, say); it returns ``None`` to decline.
    """
    ufunc = resolve(name)
    native = _native_codes(ufunc)
    if ufunc.nin == 1:
        def fn(x, /, out=None, **kwargs):
            if out is None and not kwargs and native_tensor(x, native):
                return new_result(strict(x), (x,))
            return apply(ufunc, strict, (x,), out, kwargs)
    elif ufunc.nin == 2:
        def fn(x1, x2, /, out=None, **kwargs):
            if out is None and not kwargs:
                result = strict(x1, x2) if native_pair(x1, x2, native) else \
                    None if shortcut is None else shortcut(x1, x2)
                if result is not None:
                    return new_result(result, (x1, x2))
            return apply2(ufunc, strict, x1, x2, out, kwargs)
    elif ufunc.nin == 3:
        def fn(x1, x2, x3, /, out=None, **kwargs):
            return apply(ufunc, strict, (x1, x2, x3), out, kwargs)
    else:
        raise InternalError(f"ufunc_function: {name} has {ufunc.nin} operands")
    fn.__name__ = fn.__qualname__ = ufunc.__name__
    fn.__doc__ = doc
    fn.__module__ = "tenpy_ad.numpy"
    fn.__signature__ = _signature(ufunc.nin)
    return implements(name, fallback=False)(fn)      # the fallback is in apply/apply2


def inexact(x):
    """A tensor operand in the floating dtype inexact functions compute it in (bools and
    integers as float64)."""
    code = code_of_value(x)
    return x if dtypes.is_inexact(code) else ew.convert(x, dtypes.FLOAT64)


__all__ = ["ufunc_function", "apply", "prepared", "loop_codes", "options", "inexact"]

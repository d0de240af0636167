"""The registry of tenpy_ad's versions of NumPy's (and SciPy's) functions, and NumPy's
dispatch protocols for tensors: ``np.exp(t)``, ``np.concatenate([t, a])``,
``np.linalg.norm(t)`` run tenpy_ad's version; every other NumPy function raises an error
naming it, so no NumPy call can silently drop a gradient.

``@implements("numpy.linalg.svd")`` registers a function under the qualified names of the
functions it implements (names the installed NumPy lacks are skipped), and returns it
wrapped with NumPy's fallback: without a tensor among the arguments
(:func:`~tenpy_ad.numpy._operands.tensor_among`) NumPy's own function runs on them
unchanged, so ``tnp.f`` of plain values is ``np.f`` exactly, results and errors.  The
few that compute plain arrays themselves are registered with ``fallback=False``: the
ufuncs (their calling convention, ``_ufuncs.py``, falls back on the operators' hot path),
``einsum`` (the same contraction order for arrays as for tensors) and ``tp.linalg``'s
functions.  The docs' list of supported names is generated from the registry.
"""
from __future__ import annotations

import functools
import importlib
import inspect
from typing import Callable

import numpy as np

from .._sequences import numpy_array
from ..errors import NotDifferentiableError
from ._operands import tensor_among

#: qualified name (``"numpy.linalg.svd"``, ``"scipy.special.erf"``) -> tenpy_ad's version
IMPLEMENTATIONS: dict[str, Callable] = {}
#: the same, keyed by the NumPy function or ufunc itself: what the protocols look up
_BY_FUNCTION: dict = {}

# ``np.<ufunc>.reduce`` / ``.accumulate`` -> the tenpy_ad.numpy function that does it
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
           "logical_and": "all", "logical_or": "any", "fmax": "nanmax", "fmin": "nanmin"}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}


def resolve(name: str):
    """The function or ufunc of qualified ``name`` (``"numpy.linalg.svd"``), or None if the
    installed version has none (several are new in NumPy 2)."""
    module, _, attribute = name.rpartition(".")
    try:
        found = getattr(importlib.import_module(module), attribute, None)
    except ImportError:
        return None
    if module == "scipy.special" and found is not None and not isinstance(found, np.ufunc):
        # with SCIPY_ARRAY_API=1 SciPy's names are dispatching wrappers of its ufuncs
        found = getattr(importlib.import_module("scipy.special._ufuncs"), attribute, found)
    return found


def implements(*names: str, fallback: bool = True) -> Callable:
    """Register the decorated function as tenpy_ad's version of the functions ``names``
    (qualified: ``"numpy.sum"``, ``"numpy.linalg.svd"``) and return it with NumPy's
    fallback: without a tensor among the arguments, the first of those functions that
    exists runs instead, on the arguments unchanged (if none exists, the decorated
    function runs on every input).  ``fallback=False`` registers a function that computes
    plain arrays itself (``einsum``'s contraction order, ``tp.linalg``'s conventions, a
    ufunc's calling convention) as it is; so is a function registered before."""
    def register(fn: Callable) -> Callable:
        present = [(name, f) for name, f in ((n, resolve(n)) for n in names) if f is not None]
        if not hasattr(fn, "numpy_fallback"):
            if fallback and present:
                fn = with_numpy_fallback(present[0][1], fn)
            else:
                fn.numpy_fallback = None
        for name, f in present:
            IMPLEMENTATIONS[name] = _BY_FUNCTION[f] = fn
        return fn
    return register


def with_numpy_fallback(numpy_function: Callable, implementation: Callable) -> Callable:
    """``implementation`` where a tensor is among the arguments, else ``numpy_function``
    (a ragged nested list is a ShapeError naming the function, NumPy's ValueError)."""
    name = implementation.__name__

    @functools.wraps(implementation)
    def fn(*args, **kwargs):
        if tensor_among(args, kwargs):   # in C: every registered call asks
            if kwargs and kwargs.get("out") is not None:
                return written_out(implementation, args, kwargs)
            return implementation(*args, **kwargs)
        return numpy_array(name, numpy_function, *args, **kwargs)
    fn.numpy_fallback = numpy_function
    return fn


def written_out(implementation: Callable, args: tuple, kwargs: dict):
    """``implementation(*args, **kwargs)`` whose result is written into ``kwargs["out"]``
    in place, which is returned (NumPy's ``out=``, for every function that takes one)."""
    kwargs = dict(kwargs)
    out = kwargs.pop("out")
    return written(out, implementation(*args, **kwargs),
                    f"np.{implementation.__name__}(..., out=...)")


def direct(fn: Callable) -> Callable:
    """What ``fn`` (a function of :mod:`tenpy_ad.numpy`) runs when a tensor is among its
    arguments: for the methods and operators of tensors, whose first operand is one
    (``t.sum(axis=0, out=o)`` writes ``o``, as the function does)."""
    if getattr(fn, "numpy_fallback", None) is None:
        return fn
    implementation = fn.__wrapped__
    if "out" not in inspect.signature(implementation).parameters:
        return implementation

    @functools.wraps(implementation)
    def method(*args, **kwargs):
        if kwargs and kwargs.get("out") is not None:
            return written_out(implementation, args, kwargs)
        return implementation(*args, **kwargs)
    return method


def implementation_of(f) -> Callable | None:
    """tenpy_ad's version of the NumPy function or ufunc ``f``, if it has one."""
    try:
        return _BY_FUNCTION.get(f)
    except TypeError:                              # an unhashable object
        return None


def numpy_name(f) -> str:
    """``np.linalg.norm``-style name of a NumPy function or ufunc (for messages)."""
    module = getattr(f, "__module__", None) or "numpy"
    module = module.replace("numpy._core.", "numpy.").replace("numpy.core.", "numpy.")
    if module.startswith("numpy.linalg"):
        module = "numpy.linalg"
    elif module.startswith("numpy"):
        module = "numpy"
    return f"{module.replace('numpy', 'np', 1)}.{f.__name__}"


def _refuse(what: str, reason: str = ""):
    raise NotDifferentiableError(
        f"{what} is not differentiable in tenpy_ad{reason}. Use the tenpy_ad.numpy "
        "function of that name if there is one, or call it on x.detach() / x.numpy() to "
        "leave the computation explicitly.")


def array_function(func, types, args, kwargs):
    """``Tensor.__array_function__``: run tenpy_ad's version of ``func``."""
    implementation = _BY_FUNCTION.get(func)
    if implementation is None:
        _refuse(numpy_name(func), " (it has no tenpy_ad implementation)")
    if kwargs.get("out") is not None:            # np.clip(x, 0, 1, out=t), np.sum(..., out=t)
        return written_out(implementation, args, kwargs)
    return implementation(*args, **kwargs)


#: the in-place writer (numpy/inplace.py's write_out, installed when it is imported: it
#: sits above the dispatch, whose out= it serves)
_WRITER: list = []


def install_writer(write_out: Callable) -> None:
    """Install ``write_out(out, result, what)``, which NumPy's ``out=`` calls."""
    _WRITER[:] = [write_out]


def written(out, result, what: str):
    """``result`` written into ``out`` in place (numpy/inplace.py), ``out`` returned."""
    return _WRITER[0](out, result, what)


def array_ufunc(ufunc, method, inputs, kwargs):
    """``Tensor.__array_ufunc__``: ufunc calls and their reductions on tensors."""
    out = kwargs.get("out")
    if out is not None:                          # np.add(a, b, out=t), arr += t, t += arr
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        return written(out, array_ufunc(ufunc, method, inputs, kwargs),
                        f"np.{ufunc.__name__}(..., out=...)")
    if method == "__call__":
        implementation = _BY_FUNCTION.get(ufunc)
        if implementation is None:
            _refuse(f"np.{ufunc.__name__}", " (it has no tenpy_ad implementation)")
        return implementation(*inputs, **kwargs)
    table = {"reduce": _REDUCE, "accumulate": _ACCUMULATE}.get(method, {})
    name = table.get(ufunc.__name__)
    if name is None:
        _refuse(f"np.{ufunc.__name__}.{method}")
    if "axis" not in kwargs:
        kwargs["axis"] = 0          # the default of ufunc.reduce/.accumulate, unlike np.sum's
    return IMPLEMENTATIONS[f"numpy.{name}"](*inputs, **kwargs)


def supported_names() -> list:
    """The qualified names of the functions and ufuncs tenpy_ad implements
    (``"numpy.exp"``, ``"numpy.linalg.svd"``), sorted."""
    return sorted(IMPLEMENTATIONS)


__all__ = ["implements", "array_function", "array_ufunc", "supported_names",
           "implementation_of", "direct", "resolve", "IMPLEMENTATIONS"]

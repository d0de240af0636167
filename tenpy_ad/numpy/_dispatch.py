"""NumPy's dispatch protocols for tensors: ``np.exp(t)``, ``np.concatenate([t, a])``,
``np.linalg.norm(t)`` run tenpy_ad's implementation; every other NumPy function raises an
error naming it, so no NumPy call can silently drop a gradient.

``implements(np.f, ...)`` registers a function of :mod:`tenpy_ad.numpy` as the version of
those NumPy functions (ufuncs included); the registry is also what the docs' list of
supported names is generated from.
"""
from __future__ import annotations

from typing import Callable


from ..errors import NotDifferentiableError

#: NumPy function or ufunc -> tenpy_ad implementation
IMPLEMENTATIONS: dict = {}

# ``np.<ufunc>.reduce`` / ``.accumulate`` -> the tenpy_ad.numpy function that does it
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
           "logical_and": "all", "logical_or": "any", "fmax": "nanmax", "fmin": "nanmin"}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}


def implements(*numpy_functions) -> Callable:
    """Register the decorated function as tenpy_ad's version of ``numpy_functions``."""
    def register(fn):
        for f in numpy_functions:
            IMPLEMENTATIONS[f] = fn
        return fn
    return register


def numpy_name(f) -> str:
    """``np.linalg.norm``-style name of a NumPy function or ufunc."""
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
    implementation = IMPLEMENTATIONS.get(func)
    if implementation is None:
        _refuse(numpy_name(func), " (it has no tenpy_ad implementation)")
    return implementation(*args, **kwargs)


def array_ufunc(ufunc, method, inputs, kwargs):
    """``Tensor.__array_ufunc__``: ufunc calls and their reductions on tensors."""
    if kwargs.get("out") is not None:
        _refuse(f"np.{ufunc.__name__}(..., out=...)",
                " (writing into an existing array cannot be recorded)")
    kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    if method == "__call__":
        implementation = IMPLEMENTATIONS.get(ufunc)
        if implementation is None:
            _refuse(f"np.{ufunc.__name__}", " (it has no tenpy_ad implementation)")
        return implementation(*inputs, **kwargs)
    table = {"reduce": _REDUCE, "accumulate": _ACCUMULATE}.get(method, {})
    name = table.get(ufunc.__name__)
    if name is None:
        _refuse(f"np.{ufunc.__name__}.{method}")
    from .. import numpy as tnp
    if "axis" not in kwargs:
        kwargs["axis"] = 0          # the default of ufunc.reduce/.accumulate, unlike np.sum's
    return getattr(tnp, name)(*inputs, **kwargs)


def supported_names() -> list:
    """The NumPy functions and ufuncs tenpy_ad implements, as ``np.name`` strings."""
    return sorted({numpy_name(f) for f in IMPLEMENTATIONS})


__all__ = ["implements", "array_function", "array_ufunc", "supported_names",
           "IMPLEMENTATIONS"]

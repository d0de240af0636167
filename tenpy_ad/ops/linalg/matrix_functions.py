"""Primary matrix functions of SciPy: ``sqrtm``, ``logm`` and ``fractional_matrix_power``
(param ``t``), one primitive each (a matrix or a stack), and their rules.

The derivative of a primary matrix function ``f`` at ``a`` along ``e`` (its Frechet
derivative ``L_f(a, e)``) is the upper right block of ``f([[a, e], [0, a]])``, for every
``a`` where ``f`` is differentiable, diagonalizable or not; written with the primitive
itself, it is exact to rounding and differentiates again, to any order.  The functions
have real Taylor coefficients (``f(x^H) = f(x)^H``), so the adjoint of ``L_f(a, .)`` is
``L_f(a^H, .)``: the VJP is the same block identity at ``a^H``.

A tensor's dtype cannot depend on its values: the function of a real matrix is real, and
a real matrix whose result is complex (eigenvalues on the closed negative real axis)
raises ``DTypeError`` naming the function; pass a complex matrix instead.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from ...errors import DTypeError
from ...param_schema import Float, NO_PARAMS
from ...primitive import bind1, primitive
from . import lapack
from .inverse import square_rule
from .matrix import adjoint, block_frechet
from .zero_size import defrules_sized

_FUNCTIONS = {
    "sqrtm": lambda a, t: scipy.linalg.sqrtm(a),
    "logm": lambda a, t: scipy.linalg.logm(a),
    "fractional_matrix_power": lambda a, t: scipy.linalg.fractional_matrix_power(a, t),
}


def _real_if_real(name: str, a: np.ndarray, result: np.ndarray) -> np.ndarray:
    """``result`` in ``a``'s dtype; a complex result of a real matrix raises, unless its
    imaginary part is rounding."""
    if np.iscomplexobj(a) or not np.iscomplexobj(result):
        return result.astype(a.dtype, copy=False)
    scale = float(np.max(np.abs(result))) if result.size else 0.0
    if float(np.max(np.abs(result.imag))) <= 1e3 * np.finfo(a.dtype).eps * scale:
        return result.real.astype(a.dtype)
    raise DTypeError(
        f"{name}: the result for this real {a.dtype.name} matrix is complex (it has "
        "eigenvalues on the negative real axis), and a tensor's dtype cannot depend on its "
        "values; pass a complex matrix (a.astype(complex)) to get the complex result")


def _compute(name: str, a: np.ndarray, t) -> np.ndarray:
    if a.shape[-1] == 0:
        return a.copy()
    stack = a.reshape((-1,) + a.shape[-2:])
    results = [_real_if_real(name, m, np.asarray(_FUNCTIONS[name](m, t))) for m in stack]
    return np.stack(results).reshape(a.shape)


def _impl_of(name: str):
    def impl(params, a):
        a = np.asarray(a)
        return lapack.call(name, lambda b: _compute(name, b, params), a)
    return impl


def _frechet(prim, params, a, e):
    """``L_f(a, e)``: the upper right block of ``f([[a, e], [0, a]])``."""
    return block_frechet(lambda block: bind1(prim, params, block), a, e)


def _define(name: str, params_schema):
    prim = primitive(name, _impl_of(name), square_rule(name), params=params_schema,
                     format_params=None if params_schema is NO_PARAMS else
                     (lambda t: f"t={t:g}"))

    def jvp(params, tangents, out, xs):
        return _frechet(prim, params, xs[0], tangents[0])

    def vjp(params, ct, out, xs, active):
        return (_frechet(prim, params, adjoint(xs[0]), ct),)

    defrules_sized(prim, jvp, vjp)
    return prim


sqrtm_p = _define("sqrtm", NO_PARAMS)
logm_p = _define("logm", NO_PARAMS)
fractional_matrix_power_p = _define("fractional_matrix_power", Float())


def sqrtm(a):
    """The principal square root of (each matrix of) ``a`` (the primitive itself)."""
    return bind1(sqrtm_p, None, a)


def logm(a):
    """The principal logarithm of (each matrix of) ``a`` (the primitive itself)."""
    return bind1(logm_p, None, a)


def fractional_matrix_power(a, t: float):
    """``a ** t`` (principal branch) of (each matrix of) ``a`` (the primitive itself)."""
    return bind1(fractional_matrix_power_p, float(t), a)

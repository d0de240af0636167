"""Determinants: ``det`` and ``slogdet`` (NumPy's ``(sign, logabsdet)``) of a matrix or a
stack, and their rules.

With ``t = tr(a^-1 da)`` (``a^-1`` from the ``inv`` primitive, so the rules differentiate
again): ``d det = det t``, ``d logabsdet = Re t``, ``d sign = sign i Im t`` (0 for real
matrices).  The VJPs are multiples of ``a^-H``: ``ga = conj(det) g a^-H`` and
``ga = (g_logabsdet + i c) a^-H`` with ``c = -Im(conj(g_sign) sign)``.  At a singular
matrix ``a^-1`` does not exist: the derivative raises ``LinAlgError`` naming the function.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...primitive import code_of_value, is_complex_value, primitive, shape_of
from .. import elementwise as ew
from .. import structural as st
from . import lapack
from .inverse import inv, square_rule
from .matrix import add_optional, adjoint, matrix_transpose
from .zero_size import defrules_sized


_check_det = square_rule("det")
_check_slogdet = square_rule("slogdet")


def _det_rule(params, a):
    _check_det(params, a)
    return code_of_value(a), shape_of(a)[:-2]


def _slogdet_rule(params, a):
    _check_slogdet(params, a)
    code, batch = code_of_value(a), shape_of(a)[:-2]
    return [(code, batch), (dtypes.real_code(code), batch)]


def _scalar_per_matrix(x):
    """A value per matrix as a (..., 1, 1) stack, to scale the matrices."""
    return st.reshape(x, shape_of(x) + (1, 1))


def _trace_of_inverse_times(a, da, name):
    """``tr(a^-1 da)`` for each matrix."""
    ndim = len(shape_of(a))
    return st.reduce_sum(matrix_transpose(inv(a, name)) * da, (ndim - 2, ndim - 1))


def _det_impl(params, a):
    return np.asarray(lapack.call("det", np.linalg.det, a))


def _det_jvp(params, tangents, out, xs):
    return out * _trace_of_inverse_times(xs[0], tangents[0], "det")


def _det_vjp(params, ct, out, xs, active):
    scale = _scalar_per_matrix(ct * ew.conj(out))
    return (scale * adjoint(inv(xs[0], "det")),)


det_p = primitive("det", _det_impl, _det_rule)
defrules_sized(det_p, _det_jvp, _det_vjp)


def _slogdet_impl(params, a):
    return tuple(np.asarray(x) for x in lapack.call("slogdet", np.linalg.slogdet, a))


def _slogdet_jvp(params, tangents, out, xs):
    sign, _ = out
    t = _trace_of_inverse_times(xs[0], tangents[0], "slogdet")
    if not is_complex_value(t):
        return None, t
    return sign * (1j * ew.imag(t)), ew.real(t)


def _slogdet_vjp(params, cts, out, xs, active):
    g_sign, g_log = cts
    sign, _ = out
    a = xs[0]
    weight = None if g_log is None else ew.convert(g_log, code_of_value(a))
    if g_sign is not None and is_complex_value(a):   # a real sign is locally constant
        weight = add_optional(weight, -1j * ew.imag(ew.conj(g_sign) * sign))
    if weight is None:
        return (None,)
    return (_scalar_per_matrix(weight) * adjoint(inv(a, "slogdet")),)


slogdet_p = primitive("slogdet", _slogdet_impl, _slogdet_rule, n_outputs=2)
defrules_sized(slogdet_p, _slogdet_jvp, _slogdet_vjp)

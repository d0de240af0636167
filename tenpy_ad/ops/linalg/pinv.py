"""The Moore-Penrose pseudo-inverse primitive ``x = a^+`` (NumPy's ``pinv``: singular values
at or below ``rcond`` times the largest are dropped; a matrix or a stack), its rules, and
the rank count that ``lstsq`` reports.

Rules (Golub and Pereyra), written with ``a`` and the output so they differentiate again::

    dx = -x da x + x x^H da^H (1 - a x) + (1 - x a) da^H x^H x
    ga = -x^H g x^H + (1 - a x) g^H x x^H + x^H x g^H (1 - x a)

This is the derivative along perturbations that keep the rank (every perturbation of a
full-rank matrix); across a change of rank the pseudo-inverse is discontinuous.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...errors import ShapeError
from ...param_schema import Float
from ...primitive import code_of_value, describe, primitive, shape_of
from ...rules import defjvp, defvjp, zero_rule
from .. import elementwise as ew
from . import lapack
from .matrix import adjoint, mm
from .zero_size import defrules_sized


def _pinv_rule(rcond, a):
    shape = shape_of(a)
    if len(shape) < 2:
        raise ShapeError(f"pinv: expected a matrix or a stack of them, got {describe(a)}")
    return code_of_value(a), shape[:-2] + (shape[-1], shape[-2])


def _pinv_impl(rcond, a):
    return lapack.call("pinv", lambda b: np.linalg.pinv(b, rcond=rcond), a)


def _pinv_jvp(rcond, tangents, out, xs):
    a, x = xs[0], out
    da_h = adjoint(tangents[0])
    x_h = adjoint(x)
    t1 = ew.neg(mm(x, mm(tangents[0], x)))
    t2 = mm(mm(x, x_h), da_h - mm(mm(da_h, a), x))
    t3 = mm(da_h - mm(x, mm(a, da_h)), mm(x_h, x))
    return t1 + t2 + t3


def _pinv_vjp(rcond, ct, out, xs, active):
    a, x = xs[0], out
    x_h, ct_h = adjoint(x), adjoint(ct)
    left = mm(ct_h, mm(x, x_h))
    right = mm(mm(x_h, x), ct_h)
    ga = ew.neg(mm(x_h, mm(ct, x_h))) + (left - mm(a, mm(x, left))) + (
        right - mm(mm(right, x), a))
    return (ga,)


# rcond: any float, as NumPy's (a negative cutoff keeps every singular value)
pinv_p = primitive("pinv", _pinv_impl, _pinv_rule, format_params=lambda r: f"rcond={r:g}",
                   params=Float())
defrules_sized(pinv_p, _pinv_jvp, _pinv_vjp)


def _rank_rule(rcond, s):
    return dtypes.real_code(code_of_value(s)), shape_of(s)[:-1]


def _rank_impl(rcond, s):
    s = np.asarray(s)
    cutoff = rcond * np.max(s, axis=-1, keepdims=True, initial=0.0)
    return np.count_nonzero(s > cutoff, axis=-1).astype(s.dtype)


# the number of singular values above the cutoff: piecewise constant, derivative zero
rank_p = primitive("rank", _rank_impl, _rank_rule, format_params=lambda r: f"rcond={r:g}",
                   params=Float())
defjvp(rank_p, zero_rule)
defvjp(rank_p, zero_rule)

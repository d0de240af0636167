"""The matrix inverse primitive ``x = a^-1`` (a matrix or a stack) and its rules, written
with the output itself: ``dx = -x da x``, ``ga = -x^H g x^H`` (so they differentiate again).

The param is the name of the public function that needs the inverse (``inv``, or ``det``
and ``slogdet`` for their derivatives), so that a singular matrix is reported as theirs.
"""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ...param_schema import Text
from ...primitive import bind, describe, primitive, shape_of
from .. import elementwise as ew
from . import lapack
from .matrix import adjoint, mm
from .zero_size import defrules_sized


def square_rule(name: str):
    """The shape rule "same as the operand, a square matrix or a stack of them"."""
    def rule(params, a):
        shape = shape_of(a)
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise ShapeError(f"{name}: expected a square matrix or a stack of them, got "
                             f"{describe(a)}")
        return a
    return rule


def _inv_impl(name, a):
    return lapack.call(name, np.linalg.inv, a)


def _inv_jvp(name, tangents, out, xs):
    return ew.neg(mm(out, mm(tangents[0], out)))


def _inv_vjp(name, ct, out, xs, active):
    x_h = adjoint(out)
    return (ew.neg(mm(x_h, mm(ct, x_h))),)


# params: the function a singular matrix is reported under ("inv", "det", ...)
inv_p = primitive("inv", _inv_impl, square_rule("inv"), format_params=str,
                  params=Text("a function name", r"[a-z_]+", max_length=64, example="inv"))
defrules_sized(inv_p, _inv_jvp, _inv_vjp)


def inv(a, name: str = "inv"):
    """The inverse of (each matrix of) ``a``; ``name`` is the function reported when a
    matrix is singular."""
    return bind(inv_p, name, a)

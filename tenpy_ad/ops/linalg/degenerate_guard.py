"""The second-order checks of the dense ``svd``/``eigh`` VJP and of their JVPs.

A VJP that may be differentiated again is written to be exact at every order when its
cotangents show which triplets (pairs) the loss uses (:mod:`.truncation`).  When they do
not, the dense rule runs over all of them, and its derivative differentiates each
singular vector (eigenvector) on its own: inside a degenerate group, or for a zero
singular value of a rectangular matrix, that is the broadened 0 in place of a divided
difference.  That is right for the triplets the loss uses (the documented first-order
semantics), but silently wrong for triplets whose cotangent is zero -- a loss truncated in
a way the rule cannot see.  So the dense VJP's result passes through :func:`guarded`, an
identity whose derivative rules insert a check: when the derivative runs, it raises
:class:`~tenpy_ad.errors.GaugeError` (or warns, ``tp.linalg.config.gauge_check``) if a
triplet with a zero cotangent is exactly degenerate (to rounding) with another one (or
zero, rectangular).  First-order results never run the check.  Near-degenerate values
(gaps down to about sqrt(eps)) are not flagged: the broadened rule is close to the
divided difference there.

The JVP has the same limit for every triplet, as forward mode does not know which ones the
loss uses: its tangents of the vectors pass through :func:`guarded_tangent`, whose
derivatives refuse any exactly degenerate (or zero, rectangular) value.
"""
from __future__ import annotations

import warnings

import numpy as np

from ...errors import GaugeError, GaugeWarning
from ...param_schema import BOOL, Exactly, Int, Maybe, Struct, TupleOf
from ...primitive import bind, primitive
from ...rules import defjvp, defvjp, zero_rule
from .config import GAUGE_MODES, config


def _same_as_first(params, x, *others):
    return x


def _unused(params, values, cotangents) -> np.ndarray:
    """Per value, whether its triplet (pair) has a zero cotangent: of the ones the params'
    ``axes`` describe (the axis each cotangent's columns run along; None for a vector of
    values), in matrices that use some; every value for a forward-mode check."""
    if params[3]:
        return np.ones(np.shape(values), bool)
    used = np.zeros(np.shape(values), bool)
    for g, axis in zip(cotangents, params[4]):
        g = np.asarray(g) != 0
        used |= g if axis is None else g.any(axis=g.ndim + axis)
    return ~used & used.any(axis=-1, keepdims=True)


def _check(params, x, values, *cotangents):
    """``x``, after checking that no unused value is degenerate (see above)."""
    mode, name, rectangular = params[:3]
    values = np.asarray(values)
    unused = _unused(params, values, cotangents)
    if mode == "off" or not unused.any():
        return x
    scale = float(np.max(np.abs(values)))
    tol = 1e3 * np.finfo(values.dtype).eps * scale      # exact, up to rounding
    gaps = np.abs(values[..., :, None] - values[..., None, :])
    np.einsum("...ii->...i", gaps)[...] = np.inf
    close = gaps.min(axis=-1) <= tol
    if rectangular:
        close |= np.abs(values) <= tol
    if (close & unused).any():
        vectors = "singular vectors" if name == "svd" else "eigenvectors"
        message = (_forward_message if params[3] else _reverse_message)(name, vectors,
                                                                          rectangular)
        if mode == "raise":
            raise GaugeError(message)
        warnings.warn(message, GaugeWarning, stacklevel=2)
    return x


def _reverse_message(name: str, vectors: str, rectangular: bool) -> str:
    return (f"{name}: the second derivative is not defined by this rule: the loss uses some "
            f"{vectors} and not others (a zero cotangent) among degenerate"
            f"{' or zero' if rectangular else ''} values, and its truncation is not visible "
            f"to the rule. Slice the outputs (u[:, :k], s[:k], vh[:k], v[:, lo:hi]) so that "
            f"the rule sees the kept ones, or use tp.linalg.svds/eigsh.")


def _forward_message(name: str, vectors: str, rectangular: bool) -> str:
    return (f"{name}: the derivative of a forward-mode derivative (a JVP differentiated "
            f"again) is not defined by this rule at exactly degenerate"
            f"{' or zero' if rectangular else ''} values: the JVP gives the tangents of all "
            f"{vectors}, and those of a degenerate group have no derivative. Take second "
            f"derivatives in reverse mode (a gradient of a gradient) with the kept outputs "
            f"sliced, or use tp.linalg.svds/eigsh.")


def _format(params) -> str:
    return f"{params[1]} mode={params[0]}"


def _pass_through(params, g, out, x, values, *cotangents):
    return g


def _checked(params, g, out, x, values, *cotangents):
    return bind(second_order_check_p, params, g, values, *cotangents)


def _zeros(count: int) -> tuple:
    return (zero_rule,) * count


# The guard and the check take the values and the cotangents whose sizes decide (their
# number varies: up to five operands); the rules of every operand count are registered.
#: (mode, name, rectangular, forward, axes): axes -2 / -1 or None, one per cotangent
_PARAMS = Struct(Exactly(*GAUGE_MODES), Exactly("svd", "eigh"), BOOL, BOOL,
                 TupleOf(Maybe(Int(-2, -1)), max_length=3))
second_order_check_p = primitive("second_order_check", _check, _same_as_first,
                                 format_params=_format, static_shapes=True, params=_PARAMS)
guard_p = primitive("second_order_guard", _same_as_first, _same_as_first,
                    format_params=_format, static_shapes=True, params=_PARAMS)
defjvp(second_order_check_p, _pass_through, *_zeros(4))
defvjp(second_order_check_p, _pass_through, *_zeros(4))
defjvp(guard_p, _checked, *_zeros(4))
defvjp(guard_p, _checked, *_zeros(4))


def guarded(ct_a, values, name: str, rectangular: bool, *cotangents):
    """``ct_a``, whose derivatives check ``values`` (s or w) against the cotangents
    ``(g, axis)`` of the triplets (pairs): ``axis`` the one their columns run along, None
    for a vector of values, g None for a zero cotangent.  At first order the guard is an
    identity that computes nothing (see the module docstring)."""
    mode = config.gauge_check
    if mode == "off":
        return ct_a
    operands, axes = [ct_a, values], []
    for g, axis in cotangents:
        if g is not None:
            operands.append(g)
            axes.append(axis)
    if not axes:
        return ct_a
    return bind(guard_p, (mode, name, bool(rectangular), False, tuple(axes)), *operands)


def guarded_tangent(tangent, values, name: str, rectangular: bool):
    """A JVP's tangent of the singular vectors (eigenvectors), whose derivatives check that
    no value is exactly degenerate (or zero, ``rectangular``): which ones the loss uses is
    not known in forward mode."""
    if config.gauge_check == "off" or tangent is None:
        return tangent
    return bind(guard_p, (config.gauge_check, name, bool(rectangular), True, ()), tangent,
                values)

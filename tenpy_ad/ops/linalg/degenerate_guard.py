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
from ...primitive import bind, primitive, shape_of
from ...rules import defjvp, defvjp, zero_rule
from .. import elementwise as ew
from .. import structural as st
from .config import config
from .matrix import add_optional


def _same_as_first(params, x, values, weight):
    return x


def _check(params, x, values, weight):
    """``x``, after checking that no zero-``weight`` value is degenerate (see above)."""
    mode, name, rectangular, forward = params
    values, weight = np.asarray(values), np.asarray(weight)
    unused = np.ones(values.shape, bool) if forward else weight == 0
    if mode == "off" or not unused.any():
        return x
    if not forward:
        unused &= (~unused).any(axis=-1, keepdims=True)     # in matrices that use some
    scale = float(np.max(np.abs(values)))
    tol = 1e3 * np.finfo(values.dtype).eps * scale      # exact, up to rounding
    gaps = np.abs(values[..., :, None] - values[..., None, :])
    np.einsum("...ii->...i", gaps)[...] = np.inf
    close = gaps.min(axis=-1) <= tol
    if rectangular:
        close |= np.abs(values) <= tol
    if (close & unused).any():
        vectors = "singular vectors" if name == "svd" else "eigenvectors"
        message = _forward_message(name, vectors, rectangular) if forward else (f"{name}: the second derivative is not defined by this rule: the loss "
                   f"uses some {vectors} and not others (a zero cotangent) among degenerate"
                   f"{' or zero' if rectangular else ''} values, and its truncation is not "
                   f"visible to the rule. Slice the outputs (u[:, :k], s[:k], vh[:k], "
                   f"v[:, lo:hi]) so that the rule sees the kept ones, or use "
                   f"tp.linalg.svds/eigsh.")
        if mode == "raise":
            raise GaugeError(message)
        warnings.warn(message, GaugeWarning, stacklevel=2)
    return x


def _forward_message(name: str, vectors: str, rectangular: bool) -> str:
    return (f"{name}: the derivative of a forward-mode derivative (a JVP differentiated "
            f"again) is not defined by this rule at exactly degenerate"
            f"{' or zero' if rectangular else ''} values: the JVP gives the tangents of all "
            f"{vectors}, and those of a degenerate group have no derivative. Take second "
            f"derivatives in reverse mode (a gradient of a gradient) with the kept outputs "
            f"sliced, or use tp.linalg.svds/eigsh.")


second_order_check_p = primitive("second_order_check", _check, _same_as_first,
                                 format_params=lambda p: f"{p[1]} mode={p[0]}")
defjvp(second_order_check_p, lambda params, t, out, *xs: t, zero_rule, zero_rule)
defvjp(second_order_check_p, lambda params, ct, out, *xs: ct, zero_rule, zero_rule)

guard_p = primitive("second_order_guard", lambda params, x, values, weight: x,
                    _same_as_first, format_params=lambda p: f"{p[1]} mode={p[0]}")
defjvp(guard_p, lambda params, t, out, x, values, weight:
       bind(second_order_check_p, params, t, values, weight), zero_rule, zero_rule)
defvjp(guard_p, lambda params, ct, out, x, values, weight:
       bind(second_order_check_p, params, ct, values, weight), zero_rule, zero_rule)


def guarded(ct_a, values, weight, name: str, rectangular: bool):
    """``ct_a``, whose derivatives check ``values`` (s or w) against the per-triplet
    cotangent sizes ``weight`` (see the module docstring)."""
    if config.gauge_check == "off":
        return ct_a
    return bind(guard_p, (config.gauge_check, name, bool(rectangular), False), ct_a, values,
                weight)


def guarded_tangent(tangent, values, name: str, rectangular: bool):
    """A JVP's tangent of the singular vectors (eigenvectors), whose derivatives check that
    no value is exactly degenerate (or zero, ``rectangular``): which ones the loss uses is
    not known in forward mode."""
    if config.gauge_check == "off" or tangent is None:
        return tangent
    return bind(guard_p, (config.gauge_check, name, bool(rectangular), True), tangent,
                values, values)


def column_sizes(*cotangents):
    """Per triplet (pair), the summed ``|entries|`` of its cotangents: ``(g, axis)`` with
    ``axis`` the one summed over (None for a vector of values, g None for none)."""
    total = None
    for g, axis in cotangents:
        if g is not None:
            size = ew.abs(g)
            if axis is not None:
                size = st.reduce_sum(size, (len(shape_of(g)) + axis,))
            total = add_optional(total, size)
    return total

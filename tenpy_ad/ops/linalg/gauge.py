"""The complex gauge check of decomposition derivatives.

Singular vectors and eigenvectors are defined up to a phase per column.  A loss that
depends on that phase has no derivative; the VJP then raises
:class:`~tenpy_ad.errors.GaugeError` (or warns, see ``tp.linalg.config.gauge_check``)
instead of returning a value that depends on LAPACK's arbitrary choice.  The check is an
identity on the cotangent that looks at the phase-dependent part when values exist
(eagerly, or when a compiled program runs).

Its derivatives are the same check of the same phase-dependent part: a derivative of a
gradient (a Hessian-vector product, forward or reverse over reverse) runs the check of
the loss's own cotangents even when the gradient itself is not computed, so a
phase-dependent loss raises at every order.  The decompositions skip the check of the
cotangents that such derivatives send them through their own rules (:mod:`.derived`).
"""
from __future__ import annotations

import warnings

import numpy as np

from ...errors import GaugeError, GaugeWarning
from ...param_schema import EPS, Exactly, Struct
from ...primitive import bind, primitive
from ...rules import defjvp, defvjp, zero_rule
from .config import GAUGE_MODES, config


# a phase sensitivity below this many units of rounding is rounding, whatever gauge_rtol
_ROUNDING = 64


def _check(params, x, residual, reference):
    mode, rtol, name = params
    if mode == "off":
        return x
    residual = np.asarray(residual)
    worst = float(np.max(np.abs(residual))) if residual.size else 0.0
    largest = float(np.max(np.asarray(reference))) if np.size(reference) else 0.0
    rtol = max(rtol, _ROUNDING * np.finfo(residual.dtype).eps)   # single precision
    if worst > rtol * largest and worst > 0.0:
        vectors = "singular vectors" if name == "svd" else "eigenvectors"
        message = (f"{name}: the loss depends on the arbitrary complex phase of the {vectors} "
                   f"(phase sensitivity {worst:.3g} against a cotangent scale "
                   f"{largest:.3g}); its derivative is ill-defined. Make the loss "
                   "phase-invariant (e.g. use |v|^2 or u v^H), or set "
                   "tp.linalg.config.gauge_check = 'warn'/'off'.")
        if mode == "raise":
            raise GaugeError(message)
        warnings.warn(message, GaugeWarning, stacklevel=2)
    return x


def _checked_again(params, g, out, x, residual, reference):
    """The derivative (tangent or cotangent ``g``) of the identity, checked as it was."""
    return bind(gauge_check_p, params, g, residual, reference)


gauge_check_p = primitive("gauge_check", _check, lambda params, x, residual, reference: x,
                          format_params=lambda p: f"{p[2]} mode={p[0]}",
                          params=Struct(Exactly(*GAUGE_MODES), EPS,
                                        Exactly("svd", "eigh", "eig")))
# the identity on its first operand; the residual and reference are only looked at
defjvp(gauge_check_p, _checked_again, zero_rule, zero_rule)
defvjp(gauge_check_p, _checked_again, zero_rule, zero_rule)


def gauge_checked(ct_a, residual, reference, name: str):
    """``ct_a``, checked for a negligible phase-dependent ``residual`` against
    ``reference`` (see the module docstring)."""
    if config.gauge_check == "off":
        return ct_a
    params = (config.gauge_check, float(config.gauge_rtol), name)
    return bind(gauge_check_p, params, ct_a, residual, reference)

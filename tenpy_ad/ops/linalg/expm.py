"""The matrix exponential primitive (SciPy's ``expm``: scaling and squaring with Pade
approximants; a matrix or a stack) and its rules.

The Frechet derivative ``L(a, e)`` (the JVP along ``e``) is the upper right block of
``expm([[a, e], [0, a]])`` -- exact to rounding, and written with the primitive itself, so
derivatives of any order follow.  The VJP is ``L(a^H, g)`` (``<g, L(a, e)> = <L(a^H, g),
e>``), the same block identity.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from ...primitive import bind1, primitive
from .inverse import square_rule
from .matrix import adjoint, block_frechet
from .zero_size import defrules_sized


def _expm_impl(params, a):
    a = np.asarray(a)
    if a.shape[-1] == 0:
        return a.copy()
    return scipy.linalg.expm(a)


def frechet(a, e):
    """``L(a, e)``, the derivative of ``expm`` at ``a`` along ``e``."""
    return block_frechet(expm, a, e)


def _expm_jvp(params, tangents, out, xs):
    return frechet(xs[0], tangents[0])


def _expm_vjp(params, ct, out, xs, active):
    return (frechet(adjoint(xs[0]), ct),)


expm_p = primitive("expm", _expm_impl, square_rule("expm"))
defrules_sized(expm_p, _expm_jvp, _expm_vjp)


def expm(a):
    """The matrix exponential of (each matrix of) ``a`` (the primitive itself)."""
    return bind1(expm_p, None, a)

"""The Hermitian eigendecomposition primitive ``h = v diag(w) v^H`` (``w`` ascending, as
NumPy's ``eigh``; a matrix or a stack) and its rules.  The ``1/(w_j - w_i)`` factors are
broadened like the SVD's.

Params ``(eps, uplo)``.  With ``uplo`` "L" or "U" the primitive is NumPy's function: LAPACK
reads only that triangle of the operand ``a`` (and the real part of its diagonal), so
``h = hermitian_from_triangle(a)`` and the rules compose with that linear map; any ``a`` is
a valid point and every perturbation of it is differentiated.  With ``uplo=None`` the
operand is Hermitian by construction (``tp.linalg.eigh(..., symmetrize_input=True)``
passes ``(a + a^H)/2``) and the rules are those of ``h`` itself.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...errors import ShapeError
from ...primitive import code_of_value, describe, is_complex_value, primitive, shape_of
from ...rules import defrules
from .. import elementwise as ew
from . import lapack
from .gauge import gauge_checked
from .matrix import (add_optional, adjoint, broadened_inverse_gaps, diag, diag_embed,
                     hermitian_from_triangle, hermitian_from_triangle_transpose, largest_abs,
                     mm)


def _eigh_rule(params, a):
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ShapeError(f"eigh: expected a square matrix or a stack of them, got "
                         f"{describe(a)}")
    code = code_of_value(a)
    return [(dtypes.real_code(code), shape[:-1]), (code, shape)]


def _eigh_impl(params, a):
    uplo = params[1] or "L"
    return lapack.call("eigh", lambda b: tuple(np.linalg.eigh(b, UPLO=uplo)), a)


def _eigh_jvp(params, tangents, out, xs):
    eps, uplo = params
    (da,) = tangents
    if uplo is not None:
        da = hermitian_from_triangle(da, uplo == "L")
    w, v = out
    dp = mm(mm(adjoint(v), da), v)
    dw = ew.real(diag(dp))
    dv = mm(v, broadened_inverse_gaps(w, eps) * dp)
    return dw, dv


def _eigh_vjp(params, cts, out, xs, active):
    eps, uplo = params
    gw, gv = cts
    w, v = out
    core = None if gw is None else diag_embed(gw)
    if gv is not None:
        j = mm(adjoint(v), gv)
        core = add_optional(core, broadened_inverse_gaps(w, eps) * j)
    ct_a = mm(mm(v, core), adjoint(v))
    if gv is not None and is_complex_value(v):
        ct_a = gauge_checked(ct_a, ew.imag(diag(j)), largest_abs(j), "eigh")
    if uplo is not None:
        ct_a = hermitian_from_triangle_transpose(ct_a, uplo == "L")
    return (ct_a,)


eigh_p = primitive("eigh", _eigh_impl, _eigh_rule, n_outputs=2,
                   format_params=lambda p: f"eps={p[0]:g} uplo={p[1]}")
defrules(eigh_p, _eigh_jvp, _eigh_vjp)

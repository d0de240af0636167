"""Gradients of ``tp.linalg`` against finite differences (``tenpy_ad.testing.check_grads``)
and closed forms: gauge-invariant losses of svd, qr and eigh, first and second order,
square/tall/wide, float64/complex128; eager == traced is checked by
``check_grads(eager=True)``.  Degenerate spectra: ``test_svd_degenerate.py``.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.testing import check_grads

from linalg_cases import DTYPES, SHAPES, case_ids, random_array, svd
from differential import check_source
from modes import GRAD_MODES, grad_in


pytestmark = pytest.mark.usefixtures("restore_linalg_config")


def svd_values(x):
    return svd(x)[1]


def svd_reconstruction(x):
    u, s, vh = svd(x)
    return (u * s) @ vh


def svd_left_projector(x):
    u = svd(x)[0][:, :2]
    return u @ tp.conj(u).T


def svd_right_projector(x):
    vh = svd(x)[2][:2]
    return tp.conj(vh).T @ vh


def svd_abs_u_squared(x):
    return tp.abs(svd(x)[0]) ** 2


def svd_abs_vh_squared(x):
    return tp.abs(svd(x)[2]) ** 2


def svd_full_matrices_square(x):
    u, s, vh = svd(x, full_matrices=True)
    return (u * s) @ vh + tp.abs(u) ** 2 * s[0]


def qr_q(x):
    return tp.linalg.qr(x)[0]


def qr_r(x):
    return tp.linalg.qr(x)[1]


def eigh_values(x):
    return tp.linalg.eigh(x)[0]


def eigh_projector(x):
    v = tp.linalg.eigh(x)[1][:, :2]
    return v @ tp.conj(v).T


def eigh_abs_v_squared(x):
    return tp.abs(tp.linalg.eigh(x)[1]) ** 2


def eigh_reconstruction(x):
    w, v = tp.linalg.eigh(x)
    return (v * w) @ tp.conj(v).T


SVD_LOSSES = [svd_values, svd_reconstruction, svd_left_projector, svd_right_projector,
              svd_abs_u_squared, svd_abs_vh_squared]
QR_LOSSES = [qr_q, qr_r]
EIGH_LOSSES = [eigh_values, eigh_projector, eigh_abs_v_squared, eigh_reconstruction]

FIRST_ORDER = ([(f, s) for f in SVD_LOSSES + QR_LOSSES for s in SHAPES]
               + [(f, (4, 4)) for f in EIGH_LOSSES] + [(svd_full_matrices_square, (4, 4))])
SECOND_ORDER = ([(f, s) for f in (svd_values, svd_left_projector, svd_right_projector, qr_q,
                                  qr_r) for s in SHAPES]
                + [(eigh_values, (4, 4)), (eigh_projector, (4, 4))])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn,shape", FIRST_ORDER, ids=case_ids(FIRST_ORDER))
def test_gradients_first_order(fn, shape, dtype, rng):
    check_grads(fn, [random_array(rng, shape, dtype)], order=1, rng=rng, eager=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn,shape", SECOND_ORDER, ids=case_ids(SECOND_ORDER))
def test_gradients_second_order(fn, shape, dtype, rng):
    check_grads(fn, [random_array(rng, shape, dtype)], order=2, rng=rng, eager=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_values_gradient_closed_form(dtype, rng):
    """d(sum s)/dA = U V^H and d(s_0)/dA = u_0 v_0^H for a generic rectangular matrix."""
    a = random_array(rng, (5, 3), dtype)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    for mode in GRAD_MODES:
        np.testing.assert_allclose(grad_in(mode, lambda x: svd(x)[1].sum(), a), u @ vh,
                                   atol=1e-12)
        np.testing.assert_allclose(grad_in(mode, lambda x: svd(x)[1][0], a),
                                   np.outer(u[:, 0], vh[0]), atol=1e-12)


@pytest.mark.parametrize("contraction", [
    'xp.einsum("i,ijk->jk", x[0], xp.reshape(x, (4, 2, 2)))',
    "xp.tensordot(x[0], xp.reshape(x, (4, 2, 2)), axes=1)"])
def test_qr_of_a_matrix_made_of_two_operands_of_one_input_in_every_mode(contraction):
    """The traced gradients were wrong (6-110 %): the cotangent of the contraction, an
    outer product with a column-major operand (LAPACK's), went through a C gemm kernel
    that read that operand as row-major.  Every mode and derivative route, against
    central differences (``tests/differential.py``)."""
    source = f"""def program(xp, sp, lx, x):
        a = {contraction}
        q, r = xp.linalg.qr(a)
        return (q, r)
    """
    checked = check_source(source, {"x": np.random.default_rng(3).standard_normal((4, 4))})
    assert {"gradients", "fd directional derivative", "fd Hessian-vector product"} <= set(
        checked)

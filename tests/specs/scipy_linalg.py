"""Spec entries of tp.scipy.linalg's own primitives: lu (square, tall, wide, a stack; its
tie check is reached by the derivatives), the pivot matrix of lu_solve, and the primary
matrix functions sqrtm, logm, fractional_matrix_power (on matrices whose eigenvalues are
away from the branch cut: ``0.3 x + 2 I``)."""
import numpy as np

import tenpy_ad as tp

from .table import Spec

L = tp.scipy.linalg


def _factors(x):
    p, l, u = L.lu(x)
    return tp.sum(l * l, axis=-1, keepdims=True) + u[..., :1, :] * 2.0


def _factors_wide(x):
    p, l, u = L.lu(x)
    return l * 3.0 + tp.sum(u * u, axis=-1, keepdims=True)


def _solved(x, b):
    return L.lu_solve(L.lu_factor(x), b, trans=2) + L.lu_solve(L.lu_factor(x), b)


def _away_from_cut(x):
    return x * 0.3 + 2.0 * np.eye(x.shape[-1])


SPECS = [
    Spec("scipy_lu", lambda x: L.lu(x)[1] + L.lu(x)[2], ((4, 4),)),
    Spec("scipy_lu_tall", _factors, ((5, 3),)),
    Spec("scipy_lu_wide", _factors_wide, ((3, 5),)),
    Spec("scipy_lu_stack", lambda x: L.lu(x)[1] * 2.0 + L.lu(x)[2], ((2, 3, 3),)),
    Spec("scipy_lu_factor_solve", _solved, ((3, 3), (3, 2))),
    Spec("scipy_sqrtm", lambda x: L.sqrtm(_away_from_cut(x)), ((3, 3),)),
    Spec("scipy_sqrtm_stack", lambda x: L.sqrtm(_away_from_cut(x)), ((2, 2, 2),)),
    Spec("scipy_logm", lambda x: L.logm(_away_from_cut(x)), ((3, 3),)),
    Spec("scipy_fractional_matrix_power",
         lambda x: L.fractional_matrix_power(_away_from_cut(x), 0.3), ((3, 3),)),
]

"""Single precision through ``tp.linalg``: float32 and complex64 inputs give NumPy's
output dtypes, values close to double precision, and gradients (eager and traced) of the
input's dtype that agree with the double-precision ones.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp

from linalg_cases import random_array
from modes import GRAD_MODES, grad_in, run


pytestmark = pytest.mark.usefixtures("restore_linalg_config")

SINGLE = {"float32": "float64", "complex64": "complex128"}


def _svd(x):
    u, s, vh = tp.linalg.svd(x)
    return tp.abs(u[..., :2]) ** 2 @ tp.abs(vh[..., :2, :]) ** 2 * s[..., :1, None]


def _qr(x):
    q, r = tp.linalg.qr(x)
    return q @ (r * r)


def _eigh(x):
    w, v = tp.linalg.eigh(x)
    return tp.abs(v) ** 2 * w[..., None, :]


def _eig(x):
    w, v = tp.linalg.eig(x)
    return tp.abs(v) ** 2 + tp.real(w * w)[..., None, :]


CASES = [
    ("svd", _svd, (5, 4)), ("qr", _qr, (4, 3)), ("qr_wide", _qr, (3, 4)),
    ("eigh", _eigh, (4, 4)), ("eig", _eig, (2, 3, 3)),
    ("solve", lambda x: tp.linalg.solve(x, x[..., :2] + 1.0), (4, 4)),
    ("inv", tp.linalg.inv, (3, 3)), ("det", tp.linalg.det, (2, 3, 3)),
    ("slogdet", lambda x: tp.linalg.slogdet(x)[1], (3, 3)),
    ("cholesky", lambda x: tp.linalg.cholesky(x * 0.2 + np.eye(3, dtype=np.float32) * 3),
     (3, 3)),
    ("pinv", tp.linalg.pinv, (4, 3)), ("expm", tp.linalg.expm, (3, 3)),
    ("norm_nuc", lambda x: tp.linalg.norm(x, "nuc"), (3, 4)),
    ("norm_2", lambda x: tp.linalg.norm(x, 2), (3, 4)),
]


@pytest.mark.parametrize("dtype", list(SINGLE))
@pytest.mark.parametrize("name,fn,shape", CASES, ids=[c[0] for c in CASES])
def test_single_precision(name, fn, shape, dtype, rng):
    a = random_array(rng, shape, dtype)
    double = a.astype(SINGLE[dtype])
    reference = run(fn, "numpy", double)
    for mode in ("numpy", "eager", "traced"):
        got = run(fn, mode, a)
        assert got.dtype.kind == reference.dtype.kind        # single precision of it
        assert got.dtype.itemsize == reference.dtype.itemsize // 2
        np.testing.assert_allclose(got, reference, rtol=2e-4, atol=2e-4)
    weights = random_array(rng, reference.shape, reference.dtype.name)

    def loss(x):
        return tp.real(fn(x) * weights).sum()

    expected = grad_in("traced", loss, double)
    for mode in GRAD_MODES:
        g = grad_in(mode, loss, a)
        assert g.dtype == a.dtype
        np.testing.assert_allclose(g, expected, rtol=2e-3, atol=2e-3)

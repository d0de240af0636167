"""``tp.linalg`` forward values follow NumPy (svd, qr, eigh, solve, norm: values, shapes,
dtypes, orthonormality, reconstruction), with plain ndarrays, eager tensors and traced
placeholders (``modes.run``).
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp

from linalg_cases import (DTYPES, MODES, SHAPE_IDS, SHAPES, assert_orthonormal_columns,
                          hermitian, random_array)
from modes import run


pytestmark = pytest.mark.usefixtures("restore_linalg_config")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_svd_forward(mode, dtype, shape, rng):
    a = random_array(rng, shape, dtype)
    m, n = shape
    k = min(m, n)
    u, s, vh = run(tp.linalg.svd, mode, a)
    assert u.shape == (m, k) and s.shape == (k,) and vh.shape == (k, n)
    assert u.dtype == a.dtype and vh.dtype == a.dtype and s.dtype == np.float64
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-12, atol=1e-13)
    assert np.all(np.diff(s) <= 0) and s[-1] > 0
    assert_orthonormal_columns(u)
    assert_orthonormal_columns(vh.conj().T)
    np.testing.assert_allclose((u * s) @ vh, a, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_svd_full_matrices_forward(mode, shape, rng):
    a = random_array(rng, shape, "complex128")
    m, n = shape
    k = min(m, n)
    u, s, vh = run(lambda x: tp.linalg.svd(x, full_matrices=True), mode, a)
    assert u.shape == (m, m) and s.shape == (k,) and vh.shape == (n, n)
    assert_orthonormal_columns(u)
    assert_orthonormal_columns(vh.conj().T)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose((u[:, :k] * s) @ vh[:k], a, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_qr_forward(mode, dtype, shape, rng):
    a = random_array(rng, shape, dtype)
    m, n = shape
    k = min(m, n)
    q, r = run(tp.linalg.qr, mode, a)
    assert q.shape == (m, k) and r.shape == (k, n)
    assert q.dtype == a.dtype and r.dtype == a.dtype
    assert_orthonormal_columns(q)
    assert np.all(np.tril(r, -1) == 0)
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    q_np, r_np = np.linalg.qr(a)                    # the same conventions (signs) as NumPy
    np.testing.assert_allclose(q, q_np, atol=1e-12)
    np.testing.assert_allclose(r, r_np, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_forward(mode, dtype, rng):
    h = hermitian(rng, 5, dtype)
    w, v = run(tp.linalg.eigh, mode, h)
    w_np = np.linalg.eigh(h)[0]
    assert w.shape == (5,) and v.shape == (5, 5)
    assert w.dtype == np.float64 and v.dtype == h.dtype
    np.testing.assert_allclose(w, w_np, rtol=1e-12, atol=1e-13)
    assert np.all(np.diff(w) > 0)
    assert_orthonormal_columns(v)
    np.testing.assert_allclose((v * w) @ v.conj().T, h, atol=1e-12)
    # a non-Hermitian input: symmetrize_input=True decomposes (a + a^H)/2; by default only
    # the lower triangle is read, as NumPy does (test_linalg_eigh_uplo.py)
    a = random_array(rng, (5, 5), dtype)
    w2, _ = run(lambda x: tp.linalg.eigh(x, symmetrize_input=True), mode, a)
    np.testing.assert_allclose(w2, np.linalg.eigh((a + a.conj().T) / 2)[0], atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rhs_shape", [(4,), (4, 3)], ids=["vector", "matrix"])
def test_solve_forward(mode, dtype, rhs_shape, rng):
    a = random_array(rng, (4, 4), dtype) + 4 * np.eye(4)
    b = random_array(rng, rhs_shape, dtype)
    x = run(tp.linalg.solve, mode, a, b)
    assert x.shape == rhs_shape and x.dtype == a.dtype
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(a @ x, b, atol=1e-12)


NORM_CASES = [
    ((5,), {}), ((5,), {"ord": 1}), ((5,), {"ord": 2}), ((5,), {"ord": np.inf}),
    ((5,), {"ord": 2, "keepdims": True}),
    ((3, 4), {}), ((3, 4), {"ord": "fro"}), ((3, 4), {"ord": "nuc"}), ((3, 4), {"ord": 2}),
    ((4, 3), {"ord": 2}), ((3, 4), {"ord": "nuc", "keepdims": True}),
    ((3, 4), {"ord": "fro", "axis": (0, 1)}), ((3, 4), {"axis": 0}), ((3, 4), {"axis": -1}),
    ((3, 4), {"ord": 1, "axis": 1}), ((3, 4), {"ord": np.inf, "axis": 0}),
    ((3, 4), {"ord": 2, "axis": 1}), ((3, 4), {"axis": 1, "keepdims": True}),
    ((2, 3, 4), {}), ((2, 3, 4), {"axis": (0, 2)}), ((2, 3, 4), {"ord": 1, "axis": -1}),
    ((2, 3, 4), {"axis": (2, 0), "keepdims": True}),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,kwargs", NORM_CASES,
                         ids=[f"{'x'.join(map(str, s))}-{k}" for s, k in NORM_CASES])
def test_norm_forward(mode, dtype, shape, kwargs, rng):
    a = random_array(rng, shape, dtype)
    expected = np.linalg.norm(a, **kwargs)
    got = run(lambda x: tp.linalg.norm(x, **kwargs), mode, a)
    assert got.shape == np.shape(expected)
    assert not np.iscomplexobj(got)
    np.testing.assert_allclose(got, expected, rtol=1e-12)

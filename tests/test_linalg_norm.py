"""``tp.linalg.norm`` for every ``ord`` NumPy accepts: vector p-norms for any p (and 0,
inf, -inf), matrix norms ('fro', 'nuc', 1, -1, 2, -2, inf, -inf) along any pair of axes,
on stacks, with ``keepdims``; the values are NumPy's in every mode, and invalid orders
fail as NumPy's do.  Gradients: the spec table (``tests/specs/linalg_breadth.py``).
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp

from linalg_cases import DTYPES, MODES, random_array
from modes import GRAD_MODES, grad_in, run


pytestmark = pytest.mark.usefixtures("restore_linalg_config")

VECTOR_ORDERS = [None, 0, 1, 2, 3, 0.5, -1, -2.5, np.inf, -np.inf]
MATRIX_ORDERS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]

CASES = (
    [((6,), {"ord": p}) for p in VECTOR_ORDERS]
    + [((3, 4), {"ord": p, "axis": 1}) for p in VECTOR_ORDERS]
    + [((3, 4), {"ord": p}) for p in MATRIX_ORDERS]
    + [((2, 3, 4), {"ord": p, "axis": (2, 0)}) for p in MATRIX_ORDERS]
    + [((2, 3, 4), {"ord": p, "axis": (-2, -1), "keepdims": True}) for p in MATRIX_ORDERS]
    + [((2, 3, 4), {}), ((2, 3, 4), {"keepdims": True}), ((), {}),
       ((2, 3, 4), {"ord": 3, "axis": -1, "keepdims": True})]
)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")   # p < 0 at a zero, as NumPy
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,kwargs", CASES, ids=[f"{'x'.join(map(str, s))}-{k}"
                                                    for s, k in CASES])
def test_norm_is_numpys(shape, kwargs, dtype, mode, rng):
    a = random_array(rng, shape, dtype)
    if shape:
        a.flat[0] = 0.0                     # ord=0 counts non-zero entries
    expected = np.linalg.norm(a, **kwargs)
    got = run(lambda x: tp.linalg.norm(x, **kwargs), mode, a)
    assert got.shape == np.shape(expected) and got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


INVALID = [
    ((5,), {"ord": "fro"}), ((5,), {"ord": "nuc"}), ((3, 4), {"ord": 3}),
    ((3, 4), {"ord": "bad"}), ((2, 3, 4), {"ord": 2}), ((2, 3, 4), {"axis": (0, 1, 2)}),
    ((3, 4), {"axis": (1, 1)}), ((3, 4), {"axis": 2}),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape,kwargs", INVALID, ids=[f"{'x'.join(map(str, s))}-{k}"
                                                      for s, k in INVALID])
def test_invalid_orders_and_axes_fail_as_numpys(shape, kwargs, mode):
    with pytest.raises(ValueError):
        np.linalg.norm(np.ones(shape), **kwargs)
    with pytest.raises(ValueError):
        run(lambda x: tp.linalg.norm(x, **kwargs), mode, np.ones(shape))


@pytest.mark.parametrize("mode", GRAD_MODES)
def test_norm_gradients_closed_forms(mode, rng):
    """d|x|_p = sign(x) |x|^(p-1) / |x|_p^(p-1); the nuclear norm's is u v^H."""
    x = random_array(rng, (5,))
    p = 3.0
    expected = np.sign(x) * np.abs(x) ** (p - 1) / np.linalg.norm(x, p) ** (p - 1)
    np.testing.assert_allclose(grad_in(mode, lambda v: tp.linalg.norm(v, p), x), expected,
                               rtol=1e-12)
    a = random_array(rng, (2, 4, 3), "complex128")
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    g = grad_in(mode, lambda m: tp.linalg.norm(m, "nuc", axis=(1, 2)).sum(), a)
    np.testing.assert_allclose(g, u @ vh, atol=1e-12)

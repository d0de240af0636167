"""``tp.linalg.eigh(a, UPLO)`` / ``eigvalsh`` are NumPy's functions: only the ``UPLO``
triangle of ``a`` (and the real part of its diagonal) is read, also on non-Hermitian input,
and the derivative is that of exactly this function of ``a``.  ``symmetrize_input=True``
keeps the symmetrising form ``eigh((a + a^H)/2)``.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp

from linalg_cases import DTYPES, MODES, random_array
from modes import GRAD_MODES, grad_in, run


pytestmark = pytest.mark.usefixtures("restore_linalg_config")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_equals_numpy_on_non_hermitian_input(uplo, dtype, mode, rng):
    a = random_array(rng, (5, 5), dtype)
    w, v = run(lambda x: tp.linalg.eigh(x, uplo), mode, a)
    w_np, v_np = np.linalg.eigh(a, uplo)
    np.testing.assert_allclose(w, w_np, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(v, v_np, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(run(lambda x: tp.linalg.eigvalsh(x, UPLO=uplo), mode, a), w_np,
                               rtol=1e-12, atol=1e-12)


def _triangle_weights(uplo, n):
    """W: ones strictly inside the read triangle, 1/2 on the diagonal."""
    ones = np.ones((n, n))
    return (np.tril(ones, -1) if uplo == "L" else np.triu(ones, 1)) + np.eye(n) / 2


@pytest.mark.parametrize("mode", GRAD_MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_gradient_is_that_of_the_triangle(uplo, dtype, mode, rng):
    """sum(w^2) = tr(h^2) with h the Hermitian matrix LAPACK reads: its gradient lives on
    the read triangle (4 h there, 2 Re h on the diagonal) and is 0 on the other one."""
    a = random_array(rng, (4, 4), dtype)
    h = np.tril(a, -1) if uplo == "L" else np.triu(a, 1)
    h = h + h.conj().T + np.diag(np.diag(a).real)
    g = grad_in(mode, lambda x: (tp.linalg.eigvalsh(x, uplo) ** 2).sum(), a)
    np.testing.assert_allclose(g, 4 * h * _triangle_weights(uplo, 4), atol=1e-12)
    g_trace = grad_in(mode, lambda x: tp.linalg.eigh(x, uplo)[0].sum(), a)
    np.testing.assert_allclose(g_trace, np.eye(4), atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_symmetrize_input_keeps_the_symmetrising_form(dtype, mode, rng):
    a = random_array(rng, (4, 4), dtype)
    w = run(lambda x: tp.linalg.eigh(x, symmetrize_input=True)[0], mode, a)
    np.testing.assert_allclose(w, np.linalg.eigvalsh((a + a.conj().T) / 2), atol=1e-12)
    if mode != "numpy":
        g = grad_in(mode, lambda x: (tp.linalg.eigh(x, symmetrize_input=True)[0] ** 2).sum(), a)
        np.testing.assert_allclose(g, a + a.conj().T, atol=1e-12)     # d tr(s^2) = 2 s


@pytest.mark.parametrize("mode", MODES)
def test_eigh_rejects_other_uplo(mode):
    with pytest.raises(ValueError, match="UPLO"):
        run(lambda x: tp.linalg.eigh(x, "X"), mode, np.eye(3))

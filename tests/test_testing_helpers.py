"""The helpers of ``tenpy_ad.testing`` the other tests lean on: ``numerical_gradient``
against closed forms (real and complex, in the engine's gradient convention) and
``random_array``'s draws."""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ArgumentError
from tenpy_ad.testing import numerical_gradient, random_array, random_like


def test_numerical_gradient_of_a_cubic_is_its_closed_form():
    x = np.array([[-1.5, 0.25], [2.0, 0.7]])
    got = numerical_gradient(lambda z: float(np.sum(z ** 3)), x)
    np.testing.assert_allclose(got, 3 * x ** 2, rtol=1e-9)   # error eps^2 * |f'''| ~ 1e-12
    assert got.dtype == np.float64 and got.shape == (2, 2)


def test_numerical_gradient_takes_integer_input_as_float64():
    got = numerical_gradient(lambda z: float(np.sum(np.sin(z))), np.array([0, 1, 2]))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.cos([0.0, 1.0, 2.0]), rtol=1e-9)


def test_numerical_gradient_of_a_complex_input_is_d_re_plus_i_d_im():
    """L(z) = sum(w |z|^2 + Re(c z)) = sum(w (x^2 + y^2) + Re(c) x - Im(c) y):
    dL/dx + i dL/dy = 2 w z + conj(c)."""
    rng = np.random.default_rng(3)
    z = random_array(rng, (3, 2), "complex128")
    w, c = rng.uniform(0.5, 2.0, (3, 2)), random_array(rng, (3, 2), "complex128")
    loss = lambda v: float(np.sum(w * np.abs(v) ** 2 + np.real(c * v)))   # noqa: E731
    got = numerical_gradient(loss, z)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, 2 * w * z + np.conj(c), rtol=1e-8)


def test_numerical_gradient_matches_the_engines_convention():
    """For complex inputs the engine's gradient (tp.grad) and the helper's agree."""
    z = random_array(7, (4,), "complex128")
    loss = lambda v: tp.numpy.sum(tp.numpy.abs(v) ** 3)       # noqa: E731
    np.testing.assert_allclose(numerical_gradient(loss, z), tp.grad(loss)(z), rtol=1e-7)


def test_numerical_gradient_keeps_its_step():
    """A quadratic's central difference is exact whatever the step: the result does not
    depend on eps; a cubic's error is eps^2 (so eps is the step used)."""
    x = np.array([0.3])
    for eps in (1e-3, 1e-1):
        np.testing.assert_allclose(numerical_gradient(lambda z: float(z[0] ** 2), x, eps),
                                   [0.6], rtol=1e-12)
    np.testing.assert_allclose(numerical_gradient(lambda z: float(z[0] ** 3), x, eps=0.1),
                               [3 * 0.09 + 0.01], rtol=1e-12)


def test_numerical_gradient_refuses_a_complex_or_array_value():
    with pytest.raises(ArgumentError, match="numerical_gradient: f must return a real"):
        numerical_gradient(lambda z: complex(z[0]), np.array([1.0]))
    with pytest.raises(ArgumentError, match="numerical_gradient: f must return a real"):
        numerical_gradient(lambda z: z * 2, np.array([1.0, 2.0]))


def test_random_array_is_seeded_and_draws_real_parts_first():
    a = random_array(5, (2, 3), "complex128")
    np.testing.assert_array_equal(a, random_array(np.random.default_rng(5), (2, 3),
                                                  "complex128"))
    rng = np.random.default_rng(5)
    real, imag = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    np.testing.assert_array_equal(a, real + 1j * imag)
    assert random_array(5, 4, "float32").dtype == np.float32
    np.testing.assert_array_equal(random_like(np.random.default_rng(5), a), a)

"""``inv``, ``det``, ``slogdet``, ``cholesky``, ``pinv``, ``lstsq``, ``matrix_power``,
``multi_dot``, ``expm``, ``svdvals``: NumPy's (SciPy's) values in every mode, closed-form
gradients, and eager == traced == function transform.  Finite-difference, adjoint and
second-order checks of each: the spec table (``tests/specs/linalg_breadth.py``).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import tenpy_ad as tp

from linalg_cases import DTYPES, MODES, random_array
from modes import GRAD_MODES, check_modes, grad_in, run


pytestmark = pytest.mark.usefixtures("restore_linalg_config")


def _lower_read(a):
    """The Hermitian matrix NumPy's cholesky reads from the lower triangle of ``a``."""
    lower = np.tril(a, -1)
    return lower + lower.conj().T + np.diag(np.diag(a).real)


FORWARD = [
    ("inv", tp.linalg.inv, np.linalg.inv, (4, 4)),
    ("det", tp.linalg.det, np.linalg.det, (4, 4)),
    ("slogdet_sign", lambda x: tp.linalg.slogdet(x)[0], lambda a: np.linalg.slogdet(a)[0],
     (4, 4)),
    ("slogdet_log", lambda x: tp.linalg.slogdet(x)[1], lambda a: np.linalg.slogdet(a)[1],
     (4, 4)),
    ("cholesky", lambda x: tp.linalg.cholesky(x * 0.3 + 4 * np.eye(4)),
     lambda a: np.linalg.cholesky(a * 0.3 + 4 * np.eye(4)), (4, 4)),
    ("cholesky_upper", lambda x: tp.linalg.cholesky(x * 0.3 + 4 * np.eye(4), upper=True),
     lambda a: np.linalg.cholesky(a * 0.3 + 4 * np.eye(4), upper=True), (4, 4)),
    ("pinv_tall", tp.linalg.pinv, np.linalg.pinv, (5, 3)),
    ("pinv_wide_rtol", lambda x: tp.linalg.pinv(x, rtol=0.3),
     lambda a: np.linalg.pinv(a, rtol=0.3), (3, 5)),
    ("pinv_rtol_none", lambda x: tp.linalg.pinv(x, rtol=None),
     lambda a: np.linalg.pinv(a, rtol=None), (2, 3, 5)),
    ("pinv_hermitian", lambda x: tp.linalg.pinv(x, hermitian=True),
     lambda a: np.linalg.pinv(_lower_read(a), hermitian=True), (4, 4)),
    ("matrix_power_5", lambda x: tp.linalg.matrix_power(x, 5),
     lambda a: np.linalg.matrix_power(a, 5), (2, 3, 3)),
    ("matrix_power_0", lambda x: tp.linalg.matrix_power(x, 0),
     lambda a: np.linalg.matrix_power(a, 0), (3, 3)),
    ("matrix_power_minus_2", lambda x: tp.linalg.matrix_power(x, -2),
     lambda a: np.linalg.matrix_power(a, -2), (3, 3)),
    ("expm", tp.linalg.expm, scipy.linalg.expm, (2, 4, 4)),
    ("svdvals", tp.linalg.svdvals, lambda a: np.linalg.svd(a, compute_uv=False), (2, 3, 5)),
    ("svd_compute_uv_false", lambda x: tp.linalg.svd(x, compute_uv=False),
     lambda a: np.linalg.svd(a, compute_uv=False), (4, 3)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn,ref,shape", FORWARD, ids=[c[0] for c in FORWARD])
def test_forward_is_numpys(name, fn, ref, shape, dtype, mode, rng):
    a = random_array(rng, shape, dtype)
    expected = np.asarray(ref(a.copy()))
    got = run(fn, mode, a)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_cholesky_reads_one_triangle(rng):
    """Like NumPy: the other triangle is never read (also not by the derivative)."""
    a = random_array(rng, (4, 4), "complex128") * 0.3 + 4 * np.eye(4)
    np.testing.assert_allclose(np.asarray(tp.linalg.cholesky(tp.tensor(a))),
                               np.linalg.cholesky(_lower_read(a)), atol=1e-12)
    g = grad_in("eager", lambda x: tp.abs(tp.linalg.cholesky(x)).sum(), a)
    assert np.all(np.triu(g, 1) == 0)
    g = grad_in("eager", lambda x: tp.abs(tp.linalg.cholesky(x, upper=True)).sum(), a)
    assert np.all(np.tril(g, -1) == 0)


#: (name, real loss, closed-form gradient of the loss at ``a``)
CLOSED_FORMS = [
    ("logabsdet", lambda x: tp.linalg.slogdet(x)[1],
     lambda a: np.linalg.inv(a).conj().T),
    ("det_real_part", lambda x: tp.real(tp.linalg.det(x)),
     lambda a: np.conj(np.linalg.det(a) * np.linalg.inv(a).T)),
    ("inv_trace", lambda x: tp.real(tp.einsum("ii->", tp.linalg.inv(x))),
     lambda a: -np.conj(np.linalg.inv(a) @ np.linalg.inv(a)).T),
    ("pinv_trace", lambda x: tp.real(tp.einsum("ii->", tp.linalg.pinv(x))),
     lambda a: -np.conj(np.linalg.inv(a) @ np.linalg.inv(a)).T),
    ("expm_trace", lambda x: tp.real(tp.einsum("ii->", tp.linalg.expm(x))),
     lambda a: np.conj(scipy.linalg.expm(a)).T),
]


@pytest.mark.parametrize("mode", GRAD_MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,loss,gradient", CLOSED_FORMS, ids=[c[0] for c in CLOSED_FORMS])
def test_closed_form_gradients(name, loss, gradient, dtype, mode, rng):
    a = random_array(rng, (4, 4), dtype) + 2 * np.eye(4)
    np.testing.assert_allclose(grad_in(mode, loss, a), gradient(a), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_expm_derivative_is_the_frechet_derivative(dtype, rng):
    """The JVP equals SciPy's ``expm_frechet`` to rounding (the block identity is exact)."""
    a, e = random_array(rng, (5, 5), dtype), random_array(rng, (5, 5), dtype)
    x = tp.input(a.shape, a.dtype)
    (jv,) = tp.ad.jvp([tp.scipy.linalg.expm(x)], [x], [e])
    expected = scipy.linalg.expm_frechet(a, e, compute_expm=False)
    np.testing.assert_allclose(tp.evaluate(jv, {x: a}), expected, rtol=1e-12, atol=1e-12)
    assert tp.scipy.linalg.expm(x) is tp.linalg.expm(x)        # the same (interned) node


@pytest.mark.parametrize("mode", GRAD_MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_expm_gradient_holds_for_a_cotangent_far_larger_than_the_matrix(dtype, mode, rng):
    """A cotangent 1e40 times the matrix (an exp downstream) would set the scaling of the
    block ``[[a^H, g], [0, a^H]]`` and swamp ``a`` in rounding (a gradient off by 20%
    and more, silently); it is scaled to ``a`` first.  Truth: SciPy's ``expm_frechet``."""
    a = random_array(rng, (4, 4), dtype)
    g = 1e40 * random_array(rng, (4, 4), dtype)
    got = grad_in(mode, lambda x: tp.sum(tp.real(tp.conj(g) * tp.scipy.linalg.expm(x))), a)
    expected = scipy.linalg.expm_frechet(a.conj().T, g, compute_expm=False)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=0)


@pytest.mark.parametrize("name", ["expm", "logm", "sqrtm"])
def test_matrix_functions_under_an_exponential_match_central_differences(name, rng):
    """The composite the differential fuzzer found (``exp2(expm(...))``, values ~1e48):
    gradient and JVP equal central differences for each block-identity function."""
    a = np.eye(3) * 2.0 + 0.1 * rng.standard_normal((3, 3)) + 0.1j * rng.standard_normal((3, 3))
    w, v = (rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)) for _ in range(2))
    f_tp, f_np = getattr(tp.scipy.linalg, name), getattr(scipy.linalg, name)
    def loss(x):
        return tp.sum(tp.real(w * tp.exp2(f_tp(x) * 60.0)))
    def reference(x):
        return np.sum(np.real(w * np.exp2(f_np(x) * 60.0)))
    h = 1e-6
    expected = (reference(a + h * v) - reference(a - h * v)) / (2 * h)
    gradient = np.asarray(tp.grad(loss)(a))
    _, directional = tp.jvp(loss, (a,), (v,))
    np.testing.assert_allclose(np.real(np.vdot(gradient, v)), expected, rtol=1e-6)
    np.testing.assert_allclose(float(directional), expected, rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("b_shape", [(6,), (6, 2)], ids=["vector", "matrix"])
@pytest.mark.parametrize("a_shape", [(6, 3), (3, 6)], ids=["tall", "wide"])
def test_lstsq_returns_numpys_tuple(a_shape, b_shape, dtype, rng):
    a = random_array(rng, a_shape, dtype)
    b = random_array(rng, (a_shape[0],) + b_shape[1:], dtype)
    expected = np.linalg.lstsq(a, b)
    for mode in MODES:
        x, residuals, rank, s = run(tp.linalg.lstsq, mode, a, b)
        np.testing.assert_allclose(x, expected[0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(residuals, expected[1], rtol=1e-10, atol=1e-12)
        assert residuals.shape == expected[1].shape and rank == expected[2]
        np.testing.assert_allclose(s, expected[3], rtol=1e-12)


def test_lstsq_rank_deficient_solution_is_the_minimum_norm_one(rng):
    a = random_array(rng, (6, 2)) @ random_array(rng, (2, 4))          # rank 2
    b = random_array(rng, (6,))
    x, residuals, rank, s = run(tp.linalg.lstsq, "eager", a, b)
    np.testing.assert_allclose(x, np.linalg.lstsq(a, b)[0], atol=1e-12)
    assert rank == 2 and residuals.shape == (1,)    # NumPy: () -- the rank is not static


@pytest.mark.parametrize("mode", MODES)
def test_multi_dot_is_numpys(mode, rng):
    arrays = [random_array(rng, s) for s in ((4,), (4, 6), (6, 2), (2, 3), (3,))]
    check_modes(lambda *xs: tp.linalg.multi_dot(xs), *arrays,
                ref=lambda *xs: np.linalg.multi_dot(xs), modes=(mode,))
    mats = arrays[1:4]
    check_modes(lambda *xs: tp.linalg.multi_dot(xs), *mats,
                ref=lambda *xs: np.linalg.multi_dot(xs), modes=(mode,))


def test_multi_dot_picks_the_cheapest_order():
    """(10x100)(100x5)(5x50): (AB)C costs 7500 multiplications, A(BC) 75000."""
    xs = [tp.input(s) for s in ((10, 100), (100, 5), (5, 50))]
    out = tp.linalg.multi_dot(xs)
    shapes = {tuple(n.shape) for n in tp.introspection.graph_nodes([out])
              if n.prim.name == "einsum"}
    assert shapes == {(10, 5), (10, 50)}


@pytest.mark.parametrize("mode", MODES)
def test_matrix_power_needs_an_integer(mode):
    with pytest.raises(TypeError, match="integer"):
        run(lambda x: tp.linalg.matrix_power(x, 1.5), mode, np.eye(2))


def _slogdet_product(x):
    sign, logabsdet = tp.linalg.slogdet(x)
    return sign * logabsdet


def _lstsq_loss(x):
    solution, residuals, rank, s = tp.linalg.lstsq(x, np.arange(5.0))
    return tp.abs(solution).sum() + residuals.sum()


EVERY_MODE = [
    ("cholesky", lambda x: tp.abs(tp.linalg.cholesky(x * 0.2 + 3 * np.eye(5))).sum()),
    ("lstsq", _lstsq_loss),
    ("matrix_power", lambda x: tp.abs(tp.linalg.matrix_power(x, -3)).sum()),
    ("multi_dot", lambda x: tp.abs(tp.linalg.multi_dot([x, x.T, x, x[0]])).sum()),
    ("svdvals", lambda x: (tp.linalg.svdvals(x[:, :4]) ** 3).sum()),
    ("eigvals", lambda x: tp.abs(tp.linalg.eigvals(x)).sum()),
    ("norm_minus_2", lambda x: tp.linalg.norm(x, -2)),
    ("slogdet", lambda x: tp.real(_slogdet_product(x) * (1 + 2j))),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,loss", EVERY_MODE, ids=[c[0] for c in EVERY_MODE])
def test_eager_traced_and_transform_agree(name, loss, dtype, rng):
    a = random_array(rng, (5, 5), dtype)
    traced = grad_in("traced", loss, a)
    assert np.all(np.isfinite(traced))
    for mode in ("eager", "transform"):
        np.testing.assert_allclose(grad_in(mode, loss, a), traced, rtol=1e-12, atol=1e-12)

"""``tp.linalg.eig`` / ``eigvals``: NumPy's values, order and normalisation (complex for
every input); gauge-invariant losses (|v|^2, eigenvalue functions, spectral projectors)
against finite differences, first and second order; a loss that depends on the phase of
an eigenvector raises ``GaugeError`` (or warns); degenerate and defective matrices give
finite gradients with the documented semantics (``tenpy_ad.ops.linalg.eig``).
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import GaugeError, GaugeWarning
from tenpy_ad.testing import check_grads, numerical_gradient

from linalg_cases import DTYPES, MODES, random_array
from modes import GRAD_MODES, grad_in, run


pytestmark = pytest.mark.usefixtures("restore_linalg_config")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_forward_is_numpys(mode, dtype, rng):
    a = random_array(rng, (5, 5), dtype)
    w, v = run(tp.linalg.eig, mode, a)
    w_np, v_np = np.linalg.eig(a)
    assert w.dtype == v.dtype == np.complex128
    np.testing.assert_allclose(w, w_np, rtol=1e-12, atol=1e-12)        # NumPy's order
    np.testing.assert_allclose(v, v_np, rtol=1e-12, atol=1e-12)        # and normalisation
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1.0, rtol=1e-12)
    np.testing.assert_allclose(a @ v, v * w, atol=1e-12)
    np.testing.assert_allclose(run(tp.linalg.eigvals, mode, a), w_np, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_eig_of_a_real_spectrum_is_complex(mode):
    """NumPy returns real arrays when the eigenvalues happen to be real; a tensor's dtype
    cannot depend on values, so tenpy_ad returns the same values as complex."""
    a = np.array([[2.0, 1.0], [0.0, 3.0]])
    w, v = run(tp.linalg.eig, mode, a)
    assert w.dtype == np.complex128 and np.linalg.eig(a)[0].dtype == np.float64
    np.testing.assert_array_equal(w, np.linalg.eig(a)[0])
    np.testing.assert_array_equal(v, np.linalg.eig(a)[1])


def eigenvalue_functions(x):
    w = tp.linalg.eigvals(x)
    return w * w + tp.abs(w)


def abs_v_squared(x):
    return tp.abs(tp.linalg.eig(x)[1]) ** 2


def spectral_projectors(x):
    """Each eigenvector times the matching row of v^-1, weighted by its eigenvalue."""
    w, v = tp.linalg.eig(x)
    return (v[:, :2] * w[:2]) @ tp.linalg.inv(v)[:2]


GAUGE_INVARIANT = [eigenvalue_functions, abs_v_squared, spectral_projectors]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", GAUGE_INVARIANT, ids=lambda f: f.__name__)
def test_gauge_invariant_losses_match_finite_differences(fn, dtype, rng):
    check_grads(fn, [random_array(rng, (4, 4), dtype)], order=2, rng=rng, eager=True)


@pytest.mark.parametrize("mode", GRAD_MODES)
def test_eigenvalue_sum_gradient_is_the_identity(mode, rng):
    """sum(w) = tr(a): the gradient of its real part is the identity in every mode."""
    a = random_array(rng, (4, 4), "complex128")
    g = grad_in(mode, lambda x: tp.real(tp.linalg.eigvals(x).sum()), a)
    np.testing.assert_allclose(g, np.eye(4), atol=1e-12)


def v_entry_real(x):
    """The real part of the first eigenvector's entries: changes with its phase."""
    return tp.real(tp.linalg.eig(x)[1][:, 0].sum())


def _complex_spectrum(rng, dtype):
    """A matrix whose first eigenvector is complex (for real dtypes: a complex pair)."""
    a = random_array(rng, (4, 4), dtype)
    if dtype == "float64":
        a[:2, :2] = [[0.0, 3.0], [-3.0, 0.0]]
    assert abs(np.linalg.eig(a)[1][:, 0].sum().imag) > 0.1
    return a


@pytest.mark.parametrize("dtype", DTYPES)
def test_phase_dependent_loss_raises(dtype, rng):
    a = _complex_spectrum(rng, dtype)
    t = tp.tensor(a, requires_grad=True)
    loss = v_entry_real(t)
    with pytest.raises(GaugeError, match="eig: .*phase.*eigenvectors"):
        loss.backward()
    x = tp.input(a.shape, a.dtype)
    program = tp.compile([tp.ad.grad(v_entry_real(x), x)], inputs=[x])
    with pytest.raises(GaugeError, match="eig"):
        program(a)


def _trace_of_exp_by_eig(x):
    """``tr(v diag(exp w) v^-1) = tr(expm(x))``: a function of the eigenvalues written with
    the eigenvectors, whose eigenvector cotangent is zero but for rounding."""
    w, v = np.linalg.eig(x)
    return np.real(np.trace(v @ np.diag(np.exp(w)) @ np.linalg.inv(v)))


@pytest.mark.parametrize("mode", GRAD_MODES)
def test_rounding_eigenvector_cotangent_is_not_a_phase_dependence(mode, rng):
    a = random_array(rng, (3, 3))
    expected = tp.scipy.linalg.expm(a).T             # d tr(expm(a)) / da
    np.testing.assert_allclose(grad_in(mode, _trace_of_exp_by_eig, a), expected, rtol=1e-10)


def test_phase_dependence_beside_a_large_eigenvalue_cotangent_raises(rng):
    a = _complex_spectrum(rng, "complex128")
    t = tp.tensor(a, requires_grad=True)
    loss = 100.0 * tp.real(tp.linalg.eigvals(t) ** 2).sum() + v_entry_real(t)
    with pytest.raises(GaugeError, match="eig"):
        loss.backward()


def test_phase_dependent_loss_warns_when_asked(rng, restore_linalg_config):
    restore_linalg_config.gauge_check = "warn"
    a = _complex_spectrum(rng, "complex128")
    t = tp.tensor(a, requires_grad=True)
    with pytest.warns(GaugeWarning, match="eig"):
        v_entry_real(t).backward()
    assert np.all(np.isfinite(np.asarray(t.grad)))


def _degenerate(rng):
    """s diag(1, 1, 2, 3) s^-1 for a well-conditioned s (eigenvalue 1 twice)."""
    s = random_array(rng, (4, 4)) + 4 * np.eye(4)
    return s @ np.diag([1.0, 1.0, 2.0, 3.0]) @ np.linalg.inv(s)


def _projector_numpy(a, target):
    """The spectral projector of the eigenvalues of ``a`` near ``target`` (NumPy)."""
    w, v = np.linalg.eig(a)
    pick = np.abs(w - target) < 0.5
    return (v[:, pick] @ np.linalg.inv(v)[pick]).real


_DEGENERATE = _degenerate(np.random.default_rng(5))


def _projector(target):
    """The spectral projector of the eigenvalues near ``target`` at ``_DEGENERATE`` (their
    positions in LAPACK's order are picked once, at that point)."""
    picked = np.flatnonzero(np.abs(np.linalg.eigvals(_DEGENERATE) - target) < 0.5)

    def loss(x):
        w, v = tp.linalg.eig(x)
        rows = tp.linalg.inv(v)
        return sum(tp.real(v[:, i:i + 1] @ rows[i:i + 1]) for i in picked)
    return loss


@pytest.mark.parametrize("mode", GRAD_MODES)
@pytest.mark.parametrize("target", [1.0, 3.0], ids=["degenerate-pair", "simple"])
def test_degenerate_spectrum_projectors_match_finite_differences(target, mode):
    """The projector onto a whole degenerate eigenspace, and onto a simple eigenvalue's
    eigenvector, are smooth: with broadening their gradients are finite and exact."""
    weights = np.random.default_rng(2).standard_normal((4, 4))
    loss = _projector(target)
    g = grad_in(mode, lambda x: (loss(x) * weights).sum(), _DEGENERATE)
    expected = numerical_gradient(
        lambda b: float((_projector_numpy(b, target) * weights).sum()), _DEGENERATE)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, expected, atol=1e-6)


@pytest.mark.parametrize("mode", GRAD_MODES)
def test_unequal_weights_of_a_degenerate_group_raise_naming_eig(mode, restore_linalg_config):
    """The eigenvalues of a degenerate non-Hermitian group split as the eigenvalues of the
    projected perturbation: ``c1 w1 + c2 w2`` with ``c1 != c2`` has no derivative there
    (LAPACK's split would be returned as one), so the VJP raises; symmetric functions of the
    group (its sum, a sum of squares) keep their exact derivatives."""
    unequal = np.array([0.3, -1.2, 0.7, 0.1])
    picked = np.flatnonzero(np.abs(np.linalg.eigvals(_DEGENERATE) - 1.0) < 0.5)
    assert picked.size == 2
    with pytest.raises(GaugeError, match="eig:.*symmetric functions"):
        grad_in(mode, lambda x: (tp.real(tp.linalg.eigvals(x)) * unequal).sum(),
                _DEGENERATE)
    equal = unequal.copy()
    equal[picked] = 0.5
    expected = numerical_gradient(
        lambda b: float((np.sort_complex(np.linalg.eigvals(b)).real * _sorted_weights(
            equal)).sum()), _DEGENERATE)
    g = grad_in(mode, lambda x: (tp.real(tp.linalg.eigvals(x)) * equal).sum(), _DEGENERATE)
    np.testing.assert_allclose(g, expected, atol=1e-6)
    restore_linalg_config.degeneracy_check = "warn"
    with pytest.warns(GaugeWarning, match="eig"):
        grad_in(mode, lambda x: (tp.real(tp.linalg.eigvals(x)) * unequal).sum(), _DEGENERATE)


def _sorted_weights(weights):
    """``weights`` (given in LAPACK's order at ``_DEGENERATE``) in sorted order."""
    return weights[np.argsort(np.linalg.eigvals(_DEGENERATE))]


@pytest.mark.parametrize("mode", GRAD_MODES)
def test_exact_degeneracy_broadening_and_eps_zero(mode):
    """Exactly equal eigenvalues: broadening sets the 0/0 terms to 0 (finite gradient);
    ``eps=0`` gives the plain formulas and NaN."""
    a = np.diag([1.0, 1.0, 2.0, 3.0])
    weights = np.arange(4.0)[:, None]
    for eps, finite in ((None, True), (0.0, False)):
        with np.errstate(invalid="ignore", divide="ignore"):
            g = grad_in(mode, lambda x: (tp.abs(tp.linalg.eig(x, eps=eps)[1]) ** 2
                                         * weights).sum(), a)
        assert np.all(np.isfinite(g)) == finite
    np.testing.assert_allclose(grad_in(mode, lambda x: tp.real(tp.linalg.eigvals(x) ** 2)
                                       .sum(), a), 2 * a, atol=1e-12)


@pytest.mark.parametrize("mode", GRAD_MODES)
def test_defective_matrix_gives_finite_gradients(mode):
    """A Jordan block: LAPACK returns parallel eigenvectors and equal eigenvalues.  The
    gradients are finite; the trace (the sum of the block's eigenvalues) keeps its exact
    derivative.  Slightly off the defective point (a similarity transform: LAPACK splits
    the pair by ~1e-8) symmetric functions of the pair are exact as well."""
    jordan = np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 5.0]])
    trace = lambda x: tp.real(tp.linalg.eigvals(x).sum())
    squares = lambda x: tp.real((tp.linalg.eigvals(x) ** 2).sum())
    vectors = lambda x: (tp.abs(tp.linalg.eig(x)[1]) ** 2 * np.arange(3.0)[:, None]).sum()
    for loss in (trace, squares):
        assert np.all(np.isfinite(grad_in(mode, loss, jordan)))
    # the eigenvectors of the defective pair have no derivative: refused, or broadened
    with pytest.raises(GaugeError, match="eig: the loss depends on the basis"):
        grad_in(mode, vectors, jordan)
    tp.linalg.config.degeneracy_check = "off"
    assert np.all(np.isfinite(grad_in(mode, vectors, jordan)))
    np.testing.assert_allclose(grad_in(mode, trace, jordan), np.eye(3), atol=1e-12)
    s = np.random.default_rng(0).standard_normal((3, 3)) + 3 * np.eye(3)
    near = s @ jordan @ np.linalg.inv(s)
    np.testing.assert_allclose(grad_in(mode, squares, near), 2 * near.T, atol=1e-7)

"""The complex gauge check of svd and eigh: a loss that depends on the arbitrary phase of
singular vectors / eigenvectors raises GaugeError (eager backward and compiled programs),
or warns with ``gauge_check = "warn"``, or stays silent with ``"off"``; phase-invariant
losses and real inputs never trigger it.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import GaugeError, GaugeWarning
from tenpy_ad.testing import check_grads

from linalg_cases import random_array, svd


pytestmark = pytest.mark.usefixtures("restore_linalg_config")


def svd_u00_real(x):
    return svd(x)[0][0, 0].real


def svd_u_sum_real(x):
    return svd(x)[0].sum().real


def svd_vh_sum_imag(x):
    return svd(x)[2].sum().imag


def eigh_v10_real(x):
    # (not v[0, 0]: LAPACK's zheevd returns a real first row of v, a gauge in which the
    # phase derivative of Re v[0, 0] happens to vanish)
    return tp.linalg.eigh(x)[1][1, 0].real


def eigh_v_sum_real(x):
    return tp.linalg.eigh(x)[1].sum().real


PHASE_DEPENDENT = [svd_u00_real, svd_u_sum_real, svd_vh_sum_imag, eigh_v10_real,
                   eigh_v_sum_real]


def _gauge_data(rng, fn):
    return random_array(rng, (4, 4) if fn.__name__.startswith("eigh") else (4, 3), "complex128")


@pytest.mark.parametrize("fn", PHASE_DEPENDENT, ids=lambda f: f.__name__)
def test_gauge_error_eager(fn, rng):
    a = _gauge_data(rng, fn)
    t = tp.tensor(a, requires_grad=True)
    loss = fn(t)                                         # the forward pass is fine
    with pytest.raises(GaugeError, match="phase"):
        loss.backward()


@pytest.mark.parametrize("fn", PHASE_DEPENDENT, ids=lambda f: f.__name__)
def test_gauge_error_traced(fn, rng):
    a = _gauge_data(rng, fn)
    x = tp.input(a.shape, a.dtype)
    loss = fn(x)
    g = tp.ad.grad(loss, x)                              # no values yet: nothing to check
    program = tp.compile([loss, g], inputs=[x])
    with pytest.raises(GaugeError, match="phase"):
        program(a)


@pytest.mark.parametrize("fn", PHASE_DEPENDENT, ids=lambda f: f.__name__)
def test_gauge_warning_mode(fn, rng, restore_linalg_config):
    restore_linalg_config.gauge_check = "warn"
    a = _gauge_data(rng, fn)
    t = tp.tensor(a, requires_grad=True)
    loss = fn(t)
    with pytest.warns(GaugeWarning, match="phase"):
        loss.backward()
    assert t.grad is not None and np.all(np.isfinite(np.asarray(t.grad)))
    x = tp.input(a.shape, a.dtype)
    program = tp.compile([tp.ad.grad(fn(x), x)], inputs=[x])
    with pytest.warns(GaugeWarning, match="phase"):
        (g,) = program(a)
    np.testing.assert_allclose(g, np.asarray(t.grad), atol=1e-12)


def test_gauge_check_off(rng, restore_linalg_config):
    restore_linalg_config.gauge_check = "off"
    a = _gauge_data(rng, svd_u00_real)
    t = tp.tensor(a, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        svd_u00_real(t).backward()
    assert np.all(np.isfinite(np.asarray(t.grad)))


def svd_abs_u00_squared(x):
    return tp.abs(svd(x)[0][0, 0]) ** 2


def svd_phase_invariant_mix(x):
    u, s, vh = svd(x)
    return (tp.abs(u[1, 0]) ** 2 + (u[:, 1:2] @ vh[1:2]).sum().real * s[1]
            + tp.abs(vh[0, 2]) ** 2)


def eigh_abs_v00_squared(x):
    return tp.abs(tp.linalg.eigh(x)[1][0, 0]) ** 2


@pytest.mark.parametrize("fn", [svd_abs_u00_squared, svd_phase_invariant_mix,
                                eigh_abs_v00_squared], ids=lambda f: f.__name__)
def test_phase_invariant_losses_do_not_raise(fn, rng):
    a = _gauge_data(rng, fn)
    check_grads(fn, [a], order=1, rng=rng, eager=True)   # raises GaugeError if it fired


@pytest.mark.parametrize("fn", [svd_u00_real, eigh_v10_real], ids=lambda f: f.__name__)
def test_real_inputs_have_no_phase_gauge(fn, rng):
    """Real matrices have only a discrete sign freedom: no check fires, and the derivative
    of a sign-dependent entry matches finite differences (LAPACK's sign is locally fixed)."""
    a = _gauge_data(rng, fn).real.copy()
    check_grads(fn, [a], order=1, rng=rng, eager=True)


def _phase_fixed(vectors):
    """``vectors`` with each column's largest-magnitude entry made real and positive, the
    phase differentiated (the gauge fixing of tenpy_ad.models.peps_cell)."""
    magnitude = tp.stop_gradient(tp.abs(vectors))
    largest = tp.where(magnitude >= tp.amax(magnitude, axis=0, keepdims=True), 1.0, 0.0)
    entry = tp.sum(vectors * largest, axis=0)
    return vectors * (tp.conj(entry) / tp.abs(entry))[None, :]


def svd_truncated_phase_fixed(x):
    u, s, vh = svd(x)
    return _phase_fixed(u[:, :2]) * s[:2]


def svd_phase_fixed_v(x):
    # V's columns carry U's phases: fixed by U's entries, they are phase-invariant too
    u, _, vh = svd(x)
    magnitude = tp.stop_gradient(tp.abs(u))
    largest = tp.where(magnitude >= tp.amax(magnitude, axis=0, keepdims=True), 1.0, 0.0)
    entry = tp.sum(u * largest, axis=0)
    return tp.conj(vh).T * (tp.conj(entry) / tp.abs(entry))[None, :]


def eigh_phase_fixed(x):
    return _phase_fixed(tp.linalg.eigh((x + tp.conj(x).T) * 0.5)[1])


@pytest.mark.parametrize("fn", [svd_truncated_phase_fixed, svd_phase_fixed_v,
                                eigh_phase_fixed], ids=lambda f: f.__name__)
def test_phase_fixed_vectors_have_the_finite_difference_derivative(fn, rng):
    """Complex singular vectors and eigenvectors made element-wise unique by a
    differentiated phase per column: the rules' phase terms give the finite-difference
    derivative (the gauge check does not fire: the result is phase-invariant)."""
    a = random_array(rng, (4, 4) if fn.__name__.startswith("eigh") else (5, 4), "complex128")
    check_grads(fn, [a], order=1, rng=rng, eager=True)

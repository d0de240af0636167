"""A loss that depends on the basis of an exactly degenerate subspace has no derivative
(it is infinite: the rotation part of the cotangents over a zero gap).  The broadened
rule used to return a finite number there without a word; now the VJP of svd, eigh, eig,
svds and eigsh raises GaugeError naming the op (``tp.linalg.config.degeneracy_check``:
"warn" warns, "off" returns the broadened value).  Losses invariant under rotations of
the degenerate vectors, and losses of the values, keep their derivatives.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import GaugeError, GaugeWarning

from modes import GRAD_MODES, grad_in

pytestmark = pytest.mark.usefixtures("restore_linalg_config")


def _degenerate_matrix(seed: int = 0, n: int = 4):
    """q1 diag(3, 1, 1, 0.5) q2^T: the singular values 1 repeat exactly (to rounding)."""
    rng = np.random.default_rng(seed)
    q1, _ = np.linalg.qr(rng.standard_normal((n, n)))
    q2, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return (q1 * np.array([3.0, 1.0, 1.0, 0.5])) @ q2.T


def _degenerate_symmetric(seed: int = 0):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    return (q * np.array([3.0, 1.0, 1.0, -0.5])) @ q.T


WEIGHTS = np.random.default_rng(9).standard_normal((4, 4))

BASIS_DEPENDENT = {
    "svd u": (lambda x: tp.sum(tp.linalg.svd(x)[0] * WEIGHTS), _degenerate_matrix),
    "svd one vector": (lambda x: tp.sum(tp.linalg.svd(x)[2][1] * WEIGHTS[0]),
                       _degenerate_matrix),
    "svds": (lambda x: tp.sum(tp.linalg.svds(x, 3)[0] * WEIGHTS[:, :3]), _degenerate_matrix),
    "eigh v": (lambda x: tp.sum(tp.linalg.eigh(x)[1] * WEIGHTS), _degenerate_symmetric),
    "eigsh": (lambda x: tp.sum(tp.linalg.eigsh(x, 3)[1] * WEIGHTS[:, :3]),
              _degenerate_symmetric),
    "eig v": (lambda x: tp.sum(tp.real(tp.linalg.eig(x)[1]) * WEIGHTS),
              _degenerate_symmetric),
}

INVARIANT = {
    "svd values": (lambda x: tp.sum(tp.linalg.svd(x)[1] ** 2), _degenerate_matrix),
    "svd polar factor": (lambda x: tp.sum(WEIGHTS * (lambda u, s, vh: u @ vh)(
        *tp.linalg.svd(x))), _degenerate_matrix),
    "svd projector": (lambda x: tp.sum(WEIGHTS * (lambda u: u[:, :3] @ u[:, :3].T)(
        tp.linalg.svd(x)[0])), _degenerate_matrix),
    "eigh projector": (lambda x: tp.sum(WEIGHTS * (lambda v: v[:, 1:] @ v[:, 1:].T)(
        tp.linalg.eigh(x)[1])), _degenerate_symmetric),
}


def _name(key: str) -> str:
    """The primitive: svds/eigsh of small matrices slice svd/eigh (method "auto")."""
    return {"svds": "svds?", "eigsh": "eigs?h"}.get(key.split()[0], key.split()[0])


@pytest.mark.parametrize("mode", GRAD_MODES)
@pytest.mark.parametrize("case", sorted(BASIS_DEPENDENT))
def test_a_loss_of_a_degenerate_basis_raises_naming_the_op(case, mode):
    loss, make = BASIS_DEPENDENT[case]
    with pytest.raises(GaugeError, match=f"^{_name(case)}: the loss depends on the basis"):
        grad_in(mode, loss, make())


@pytest.mark.parametrize("case", sorted(BASIS_DEPENDENT))
def test_warn_and_off_return_the_broadened_value(case, restore_linalg_config):
    loss, make = BASIS_DEPENDENT[case]
    restore_linalg_config.degeneracy_check = "off"
    quiet = grad_in("eager", loss, make())
    restore_linalg_config.degeneracy_check = "warn"
    with pytest.warns(GaugeWarning, match=_name(case)):
        loud = grad_in("eager", loss, make())
    assert np.all(np.isfinite(quiet)) and np.array_equal(quiet, loud)


@pytest.mark.parametrize("mode", GRAD_MODES)
@pytest.mark.parametrize("case", sorted(INVARIANT))
def test_invariant_losses_keep_their_derivatives(case, mode):
    """Against central differences: these are smooth at the degenerate point."""
    loss, make = INVARIANT[case]
    a = make()
    direction = np.random.default_rng(4).standard_normal(a.shape)
    if case.startswith("eigh"):
        direction = direction + direction.T
    value = lambda b: float(tp.compile(loss(x := tp.input(a.shape)), [x])(b))
    h = 1e-6
    fd = (value(a + h * direction) - value(a - h * direction)) / (2 * h)
    assert np.sum(grad_in(mode, loss, a) * direction) == pytest.approx(fd, rel=1e-6, abs=1e-8)


def test_the_check_is_a_setting_with_the_gauge_checks_values():
    config = tp.linalg.config
    assert config.degeneracy_check == "raise"
    with pytest.raises(tp.errors.ArgumentValueError, match="degeneracy_check"):
        config.degeneracy_check = "sometimes"

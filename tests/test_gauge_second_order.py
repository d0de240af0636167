"""The complex gauge check at first, second and third order, in every mode.

Phase-invariant losses of complex ``eigh``, ``eig``, ``svd`` (and the partial ``svds``,
``eigsh``) never raise ``GaugeError``: their gradients, directional derivatives and
Hessian-vector products in every mode (eager backward, ``tp.grad``, traced + compile,
``tp.jvp``, gradients of gradients, Hessian-vector products forward over reverse, gradients
of JVPs) equal central finite differences, for 50 random matrices of several sizes.  The
losses include those whose derivative of the derivative does not go through the vectors
(``sum |v|^2``, sums of eigenvalues, the projector onto every vector, 1 x 1 matrices): the
cotangents that the second-order sweep sends the decomposition are then rounding noise, and
a check relative to them raised on rounding alone.  Phase-dependent losses raise
``GaugeError`` at first order and at second order in every reverse-mode composition, also
when the program computes only the second derivative.  Every composition of three
transforms agrees (values against central differences of the Hessian-vector product,
errors for a phase-dependent loss), and a saved second-order program finds the tangent
guards by name in a fresh interpreter.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import GaugeError
from tenpy_ad.testing import random_array

from derivative_modes import FIRST_ORDER, SECOND_ORDER, TANGENTS, derivative


pytestmark = pytest.mark.usefixtures("restore_linalg_config")

SEEDS = range(50)
SIZES = (1, 2, 3, 4)            # by seed, in turn
STEP = 1e-5


def _complex(rng, shape):
    return random_array(rng, shape, "complex128")


def _hermitian(rng, n):
    b = _complex(rng, (n, n))
    return (b + b.conj().T) / 2


def _weights(x):
    """Fixed real weights of ``x``'s shape (the same for every seed)."""
    shape = tuple(x.shape)
    return np.random.default_rng(7).standard_normal(shape)


def _squares(v):
    """``|v|^2`` entrywise, as ``Re(v conj(v))``: invariant under a phase per column."""
    return tp.real(v * tp.conj(v))


def _eigh_vectors_weighted(x):
    w, v = tp.linalg.eigh(x)
    return tp.sum(_squares(v) * _weights(v)) + tp.sum(w * w)


def _eigh_projector(x):
    """The real part of the projector onto the lowest two eigenvectors (all of them for a
    2 x 2 matrix: the identity)."""
    v = tp.linalg.eigh(x)[1][:, :2]
    return tp.sum(tp.real(v @ tp.conj(tp.transpose(v))) * _weights(x))


def _eig_vectors_weighted(x):
    w, v = tp.linalg.eig(x)
    return tp.sum(_squares(v) * _weights(v)) + tp.sum(tp.real(w * w))


def _svd_weighted(x):
    u, s, vh = tp.linalg.svd(x)
    return tp.sum(_squares(u) * _weights(u)) + tp.sum(_squares(vh) * _weights(vh)) + \
        tp.sum(s ** 3)


def _svd_vectors_weighted(x):
    """Constant for a 1 x 1 matrix (its vectors are phases)."""
    u, _, vh = tp.linalg.svd(x)
    return tp.sum(_squares(u) * _weights(u)) + tp.sum(_squares(vh) * _weights(vh))


def _svd_u00_vh00(x):
    """``u[0, 0] vh[0, 0]``: the phase of the first triplet cancels (u e^{i phi} and
    e^{-i phi} vh are the same SVD)."""
    u, _, vh = tp.linalg.svd(x)
    return tp.real(u[0, 0] * vh[0, 0])


def _svd_polar(x):
    u, _, vh = tp.linalg.svd(x)
    return tp.sum(tp.real(u @ vh) * _weights(x))


def _krylov_svds(x):
    return tp.linalg.svds(x, 1, method="krylov")


def _krylov_eigsh(x):
    return tp.linalg.eigsh(x, 1, method="krylov")


#: (name, loss, "hermitian" | "general"): phase-invariant losses
INVARIANT = [
    ("eigh_sum_of_squares", lambda x: tp.sum(_squares(tp.linalg.eigh(x)[1])), "hermitian"),
    ("eigh_weighted", _eigh_vectors_weighted, "hermitian"),
    ("eigh_upper_v00", lambda x: tp.abs(tp.linalg.eigh(x, "U")[1][0, 0]) ** 2, "hermitian"),
    ("eigh_symmetrized", lambda x: tp.sum(
        _squares(tp.linalg.eigh(x, symmetrize_input=True)[1]) * _weights(x)), "general"),
    ("eigh_projector", _eigh_projector, "hermitian"),
    ("eigh_sum_of_values", lambda x: tp.sum(tp.linalg.eigh(x)[0]), "hermitian"),
    ("eigvalsh_cubes", lambda x: tp.sum(tp.linalg.eigvalsh(x) ** 3), "hermitian"),
    ("eig_sum_of_squares", lambda x: tp.sum(_squares(tp.linalg.eig(x)[1])), "general"),
    ("eig_weighted", _eig_vectors_weighted, "general"),
    ("eig_sum_of_values", lambda x: tp.sum(tp.real(tp.linalg.eig(x)[0])), "general"),
    ("eigvals_squares", lambda x: tp.sum(_squares(tp.linalg.eigvals(x))), "general"),
    ("svd_sum_of_squares", lambda x: tp.sum(_squares(tp.linalg.svd(x)[0])), "general"),
    ("svd_weighted", _svd_weighted, "general"),
    ("svd_vectors_weighted", _svd_vectors_weighted, "general"),
    ("svd_u00_squared", lambda x: tp.abs(tp.linalg.svd(x)[0][0, 0]) ** 2, "general"),
    ("svd_u00_vh00", _svd_u00_vh00, "general"),
    ("svd_polar", _svd_polar, "general"),
    ("svd_nuclear", lambda x: tp.sum(tp.linalg.svd(x)[1]), "general"),
    ("svdvals_squares", lambda x: tp.sum(tp.linalg.svdvals(x) ** 2), "general"),
    ("svds_squares", lambda x: tp.sum(_squares(_krylov_svds(x)[0]) * _weights(x)[:, :1]),
     "general"),
    ("svds_value", lambda x: tp.sum(_krylov_svds(x)[1]), "general"),
    ("eigsh_squares", lambda x: tp.sum(_squares(_krylov_eigsh(x)[1]) * _weights(x)[:, :1]),
     "hermitian"),
    ("eigsh_sum_of_squares", lambda x: tp.sum(_squares(_krylov_eigsh(x)[1])), "hermitian"),
]


def _point(kind, seed):
    rng = np.random.default_rng(seed)
    n = SIZES[seed % len(SIZES)]
    a = _hermitian(rng, n) if kind == "hermitian" else _complex(rng, (n, n))
    return a, _complex(rng, (n, n))


def _gradient(loss, a):
    return np.asarray(tp.grad(loss)(a))


def _finite_differences(loss, a, v):
    """The directional derivative and the Hessian-vector product by central differences
    (of the loss on arrays, of the first-order eager gradient)."""
    value = lambda x: float(np.asarray(loss(x)))                # noqa: E731
    slope = (value(a + STEP * v) - value(a - STEP * v)) / (2 * STEP)
    curvature = (_gradient(loss, a + STEP * v) - _gradient(loss, a - STEP * v)) / (2 * STEP)
    return slope, curvature


def _assert_close(got, expected, what):
    scale = 1.0 + float(np.max(np.abs(expected)))
    error = float(np.max(np.abs(got - expected)))
    assert error <= 1e-6 * scale, f"{what}: |difference| {error:.2e} (scale {scale:.2e})"


CASES = [(name, loss, kind, seed) for name, loss, kind in INVARIANT for seed in SEEDS
         if not (name.startswith(("svds", "eigsh")) and SIZES[seed % len(SIZES)] < 2)]


@pytest.mark.parametrize("name,loss,kind,seed", CASES,
                         ids=[f"{c[0]}-{c[3]}" for c in CASES])
def test_phase_invariant_losses_match_finite_differences(name, loss, kind, seed):
    a, v = _point(kind, seed)
    slope, curvature = _finite_differences(loss, a, v)
    gradient = _gradient(loss, a)
    _assert_close(np.real(np.vdot(gradient, v)), slope, "gradient . v")
    for mode in FIRST_ORDER + SECOND_ORDER:
        got = derivative(mode, loss, a, v)                  # raises GaugeError if it fired
        if mode in TANGENTS:
            _assert_close(got, slope, mode)
        elif mode in FIRST_ORDER:
            _assert_close(got, gradient, mode)
        else:
            _assert_close(got, curvature, mode)


# ---------------------------------------------------------------- phase-dependent losses

#: (name, loss, kind): losses that depend on the arbitrary phases (see test_complex_gauge:
#: not v[0, 0] of eigh, whose first row LAPACK makes real)
DEPENDENT = [
    ("eigh_v10", lambda x: tp.real(tp.linalg.eigh(x)[1][1, 0]), "hermitian"),
    ("eigh_upper_v_sum", lambda x: tp.real(tp.sum(tp.linalg.eigh(x, "U")[1])), "hermitian"),
    ("eig_v10", lambda x: tp.real(tp.linalg.eig(x)[1][1, 0]), "general"),
    ("svd_u00", lambda x: tp.real(tp.linalg.svd(x)[0][0, 0]), "general"),
    ("svd_u_sum", lambda x: tp.real(tp.sum(tp.linalg.svd(x)[0])), "general"),
    ("svd_vh_sum_imag", lambda x: tp.imag(tp.sum(tp.linalg.svd(x)[2])), "general"),
    ("svd_u00_vh11", lambda x: (lambda u, s, vh: tp.real(u[0, 0] * vh[1, 1]))(
        *tp.linalg.svd(x)), "general"),
    ("svds_u10", lambda x: tp.real(_krylov_svds(x)[0][1, 0]), "general"),
    ("eigsh_v10", lambda x: tp.real(_krylov_eigsh(x)[1][1, 0]), "hermitian"),
]
#: forward mode cannot see the loss: a JVP alone runs no check
REVERSE = [mode for mode in FIRST_ORDER + SECOND_ORDER if mode not in TANGENTS]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name,loss,kind", DEPENDENT, ids=[d[0] for d in DEPENDENT])
@pytest.mark.parametrize("mode", REVERSE)
def test_phase_dependent_losses_raise(mode, name, loss, kind, seed):
    rng = np.random.default_rng(100 + seed)
    a = _hermitian(rng, 4) if kind == "hermitian" else _complex(rng, (4, 4))
    with pytest.raises(GaugeError, match="phase"):
        derivative(mode, loss, a, _complex(rng, (4, 4)))


# ---------------------------------------------------------------- third order

def _inner(g, w):
    return tp.real(tp.sum(tp.conj(g) * w))


def _third_order(loss, a, v, w) -> dict:
    """The third derivative applied to ``v`` and ``w`` (a gradient-shaped array), by every
    composition of two transforms over a gradient or a JVP: mode -> a function computing
    it."""
    def hessian_v(x):
        return tp.jvp(tp.grad(loss), (x,), (v,))[1]

    def gradient_of_hessian_v(y):
        return tp.grad(lambda z: _inner(tp.grad(loss)(z), v))(y)

    def gradient_of_jvp(y):
        return tp.grad(lambda z: tp.jvp(loss, (z,), (v,))[1])(y)

    def second_jvp(y):
        return tp.jvp(lambda z: tp.jvp(loss, (z,), (v,))[1], (y,), (w,))[1]

    return {
        "reverse^3": lambda: tp.grad(lambda x: _inner(gradient_of_hessian_v(x), w))(a),
        "reverse-forward-reverse": lambda: tp.grad(lambda x: _inner(hessian_v(x), w))(a),
        "reverse-reverse-forward": lambda: tp.grad(lambda x: _inner(gradient_of_jvp(x), w))(a),
        "forward-reverse-reverse": lambda: tp.jvp(gradient_of_hessian_v, (a,), (w,))[1],
        "reverse-forward-forward": lambda: tp.grad(second_jvp)(a),
    }


THIRD = [case for case in INVARIANT if case[0] in (
    "eigh_sum_of_squares", "eigh_weighted", "eig_sum_of_values", "eig_weighted",
    "svd_u00_squared", "svd_weighted")]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name,loss,kind", THIRD, ids=[c[0] for c in THIRD])
def test_third_order_of_phase_invariant_losses(name, loss, kind, seed):
    """The marks and guards of forward-mode derivatives point at every token they must:
    no GaugeError at third order, and the values are central differences of the
    Hessian-vector product."""
    a, v = _point(kind, seed)
    w = _complex(np.random.default_rng(1000 + seed), a.shape)
    hessian_v = lambda x: np.asarray(tp.jvp(tp.grad(loss), (x,), (v,))[1])    # noqa: E731
    step = 1e-4
    expected = (hessian_v(a + step * w) - hessian_v(a - step * w)) / (2 * step)
    for mode, compute in _third_order(loss, a, v, w).items():
        scale = 1.0 + float(np.max(np.abs(expected)))
        error = float(np.max(np.abs(np.asarray(compute()) - expected)))
        assert error <= 1e-5 * scale, f"{mode}: |difference| {error:.2e}"


@pytest.mark.parametrize("name,loss,kind", DEPENDENT[:1] + DEPENDENT[3:4],
                         ids=["eigh_v10", "svd_u00"])
def test_third_order_of_phase_dependent_losses_raises(name, loss, kind):
    rng = np.random.default_rng(5)
    a = _hermitian(rng, 3) if kind == "hermitian" else _complex(rng, (3, 3))
    v, w = _complex(rng, (3, 3)), _complex(rng, (3, 3))
    for mode, compute in _third_order(loss, a, v, w).items():
        with pytest.raises(GaugeError, match="phase"):
            compute()


# ---------------------------------------------------------------- saved programs

def test_a_saved_second_order_program_loads_in_a_fresh_process(tmp_path):
    """A gradient of a JVP holds the tangent guards (one per number of tangents); a fresh
    interpreter finds them by name when it loads the saved program."""
    rng = np.random.default_rng(3)
    a, v = _complex(rng, (3, 3)), _complex(rng, (3, 3))

    def loss(x):
        return _eigh_vectors_weighted(x) + _svd_weighted(x)
    x = tp.input(a.shape, a.dtype)
    (slope,) = tp.ad.jvp([loss(x)], [x], [v])
    hessian_v = tp.ad.grad(slope, x)
    names = {node.prim.name for node in tp.introspection.graph_nodes([hessian_v])}
    assert {"tangent_gauge_guard/3", "tangent_gauge_guard/4", "derived_mark"} <= names
    program = tp.compile([hessian_v], inputs=[x])
    program.save(tmp_path / "program.tpz")
    np.save(tmp_path / "a.npy", a)
    code = ("import numpy as np, tenpy_ad as tp\n"
            f"folder = {str(tmp_path)!r}\n"
            "program = tp.load_program(folder + '/program.tpz')\n"
            "np.save(folder + '/result.npy', program(np.load(folder + '/a.npy'))[0])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    np.testing.assert_allclose(np.load(tmp_path / "result.npy"), program(a)[0],
                               rtol=1e-12, atol=1e-12)

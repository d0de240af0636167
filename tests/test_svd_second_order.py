"""Second derivatives through truncated ``svd`` and ``eigh`` at degenerate discarded spectra.

A loss of the kept, well-separated triplets (``u[:, :k]``, ``s[:k]``, ``vh[:k]``) is
smooth even when the discarded singular values are exactly degenerate (a rank-deficient
matrix: many exact zeros).  Its Hessian-vector product, traced (``tp.ad.grad`` twice) and
eager (``create_graph``), equals central finite differences of the first-order gradient
(the eager backward on arrays, the dense rule) for square, tall and wide, real and complex
matrices, losses on ``u``, ``s``, ``vh`` and all three, k = 2 and k = rank; eigh
likewise (trailing and leading pairs, both triangles); full-rank cases too.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad import introspection
from tenpy_ad.errors import GaugeError
from tenpy_ad.testing import random_array

pytestmark = pytest.mark.usefixtures("restore_linalg_config")

RANK4 = [3.0, 2.0, 1.0, 0.5]                      # then exact zeros
BLOCKS = [3.0, 2.0, 1.0, 1.0, 1.0, 0.5, 0.5]     # degenerate, non-zero discarded values
SHAPES = [(10, 10), (12, 10), (10, 12)]
PARTS = ["u", "s", "v", "usv"]
STEP = 1e-5
RTOL = 1e-6                                      # central differences reach ~1e-9


def _unitary(rng, n, complex_):
    z = random_array(rng, (n, n), "complex128" if complex_ else "float64")
    return np.linalg.qr(z)[0]


def _matrix(rng, shape, values, complex_=False):
    """``q1 diag(values) q2^H`` padded with exact zero singular values."""
    m, n = shape
    r = len(values)
    q1, q2 = _unitary(rng, m, complex_), _unitary(rng, n, complex_)
    return (q1[:, :r] * values) @ q2[:, :r].conj().T


def _svd_loss(weights, k, parts, lo=0):
    """Phase-invariant (``|u|^2``, ``|vh|^2``): a smooth function of the triplets lo:k."""
    def loss(a):
        u, s, vh = tp.linalg.svd(a, full_matrices=False)
        out = 0.0
        if "u" in parts:
            out = out + (tp.abs(u[:, lo:k]) ** 2 * weights[:u.shape[0], lo:k]).sum()
        if "s" in parts:
            out = out + (s[lo:k] ** 3).sum()
        if "v" in parts:
            out = out + (tp.abs(vh[lo:k]) ** 2 * weights[lo:k, :vh.shape[1]]).sum()
        return out
    return loss


def _gradient(loss, a):
    """The first-order eager gradient (arrays: the dense rule)."""
    x = tp.tensor(a, requires_grad=True)
    loss(x).backward()
    return np.asarray(x.grad)


def _inner(g, v):
    """``Re<g, v>``: its gradient is the Hessian applied to ``v`` (complex convention)."""
    return tp.real((tp.conj(g) * v).sum())


def _hvp(loss, a, v, mode):
    if mode == "traced":
        x = tp.input(a.shape, dtype=a.dtype.name, name="a")
        g = tp.ad.grad(loss(x), x)
        program = tp.compile([tp.ad.grad(_inner(g, v), x)], inputs=[x])
        return np.asarray(program(a)[0])
    x = tp.tensor(a, requires_grad=True)
    (g,) = tp.grad_of([loss(x)], [x], create_graph=True)
    (h,) = tp.grad_of([_inner(g, v)], [x])
    return np.asarray(h.data if hasattr(h, "data") else h)


def _finite_difference(loss, a, v):
    return (_gradient(loss, a + STEP * v) - _gradient(loss, a - STEP * v)) / (2 * STEP)


def _assert_hvp(loss, a, v, mode, rtol=RTOL):
    expected = _finite_difference(loss, a, v)
    got = _hvp(loss, a, v, mode)
    error = np.abs(got - expected).max() / np.abs(expected).max()
    assert error < rtol, f"relative HVP error {error:.2e}"


def _direction(rng, shape, complex_):
    return random_array(rng, shape, "complex128" if complex_ else "float64")


@pytest.mark.parametrize("mode", ["traced", "eager"])
@pytest.mark.parametrize("complex_", [False, True], ids=["float64", "complex128"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("values,k", [(RANK4, 2), (RANK4, 4), (BLOCKS, 2),
                                      (list(np.linspace(3, 0.1, 10)), 2)],
                         ids=["rank4-k2", "rank4-k4", "blocks-k2", "full-rank-k2"])
@pytest.mark.parametrize("parts", PARTS)
def test_svd_hvp_equals_finite_differences(parts, values, k, shape, complex_, mode):
    rng = np.random.default_rng(len(values) * 100 + k * 10 + shape[0])
    a = _matrix(rng, shape, values, complex_)
    loss = _svd_loss(rng.standard_normal((12, 12)), k, parts)
    _assert_hvp(loss, a, _direction(rng, shape, complex_), mode)


@pytest.mark.parametrize("mode", ["traced", "eager"])
def test_svd_hvp_of_middle_triplets(mode):
    """Triplets 1:3 kept: discarded values on both sides (above, and exact zeros)."""
    rng = np.random.default_rng(5)
    a = _matrix(rng, (9, 7), [4.0, 2.0, 1.0, 0.3])
    loss = _svd_loss(rng.standard_normal((12, 12)), 3, "usv", lo=1)
    _assert_hvp(loss, a, rng.standard_normal(a.shape), mode)


def _sliced_twice_and_masked(x, mask=None):
    u, s, vh = tp.linalg.svd(x)
    out = (u[:, :2] ** 2).sum() * 0.3 + (u[:, :3] ** 4).sum() + (s[:3] ** 2).sum()
    return out if mask is None else out + (u ** 2 * mask).sum()


def _mask(rng, n, used):
    mask = np.zeros((n, n))
    mask[:, :used] = rng.standard_normal((n, used))
    return mask


@pytest.mark.parametrize("mode", ["traced", "eager"])
def test_svd_hvp_through_two_slices(mode):
    """Cotangents that are sums of slices show their truncation."""
    rng = np.random.default_rng(6)
    a = _matrix(rng, (8, 8), RANK4)
    _assert_hvp(_sliced_twice_and_masked, a, rng.standard_normal(a.shape), mode)


def test_svd_hvp_through_a_traced_mask():
    """A traced product with a constant that is zero on the discarded columns shows it."""
    rng = np.random.default_rng(6)
    a, mask = _matrix(rng, (8, 8), RANK4), _mask(rng, 8, 2)
    _assert_hvp(lambda x: _sliced_twice_and_masked(x, mask), a,
                rng.standard_normal(a.shape), "traced")


def test_unseen_truncation_raises_at_second_order():
    """The eager tape hides the constant of a product: the rule sees every triplet used;
    the first derivative is right, the second raises instead of being wrong."""
    rng = np.random.default_rng(6)
    a, mask = _matrix(rng, (8, 8), RANK4), _mask(rng, 8, 2)
    loss = lambda x: _sliced_twice_and_masked(x, mask)            # noqa: E731
    x = tp.tensor(a, requires_grad=True)
    (g,) = tp.grad_of([loss(x)], [x], create_graph=True)
    np.testing.assert_allclose(np.asarray(g.data), _gradient(loss, a), atol=1e-12)
    with pytest.raises(tp.errors.GaugeError, match="svd: the second derivative"):
        tp.grad_of([_inner(g, rng.standard_normal(a.shape))], [x])


def test_svd_hvp_of_a_stack():
    rng = np.random.default_rng(7)
    a = np.stack([_matrix(rng, (7, 6), RANK4), _matrix(rng, (7, 6), BLOCKS[:5])])

    def loss(x):
        u, s, vh = tp.linalg.svd(x, full_matrices=False)
        return (u[..., :2] ** 2 * np.arange(7.0)[:, None]).sum() + (s[..., :2] ** 3).sum()
    _assert_hvp(loss, a, rng.standard_normal(a.shape), "traced")


def _eigh_case(rng, values, complex_=False):
    q = _unitary(rng, len(values), complex_)
    return (q * np.asarray(values)) @ q.conj().T


def _eigh_loss(weights, kept, uplo):
    def loss(a):
        w, v = tp.linalg.eigh(a, UPLO=uplo)
        return (tp.abs(v[:, kept]) ** 2 * weights[:, kept]).sum() + (w[kept] ** 3).sum()
    return loss


EIGH_VALUES = {"zeros": np.r_[np.zeros(6), [0.5, 1.0, 2.0, 3.0]],
               "blocks": np.r_[[-2.0, -1.0], np.full(4, 0.25), [0.5, 1.5, 2.0, 3.0]],
               "distinct": np.linspace(-1.0, 3.0, 10)}


@pytest.mark.parametrize("mode", ["traced", "eager"])
@pytest.mark.parametrize("complex_", [False, True], ids=["float64", "complex128"])
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("kept", [slice(-2, None), slice(-4, None), slice(0, 2)],
                         ids=["last2", "last4", "first2"])
@pytest.mark.parametrize("spectrum", list(EIGH_VALUES))
def test_eigh_hvp_equals_finite_differences(spectrum, kept, uplo, complex_, mode):
    values = EIGH_VALUES[spectrum]
    if kept == slice(0, 2):
        values = -values[::-1]                     # the first two apart from the rest
    rng = np.random.default_rng(11)
    a = _eigh_case(rng, values, complex_)
    v = _direction(rng, a.shape, complex_)
    loss = _eigh_loss(rng.standard_normal((10, 10)), kept, uplo)
    _assert_hvp(loss, a, v + v.conj().T, mode)


def test_truncated_traced_vjp_uses_the_exact_solve():
    """The traced VJP of a truncated svd couples through the exact-mode solve (its first
    output alone, ``complement_lorentz``); an untruncated one keeps the dense rule."""
    x = tp.input((6, 6), name="a")
    u, s, vh = tp.linalg.svd(x)
    truncated = tp.ad.grad((u[:, :2] ** 2).sum() + s[:2].sum(), x)
    whole = tp.ad.grad((u ** 2).sum() + s.sum(), x)
    names = [{node.prim.name for node in introspection.graph_nodes([g])}
             for g in (truncated, whole)]
    assert "complement_lorentz" in names[0] and "complement_lorentz" not in names[1]


# ------------------------------------------------------------------ forward mode, twice
# A JVP gives the tangents of every singular vector (eigenvector); which ones the loss
# uses is not known in forward mode, so differentiating a JVP again is exact at
# non-degenerate spectra and refused (GaugeError naming the op) at exactly degenerate ones.

def _second_directional(loss, a, v, outer: str):
    """``d^2/dt^2 loss(a + t v)`` by a JVP differentiated again: forward over forward
    (``tp.jvp`` of ``tp.jvp``) or reverse over forward (``tp.grad`` of ``tp.jvp``)."""
    def directional(x):
        return tp.jvp(loss, (x,), (v,))[1]
    if outer == "forward":
        return float(np.asarray(tp.jvp(directional, (a,), (v,))[1]))
    return float((np.asarray(tp.grad(directional)(a)) * v).sum())


def _svd_case(values):
    rng = np.random.default_rng(5)
    return (_matrix(rng, (10, 10), values), rng.standard_normal((10, 10)),
            _svd_loss(rng.standard_normal((12, 12)), 2, "usv"))


@pytest.mark.parametrize("outer", ["forward", "reverse"])
def test_jvp_differentiated_again_is_exact_at_distinct_values(outer):
    a, v, loss = _svd_case(list(np.linspace(3, 0.1, 10)))
    expected = float((_finite_difference(loss, a, v) * v).sum())
    assert abs(_second_directional(loss, a, v, outer) - expected) < RTOL * abs(expected)


@pytest.mark.parametrize("outer", ["forward", "reverse"])
def test_jvp_differentiated_again_refuses_degenerate_values(outer):
    a, v, loss = _svd_case(RANK4)                   # six exact zeros
    with pytest.raises(GaugeError, match="svd: the derivative of a forward-mode"):
        _second_directional(loss, a, v, outer)
    rng = np.random.default_rng(6)
    h = _eigh_case(rng, EIGH_VALUES["zeros"])
    d = rng.standard_normal(h.shape)
    eigh_loss = _eigh_loss(rng.standard_normal((10, 10)), slice(-2, None), "L")
    with pytest.raises(GaugeError, match="eigh: the derivative of a forward-mode"):
        _second_directional(eigh_loss, h, d + d.T, outer)


def test_first_order_jvp_is_unchanged_at_degenerate_values():
    a, v, loss = _svd_case(RANK4)
    expected = float((_gradient(loss, a) * v).sum())
    got = float(np.asarray(tp.jvp(loss, (a,), (v,))[1]))
    assert abs(got - expected) < 1e-10 * abs(expected)

"""tp.scipy.sparse.linalg.expm_multiply differentiated in the tensors its operator captures:
gradients of losses of ``exp(A(theta)) B`` (``A = sum_k theta_k H_k``; a complex time
evolution ``exp(-i t H(theta)) psi``; a DMRG-like effective Hamiltonian closing over its
environments) against the same loss on the dense matrix through ``tp.scipy.linalg.expm``
(exact Fréchet derivative) and against central differences, in eager, traced, compiled
and jit modes; JVP and VJP with the adjoint identity; second order traced (both
Hessian-vector products), under jit and eager.  Deterministic:
SciPy's expm_multiply and the quadrature have no randomness.
"""
import numpy as np
import pytest
import scipy.linalg

import tenpy_ad as tp
from tenpy_ad.scipy.sparse import _expm
from tenpy_ad.scipy.sparse import linalg as sla

N, K = 6, 3
TIME = 0.8


def _hamiltonians(rng, dtype):
    """K terms ``H_k``: Hermitian for the complex time evolution, general if real."""
    hs = []
    for _ in range(K):
        h = rng.standard_normal((N, N)) * 0.5
        if dtype == np.complex128:
            h = h + 1j * rng.standard_normal((N, N)) * 0.5
            h = (h + h.conj().T) / 2
        hs.append(h)
    return hs


def _factor(dtype):
    """``A = factor * H(theta)``: ``-i t`` (time evolution) for complex, 1 for real."""
    return -1j * TIME if dtype == np.complex128 else 1.0


def _operator(theta, hs, dtype):
    """``A(theta) = factor * sum_k theta_k H_k`` as a matvec closing over ``theta``."""
    factor = _factor(dtype)
    return sla.LinearOperator(
        (N, N), lambda v: factor * sum(theta[k] * (tp.asarray(hs[k]) @ v) for k in range(K)),
        dtype=dtype)


def _dense(theta, hs, dtype):
    return _factor(dtype) * sum(theta[k] * tp.asarray(hs[k]) for k in range(K))


def _observable(rng):
    o = rng.standard_normal((N, N))
    return o + o.T


def _loss_of(y, o):
    """``Re <y, O y>``: real for real and complex ``y``."""
    return tp.real(tp.vdot(y, tp.asarray(o) @ y))


def _case(rng, dtype):
    hs = _hamiltonians(rng, dtype)
    b = rng.standard_normal(N)
    if dtype == np.complex128:
        b = b + 1j * rng.standard_normal(N)
    return hs, b, _observable(rng), rng.standard_normal(K)


def _sparse_loss(hs, b, o, dtype):
    return lambda theta: _loss_of(sla.expm_multiply(_operator(theta, hs, dtype), b), o)


def _dense_loss(hs, b, o, dtype):
    return lambda theta: _loss_of(tp.scipy.linalg.expm(_dense(theta, hs, dtype)) @ b, o)


def _numpy_loss(hs, b, o, dtype):
    def loss(theta):
        a = _factor(dtype) * sum(t * h for t, h in zip(theta, hs))
        y = scipy.linalg.expm(a) @ b
        return float(np.real(np.vdot(y, o @ y)))
    return loss


def _central(f, x, eps=1e-5):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(len(x))])


def _relative(got, expected):
    return float(np.max(np.abs(np.asarray(got) - expected)) / np.max(np.abs(expected)))


# ------------------------------------------------------------------ first order

@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_gradient_in_the_operator_matches_the_dense_expm_in_every_mode(rng, dtype):
    hs, b, o, theta0 = _case(rng, dtype)
    sparse, dense = _sparse_loss(hs, b, o, dtype), _dense_loss(hs, b, o, dtype)
    x = tp.input((K,))
    expected = tp.evaluate(tp.ad.grad(dense(x), [x])[0], {x: theta0})
    np.testing.assert_allclose(expected, _central(_numpy_loss(hs, b, o, dtype), theta0),
                               rtol=1e-6, atol=1e-8)
    theta = tp.tensor(theta0, requires_grad=True)                        # eager
    sparse(theta).backward()
    assert _relative(theta.grad.numpy(), expected) < 1e-10
    program = tp.compile(tp.ad.grad(sparse(x), [x]), inputs=[x])        # traced, compiled
    assert _relative(program(theta0)[0], expected) < 1e-10
    other = theta0[::-1].copy()                                          # new values
    again = tp.evaluate(tp.ad.grad(dense(x), [x])[0], {x: other})
    assert _relative(program(other)[0], again) < 1e-10
    assert _relative(tp.jit(tp.grad(sparse))(theta0), expected) < 1e-10  # jit
    assert _relative(tp.grad(sparse)(theta0), expected) < 1e-10          # functional eager


def _matrix_operator(a):
    """A matvec that uses its tensor nonlinearly: ``(a a^H / 4 + a) v``."""
    return sla.LinearOperator((N, N), lambda v: (a @ tp.conj(a.T)) @ v * 0.25 + a @ v,
                              dtype=a.dtype)


def _dense_matrix(a):
    return a @ np.conj(a.T) * 0.25 + a


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_jvp_and_vjp_satisfy_the_adjoint_identity_and_match_the_frechet_derivative(rng,
                                                                                  dtype):
    def draw(*shape):
        x = rng.standard_normal(shape) * 0.4
        return x + 1j * rng.standard_normal(shape) * 0.4 if dtype == np.complex128 else x
    a0, da, b0, g0 = draw(N, N), draw(N, N), draw(N, 2), draw(N, 2)
    m0 = _dense_matrix(a0)
    dm = da @ np.conj(a0.T) * 0.25 + a0 @ np.conj(da.T) * 0.25 + da
    expected = scipy.linalg.expm_frechet(m0, dm, compute_expm=False) @ b0

    def f(a):
        return sla.expm_multiply(_matrix_operator(a), b0)
    a = tp.input((N, N), dtype)
    y = f(a)
    (tangent,) = tp.ad.jvp([y], [a], [da])
    (cotangent,) = tp.ad.vjp([y], [a], [g0])
    traced_jvp = tp.evaluate(tangent, {a: a0})
    traced_vjp = tp.evaluate(cotangent, {a: a0})
    assert _relative(traced_jvp, expected) < 1e-10
    left = np.real(np.vdot(g0, traced_jvp))                # <G, J dA> = <J^H G, dA>
    right = np.real(np.vdot(traced_vjp, da))
    assert abs(left - right) < 1e-10 * abs(left)
    _, eager_jvp = tp.jvp(f, (a0,), (da,))                 # eager, functional
    assert _relative(eager_jvp, expected) < 1e-10
    _, pullback = tp.vjp(f, a0)
    (eager_vjp,) = pullback(g0)
    assert _relative(eager_vjp, traced_vjp) < 1e-10
    jitted = tp.jit(lambda x: tp.jvp(f, (x,), (da,))[1])(a0)
    assert _relative(jitted, expected) < 1e-10


def test_effective_hamiltonian_time_evolution_gradient_in_the_environments(rng):
    """``exp(-i dt H_eff) v`` with ``H_eff`` closing over (L, W, R): the gradient of an
    overlap with respect to every environment, eager and traced, against the dense matrix."""
    d, wd, pd = 2, 2, 2
    n = d * pd * d

    def hermitian(x, axes):
        return (x + np.conj(np.swapaxes(x, *axes))) / 2
    envs = [hermitian(rng.standard_normal((d, wd, d)), (0, 2)),
            hermitian(rng.standard_normal((wd, wd, pd, pd)), (2, 3)),
            hermitian(rng.standard_normal((d, wd, d)), (0, 2))]
    v0 = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    target = rng.standard_normal(n) + 1j * rng.standard_normal(n)

    def sparse(left, mpo, right):
        op = sla.LinearOperator((n, n), lambda v: -0.5j * tp.einsum(
            "axb,xyst,cye,bte->asc", left, mpo, right, v.reshape(d, pd, d)).reshape(-1),
            dtype=np.complex128)
        return tp.abs(tp.vdot(target, sla.expm_multiply(op, v0))) ** 2

    def dense(left, mpo, right):
        h = tp.einsum("axb,xyst,cye->ascbte", left, mpo, right).reshape(n, n)
        return tp.abs(tp.vdot(target, tp.scipy.linalg.expm(-0.5j * h) @ v0)) ** 2
    xs = [tp.input(e.shape) for e in envs]
    expected = tp.compile(tp.ad.grad(dense(*xs), xs), inputs=xs)(*envs)
    got = tp.compile(tp.ad.grad(sparse(*xs), xs), inputs=xs)(*envs)
    tensors = [tp.tensor(e, requires_grad=True) for e in envs]
    sparse(*tensors).backward()
    for g, t, e in zip(got, tensors, expected):
        assert _relative(g, e) < 1e-10
        assert _relative(t.grad.numpy(), e) < 1e-10


def test_a_larger_norm_takes_more_nodes_and_stays_exact(rng):
    hs, b, o, theta0 = _case(rng, np.float64)
    theta0 = theta0 * 8.0                                  # ||A||_1 of order 20
    sparse, dense = _sparse_loss(hs, b, o, np.float64), _dense_loss(hs, b, o, np.float64)
    x = tp.input((K,))
    expected = tp.evaluate(tp.ad.grad(dense(x), [x])[0], {x: theta0})
    assert _relative(tp.evaluate(tp.ad.grad(sparse(x), [x])[0], {x: theta0}),
                     expected) < 1e-9
    theta = tp.tensor(theta0, requires_grad=True)
    sparse(theta).backward()
    assert _relative(theta.grad.numpy(), expected) < 1e-9
    assert _expm.node_count(20.0) > _expm.node_count(2.0) >= 2


# ------------------------------------------------------------------ second order

def _hessian_vector_products(loss, theta0, direction):
    """Forward-over-reverse and reverse-over-reverse HVPs, traced and compiled."""
    x, d = tp.input((K,)), tp.input((K,))
    (g,) = tp.ad.grad(loss(x), [x])
    (forward,) = tp.ad.jvp([g], [x], [d])
    (reverse,) = tp.ad.grad(tp.sum(g * d), [x])
    return tp.compile([forward, reverse], inputs=[x, d])(theta0, direction)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_traced_hessian_vector_products_match_the_dense_expm(rng, dtype):
    hs, b, o, theta0 = _case(rng, dtype)
    direction = rng.standard_normal(K)
    sparse, dense = _sparse_loss(hs, b, o, dtype), _dense_loss(hs, b, o, dtype)
    expected = _hessian_vector_products(dense, theta0, direction)
    got = _hessian_vector_products(sparse, theta0, direction)
    for g, e in zip(got, expected):
        assert _relative(g, e) < 1e-9
    x = tp.input((K,))                                     # and central differences
    gradient = tp.compile(tp.ad.grad(sparse(x), [x]), inputs=[x])
    eps = 1e-5
    fd = (gradient(theta0 + eps * direction)[0]
          - gradient(theta0 - eps * direction)[0]) / (2 * eps)
    np.testing.assert_allclose(got[0], fd, rtol=1e-6, atol=1e-8)


def test_hessian_vector_product_of_a_matrix_b_under_jit(rng):
    hs, _, o, theta0 = _case(rng, np.float64)
    b = rng.standard_normal((N, 2))
    direction = rng.standard_normal(K)

    def loss_with(expm_b):
        return lambda theta: tp.sum(expm_b(theta) * (tp.asarray(o) @ expm_b(theta)))
    sparse = loss_with(lambda t: sla.expm_multiply(_operator(t, hs, np.float64), b))
    dense = loss_with(lambda t: tp.scipy.linalg.expm(_dense(t, hs, np.float64)) @ b)

    def hvp(loss):
        return tp.jit(lambda x: tp.jvp(tp.grad(loss), (x,), (direction,))[1])(theta0)
    assert _relative(hvp(sparse), hvp(dense)) < 1e-9


def test_traced_third_order_directional_derivative(rng):
    hs, b, o, theta0 = _case(rng, np.float64)
    direction = rng.standard_normal(K)
    values = []
    for loss in (_sparse_loss(hs, b, o, np.float64), _dense_loss(hs, b, o, np.float64)):
        x = tp.input((K,))
        first = tp.ad.jvp([loss(x)], [x], [direction])[0]
        second = tp.ad.jvp([first], [x], [direction])[0]
        third = tp.ad.grad(second, [x])[0]
        values.append(tp.evaluate(third, {x: theta0}))
    assert _relative(values[0], values[1]) < 1e-8


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eager_second_order_in_the_operator_matches_the_dense_expm(rng, dtype):
    """Eager, the matvec's tensors stand in a trace of their own: a Hessian-vector product
    (backward(create_graph=True), then a second backward) equals the dense expm's."""
    hs, b, o, theta0 = _case(rng, dtype)
    direction = rng.standard_normal(K)
    results = []
    for loss in (_sparse_loss(hs, b, o, dtype), _dense_loss(hs, b, o, dtype)):
        theta = tp.tensor(theta0, requires_grad=True)
        (g,) = tp.grad_of([loss(theta)], [theta], create_graph=True)
        tp.sum(g * tp.tensor(direction)).backward()
        results.append(theta.grad.numpy())
    assert _relative(results[0], results[1]) < 1e-9


def test_eager_gradient_in_b_and_the_operator_together(rng):
    hs, b0, o, theta0 = _case(rng, np.complex128)
    x, bx = tp.input((K,)), tp.input((N,), np.complex128)
    dense = _loss_of(tp.scipy.linalg.expm(_dense(x, hs, np.complex128)) @ bx, o)
    expected = [tp.evaluate(g, {x: theta0, bx: b0}) for g in tp.ad.grad(dense, [x, bx])]
    theta, b = tp.tensor(theta0, requires_grad=True), tp.tensor(b0, requires_grad=True)
    _loss_of(sla.expm_multiply(_operator(theta, hs, np.complex128), b), o).backward()
    assert _relative(theta.grad.numpy(), expected[0]) < 1e-10
    assert _relative(b.grad.numpy(), expected[1]) < 1e-10

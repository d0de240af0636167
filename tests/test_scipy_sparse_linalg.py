"""tp.scipy.sparse.linalg: values against SciPy, implicit first-order derivatives against
Hellmann-Feynman and central differences (a DMRG-like effective Hamiltonian whose matvec
closes over its environments), in eager, traced and compiled modes; the solves; the
errors (a tensor the tape cannot see, mixed modes, degenerate eigenvectors); eager
second order against tp.jit.  Second order and ``M=``: tests/test_scipy_sparse_higher_order.py.
"""
import numpy as np
import pytest
import scipy.sparse.linalg as scipy_sla

import tenpy_ad as tp
from tenpy_ad.errors import (ArgumentError, ConvergenceError, GaugeError,
                             NotDifferentiableError, UnsupportedError)
from tenpy_ad.numpy import _dispatch
from tenpy_ad.scipy.sparse import linalg as sla

D, WD, PD = 3, 2, 2                   # bond, MPO and physical dimensions
N = D * PD * D
HEFF = "axb,xyst,cye,bte->asc"


def _hermitian_in(x, axes):
    return (x + np.conj(np.swapaxes(x, *axes))) / 2


def _environments(rng, dtype=np.float64):
    def draw(shape):
        x = rng.standard_normal(shape)
        if dtype == np.complex128:
            x = x + 1j * rng.standard_normal(shape)
        return x
    left = _hermitian_in(draw((D, WD, D)), (0, 2))
    mpo = _hermitian_in(draw((WD, WD, PD, PD)), (2, 3))
    right = _hermitian_in(draw((D, WD, D)), (0, 2))
    return left, mpo, right


def _heff(left, mpo, right):
    """The effective Hamiltonian of one site as a LinearOperator closing over L, W, R."""
    dtype = np.result_type(*[getattr(x, "dtype", np.float64) for x in (left, mpo, right)])
    return sla.LinearOperator(
        (N, N), lambda v: tp.einsum(HEFF, left, mpo, right, v.reshape(D, PD, D)).reshape(-1),
        dtype=dtype)


def _dense(left, mpo, right):
    return np.einsum("axb,xyst,cye->ascbte", left, mpo, right).reshape(N, N)


def _lowest(left, mpo, right):
    w, v = np.linalg.eigh(_dense(left, mpo, right))
    return w[0], v[:, 0]


def _hellmann_feynman(left, mpo, right):
    """d lambda_min / d(L, W, R) by Hellmann-Feynman, written out with einsum."""
    _, v = _lowest(left, mpo, right)
    v = v.reshape(D, PD, D)
    vc = np.conj(v)
    return (np.einsum("asc,xyst,cye,bte->axb", vc, mpo, right, v),
            np.einsum("asc,axb,cye,bte->xyst", vc, left, right, v),
            np.einsum("asc,axb,xyst,bte->cye", vc, left, mpo, v))


def _directions(rng, arrays):
    """Random perturbations that keep the operator Hermitian."""
    axes = [(0, 2), (2, 3), (0, 2)]
    out = []
    for x, ax in zip(arrays, axes):
        d = rng.standard_normal(x.shape)
        if np.iscomplexobj(x):
            d = d + 1j * rng.standard_normal(x.shape)
        out.append(_hermitian_in(d, ax))
    return out


def _central_difference(f, arrays, directions, eps=1e-5):
    plus = [x + eps * d for x, d in zip(arrays, directions)]
    minus = [x - eps * d for x, d in zip(arrays, directions)]
    return (f(*plus) - f(*minus)) / (2 * eps)


def _pairing(grads, directions):
    """Re <g, d>, the first-order change of a real loss along d (PyTorch's convention)."""
    return sum(np.real(np.vdot(np.asarray(g), d)) for g, d in zip(grads, directions))


# ------------------------------------------------------------------ values

def test_values_match_scipy_on_arrays_and_tensors(rng):
    envs = _environments(rng)
    dense = _dense(*envs)
    expected = scipy_sla.eigsh(scipy_sla.aslinearoperator(dense), k=3, which="SA",
                               return_eigenvectors=False)
    w, v = sla.eigsh(_heff(*envs), k=3, which="SA")
    assert isinstance(w, np.ndarray)            # nothing to differentiate: arrays
    np.testing.assert_allclose(w, np.sort(expected), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dense @ v, v * w, atol=1e-9)
    tensors = [tp.tensor(x, requires_grad=True) for x in envs]
    wt, vt = sla.eigsh(_heff(*tensors), k=3, which="SA")
    np.testing.assert_allclose(wt.detach().numpy(), np.sort(expected), rtol=1e-10,
                               atol=1e-10)


def test_eigsh_largest_magnitude_matches_numpy(rng):
    a = rng.standard_normal((12, 12))
    h = a + a.T
    w = sla.eigsh(sla.aslinearoperator(tp.tensor(h)), k=2, return_eigenvectors=False)
    ref = np.linalg.eigvalsh(h)
    np.testing.assert_allclose(np.sort(np.abs(w)), np.sort(np.abs(ref))[-2:], rtol=1e-10)


# ------------------------------------------------------------------ DMRG-like gradients

@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_lowest_eigenvalue_gradient_eager_is_hellmann_feynman(rng, dtype):
    envs = _environments(rng, dtype)
    tensors = [tp.tensor(x, requires_grad=True) for x in envs]
    w, _ = sla.eigsh(_heff(*tensors), k=1, which="SA")
    w[0].backward()
    grads = [t.grad.numpy() for t in tensors]
    for got, expected in zip(grads, _hellmann_feynman(*envs)):
        np.testing.assert_allclose(got, np.conj(expected) if dtype == np.complex128
                                   else expected, atol=1e-9)
    directions = _directions(rng, envs)
    fd = _central_difference(lambda *e: _lowest(*e)[0], envs, directions)
    np.testing.assert_allclose(_pairing(grads, directions), fd, rtol=1e-6, atol=1e-8)


def _traced_lowest(loss_of):
    xs = [tp.input(x.shape, x.dtype) for x in _environments(np.random.default_rng(0))]
    w, v = sla.eigsh(_heff(*xs), k=2, which="SA", v0=np.ones(N))
    loss = loss_of(w, v)
    return tp.compile([loss, *tp.ad.grad(loss, xs)], inputs=xs)


def test_lowest_eigenvalue_gradient_traced_and_compiled(rng):
    program = _traced_lowest(lambda w, v: w[0])
    envs = _environments(rng)
    value, *grads = program(*envs)
    np.testing.assert_allclose(value, _lowest(*envs)[0], rtol=1e-10)
    for got, expected in zip(grads, _hellmann_feynman(*envs)):
        np.testing.assert_allclose(got, expected, atol=1e-9)
    other = _environments(rng)                  # the program runs on new environments too
    _, *grads = program(*other)
    for got, expected in zip(grads, _hellmann_feynman(*other)):
        np.testing.assert_allclose(got, expected, atol=1e-9)


def _overlap_loss_numpy(u):
    return lambda *envs: abs(np.vdot(_lowest(*envs)[1], u)) ** 2


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eigenvector_gradient_eager_matches_finite_differences(rng, dtype):
    envs = _environments(rng, dtype)
    u = rng.standard_normal(N) + (1j * rng.standard_normal(N) if dtype == np.complex128
                                  else 0)
    tensors = [tp.tensor(x, requires_grad=True) for x in envs]
    _, v = sla.eigsh(_heff(*tensors), k=2, which="SA")
    loss = tp.abs(tp.vdot(v[:, 0], u)) ** 2
    loss.backward()
    directions = _directions(rng, envs)
    fd = _central_difference(_overlap_loss_numpy(u), envs, directions)
    np.testing.assert_allclose(_pairing([t.grad.numpy() for t in tensors], directions), fd,
                               rtol=1e-6, atol=1e-8)


def test_eigenvector_gradient_traced_matches_finite_differences(rng):
    u = rng.standard_normal(N)
    program = _traced_lowest(lambda w, v: (v[:, 0] @ u) ** 2)
    envs = _environments(rng)
    _, *grads = program(*envs)
    directions = _directions(rng, envs)
    fd = _central_difference(_overlap_loss_numpy(u), envs, directions)
    np.testing.assert_allclose(_pairing(grads, directions), fd, rtol=1e-6, atol=1e-8)


def test_forward_mode_matches_finite_differences(rng):
    envs = _environments(rng)
    u = rng.standard_normal(N)
    directions = _directions(rng, envs)
    xs = [tp.input(x.shape, x.dtype) for x in envs]
    w, v = sla.eigsh(_heff(*xs), k=2, which="SA")
    (tangent,) = tp.ad.jvp([w[0] + (v[:, 0] @ u) ** 2], xs, directions)
    got = tp.evaluate(tangent, dict(zip(xs, envs)))
    fd = _central_difference(lambda *e: _lowest(*e)[0] + _overlap_loss_numpy(u)(*e), envs,
                             directions)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


def test_environments_built_inside_the_closure_get_their_gradient(rng):
    """Tensors reached through intermediate results (symmetrised inside) are found too."""
    a0 = rng.standard_normal((6, 6))
    a = tp.tensor(a0, requires_grad=True)
    op = sla.LinearOperator((6, 6), lambda v: ((a + a.T) * 0.5) @ v)
    w, _ = sla.eigsh(op, k=1, which="SA")
    w[0].backward()
    _, vecs = np.linalg.eigh((a0 + a0.T) / 2)
    np.testing.assert_allclose(a.grad.numpy(), np.outer(vecs[:, 0], vecs[:, 0]), atol=1e-9)


# ------------------------------------------------------------------ errors

def test_a_tensor_hidden_from_the_tape_raises_naming_eigsh(rng):
    a = tp.tensor(rng.standard_normal((5, 5)), requires_grad=True)
    op = sla.LinearOperator((5, 5), lambda v: np.asarray(a) @ np.asarray(v), dtype=float)
    with pytest.raises(NotDifferentiableError, match="eigsh"):
        sla.eigsh(op, k=1, which="SA")


def test_mixing_traced_and_eager_tensors_that_require_grad_raises(rng):
    a = tp.tensor(rng.standard_normal((5, 5)), requires_grad=True)
    b = tp.input((5, 5))
    op = sla.LinearOperator((5, 5), lambda v: a @ v + b @ v, dtype=float)
    with pytest.raises((ArgumentError, NotDifferentiableError), match="eigsh"):
        sla.eigsh(op, k=1, which="SA")


def _degenerate_operator(rng, k_degenerate=2):
    q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    h = q @ np.diag([-2.0] * k_degenerate + [1.0, 2.0, 3.0, 4.0][:6 - k_degenerate]) @ q.T
    a = tp.tensor(np.zeros((6, 6)), requires_grad=True)
    return a, sla.LinearOperator((6, 6), lambda v: (h + a + a.T) @ v), h


def test_degenerate_eigenvectors_basis_dependent_loss_raises(rng):
    a, op, _ = _degenerate_operator(rng)
    _, v = sla.eigsh(op, k=2, which="SA")
    with pytest.raises(GaugeError, match="eigsh"):
        (v[0, 0] ** 2).backward()


def test_degenerate_eigenvectors_invariant_loss_is_finite_and_right(rng):
    a, op, h = _degenerate_operator(rng)
    u = rng.standard_normal(6)
    w, v = sla.eigsh(op, k=2, which="SA")
    ((v.T @ u) ** 2).sum().backward()           # |P u|^2 with P the degenerate projector
    _, vecs = np.linalg.eigh(h)
    projector = vecs[:, :2] @ vecs[:, :2].T
    # dP = sum over the gap: -(P dA R + R dA P) with R = sum_j v_j v_j^T / (lambda_j - (-2))
    r = sum(np.outer(vecs[:, j], vecs[:, j]) / (w_j + 2.0)
            for j, w_j in zip(range(2, 6), [1.0, 2.0, 3.0, 4.0]))
    pu = projector @ u
    ru = r @ u
    # d(u^T P u) = -2 (Pu)^T dH (Ru) with dH = dA + dA^T
    expected = -2 * (np.outer(pu, ru) + np.outer(ru, pu))
    np.testing.assert_allclose(a.grad.numpy(), expected, atol=1e-8)


def test_degenerate_with_an_uncomputed_eigenvalue_asks_for_a_larger_k(rng):
    a, op, _ = _degenerate_operator(rng)
    w, v = sla.eigsh(op, k=1, which="SA")
    w[0].backward()                             # Hellmann-Feynman needs no solve
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.outer(v.detach().numpy(),
                                                            v.detach().numpy()), atol=1e-9)
    _, v = sla.eigsh(op, k=1, which="SA")
    with pytest.raises(ConvergenceError, match="raise k"):
        (v[0, 0] ** 2).backward()


def test_eager_second_order_matches_traced_and_finite_differences(rng):
    """Eager mode differentiates eigsh again (backward(create_graph=True), then a second
    backward): the same Hessian-vector product as tp.jit, and the central difference of
    the gradient (tests/test_scipy_sparse_higher_order.py checks it in depth)."""
    a0 = rng.standard_normal((5, 5))
    direction = rng.standard_normal((5, 5))

    def loss(x):
        op = sla.LinearOperator((5, 5), lambda v: (x + x.T) @ v, dtype=np.float64)
        w, v = sla.eigsh(op, k=2, which="SA", v0=np.ones(5))
        return w[0] + v[0, 0] ** 2 + 0.5 * w[1]

    a = tp.tensor(a0, requires_grad=True)
    loss(a).backward(create_graph=True)
    g, a.grad = a.grad, None
    tp.sum(g * direction).backward()
    eager = a.grad.numpy()
    hvp = tp.jit(lambda x: tp.grad(lambda y: tp.sum(tp.grad(loss)(y) * direction))(x))(a0)
    np.testing.assert_allclose(eager, hvp, rtol=1e-9, atol=1e-10)
    h = 1e-5
    fd = (tp.jit(tp.grad(loss))(a0 + h * direction)
          - tp.jit(tp.grad(loss))(a0 - h * direction)) / (2 * h)
    forward = tp.jvp(tp.grad(loss), (a0,), (direction,))[1]       # eager forward over reverse
    np.testing.assert_allclose(forward, fd, rtol=1e-6, atol=1e-8)
    sym = (eager + eager.T) / 2                # the loss sees a + a^T: compare that part
    np.testing.assert_allclose(sym, (fd + fd.T) / 2, rtol=1e-6, atol=1e-8)


def test_unsupported_options_raise(rng):
    op = sla.aslinearoperator(tp.tensor(np.eye(4)))
    with pytest.raises(UnsupportedError, match="eigsh: mode='buckling'"):
        sla.eigsh(op, k=1, sigma=0.5, mode="buckling")
    with pytest.raises(UnsupportedError, match="sigma"):
        sla.eigsh(op, k=1, sigma=0.5j)


def test_shift_invert_finds_an_interior_eigenpair_with_hellmann_feynman(rng):
    """``sigma`` near an interior eigenvalue: SciPy's shift-invert finds it; its gradient
    with respect to the operator's matrix is ``v v^T`` (eager, jit) and central
    differences agree."""
    a = rng.standard_normal((8, 8))
    a = a + a.T
    values, vectors = np.linalg.eigh(a)
    sigma = values[3] + 0.05

    def interior(h):
        op = sla.LinearOperator((8, 8), matvec=lambda v: h @ v, dtype=np.float64)
        return sla.eigsh(op, k=1, sigma=sigma)[0][0]

    np.testing.assert_allclose(interior(tp.tensor(a)).item(), values[3], rtol=1e-12)
    expected = np.outer(vectors[:, 3], vectors[:, 3])
    for gradient in (tp.grad(interior), tp.jit(tp.grad(interior))):
        np.testing.assert_allclose(gradient(a), expected, atol=1e-10)
    direction = rng.standard_normal((8, 8))
    direction = direction + direction.T
    h = 1e-6
    fd = (interior(a + h * direction) - interior(a - h * direction)) / (2 * h)
    np.testing.assert_allclose(np.sum(expected * direction), fd, rtol=1e-6)


# ------------------------------------------------------------------ linear solves

def _system(rng, hermitian_positive=False):
    a = rng.standard_normal((7, 7))
    a = a @ a.T + np.eye(7) if hermitian_positive else a + 5 * np.eye(7)
    return a, rng.standard_normal(7)


@pytest.mark.parametrize("solver,spd", [("gmres", False), ("cg", True), ("minres", True)])
def test_solve_values_and_gradients(rng, solver, spd):
    a0, b0 = _system(rng, spd)
    u = rng.standard_normal(7)
    a = tp.tensor(a0, requires_grad=True)
    b = tp.tensor(b0, requires_grad=True)
    op = sla.LinearOperator((7, 7), lambda v: a @ v)
    x, info = getattr(sla, solver)(op, b, rtol=1e-13)
    assert info == 0
    np.testing.assert_allclose(x.detach().numpy(), np.linalg.solve(a0, b0), atol=1e-10)
    (x @ u).backward()
    lam = np.linalg.solve(a0.T, u)
    np.testing.assert_allclose(b.grad.numpy(), lam, atol=1e-9)
    np.testing.assert_allclose(a.grad.numpy(), -np.outer(lam, np.linalg.solve(a0, b0)),
                               atol=1e-9)


def test_gmres_traced_compiled_matches_finite_differences(rng):
    a0, b0 = _system(rng)
    u = rng.standard_normal(7)
    a, b = tp.input((7, 7)), tp.input((7,))
    x, _ = sla.gmres(sla.LinearOperator((7, 7), lambda v: a @ v, dtype=float), b,
                     rtol=1e-13)
    loss = (x @ u) ** 2
    program = tp.compile([loss, *tp.ad.grad(loss, [a, b])], inputs=[a, b])
    _, ga, gb = program(a0, b0)
    da, db = rng.standard_normal((7, 7)), rng.standard_normal(7)

    def f(a_, b_):
        return (np.linalg.solve(a_, b_) @ u) ** 2
    fd = (f(a0 + 1e-6 * da, b0 + 1e-6 * db) - f(a0 - 1e-6 * da, b0 - 1e-6 * db)) / 2e-6
    np.testing.assert_allclose(np.sum(ga * da) + gb @ db, fd, rtol=1e-6)


def test_a_scipy_sparse_operator_gives_scipy_values(rng):
    """A matvec that needs values (SciPy's sparse product) runs on arrays."""
    import scipy.sparse
    h = scipy.sparse.random(30, 30, density=0.2, random_state=3)
    h = (h + h.T).tocsr()
    w = sla.eigsh(scipy_sla.aslinearoperator(h), k=2, which="LA", return_eigenvectors=False)
    ref = scipy_sla.eigsh(h, k=2, which="LA", return_eigenvectors=False)
    np.testing.assert_allclose(w, np.sort(ref), rtol=1e-10)


def test_solve_on_arrays_is_scipy(rng):
    a0, b0 = _system(rng)
    x, info = sla.gmres(sla.aslinearoperator(a0), b0, rtol=1e-12)
    ref, ref_info = scipy_sla.gmres(a0, b0, rtol=1e-12)
    assert isinstance(x, np.ndarray) and info == ref_info == 0
    np.testing.assert_allclose(x, ref, atol=1e-10)


# ------------------------------------------------------------------ svds

def test_svds_values_and_gradient(rng):
    a0 = rng.standard_normal((6, 4))
    a = tp.tensor(a0, requires_grad=True)
    u, s, vh = sla.svds(sla.aslinearoperator(a), k=2)
    np.testing.assert_allclose(s.detach().numpy(),
                               np.sort(np.linalg.svd(a0, compute_uv=False))[-2:], rtol=1e-10)
    np.testing.assert_allclose(u.detach().numpy() * s.detach().numpy() @ vh.detach().numpy(),
                               _truncated(a0, 2), atol=1e-9)
    s.sum().backward()
    uu, _, vv = np.linalg.svd(a0, full_matrices=False)
    np.testing.assert_allclose(a.grad.numpy(), uu[:, :2] @ vv[:2], atol=1e-9)


def _truncated(a, k):
    uu, ss, vv = np.linalg.svd(a, full_matrices=False)
    return uu[:, :k] * ss[:k] @ vv[:k]


# ------------------------------------------------------------------ expm_multiply

def test_expm_multiply_values_and_gradient_in_b(rng):
    from scipy.linalg import expm
    a0, b0, u = rng.standard_normal((6, 6)) * 0.5, rng.standard_normal(6), rng.standard_normal(6)
    np.testing.assert_allclose(sla.expm_multiply(sla.aslinearoperator(a0), b0),
                               expm(a0) @ b0, atol=1e-12)
    b = tp.tensor(b0, requires_grad=True)
    (sla.expm_multiply(sla.aslinearoperator(a0), b) @ u).backward()
    np.testing.assert_allclose(b.grad.numpy(), expm(a0).T @ u, atol=1e-12)
    x, a = tp.input((6,)), tp.input((6, 6))
    y = sla.expm_multiply(sla.aslinearoperator(a), x)
    (g,) = tp.ad.grad(y @ u, [x])
    np.testing.assert_allclose(tp.evaluate(g, {x: b0, a: a0}), expm(a0).T @ u, atol=1e-12)


def test_complex_vectors_of_a_real_operator_keep_their_imaginary_part(rng):
    from scipy.linalg import expm
    a0 = rng.standard_normal((5, 5)) * 0.5
    b0 = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    a = tp.tensor(a0, requires_grad=True)
    y = sla.expm_multiply(sla.LinearOperator((5, 5), lambda v: a @ v), tp.tensor(b0))
    np.testing.assert_allclose(y.detach().numpy(), expm(a0) @ b0, atol=1e-12)
    x, info = sla.gmres(sla.LinearOperator((5, 5), lambda v: (a + 4 * np.eye(5)) @ v), b0,
                        rtol=1e-13)
    np.testing.assert_allclose(x.detach().numpy(), np.linalg.solve(a0 + 4 * np.eye(5), b0),
                               atol=1e-10)


def test_expm_multiply_is_differentiable_in_the_operator(rng):
    """Once refused; now the Fréchet derivative (tests/test_scipy_sparse_expm.py in depth)."""
    from scipy.linalg import expm_frechet
    a0 = rng.standard_normal((4, 4)) * 0.5
    a = tp.tensor(a0, requires_grad=True)
    y = sla.expm_multiply(sla.LinearOperator((4, 4), lambda v: a @ v), np.ones(4))
    y.sum().backward()
    expected = [[expm_frechet(a0, np.outer(e, f), compute_expm=False).sum(0) @ np.ones(4)
                 for f in np.eye(4)] for e in np.eye(4)]
    np.testing.assert_allclose(a.grad.numpy(), expected, rtol=1e-10)
    x = tp.input((4, 4))
    y = sla.expm_multiply(sla.aslinearoperator(x), np.ones(4))
    np.testing.assert_allclose(tp.evaluate(tp.ad.grad(y.sum(), x), {x: a0}), expected,
                               rtol=1e-10)


# ------------------------------------------------------------------ the operator

def test_linear_operator_algebra(rng):
    m = rng.standard_normal((4, 3))
    t = tp.tensor(m)
    op = sla.aslinearoperator(t)
    x, y = rng.standard_normal(3), rng.standard_normal(4)
    np.testing.assert_allclose(np.asarray(op @ x), m @ x)
    np.testing.assert_allclose(np.asarray(op.matvec(x)), m @ x)
    np.testing.assert_allclose(np.asarray(op.dot(np.eye(3))), m)
    np.testing.assert_allclose(np.asarray(op.H @ y), m.T @ y)
    np.testing.assert_allclose(np.asarray(op.T @ y), m.T @ y)
    assert op.shape == (4, 3) and op.H.shape == (3, 4) and op.dtype == np.float64
    bare = sla.LinearOperator((3, 3), lambda v: v * 2.0)
    with pytest.raises(UnsupportedError, match="rmatvec"):
        bare.H


def test_the_names_are_registered():
    for name in ("eigsh", "svds", "gmres", "cg", "minres", "expm_multiply"):
        assert _dispatch.IMPLEMENTATIONS[f"scipy.sparse.linalg.{name}"] is getattr(sla, name)


def test_lifting_takes_eager_tensors_as_placeholders_in_its_own_thread_only():
    """primitive.lifting (how an eager matvec is traced): an eager tensor that requires
    grad entering the trace is one placeholder however often it enters; in another thread
    it still raises."""
    import threading

    from tenpy_ad.primitive import lifting
    left = tp.tensor(np.eye(3), requires_grad=True)
    other = []

    def elsewhere():
        try:
            left @ tp.input((3,))
        except NotDifferentiableError as error:
            other.append(error)

    with lifting() as lifts:
        x = tp.input((3,))
        (left @ x) + (left @ x) * 2.0
        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
    assert lifts.tensors == [left] and len(lifts.placeholders) == 1
    assert len(other) == 1
    with pytest.raises(NotDifferentiableError, match="cannot enter a traced"):
        left @ tp.input((3,))

"""tp.scipy.sparse.linalg at second order and generalised: Hessian-vector products of losses
through eigsh (eigenvalues, a gauge-invariant eigenvector loss), svds and gmres/cg/minres
on operators whose matvec is tensor code, against central differences of the gradient,
traced (tp.ad + tp.compile) and under tp.jit; in eager mode (backward(create_graph=True),
nested tp.grad, tp.jvp of tp.grad) the same numbers as traced, a third order, and the
refusals (a matvec that needs values; a tensor written in place after the solve).  ``M=`` (a DMRG-like effective Hamiltonian with a norm environment): values against
SciPy (``M``, ``Minv``, ``sigma`` with ``OPinv``, mode "cayley") and first-order derivatives
against Hellmann-Feynman ``dw = v^H (dA - w dM) v`` and finite differences.  Everything is
deterministic: a fixed ``v0`` and ARPACK at ``tol=0``.
"""
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse.linalg as scipy_sla

import tenpy_ad as tp
from tenpy_ad.errors import (ArgumentError, GaugeError, NotDifferentiableError, ShapeError,
                             TapeError, UnsupportedError)
from tenpy_ad.scipy.sparse import linalg as sla

D, WD, PD = 3, 2, 2                   # bond, MPO and physical dimensions
N = D * PD * D
HEFF = "axb,xyst,cye,bte->asc"


def _hermitian_in(x, axes):
    return (x + np.conj(np.swapaxes(x, *axes))) / 2


def _environments(rng):
    left = _hermitian_in(rng.standard_normal((D, WD, D)), (0, 2))
    mpo = _hermitian_in(rng.standard_normal((WD, WD, PD, PD)), (2, 3))
    right = _hermitian_in(rng.standard_normal((D, WD, D)), (0, 2))
    return [left, mpo, right]


def _heff(left, mpo, right):
    """The one-site effective Hamiltonian as a LinearOperator closing over L, W, R."""
    return sla.LinearOperator(
        (N, N), lambda v: tp.einsum(HEFF, left, mpo, right, v.reshape(D, PD, D)).reshape(-1),
        dtype=np.float64)


def _dense(left, mpo, right):
    return np.einsum("axb,xyst,cye->ascbte", left, mpo, right).reshape(N, N)


def _symmetric(rng, shape):
    d = rng.standard_normal(shape)
    return d + np.swapaxes(d, -1, -2) if len(shape) == 2 else d


def _directions(rng, arrays):
    axes = [(0, 2), (2, 3), (0, 2)]
    return [_hermitian_in(rng.standard_normal(x.shape), ax) for x, ax in zip(arrays, axes)]


def _hvp_programs(loss, shapes):
    """The gradient of ``loss`` and two Hessian-vector products (forward over reverse,
    reverse over reverse), compiled from tp.ad on placeholders."""
    xs = [tp.input(s) for s in shapes]
    ds = [tp.input(s) for s in shapes]
    value = loss(*xs)
    grads = tp.ad.grad(value, xs)
    forward = tp.ad.jvp(grads, xs, ds)
    inner = sum(tp.sum(g * d) for g, d in zip(grads, ds))
    reverse = tp.ad.grad(inner, xs)
    gradient = tp.compile(grads, inputs=xs)
    both = tp.compile([*forward, *reverse], inputs=[*xs, *ds])
    return gradient, both


def _check_hvp(loss, args, directions, project=None, eps=1e-5, rtol=1e-6):
    """Both HVPs against the central difference of the compiled gradient; returns the
    largest relative error.

    A loss of a Hermitian operator is a function of Hermitian arguments only: the reverse
    HVP ``d<g, d>/dx`` differentiates the gradient along every direction of ``x``, so it is
    compared on the Hermitian part (``project``: one map per argument); the forward HVP
    (the gradient's derivative along the Hermitian ``d``) is compared entry by entry."""
    gradient, both = _hvp_programs(loss, [a.shape for a in args])
    plus = gradient(*[a + eps * d for a, d in zip(args, directions)])
    minus = gradient(*[a - eps * d for a, d in zip(args, directions)])
    fd = [(p - m) / (2 * eps) for p, m in zip(plus, minus)]
    results = both(*args, *directions)
    n = len(args)
    scale = max(np.max(np.abs(f)) for f in fd)
    worst = 0.0
    project = project or [lambda x: x] * n
    for got, maps in ((results[:n], [lambda x: x] * n), (results[n:], project)):
        for g, f, p in zip(got, fd, maps):
            np.testing.assert_allclose(p(g), p(f), rtol=rtol, atol=rtol * scale)
            worst = max(worst, float(np.max(np.abs(p(g) - p(f)))) / scale)
    return worst


#: the Hermitian parts of (L, W, R) and of the norm environments (NL, NR)
HERMITIAN = [lambda x: _hermitian_in(x, (0, 2)), lambda x: _hermitian_in(x, (2, 3)),
             lambda x: _hermitian_in(x, (0, 2))]
NORMS = [lambda x: _hermitian_in(x, (0, 1))] * 2


# ------------------------------------------------------------------ eigsh, second order

def _lowest_value(left, mpo, right):
    w, _ = sla.eigsh(_heff(left, mpo, right), k=2, which="SA", v0=np.ones(N))
    return w[0]


_OBSERVABLE = np.diag(np.linspace(-1.0, 1.0, N)) + 0.1 * np.ones((N, N))


def _observable(left, mpo, right):
    """<v_0| B |v_0>: invariant under the sign (gauge) of the eigenvector."""
    _, v = sla.eigsh(_heff(left, mpo, right), k=2, which="SA", v0=np.ones(N))
    return v[:, 0] @ (_OBSERVABLE @ v[:, 0])


def _projector(left, mpo, right):
    """tr(P B) with P = v_0 v_0^T + v_1 v_1^T: invariant under rotations inside the span."""
    _, v = sla.eigsh(_heff(left, mpo, right), k=2, which="SA", v0=np.ones(N))
    return tp.sum(v * (_OBSERVABLE @ v))


@pytest.mark.parametrize("loss", [_lowest_value, _observable, _projector])
def test_eigsh_hessian_vector_products_match_finite_differences(rng, loss):
    envs = _environments(rng)
    error = _check_hvp(loss, envs, _directions(rng, envs), HERMITIAN)
    assert error < 1e-6


def test_eigsh_hessian_of_the_lowest_eigenvalue_is_second_order_perturbation_theory(rng):
    """d^2 w_0 = 2 v_0^T dH (w_0 - H)^+ dH v_0 + v_0^T d^2H v_0 along (L, W, R) + t dirs."""
    envs = _environments(rng)
    dirs = _directions(rng, envs)
    h = _dense(*envs)
    values, vectors = np.linalg.eigh(h)
    v0 = vectors[:, 0]
    first = sum(_dense(*[d if j == i else e for j, (e, d) in enumerate(zip(envs, dirs))])
                for i in range(3))
    second = sum(_dense(*[dirs[j] if j in (i, k) else envs[j] for j in range(3)])
                 for i in range(3) for k in range(3) if i != k)
    resolvent = sum(np.outer(vectors[:, j], vectors[:, j]) / (values[0] - values[j])
                    for j in range(1, N))
    expected = 2 * (first @ v0) @ resolvent @ (first @ v0) + v0 @ second @ v0
    _, both = _hvp_programs(_lowest_value, [e.shape for e in envs])
    hvp = both(*envs, *dirs)[:3]
    np.testing.assert_allclose(sum(np.sum(g * d) for g, d in zip(hvp, dirs)), expected,
                               rtol=1e-8)


def test_eigsh_third_order_directional_derivative(rng):
    """jvp of jvp of jvp of w_0 against the central difference of the second order."""
    envs = _environments(rng)
    dirs = _directions(rng, envs)
    xs = [tp.input(e.shape) for e in envs]

    def along(f):
        return tp.ad.jvp([f], xs, dirs)[0]
    w = _lowest_value(*xs)
    second = tp.compile(along(along(w)), inputs=xs)
    third = tp.compile(along(along(along(w))), inputs=xs)
    eps = 1e-4
    fd = (second(*[e + eps * d for e, d in zip(envs, dirs)])
          - second(*[e - eps * d for e, d in zip(envs, dirs)])) / (2 * eps)
    np.testing.assert_allclose(third(*envs), fd, rtol=1e-5)


def test_eigsh_hessian_vector_product_under_jit(rng):
    envs = _environments(rng)
    dirs = _directions(rng, envs)

    def hvp(left, mpo, right, dl, dw, dr):
        gradient = tp.grad(lambda *e: _observable(*e), argnums=(0, 1, 2))
        return tp.jvp(lambda *e: gradient(*e), (left, mpo, right), (dl, dw, dr))[1]

    got = tp.jit(hvp)(*envs, *dirs)
    gradient, _ = _hvp_programs(_observable, [e.shape for e in envs])
    eps = 1e-5
    fd = [(p - m) / (2 * eps) for p, m in
          zip(gradient(*[e + eps * d for e, d in zip(envs, dirs)]),
              gradient(*[e - eps * d for e, d in zip(envs, dirs)]))]
    for g, f in zip(got, fd):
        np.testing.assert_allclose(g, f, rtol=1e-6, atol=1e-7)


def _eager_hvps(loss, args, directions):
    """The eager Hessian-vector products of ``loss`` at ``args`` along ``directions``:
    reverse over reverse by ``backward(create_graph=True)`` then a second ``backward``,
    reverse over reverse by nested ``tp.grad``, and forward over reverse by ``tp.jvp`` of
    ``tp.grad``, all on the eager tape."""
    leaves = [tp.tensor(a, requires_grad=True) for a in args]
    loss(*leaves).backward(create_graph=True)
    grads = [x.grad for x in leaves]
    for x in leaves:
        x.grad = None
    sum(tp.sum(g * d) for g, d in zip(grads, directions)).backward()
    backward = [x.grad.numpy() for x in leaves]
    argnums = tuple(range(len(args)))
    gradient = tp.grad(loss, argnums=argnums)
    nested = tp.grad(lambda *a: sum(tp.sum(g * d) for g, d in zip(gradient(*a), directions)),
                     argnums=argnums)(*args)
    forward = tp.jvp(gradient, tuple(args), tuple(directions))[1]
    return backward, list(nested), list(forward)


def _check_eager_hvp(loss, args, directions, project=None):
    """The eager HVPs against the traced ones (the same numbers, to 1e-9 of their scale)
    and against the central difference of the compiled gradient (as _check_hvp); returns
    the largest relative difference from the traced HVPs."""
    gradient, both = _hvp_programs(loss, [a.shape for a in args])
    traced = both(*args, *directions)
    n = len(args)
    backward, nested, forward = _eager_hvps(loss, args, directions)
    scale = max(np.max(np.abs(t)) for t in traced)
    worst = 0.0
    for got, expected in ((backward, traced[n:]), (nested, traced[n:]),
                          (forward, traced[:n])):
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-9 * scale)
            worst = max(worst, float(np.max(np.abs(g - e))) / scale)
    eps = 1e-5
    fd = [(p - m) / (2 * eps) for p, m in
          zip(gradient(*[a + eps * d for a, d in zip(args, directions)]),
              gradient(*[a - eps * d for a, d in zip(args, directions)]))]
    project = project or [lambda x: x] * n
    for g, f, p in zip(backward, fd, project):
        np.testing.assert_allclose(p(g), p(f), rtol=1e-6, atol=1e-6 * scale)
    for g, f in zip(forward, fd):
        np.testing.assert_allclose(g, f, rtol=1e-6, atol=1e-6 * scale)
    return worst


@pytest.mark.parametrize("loss", [_lowest_value, _observable, _projector])
def test_eager_eigsh_hessian_vector_products_match_traced(rng, loss):
    envs = _environments(rng)
    assert _check_eager_hvp(loss, envs, _directions(rng, envs), HERMITIAN) < 1e-9


def test_eager_hvp_with_respect_to_a_tensor_computed_before_the_solve(rng):
    """The matvec closes over L2 = 2 L (not a leaf): the second derivative in L2 itself
    (grad_of asks for it) and in L through it."""
    envs = _environments(rng)
    dirs = _directions(rng, envs)
    _, both = _hvp_programs(_observable, [e.shape for e in envs])
    expected = both(2 * envs[0], envs[1], envs[2], dirs[0], 0 * dirs[1], 0 * dirs[2])[3]
    left, mpo, right = [tp.tensor(e, requires_grad=True) for e in envs]
    doubled = left * 2.0
    (g,) = tp.grad_of([_observable(doubled, mpo, right)], [doubled], create_graph=True)
    (hvp,) = tp.grad_of([tp.sum(g * dirs[0])], [doubled])
    np.testing.assert_allclose(hvp.numpy(), expected, rtol=1e-9, atol=1e-9)
    (g,) = tp.grad_of([_observable(left * 2.0, mpo, right)], [left], create_graph=True)
    (hvp,) = tp.grad_of([tp.sum(g * dirs[0])], [left])
    np.testing.assert_allclose(hvp.numpy(), 4 * both(2 * envs[0], envs[1], envs[2],
                                                      dirs[0], 0 * dirs[1],
                                                      0 * dirs[2])[3], rtol=1e-9, atol=1e-9)


def test_eager_third_order_directional_derivative(rng):
    """jvp of jvp of jvp of w_0 in eager mode: the traced third order, and the central
    difference of the eager second order."""
    envs = _environments(rng)
    dirs = _directions(rng, envs)

    def along(f):
        return lambda *a: tp.jvp(f, a, tuple(dirs))[1]
    second, third = along(along(_lowest_value)), along(along(along(_lowest_value)))
    xs = [tp.input(e.shape) for e in envs]
    traced = tp.compile(tp.ad.jvp([tp.ad.jvp([tp.ad.jvp([_lowest_value(*xs)], xs, dirs)[0]],
                                             xs, dirs)[0]], xs, dirs)[0], inputs=xs)
    np.testing.assert_allclose(third(*envs), traced(*envs), rtol=1e-9)
    eps = 1e-4
    fd = (second(*[e + eps * d for e, d in zip(envs, dirs)])
          - second(*[e - eps * d for e, d in zip(envs, dirs)])) / (2 * eps)
    np.testing.assert_allclose(third(*envs), fd, rtol=1e-5)


def test_eager_second_order_of_a_matvec_that_needs_values_raises(rng):
    """A matvec that cannot be traced (here: float() of the vector) has no graph of its
    tensors: eager first order is exact, the second order raises naming eigsh."""
    a0 = rng.standard_normal((5, 5))
    a = tp.tensor(a0, requires_grad=True)

    def matvec(v):
        scale = 1.0 if float(tp.sum(v * 0.0)) == 0.0 else 2.0          # needs values
        return scale * ((a + a.T) @ v)

    w, v = sla.eigsh(sla.LinearOperator((5, 5), matvec, dtype=np.float64), k=1,
                     which="SA", v0=np.ones(5))
    (g,) = tp.grad_of([w[0]], [a], create_graph=True)
    v0 = np.linalg.eigh(a0 + a0.T)[1][:, 0]
    np.testing.assert_allclose(g.detach().numpy(), 2 * np.outer(v0, v0), atol=1e-9)
    with pytest.raises(NotDifferentiableError, match="eigsh: derivatives of order two.*"
                                                     "needs values"):
        tp.sum(g * g).backward()


def test_eager_higher_order_after_an_in_place_write_raises(rng):
    """A tensor the matvec uses, written in place (under no_grad) after the solve: the
    first order uses the solve's saved values; recording a higher derivative would read
    the new values, so it raises naming the solver."""
    m = tp.tensor(rng.standard_normal((5, 5)) + 5 * np.eye(5), requires_grad=True)
    b = tp.tensor(np.ones(5), requires_grad=True)
    x = sla.gmres(sla.LinearOperator((5, 5), lambda v: m @ v, dtype=np.float64), b,
                  rtol=1e-12)[0]
    loss = tp.sum(x * x)
    with tp.no_grad():
        m[0, 0] = 3.0
    with pytest.raises(TapeError, match="gmres: a tensor the operator's matvec uses was "
                                        "written in place"):
        tp.grad_of([loss], [m], create_graph=True)


def test_degenerate_second_order_raises_and_basis_dependence_is_a_gauge_error(rng):
    q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    h = q @ np.diag([-2.0, -2.0, 1.0, 2.0, 3.0, 4.0]) @ q.T
    a = tp.input((6, 6))
    op = sla.LinearOperator((6, 6), lambda v: (h + a + a.T) @ v, dtype=np.float64)
    _, v = sla.eigsh(op, k=2, which="SA", v0=np.ones(6))
    u = np.arange(6.0)
    invariant = tp.sum((v.T @ u) ** 2)                  # |P u|^2
    (g,) = tp.ad.grad(invariant, [a])
    program = tp.compile(g, inputs=[a])
    assert np.all(np.isfinite(program(np.zeros((6, 6)))))       # first order: fine
    (hvp,) = tp.ad.jvp([g], [a], [np.eye(6)])
    with pytest.raises(NotDifferentiableError, match="degenerate"):
        tp.compile(hvp, inputs=[a])(np.zeros((6, 6)))
    (basis,) = tp.ad.grad(v[0, 0] ** 2, [a])
    with pytest.raises(GaugeError, match="eigsh"):
        tp.compile(basis, inputs=[a])(np.zeros((6, 6)))


# ------------------------------------------------------------------ svds and the solves

def _svds_loss(a):
    u, s, vh = sla.svds(sla.aslinearoperator(a), k=2, v0=np.ones(sum(a.shape)))
    return tp.sum(s ** 2) + tp.sum(u[:, 1] * u[:, 1] * np.arange(6.0))


def test_svds_hessian_vector_product(rng):
    a = rng.standard_normal((6, 4))
    assert _check_hvp(_svds_loss, [a], [rng.standard_normal((6, 4))]) < 1e-6


def _solve_loss(solver):
    def loss(a, b):
        if solver == "gmres":
            op = sla.LinearOperator((5, 5), lambda v: (a @ a + 5.0 * np.eye(5)) @ v,
                                    dtype=np.float64)
        else:                                       # Hermitian positive definite
            op = sla.LinearOperator((5, 5), lambda v: a @ (a.T @ v) + v, dtype=np.float64)
        x = getattr(sla, solver)(op, b, rtol=1e-14)[0]
        return tp.sum(x ** 2) + x[0] * x[1]
    return loss


@pytest.mark.parametrize("solver", ["gmres", "cg", "minres"])
def test_solve_hessian_vector_products(rng, solver):
    a, b = rng.standard_normal((5, 5)) * 0.4, rng.standard_normal(5)
    dirs = [rng.standard_normal((5, 5)), rng.standard_normal(5)]
    assert _check_hvp(_solve_loss(solver), [a, b], dirs) < 1e-6


@pytest.mark.parametrize("solver", ["gmres", "cg", "minres"])
def test_solve_second_order_against_the_dense_solve(rng, solver):
    """The same HVP, under tp.jit, against tp.linalg.solve on the dense matrix."""
    a, b = rng.standard_normal((5, 5)) * 0.4, rng.standard_normal(5)
    da, db = rng.standard_normal((5, 5)), rng.standard_normal(5)

    def dense(a_, b_):
        m = a_ @ a_ + 5.0 * np.eye(5) if solver == "gmres" else a_ @ a_.T + np.eye(5)
        x = tp.linalg.solve(m, b_)
        return tp.sum(x ** 2) + x[0] * x[1]

    def hvp(loss):
        gradient = tp.grad(loss, argnums=(0, 1))
        return tp.jit(lambda a_, b_: tp.jvp(gradient, (a_, b_), (da, db))[1])(a, b)

    for got, expected in zip(hvp(_solve_loss(solver)), hvp(dense)):
        np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-9)


def test_eager_svds_and_solve_hessian_vector_products_match_traced(rng):
    a = rng.standard_normal((6, 4))
    assert _check_eager_hvp(_svds_loss, [a], [rng.standard_normal((6, 4))]) < 1e-9
    for solver in ("gmres", "cg", "minres"):
        a, b = rng.standard_normal((5, 5)) * 0.4, rng.standard_normal(5)
        dirs = [rng.standard_normal((5, 5)), rng.standard_normal(5)]
        assert _check_eager_hvp(_solve_loss(solver), [a, b], dirs) < 1e-9


# ------------------------------------------------------------------ generalised: M=

def _norm_environments(rng):
    """Hermitian positive definite left and right norm environments."""
    out = []
    for _ in range(2):
        x = rng.standard_normal((D, D))
        out.append(x @ x.T / D + np.eye(D))
    return out


def _metric(nl, nr):
    """M = NL (x) 1 (x) NR on the one-site tensor: a norm environment's matvec."""
    return sla.LinearOperator(
        (N, N), lambda v: tp.einsum("ab,bsc,dc->asd", nl, v.reshape(D, PD, D), nr
                                    ).reshape(-1), dtype=np.float64)


def _dense_metric(nl, nr):
    return np.einsum("ab,st,dc->asdbtc", nl, np.eye(PD), nr).reshape(N, N)


def _generalised_lowest(envs, norms):
    h = _dense(*envs)
    m = _dense_metric(*norms)
    w, v = scipy.linalg.eigh(h, m)
    return w[0], v[:, 0]


def test_generalised_values_match_scipy_with_m_minv_and_opinv(rng):
    envs, norms = _environments(rng), _norm_environments(rng)
    h, m = _dense(*envs), _dense_metric(*norms)
    tensors = [tp.tensor(x) for x in envs]
    op, metric = _heff(*tensors), _metric(*[tp.tensor(x) for x in norms])
    v0 = np.ones(N)
    exact = scipy.linalg.eigh(h, m, eigvals_only=True)
    cases = [dict(which="SA"), dict(which="SA", Minv=np.linalg.inv(m)),
             dict(which="LM", sigma=exact[3] + 0.01,
                  OPinv=np.linalg.inv(h - (exact[3] + 0.01) * m)),
             dict(which="LM", sigma=exact[3] + 0.01, mode="cayley")]
    for case in cases:
        w, v = sla.eigsh(op, k=2, M=metric, v0=v0, **case)
        expected = scipy_sla.eigsh(h, k=2, M=m, v0=v0, **case)[0]
        np.testing.assert_allclose(w, np.sort(expected), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(v.T @ m @ v, np.eye(2), atol=1e-9)    # M-orthonormal
        np.testing.assert_allclose(h @ v, m @ v * w, atol=1e-8)
    # a tp LinearOperator of constant tensors as the aid is taken as it is
    minv = sla.aslinearoperator(tp.tensor(np.linalg.inv(m)))
    w, _ = sla.eigsh(op, k=2, M=metric, which="SA", Minv=minv, v0=v0)
    np.testing.assert_allclose(w, exact[:2], rtol=1e-10)


def _hellmann_feynman_generalised(envs, norms):
    """dw/d(L, W, R, NL, NR) = v^H (dA - w dM) v, written out with einsum."""
    w, v = _generalised_lowest(envs, norms)
    left, mpo, right = envs
    nl, nr = norms
    t = v.reshape(D, PD, D)
    return [np.einsum("asc,xyst,cye,bte->axb", t, mpo, right, t),
            np.einsum("asc,axb,cye,bte->xyst", t, left, right, t),
            np.einsum("asc,axb,xyst,bte->cye", t, left, mpo, t),
            -w * np.einsum("asd,bsc,dc->ab", t, t, nr),
            -w * np.einsum("asd,ab,bsc->dc", t, nl, t)]


def test_generalised_gradient_is_hellmann_feynman_eager_and_traced(rng):
    envs, norms = _environments(rng), _norm_environments(rng)
    expected = _hellmann_feynman_generalised(envs, norms)
    tensors = [tp.tensor(x, requires_grad=True) for x in envs + norms]
    w, _ = sla.eigsh(_heff(*tensors[:3]), k=1, M=_metric(*tensors[3:]), which="SA",
                     v0=np.ones(N))
    w[0].backward()
    for t, e in zip(tensors, expected):
        np.testing.assert_allclose(t.grad.numpy(), e, atol=1e-9)
    xs = [tp.input(x.shape) for x in envs + norms]
    w, _ = sla.eigsh(_heff(*xs[:3]), k=1, M=_metric(*xs[3:]), which="SA", v0=np.ones(N))
    program = tp.compile(tp.ad.grad(w[0], xs), inputs=xs)
    for got, e in zip(program(*envs, *norms), expected):
        np.testing.assert_allclose(got, e, atol=1e-9)


def _generalised_loss(left, mpo, right, nl, nr):
    w, v = sla.eigsh(_heff(left, mpo, right), k=2, M=_metric(nl, nr), which="SA",
                     v0=np.ones(N))
    return w[0] + (v[:, 0] @ (_OBSERVABLE @ v[:, 0]))


def test_generalised_eigenvector_gradient_and_hvp_match_finite_differences(rng):
    envs, norms = _environments(rng), _norm_environments(rng)
    args = envs + norms
    dirs = _directions(rng, envs) + [_symmetric(rng, (D, D)) * 0.1 for _ in range(2)]

    def dense_loss(*a):
        w, v = _generalised_lowest(list(a[:3]), list(a[3:]))
        return w + v @ _OBSERVABLE @ v
    eps = 1e-6
    fd = (dense_loss(*[x + eps * d for x, d in zip(args, dirs)])
          - dense_loss(*[x - eps * d for x, d in zip(args, dirs)])) / (2 * eps)
    tensors = [tp.tensor(x, requires_grad=True) for x in args]
    _generalised_loss(*tensors).backward()
    np.testing.assert_allclose(sum(np.sum(t.grad.numpy() * d) for t, d in zip(tensors, dirs)),
                               fd, rtol=1e-6)
    assert _check_hvp(_generalised_loss, args, dirs, HERMITIAN + NORMS) < 1e-6


def test_eager_generalised_hessian_vector_products_match_traced(rng):
    """M= (a norm environment's matvec closing over NL, NR), and shift-invert with M: the
    eager HVPs are the traced ones."""
    envs, norms = _environments(rng), _norm_environments(rng)
    args = envs + norms
    dirs = _directions(rng, envs) + [_symmetric(rng, (D, D)) * 0.1 for _ in range(2)]
    assert _check_eager_hvp(_generalised_loss, args, dirs, HERMITIAN + NORMS) < 1e-9
    lowest = scipy.linalg.eigh(_dense(*envs), _dense_metric(*norms), eigvals_only=True)[0]

    def shift_invert(left, mpo, right, nl, nr):
        w, v = sla.eigsh(_heff(left, mpo, right), k=1, M=_metric(nl, nr),
                         sigma=lowest - 0.05, v0=np.ones(N))
        return w[0] + (v[:, 0] @ (_OBSERVABLE @ v[:, 0]))

    # the same eigenpair (k=1 here, k=2 there): the same HVP along the Hermitian
    # directions (the reverse HVP off them depends on k, as for a non-Hermitian dA)
    generalised = _eager_hvps(_generalised_loss, args, dirs)
    project = HERMITIAN + NORMS
    for got, expected, maps in zip(_eager_hvps(shift_invert, args, dirs), generalised,
                                   (project, project, [lambda x: x] * 5)):
        for g, e, p in zip(got, expected, maps):
            np.testing.assert_allclose(p(g), p(e), rtol=1e-7, atol=1e-8)


def test_generalised_unsupported_and_aids_that_require_grad_raise(rng):
    envs, norms = _environments(rng), _norm_environments(rng)
    op, metric = _heff(*envs), _metric(*norms)
    with pytest.raises(UnsupportedError, match="eigsh: mode='buckling'"):
        sla.eigsh(op, k=1, M=metric, sigma=0.5, mode="buckling")
    with pytest.raises(UnsupportedError, match="eigsh: sigma"):
        sla.eigsh(op, k=1, sigma=0.5j)
    with pytest.raises(ShapeError, match="eigsh: M must have the shape"):
        sla.eigsh(op, k=1, M=np.eye(3))
    m = _dense_metric(*norms)
    shifted = tp.tensor(np.linalg.inv(_dense(*envs) - 0.3 * m), requires_grad=True)
    with pytest.raises(NotDifferentiableError, match="eigsh: OPinv= is a solver aid"):
        sla.eigsh(op, k=1, M=metric, sigma=0.3, OPinv=sla.aslinearoperator(shifted))
    with pytest.raises(NotDifferentiableError, match="eigsh: Minv= is a solver aid"):
        sla.eigsh(op, k=1, M=metric, Minv=tp.tensor(np.linalg.inv(m), requires_grad=True))
    x = tp.input((N, N))
    with pytest.raises(NotDifferentiableError, match="eigsh: Minv=.*traced"):
        sla.eigsh(op, k=1, M=metric, Minv=sla.aslinearoperator(x))


def test_traced_operands_with_an_eager_operator_that_requires_grad_raise(rng):
    """Traced, an operator without traced tensors is a constant; one that uses eager
    tensors that require grad would lose their gradient, so it raises."""
    a = tp.tensor(np.eye(4) * 2.0, requires_grad=True)
    op = sla.LinearOperator((4, 4), lambda v: a @ v)
    with pytest.raises(ArgumentError, match="gmres: a traced b"):
        sla.gmres(op, tp.input((4,)))
    with pytest.raises(ArgumentError, match="eigsh: the operators mix"):
        sla.eigsh(op, k=1, M=sla.aslinearoperator(tp.input((4, 4))))


def test_generalised_and_shift_invert_hvp_under_jit(rng):
    """tp.jit of a forward-over-reverse HVP: generalised (M=) and shift-invert (sigma with
    M) eigsh give the same HVP (the same eigenpair), against central differences."""
    envs, norms = _environments(rng), _norm_environments(rng)
    args = envs + norms
    dirs = _directions(rng, envs) + [_symmetric(rng, (D, D)) * 0.1 for _ in range(2)]
    lowest = scipy.linalg.eigh(_dense(*envs), _dense_metric(*norms), eigvals_only=True)[0]

    def shift_invert(left, mpo, right, nl, nr):
        w, v = sla.eigsh(_heff(left, mpo, right), k=1, M=_metric(nl, nr),
                         sigma=lowest - 0.05, v0=np.ones(N))
        return w[0] + (v[:, 0] @ (_OBSERVABLE @ v[:, 0]))

    def hvp(loss):
        gradient = tp.grad(loss, argnums=tuple(range(5)))
        return tp.jit(lambda *a: tp.jvp(gradient, a, tuple(dirs))[1])(*args)

    gradient = tp.jit(tp.grad(_generalised_loss, argnums=tuple(range(5))))
    eps = 1e-5
    fd = [(p - m) / (2 * eps) for p, m in
          zip(gradient(*[x + eps * d for x, d in zip(args, dirs)]),
              gradient(*[x - eps * d for x, d in zip(args, dirs)]))]
    for loss in (_generalised_loss, shift_invert):
        for got, expected in zip(hvp(loss), fd):
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)

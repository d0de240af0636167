"""``tp.fixed_point``: values and implicit derivatives against closed forms and finite
differences, in every mode and at first and second order; Anderson mixing and gauge fixing;
convergence errors; memory that does not grow with the number of iterations.

(The spec table, tests/specs/fixed_point.py, adds the generic JVP/VJP/adjoint checks in
float64 and complex128 at both orders.)
"""
import gc
import math
import tracemalloc

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ArgumentError, ConvergenceError, DTypeError, ShapeError
from tenpy_ad.testing import check_grads, random_array

from modes import ALL_MODES, run

A = 0.7


# ------------------------------------------------------------------ x = cos(a x)

def cos_map(x, a):
    return tp.cos(a * x)


def solve_cos(a):
    """x = cos(a x) with a, and x's first and second derivatives in a (closed forms)."""
    x = 0.8
    for _ in range(50):                                  # Newton
        x -= (x - math.cos(a * x)) / (1.0 + a * math.sin(a * x))
    s = math.sin(a * x)
    dx = -x * s / (1.0 + a * s)
    ds = x * (x + a * dx)                                # d sin(a x)/da, as cos(a x) = x
    d2x = -((dx * s + x * ds) * (1 + a * s) - x * s * (s + a * ds)) / (1 + a * s) ** 2
    return x, dx, d2x


def cos_fixed_point(a):
    return tp.fixed_point(cos_map, np.float64(0.5), a)


@pytest.mark.parametrize("mode", ALL_MODES)
def test_scalar_value_in_every_mode(mode):
    got = run(lambda a: tp.fixed_point(cos_map, np.float64(0.5), a, tol=1e-15), mode,
              np.float64(A))
    assert abs(float(got) - solve_cos(A)[0]) < 1e-14


def test_scalar_first_derivative_every_way():
    _, expected, _ = solve_cos(A)
    b = tp.tensor(A, requires_grad=True)
    cos_fixed_point(b).backward()
    a = tp.input((), name="a")
    x = cos_fixed_point(a)
    traced = tp.evaluate([tp.ad.grad(x, a), tp.ad.jvp([x], [a], [1.0])[0]], {a: np.float64(A)})
    _, forward = tp.jvp(cos_fixed_point, (np.float64(A),), (np.float64(1.0),))
    for got in (b.grad, tp.grad(cos_fixed_point)(np.float64(A)), forward, *traced):
        assert abs(float(got) - expected) < 1e-12


def test_scalar_second_derivative_every_way():
    _, _, expected = solve_cos(A)
    a = tp.input((), name="a")
    first = tp.ad.grad(cos_fixed_point(a), a)
    reverse = tp.ad.grad(first, a)
    forward = tp.ad.jvp([first], [a], [1.0])[0]
    traced = tp.compile([reverse, forward], inputs=[a])(np.float64(A))
    eager = tp.grad(tp.grad(cos_fixed_point))(np.float64(A))
    for got in (*traced, eager):
        assert abs(float(got) - expected) < 1e-10


# ------------------------------------------------------------------ x = A x + b

def linear_problem(rng, n=5, dtype=np.float64, rho=0.6):
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    a = random_array(rng, (n, n), wide)          # scaled before rounding to ``dtype``
    a *= rho / np.max(np.abs(np.linalg.eigvals(a)))
    b = random_array(rng, n, wide)
    return a.astype(dtype), b.astype(dtype)


def linear_fixed_point(a, b, solver="gmres"):
    return tp.fixed_point(lambda x, a, b: a @ x + b, b * 0.0, a, b, solver=solver)


@pytest.mark.parametrize("solver", ["gmres", "iterate"])
def test_linear_map_is_solved_exactly(rng, solver):
    a, b = linear_problem(rng)
    c = rng.standard_normal(len(b))
    exact = np.linalg.solve(np.eye(len(b)) - a, b)
    assert np.allclose(linear_fixed_point(a, b, solver), exact, rtol=1e-11, atol=0)
    # d(c.x)/db = (I - A)^-T c,  d(c.x)/dA = outer((I - A)^-T c, x)
    lam = np.linalg.solve((np.eye(len(b)) - a).T, c)

    def loss(a, b):
        return (linear_fixed_point(a, b, solver) * c).sum()

    for ga, gb in (tp.grad(loss, argnums=(0, 1))(a, b), _traced_grads(loss, a, b)):
        assert np.allclose(gb, lam, rtol=1e-10, atol=1e-12)
        assert np.allclose(ga, np.outer(lam, exact), rtol=1e-10, atol=1e-12)


def _traced_grads(loss, *arrays):
    xs = [tp.input(x.shape, x.dtype) for x in arrays]
    return tp.evaluate(tp.ad.grad(loss(*xs), xs), dict(zip(xs, arrays)))


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_linear_map_second_order(rng, dtype):
    a, b = linear_problem(rng, 3, dtype)
    check_grads(linear_fixed_point, [a, b], order=2, rng=rng, eager=True)


# ------------------------------------------------------------------ nonlinear maps

def coupled_map(state, params):
    """A contraction on a pytree: (matrix, vector) driven by a dict of parameters."""
    m, v = state
    return (tp.tanh(params["w"] * 0.4 + m @ m * 0.1),
            tp.sin(m @ v * 0.3 + params["u"]) * 0.8)


def coupled_loss(w, u, **options):
    m, v = tp.fixed_point(coupled_map, (w * 0.0, u * 0.0), {"w": w, "u": u}, **options)
    return (m @ v).sum() + (v * v).sum()


def test_nonlinear_vector_map_against_finite_differences(rng):
    w, u = rng.standard_normal((3, 3)), rng.standard_normal(3)
    check_grads(coupled_loss, [w, u], order=2, rng=rng, eager=True)
    gw, gu = tp.grad(coupled_loss, argnums=(0, 1))(w, u)
    h = 1e-6
    direction = rng.standard_normal(3)
    fd = (coupled_loss(w, u + h * direction) - coupled_loss(w, u - h * direction)) / (2 * h)
    assert abs(float(np.dot(gu, direction)) - float(fd)) < 1e-7


def slow_map(state, params):
    """coupled_map, damped: contracts at a rate of about 0.93."""
    return tuple(s * 0.9 + n * 0.1 for s, n in zip(state, coupled_map(state, params)))


def test_anderson_mixing_converges_faster_to_the_same_point(rng):
    w, u = rng.standard_normal((3, 3)), rng.standard_normal(3)
    start, params = (w * 0.0, u * 0.0), {"w": w, "u": u}
    plain, mixed = {}, {}
    x = tp.fixed_point(slow_map, start, params, stats=plain)
    y = tp.fixed_point(slow_map, start, params, anderson=4, stats=mixed)
    assert mixed["iterations"] < plain["iterations"] / 5
    for a, b in zip(x, y):
        assert np.allclose(a, b, rtol=1e-10, atol=1e-11)

    def loss(u, **options):
        return tp.fixed_point(slow_map, start, {"w": w, "u": u}, **options)[1].sum()

    assert np.allclose(tp.grad(lambda u: loss(u, anderson=4))(u), tp.grad(loss)(u),
                       rtol=1e-9, atol=1e-10)


def test_traced_equals_eager_and_compiles_once(rng):
    w, u = rng.standard_normal((3, 3)), rng.standard_normal(3)
    grad = tp.jit(tp.grad(coupled_loss, argnums=(0, 1)))
    traced = grad(w, u)
    grad(w * 1.01, u)
    assert grad.trace_count == 1
    eager = tp.grad(coupled_loss, argnums=(0, 1))(w, u)
    for t, e in zip(traced, eager):
        assert np.allclose(t, e, rtol=1e-12, atol=1e-13)


# ------------------------------------------------------------------ gauge fixing

def power_step(x, m):
    y = m @ x
    return y / tp.sqrt((y * y).sum())


def first_positive(x):
    return x * tp.sign(x[0])


def test_gauge_fix_makes_a_sign_ambiguous_fixed_point_unique(rng):
    """Power iteration on a matrix whose dominant eigenvalue is negative flips the sign
    of x at every step: only a gauge fix gives it a fixed point (and a derivative)."""
    q = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    m = q @ np.diag([-3.0, 1.0, 0.5, 0.2]) @ q.T
    x0 = np.ones(4)
    with pytest.raises(ConvergenceError):
        tp.fixed_point(power_step, x0, m, max_iter=200)

    def top_vector(m):
        return tp.fixed_point(power_step, x0, m, gauge_fix=first_positive)

    def reference(m):
        w, v = np.linalg.eigh((m + m.T) / 2)
        vector = v[:, np.argmax(np.abs(w))]
        return vector * np.sign(vector[0])

    assert np.allclose(top_vector(m), reference(m), atol=1e-12)
    weights = rng.standard_normal(4)
    grad = tp.grad(lambda m: (top_vector(m) * weights).sum())(m)
    direction = rng.standard_normal((4, 4))
    direction += direction.T                   # the reference sees only symmetric m
    h = 1e-6
    fd = ((reference(m + h * direction) - reference(m - h * direction)) @ weights) / (2 * h)
    assert abs(np.sum(grad * direction) - fd) < 1e-8


# ------------------------------------------------------------------ errors

def test_forward_non_convergence_reports_residual_and_iterations():
    with pytest.raises(ConvergenceError, match=r"after 25 iterations \(residual") as info:
        tp.fixed_point(lambda x: x * 2.0 + 1.0, np.float64(1.0), max_iter=25)
    assert info.value.iterations == 25 and info.value.residual > 0.1
    with pytest.raises(ConvergenceError, match="diverged"), np.errstate(over="ignore",
                                                                        invalid="ignore"):
        tp.fixed_point(lambda x: tp.exp(x) * x + 1.0, np.ones(2))


def test_adjoint_non_convergence_is_an_error():
    """Anderson mixing solves the forward quickly; the adjoint, iterated plainly at the
    same slow rate, runs out of iterations."""
    def loss(b):
        return tp.fixed_point(lambda x, b: x * 0.995 + b, np.zeros(2), b, anderson=2,
                              solver="iterate", max_iter=100).sum()

    assert np.allclose(loss(np.ones(2)), 400.0)
    with pytest.raises(ConvergenceError, match="adjoint: no progress"):   # (predicted)
        tp.grad(loss)(np.ones(2))
    b = tp.input((2,), name="b")
    program = tp.compile(tp.ad.grad(loss(b), b), inputs=[b])      # raises when it runs
    with pytest.raises(ConvergenceError, match="adjoint"):
        program(np.ones(2))


def test_gmres_non_convergence_is_an_error(rng):
    """Started at the solution, the forward converges at once; three GMRES iterations
    cannot solve the 12-dimensional adjoint system."""
    a, b = linear_problem(rng, 12, rho=0.95)
    x0 = np.linalg.solve(np.eye(12) - a, b)

    def loss(b):
        return tp.fixed_point(lambda x, a, b: a @ x + b, x0, a, b, max_iter=3).sum()

    assert np.allclose(loss(b), x0.sum())
    with pytest.raises(ConvergenceError, match="adjoint: GMRES did not converge after 3"):
        tp.grad(loss)(b)


def test_a_fixed_point_that_is_not_isolated_is_diagnosed():
    """x -> x (1 + r / |x|) / 2 has a circle of fixed points (|x| = r, any angle): its
    derivative there has the eigenvalue 1 along the circle, and x[0] changes along it, so
    the adjoint system is singular and inconsistent.  The error says so, in every mode."""
    def loss(r):
        x = tp.fixed_point(lambda x, r: x * (1.0 + r / tp.linalg.norm(x)) * 0.5,
                           np.array([0.6, 0.8]), r)
        return x[0]

    assert np.isclose(float(loss(2.0)), 1.2)
    routes = [lambda: tp.grad(loss)(2.0), lambda: tp.jit(tp.grad(loss))(2.0)]
    for route in routes:
        with pytest.raises(ConvergenceError, match=r"adjoint: GMRES's solution grew beyond "
                           r"what its products resolve .*the eigenvalue 1\b.*not isolated"):
            route()
    r = tp.tensor(2.0, requires_grad=True)
    with pytest.raises(ConvergenceError, match="not isolated"):
        loss(r).backward()
    warned = lambda r: tp.fixed_point(lambda x, r: x * (1.0 + r / tp.linalg.norm(x)) * 0.5,
                                      np.array([0.6, 0.8]), r, on_stall="warn", max_iter=200)[0]
    with pytest.warns(tp.errors.ConvergenceWarning, match="the eigenvalue 1.*not isolated"):
        tp.grad(warned)(2.0)


def test_an_adjoint_tail_comes_from_the_last_residual_product(rng):
    """``t = B^T lam`` (outputs of a derivative step that its iterate does not read) is
    read off GMRES's last true-residual product, made at the solution with the whole
    step, not computed by one step more: the step runs once for the start's residual,
    once per Arnoldi iteration and once at the end."""
    from tenpy_ad.fixed_point import Problem
    a, b = linear_problem(rng, 12, rho=0.5)
    bt = rng.standard_normal((3, 12))
    calls = []

    def step(xs, params):
        calls.append(1)
        return [a @ xs[0] + b, bt @ xs[0]]

    stats = {}
    problem = Problem(step, 2, "fixed_point adjoint", 1e-12, 100, "gmres", "gmres", 0,
                      stats, None, constant=lambda args: [b, np.zeros(3)], tail=1)
    lam, t = problem.solve([b.copy(), np.zeros(3)], [])
    np.testing.assert_allclose(lam, np.linalg.solve(np.eye(12) - a, b), atol=1e-10)
    np.testing.assert_allclose(t, bt @ lam, rtol=0, atol=1e-13)
    assert stats["adjoint_converged"] and len(calls) == stats["adjoint_iterations"] + 2


def test_bad_arguments_fail_early():
    x0 = np.zeros(3)
    for kwargs, match in (({"tol": 0.0}, "tol"), ({"max_iter": 0}, "max_iter"),
                          ({"solver": "lu"}, "solver"), ({"anderson": -1}, "anderson"),
                          ({"gauge_fix": 3}, "gauge_fix")):
        with pytest.raises(ArgumentError, match=match):
            tp.fixed_point(lambda x: x * 0.5, x0, **kwargs)
    with pytest.raises(ArgumentError, match="structure"):
        tp.fixed_point(lambda x: (x, x), x0)
    for x in (x0, tp.input((3,))):
        with pytest.raises(ShapeError, match=r"shape \[2\] for leaf 0 of x"):
            tp.fixed_point(lambda x: x[:2], x)
        with pytest.raises(DTypeError, match="complex128 for leaf 0"):
            tp.fixed_point(lambda x: x * 0.5j, x)


def test_tensors_f_closes_over_must_be_args():
    w = tp.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(ArgumentError, match="pass it in args"):
        tp.fixed_point(lambda x: x * 0.5 + w, np.zeros(3))
    u = tp.input((3,), name="u")
    with pytest.raises(ArgumentError, match="traced tensor it was not given"):
        tp.fixed_point(lambda x: x * 0.5 + u, np.zeros(3))
    with pytest.raises(ArgumentError, match="traced tensor it was not given"):
        tp.fixed_point(lambda x, v: x * 0.5 + u, np.zeros(3), u)


# ------------------------------------------------------------------ x0, graphs, memory

def test_the_start_has_no_derivative_and_the_graph_is_released():
    gc.collect()
    before = tp.introspection.table_sizes()
    a, x0 = tp.input((), name="a"), tp.input((), name="x0")
    x = tp.fixed_point(cos_map, x0, a)
    ga, g0 = tp.ad.grad(x, [a, x0])
    values = tp.compile([x, ga, g0], inputs=[a, x0])(np.float64(A), np.float64(0.3))
    expected = solve_cos(A)
    assert abs(values[1] - expected[1]) < 1e-12 and values[2] == 0.0
    del a, x0, x, ga, g0
    gc.collect()
    assert tp.introspection.table_sizes() == before


def relax(x, theta, rate):
    """x -> rate x + (1 - rate) theta: converges to theta in ~log(tol)/log(rate) steps."""
    return x * rate + theta * (1.0 - rate)


def backward_peak(rate: float, n: int = 500) -> tuple:
    theta = np.linspace(1.0, 2.0, n)
    stats: dict = {}

    def loss(t):
        return (tp.fixed_point(relax, np.zeros(n), t, rate, stats=stats) ** 2).sum()

    tp.grad(loss)(theta)                          # warm up (caches, first-call costs)
    tracemalloc.start()
    try:
        grad = tp.grad(loss)(theta)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.allclose(grad, 2 * theta, rtol=1e-9)
    return peak, stats["iterations"]


@pytest.mark.slow
def test_memory_does_not_grow_with_the_iteration_count():
    few_peak, few = backward_peak(0.5)
    many_peak, many = backward_peak(0.9944)
    assert few <= 45 and many >= 3900
    assert many_peak < few_peak * 1.25 + 65536, (few_peak, many_peak)
    # the measurement sees growth: a quarter of that loop, unrolled on a tape
    theta = tp.tensor(np.linspace(1.0, 2.0, 500), requires_grad=True)
    tracemalloc.start()
    try:
        x = np.zeros(500)
        for _ in range(many // 4):
            x = relax(x, theta, 0.9944)
        unrolled_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert unrolled_peak > 5 * many_peak

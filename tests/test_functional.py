"""Function-level transforms: JAX names and semantics, pytrees, every mode."""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ArgumentError, GraphError


def f(x):
    return (tp.sin(x) * x).sum()


def df(a):
    return np.cos(a) * a + np.sin(a)


A = np.array([0.3, -1.1, 2.0])


def test_grad_eager_returns_arrays():
    g = tp.grad(f)(A)
    assert type(g) is np.ndarray
    np.testing.assert_allclose(g, df(A))


def test_grad_traced_returns_nodes():
    x = tp.input((3,), name="x")
    g = tp.grad(f)(x)
    assert type(g) is tp.TracedTensor
    np.testing.assert_allclose(tp.evaluate(g, {x: A}), df(A))


def test_grad_of_grad_both_modes():
    h = tp.grad(tp.grad(lambda s: tp.sin(s) * s))
    expected = 2 * np.cos(0.3) - 0.3 * np.sin(0.3)
    np.testing.assert_allclose(h(0.3), expected)
    s = tp.input((), name="s")
    np.testing.assert_allclose(tp.evaluate(h(s), {s: np.array(0.3)}), expected)


def test_value_and_grad_argnums_and_pytrees():
    def loss(params, x, scale):
        return ((params["w"] @ x + params["b"]) ** 2).sum() * scale

    params = {"w": np.arange(6.0).reshape(2, 3) / 10, "b": np.array([0.5, -0.5])}
    x = np.array([1.0, 2.0, 3.0])
    value, (gp, gx) = tp.value_and_grad(loss, argnums=(0, 1))(params, x, 2.0)
    r = params["w"] @ x + params["b"]
    np.testing.assert_allclose(value, 2.0 * (r ** 2).sum())
    np.testing.assert_allclose(gp["w"], 4.0 * np.outer(r, x))
    np.testing.assert_allclose(gp["b"], 4.0 * r)
    np.testing.assert_allclose(gx, 4.0 * params["w"].T @ r)


def test_has_aux():
    def loss(x):
        y = tp.exp(x)
        return y.sum(), {"y": y}
    (value, aux), g = tp.value_and_grad(loss, has_aux=True)(A)
    np.testing.assert_allclose(g, np.exp(A))
    g2, aux2 = tp.grad(loss, has_aux=True)(A)
    np.testing.assert_allclose(g2, np.exp(A))
    np.testing.assert_allclose(np.asarray(aux2["y"]), np.exp(A))


def test_grad_rejects_non_scalar():
    with pytest.raises(GraphError, match="scalar"):
        tp.grad(lambda x: x * 2.0)(A)
    with pytest.raises(ArgumentError):
        tp.grad(f, argnums=3)(A)


def test_vjp_both_modes_and_reuse():
    def fn(x, y):
        return x * y, tp.exp(x)
    out, vjp_fn = tp.vjp(fn, A, A + 1)
    np.testing.assert_allclose(out[0], A * (A + 1))
    for _ in range(2):                          # vjp_fn can be called again
        gx, gy = vjp_fn((np.ones(3), np.full(3, 2.0)))
        np.testing.assert_allclose(gx, (A + 1) + 2 * np.exp(A))
        np.testing.assert_allclose(gy, A)
    x, y = tp.input((3,)), tp.input((3,))
    out, vjp_fn = tp.vjp(fn, x, y)
    gx, gy = vjp_fn((np.ones(3), np.full(3, 2.0)))
    vx = tp.evaluate(gx, {x: A, y: A + 1})
    np.testing.assert_allclose(vx, (A + 1) + 2 * np.exp(A))
    with pytest.raises(ArgumentError, match="structure"):
        vjp_fn(np.ones(3))


def test_jvp_both_modes():
    t = np.array([1.0, 0.5, -2.0])
    out, tan = tp.jvp(lambda x: tp.sin(x) * x, (A,), (t,))
    np.testing.assert_allclose(out, np.sin(A) * A)
    np.testing.assert_allclose(tan, df(A) * t)
    x = tp.input((3,))
    out, tan = tp.jvp(lambda x: tp.sin(x) * x, (x,), (t,))
    np.testing.assert_allclose(tp.evaluate(tan, {x: A}), df(A) * t)


def test_jvp_eager_handles_value_dependent_control_flow():
    def fn(x):
        return x * x if x.sum() > 0 else -x          # a bool tensor decides
    _, tan = tp.jvp(fn, (A,), (np.ones(3),))
    np.testing.assert_allclose(tan, 2 * A)


def test_complex_gradient_convention():
    """grad of |z|^2 at 3+4i is 6+8i (dL/dx + i dL/dy; JAX would give 6-8i)."""
    g = tp.grad(lambda z: (z * tp.conj(z)).real)(np.complex128(3 + 4j))
    np.testing.assert_allclose(g, 6 + 8j)


def test_jit_caches_per_signature():
    calls = []

    def fn(x, y):
        calls.append(1)
        return {"s": (x @ y).sum(), "p": x * 2.0}
    j = tp.jit(fn)
    a, b = np.eye(2), np.ones((2, 2))
    r1 = j(a, b)
    r2 = j(a * 3, b)
    assert j.trace_count == 1 and len(calls) == 1
    np.testing.assert_allclose(r2["s"], 12.0)
    np.testing.assert_allclose(r1["p"], 2 * a)
    j(np.eye(3), np.ones((3, 3)))
    assert j.trace_count == 2
    j(a.astype(np.float32), b.astype(np.float32))
    assert j.trace_count == 3 and j.cache_size == 3
    assert "einsum" in str(j.lower(a, b))


def test_jit_static_argnums_and_grad_inside():
    j = tp.jit(lambda x, n: tp.grad(lambda y: (y ** n).sum())(x), static_argnums=(1,))
    np.testing.assert_allclose(j(A, 3), 3 * A ** 2)
    np.testing.assert_allclose(j(A, 2), 2 * A)
    assert j.trace_count == 2


def test_jit_inlines_under_a_trace():
    j = tp.jit(lambda x: tp.exp(x) * 2.0)
    x = tp.input((3,))
    assert type(j(x)) is tp.TracedTensor
    assert j.trace_count == 0


def test_jit_refuses_grad_tensors():
    with pytest.raises(ArgumentError, match="tape"):
        tp.jit(lambda x: x * 2.0)(tp.tensor(A, requires_grad=True))


def test_tree_roundtrip():
    tree = {"b": [1, (2, None)], "a": np.zeros(2)}
    leaves, treedef = tp.tree_flatten(tree)
    assert len(leaves) == 3 and treedef.num_leaves == 3
    back = tp.tree_unflatten(treedef, leaves)
    assert back["b"] == [1, (2, None)]


@pytest.mark.parametrize("inner", ["grad", "vjp", "jvp"])
def test_an_inner_transform_of_plain_numbers_keeps_the_outer_variables(inner):
    """An inner transform whose own arguments are plain numbers still depends on the outer
    variable through the closure: d/ds [d/dt s t^2 at t = 1.7] = 2 * 1.7 (it was 0)."""
    def inner_derivative(s):
        f = lambda t: s * t * t                                      # noqa: E731
        if inner == "grad":
            return tp.grad(f)(1.7)
        if inner == "vjp":
            return tp.vjp(f, 1.7)[1](1.0)[0]
        return tp.jvp(f, (1.7,), (1.0,))[1]
    np.testing.assert_allclose(tp.grad(inner_derivative)(2.5), 2 * 1.7, rtol=1e-14)
    np.testing.assert_allclose(tp.jvp(inner_derivative, (2.5,), (1.0,))[1], 2 * 1.7,
                               rtol=1e-14)
    np.testing.assert_allclose(inner_derivative(2.5), 2 * 2.5 * 1.7, rtol=1e-14)

"""Compiled programs and the graph transforms' structural promises."""
import numpy as np
import pytest

import tenpy_ad as tp


def test_compile_and_run_many_times():
    x = tp.input((3, 3), name="x")
    loss = ((x * x) * 0.5).sum()
    g = tp.ad.grad(loss, x)
    f = tp.compile([loss, g], inputs=[x])
    for k in range(3):
        a = np.random.default_rng(k).standard_normal((3, 3))
        value, grad = f(a)
        np.testing.assert_allclose(value, 0.5 * (a * a).sum())
        np.testing.assert_allclose(grad, a)


def test_listing_is_one_op_per_line_with_shapes():
    x = tp.input((3, 3), name="x")
    loss = (x @ x).sum()
    f = tp.compile([loss], inputs=[x])
    text = str(f)
    lines = text.splitlines()
    assert lines[0] == "program(%0:f64[3,3]) {"
    assert any("= einsum 'xy,yz->xz' %0 %0" in line and ":f64[3,3]" in line for line in lines)
    assert any("reduce_sum" in line and ":f64[]" in line for line in lines)
    assert lines[-2].strip().startswith("return")
    assert len(lines) == f.n_nodes + 3


def test_dead_code_is_eliminated():
    x = tp.input((4,), name="x")
    unused = tp.exp(tp.sin(x) * 3.0)          # noqa: F841 - built, never requested
    wanted = tp.cos(x)
    f = tp.compile(wanted, inputs=[x])
    assert f.n_instructions == 1
    np.testing.assert_allclose(f(np.zeros(4)), np.ones(4))


def test_buffers_are_freed_after_last_use():
    x = tp.input((2,), name="x")
    y = x
    for _ in range(10):
        y = tp.sin(y)
    f = tp.compile(y, inputs=[x])
    # every intermediate buffer is dropped at its single use
    assert [len(step.frees) for step in f._plan.steps] == [1] * 10


def test_symbolic_zeros_cost_no_work():
    x = tp.input((3,), name="x")
    unrelated = tp.input((3,), name="unrelated")
    loss = tp.exp(x).sum()
    tp.reset_counters()
    gx, gu = tp.ad.grad(loss, [x, unrelated])
    assert tp.counters()["rules_applied"] == 2     # reduce_sum, exp; nothing for 'unrelated'
    f = tp.compile([gx, gu], inputs=[x, unrelated])
    vx, vu = f(np.zeros(3), np.ones(3))
    np.testing.assert_allclose(vx, np.ones(3))
    np.testing.assert_array_equal(vu, np.zeros(3))


def test_evaluate_and_outputs_that_are_inputs():
    x = tp.input((2,), name="x")
    y = tp.input((2,), name="y")
    a, b = tp.evaluate([x, x * y], {x: np.array([1.0, 2.0]), y: np.array([3.0, 4.0])})
    np.testing.assert_array_equal(a, [1.0, 2.0])
    np.testing.assert_array_equal(b, [3.0, 8.0])


def test_safe_casts_are_accepted():
    x = tp.input((2,), name="x")
    f = tp.compile(x * 2.0, inputs=[x])
    np.testing.assert_array_equal(f(np.array([1, 2])), [2.0, 4.0])     # int -> float64


def test_outputs_are_writable_arrays():
    x = tp.input((3,), name="x")
    unrelated = tp.input((3,), name="u")
    (g,) = tp.ad.vjp([x.sum()], [unrelated], [1.0])   # a broadcast zero in the graph
    out = tp.compile(g, inputs=[x, unrelated])(np.ones(3), np.ones(3))
    out[0] = 5.0
    assert out.flags.writeable


def test_hessian_vector_product_and_grad_of_grad():
    x = tp.input((3,), name="x")
    loss = (tp.sin(x) * x).sum()
    g = tp.ad.grad(loss, x)
    v = np.array([1.0, -2.0, 0.5])
    (hv,) = tp.ad.jvp([g], [x], [v])
    gg = tp.ad.grad((g * g).sum(), x)
    a = np.array([0.3, -1.1, 2.0])
    hv0, gg0 = tp.evaluate([hv, gg], {x: a})
    hess_diag = 2 * np.cos(a) - a * np.sin(a)
    np.testing.assert_allclose(hv0, hess_diag * v)
    grad0 = np.cos(a) * a + np.sin(a)
    np.testing.assert_allclose(gg0, 2 * grad0 * hess_diag)


def test_vjp_with_several_outputs_and_inputs():
    x, y = tp.input((2,), name="x"), tp.input((2,), name="y")
    u, w = x * y, tp.exp(x) + y
    gx, gy = tp.ad.vjp([u, w], [x, y], [np.array([1.0, 2.0]), None])
    a, b = np.array([0.1, 0.2]), np.array([3.0, 4.0])
    vx, vy = tp.evaluate([gx, gy], {x: a, y: b})
    np.testing.assert_allclose(vx, np.array([1.0, 2.0]) * b)
    np.testing.assert_allclose(vy, np.array([1.0, 2.0]) * a)


def test_grad_wrt_intermediate_and_input():
    x = tp.input((), name="x")
    h = x * x
    loss = tp.sin(h)
    gx, gh = tp.ad.grad(loss, [x, h])
    vx, vh = tp.evaluate([gx, gh], {x: np.array(0.7)})
    np.testing.assert_allclose(vh, np.cos(0.49))
    np.testing.assert_allclose(vx, np.cos(0.49) * 1.4)


def test_jvp_of_unrelated_output_is_zero():
    x, y = tp.input((2,), name="x"), tp.input((2,), name="y")
    (t,) = tp.ad.jvp([tp.exp(y)], [x], [np.ones(2)])
    np.testing.assert_array_equal(tp.evaluate(t, {y: np.zeros(2)}), np.zeros(2))


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_program_keeps_dtypes(dtype):
    """d Re(sum z^2) = Re(2 z dz): the gradient is conj(2 z) (dL/dx + i dL/dy)."""
    x = tp.input((2,), dtype=dtype, name="x")
    f = tp.compile([x * 2.0, tp.ad.grad((x * x).real.sum(), x)], inputs=[x])
    a = np.array([1.0 + 0.5j, 2.0 - 1j] if dtype == "complex128" else [1.0, 2.0], dtype=dtype)
    out, g = f(a)
    assert out.dtype == np.dtype(dtype) and g.dtype == np.dtype(dtype)
    np.testing.assert_allclose(g, 2 * a.conj())


def test_a_program_with_its_last_inputs_fixed():
    """``with_last_inputs`` checks the fixed inputs once; each call checks the others."""
    x, a = tp.input((3,), name="x"), tp.input((3,), name="a")
    program = tp.compile([x * a + 1.0], inputs=[x, a])
    call = program.with_last_inputs([np.arange(3.0)])
    np.testing.assert_array_equal(call(np.ones(3)), program(np.ones(3), np.arange(3.0)))
    np.testing.assert_array_equal(call(np.full(3, 2.0))[0], [1.0, 3.0, 5.0])
    with pytest.raises(tp.errors.ProgramInputError, match="expected shape"):
        call(np.ones(4))
    with pytest.raises(tp.errors.ProgramInputError, match="expected shape"):
        program.with_last_inputs([np.ones(2)])
    with pytest.raises(tp.errors.ProgramInputError, match="takes 2 inputs"):
        call(np.ones(3), np.ones(3))
    # trusted inputs (another program's outputs) are bound as they are only when they are
    # of the input's shape and dtype: else checked and cast like the others
    trusted = program.with_last_inputs([np.arange(3)], trusted=1)       # int64: cast
    np.testing.assert_array_equal(trusted(np.full(3, 2.0))[0], [1.0, 3.0, 5.0])
    with pytest.raises(tp.errors.ProgramInputError, match="expected shape"):
        program.with_last_inputs([np.ones(2)], trusted=1)

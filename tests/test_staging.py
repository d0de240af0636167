"""A traced step compiled in two stages (tenpy_ad/staging.py): what its fixed operands
determine runs once in ``prepare``, the rest per application in ``step``; the values are
the one-program values, and a fixed point's derivative steps run only their own part."""
import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad.compiler import compile as compile_program
from tenpy_ad.staging import StagedProgram


def _step(x, a):
    """A pullback-like step: a decomposition of the fixed ``a``, applied to ``x``."""
    w, v = tp.linalg.eigh(a + a.T)
    return [0.5 * (v @ (tnp.tanh(w)[:, None] * (v.T @ x))) + tnp.sin(a[:, :3])]


def test_the_fixed_part_runs_in_prepare_and_the_values_are_one_programs():
    x, a = tp.input((4, 3), name="x"), tp.input((4, 4), name="a")
    outputs = _step(x, a)
    staged = StagedProgram(outputs, [x], [a])
    assert staged.cut_size > 0
    assert "eigh" in str(staged.prepare) and "eigh" not in str(staged.step)
    rng = np.random.default_rng(0)
    a0 = rng.normal(size=(4, 4))
    apply = staged.bind([a0])
    whole = compile_program(outputs, [x, a])
    for _ in range(3):
        x0 = rng.normal(size=(4, 3))
        np.testing.assert_array_equal(apply([x0])[0], whole(x0, a0)[0])


def test_a_step_with_nothing_fixed_to_cut_is_one_program():
    x, a = tp.input((3,), name="x"), tp.input((3,), name="a")
    staged = StagedProgram([x * a + x], [x], [a])
    assert staged.cut_size == 0 and staged.prepare is None
    np.testing.assert_array_equal(staged.bind([np.arange(3.0)])([np.ones(3)])[0],
                                  [1.0, 2.0, 3.0])


def test_a_head_step_prunes_what_only_the_tail_needs():
    """``head=k``: a step of the first k outputs from the first k iterates, without the
    work only the others need (here a cosine), sharing one ``prepare`` with the whole."""
    x, t, a = tp.input((4, 3), name="x"), tp.input((4, 3), name="t"), tp.input((4, 4), name="a")
    head_out = _step(x, a)[0]
    outputs = [head_out, tnp.cos(head_out) * 2.0]
    staged = StagedProgram(outputs, [x, t], [a], head=1)
    assert "cos" in str(staged.step) and "cos" not in str(staged.head_step)
    rng = np.random.default_rng(2)
    a0, x0 = rng.normal(size=(4, 4)), rng.normal(size=(4, 3))
    head, whole = staged.bind_head([a0])
    expected = compile_program(outputs, [x, t, a])(x0, x0, a0)
    np.testing.assert_array_equal(head([x0])[0], expected[0])
    np.testing.assert_array_equal(whole([x0, x0])[1], expected[1])


def test_fixed_point_derivatives_through_staged_steps_match_eager():
    """The adjoint and tangent problems of a fixed point compile their steps in two
    stages under tp.jit; the gradient and the JVP equal eager mode's."""
    rng = np.random.default_rng(1)
    a0, b0 = rng.normal(size=(4, 4)) * 0.3, rng.normal(size=4)

    def solution(a, b):
        def f(x, a, b):
            w, v = tp.linalg.eigh(a @ a.T)
            return 0.4 * tnp.tanh(v @ (v.T @ x) * 0.5) + b + 0.1 * w
        return tp.fixed_point(f, tnp.zeros_like(b), a, b, tol=1e-13)

    def loss(a, b):
        return (solution(a, b) ** 2).sum()

    grads = tp.jit(tp.grad(loss, argnums=(0, 1)))(a0, b0)
    eager = tp.grad(loss, argnums=(0, 1))(tp.tensor(a0), tp.tensor(b0))
    for g, e in zip(grads, eager):
        np.testing.assert_allclose(g, e.data, rtol=1e-10, atol=1e-12)
    tangent = tp.jit(lambda a, b, t: tp.jvp(solution, (a, b), (t, b * 0))[1])(
        a0, b0, np.ones((4, 4)))
    expected = tp.jvp(solution, (tp.tensor(a0), tp.tensor(b0)),
                      (tp.tensor(np.ones((4, 4))), tp.tensor(np.zeros(4))))[1]
    np.testing.assert_allclose(tangent, expected.data, rtol=1e-10, atol=1e-12)


def _hermitian(values, seed=0):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(len(values),) * 2))
    return (q * np.asarray(values)) @ q.T


def test_a_degeneracy_check_on_fixed_values_is_decided_in_prepare():
    """The dense eigsh rule's check (does the loss use a basis of degenerate values?):
    whether a value is degenerate depends on the fixed matrix alone, so it is decided once
    per solve; each step then checks only where it is, and still raises there."""
    n, k = 12, 4
    a, g = tp.input((n, n), name="a"), tp.input((n, k), name="g")
    loss = tp.sum(tp.linalg.eigsh(a, k, "LM", method="full")[1] * g)
    staged = StagedProgram([tp.ad.grad(loss, a)], [g], [a])
    assert "degenerate_flag" in str(staged.prepare)
    assert "degenerate_flag" not in str(staged.step) and "degeneracy_check" in str(staged.step)
    rng = np.random.default_rng(3)
    distinct = _hermitian(np.linspace(6.0, 1.0, n))
    whole = compile_program(tp.ad.grad(loss, a), [g, a])
    g0 = rng.normal(size=(n, k))
    np.testing.assert_array_equal(staged.bind([distinct])([g0])[0], whole(g0, distinct))
    values = np.linspace(6.0, 1.0, n)
    values[k] = values[k - 1]                    # a pair across the cut
    with pytest.raises(tp.errors.GaugeError, match="eigsh"):
        staged.bind([_hermitian(values)])([g0])

"""What compiling needs to know about a primitive's steps is declared on the primitive
(tenpy_ad.step_facts), read once per kind of step (signature) when a program is compiled,
and applied to one record per step that the interpreter reads."""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ArgumentError, ArgumentValueError
from tenpy_ad.ops import elementwise as ew
from tenpy_ad.ops import structural as st
from tenpy_ad.ops.contraction import einsum_p
from tenpy_ad.ops.linalg.svd import svd_p
from tenpy_ad.step_facts import (FULL_SUM, ElementwiseLoop, PlannedWrite, StepFacts,
                                 declare_steps)


def test_the_facts_live_on_their_primitives():
    assert einsum_p.step_facts.fresh_outputs
    assert isinstance(einsum_p.step_facts.writes_into, PlannedWrite)
    assert callable(einsum_p.step_facts.c_kernel) and einsum_p.step_facts.blas is not None
    assert svd_p.step_facts.fresh_outputs and svd_p.step_facts.blas is not None
    assert ew.add_p.step_facts.c_kernel == ElementwiseLoop("add", None, np.add)
    assert ew.scale_p.step_facts.c_kernel.numpy_fn is np.multiply
    assert st.reduce_sum_p.step_facts.c_kernel is FULL_SUM
    assert st.broadcast_in_dim_p.step_facts.broadcasts_scalar
    assert tp.PRIMITIVES["exp"].step_facts is None        # a ufunc: nothing to declare


def test_declarations_add_up_and_are_checked():
    prim = tp._core.Primitive("scratch_primitive")         # not registered
    assert prim.step_facts is None
    declare_steps(prim, fresh_outputs=True)
    declare_steps(prim, broadcasts_scalar=True)
    assert prim.step_facts == StepFacts(fresh_outputs=True, broadcasts_scalar=True)
    with pytest.raises(ArgumentError, match="scratch_primitive: no step fact 'fresh'"):
        declare_steps(prim, fresh=True)
    with pytest.raises(ArgumentError, match="scratch_primitive needs a NumPy ufunc"):
        declare_steps(prim, c_kernel=ElementwiseLoop("add"))      # no array_fn
    prim.array_fn = np.power
    with pytest.raises(ArgumentValueError, match="no elementwise loop 'pow'"):
        declare_steps(prim, c_kernel=ElementwiseLoop("pow"))
    assert prim.step_facts.c_kernel is None


def _chain(depth):
    x = tp.input((3, 3), name="x")
    y = x
    for _ in range(depth):
        y = y * 1.0000001 - 1e-9
    loss = y.sum()
    return x, [loss, tp.ad.grad(loss, x)]


@pytest.mark.parametrize("depth", [10, 500])
def test_each_kind_of_step_is_answered_once(depth):
    """scale, shift, the sum and the broadcast of its cotangent: four answers, whatever
    the depth (the core dedupes the steps' signatures)."""
    x, outputs = _chain(depth)
    program = tp.compile(outputs, [x])
    assert [prim.name for prim, _, _, _ in program._plan.signatures] == [
        "scale", "shift", "broadcast_in_dim", "reduce_sum"]
    assert len(program._choices) == 4
    # forward and backward; the last is the gradient, an output: NumPy allocates it
    assert program.kernel_kinds().count("scale") == 2 * depth - 1
    value = np.full((3, 3), 0.5)
    got = program(value)
    expected = tp.compile(outputs, [x], reuse_buffers=False)(value)
    assert all(np.asarray(g).tobytes() == np.asarray(e).tobytes()
               for g, e in zip(got, expected))


def test_the_records_carry_the_plan():
    x, outputs = _chain(20)
    program = tp.compile(outputs, [x])
    steps = program._plan.steps
    assert sum(step.planned >= 0 for step in steps) == program.memory_plan.n_planned > 0
    assert {step.planned for step in steps if step.planned >= 0} == \
        set(range(len(program.memory_plan.slots)))
    assert all(step.threads == -1 for step in steps)
    freed = sorted(b for step in steps for b in step.frees)
    assert len(freed) == len(set(freed))                   # each buffer freed once
    plain = tp.compile(outputs, [x], reuse_buffers=False)
    assert all(step.planned == -1 for step in plain._plan.steps)
    assert plain.memory_plan.n_planned == 0 and plain.memory_plan.new_arrays() is None


def test_another_blas_setting_gets_copies_of_the_records_it_changes(monkeypatch):
    monkeypatch.setattr(tp.config, "blas_threads", "auto")
    x = tp.input((2048, 2048), name="x")
    program = tp.compile((x @ x).sum(), [x])               # compiled, never run
    (k, name, count), = program.blas_threads()
    assert (name, count) == ("einsum", 0)                  # the process's threads
    assert program.blas_threads(1) == [(k, "einsum", 1)]
    assert program._plan.steps[k].threads == 0             # the compiled record is kept
    table, threaded = program._steps_for(1)
    steps = table.steps
    assert threaded and steps[k] is not program._plan.steps[k]
    assert all(a is b for j, (a, b) in enumerate(zip(steps, program._plan.steps)) if j != k)


def test_the_interpreter_table_packs_every_step_of_the_plan():
    """``execute`` reads a StepTable: one record per step of the plan, in order."""
    x = tp.input((3, 3), name="x")
    program = tp.compile([tp.ad.grad((tp.sin(x) @ x).sum(), x)], [x])
    table, _ = program._steps_for(tp.config.blas_threads)
    assert table.n_steps == program.n_instructions == len(table.steps)
    assert all(a is b for a, b in zip(table.steps, program._plan.steps))
    a = np.random.default_rng(0).standard_normal((3, 3))
    expected = np.cos(a) * (np.ones((3, 3)) @ a.T) + np.sin(a).T @ np.ones((3, 3))
    np.testing.assert_allclose(program(a)[0], expected, rtol=1e-12)

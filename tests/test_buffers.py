"""Compiled programs with planned buffers (tenpy_ad.compiler.memory_plan): results bit-identical to
runs that allocate every result, nothing handed to the caller is overwritten by a later
call, views of a planned array keep it reserved, concurrent calls of one Program get
their own arrays, and the decompositions' results are new arrays as the plan assumes.
"""
import weakref

import numpy as np
import pytest

import tenpy_ad as tp

from concurrency import run_threads
from tenpy_ad.compiler import memory_plan
from tenpy_ad.errors import TenpyAdError
from tenpy_ad.models.trg import trg_lnz

from specs import SPECS, make_args

CASES = [(s, d) for s in SPECS for d in s.dtypes]


@pytest.fixture(autouse=True)
def plan_every_size(monkeypatch):
    """Plan results of any size (the default leaves those below 16 KiB to NumPy), so the
    small programs here exercise the plan; test_trg_* runs with the default."""
    monkeypatch.setattr(memory_plan, "MIN_BYTES", 1)


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _value_and_vjp(spec, args, rng):
    """The spec's output and its VJP at a fixed cotangent, as traced nodes."""
    xs = [tp.input(a.shape, a.dtype) for a in args]
    out = spec.fn(*xs)
    cotangent = rng.standard_normal(out.shape).astype(out.dtype)
    return xs, [out] + tp.ad.vjp([out], xs, [cotangent])


@pytest.mark.parametrize("spec,dtype", CASES, ids=[f"{s.name}-{d}" for s, d in CASES])
def test_reuse_is_bit_identical_on_every_spec(spec, dtype, rng):
    args = make_args(spec, dtype, rng)
    try:
        xs, outputs = _value_and_vjp(spec, args, rng)
    except TenpyAdError as error:       # e.g. a gauge-dependent complex loss, in both runs
        pytest.skip(str(error))
    planned = tp.compile(outputs, xs)
    plain = tp.compile(outputs, xs, reuse_buffers=False)
    assert plain.memory_plan.n_planned == 0
    expected = plain(*args)
    for _ in range(2):                  # the second call reuses the first call's arrays
        got = planned(*args)
        assert all(_same_bits(g, e) for g, e in zip(got, expected)), spec.name


@pytest.mark.parametrize("subscripts,shape", [("abc->ca", (3, 33, 33)), ("abc->cb", (40, 30, 2)),
                                              ("ab->ba", (64, 48))])
def test_programs_above_the_plan_threshold_keep_numpys_layouts(monkeypatch, subscripts,
                                                                shape):
    """A permuting einsum gives a column-major value; NumPy's ufunc on it allocates its
    result in that order, and a later sum over an axis adds in that order.  Writing the
    ufunc's result into a planned (row-major) array changed the sums' bits (104 of 200
    inputs of the first case); it now keeps NumPy's layout.  With the default threshold:
    these values are above it."""
    monkeypatch.setattr(memory_plan, "MIN_BYTES", memory_plan.MIN_BYTES_DEFAULT)
    x = tp.input(shape)
    y = tp.sum(tp.sum(1.5 - tp.einsum(subscripts, x), axis=-2) * 2.0)
    planned, plain = tp.compile(y, [x]), tp.compile(y, [x], reuse_buffers=False)
    assert planned.memory_plan.n_planned > 0
    for seed in range(20):
        a = np.random.default_rng(seed).standard_normal(shape)
        expected = np.sum(np.sum(1.5 - np.einsum(subscripts, a), axis=-2) * 2.0)
        assert _same_bits(planned(a), plain(a)) and _same_bits(plain(a), expected)


def _power_iteration(a, steps: int):
    """Normalised transfer-matrix steps: small contractions (some whose output is the
    product transposed) followed by full sums, the layout-sensitive case."""
    left, total = tp.numpy.eye(a.shape[0]), 0.0
    for _ in range(steps):
        left = tp.einsum("ab,asc,bsd->cd", left, a, a)
        norm = tp.sqrt(tp.sum(left * left))
        total, left = total + tp.log(norm), left / norm
    return -total


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("d", [4, 8, 16])
def test_small_contraction_programs_are_bit_identical_with_reuse(d, dtype):
    rng = np.random.default_rng(d)
    a0 = rng.standard_normal((d, 2, d)) / np.sqrt(2 * d)
    if dtype is np.complex128:
        a0 = a0 + 0.3j * rng.standard_normal(a0.shape) / np.sqrt(2 * d)
    x = tp.input(a0.shape, a0.dtype)
    loss = _power_iteration(x, 12)
    loss = tp.real(loss) if dtype is np.complex128 else loss
    outputs = [loss, tp.ad.grad(loss, x)]
    planned = tp.compile(outputs, inputs=[x])
    plain = tp.compile(outputs, inputs=[x], reuse_buffers=False)
    for _ in range(2):
        for got, expected in zip(planned(a0), plain(a0)):
            assert _same_bits(got, expected)


def test_trg_is_bit_identical_with_reuse(monkeypatch):
    monkeypatch.setattr(memory_plan, "MIN_BYTES", memory_plan.MIN_BYTES_DEFAULT)
    beta = tp.input((), name="beta")
    lnz = trg_lnz(beta, chi=8, steps=4)
    first = tp.ad.grad(lnz, beta)
    outputs = [lnz, first, tp.ad.grad(first, beta)]
    planned, plain = tp.compile(outputs, [beta]), tp.compile(outputs, [beta],
                                                            reuse_buffers=False)
    assert planned.memory_plan.n_planned > 0
    for b in (0.3, 0.44, 0.3):
        expected = plain(np.float64(b))
        assert all(_same_bits(g, e) for g, e in zip(planned(np.float64(b)), expected))


def _chain_program():
    """Outputs that are planned-step results or views of them (transpose, reshape, a
    slice), and intermediates whose arrays are reused."""
    x = tp.input((6, 6), name="x")
    a = tp.sin(x) * 2.0
    b = tp.einsum("ij,jk->ki", a, x)            # matmul into a planned array, transposed
    c = tp.exp(b * 0.1) + a
    d = c @ c
    outputs = [d, d.T, (c + 1.0).reshape(36), b[:, :2], tp.tanh(d).sum()]
    return x, outputs


def test_outputs_are_never_overwritten_by_a_later_call():
    x, outputs = _chain_program()
    f = tp.compile(outputs, [x])
    reference = tp.compile(outputs, [x], reuse_buffers=False)
    rng = np.random.default_rng(1)
    a0, a1 = rng.standard_normal((6, 6)), rng.standard_normal((6, 6))
    first = f(a0)
    kept = [np.array(v, copy=True) for v in first]
    f(a1)
    f(a1)
    for value, copy, expected in zip(first, kept, reference(a0)):
        assert _same_bits(value, copy) and _same_bits(value, expected)


def test_views_keep_their_array_reserved():
    """``v`` is a view of ``a``'s array, read after ``a``'s own last use; the steps in
    between (same shapes and dtype) must not take that array."""
    x = tp.input((8, 8), name="x")
    a = tp.exp(x * 0.5)
    v = a.T
    w = tp.sin(x) + 1.0
    for _ in range(4):
        w = tp.cos(w) * 2.0 - x
    y = (v @ w).sum() + (w * v).sum()
    args = np.random.default_rng(2).standard_normal((8, 8))
    f = tp.compile(y, [x])
    expected = tp.compile(y, [x], reuse_buffers=False)(args)
    assert f.memory_plan.n_planned > 0
    assert _same_bits(f(args), expected) and _same_bits(f(args), expected)
    xv = args
    av = np.exp(xv * 0.5)
    wv = np.sin(xv) + 1.0
    for _ in range(4):
        wv = np.cos(wv) * 2.0 - xv
    np.testing.assert_allclose(f(args), (av.T @ wv).sum() + (wv * av.T).sum(), rtol=1e-12)


def test_arrays_are_shared_between_steps_and_kept_between_calls():
    x = tp.input((16, 16), name="x")
    y = x
    for _ in range(20):
        y = tp.tanh(y @ x) * 0.5 + x
    f = tp.compile(y.sum(), [x])
    plan = f.memory_plan
    assert plan.n_planned >= 50 and len(plan.sizes) <= 5      # values, matmul scratch
    assert plan.nbytes == sum(plan.sizes) <= 5 * 16 * 16 * 8
    f(np.eye(16))
    f(np.eye(16))
    assert len(f._idle_arrays) == 1           # one set, reused by the second call


def test_concurrent_calls_get_their_own_arrays():
    x = tp.input((48, 48), name="x")
    y = x
    for _ in range(8):
        y = tp.tanh(y @ x * 0.02) + x
    outputs = [y, tp.ad.grad((y * y).sum(), x)]
    f = tp.compile(outputs, [x])
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((48, 48)) for _ in range(4)]
    expected = [f(a) for a in inputs]
    def run(k):
        for r in range(25):
            i = (k + r) % 4
            got = f(inputs[i])
            assert all(_same_bits(g, e) for g, e in zip(got, expected[i]))

    run_threads(run)
    assert 1 <= len(f._idle_arrays) <= 4


def _held_array(f):
    (outs,) = f._idle_arrays
    return weakref.ref(next(o for o in outs if o is not None).base)


def test_a_dropped_program_frees_its_arrays():
    x, outputs = _chain_program()
    f = tp.compile(outputs, [x])
    f(np.ones((6, 6)))
    array = _held_array(f)
    del f
    assert array() is None


def test_release_buffers_frees_the_arrays_until_the_next_call():
    x, outputs = _chain_program()
    f = tp.compile(outputs, [x])
    expected = f(np.ones((6, 6)))
    array = _held_array(f)
    f.release_buffers()
    assert array() is None and f._idle_arrays == []
    assert all(_same_bits(g, e) for g, e in zip(f(np.ones((6, 6))), expected))
    assert len(f._idle_arrays) == 1


def test_an_error_leaves_the_program_usable():
    x = tp.input((4, 4), name="x")
    y = tp.linalg.inv(tp.exp(x) - 1.0) * 2.0
    f = tp.compile(y, [x])
    with pytest.raises(np.linalg.LinAlgError):
        f(np.zeros((4, 4)))
    args = np.eye(4) + 0.1
    assert _same_bits(f(args), tp.compile(y, [x], reuse_buffers=False)(args))


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_fresh_primitives_return_new_arrays(spec, rng):
    """The primitives the plan treats as returning new memory (einsum, the decompositions:
    ops/linalg/threads.py) never return a view of an operand."""
    args = make_args(spec, spec.dtypes[0], rng)
    try:
        xs, outputs = _value_and_vjp(spec, args, rng)
    except TenpyAdError as error:
        pytest.skip(str(error))
    program = tp.compile(outputs, xs, reuse_buffers=False)
    buffers = program._bind_inputs(args)
    for step in program._plan.steps:        # the interpreter's loop, checking each step
        operands = [buffers[b] for b in step.inputs]
        result = step.prim.impl(step.params, *operands)
        results = result if step.prim.n_outputs > 1 else (result,)
        if step.prim.step_facts is not None and step.prim.step_facts.fresh_outputs:
            assert not any(np.shares_memory(r, o) for r in results for o in operands
                           if isinstance(r, np.ndarray) and isinstance(o, np.ndarray)), (
                step.prim.name)
        for slot, b in step.outputs:
            buffers[b] = results[slot]

"""Eager mode: Tensor basics, backward semantics, no_grad, deep chains, memory, counters."""
import gc
import threading
import tracemalloc

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import GraphError, ShapeError
from tenpy_ad.models.chains import chain


def test_tensor_basics():
    t = tp.tensor([[1, 2], [3, 4]])
    assert t.dtype == np.float64 and t.shape == (2, 2) and t.ndim == 2
    assert tp.tensor(np.float32(1.5)).dtype == np.float32
    assert tp.tensor([1j]).dtype == np.complex128
    assert tp.tensor([1, 2], dtype="complex128").dtype == np.complex128
    np.testing.assert_array_equal(np.asarray(t), [[1, 2], [3, 4]])
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    assert np.asarray(t, copy=True) is not t.numpy()
    held = np.asarray(t)            # no copy: a read-only view (tape entries may save it)
    assert np.shares_memory(held, t.numpy()) and not held.flags.writeable
    assert tp.tensor(3.0).item() == 3.0 and float(tp.tensor(3.0)) == 3.0
    assert repr(tp.tensor([1.0, 2.0], requires_grad=True)) == \
        "tensor([1., 2.], requires_grad=True)"
    assert "grad_fn=mul" in repr(tp.tensor(2.0, requires_grad=True) * tp.tensor(3.0))


def test_tensor_copies_its_data():
    a = np.ones(3)
    t = tp.tensor(a)
    a[0] = 5.0
    assert t.numpy()[0] == 1.0


def test_backward_fills_grad_and_accumulates():
    b = tp.tensor(0.3, requires_grad=True)
    loss = tp.sin(b) * b
    loss.backward(retain_graph=True)
    expected = np.cos(0.3) * 0.3 + np.sin(0.3)
    np.testing.assert_allclose(b.grad.numpy(), expected)
    loss.backward()
    np.testing.assert_allclose(b.grad.numpy(), 2 * expected)
    assert type(b.grad) is tp.Tensor and not b.grad.requires_grad


def test_second_backward_through_freed_graph_is_a_clear_error():
    b = tp.tensor(0.3, requires_grad=True)
    loss = tp.exp(b * b)
    loss.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        loss.backward()


def test_backward_needs_a_gradient_for_non_scalars():
    b = tp.tensor(np.ones(3), requires_grad=True)
    y = b * 2.0
    with pytest.raises(GraphError, match="gradient"):
        y.backward()
    with pytest.raises(ShapeError):
        y.backward(np.ones(2))
    y.backward(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(b.grad.numpy(), [2.0, 4.0, 6.0])


def test_backward_on_a_tensor_without_tape_is_an_error():
    with pytest.raises(GraphError, match="requires_grad"):
        tp.tensor(1.0).backward()


def test_detach_and_requires_grad_flags():
    b = tp.tensor(2.0, requires_grad=True)
    y = b * b
    assert y.requires_grad and not y.is_leaf and b.is_leaf
    z = y.detach() * b
    z.backward()
    np.testing.assert_allclose(b.grad.numpy(), 4.0)    # d(const * b)/db with const = 4
    with pytest.raises(RuntimeError):
        y.requires_grad = False


def test_no_grad_records_nothing_and_is_thread_local():
    b = tp.tensor(1.0, requires_grad=True)
    with tp.no_grad():
        assert not tp.is_grad_enabled()
        y = b * 3.0
        seen = []
        thread = threading.Thread(target=lambda: seen.append(tp.is_grad_enabled()))
        thread.start()
        thread.join()
    assert seen == [True]
    assert not y.requires_grad and tp.is_grad_enabled()

    @tp.no_grad()
    def f(x):
        return x * x
    assert not f(b).requires_grad


def test_create_graph_gives_second_derivatives():
    b = tp.tensor(0.7, requires_grad=True)
    y = tp.sin(b) * b * b
    (g,) = tp.grad_of([y], [b], create_graph=True)
    (h,) = tp.grad_of([g], [b])
    a = 0.7
    np.testing.assert_allclose(g.numpy(), np.cos(a) * a * a + 2 * a * np.sin(a))
    np.testing.assert_allclose(h.numpy(), -np.sin(a) * a * a + 4 * a * np.cos(a)
                               + 2 * np.sin(a))
    assert b.grad is None          # grad_of never touches .grad


def test_backward_create_graph_then_backward_of_grad():
    b = tp.tensor(0.5, requires_grad=True)
    y = tp.exp(b * b)
    y.backward(create_graph=True)
    g = b.grad
    b.grad = None
    g.backward()
    np.testing.assert_allclose(b.grad.numpy(), (2 + 4 * 0.25) * np.exp(0.25))


def test_model_written_once_runs_in_both_modes(rng):
    """One function, traced and eager: identical values and gradients."""
    w0, x0 = rng.standard_normal((4, 4)), rng.standard_normal((4,))

    def model(w, x):
        h = tp.tanh(w @ x)
        h = h / tp.amax(tp.abs(h))
        return tp.einsum("i,ij,j->", h, w, h) + (h[1:] ** 2).sum()

    w, x = tp.input((4, 4), name="w"), tp.input((4,), name="x")
    loss = model(w, x)
    traced = tp.evaluate([loss] + tp.ad.grad(loss, [w, x]), {w: w0, x: x0})
    we, xe = tp.tensor(w0, requires_grad=True), tp.tensor(x0, requires_grad=True)
    eager_loss = model(we, xe)
    eager_loss.backward()
    np.testing.assert_allclose(eager_loss.numpy(), traced[0], rtol=1e-13)
    np.testing.assert_allclose(we.grad.numpy(), traced[1], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(xe.grad.numpy(), traced[2], rtol=1e-12, atol=1e-14)
    # and on plain arrays the same code is a NumPy forward pass
    np.testing.assert_allclose(model(w0, x0), traced[0], rtol=1e-13)


def test_deep_eager_chain_forward_backward_release():
    gc.collect()
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        b = tp.tensor(np.array([0.3, -0.2]), requires_grad=True)
        y = b
        for _ in range(100_000):
            y = tp.sin(y) * 0.999
        loss = y.sum()
        held, _ = tracemalloc.get_traced_memory()
        loss.backward()
        after_backward, _ = tracemalloc.get_traced_memory()
        assert np.all(np.isfinite(b.grad.numpy()))
        del y, loss
        gc.collect()
        released, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held - base > 10_000_000              # the tape and its saved arrays
    assert after_backward - base < (held - base) * 0.6   # saved arrays freed by the sweep
    assert released - base < 100_000             # everything returns


def test_eager_counters_grow_linearly():
    per_depth = []
    for depth in (100, 200, 300):
        tp.reset_counters()
        b = tp.tensor(np.full((3, 3), 0.9), requires_grad=True)
        chain("cube", b, depth).sum().backward()
        c = tp.counters()
        per_depth.append((c["eager_recorded"], c["eager_swept"]))
    assert per_depth[1][0] - per_depth[0][0] == per_depth[2][0] - per_depth[1][0] == 300
    assert per_depth[1][1] - per_depth[0][1] == per_depth[2][1] - per_depth[1][1] == 300


def test_independent_backwards_in_threads():
    results, errors = {}, []

    def work(k):
        try:
            for _ in range(20):
                b = tp.tensor(np.full(3, 0.1 * (k + 1)), requires_grad=True)
                loss = chain("ladder", b, 200).sum()
                loss.backward()
            results[k] = b.grad.numpy()
        except Exception as error:      # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(4):
        b = tp.tensor(np.full(3, 0.1 * (k + 1)), requires_grad=True)
        chain("ladder", b, 200).sum().backward()
        np.testing.assert_array_equal(results[k], b.grad.numpy())


def test_multi_output_cotangent_slots_and_shared_leaf():
    a = tp.tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = (a * 3.0) * (a + 1.0)          # a reaches the loss by two paths
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 6 * np.array([1.0, 2.0]) + 3.0)


def test_grad_of_runs_only_the_rules_between_output_and_wanted_tensors():
    """Asking for the cotangent of a tensor used late must not sweep the long chain that
    produced the other operand (counted by the engine, exactly)."""
    x = tp.tensor(np.ones(3), requires_grad=True)
    y = x
    for _ in range(1000):
        y = tp.sin(y)
    z = tp.tensor(np.full(3, 2.0), requires_grad=True)
    loss = (y * z).sum()
    tp.reset_counters()
    (gz,) = tp.grad_of([loss], [z], retain_graph=True)
    assert tp.counters()["eager_swept"] == 2            # the sum and the product
    np.testing.assert_allclose(gz.numpy(), y.detach().numpy())
    tp.reset_counters()
    (gx,) = tp.grad_of([loss], [x])
    assert tp.counters()["eager_swept"] == 1002

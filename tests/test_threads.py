"""Threads: four threads interning the same expressions get the very same nodes; eager
backward passes in threads equal a serial run (and ``no_grad`` is per thread).
"""

import numpy as np

import tenpy_ad as tp

from concurrency import run_threads


def _shared_expressions(x, y):
    out = []
    a = x
    for i in range(12):
        a = tp.exp(a @ y * 0.1) + x + np.float64(1.5)
        b = tp.sin(a.sum(axis=0)) * np.array([1.0, 2.0, 3.0]) - float(i)
        out += [a, b, tp.exp(x @ y).sum(), x + np.float64(1.5)]
    u, s, vt = tp.linalg.svd(a)
    loss = b.sum() + s.sum()
    out += [u, s, vt, loss]
    if type(x) is tp.TracedTensor:
        out += tp.ad.grad(loss, [x, y])
    return out


def _shared_reference(xv, yv):
    a = xv
    for i in range(12):
        a = np.exp(a @ yv * 0.1) + xv + 1.5
        b = np.sin(a.sum(axis=0)) * np.array([1.0, 2.0, 3.0]) - float(i)
    return a, b, np.linalg.svd(a, compute_uv=False)


def test_threads_building_the_same_expressions_get_the_same_nodes():
    x, y = tp.input((3, 3), name="x"), tp.input((3, 3), name="y")
    per_thread = [None] * 4

    def work(k):
        mine = None
        for _ in range(25):
            nodes = _shared_expressions(x, y)
            if mine is None:
                mine = nodes
            assert all(a is b for a, b in zip(nodes, mine))
        per_thread[k] = mine

    run_threads(work)
    reference = per_thread[0]
    for nodes in per_thread[1:]:
        assert len(nodes) == len(reference)
        for i, (a, b) in enumerate(zip(nodes, reference)):
            assert a is b, f"expression {i} was interned twice: {a!r} vs {b!r}"
    rng = np.random.default_rng(7)
    xv, yv = rng.normal(size=(3, 3)) * 0.3, rng.normal(size=(3, 3)) * 0.3
    a, b, s = _shared_reference(xv, yv)
    values = tp.compile(reference, inputs=[x, y])(xv, yv)
    np.testing.assert_allclose(values[44], a, rtol=1e-12)      # the last a and b
    np.testing.assert_allclose(values[45], b, rtol=1e-12)
    np.testing.assert_allclose(values[-5], s, rtol=1e-10)
    np.testing.assert_allclose(values[-6] * values[-5] @ values[-4], a, rtol=1e-10)
    np.testing.assert_allclose(values[2], np.exp(xv @ yv).sum(), rtol=1e-12)
    np.testing.assert_allclose(values[3], xv + 1.5)
    # the gradient agrees with an eager evaluation of the same function
    xe, ye = tp.tensor(xv, requires_grad=True), tp.tensor(yv, requires_grad=True)
    eager = _shared_expressions(xe, ye)[-1]
    eager.backward()
    np.testing.assert_allclose(values[-2], xe.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(values[-1], ye.grad.numpy(), rtol=1e-10)


def _eager_work(seed: int):
    rng = np.random.default_rng(seed)
    a = tp.tensor(rng.normal(size=(4, 4)), requires_grad=True)
    b = tp.tensor(rng.normal(size=(4, 4)), requires_grad=True)
    c = a
    for _ in range(20):
        c = tp.tanh(c @ b) * 0.5 + a
    loss = (c * c).sum() + tp.linalg.svd(c)[1].sum()
    loss.backward()
    return loss.item(), a.grad.numpy(), b.grad.numpy()


def test_eager_backwards_in_threads_match_a_serial_run():
    serial = [_eager_work(seed) for seed in range(4)]
    results = [[] for _ in range(4)]

    def work(k):
        for _ in range(15):
            if k == 3:      # no_grad is per thread: the others keep recording
                with tp.no_grad():
                    t = tp.tensor(np.ones(3), requires_grad=True) * 2.0
                assert not t.requires_grad
            results[k].append(_eager_work(k))

    run_threads(work)
    for k in range(4):
        assert len(results[k]) == 15
        for value, ga, gb in results[k]:
            np.testing.assert_allclose(value, serial[k][0], rtol=1e-12)
            np.testing.assert_allclose(ga, serial[k][1], rtol=1e-11, atol=1e-13)
            np.testing.assert_allclose(gb, serial[k][2], rtol=1e-11, atol=1e-13)

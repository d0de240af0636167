"""Dropping a graph frees it: a derivative graph gives back everything it alone owned,
a Program holds no nodes, and 1000 rounds of build + grad + compile + run + drop keep the
intern table, the metadata table and tracemalloc flat."""
import gc
import tracemalloc

import numpy as np

import tenpy_ad as tp
from tenpy_ad.introspection import table_sizes


def _round(x, depth=50):
    y = x
    for _ in range(depth):
        y = tp.tanh(y @ y.T) * 0.9 + x
    loss = y.sum()
    g = tp.ad.grad(loss, x)
    hvp = tp.ad.jvp([g], [x], [np.ones((3, 3))])[0]       # a second-order graph too
    program = tp.compile([loss, g, hvp], inputs=[x])
    result = program(np.eye(3) * 0.1)
    return loss, g, hvp, program, result


def test_tables_return_to_their_size_after_dropping_derivatives():
    gc.collect()                 # garbage of earlier tests must not be freed mid-test
    x = tp.input((3, 3), name="x")
    y = tp.sin(x).sum()
    before = table_sizes()
    loss, g, hvp, program, _ = _round(x)
    assert table_sizes()["metadata_rows"] > before["metadata_rows"]
    del loss, g, hvp, program
    assert table_sizes() == before
    del y


def test_repeated_rounds_do_not_grow_memory():
    x = tp.input((3, 3), name="x")
    for _ in range(3):
        _round(x)               # warm caches (plans, promotion tables)
    gc.collect()
    tracemalloc.start()
    try:
        _round(x)
        gc.collect()
        first, _ = tracemalloc.get_traced_memory()
        for _ in range(30):
            _round(x)
        gc.collect()
        last, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert last - first < 64 * 1024, f"grew by {last - first} bytes over 30 rounds"


def test_program_survives_its_graph():
    """A Program holds no graph nodes: the graph can go, the program still runs."""
    gc.collect()
    rows = table_sizes()["metadata_rows"]
    x = tp.input((2,), name="x")
    program = tp.compile(tp.ad.grad((tp.exp(x) * x).sum(), x), inputs=[x])
    del x
    assert table_sizes()["metadata_rows"] == rows
    np.testing.assert_allclose(program(np.array([0.0, 1.0])), [1.0, 2 * np.e])


_X = np.array([[0.5, 0.1, -0.2], [0.3, 0.9, 0.05], [-0.4, 0.2, 0.7]])
_W = np.array([0.2, -0.1, 0.4])


def _memory_round(x, w):
    """~25 ops incl. matmul, svd, slicing and einsum; gradient; compile; run; drop."""
    y = x @ x.T + w
    y = tp.tanh(y) * 0.9 + x
    u, s, vt = tp.linalg.svd(y)
    z = (u * s) @ vt
    z = tp.exp(-(z * z)) + tp.sin(z)[::-1, :]
    loss = (z.sum(axis=0) * w).sum() + s.sum() + tp.einsum("ij,ji->", z, x)
    grads = tp.ad.grad(loss, [x, w])
    program = tp.compile([loss] + grads, inputs=[x, w])
    value, gx, gw = program(_X, _W)
    return float(value), float(gx.sum() + gw.sum()), program.n_nodes


def test_thousand_rounds_of_build_grad_compile_run_drop_stay_flat():
    x, w = tp.input((3, 3), name="x"), tp.input((3,), name="w")
    first = _memory_round(x, w)
    assert first[2] > 40                     # the round is a real graph
    for _ in range(20):
        _memory_round(x, w)                 # warm caches (plans, promotion tables)
    gc.collect()
    start = table_sizes()
    tracemalloc.start()
    try:
        for i in range(1, 1001):
            assert _memory_round(x, w) == first
            if i == 100:
                gc.collect()
                mem_100, sizes_100 = tracemalloc.get_traced_memory()[0], table_sizes()
        gc.collect()
        mem_1000, sizes_1000 = tracemalloc.get_traced_memory()[0], table_sizes()
    finally:
        tracemalloc.stop()
    assert sizes_100 == start and sizes_1000 == start
    assert mem_1000 - mem_100 < 64 * 1024, f"grew by {mem_1000 - mem_100} bytes"

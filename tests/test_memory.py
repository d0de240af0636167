"""Dropping a derivative graph frees everything it alone owned (DESIGN.md invariant 4)."""
import gc
import tracemalloc

import numpy as np

import tenpy_ad as tp
from tenpy_ad._compiled import _core


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
    interned, rows = _core.intern_table_size(), _core.table_size()
    loss, g, hvp, program, _ = _round(x)
    assert _core.table_size() > rows
    del loss, g, hvp, program
    assert _core.intern_table_size() == interned
    assert _core.table_size() == rows
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
    rows = _core.table_size()
    x = tp.input((2,), name="x")
    program = tp.compile(tp.ad.grad((tp.exp(x) * x).sum(), x), inputs=[x])
    del x
    assert _core.table_size() == rows
    np.testing.assert_allclose(program(np.array([0.0, 1.0])), [1.0, 2 * np.e])

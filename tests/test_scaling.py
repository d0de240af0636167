"""Linear scaling, asserted on the engine's deterministic counters (never on time).

For each chain the whole pipeline (build, grad transform, compile, run, drop) is measured at
depths n, 2n, 3n: the counters must grow by exactly the same amount per added layer.  A
structural comparison that walked the DAG as a tree (the tenferro 0.8.0 failure) would grow
by 2^n here.
"""
import gc

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.introspection import table_sizes
from tenpy_ad.models.chains import build_chain, start_value

COUNTED = ("nodes_interned", "table_probes", "table_hits", "nodes_released", "nodes_visited",
           "rules_applied", "instructions_run", "equality_calls")


def pipeline_counts(kind: str, depth: int) -> dict:
    gc.collect()
    tp.reset_counters()
    x, loss = build_chain(kind, depth)
    g = tp.ad.grad(loss, x)
    program = tp.compile([loss, g], inputs=[x])
    value, grad = program(start_value(kind))
    assert np.isfinite(value) and np.all(np.isfinite(grad))
    del x, loss, g, program
    counts = tp.counters()
    return {k: counts[k] for k in COUNTED}


def per_layer(kind, depths):
    c = [pipeline_counts(kind, d) for d in depths]
    steps = [d2 - d1 for d1, d2 in zip(depths, depths[1:])]
    return [{k: (c[i + 1][k] - c[i][k]) / steps[i] for k in COUNTED} for i in range(len(steps))]


@pytest.mark.parametrize("kind,depths", [
    ("ladder", (20, 40, 60)),
    ("ladder", (2500, 5000, 10000)),
    ("mul", (100, 200, 300)),
    ("cube", (100, 200, 300)),
    ("svd1", (50, 100, 150)),
    ("svd2", (10, 20, 30)),          # u s + y grows geometrically: stay finite
    ("svd3", (50, 100, 150)),
    ("qr2", (50, 100, 150)),
])
def test_counters_grow_by_a_constant_per_layer(kind, depths):
    first, second = per_layer(kind, depths)
    assert first == second, f"{kind}: per-layer growth changed: {first} vs {second}"
    assert first["nodes_interned"] > 0 and first["rules_applied"] > 0
    # everything built is released again
    assert first["nodes_released"] == first["nodes_interned"]


def test_ladder_derivative_is_small():
    """At depth 60 the unfolded tree would have 2^60 leaves; the derivative graph has a
    handful of nodes per layer."""
    x, loss = build_chain("ladder", 60)
    before = table_sizes()["metadata_rows"]
    g = tp.ad.grad(loss, x)
    added = table_sizes()["metadata_rows"] - before
    assert added <= 6 * 60 + 10
    value = tp.evaluate(g, {x: np.full((3, 3), 0.5)})
    # reference by forward-mode finite differences of the same chain in NumPy
    def f(a):
        for _ in range(60):
            a = np.tanh(a * a)
        return a.sum()
    eps, a0 = 1e-6, np.full((3, 3), 0.5)
    e = np.zeros((3, 3)); e[1, 2] = 1
    fd = (f(a0 + eps * e) - f(a0 - eps * e)) / (2 * eps)
    np.testing.assert_allclose(value[1, 2], fd, rtol=1e-6)


def test_deep_chain_no_recursion():
    """A chain of depth 10^5: grad, compile, run and drop without RecursionError or crash."""
    gc.collect()
    before = table_sizes()
    x = tp.input((2,), name="x")
    y = x
    for _ in range(100_000):
        y = tp.sin(y) * 0.999
    loss = y.sum()
    g = tp.ad.grad(loss, x)
    program = tp.compile([loss, g], inputs=[x])
    value, grad = program(np.array([0.3, -0.2]))
    assert np.isfinite(value) and np.all(np.isfinite(grad))
    text = str(program)
    assert text.count("\n") > 100_000
    del x, y, loss, g, program
    assert table_sizes() == before


def trg_counts(steps: int) -> dict:
    """Build + grad + compile of whole-graph TRG at chi = 16 (running it is benchmarked,
    not tested here)."""
    from tenpy_ad.models.trg import trg_lnz
    gc.collect()
    tp.reset_counters()
    beta = tp.input((), name="beta")
    lnz = trg_lnz(beta, 16, steps, ks=[2, 4, 4] + [16] * (steps - 3))
    g = tp.ad.grad(lnz, beta)
    tp.compile([lnz, g], inputs=[beta])
    del beta, lnz, g
    counts = tp.counters()
    return {k: counts[k] for k in COUNTED}


def test_trg_counters_grow_by_a_constant_per_step():
    c20, c40, c60 = (trg_counts(n) for n in (20, 40, 60))
    first = {k: c40[k] - c20[k] for k in COUNTED}
    second = {k: c60[k] - c40[k] for k in COUNTED}
    assert first == second, f"TRG per-step growth changed: {first} vs {second}"
    assert first["nodes_interned"] > 0 and first["nodes_released"] == first["nodes_interned"]

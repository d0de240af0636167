"""Depth: a 10^6-deep traced chain is built, differentiated, compiled, run and freed; a
10^6-deep forward chain is freed while its placeholder lives; a 10^6-deep eager tape runs
backward and is freed (tracemalloc).  The tables return to their size.  Each run is
``tests/scripts/deep_graphs.py`` in its own interpreter, started early
(``tests/conftest.py``, ``tests/deep_runs.py``); these tests collect the results.
"""
import math

import numpy as np

from deep_runs import DEPTH


def _sin_chain(x0: float, depth: int) -> tuple:
    """``sin`` applied ``depth`` times, and its derivative (product of the cosines)."""
    v, d = x0, 1.0
    for _ in range(depth):
        d *= math.cos(v)
        v = math.sin(v)
    return v, d


def test_deep_traced_chain_is_differentiated_compiled_run_and_freed(deep_graph_runs):
    result = deep_graph_runs["traced"].result()
    (v1, d1), (v2, d2) = _sin_chain(0.3, DEPTH), _sin_chain(1.2, DEPTH)
    assert DEPTH < result["n_nodes"] < 4 * DEPTH + 16
    np.testing.assert_allclose(result["value"], v1 + v2, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(result["grad"], [d1, d2], rtol=1e-6)
    assert all(math.isfinite(g) and g > 0 for g in result["grad"])
    assert result["after"] == result["before"], "tables did not return to their size"


def test_deep_forward_chain_is_freed_without_crash(deep_graph_runs):
    result = deep_graph_runs["forward"].result()
    assert result["after"] == result["before"]


def test_deep_eager_tape_backward_and_free(deep_graph_runs):
    result = deep_graph_runs["eager"].result()
    (v1, d1), (v2, d2) = _sin_chain(0.3, DEPTH), _sin_chain(1.2, DEPTH)
    np.testing.assert_allclose(result["value"], v1 + v2, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(result["grad"], [d1, d2], rtol=1e-6)
    assert all(math.isfinite(g) for g in result["grad"])
    assert result["held"] > 50 * DEPTH, "the tape should hold real memory while alive"
    assert result["end"] < 64 * 1024, f"{result['end']} bytes still allocated after the free"

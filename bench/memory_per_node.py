"""Memory per graph node, traced and eager, at growing depth (it must stay flat).

Traced: a chain ``y <- sin(y) * 0.999`` on a shape-(2,) input; bytes per node for the value
graph and for the value + derivative graph (tracemalloc).  Eager: bytes per tape entry
held by the same chain before backward().

    python bench/memory_per_node.py --depths 10000,100000,1000000
"""
from __future__ import annotations

import argparse
import gc
import sys
import tracemalloc

import numpy as np

import tenpy_ad as tp
from tenpy_ad.introspection import table_sizes


def traced(depth: int) -> dict:
    gc.collect()
    tracemalloc.start()
    start, _ = tracemalloc.get_traced_memory()
    rows = table_sizes()["metadata_rows"]
    x = tp.input((2,), name="x")
    y = x
    for _ in range(depth):
        y = tp.sin(y) * 0.999
    loss = y.sum()
    value_nodes = table_sizes()["metadata_rows"] - rows
    value_bytes = tracemalloc.get_traced_memory()[0] - start
    g = tp.ad.grad(loss, x)
    all_nodes = table_sizes()["metadata_rows"] - rows
    all_bytes = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    del x, y, loss, g
    gc.collect()
    return {"depth": depth, "value_nodes": value_nodes,
            "bytes_per_value_node": value_bytes / value_nodes,
            "nodes_with_derivative": all_nodes,
            "bytes_per_node_with_derivative": all_bytes / all_nodes}


def eager(depth: int) -> dict:
    gc.collect()
    tracemalloc.start()
    start, _ = tracemalloc.get_traced_memory()
    tp.reset_counters()
    b = tp.tensor(np.array([0.3, -0.2]), requires_grad=True)
    y = b
    for _ in range(depth):
        y = tp.sin(y) * 0.999
    entries = tp.counters()["eager_recorded"]
    held = tracemalloc.get_traced_memory()[0] - start
    y.sum().backward()
    after = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    del b, y
    gc.collect()
    return {"depth": depth, "tape_entries": entries, "bytes_per_entry": held / entries,
            "bytes_per_entry_after_backward": after / entries}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--depths", default="10000,100000,1000000")
    args = parser.parse_args(argv)
    print(f"{'depth':>8} {'value nodes':>12} {'B/node':>8} {'with deriv':>11} {'B/node':>8} "
          f"{'tape entries':>13} {'B/entry':>8} {'B/entry after bwd':>18}")
    for depth in [int(d) for d in args.depths.split(",")]:
        t, e = traced(depth), eager(depth)
        print(f"{depth:>8} {t['value_nodes']:>12} {t['bytes_per_value_node']:>8.0f} "
              f"{t['nodes_with_derivative']:>11} {t['bytes_per_node_with_derivative']:>8.0f} "
              f"{e['tape_entries']:>13} {e['bytes_per_entry']:>8.0f} "
              f"{e['bytes_per_entry_after_backward']:>18.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

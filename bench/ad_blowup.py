"""Traced ``ad.grad`` cost versus depth on the chains of DESIGN.md §5.

One line per depth: value ops, median transform time, its ratio to the previous depth,
derivative ops, µs per derivative op, median drop time and drop/transform.  The peer
engine (tenferro-rs 0.8.0) doubled (mul) or tripled (svd3, cube) per layer here.

    python bench/ad_blowup.py --kind mul --max-depth 12800
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time

import tenpy_ad as tp
from tenpy_ad._compiled import _core
from tenpy_ad.models.chains import LAYERS, build_chain

DEPTHS = [10, 25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200]


def measure(kind: str, depth: int, repeats: int) -> dict:
    x, loss = build_chain(kind, depth)
    value_ops = len(_core.toposort([loss]))
    transform, drop = [], []
    derivative_ops = 0
    for _ in range(repeats):
        gc.collect()
        before = _core.table_size()
        t0 = time.perf_counter()
        g = tp.ad.grad(loss, x)
        t1 = time.perf_counter()
        derivative_ops = _core.table_size() - before
        del g
        t2 = time.perf_counter()
        transform.append(t1 - t0)
        drop.append(t2 - t1)
    return {"kind": kind, "depth": depth, "value_ops": value_ops,
            "grad_ms": statistics.median(transform) * 1e3,
            "derivative_ops": derivative_ops,
            "drop_ms": statistics.median(drop) * 1e3}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kind", choices=sorted(LAYERS), default="mul")
    parser.add_argument("--max-depth", type=int, default=12800)
    parser.add_argument("--repeats", type=int, default=5, help="timings per depth (median)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    args = parser.parse_args(argv)
    if not args.json:
        print(f"# tenpy_ad {tp.__version__} core {tp.core_info()['source_hash']}  "
              f"chain={args.kind}  (medians of {args.repeats})")
        print(f"{'n':>6} {'value ops':>10} {'ad.grad ms':>11} {'ratio':>6} {'deriv ops':>10} "
              f"{'us/op':>6} {'drop ms':>8} {'drop/grad':>9}")
    previous = None
    for depth in [d for d in DEPTHS if d <= args.max_depth]:
        row = measure(args.kind, depth, args.repeats)
        row["ratio"] = row["grad_ms"] / previous if previous else None
        row["us_per_op"] = row["grad_ms"] * 1e3 / max(row["derivative_ops"], 1)
        previous = row["grad_ms"]
        if args.json:
            print(json.dumps(row), flush=True)
            continue
        ratio = f"{row['ratio']:.2f}" if row["ratio"] else "-"
        print(f"{depth:>6} {row['value_ops']:>10} {row['grad_ms']:>11.3f} {ratio:>6} "
              f"{row['derivative_ops']:>10} {row['us_per_op']:>6.2f} {row['drop_ms']:>8.3f} "
              f"{row['drop_ms'] / row['grad_ms']:>9.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

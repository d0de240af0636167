"""Eager forward + backward on the benchmark chains, beside PyTorch when installed.

One line per depth: tenpy_ad forward ms, backward ms, total; PyTorch's (same chain, same
run, float64, one thread) and the ratio ours/PyTorch.  Medians over --repeats.

    python bench/eager_chains.py --kind mul
"""
from __future__ import annotations

import argparse
import json
import sys

import tenpy_ad as tp
from tenpy_ad.models.chains import chain, repeat, start_value

from peers import has_module, load_torch
from timing import median_laps

KINDS = ("mul", "cube", "svd3")


def median_forward_backward(make_leaf, forward, repeats: int) -> tuple[float, float]:
    """Median ms of ``loss = forward(make_leaf())`` and of ``loss.backward()``."""
    def run(laps, _):
        leaf = make_leaf()
        laps.skip()
        loss = forward(leaf)
        laps.lap("forward")
        loss.backward()
        laps.lap("backward")

    ms = median_laps(run, repeats)
    return ms["forward"], ms["backward"]


def time_tenpy(kind: str, depth: int, repeats: int):
    return median_forward_backward(lambda: tp.tensor(start_value(kind), requires_grad=True),
                                   lambda b: chain(kind, b, depth).sum(), repeats)


def torch_layer(kind: str):
    """The layer of chain ``kind`` (tenpy_ad.models.chains) written with ``torch``."""
    torch = load_torch()
    if kind == "mul":
        return lambda y: (y * y) * 0.5
    if kind == "cube":
        return lambda y: (y * y * y) * 0.5
    if kind == "svd3":
        def svd3(y):
            u, s, vh = torch.linalg.svd(y)
            return u * s + vh
        return svd3
    raise ValueError(kind)


def time_torch(kind: str, depth: int, repeats: int):
    torch = load_torch()
    layer = torch_layer(kind)
    return median_forward_backward(
        lambda: torch.tensor(start_value(kind), dtype=torch.float64, requires_grad=True),
        lambda b: repeat(layer, b, depth).sum(), repeats)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kind", choices=KINDS, default="mul")
    parser.add_argument("--depths", default="100,200,400,800,1600")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch column")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    torch_on = has_module("torch") and not args.no_torch
    if not args.json:
        print(f"# eager {args.kind} chain, 3x3 float64, medians of {args.repeats}; "
              f"torch {'on' if torch_on else 'not installed'}")
        print(f"{'n':>6} {'fwd ms':>8} {'bwd ms':>8} {'total':>8} {'us/node':>8}"
              + (f" {'torch fwd':>9} {'torch bwd':>9} {'torch':>8} {'ours/torch':>10}"
                 if torch_on else ""))
    nodes_per_layer = {"mul": 2, "cube": 3, "svd3": 4}[args.kind]
    for depth in [int(d) for d in args.depths.split(",")]:
        fwd, bwd = time_tenpy(args.kind, depth, args.repeats)
        row = {"kind": args.kind, "depth": depth, "fwd_ms": fwd, "bwd_ms": bwd,
               "total_ms": fwd + bwd,
               "us_per_node": (fwd + bwd) * 1e3 / (depth * nodes_per_layer)}
        if torch_on:
            tf, tb = time_torch(args.kind, depth, args.repeats)
            row.update(torch_fwd_ms=tf, torch_bwd_ms=tb, torch_total_ms=tf + tb,
                       ratio=(fwd + bwd) / (tf + tb))
        if args.json:
            print(json.dumps(row), flush=True)
            continue
        line = (f"{depth:>6} {row['fwd_ms']:>8.2f} {row['bwd_ms']:>8.2f} {row['total_ms']:>8.2f} "
                f"{row['us_per_node']:>8.2f}")
        if torch_on:
            line += (f" {row['torch_fwd_ms']:>9.2f} {row['torch_bwd_ms']:>9.2f} "
                     f"{row['torch_total_ms']:>8.2f} {row['ratio']:>10.2f}")
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

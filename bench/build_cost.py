"""What building costs: µs per built op by operand kind, traced and eager, and a deep
chain ``y = y * 1.0000001 - 1e-9`` stage by stage (build, grad, compile, run, free).

Per op: a 3x3 float64 tensor ``y`` meets an operand of each kind -- a tensor (``y * y``),
a Python float, a NumPy scalar, a 0-d array, a small constant array (3x3, writeable),
and ``tp.sin(y)``.  Traced ops build a chain ``y = f(y)`` of ``--calls`` new nodes from an
input of their own; eager ops apply ``f`` ``--calls`` times to one tensor that requires
grad (each call computes and records a tape entry; the results are kept until the lap
ends, as a tape would keep them).  The kinds run interleaved, each first in turn; the
table shows CPU-time medians over ``--repeats``.

The chain: ``--depth`` layers (2 ops each) on a 3x3 input, then ``loss = y.sum()``;
``tp.ad.grad(loss, x)``; ``tp.compile([loss, g])``; one run; dropping graph and program.
CPU-time medians over ``--chain-repeats``; "peak MB" is the growth of the process's
maximum resident set size (``resource.getrusage``, ``ru_maxrss``) during each stage of
the first repeat (later repeats reuse the freed memory, so it is measured once; 0 means
the stage fit in memory the process had already touched).

    python bench/build_cost.py --calls 20000 --depth 1000000
"""
from __future__ import annotations

import argparse
import gc
import resource
import sys

import numpy as np

import tenpy_ad as tp

from timing import Laps, median_laps

SHAPE = (3, 3)


def operand_kinds() -> dict:
    """The op applied per kind: ``f(y)``."""
    small = np.linspace(0.5, 1.5, 9).reshape(SHAPE)         # writeable, cached by bytes
    scalar, zero_d = np.float64(0.5), np.array(0.5)
    return {
        "tensor y*y": lambda y: y * y,
        "float y*0.5": lambda y: y * 0.5,
        "np.float64": lambda y: y * scalar,
        "0-d array": lambda y: y * zero_d,
        "3x3 array": lambda y: y * small,
        "tp.sin": tp.sin,
    }


def _traced_calls(f, x, calls: int):
    y = x
    for _ in range(calls):
        y = f(y)
    return y


def _eager_calls(f, t, calls: int) -> list:
    return [f(t) for _ in range(calls)]


def per_op_us(mode: str, calls: int, repeats: int) -> dict:
    """Median CPU µs per op of each operand kind in ``mode`` ("traced" or "eager")."""
    kinds = operand_kinds()
    names = list(kinds)
    start = np.linspace(0.9, 1.1, 9).reshape(SHAPE)

    def run(laps, i):
        order = names[i % len(names):] + names[:i % len(names)]     # each goes first in turn
        kept = []
        gc.collect()
        laps.skip()
        for name in order:
            if mode == "traced":
                kept.append(_traced_calls(kinds[name], tp.input(SHAPE), calls))
            else:
                kept.append(_eager_calls(kinds[name], tp.tensor(start, requires_grad=True),
                                         calls))
            laps.lap(name)
        del kept

    cpu_ms: dict = {}
    median_laps(run, repeats, cpu=cpu_ms)
    return {name: cpu_ms[name] * 1e3 / calls for name in names}


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024     # KiB on Linux


CHAIN_STAGES = ("build", "grad", "compile", "run", "free")


def chain_stages(depth: int, repeats: int) -> tuple[dict, dict]:
    """CPU-time median ms of each stage of the deep chain, and the peak-memory growth (MB)
    of each stage in the first repeat."""
    value = np.full(SHAPE, 0.5)
    peak: dict = {}

    def run(laps, i):
        gc.collect()
        rss = _maxrss_mb()
        laps.skip()

        def lap(name):
            nonlocal rss
            laps.lap(name)
            if i == 0:
                now = _maxrss_mb()
                peak[name], rss = now - rss, now
                laps.skip()            # getrusage is not part of the stage

        x = tp.input(SHAPE, name="x")
        y = x
        for _ in range(depth):
            y = y * 1.0000001 - 1e-9
        loss = y.sum()
        lap("build")
        g = tp.ad.grad(loss, x)
        lap("grad")
        program = tp.compile([loss, g], inputs=[x])
        lap("compile")
        program(value)
        lap("run")
        del x, y, loss, g, program
        lap("free")

    cpu_ms: dict = {}
    median_laps(run, repeats, cpu=cpu_ms)
    return cpu_ms, peak


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=20000, help="ops per timed lap")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--depth", type=int, default=10**6, help="layers of the deep chain "
                        "(0: skip it)")
    parser.add_argument("--chain-repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"# us per built op, {SHAPE} float64, {args.calls} ops per lap, CPU-time medians "
          f"of {args.repeats} (kinds interleaved); core {tp.core_info()['source_hash']}")
    traced = per_op_us("traced", args.calls, args.repeats)
    eager = per_op_us("eager", args.calls, args.repeats)
    print(f"{'operand':<12} {'traced us':>10} {'eager us':>10}")
    for name in traced:
        print(f"{name:<12} {traced[name]:>10.2f} {eager[name]:>10.2f}", flush=True)
    if args.depth:
        ms, peak = chain_stages(args.depth, args.chain_repeats)
        print(f"# chain y = y * 1.0000001 - 1e-9, depth {args.depth} ({2 * args.depth} ops), "
              f"CPU-time medians of {args.chain_repeats}; peak MB: ru_maxrss growth in the "
              "first repeat")
        print(f"{'stage':<8} {'ms':>10} {'us/layer':>9} {'peak MB':>8}")
        for stage in CHAIN_STAGES:
            print(f"{stage:<8} {ms[stage]:>10.1f} {ms[stage] * 1e3 / args.depth:>9.2f} "
                  f"{peak[stage]:>8.1f}")
        total = sum(ms[stage] for stage in CHAIN_STAGES)
        print(f"{'total':<8} {total:>10.1f} {total * 1e3 / args.depth:>9.2f} "
              f"{sum(peak.values()):>8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

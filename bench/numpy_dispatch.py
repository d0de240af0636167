"""The cost of NumPy's dispatch protocols per call: ``np.exp(t)`` (``__array_ufunc__``)
beside ``tp.exp(t)`` and ``tnp.exp(t)``, and ``np.concatenate([t, a])``
(``__array_function__``) beside ``tnp.concatenate([t, a])``, on small arrays.

One row per operation and mode, in µs per call: ``np.`` through the protocol, the direct
calls, NumPy itself on the ndarray, and the protocol's overhead ``np. - tnp.``.  Eager calls
take a tensor that requires grad (each call computes and records a tape entry); traced calls
build a chain ``y = f(y)`` of new nodes from an input of their own (exp; concatenate grows
the shape, which costs nothing in a graph).  The variants of a row run interleaved, each
first in turn, ``--calls`` calls each; the medians over ``--repeats`` are shown.

    python bench/numpy_dispatch.py --shape 3,3
"""
from __future__ import annotations

import argparse
import gc
import json
import sys

import numpy as np

import tenpy_ad as tp
import tenpy_ad.numpy as tnp

from timing import median_laps


def _exp_variants():
    return {"np.": np.exp, "tp.": tp.exp, "tnp.": tnp.exp}


def _concatenate_variants():
    return {"np.": np.concatenate, "tnp.": tnp.concatenate}


def _eager_calls(f, op: str, tensor, array, calls: int) -> None:
    if op == "exp":
        for _ in range(calls):
            f(tensor)
    else:
        for _ in range(calls):
            f([tensor, array])


def _traced_calls(f, op: str, x, array, calls: int) -> None:
    y = x
    if op == "exp":
        for _ in range(calls):
            y = f(y)
    else:
        for _ in range(calls):
            y = f([y, array])


def per_call_us(op: str, mode: str, shape: tuple, calls: int, repeats: int,
                clock: str = "cpu") -> dict:
    """Median µs per call of each variant of ``op`` in ``mode``, and of NumPy itself, in
    process CPU time (``clock="cpu"``) or wall-clock time (``"wall"``)."""
    variants = _exp_variants() if op == "exp" else _concatenate_variants()
    array = np.linspace(0.1, 0.9, int(np.prod(shape))).reshape(shape)
    names = list(variants) + ["ndarray"]

    def run(laps, i):
        order = names[i % len(names):] + names[:i % len(names)]     # each goes first in turn
        tensor = tp.tensor(array, requires_grad=True)
        inputs = {name: tp.input(shape) for name in names}     # no chain is interned twice
        gc.collect()                   # each repeat starts without the previous one's garbage
        laps.skip()
        for name in order:
            if name == "ndarray":
                _eager_calls(variants["np."], op, array, array, calls)     # NumPy itself
            elif mode == "eager":
                _eager_calls(variants[name], op, tensor, array, calls)
            else:
                _traced_calls(variants[name], op, inputs[name], array, calls)
            laps.lap(name)

    cpu_ms: dict = {}
    wall_ms = median_laps(run, repeats, cpu=cpu_ms)
    ms = cpu_ms if clock == "cpu" else wall_ms
    return {name: value * 1e3 / calls for name, value in ms.items()}


def rows(shape: tuple, calls: int, repeats: int, clock: str) -> list:
    table = []
    for op in ("exp", "concatenate"):
        for mode in ("eager", "traced"):
            us = per_call_us(op, mode, shape, calls, repeats, clock)
            table.append({"op": op, "mode": mode, "np_us": us["np."], "tp_us": us.get("tp."),
                          "tnp_us": us["tnp."], "overhead_us": us["np."] - us["tnp."],
                          "ndarray_us": us["ndarray"]})
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", default="3,3", help="shape of the arrays (default 3,3)")
    parser.add_argument("--calls", type=int, default=1000, help="calls per timed lap")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="process CPU time (default: less disturbed by other jobs on a "
                             "shared machine) or wall-clock time")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    shape = tuple(int(d) for d in args.shape.split(","))
    if not args.json:
        print(f"# np. dispatch per call, {shape} float64, {args.calls} calls, medians of "
              f"{args.repeats} (interleaved), {args.clock} time; core "
              f"{tp.core_info()['source_hash']}")
        print(f"{'op':<12} {'mode':<7} {'np. us':>8} {'tp. us':>8} {'tnp. us':>8} "
              f"{'np.-tnp. us':>11} {'ndarray us':>10}")
    for row in rows(shape, args.calls, args.repeats, args.clock):
        if args.json:
            print(json.dumps(row), flush=True)
            continue
        tp_us = "-" if row["tp_us"] is None else f"{row['tp_us']:.2f}"
        print(f"{row['op']:<12} {row['mode']:<7} {row['np_us']:>8.2f} {tp_us:>8} "
              f"{row['tnp_us']:>8.2f} {row['overhead_us']:>11.2f} {row['ndarray_us']:>10.2f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""In-place writes against their functional forms: µs per write of a tensor that
requires grad (``t[i] = v`` beside ``t = t.at[i].set(v)``, ``t[:, j] += v`` beside
``t = t.at[:, j].add(v)``, ``t += v`` beside ``t = t + v``), eager with and without the
backward pass of a loop of them, and the compiled value and gradient of a program of all
three (``tp.jit(tp.value_and_grad(...))``) written either way.

    python bench/inplace_writes.py [--n 8] [--writes 50] [--repeats 15]

One line per form: median µs per write (over ``--repeats`` rounds of ``--writes``
writes; the two forms alternate round by round so that they share the machine's drift)
and the ratio in-place / functional.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import tenpy_ad as tp

FORMS = {   # name: (in-place write, functional write), each (t, v, k) -> t
    "t[i] = v": (lambda t, v, k: t.__setitem__(k % t.shape[0], v) or t,
                 lambda t, v, k: t.at[k % t.shape[0]].set(v)),
    "t[:, j] += v": (lambda t, v, k: _iadd_column(t, v, k % t.shape[1]),
                     lambda t, v, k: t.at[:, k % t.shape[1]].add(v)),
    "t += v": (lambda t, v, k: _iadd(t, v), lambda t, v, k: t + v),
}


def _iadd_column(t, v, j):
    t[:, j] += v
    return t


def _iadd(t, v):
    t += v
    return t


def _loop(write, n: int, writes: int, backward: bool) -> float:
    """CPU seconds of ``writes`` writes into a fresh ``n x n`` tensor (and the backward
    pass through them)."""
    x = tp.tensor(np.ones((n, n)), requires_grad=True)
    v = tp.tensor(np.linspace(0.0, 1.0, n), requires_grad=True)
    start = time.process_time()
    t = x * 1.0
    for k in range(writes):
        t = write(t, v, k)
    if backward:
        (t * t).sum().backward()
    return time.process_time() - start


def measure(n: int, writes: int, repeats: int, backward: bool) -> dict:
    """Per form: (in-place µs, functional µs) per write, medians."""
    results = {}
    for name, (inplace, functional) in FORMS.items():
        samples = {"inplace": [], "functional": []}
        for r in range(repeats):
            order = (("inplace", inplace), ("functional", functional))
            for label, write in (order if r % 2 == 0 else order[::-1]):
                samples[label].append(_loop(write, n, writes, backward) / writes * 1e6)
        results[name] = (statistics.median(samples["inplace"]),
                         statistics.median(samples["functional"]))
    return results


def _program(forms: int):
    """The value of ``writes`` rounds of the three forms, in place (0) or functional (1)."""
    def program(x, v, writes):
        t = x * 1.0
        for k in range(writes):
            for write in FORMS.values():
                t = write[forms](t, v, k)
        return (t * t).sum()
    return program


def measure_compiled(n: int, writes: int, repeats: int) -> tuple:
    """(in-place µs, functional µs) per write of the compiled value and gradient, medians;
    both programs' results are checked equal first."""
    x, v = np.ones((n, n)), np.linspace(0.0, 1.0, n)
    programs = [tp.jit(tp.value_and_grad(_program(forms), argnums=(0, 1)),
                       static_argnums=2) for forms in (0, 1)]
    first, second = (p(x, v, writes) for p in programs)
    if first[0] != second[0] or any(not np.array_equal(a, b)
                                    for a, b in zip(first[1], second[1])):
        raise AssertionError("the in-place and functional programs differ")
    samples = ([], [])
    for r in range(repeats):
        for k in ((0, 1) if r % 2 == 0 else (1, 0)):
            start = time.process_time()
            programs[k](x, v, writes)
            samples[k].append((time.process_time() - start) / (3 * writes) * 1e6)
    return statistics.median(samples[0]), statistics.median(samples[1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--writes", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    for backward in (False, True):
        print(f"n = {args.n}, {args.writes} writes{' + backward' if backward else ''}")
        print(f"{'form':14s} {'in-place us':>12s} {'functional us':>14s} {'ratio':>6s}")
        for name, (a, b) in measure(args.n, args.writes, args.repeats, backward).items():
            print(f"{name:14s} {a:12.2f} {b:14.2f} {a / b:6.2f}")
    a, b = measure_compiled(args.n, args.writes, args.repeats)
    print(f"n = {args.n}, {args.writes} rounds of the three forms, compiled value and "
          "gradient (tp.jit)")
    print(f"{'all three':14s} {a:12.2f} {b:14.2f} {a / b:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

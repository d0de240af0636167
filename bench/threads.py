"""BLAS threads: the engine's choice (``tp.config.blas_threads = "auto"``) against BLAS
forced to one thread, and the measurements behind the thresholds of ``tenpy_ad.blas``.

    python bench/threads.py                      # the clients, default vs one thread
    python bench/threads.py --crossover          # 1 thread vs all, per kind and size
    python bench/threads.py --switch             # what a switch of the thread count costs

Clients (medians of --repeats, the two settings interleaved in one process):

* ``trg16`` / ``trg32``: TRG value + d/d beta (CompiledTRG, chi = 16 / 32, --steps);
* ``chain-<kind>``: the eager chains of ``tenpy_ad.models.chains`` (3x3), forward + backward;
* ``eigh-<n>``: an eigh-heavy eager client: 8 eighs of n x n symmetric matrices, a loss of
  eigenvalues and eigenvectors, ``.backward()``;
* ``matmul-<n>``: a compiled value + gradient of ``sum(tanh(x @ y) @ y)``, n x n.

"default" is the process as started (OpenBLAS: one thread per CPU) with the engine
choosing; "1 thread" limits every BLAS library of the process to one thread
(``tenpy_ad.runtime.blas_threads(1)``), as the command line and the benchmarks did before
the engine chose.  ``default / 1`` <= 1.15 is the target everywhere.  On a shared machine
the wall clock also measures other jobs: compare the ratios of one run.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import tenpy_ad as tp
from tenpy_ad import runtime

KINDS = ("matmul", "svd", "eigh", "qr", "solve", "matvec")


def _kernel(kind: str, n: int):
    """One library call of ``kind`` on n x n data, as the engine's impls make it."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n))
    b = rng.standard_normal((n, n))
    s = a + a.T
    v = rng.standard_normal((n, 1))
    calls = {"matmul": lambda: np.matmul(a, b),
             "svd": lambda: np.linalg.svd(a),
             "eigh": lambda: np.linalg.eigh(s),
             "qr": lambda: np.linalg.qr(a),
             "solve": lambda: np.linalg.solve(a, b),
             "matvec": lambda: np.matmul(a, v)}
    return calls[kind]


def _interleaved(calls: dict, repeats: int) -> tuple[dict, dict]:
    """Median wall and CPU ms of each ``calls[name]()`` over ``repeats`` rounds, the
    order of the calls alternating from round to round."""
    wall = {name: [] for name in calls}
    cpu = {name: [] for name in calls}
    names = list(calls)
    for r in range(repeats):
        for name in (names if r % 2 == 0 else names[::-1]):
            t0, c0 = time.perf_counter(), time.process_time()
            calls[name]()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    return ({k: statistics.median(v) * 1e3 for k, v in wall.items()},
            {k: statistics.median(v) * 1e3 for k, v in cpu.items()})


def _one_thread(fn):
    """``fn`` as the engine runs a call it gives one thread (switch, call, restore)."""
    return lambda: runtime.call_with_threads(1, fn)


def crossover(kinds, sizes, repeats: int) -> None:
    threads = max(runtime.process_blas_threads())
    print(f"# one library call per kind and size: 1 thread vs {threads} (the process's "
          f"setting), medians of {repeats} interleaved")
    print(f"{'kind':>7} {'n':>5} {'1 thr ms':>10} {f'{threads} thr ms':>10} {'ratio':>6} "
          f"{'cpu 1':>8} {f'cpu {threads}':>8}")
    for kind in kinds:
        for n in sizes:
            call = _kernel(kind, n)
            call()
            reps = repeats if kind == "matmul" or n <= 512 else max(3, repeats // 2)
            wall, cpu = _interleaved({"one": _one_thread(call), "all": call}, reps)
            print(f"{kind:>7} {n:>5} {wall['one']:>10.3f} {wall['all']:>10.3f} "
                  f"{wall['all'] / wall['one']:>6.2f} {cpu['one']:>8.2f} {cpu['all']:>8.2f}",
                  flush=True)


def switch_cost(rounds: int = 100_000) -> None:
    """Microseconds per switch of the engine's thread count and per eager call wrapper."""
    from threadpoolctl import ThreadpoolController
    n = max(runtime.process_blas_threads())
    runtime.enter()
    try:
        t0 = time.perf_counter()
        for _ in range(rounds):
            runtime.switch(1)
            runtime.switch(runtime.PROCESS)
        per_switch = (time.perf_counter() - t0) / (2 * rounds) * 1e6
    finally:
        runtime.leave()
    t0 = time.perf_counter()
    for _ in range(rounds):
        runtime.call_with_threads(1, int)
    per_call = (time.perf_counter() - t0) / rounds * 1e6
    controllers = ThreadpoolController().select(user_api="blas").lib_controllers
    t0 = time.perf_counter()
    for _ in range(rounds // 10):
        for c in controllers:
            c.set_num_threads(1)
        for c in controllers:
            c.set_num_threads(n)
    per_library_api = (time.perf_counter() - t0) / (2 * rounds // 10) * 1e6
    print(f"# {len(controllers)} BLAS libraries")
    print(f"engine switch (all libraries, direct calls)        {per_switch:7.2f} us")
    print(f"eager call with a switch to 1 and back (enter/leave) {per_call:7.2f} us")
    print(f"threadpoolctl set_num_threads (all libraries)       {per_library_api:7.2f} us")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--crossover", action="store_true")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--sizes", default="32,64,128,256,512,1024")
    parser.add_argument("--switch", action="store_true")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    if args.switch:
        switch_cost()
        return 0
    if args.crossover:
        crossover(args.kinds.split(","), [int(s) for s in args.sizes.split(",")],
                  args.repeats)
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""BLAS threads: the engine's choice (``tp.config.blas_threads = "auto"``) against BLAS
forced to one thread, and the measurements behind the thresholds of ``tenpy_ad.blas``.

    python bench/threads.py                      # the clients, default vs one thread
    python bench/threads.py --crossover          # 1 thread vs all, per kind and size
    python bench/threads.py --switch             # what a switch of the thread count costs
    python bench/threads.py --buffers 16,32 [--tune]   # planned buffers vs allocating

Clients (medians of --repeats, the two settings interleaved in one process):

* ``trg16`` / ``trg32``: TRG value + d/d beta (CompiledTRG, chi = 16 / 32, --steps);
* ``chain-<kind>``: the eager chains of ``tenpy_ad.models.chains`` (3x3), forward + backward;
* ``eigh-<n>``: an eigh-heavy eager client: 8 eighs of n x n symmetric matrices, a loss of
  eigenvalues and eigenvectors, ``.backward()``;
* ``matmul-<n>``: a compiled value + gradient of ``sum(tanh(x @ y / n))``, n x n (two
  matrix products: below and above the matmul threshold of ``tenpy_ad.blas``).

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


def _interleaved(variants: dict, repeats: int) -> tuple[dict, dict]:
    """Median wall and CPU ms per variant over ``repeats`` rounds, the order of the
    variants alternating from round to round.  A variant is ``(enter, call, leave)``:
    only ``call()`` is timed."""
    wall = {name: [] for name in variants}
    cpu = {name: [] for name in variants}
    names = list(variants)
    for r in range(repeats):
        for name in (names if r % 2 == 0 else names[::-1]):
            enter, call, leave = variants[name]
            state = enter()
            t0, c0 = time.perf_counter(), time.process_time()
            call()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
            leave(state)
    return ({k: statistics.median(v) * 1e3 for k, v in wall.items()},
            {k: statistics.median(v) * 1e3 for k, v in cpu.items()})


def _as_is(call):
    return (lambda: None, call, lambda state: None)


def _one_thread(call):
    """``call`` as the engine runs a call it gives one thread (switch, call, restore)."""
    return _as_is(lambda: runtime.call_with_threads(1, call))


def _process_limited(call):
    """``call`` with every BLAS library of the process limited to one thread."""
    return (lambda: runtime.limit_blas_threads(1), call, runtime.restore_blas_threads)


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
            wall, cpu = _interleaved({"one": _one_thread(call), "all": _as_is(call)}, reps)
            print(f"{kind:>7} {n:>5} {wall['one']:>10.3f} {wall['all']:>10.3f} "
                  f"{wall['all'] / wall['one']:>6.2f} {cpu['one']:>8.2f} {cpu['all']:>8.2f}",
                  flush=True)


# ------------------------------------------------------------------ clients
# each returns (run, program): the call to time and its compiled program (None: eager)

def trg_client(chi: int, steps: int):
    from tenpy_ad.models.trg import CompiledTRG
    trg = CompiledTRG(chi, steps, second_order=False)
    return (lambda: trg(0.44)), trg.program


def chain_client(kind: str, depth: int = 400):
    from tenpy_ad.models.chains import chain, start_value

    def run():
        b = tp.tensor(start_value(kind), requires_grad=True)
        chain(kind, b, depth).sum().backward()
    return run, None


def eigh_client(n: int, count: int = 8):
    rng = np.random.default_rng(n)
    matrices = [m + m.T for m in rng.standard_normal((count, n, n))]

    def run():
        for m in matrices:
            a = tp.tensor(m, requires_grad=True)
            w, v = tp.linalg.eigh(a)
            ((w * w).sum() + ((v[:, -4:] ** 2) * w[-4:]).sum()).backward()
    return run, None


def matmul_client(n: int):
    x, y = tp.input((n, n), name="x"), tp.input((n, n), name="y")
    loss = tp.tanh(x @ y * (1.0 / n)).sum()
    program = tp.compile([loss, tp.ad.grad(loss, x)], [x, y])
    a, b = np.random.default_rng(n).standard_normal((2, n, n))
    return (lambda: program(a, b)), program


CLIENTS = {"trg16": lambda steps: trg_client(16, steps),
           "trg32": lambda steps: trg_client(32, steps),
           **{f"chain-{k}": (lambda steps, k=k: chain_client(k))
              for k in ("mul", "cube", "svd3")},
           **{f"eigh-{n}": (lambda steps, n=n: eigh_client(n)) for n in (64, 128, 256, 512)},
           **{f"matmul-{n}": (lambda steps, n=n: matmul_client(n)) for n in (1024, 2048)}}


def clients(names, steps: int, repeats: int) -> None:
    threads = max(runtime.process_blas_threads())
    print(f"# tp.config.blas_threads = {tp.config.blas_threads!r} with the process as started "
          f"({threads} BLAS threads) vs every BLAS library limited to 1 thread; medians of "
          f"{repeats} interleaved, TRG with {steps} steps")
    print(f"{'client':>12} {'default ms':>11} {'1 thread ms':>11} {'ratio':>6} "
          f"{'cpu default':>11} {'cpu 1':>8}  steps given the process's threads")
    for name in names:
        call, program = CLIENTS[name](steps)
        call()                                      # warm up (and compile plans)
        wall, cpu = _interleaved({"default": _as_is(call), "one": _process_limited(call)},
                                 repeats)
        print(f"{name:>12} {wall['default']:>11.1f} {wall['one']:>11.1f} "
              f"{wall['default'] / wall['one']:>6.2f} {cpu['default']:>11.1f} "
              f"{cpu['one']:>8.1f}  {_threaded_steps(program)}", flush=True)


def _threaded_steps(program) -> str:
    """How many of a compiled client's BLAS steps "auto" gives the process's threads."""
    if program is None:
        return "- (eager)"
    listed = program.blas_threads()
    return f"{sum(1 for *_, n in listed if n == runtime.PROCESS)} of {len(listed)}"


def buffers(chis, steps: int, repeats: int, tune: bool) -> None:
    """TRG value + d/d beta per beta with the memory plan and without, interleaved: wall
    ms, CPU ms and minor page faults per run; ``tune`` applies runtime.tune_allocator()
    first (it cannot be undone in a process: compare two runs)."""
    import resource
    from tenpy_ad.models.trg import trg_lnz
    tuned = runtime.tune_allocator() if tune else False
    print(f"# TRG value + d/d beta, {steps} steps, planned buffers vs allocating; "
          f"allocator tuned: {'yes' if tuned else 'no'}; medians of {repeats} interleaved")
    print(f"{'chi':>4} {'variant':>9} {'ms':>9} {'cpu ms':>9} {'faults':>9} {'MB planned':>11}")
    for chi in chis:
        beta = tp.input((), name="beta")
        lnz = trg_lnz(beta, chi, steps)
        outputs = [lnz, tp.ad.grad(lnz, beta)]
        programs = {"planned": tp.compile(outputs, [beta]),
                    "allocate": tp.compile(outputs, [beta], reuse_buffers=False)}
        faults = {name: [] for name in programs}

        def run(name):
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            programs[name](np.float64(0.44))
            faults[name].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)

        for name in programs:
            run(name)                                # warm up: first-call allocations
        wall, cpu = _interleaved({name: _as_is(lambda name=name: run(name))
                                  for name in programs}, repeats)
        for name, program in programs.items():
            print(f"{chi:>4} {name:>9} {wall[name]:>9.1f} {cpu[name]:>9.1f} "
                  f"{statistics.median(faults[name][1:]):>9.0f} "
                  f"{program.memory_plan.nbytes / 2 ** 20:>11.1f}", flush=True)


def switch_cost(rounds: int = 200_000) -> None:
    """Microseconds per switch of the thread count, per eager call with a switch, and the
    same through threadpoolctl's controller methods."""
    from threadpoolctl import ThreadpoolController
    control = runtime.blas_control()
    n = max(runtime.process_blas_threads())
    control.enter_call()
    try:
        t0 = time.perf_counter()
        for _ in range(rounds):
            control.switch_to(1)
            control.switch_to(runtime.PROCESS)
        per_switch = (time.perf_counter() - t0) / (2 * rounds) * 1e6
    finally:
        control.leave_call()
    t0 = time.perf_counter()
    for _ in range(rounds):
        control.call(1, int)
    per_call = (time.perf_counter() - t0) / rounds * 1e6
    t0 = time.perf_counter()
    for _ in range(rounds):
        control.call(None, int)
    per_plain_call = (time.perf_counter() - t0) / rounds * 1e6
    controllers = ThreadpoolController().select(user_api="blas").lib_controllers
    t0 = time.perf_counter()
    for _ in range(rounds // 10):
        for c in controllers:
            c.set_num_threads(1)
        for c in controllers:
            c.set_num_threads(n)
    per_library_api = (time.perf_counter() - t0) / (2 * rounds // 10) * 1e6
    print(f"# {control.n_libraries} BLAS libraries, {rounds} rounds")
    print(f"switch of every library (compiled, direct calls)       {per_switch:7.3f} us")
    print(f"eager call with a switch to 1 and back, minus the call  "
          f"{per_call - per_plain_call:7.3f} us")
    print(f"the same switch through threadpoolctl's set_num_threads {per_library_api:7.3f} us")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", default=",".join(CLIENTS),
                        help=f"comma-separated, of {', '.join(CLIENTS)}")
    parser.add_argument("--steps", type=int, default=20, help="TRG steps (default 20)")
    parser.add_argument("--crossover", action="store_true")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--sizes", default="32,64,128,256,512,1024")
    parser.add_argument("--switch", action="store_true")
    parser.add_argument("--buffers", metavar="CHIS",
                        help="TRG with and without planned buffers at these chi (e.g. 16,32)")
    parser.add_argument("--tune", action="store_true",
                        help="with --buffers: apply runtime.tune_allocator() first")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    if args.switch:
        switch_cost()
        return 0
    if args.buffers:
        buffers([int(c) for c in args.buffers.split(",")], args.steps, args.repeats,
                args.tune)
        return 0
    if args.crossover:
        crossover(args.kinds.split(","), [int(s) for s in args.sizes.split(",")],
                  args.repeats)
        return 0
    clients(args.clients.split(","), args.steps, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Small-op programs: value and gradient of a 60-step power iteration on the transfer
matrix of a uniform MPS (einsums of D x 2 x D tensors, each step normalised), the kind of
loop whose cost is the engine's per-operation overhead rather than BLAS.

    python bench/small_ops.py [--dims 8,16] [--steps 60] [--repeats 31] [--block 20]

One line per D and engine: median ms of one value+grad call, and the ratio to JAX's
``jax.jit(jax.value_and_grad)`` (when JAX is installed).  Ours: ``tp.jit`` of
``tp.value_and_grad`` (a compiled program), a hand-compiled traced program
(``tp.ad.grad`` + ``tp.compile``), the same compiled without the core's C kernels
(``no-C``: every step NumPy's call, ``tenpy_ad.compiler.small_kernels.ENABLED = False``), and
eager ``.backward()``; PyTorch eager beside.  BLAS runs single-threaded for every engine
(threadpoolctl; JAX's XLA with one thread).

Each engine is timed on blocks of ``--block`` consecutive calls after one untimed call
(per-call time: the block's time / its calls; median over ``--repeats`` rounds, each round
one block per engine, the engines' order rotated from round to round so they share the
machine's drift).  Single calls interleaved engine by engine would time every call cold:
JAX's runtime hands each call to a worker thread that has gone to sleep in between (its
first call after another engine ran takes 1.4 ms here, the next ones 0.25-0.3 ms) and the
caches hold another engine's data, which is not how anyone runs a jitted function (timed
that way JAX took 3-4x its time and our ratio to it looked 2-3x better than it is).
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

import tenpy_ad as tp
from tenpy_ad.compiler import small_kernels
from peers import has_module, load_jax, load_torch
from timing import median_laps


def power_iteration_loss(a, steps: int, xp):
    """``-log`` of the norm growth of the left fixed point of the MPS transfer matrix,
    after ``steps`` normalised applications (``xp``: tenpy_ad.numpy, jax.numpy or torch)."""
    d = a.shape[0]
    left = xp.eye(d) if xp is not None else None
    total = 0.0
    for _ in range(steps):
        left = xp.einsum("ab,asc,bsd->cd", left, a, a)
        norm = xp.sqrt(xp.sum(left * left))
        total = total + xp.log(norm)
        left = left / norm
    return -total / steps


def problem(d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((d, 2, d)) / np.sqrt(2 * d)


def ours(d: int, steps: int) -> dict:
    import tenpy_ad.numpy as tnp
    a0 = problem(d)
    jitted = tp.jit(tp.value_and_grad(lambda a: power_iteration_loss(a, steps, tnp)))
    x = tp.input(a0.shape, name="a")
    loss = power_iteration_loss(x, steps, tnp)
    outputs = [loss, tp.ad.grad(loss, x)]
    program = tp.compile(outputs, inputs=[x])
    small_kernels.ENABLED = False
    try:
        numpy_steps = tp.compile(outputs, inputs=[x])
    finally:
        small_kernels.ENABLED = True

    def eager():
        a = tp.tensor(a0, requires_grad=True)
        power_iteration_loss(a, steps, tnp).backward()
        return a.grad

    return {"tp.jit": lambda: jitted(a0), "compiled": lambda: program(a0),
            "no-C": lambda: numpy_steps(a0), "eager": eager,
            "_instructions": program.n_instructions}


def jax_runner(d: int, steps: int):
    if not has_module("jax"):
        return None
    jax = load_jax()
    import jax.numpy as jnp
    a0 = jnp.asarray(problem(d))
    fn = jax.jit(jax.value_and_grad(lambda a: power_iteration_loss(a, steps, jnp)))
    fn(a0)[1].block_until_ready()
    return lambda: fn(a0)[1].block_until_ready()


def torch_runner(d: int, steps: int):
    if not has_module("torch"):
        return None
    torch = load_torch()
    a0 = problem(d)

    class TorchNumpy:                     # the few names the loss uses
        eye = staticmethod(lambda n: torch.eye(n, dtype=torch.float64))
        einsum = staticmethod(torch.einsum)
        sqrt, sum, log = torch.sqrt, torch.sum, torch.log

    def run():
        a = torch.tensor(a0, requires_grad=True)
        power_iteration_loss(a, steps, TorchNumpy).backward()
        return a.grad
    return run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dims", default="8,16")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--block", type=int, default=20, help="consecutive calls timed "
                        "together (per-call time = block time / block)")
    parser.add_argument("--no-peers", action="store_true")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits
    threadpool_limits(1)
    print(f"# power iteration, {args.steps} steps: value+grad, median ms per call of "
          f"{args.repeats} blocks of {args.block} calls")
    print(f"{'D':>3} {'engine':>10} {'ms':>9} {'/jax':>6}  instructions")
    for d in (int(v) for v in args.dims.split(",")):
        runners = ours(d, args.steps)
        instructions = runners.pop("_instructions")
        if not args.no_peers:
            for name, make in (("jax.jit", jax_runner), ("torch", torch_runner)):
                run = make(d, args.steps)
                if run is not None:
                    runners[name] = run
        for run in runners.values():
            run()                                  # warm-up: traces, compiles, caches
        items = list(runners.items())

        def one_round(laps, i):
            for name, run in items[i % len(items):] + items[:i % len(items)]:
                run()                              # untimed: wakes the engine's threads
                laps.skip()
                for _ in range(args.block):
                    run()
                laps.lap(name)
        medians = {name: ms / args.block
                   for name, ms in median_laps(one_round, args.repeats).items()}
        reference = medians.get("jax.jit")
        for name, ms in medians.items():
            ratio = f"{ms / reference:6.2f}" if reference else "     -"
            extra = f"  {instructions}" if name == "compiled" else ""
            print(f"{d:>3} {name:>10} {ms:9.3f} {ratio}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

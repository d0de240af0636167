"""TRG (2D Ising, tenpy_ad.models.trg) with whole-graph AD, per number of steps, beside JAX.

One line per step count: kept dimension, build / ad.grad / drop / compile / run times (ms),
value ops, derivative ops and d(lnZ/N)/d beta.  Then a side-by-side summary at
--compare-steps (medians over --repeats, interleaved in one run): the NumPy forward pass,
eager forward and backward, the compiled value+grad program, and JAX's jitted
value_and_grad with its make_jaxpr / lower / compile times.  --peak-memory reports the
peak traced memory of a compiled run with and without per-step checkpointing.

BLAS runs single-threaded for both engines (tenpy_ad.runtime; --threads to change);
--tune keeps large freed blocks in the heap (runtime.tune_allocator).

    python bench/trg_ad_steps.py --max-steps 40
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
import tracemalloc

import tenpy_ad as tp
from tenpy_ad.introspection import graph_nodes, table_sizes
from tenpy_ad.models.trg import ks_rule, trg_lnz
from tenpy_ad.runtime import limit_blas_threads, tune_allocator

from peers import has_module
from timing import Laps, median_laps


def steps_row(chi: int, steps: int, beta: float) -> dict:
    ks = ks_rule(chi, steps)
    gc.collect()
    laps = Laps()
    b = tp.input((), name="beta")
    lnz = trg_lnz(b, chi, steps, ks=ks)
    laps.lap("build")
    before = table_sizes()["metadata_rows"]
    g = tp.ad.grad(lnz, b)
    laps.lap("grad")
    derivative_ops = table_sizes()["metadata_rows"] - before
    program = tp.compile([lnz, g], inputs=[b])
    laps.lap("compile")
    value, grad = program(beta)
    laps.lap("run")
    value_ops = len(graph_nodes([lnz]))
    laps.skip()
    del g
    laps.lap("drop")
    return {"steps": steps, "k": ks[-1], **{f"{k}_ms": v for k, v in laps.ms.items()},
            "value_ops": value_ops, "derivative_ops": derivative_ops,
            "lnz": float(value), "dlnz": float(grad)}


def compare(chi: int, steps: int, beta: float, repeats: int, use_jax: bool) -> dict:
    ks = ks_rule(chi, steps)
    b = tp.input((), name="beta")
    lnz = trg_lnz(b, chi, steps, ks=ks)
    program = tp.compile([lnz, tp.ad.grad(lnz, b)], inputs=[b])
    program(beta)
    jax_run = jax_times = None
    if use_jax:
        import trg_jax
        jax_times, jax_run = trg_jax.build_timed(ks, beta)

    def interleaved(laps, i):
        x = beta + 1e-3 * i
        laps.skip()
        trg_lnz(x, chi, steps, ks=ks)
        laps.lap("numpy_forward")
        e = tp.tensor(x, requires_grad=True)
        loss = trg_lnz(e, chi, steps, ks=ks)
        laps.lap("eager_forward")
        loss.backward()
        laps.lap("eager_backward")
        program(x)
        laps.lap("compiled_value_grad")
        if jax_run is not None:
            jax_run(x)
            laps.lap("jax_value_grad")

    result = median_laps(interleaved, repeats)
    result["compiled_over_numpy_forward"] = (result["compiled_value_grad"]
                                             / result["numpy_forward"])
    result["eager_backward_over_forward"] = (result["eager_backward"]
                                             / result["eager_forward"])
    if jax_run is not None:
        result["compiled_over_jax"] = result["compiled_value_grad"] / result["jax_value_grad"]
        result.update({f"jax_{k}_ms": v for k, v in jax_times.items()})
    return result


def peak_memory(chi: int, steps: int, beta: float) -> dict:
    ks = ks_rule(chi, steps)
    result = {}
    for checkpointed in (False, True):
        b = tp.input((), name="beta")
        lnz = trg_lnz(b, chi, steps, ks=ks, checkpoint=checkpointed)
        program = tp.compile([lnz, tp.ad.grad(lnz, b)], inputs=[b])
        gc.collect()
        tracemalloc.start()
        value, grad = program(beta)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        key = "checkpoint" if checkpointed else "plain"
        result[f"{key}_peak_MB"] = peak / 2**20
        result[f"{key}_grad"] = float(grad)
        del program, lnz, b
    result["grad_difference"] = abs(result["plain_grad"] - result["checkpoint_grad"])
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chi", type=int, default=16)
    parser.add_argument("--max-steps", type=int, default=40)
    parser.add_argument("--beta", type=float, default=0.3)
    parser.add_argument("--compare-steps", type=int, default=20,
                        help="steps for the side-by-side summary (0 skips it)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-jax", action="store_true")
    parser.add_argument("--peak-memory", action="store_true",
                        help="also measure peak memory with and without checkpoint "
                             "(chi = 32 by default: slow)")
    parser.add_argument("--memory-chi", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    parser.add_argument("--tune", action="store_true",
                        help="keep large freed blocks in the heap (runtime.tune_allocator)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    limit_blas_threads(args.threads)
    tuned = tune_allocator() if args.tune else False
    use_jax = has_module("jax") and not args.no_jax
    out = (lambda row: print(json.dumps(row), flush=True)) if args.json else None
    if not args.json:
        print(f"# TRG chi={args.chi} beta={args.beta}; BLAS threads {args.threads}, "
              f"allocator tuned: {tuned}; core {tp.core_info()['source_hash']}")
        print(f"{'steps':>5} {'k':>3} {'build':>7} {'grad':>7} {'drop':>6} {'compile':>8} "
              f"{'run':>8} {'value ops':>9} {'deriv ops':>9} {'d(lnZ/N)/dbeta':>18}")
    for steps in range(1, args.max_steps + 1):
        row = steps_row(args.chi, steps, args.beta)
        if out:
            out(row)
            continue
        print(f"{steps:>5} {row['k']:>3} {row['build_ms']:>7.1f} {row['grad_ms']:>7.1f} "
              f"{row['drop_ms']:>6.1f} {row['compile_ms']:>8.1f} {row['run_ms']:>8.1f} "
              f"{row['value_ops']:>9} {row['derivative_ops']:>9} {row['dlnz']:>18.15f}",
              flush=True)
    if args.compare_steps:
        summary = compare(args.chi, args.compare_steps, args.beta, args.repeats, use_jax)
        summary["steps"] = args.compare_steps
        if out:
            out({"summary": summary})
        else:
            print(f"\n# side by side at {args.compare_steps} steps (medians of {args.repeats}, "
                  "ms)")
            for key, value in summary.items():
                print(f"  {key:32} {value:10.3f}")
    if args.peak_memory:
        memory = peak_memory(args.memory_chi, args.compare_steps or 20, args.beta)
        if out:
            out({"peak_memory": memory})
        else:
            print(f"\n# peak traced memory of one compiled value+grad run, chi="
                  f"{args.memory_chi}")
            for key, value in memory.items():
                print(f"  {key:32} {value:.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Command line: ``python -m tenpy_ad [trg] ...`` and ``python -m tenpy_ad blowup ...``.

``trg`` (the default) computes lnZ/N, the energy u = -d(lnZ/N)/d beta and the specific
heat c = beta^2 d^2(lnZ/N)/d beta^2 of the 2D Ising model by TRG with whole-graph traced AD
(built once, compiled once, run per beta), beside Onsager's exact values, and prints what
each stage cost.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time


def _trg_parser(subparsers):
    p = subparsers.add_parser("trg", help="TRG for the 2D Ising model (the default)",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    _trg_arguments(p)
    return p


def _trg_arguments(p):
    from tenpy_ad.models.onsager import BETA_C
    p.add_argument("--beta", type=float, default=BETA_C,
                   help=f"inverse temperature (default beta_c = {BETA_C:.6f})")
    p.add_argument("--chi", type=int, default=16, help="bond dimension (default 16)")
    p.add_argument("--steps", type=int, default=20,
                   help="RG steps; the lattice has 2^steps spins (default 20)")
    p.add_argument("--betas", metavar="START:STOP:NUM",
                   help="sweep NUM betas from START to STOP (inclusive) with a progress bar")
    p.add_argument("--plot", metavar="FILE", help="PNG of u(beta) and c(beta) against Onsager "
                   "(needs matplotlib: pip install 'tenpy_ad[plot]')")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--checkpoint", action="store_true",
                   help="recompute each RG step in the backward pass instead of storing it")
    p.add_argument("--threads", metavar="N|auto", default=None,
                   help="BLAS threads of the engine's calls: tp.config.blas_threads (default: "
                        "$TENPY_AD_BLAS_THREADS, else 'auto', chosen per call by size)")
    p.add_argument("--workers", type=int, default=0,
                   help="spread a sweep over this many processes (default: this one)")


def _parse_betas(text: str) -> list:
    try:
        start, stop, num = text.split(":")
        start, stop, num = float(start), float(stop), int(num)
    except ValueError:
        raise SystemExit(f"--betas: expected START:STOP:NUM, got {text!r}") from None
    if num < 1:
        raise SystemExit("--betas: NUM must be >= 1")
    if num == 1:
        return [start]
    return [start + (stop - start) * i / (num - 1) for i in range(num)]


def _progress(total: int):
    try:
        from tqdm import tqdm
    except ImportError:
        def report(done, n):
            print(f"\r  {done}/{n} betas", end="" if done < n else "\n", file=sys.stderr,
                  flush=True)
        return report, None
    bar = tqdm(total=total, unit="beta", file=sys.stderr)

    def report(done, n):
        bar.update(done - bar.n)
    return report, bar


def _fmt(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value: .15f}"


def _set_threads(value) -> None:
    """``--threads``: tp.config.blas_threads here, and the environment variable for any
    worker processes."""
    import os
    import tenpy_ad as tp
    from tenpy_ad.config import ENVIRONMENT_VARIABLE
    from tenpy_ad.errors import ArgumentError
    if value is None:
        return
    try:
        tp.config.blas_threads = value
    except ArgumentError as error:
        raise SystemExit(f"--threads: {error}") from None
    os.environ[ENVIRONMENT_VARIABLE] = str(tp.config.blas_threads)


def run_trg(args) -> int:
    from tenpy_ad.runtime import tune_allocator
    _set_threads(args.threads)
    tune_allocator()
    from tenpy_ad.errors import TenpyAdError
    from tenpy_ad.models import onsager
    from tenpy_ad.models.trg import CompiledTRG, observables, sweep
    try:
        t0 = time.perf_counter()
        compiled = CompiledTRG(args.chi, args.steps, checkpoint=args.checkpoint)
        setup_ms = (time.perf_counter() - t0) * 1e3
        if args.betas:
            betas = _parse_betas(args.betas)
        else:
            betas = [args.beta]
        for beta in betas:
            if not (math.isfinite(beta) and beta > 0):
                raise SystemExit(f"error: beta must be a finite number > 0, got {beta}")
    except (ValueError, TenpyAdError) as error:
        raise SystemExit(f"error: {error}") from None
    run_times = []
    if args.betas:
        report, bar = _progress(len(betas))
        if args.workers > 0:
            from concurrent.futures import ProcessPoolExecutor
            with ProcessPoolExecutor(args.workers) as pool:
                t0 = time.perf_counter()
                rows = sweep(betas, args.chi, args.steps, executor=pool, ks=compiled.ks,
                             progress=report)
                run_times.append((time.perf_counter() - t0) / len(betas))
        else:
            rows = []
            for i, beta in enumerate(betas):
                t0 = time.perf_counter()
                rows.append(observables(beta, compiled(beta)))
                run_times.append(time.perf_counter() - t0)
                report(i + 1, len(betas))
        if bar is not None:
            bar.close()
    else:
        t0 = time.perf_counter()
        rows = [observables(betas[0], compiled(betas[0]))]
        run_times.append(time.perf_counter() - t0)
    for row in rows:
        beta = row["beta"]
        row["onsager"] = {"lnz": onsager.lnz(beta), "u": onsager.energy(beta),
                          "c": onsager.specific_heat(beta)}
    run_ms = 1e3 * sorted(run_times)[len(run_times) // 2]
    cost = dict(compiled.timings, setup_total=setup_ms, run_per_beta=run_ms,
                value_ops=compiled.value_ops, total_ops=compiled.total_ops)
    if args.json:
        print(json.dumps({"chi": args.chi, "steps": args.steps, "ks": compiled.ks,
                          "results": rows, "cost_ms": cost}, indent=1, default=float))
    else:
        _print_table(args, compiled, rows, cost)
    if args.plot:
        _plot(args.plot, rows, args)
    return 0


def _print_table(args, compiled, rows, cost):
    from tenpy_ad.models.onsager import BETA_C
    ks = compiled.ks
    shown = ks if len(ks) <= 8 else ks[:6] + ["..."]
    print(f"TRG, 2D Ising (J = 1): chi = {args.chi}, steps = {args.steps} "
          f"(N = 2^{args.steps} spins), ks = {shown}")
    for row in rows:
        beta = row["beta"]
        tag = " (beta_c)" if abs(beta - BETA_C) < 1e-12 else ""
        print(f"\nbeta = {beta:.12g}{tag}")
        print(f"  {'':6} {'TRG + AD':>20} {'Onsager':>20} {'error':>10}")
        for key, name in (("lnz", "lnZ/N"), ("u", "u"), ("c", "c")):
            ours, exact = row[key], row["onsager"][key]
            error = "-" if math.isinf(exact) else f"{abs(ours - exact):.2e}"
            print(f"  {name:6} {_fmt(ours):>20} {_fmt(exact):>20} {error:>10}")
    print(f"\ncost: build {cost['build']:.1f} ms, grad transform {cost['grad']:.1f} ms "
          f"(+ {cost['grad2']:.1f} ms for the second derivative), compile "
          f"{cost['compile']:.1f} ms; run {cost['run_per_beta']:.0f} ms per beta "
          f"(value + first + second derivative)")
    print(f"graph: {cost['value_ops']} value ops, {cost['total_ops']} ops with both "
          "derivatives (the transforms are linear in graph size)")


def _plot(path, rows, args):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install 'tenpy_ad[plot]'") from None
    import numpy as np
    from tenpy_ad.models import onsager
    betas = [r["beta"] for r in rows]
    fine = np.linspace(min(betas), max(betas), 400)
    fig, (ax_u, ax_c) = plt.subplots(1, 2, figsize=(10, 4))
    ax_u.plot(fine, [onsager.energy(b) for b in fine], "k-", lw=1, label="Onsager")
    ax_u.plot(betas, [r["u"] for r in rows], "o", ms=4, label=f"TRG chi={args.chi}")
    ax_u.set_xlabel("beta"); ax_u.set_ylabel("u = -d lnZ/N / d beta"); ax_u.legend()
    exact_c = [onsager.specific_heat(b) for b in fine]
    ax_c.plot(fine, np.minimum(exact_c, 10), "k-", lw=1, label="Onsager")
    ax_c.plot(betas, [r["c"] for r in rows], "o", ms=4, label=f"TRG chi={args.chi}")
    ax_c.set_xlabel("beta"); ax_c.set_ylabel("c = beta^2 d^2 lnZ/N / d beta^2"); ax_c.legend()
    fig.suptitle(f"2D Ising by TRG with whole-graph AD ({args.steps} steps)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}", file=sys.stderr)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m tenpy_ad",
                                     description="tenpy_ad command line")
    subparsers = parser.add_subparsers(dest="command")
    _trg_parser(subparsers)
    blowup = subparsers.add_parser("blowup", help="grad-transform cost versus depth")
    from tenpy_ad.blowup import add_arguments
    add_arguments(blowup)
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv = ["trg"] + argv
    args = parser.parse_args(argv)
    if args.command == "blowup":
        from tenpy_ad.blowup import run
        return run(args)
    return run_trg(args)

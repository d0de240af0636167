"""The project's picture: traced ``ad.grad`` cost versus depth, beside the peers.

``python -m tenpy_ad blowup --kind mul [--plot FILE]`` (also ``bench/ad_blowup.py``) prints
one line per depth: value ops, the median grad-transform time, its ratio to the previous
depth, derivative ops, µs per derivative op, the drop time and drop/transform — and, when
JAX is installed, ``jax.make_jaxpr(jax.grad(f))`` on the same chain in the same run.

The peer tenferro-rs 0.8.0 was measured elsewhere (DESIGN.md §1, M2 Max): its transform grew
x2 per layer on ``mul`` (2328 ms at n = 25), x3 on ``svd3`` (2553 ms at n = 15) and on
``cube`` (3219 ms at n = 16).  The plot draws those published points and their growth law.
"""
from __future__ import annotations

import gc
import json
import statistics
import sys
import time

DEPTHS = [10, 25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200]

#: tenferro-rs 0.8.0 ``ad.grad`` as published (depth, ms, growth factor per layer)
TENFERRO = {"mul": (25, 2328.0, 2.0), "svd3": (15, 2553.0, 3.0), "cube": (16, 3219.0, 3.0)}


def add_arguments(parser) -> None:
    from tenpy_ad.models.chains import LAYERS
    parser.add_argument("--kind", choices=sorted(LAYERS), default="mul",
                        help="chain (DESIGN.md §5); default mul")
    parser.add_argument("--max-depth", type=int, default=12800)
    parser.add_argument("--repeats", type=int, default=5, help="timings per depth (median)")
    parser.add_argument("--jax", choices=("auto", "off"), default="auto",
                        help="measure jax.make_jaxpr(grad) beside (when installed)")
    parser.add_argument("--jax-max-depth", type=int, default=1600,
                        help="deepest chain traced with JAX (it costs ~0.1 ms per equation)")
    parser.add_argument("--jax-compile-max-depth", type=int, default=200,
                        help="deepest chain also lowered and compiled by XLA")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--plot", metavar="FILE", help="log-scale PNG of the table")


def measure(kind: str, depth: int, repeats: int) -> dict:
    """Build the chain once; time ``tp.ad.grad`` and dropping its result ``repeats`` times."""
    import tenpy_ad as tp
    from tenpy_ad._compiled import _core
    from tenpy_ad.models.chains import build_chain

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
    grad_ms = statistics.median(transform) * 1e3
    return {"kind": kind, "depth": depth, "value_ops": value_ops, "grad_ms": grad_ms,
            "derivative_ops": derivative_ops,
            "us_per_op": grad_ms * 1e3 / max(derivative_ops, 1),
            "drop_ms": statistics.median(drop) * 1e3}


def jax_layer(kind: str):
    import jax.numpy as jnp

    def svd(y):
        return jnp.linalg.svd(y, full_matrices=False)

    layers = {
        "mul": lambda y: (y * y) * 0.5,
        "cube": lambda y: (y * y * y) * 0.5,
        "ladder": lambda y: jnp.tanh(y * y),
        "svd1": lambda y: svd(y)[0] + y,
        "svd2": lambda y: (lambda u, s, vt: u * s + y)(*svd(y)),
        "svd3": lambda y: (lambda u, s, vt: u * s + vt)(*svd(y)),
        "qr2": lambda y: (lambda q, r: q + r)(*jnp.linalg.qr(y)),
    }
    return layers[kind]


def measure_jax(kind: str, depth: int, repeats: int, compile_too: bool = False) -> dict:
    """``jax.make_jaxpr(jax.grad(f))`` on the same chain: time and equation count; with
    ``compile_too`` also ``jax.jit(jax.grad(f)).lower(x)`` and ``.compile()``."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    layer = jax_layer(kind)

    from tenpy_ad.models.chains import repeat, start_value

    def f(x):
        return repeat(layer, x, depth).sum()

    x = jnp.asarray(start_value(kind))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jaxpr = jax.make_jaxpr(jax.grad(f))(x)
        times.append(time.perf_counter() - t0)
    equations = len(jaxpr.jaxpr.eqns)
    ms = statistics.median(times) * 1e3
    result = {"jax_ms": ms, "jax_eqns": equations,
              "jax_us_per_eqn": ms * 1e3 / max(equations, 1)}
    if compile_too:
        t0 = time.perf_counter()
        lowered = jax.jit(jax.grad(f)).lower(x)
        t1 = time.perf_counter()
        lowered.compile()
        t2 = time.perf_counter()
        result.update(jax_lower_ms=(t1 - t0) * 1e3, jax_compile_ms=(t2 - t1) * 1e3)
    return result


def run(args) -> int:
    import tenpy_ad as tp

    from tenpy_ad.runtime import has_module
    use_jax = args.jax == "auto" and has_module("jax")
    rows = []
    if not args.json:
        print(f"# tenpy_ad {tp.__version__} (core {tp.core_info()['source_hash']}): "
              f"chain {args.kind}, 3x3 float64, medians of {args.repeats}"
              + ("; JAX make_jaxpr(grad) beside" if use_jax else ""))
        header = (f"{'n':>6} {'value ops':>10} {'ad.grad ms':>11} {'ratio':>6} "
                  f"{'deriv ops':>10} {'us/op':>6} {'drop ms':>8} {'drop/grad':>9}")
        if use_jax:
            header += (f" {'jax ms':>9} {'jax eqns':>9} {'jax/ours':>9} {'jax lower':>9} "
                       f"{'jax compile':>10}")
        print(header)
    previous = None
    for depth in [d for d in DEPTHS if d <= args.max_depth]:
        row = measure(args.kind, depth, args.repeats)
        row["ratio"] = row["grad_ms"] / previous if previous else None
        previous = row["grad_ms"]
        if use_jax and depth <= args.jax_max_depth:
            row.update(measure_jax(args.kind, depth, max(1, min(args.repeats, 3)),
                                   compile_too=depth <= args.jax_compile_max_depth))
            row["jax_over_ours"] = row["jax_ms"] / row["grad_ms"]
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
            continue
        ratio = f"{row['ratio']:.2f}" if row["ratio"] else "-"
        line = (f"{depth:>6} {row['value_ops']:>10} {row['grad_ms']:>11.3f} {ratio:>6} "
                f"{row['derivative_ops']:>10} {row['us_per_op']:>6.2f} {row['drop_ms']:>8.3f} "
                f"{row['drop_ms'] / row['grad_ms']:>9.2f}")
        if "jax_ms" in row:
            line += f" {row['jax_ms']:>9.1f} {row['jax_eqns']:>9} {row['jax_over_ours']:>9.0f}"
            if "jax_compile_ms" in row:
                line += f" {row['jax_lower_ms']:>9.1f} {row['jax_compile_ms']:>10.1f}"
        print(line, flush=True)
    if args.plot:
        plot(args.plot, args.kind, rows)
    return 0


def plot(path: str, kind: str, rows: list) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install 'tenpy_ad[plot]'") from None
    depths = [r["depth"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.loglog(depths, [r["grad_ms"] for r in rows], "o-", label="tenpy_ad ad.grad (measured)")
    jax_rows = [r for r in rows if "jax_ms" in r]
    if jax_rows:
        ax.loglog([r["depth"] for r in jax_rows], [r["jax_ms"] for r in jax_rows], "s-",
                  label="JAX 0.10.2 make_jaxpr(grad) (measured)")
    if kind in TENFERRO:
        n0, ms0, factor = TENFERRO[kind]
        ns = [n for n in range(1, n0 + 8)]
        ax.semilogy(ns, [ms0 * factor ** (n - n0) for n in ns], "r--",
                    label=f"tenferro-rs 0.8.0: x{factor:g} per layer (published law)")
        ax.plot([n0], [ms0], "r*", ms=12, label=f"tenferro-rs 0.8.0 at n={n0} (published)")
    ax.set_xlabel("depth n (layers)")
    ax.set_ylabel("grad transform (ms)")
    ax.set_ylim(1e-3, 1e6)
    ax.set_title(f"Traced ad.grad cost on the '{kind}' chain")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}", file=sys.stderr)


def main(argv=None) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog="ad_blowup", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

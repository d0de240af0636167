"""Traced ``ad.grad`` cost versus depth on the benchmark chains, beside JAX when installed.

The table of ``python -m tenpy_ad blowup`` (see :mod:`tenpy_ad.blowup`) with JAX's
columns on the same chain in the same run: ``jax.make_jaxpr(jax.grad(f))`` ms and its
equation count, JAX/ours, and ``jax.jit(jax.grad(f)).lower`` / ``.compile`` ms up to
--jax-compile-max-depth.

    python bench/ad_blowup.py --kind mul --max-depth 12800
"""
from __future__ import annotations

import argparse
import sys

from tenpy_ad import blowup
from tenpy_ad.models.chains import repeat, start_value

from peers import has_module, load_jax
from timing import Laps, median_laps


def jax_layer(kind: str):
    """The layer of chain ``kind`` (tenpy_ad.models.chains) written with ``jax.numpy``."""
    jnp = load_jax().numpy

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
    jax = load_jax()
    layer = jax_layer(kind)

    def f(x):
        return repeat(layer, x, depth).sum()

    x = jax.numpy.asarray(start_value(kind))
    equations = []

    def trace(laps, _):
        jaxpr = jax.make_jaxpr(jax.grad(f))(x)
        laps.lap("make_jaxpr")
        equations.append(len(jaxpr.jaxpr.eqns))

    ms = median_laps(trace, repeats)["make_jaxpr"]
    result = {"jax_ms": ms, "jax_eqns": equations[-1],
              "jax_us_per_eqn": ms * 1e3 / max(equations[-1], 1)}
    if compile_too:
        laps = Laps()
        lowered = jax.jit(jax.grad(f)).lower(x)
        laps.lap("lower")
        lowered.compile()
        laps.lap("compile")
        result.update(jax_lower_ms=laps.ms["lower"], jax_compile_ms=laps.ms["compile"])
    return result


class JaxColumns:
    """JAX's columns for :func:`tenpy_ad.blowup.run` (a ``blowup.PeerColumns``)."""

    title = "; JAX make_jaxpr(grad) beside"
    header = (f" {'jax ms':>9} {'jax eqns':>9} {'jax/ours':>9} {'jax lower':>9} "
              f"{'jax compile':>10}")
    plot_key = "jax_ms"

    def __init__(self, repeats: int, max_depth: int, compile_max_depth: int):
        self.label = f"JAX {load_jax().__version__} make_jaxpr(grad) (measured)"
        self.repeats = max(1, min(repeats, 3))     # ~0.1 ms per equation: fewer repeats
        self.max_depth, self.compile_max_depth = max_depth, compile_max_depth

    def measure(self, kind: str, depth: int, ours: dict) -> dict:
        if depth > self.max_depth:
            return {}
        row = measure_jax(kind, depth, self.repeats,
                          compile_too=depth <= self.compile_max_depth)
        row["jax_over_ours"] = row["jax_ms"] / ours["grad_ms"]
        return row

    def cells(self, row: dict) -> str:
        if "jax_ms" not in row:
            return ""
        text = f" {row['jax_ms']:>9.1f} {row['jax_eqns']:>9} {row['jax_over_ours']:>9.0f}"
        if "jax_compile_ms" in row:
            text += f" {row['jax_lower_ms']:>9.1f} {row['jax_compile_ms']:>10.1f}"
        return text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="ad_blowup", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    blowup.add_arguments(parser)
    parser.add_argument("--jax", choices=("auto", "off"), default="auto",
                        help="measure jax.make_jaxpr(grad) beside (when installed)")
    parser.add_argument("--jax-max-depth", type=int, default=1600,
                        help="deepest chain traced with JAX (it costs ~0.1 ms per equation)")
    parser.add_argument("--jax-compile-max-depth", type=int, default=200,
                        help="deepest chain also lowered and compiled by XLA")
    args = parser.parse_args(argv)
    peer = None
    if args.jax == "auto" and has_module("jax"):
        peer = JaxColumns(args.repeats, args.jax_max_depth, args.jax_compile_max_depth)
    return blowup.run(args, peer)


if __name__ == "__main__":
    sys.exit(main())

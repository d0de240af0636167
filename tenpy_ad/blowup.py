"""``python -m tenpy_ad blowup``: the traced ``ad.grad`` cost versus chain depth.

One line per depth: value ops, the median grad-transform time, its ratio to the previous
depth, derivative ops, µs per derivative op, the drop time and drop/transform.  ``--plot
FILE`` draws the transform time on log axes with a line proportional to the depth, beside
the growth law published for tenferro-rs 0.8.0, whose transform was exponential in depth
(x2 per layer on ``mul``: 2328 ms at n = 25; x3 on ``svd3``: 2553 ms at n = 15, and on
``cube``: 3219 ms at n = 16; measured by its authors on an M2 Max, not here).

The library measures itself only; ``bench/ad_blowup.py`` prints the same table and figure
with JAX's measured columns and curve beside, through :class:`PeerColumns`.
"""
from __future__ import annotations

import gc
import importlib.util
import statistics
import sys
import time
from typing import Protocol

DEPTHS = [10, 25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200]

#: tenferro-rs 0.8.0 ``ad.grad`` as published (depth, ms, growth factor per layer)
TENFERRO = {"mul": (25, 2328.0, 2.0), "svd3": (15, 2553.0, 3.0), "cube": (16, 3219.0, 3.0)}
TENFERRO_SOURCE = "tenferro-rs 0.8.0 on an M2 Max"


class PeerColumns(Protocol):
    """Another engine's columns beside ours (``bench/ad_blowup.py`` has JAX's)."""

    title: str          # appended to the table's first line
    header: str         # appended to the header line
    label: str          # plot legend of the peer's series
    plot_key: str       # the row key of the peer's plotted time (ms)

    def measure(self, kind: str, depth: int, ours: dict) -> dict:
        """The peer's entries for this row ({} to leave the depth out)."""

    def cells(self, row: dict) -> str:
        """The peer's cells of a printed row ("" when it has none)."""


def add_arguments(parser) -> None:
    """The options of the table (each checked while parsing)."""
    from tenpy_ad.cli.arguments import add_output_options, integer
    from tenpy_ad.models.chains import LAYERS
    parser.add_argument("--kind", choices=sorted(LAYERS), default="mul",
                        help="the chain (tenpy_ad.models.chains); default mul")
    shallowest = integer(DEPTHS[0], why=f" (the shallowest depth measured is {DEPTHS[0]})")
    parser.add_argument("--max-depth", type=shallowest, default=12800, metavar="N",
                        help="deepest chain measured (default 12800)")
    parser.add_argument("--repeats", type=integer(1), default=5, metavar="N",
                        help="timings per depth, of which the median is shown (default 5)")
    add_output_options(parser, "draw the transform time against depth on log axes, with a "
                               "linear guide line")


def measure(kind: str, depth: int, repeats: int) -> dict:
    """Build the chain once; time ``tp.ad.grad`` and dropping its result ``repeats``
    times (medians)."""
    import tenpy_ad as tp
    from tenpy_ad.introspection import graph_nodes, table_sizes
    from tenpy_ad.models.chains import build_chain

    x, loss = build_chain(kind, depth)
    value_ops = len(graph_nodes([loss]))
    transform, drop = [], []
    derivative_ops = 0
    for _ in range(repeats):
        gc.collect()
        before = table_sizes()["metadata_rows"]
        t0 = time.perf_counter()
        g = tp.ad.grad(loss, x)
        t1 = time.perf_counter()
        derivative_ops = table_sizes()["metadata_rows"] - before
        del g
        t2 = time.perf_counter()
        transform.append(t1 - t0)
        drop.append(t2 - t1)
    grad_ms = statistics.median(transform) * 1e3
    return {"kind": kind, "depth": depth, "value_ops": value_ops, "grad_ms": grad_ms,
            "derivative_ops": derivative_ops,
            "us_per_op": grad_ms * 1e3 / max(derivative_ops, 1),
            "drop_ms": statistics.median(drop) * 1e3}


def _print_header(args, peer: PeerColumns | None) -> None:
    import tenpy_ad as tp
    print(f"# tenpy_ad {tp.__version__} (core {tp.core_info()['source_hash']}): "
          f"chain {args.kind}, 3x3 float64, medians of {args.repeats}"
          + (peer.title if peer else ""))
    print(f"{'n':>6} {'value ops':>10} {'ad.grad ms':>11} {'ratio':>6} "
          f"{'deriv ops':>10} {'us/op':>6} {'drop ms':>8} {'drop/grad':>9}"
          + (peer.header if peer else ""))


def _line(row: dict, peer: PeerColumns | None) -> str:
    ratio = f"{row['ratio']:.2f}" if row["ratio"] else "-"
    return (f"{row['depth']:>6} {row['value_ops']:>10} {row['grad_ms']:>11.3f} {ratio:>6} "
            f"{row['derivative_ops']:>10} {row['us_per_op']:>6.2f} {row['drop_ms']:>8.3f} "
            f"{row['drop_ms'] / row['grad_ms']:>9.2f}" + (peer.cells(row) if peer else ""))


def run(args, peer: PeerColumns | None = None) -> int:
    """Print the table for ``args`` (see :func:`add_arguments`), with ``peer``'s columns
    (``--json``: one list of objects at the end)."""
    from tenpy_ad.cli import output
    if not args.json:
        _print_header(args, peer)
    rows, previous = [], None
    for depth in [d for d in DEPTHS if d <= args.max_depth]:
        row = measure(args.kind, depth, args.repeats)
        row["ratio"] = row["grad_ms"] / previous if previous else None
        previous = row["grad_ms"]
        if peer is not None:
            row.update(peer.measure(args.kind, depth, row))
        rows.append(row)
        if not args.json:
            print(_line(row, peer), flush=True)
    if args.json:
        output.print_json(rows)
    if args.plot:
        plot(args.plot, args.kind, rows, peer)
        output.note(f"plot written to {args.plot}")
        if peer is None and importlib.util.find_spec("jax") is not None:
            output.note("JAX is installed: bench/ad_blowup.py --plot FILE (in the source "
                        "tree) draws its measured curve beside ours")
    return 0


def plot(path, kind: str, rows: list, peer: PeerColumns | None = None) -> None:
    """Our transform times (and the peer's) on log axes, beside tenferro-rs's published
    law where it has one for ``kind``."""
    from tenpy_ad import plots
    peers = []
    peer_rows = [r for r in rows if peer is not None and peer.plot_key in r]
    if peer_rows:
        peers.append((peer.label, [r["depth"] for r in peer_rows],
                      [r[peer.plot_key] for r in peer_rows]))
    published = TENFERRO.get(kind)
    plots.blowup_figure(path, kind, rows, peers,
                        None if published is None else (*published, TENFERRO_SOURCE))


def main(argv=None) -> int:
    """``python -m tenpy_ad blowup ...`` (the same command)."""
    from tenpy_ad.cli import main as cli_main
    return cli_main(["blowup", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())

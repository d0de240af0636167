"""What the sub-commands print: tables beside the exact values, one JSON style (a list of
objects), the progress bar of a sweep."""
from __future__ import annotations

import contextlib
import json
import math
import numbers
import sys


def number(value) -> str:
    """A value with 15 decimals (``inf``, ``nan`` and ``-`` for a missing one)."""
    if value is None:
        return "-"
    value = float(value)
    return f"{value: .15f}" if math.isfinite(value) else f"{value:>4}"


def error_text(ours, exact) -> str:
    """``|ours - exact|`` in 3 digits, ``-`` where it is undefined."""
    if ours is None or exact is None:
        return "-"
    error = abs(float(ours) - float(exact))
    return f"{error:.2e}" if math.isfinite(error) else "-"


def observable_block(row: dict, columns: list, ours: str) -> list:
    """Lines ``name  ours  exact  error`` for one beta; ``columns`` are ``(label, key)``
    pairs, the exact value of ``key`` is ``row[key + "_exact"]``."""
    lines = [f"  {'':6} {ours:>20} {'exact':>20} {'error':>10}"]
    for label, key in columns:
        if key in row:
            exact = row.get(key + "_exact")
            lines.append(f"  {label:6} {number(row[key]):>20} {number(exact):>20} "
                         f"{error_text(row[key], exact):>10}")
    return lines


def sweep_table(rows: list, columns: list) -> list:
    """One line per beta: the values, then their errors against the exact ones (a failed
    point's line says it failed)."""
    columns = [(label, key) for label, key in columns if any(key in row for row in rows)]
    header = f"{'beta':>10}" + "".join(f" {label:>18}" for label, _ in columns)
    header += "".join(f" {'err ' + label:>10}" for label, _ in columns)
    lines = [header]
    for row in rows:
        if "error" in row:
            lines.append(f"{row['beta']:>10.6f}  failed (the error is on stderr)")
            continue
        line = f"{row['beta']:>10.6f}" + "".join(
            f" {number(row.get(key)):>18}" for _, key in columns)
        line += "".join(f" {error_text(row.get(key), row.get(key + '_exact')):>10}"
                        for _, key in columns)
        lines.append(line)
    return lines


def print_report(rows: list, columns: list, single: list, exact: str, costs: list) -> None:
    """A run's results after its header: for one beta its block of lines ``single``, for a
    sweep the table of ``rows``; then which exact results they are compared with, and the
    ``costs`` lines."""
    print()
    print("\n".join(single if len(rows) == 1 else sweep_table(rows, columns)))
    print(exact)
    print("\n".join(costs))


def median(rows: list, key: str) -> float:
    """The median of ``row[key]`` over the rows that have it (NaN if none has)."""
    values = sorted(row[key] for row in rows if row.get(key) is not None)
    return values[len(values) // 2] if values else math.nan


def _plain(value):
    """JSON-ready: NumPy scalars as Python numbers, non-finite numbers as None."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return value if math.isfinite(value) else None
    return str(value)


def print_json(rows: list) -> None:
    """The one JSON style of every sub-command: a list of flat objects, one per line."""
    lines = [" " + json.dumps(_plain(row), allow_nan=False) for row in rows]
    print("[\n" + ",\n".join(lines) + "\n]")


@contextlib.contextmanager
def progress(total: int, unit: str = "beta"):
    """A progress bar on stderr for more than one point (tqdm if installed); yields
    ``report(done)``."""
    if total <= 1:
        yield lambda done: None
        return
    try:
        from tqdm import tqdm
    except ImportError:
        def report(done):
            print(f"\r  {done}/{total} {unit}s", end="" if done < total else "\n",
                  file=sys.stderr, flush=True)
        yield report
        return
    with tqdm(total=total, unit=unit, file=sys.stderr) as bar:
        yield lambda done: bar.update(done - bar.n)


def note(message: str) -> None:
    """A remark that is not a result (stderr, so --json output stays parseable)."""
    print(message, file=sys.stderr)

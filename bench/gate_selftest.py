"""Self-test of the regression gate on this machine (``bench/README.md``, "Regression gate").

Runs the documented workflow into a fresh storage directory: a baseline, ``--compares``
compares of the identical code (``TENPY_AD_BENCH_SCALE=1.0``; none may flag anything),
then one compare with ``TENPY_AD_BENCH_SCALE=--scale`` (it must flag at least 80 % of the
gated benchmarks).  Prints each benchmark's drift from the baseline per run (and the
largest drift the minimum and the raw CPU time would have shown) and exits non-zero when
either expectation fails.

    python bench/gate_selftest.py [--compares 5] [--scale 1.5] [--threshold 25]
                                  [--storage DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIELD = "median"
MIN_FLAGGED = 0.8


def run_gate(storage: Path, scale: float, threshold: int | None) -> int:
    """One gate session saved into ``storage``, compared with its first file when
    ``threshold`` is given; returns pytest's exit status."""
    command = [sys.executable, "-m", "pytest", "bench/test_gate.py", "-q",
               f"--benchmark-storage={storage}", "--benchmark-autosave"]
    if threshold is not None:
        command += ["--benchmark-compare=0001",
                    f"--benchmark-compare-fail={FIELD}:{threshold}%"]
    env = dict(os.environ, TENPY_AD_BENCH_SCALE=str(scale))
    print(f"$ TENPY_AD_BENCH_SCALE={scale} python {' '.join(command[1:])}", flush=True)
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    output = (done.stdout.strip() or done.stderr.strip() or "(no output)").splitlines()
    print(output[-1], flush=True)
    return done.returncode


#: what the table shows besides the gated statistic: how each would have drifted
ALTERNATIVES = {"min": lambda bench: bench["stats"]["min"],
                "raw cpu": lambda bench: bench["extra_info"]["workload_cpu_ms"]}


def saved_sessions(storage: Path) -> list[dict[str, dict]]:
    """Per saved session, in order: benchmark name -> its saved record."""
    return [{bench["name"]: bench for bench in json.loads(f.read_text())["benchmarks"]}
            for f in sorted(storage.glob("*/*.json"))]


def drifts(sessions: list[dict[str, dict]], name: str, read) -> list[float]:
    """Percent change of ``read(benchmark)`` from the baseline, per later session."""
    base = read(sessions[0][name])
    return [100 * (read(session[name]) / base - 1) for session in sessions[1:]]


def drift_table(sessions: list[dict[str, dict]], threshold: int):
    """Print per-benchmark drift (%) from the baseline; return the largest identical-code
    drift of the gated statistic and the fraction of benchmarks the scaled run (the last
    session) pushed over the threshold."""
    n_compares = len(sessions) - 2
    print(f"\n{'':43s}{'drift from the baseline':^{8 * n_compares}s} "
          f"{'max|drift| of':^{9 * (1 + len(ALTERNATIVES))}s}".rstrip())
    print(f"{'benchmark':34s} {FIELD:>8s}" + "".join(f"   run{i + 1:<2d}" for i in
          range(n_compares)) + "".join(f" {column:>8s}" for column in [FIELD, *ALTERNATIVES])
          + "   scaled")
    largest, flagged = 0.0, 0
    for name, bench in sessions[0].items():
        *identical, scaled = drifts(sessions, name, lambda b: b["stats"][FIELD])
        worst = max(map(abs, identical))
        others = [max(map(abs, drifts(sessions, name, read)[:-1]))
                  for read in ALTERNATIVES.values()]
        largest = max(largest, worst)
        flagged += scaled > threshold
        print(f"{name:34s} {bench['stats'][FIELD] * 1e3:8.3f}"
              + "".join(f" {d:+6.1f}%" for d in identical)
              + "".join(f" {d:7.1f}%" for d in [worst, *others]) + f"  {scaled:+6.1f}%")
    return largest, flagged / len(sessions[0])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compares", type=int, default=5)
    parser.add_argument("--scale", type=float, default=1.5)
    parser.add_argument("--threshold", type=int, default=25, help="percent, on the median")
    parser.add_argument("--storage", type=Path, help="keep the saved sessions here "
                        "(an empty or new directory; default: a temporary one)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tenpy_ad-gate-") as directory:
        storage = args.storage or Path(directory)
        if any(storage.glob("*/*.json")):
            parser.error(f"{storage} already holds saved sessions; give a new directory")
        run_gate(storage, 1.0, None)
        identical_status = [run_gate(storage, 1.0, args.threshold)
                            for _ in range(args.compares)]
        scaled_status = run_gate(storage, args.scale, args.threshold)
        largest, flagged = drift_table(saved_sessions(storage), args.threshold)
    identical_ok = not any(identical_status)
    scaled_ok = scaled_status != 0 and flagged >= MIN_FLAGGED
    print(f"\nidentical code: exit statuses {identical_status}, largest drift "
          f"{largest:.1f}% (gate: {FIELD} > +{args.threshold}%) -> "
          f"{'ok' if identical_ok else 'FALSE ALARM'}")
    print(f"scale {args.scale}: exit status {scaled_status}, {flagged:.0%} of the benchmarks "
          f"flagged (need >= {MIN_FLAGGED:.0%}) -> {'ok' if scaled_ok else 'MISSED'}")
    return 0 if identical_ok and scaled_ok else 1


if __name__ == "__main__":
    sys.exit(main())

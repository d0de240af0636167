"""Run the Array API standard's test suite (data-apis/array-api-tests) against
``tenpy_ad.array_api`` and print the pass rate, passed / (passed + failed), and the
failures grouped by test function.

    python .ci/array_api_conformance.py [--python PY] [--min-rate 0.95] [--max-examples 20]

The suite is looked for in ``../shared/conformance`` (relative to the repository root;
its README says how it is run); without it the script prints a skip message and exits 0.  ``PY`` (default: this interpreter) must have the suite's
dependencies (the conformance extra: hypothesis>=6.151, ndindex, pytest-timeout,
pytest-json-report).  The folder is copied to a
temporary directory first (the suite writes caches beside itself).  Exit status 1 when
the pass rate is below ``--min-rate`` (the issue's target, 95 %).
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT.parent / "shared" / "conformance"


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter that runs the suite (default: this one)")
    parser.add_argument("--min-rate", type=float, default=0.95,
                        help="fail below this pass rate (default 0.95)")
    parser.add_argument("--max-examples", type=int, default=20)
    return parser.parse_args()


def _run(python: str, suite: Path, max_examples: int) -> str:
    """The suite's output, run in ``suite`` (a copy) the way its README runs it."""
    env = dict(os.environ, ARRAY_API_TESTS_MODULE="tenpy_ad.array_api",
               ARRAY_API_TESTS_VERSION="2024.12")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(suite.parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    command = [python, "-m", "pytest", "array_api_tests", "-p", "noshrink",
               "-p", "no:cacheprovider", "-q", "-rf", "--max-examples", str(max_examples),
               "--derandomize", "--disable-deadline", "--timeout", "60"]
    done = subprocess.run(command, cwd=suite, env=env, capture_output=True, text=True)
    return done.stdout + done.stderr


def _counts(output: str) -> tuple[int, int]:
    """(passed, failed) from pytest's last summary line."""
    summary = output.strip().splitlines()[-1] if output.strip() else ""
    passed = re.search(r"(\d+) passed", summary)
    failed = re.search(r"(\d+) failed", summary)
    if passed is None:
        sys.exit(f"array API conformance: the suite did not run:\n{output[-3000:]}")
    return int(passed.group(1)), int(failed.group(1)) if failed else 0


def _failure_groups(output: str) -> collections.Counter:
    """Failed tests by test function (parametrisations counted together)."""
    names = re.findall(r"^FAILED (\S+?)(?:\[| - |$)", output, flags=re.MULTILINE)
    return collections.Counter(names)


def main() -> int:
    args = _arguments()
    if not SUITE.is_dir():
        print(f"array API conformance: skipped ({SUITE} does not exist)")
        return 0
    with tempfile.TemporaryDirectory() as work:
        copy = Path(work) / "conformance"
        shutil.copytree(SUITE, copy)
        output = _run(args.python, copy / "array-api-tests", args.max_examples)
    passed, failed = _counts(output)
    rate = passed / (passed + failed)
    print(f"array API conformance (2024.12): {passed} passed, {failed} failed: "
          f"{100 * rate:.1f} %")
    for name, count in _failure_groups(output).most_common():
        print(f"  {count:4d}  {name}")
    return 0 if rate >= args.min_rate else 1


if __name__ == "__main__":
    sys.exit(main())

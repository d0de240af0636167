"""The 10^6-deep runs of ``tests/test_deep_graphs.py``: ``tests/scripts/deep_graphs.py``
started in its own interpreter per run (so that a crash is reported as a failure instead
of killing the test session).  ``conftest.py`` starts them with the session's first test, so
they run on the second core while the other tests run, and the depth tests come last."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

DEPTH = 10**6
SCRIPT = pathlib.Path(__file__).parent / "scripts" / "deep_graphs.py"
TEST_FILE = "test_deep_graphs.py"
RUNS = ("traced", "eager", "forward")


class DeepRun:
    """One run of the depth script in a subprocess."""

    def __init__(self, name: str):
        env = dict(os.environ, PYTHONFAULTHANDLER="1")
        self.proc = subprocess.Popen([sys.executable, str(SCRIPT), name, str(DEPTH)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env)
        self._done = None

    def result(self) -> dict:
        """The script's RESULT (waiting for it); fails naming the last stage reached."""
        if self._done is None:
            out, err = self.proc.communicate(timeout=900)
            self._done = (self.proc.returncode, out, err)
        code, out, err = self._done
        stages = [line[6:] for line in out.splitlines() if line.startswith("stage ")]
        results = [line[7:] for line in out.splitlines() if line.startswith("RESULT ")]
        assert code == 0 and results, (
            f"the depth-{DEPTH} run died (exit code {code}) after stage "
            f"{stages[-1] if stages else '(none)'!r}; stderr:\n{err[-3000:]}")
        return json.loads(results[0])

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def start_all() -> dict[str, DeepRun]:
    """All runs at once: the machine has two cores and the traced run dominates."""
    return {name: DeepRun(name) for name in RUNS}

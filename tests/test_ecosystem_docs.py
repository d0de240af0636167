"""docs/ecosystem.md's blocks marked ``python needs=mod,...`` run as written where those
modules are installed (else the test skips, naming them); its plain ``python`` blocks are
run by tests/test_readme.py."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "ecosystem.md"


def marked_blocks(text: str) -> list:
    """``(modules, code)`` of each block fenced as ```` ```python needs=a,b ````."""
    blocks, current = [], None
    for line in text.splitlines(keepends=True):
        fence = line.strip()
        if current is None and fence.startswith("```python needs="):
            current = (fence.split("needs=", 1)[1].split(","), [])
        elif current is not None and fence == "```":
            blocks.append((current[0], "".join(current[1])))
            current = None
        elif current is not None:
            current[1].append(line)
    return blocks


BLOCKS = marked_blocks(PAGE.read_text())


def test_page_has_marked_blocks():
    assert {m for modules, _ in BLOCKS for m in modules} >= {"sklearn", "opt_einsum",
                                                             "quimb"}


@pytest.mark.parametrize("modules, code", BLOCKS,
                         ids=["+".join(modules) for modules, _ in BLOCKS])
def test_marked_block_runs_as_written(modules, code, tmp_path):
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (not installed)")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr

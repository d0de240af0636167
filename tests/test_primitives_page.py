"""``docs/primitives.md`` lists every registered primitive: it is what
``docs/generate_primitives_page.py`` generates from ``tenpy_ad.primitive.PRIMITIVES`` in a
fresh interpreter (the test session registers primitives of its own), so registering a
primitive without regenerating the page fails here, naming the command to run."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT / "docs" / "generate_primitives_page.py"
COMMAND = "python docs/generate_primitives_page.py"


def _run(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def _check_after(setup: str) -> subprocess.CompletedProcess:
    """``generate_primitives_page.py --check`` run after ``setup``, in a new process."""
    return _run(f"import runpy, sys\n{setup}\nsys.argv = ['{GENERATOR.name}', '--check']\n"
                f"runpy.run_path({str(GENERATOR)!r}, run_name='__main__')")


def test_primitives_page_is_up_to_date():
    result = _check_after("")
    assert result.returncode == 0, (
        f"docs/primitives.md is out of date: run {COMMAND}\n{result.stdout}{result.stderr}")


def test_a_new_primitive_makes_the_check_fail_naming_the_command():
    result = _check_after("from tenpy_ad.primitive import primitive\n"
                          "primitive('zz_new', lambda params, x: x, lambda params, x: x)")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "primitives.md is out of date" in result.stdout
    assert f"run {COMMAND}" in result.stdout


def test_the_page_has_one_row_per_primitive_with_its_module():
    """Every primitive the package registers at import has a row naming a module file
    that exists (families per output count, ``checkpoint/<n>``, once)."""
    page = (ROOT / "docs" / "primitives.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([\w/<>]+)` \| `([\w/]+\.py)` \|", page, flags=re.MULTILINE)
    names = [name for name, _ in rows]
    assert len(names) == len(set(names))
    for _, path in rows:
        assert (ROOT / path).is_file(), path
    registered = _run("import tenpy_ad\nprint(' '.join(sorted(tenpy_ad.PRIMITIVES)))")
    expected = {name if "/" not in name else name.split("/")[0] + "/<n>"
                for name in registered.stdout.split()}
    assert expected <= set(names), sorted(expected - set(names))
    assert {"svd", "add", "checkpoint/<n>", "fixed_point/<n>"} <= set(names)

"""README.md stays true: every ``python`` block runs as written, every install command is
editable and names extras that exist, the command-line synopsis names options and choices
that exist, the documents link only to files in the repository, and the API reference
command builds."""
import re
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

from tenpy_ad.cli import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
DOCUMENTS = ["README.md", "ARCHITECTURE.md", "bench/README.md", "docs/README.md",
             "CONTRIBUTING.md", "docs/ecosystem.md"]


def code_blocks(text: str, language: str) -> list:
    """The fenced blocks of ``language`` ("" for blocks without one)."""
    blocks, current = [], None
    for line in text.splitlines(keepends=True):
        fence = line.strip()
        if current is None and fence.startswith("```"):
            current = (fence[3:], [])
        elif current is not None and fence == "```":
            if current[0] == language:
                blocks.append("".join(current[1]))
            current = None
        elif current is not None:
            current[1].append(line)
    return blocks


PYTHON_BLOCKS = code_blocks(README, "python") + code_blocks(
    (ROOT / "docs" / "ecosystem.md").read_text(), "python")


def test_readme_has_python_blocks():
    assert len(PYTHON_BLOCKS) >= 2


@pytest.mark.parametrize("block", PYTHON_BLOCKS,
                         ids=[f"block{i}" for i in range(len(PYTHON_BLOCKS))])
def test_every_python_block_runs_as_written(block, tmp_path):
    done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr


def test_installs_are_editable_and_name_existing_extras():
    tomllib = pytest.importorskip("tomllib")           # Python >= 3.11
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
                 ["optional-dependencies"])
    installs = re.findall(r"pip install ([^`\n]*)", README)
    assert len(installs) >= 4
    for command in installs:
        assert command.startswith("-e "), command
    named = re.findall(r'"\.\[([^\]]*)\]"', README)
    assert named
    for group in named:
        assert set(group.split(",")) <= extras, group


def synopsis() -> list:
    """The synopsis' commands, continuation lines joined: ``(sub-command, text)``."""
    block = next(b for b in code_blocks(README, "") if b.startswith("python -m tenpy_ad"))
    commands = []
    for line in block.splitlines():
        if line.startswith("python -m tenpy_ad"):
            commands.append(line)
        else:
            commands[-1] += " " + line.strip()
    result = []
    for command in commands:
        word = command.split()[3]
        result.append((word if word in COMMANDS else "trg", command))
    return result


def test_synopsis_names_every_sub_command_with_existing_options():
    seen = set()
    for name, command in synopsis():
        seen.add(name)
        help_text = import_module(f"tenpy_ad.cli.{name}").build_parser("x").format_help()
        written = set(re.findall(r"--[a-z-]+", command))
        offered = set(re.findall(r"--[a-z-]+", help_text)) - {"--help"}
        assert written == offered, (name, written ^ offered)
        for option, choices in re.findall(r"(--[a-z-]+) \{([^}]*)\}", command):
            listed = re.search(rf"{option} \{{([^}}]*)\}}", help_text).group(1)
            assert set(choices.split(",")) == set(listed.split(",")), option
    assert seen == set(COMMANDS)


@pytest.mark.parametrize("document", DOCUMENTS)
def test_documents_link_only_to_files_in_the_repository(document):
    path = ROOT / document
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", path.read_text()):
        if "://" not in target:
            assert (path.parent / target).exists(), (document, target)


def test_api_reference_builds(tmp_path):
    pytest.importorskip("pdoc")
    assert 'pip install -e ".[docs]" && python docs/api.py' in README
    done = subprocess.run([sys.executable, str(ROOT / "docs" / "api.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr          # pdoc builds without warnings
    for page in ("index.html", "tenpy_ad.html", "tenpy_ad/numpy/linalg.html",
                 "tenpy_ad/numpy.html",
                 "tenpy_ad/models/ctmrg.html", "tenpy_ad/models/trg.html",
                 "tenpy_ad/cli/trg.html"):
        assert (tmp_path / page).exists(), page

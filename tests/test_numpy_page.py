"""The docs of the NumPy surface stay true: ``docs/numpy.md`` is what
``docs/generate_numpy_page.py`` generates from the registry, and the README's "Write NumPy,
get gradients" example runs and gives the gradient it promises."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np

import tenpy_ad.numpy as tnp

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    path = ROOT / "docs" / "generate_numpy_page.py"
    spec = importlib.util.spec_from_file_location("generate_numpy_page", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_numpy_page_is_up_to_date():
    page = (ROOT / "docs" / "numpy.md").read_text(encoding="utf-8")
    assert page == _generator().render(), "run: python docs/generate_numpy_page.py"


def test_numpy_page_lists_every_supported_name_once():
    page = (ROOT / "docs" / "numpy.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `((?:numpy|scipy)\.[\w.]+)`", page, flags=re.MULTILINE)
    ufunc_methods = [name for name in listed if name.endswith((".reduce", ".accumulate"))]
    assert sorted(set(listed) - set(ufunc_methods)) == tnp.supported_names()
    assert len(listed) == len(set(listed))


def test_first_sentence_stops_outside_parentheses_and_code():
    first_sentence = _generator().first_sentence
    assert first_sentence("Round (e.g. 1.5). More.") == "Round (e.g. 1.5)."
    assert first_sentence("Calls `x.sum`. More.") == "Calls `x.sum`."
    assert first_sentence("No full stop") == "No full stop."


def test_readme_numpy_example_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Write NumPy, get gradients", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL).group(1)
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)        # noqa: S102 - our own README
    h0, beta = scope["h0"], 2.0
    w, v = np.linalg.eigh(h0)                 # dF/dh = sum_k p_k v_k v_k^T (symmetric h0)
    p = np.exp(-beta * w) / np.sum(np.exp(-beta * w))
    expected = (v * p) @ v.T
    np.testing.assert_allclose(np.asarray(scope["h"].grad), expected, rtol=1e-12, atol=1e-14)

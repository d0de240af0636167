"""Calls go one way: the sweeps add cotangents and find sibling outputs with the core's own
functions, ``Tensor.backward`` enters the core once, the rule helpers import nothing
above them, and the core interns a node through one function."""
import ast
import pathlib
import sys

import numpy as np

import tenpy_ad as tp
from tenpy_ad._compiled import _core
from tenpy_ad.ops import elementwise as ew

PACKAGE = pathlib.Path(tp.__file__).parent


def _imported_modules(path: pathlib.Path) -> set:
    """The modules ``path`` imports, relative ones spelled with their leading dots."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            found.add(base)
            found.update(f"{base}.{alias.name}" if node.module else f"{base}{alias.name}"
                         for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_rule_helpers_import_nothing_from_ops():
    """rules.py sits below the primitives it registers rules for (no import circle)."""
    imports = _imported_modules(PACKAGE / "rules.py")
    assert not {m for m in imports if m.startswith(".ops") or "tenpy_ad.ops" in m}, imports


def test_elementwise_ops_do_not_import_the_structural_ones():
    """structural.py builds on elementwise.py, not the other way round."""
    imports = _imported_modules(PACKAGE / "ops" / "elementwise.py")
    assert not {m for m in imports if "structural" in m}, imports


def _calls_into(filename: str, fn) -> list:
    """The Python functions of ``filename`` entered while ``fn()`` runs."""
    entered = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.endswith(filename):
            entered.append(frame.f_code.co_name)
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return entered


def test_backward_runs_no_python_code_of_the_eager_module():
    x = tp.tensor(np.arange(4.0), requires_grad=True)
    loss = (x * x * 3.0).sum()
    assert _calls_into("tenpy_ad/eager.py", loss.backward) == []
    np.testing.assert_allclose(x.grad.numpy(), 6 * np.arange(4.0))


def test_backward_still_checks_its_seed():
    x = tp.tensor(np.arange(3.0), requires_grad=True)
    y = x * 2.0
    try:
        y.backward(np.ones(2))
    except tp.errors.ShapeError as error:
        assert str(error).startswith("backward(): the cotangent has shape [2]")
    else:
        raise AssertionError("a cotangent of the wrong shape was accepted")


def test_traced_sweep_adds_cotangents_without_the_python_add(monkeypatch):
    """``x`` is used twice: its two cotangents are added by the core, not ew.add."""
    x = tp.input((3,), name="x")
    loss = (x * x).sum()

    def refuse(a, b):
        raise AssertionError("the sweep called back into ops.elementwise.add")
    monkeypatch.setattr(ew, "add", refuse)
    g = tp.ad.grad(loss, x)
    np.testing.assert_allclose(tp.evaluate(g, {x: np.arange(3.0)}), 2 * np.arange(3.0))


def test_one_intern_function_takes_a_like_node_or_a_dtype_and_shape():
    x = tp.input((2, 3), name="x")
    like = _core.intern(ew.neg_p, None, (x,), x)
    given = _core.intern(ew.neg_p, None, (x,), (x.dtype_code, (2, 3)))
    assert like is given and like.shape == (2, 3)
    assert not hasattr(_core, "intern_like")

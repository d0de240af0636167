"""One place decides an operand's kind: the core's operand facts (``_core/operands.pxi``,
re-exported by ``tenpy_ad.primitive``).  The layers above ask them (``is_traced``,
``is_eager``, ``is_tensor``, ``any_traced``, ``plain_value``, ...) rather than testing
types themselves; the rules in ``tenpy_ad/ops`` test no operand's kind at all."""
import ast
import pathlib

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad import primitive as pr

PACKAGE = pathlib.Path(tp.__file__).parent
KINDS = {"TracedTensor", "Tensor", "ndarray", "ArraySurface", "BlockCotangent"}
MOST_OUTSIDE_THE_CORE = 30


def _kind_tests(path: pathlib.Path, root: pathlib.Path = PACKAGE) -> list:
    """``type(x) is K``, ``x is K`` and ``isinstance(x, K)`` for an operand kind K."""
    def names(node):
        items = node.elts if isinstance(node, ast.Tuple) else [node]
        return {getattr(n, "attr", getattr(n, "id", None)) for n in items}
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot))
                                                 for op in node.ops):
            if any(names(c) & KINDS for c in node.comparators):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
        elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance"
              and len(node.args) == 2 and names(node.args[1]) & KINDS):
            found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def _all_kind_tests() -> list:
    return [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in _kind_tests(path)]


def test_no_rule_tests_the_kind_of_an_operand():
    assert [hit for hit in _all_kind_tests() if hit.startswith("ops/")] == []


def test_few_operand_kind_tests_remain_outside_the_core():
    found = _all_kind_tests()
    assert len(found) <= MOST_OUTSIDE_THE_CORE, found


def test_the_rule_sees_each_spelling_of_a_kind_test(tmp_path):
    source = tmp_path / "kinds.py"
    source.write_text("type(a) is Tensor\nb is not np.ndarray\n"
                      "isinstance(c, (int, TracedTensor))\ntype(d) is int\n"
                      "isinstance(e, str)\nf == Tensor\n")
    assert _kind_tests(source, tmp_path) == ["kinds.py:1", "kinds.py:2", "kinds.py:3"]


@pytest.fixture
def operands():
    return {"traced": tp.input((2,), name="x"), "eager": tp.tensor([1.0, 2.0]),
            "grad": tp.tensor([1.0, 2.0], requires_grad=True), "array": np.ones(2),
            "generic": np.float32(1.0), "float": 1.0, "list": [1.0, 2.0]}


def test_each_kind_is_told_apart(operands):
    kinds = {name: (pr.is_traced(x), pr.is_eager(x), pr.is_tensor(x), pr.is_value(x),
                    pr.needs_grad(x)) for name, x in operands.items()}
    assert kinds == {"traced": (True, False, True, False, False),
                     "eager": (False, True, True, True, False),
                     "grad": (False, True, True, True, True),
                     "array": (False, False, False, True, False),
                     "generic": (False, False, False, True, False),
                     "float": (False, False, False, True, False),
                     "list": (False, False, False, False, False)}


def test_an_ndarray_subclass_is_a_value():
    assert pr.is_value(np.ma.masked_array([1.0]))


def test_values_without_the_tape(operands):
    assert pr.plain_value(operands["grad"]) is operands["grad"].data
    assert pr.plain_value(operands["list"]) is operands["list"]
    assert pr.array_value(operands["eager"]) is operands["eager"].data
    assert pr.array_value(operands["array"]) is operands["array"]
    np.testing.assert_array_equal(pr.array_value(operands["list"]), [1.0, 2.0])
    with pytest.raises(tp.errors.TenpyAdError):
        pr.array_value(operands["traced"])


def test_nodes_and_values_of_another_kind(operands):
    x = operands["traced"]
    assert pr.as_node(x) is x
    node = pr.as_node(np.arange(2.0))
    assert pr.is_traced(node) and node.prim is pr.constant_p
    assert pr.is_traced(pr.value_like(x, np.zeros(2)))
    assert pr.is_eager(pr.value_like(operands["eager"], np.zeros(2)))
    array = np.zeros(2)
    assert pr.value_like(operands["array"], array) is array


def test_which_calls_hold_a_tensor(operands):
    from tenpy_ad.numpy._operands import holds_tensor, tensor_among
    eager = operands["eager"]
    assert holds_tensor([1.0, (2.0, [eager])]) and not holds_tensor([1.0, (2.0, [3.0])])
    assert tensor_among([1.0, [eager]]) and tensor_among((1.0,), {"x": eager})
    assert not tensor_among((1.0,), {"like": eager})       # NumPy's like= is NumPy's
    assert not tensor_among(([1.0],), {}) and not tensor_among(())


def test_any_traced_and_any_requires_grad(operands):
    assert pr.any_traced([1.0, operands["traced"]]) and not pr.any_traced([operands["eager"]])
    assert pr.any_requires_grad([operands["eager"], operands["grad"]])
    assert not pr.any_requires_grad([operands["eager"], operands["array"]])

"""The NumPy surface written once: a function of ``tenpy_ad.numpy`` called without a
tensor among its arguments is NumPy's own call (results and errors); a tensor anywhere
among them (keywords, nested lists) makes it tenpy_ad's; the registry names each function
where it lives (``numpy.linalg.svd``); ``tp.linalg`` is ``tenpy_ad.numpy.linalg`` and has
NumPy 2's linalg names; the NumPy surface imports nothing above it."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import numpy as np
import pytest
import scipy.special

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad.numpy import _dispatch

ROOT = Path(__file__).resolve().parents[1]
A = np.arange(6.0).reshape(2, 3) / 7
B = np.arange(6.0).reshape(3, 2) / 5


# ------------------------------------------------------------------ the registry

def test_registered_names_are_where_the_functions_live():
    names = tnp.supported_names()
    assert {"numpy.exp", "numpy.sum", "numpy.linalg.svd", "numpy.linalg.norm"} <= set(names)
    for name in names:
        module, _, attribute = name.rpartition(".")
        assert module in ("numpy", "numpy.linalg", "scipy.linalg", "scipy.special",
                          "scipy.sparse.linalg"), name
        function = getattr(importlib.import_module(module), attribute)
        assert _dispatch.implementation_of(function) is _dispatch.IMPLEMENTATIONS[name]


def test_a_scipy_ufunc_is_listed_under_scipy():
    assert "scipy.special.erf" in tnp.supported_names()
    assert not any(name.endswith(".erf") and name.startswith("numpy")
                   for name in tnp.supported_names())
    assert _dispatch.implementation_of(scipy.special.erf) is tp.scipy.special.erf


def test_names_the_installed_numpy_lacks_are_not_registered():
    def version(x):
        """Not a NumPy function."""
        return "tenpy_ad"
    registered = _dispatch.implements("numpy.no_such_function")(version)
    assert registered is version                   # nothing to fall back to: it runs
    assert registered(np.ones(2)) == "tenpy_ad"
    assert "numpy.no_such_function" not in tnp.supported_names()


# ------------------------------------------------------------------ plain arguments

#: calls without a tensor (fresh arguments each time): tenpy_ad's answer must be NumPy's,
#: value or error
PLAIN_CALLS = {
    "concatenate": lambda: (([A[:, :2], A[:, 1:]],), {"axis": 0, "out": np.zeros((4, 2))}),
    "stack": lambda: (([A[0, :2], A[1, :2]],), {"out": np.zeros((2, 2))}),
    "dot": lambda: ((A[:, :2], B[:2]), {"out": np.zeros((2, 2))}),
    "outer": lambda: ((A[0, :2], B[0]), {"out": np.zeros((2, 2))}),
    "take": lambda: ((A, [0, 4]), {"out": np.zeros(2)}),
    "trace": lambda: ((A,), {"out": np.zeros(())}),
    "compress": lambda: (([True, False], A), {"axis": 0, "out": np.zeros((1, 3))}),
    "sum": lambda: ((A,), {"axis": 1, "where": [True, False, True]}),
    "reshape": lambda: ((A,), {}),
    "astype": lambda: (([1, 2], np.float32), {}),
    "clip": lambda: ((A, 0.2), {}),
    "unique": lambda: (([3, 1, 3],), {"return_counts": True}),
}


def _outcome(fn, make):
    args, kwargs = make()
    try:
        return "value", fn(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - the error itself is compared
        return "error", (type(error), str(error))


def _assert_same(got, expected):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _assert_same(g, e)
        return
    assert type(got) is type(expected)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", sorted(PLAIN_CALLS))
def test_without_a_tensor_it_is_numpys_own_call(name):
    ours = _outcome(getattr(tnp, name), PLAIN_CALLS[name])
    theirs = _outcome(getattr(np, name), PLAIN_CALLS[name])
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "error":
        assert ours[1] == theirs[1]
    else:
        _assert_same(ours[1], theirs[1])


def test_a_ragged_list_is_a_shape_error_naming_the_function():
    with pytest.raises(tp.errors.ShapeError, match="sum: the nested sequence is ragged"):
        tnp.sum([[1.0, 2.0], [3.0]])


def test_like_is_left_to_numpy():
    t = tp.tensor(A)
    for ours, theirs in [(tnp.eye(3, like=t), np.eye(3)),
                         (tnp.full(2, 1.5, like=t), np.full(2, 1.5)),
                         (tnp.arange(3, like=t), np.arange(3)),
                         (tnp.asarray([1.0, 2.0], like=t), np.asarray([1.0, 2.0]))]:
        assert type(ours) is np.ndarray
        np.testing.assert_array_equal(ours, theirs)


# ------------------------------------------------------------------ tensors anywhere

@pytest.mark.parametrize("name,reference", [("sum", lambda v: 3.0 + v),
                                            ("prod", lambda v: 2.0 * v),
                                            ("nansum", lambda v: 3.0 + v)])
def test_a_tensor_in_a_keyword_makes_it_tenpy_ads(name, reference):
    values = np.array([1.0, np.nan, 2.0]) if name == "nansum" else np.array([1.0, 2.0])
    initial = tp.tensor(0.5, requires_grad=True)
    result = getattr(tnp, name)(values, initial=initial)
    assert type(result) is tp.Tensor
    np.testing.assert_allclose(result.numpy(), reference(0.5))
    result.backward()
    np.testing.assert_allclose(np.asarray(initial.grad), reference(1.0) - reference(0.0))
    x = tp.input((), name="initial")
    graph = getattr(tnp, name)(values, initial=x)
    assert type(graph) is tp.TracedTensor
    np.testing.assert_allclose(tp.evaluate(graph, {x: np.array(0.5)}), reference(0.5))


def test_tensors_in_nested_lists_are_found():
    t = tp.tensor(2.0, requires_grad=True)
    total = tnp.sum([[t, 1.0], [3.0, t]])
    assert type(total) is tp.Tensor
    total.backward()
    np.testing.assert_allclose(np.asarray(t.grad), 2.0)
    block = tnp.block([[tnp.reshape(t, (1, 1)), np.ones((1, 1))]])
    np.testing.assert_array_equal(block.numpy(), [[2.0, 1.0]])


# ------------------------------------------------------------------ tp.linalg

NUMPY2_LINALG = ["vector_norm", "matrix_norm", "matmul", "outer", "cross", "tensordot",
                 "vecdot", "diagonal", "trace", "matrix_transpose", "svdvals"]


def test_tp_linalg_is_the_numpy_surfaces_module():
    assert tp.linalg is tnp.linalg is importlib.import_module("tenpy_ad.numpy.linalg")
    assert tp.linalg.config.broadening > 0
    assert callable(tp.linalg.svds) and callable(tp.linalg.eigsh)


@pytest.mark.parametrize("name", NUMPY2_LINALG)
def test_tp_linalg_has_numpy2s_names(name):
    ours = getattr(tp.linalg, name)
    if hasattr(np.linalg, name):
        assert _dispatch.implementation_of(getattr(np.linalg, name)) is ours
    assert name in tp.linalg.__all__


def test_numpy2_linalg_names_compute_as_numpy():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    v, w = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    cases = [("vector_norm", (x,), {"axis": (0, 1), "keepdims": True}),
             ("vector_norm", (x,), {"ord": 1, "axis": 1}),
             ("matrix_norm", (x,), {"ord": "nuc"}),
             ("outer", (v, w), {}), ("cross", (v, w), {}),
             ("diagonal", (x,), {"offset": 1}), ("trace", (x,), {"offset": -1}),
             ("vecdot", (v, w), {}), ("matrix_transpose", (x,), {})]
    for name, args, kwargs in cases:
        if not hasattr(np.linalg, name):
            continue
        expected = getattr(np.linalg, name)(*args, **kwargs)
        np.testing.assert_allclose(getattr(tp.linalg, name)(*args, **kwargs), expected)
        tensors = [tp.tensor(a) for a in args]
        np.testing.assert_allclose(np.asarray(getattr(tp.linalg, name)(*tensors, **kwargs)),
                                   expected, rtol=1e-13)


def test_vector_norm_gradient():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    t = tp.tensor(x, requires_grad=True)
    tp.linalg.vector_norm(t, axis=(0, 1)).backward()
    np.testing.assert_allclose(np.asarray(t.grad), x / np.sqrt((x * x).sum()), rtol=1e-14)


# ------------------------------------------------------------------ layers

#: what the NumPy surface may import from the package: the layers below it
BELOW = {"dtypes", "errors", "ops", "primitive", "_sequences"}


def test_the_numpy_surface_imports_only_the_layers_below_it():
    for path in sorted((ROOT / "tenpy_ad" / "numpy").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 2:
                names = [node.module] if node.module else [a.name for a in node.names]
                for name in names:
                    assert name.split(".")[0] in BELOW, (path.name, name)

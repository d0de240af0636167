"""Key semantics of the interner: identity, constants by value, fingerprints, weak table,
and the memoised structural comparison for graphs built separately."""
import gc
import subprocess
import sys
import textwrap

import numpy as np

import tenpy_ad as tp
from tenpy_ad._compiled import _core


def test_same_structure_is_same_object():
    x = tp.input((3, 3))
    assert (x * x) is (x * x)
    assert tp.exp(x @ x.T).sum() is tp.exp(x @ x.T).sum()
    assert (x * 0.5) is x.scale_real(0.5)
    assert (x + 1.0) is (x + 1.0)


def test_different_structure_differs():
    x = tp.input((3, 3))
    assert (x * x) is not (x + x)
    assert (x * 0.5) is not (x * 0.25)
    assert x.sum(axis=0) is not x.sum(axis=1)
    assert x.reshape(9) is not x.reshape(1, 9)


def test_inputs_never_merge():
    a, b = tp.input((2,), name="a"), tp.input((2,), name="a")
    assert a is not b
    assert (a * a) is not (b * b)


def test_constants_keyed_by_exact_value_and_dtype():
    x = tp.input((), name="x")
    assert (x + np.float64(0.0)) is (x + np.float64(0.0))
    # -0.0 and 0.0 compare equal in Python but are different constants (1/x differs)
    assert (x + np.array(-0.0)) is not (x + np.array(0.0))
    assert (x * -0.0) is not (x * 0.0)
    # the same NaN bit pattern merges; a different payload does not
    nan = np.array(np.nan)
    other_nan = np.frombuffer((np.array(np.nan).view(np.uint64) + 1).tobytes(), np.float64)[0]
    assert np.isnan(other_nan)
    assert (x + nan) is (x + np.array(np.nan))
    assert (x + nan) is not (x + np.array(other_nan))
    # dtype is part of the key
    y = tp.input((), dtype="complex128")
    assert (y + np.complex128(1)) is (y + np.complex128(1))
    c32 = tp.constant(np.float32(1.0))
    c64 = tp.constant(np.float64(1.0))
    assert c32 is not c64 and c32.dtype == np.float32 and c64.dtype == np.float64


def test_table_holds_nodes_weakly():
    gc.collect()
    x = tp.input((4,))
    size = _core.intern_table_size()
    rows = _core.table_size()
    y = tp.sin(x) * 3.0
    assert _core.intern_table_size() == size + 2
    assert _core.table_size() == rows + 2
    del y
    assert _core.intern_table_size() == size
    assert _core.table_size() == rows


def test_metadata_table_rows():
    x = tp.input((2, 5), dtype="complex128")
    y = (x.real).reshape(10)
    codes, ndims, dims = _core.metadata_arrays()
    assert codes[x.id] == 3 and ndims[x.id] == 2 and list(dims[x.id][:2]) == [2, 5]
    assert codes[y.id] == 1 and ndims[y.id] == 1 and dims[y.id][0] == 10
    released = y.id
    del y
    assert _core.metadata_arrays()[1][released] == -1


def test_wide_rank_shapes():
    x = tp.input((1,) * 12 + (3,))
    y = tp.exp(x).reshape(3)
    assert x.shape == (1,) * 12 + (3,) and y.shape == (3,)
    np.testing.assert_allclose(tp.evaluate(y, {x: np.ones(x.shape)}), np.e * np.ones(3))


FINGERPRINT_SCRIPT = textwrap.dedent("""
    import numpy as np, tenpy_ad as tp
    x = tp.input((3, 3), name="x")
    y = x
    for _ in range(5):
        y = tp.tanh(y * y) + np.eye(3)
    print(tp.ad.grad((y @ y.T).sum() * 0.5, x).fingerprint)
""")


def test_fingerprint_is_the_same_in_another_process():
    outputs = []
    for seed in ("0", "12345"):
        env = {"PYTHONHASHSEED": seed}
        import os
        env = dict(os.environ, **env)
        run = subprocess.run([sys.executable, "-c", FINGERPRINT_SCRIPT], capture_output=True,
                             text=True, env=env, check=True)
        outputs.append(run.stdout.strip())
    exec_globals = {}
    exec(FINGERPRINT_SCRIPT.replace("print(", "result = ("), exec_globals)
    assert outputs[0] == outputs[1] == str(exec_globals["result"])


def _ladder(name, depth, constant=0.5):
    x = tp.input((2, 2), name=name)
    y = x
    for _ in range(depth):
        y = (y * y) * constant
    return y


def test_structural_equality_of_separately_built_graphs():
    a, b = _ladder("x", 40), _ladder("x", 40)
    assert a is not b        # different placeholders: different nodes
    assert a.fingerprint == b.fingerprint
    assert _core.structurally_equal(a, b)
    assert not _core.structurally_equal(a, _ladder("x", 40, constant=0.25))
    assert not _core.structurally_equal(a, _ladder("other", 40))
    assert not _core.structurally_equal(a, _ladder("x", 39))


def test_structural_equality_is_linear_on_shared_dags():
    """The tree unfolding of a depth-n ladder has 2^n paths; the memoised comparison makes
    one pair comparison per node pair (n * nodes-per-layer + 1)."""
    counts = []
    for depth in (50, 100, 200):
        a, b = _ladder("x", depth), _ladder("x", depth)
        tp.reset_counters()
        assert _core.structurally_equal(a, b)
        counts.append(tp.counters()["equality_calls"])
    assert counts[1] - counts[0] == (counts[2] - counts[1]) / 2 == 2 * 50

"""Key semantics of the interner: the same expression is the same object (``is``), a
different one a different object; constants and static factors are keyed by dtype and bit
pattern; fingerprints are stable across processes; the tables hold nodes weakly; graphs
built apart compare by the memoised structural equality in linear time.  Random DAGs
(hypothesis) merge iff a naive recursive structural comparison says they are equal.
"""
import gc
import os
import pathlib
import runpy
import struct
import subprocess
import sys

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

import tenpy_ad as tp

from fuzzing import FUZZ
from surface_cases import rand
from tenpy_ad.introspection import metadata_row, structurally_equal, table_sizes

FINGERPRINT_SCRIPT = pathlib.Path(__file__).parent / "scripts" / "grad_fingerprint.py"


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
    before = table_sizes()
    y = tp.sin(x) * 3.0
    assert table_sizes() == {k: n + 2 for k, n in before.items()}
    del y
    assert table_sizes() == before


def test_metadata_table_rows():
    x = tp.input((2, 5), dtype="complex128")
    y = (x.real).reshape(10)
    assert metadata_row(x.id) == (np.dtype("complex128"), (2, 5))
    assert metadata_row(y.id) == (np.dtype("float64"), (10,))
    released = y.id
    del y
    assert metadata_row(released) is None


def test_wide_rank_shapes():
    x = tp.input((1,) * 12 + (3,))
    y = tp.exp(x).reshape(3)
    assert x.shape == (1,) * 12 + (3,) and y.shape == (3,)
    np.testing.assert_allclose(tp.evaluate(y, {x: np.ones(x.shape)}), np.e * np.ones(3))


def test_fingerprint_is_the_same_in_another_process():
    outputs = []
    for seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        run = subprocess.run([sys.executable, str(FINGERPRINT_SCRIPT)], capture_output=True,
                             text=True, env=env, check=True)
        outputs.append(run.stdout.strip())
    in_this_process = runpy.run_path(str(FINGERPRINT_SCRIPT))["grad_fingerprint"]()
    assert outputs[0] == outputs[1] == str(in_this_process)


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
    assert structurally_equal(a, b)
    assert not structurally_equal(a, _ladder("x", 40, constant=0.25))
    assert not structurally_equal(a, _ladder("other", 40))
    assert not structurally_equal(a, _ladder("x", 39))


def test_structural_equality_is_linear_on_shared_dags():
    """The tree unfolding of a depth-n ladder has 2^n paths; the memoised comparison makes
    one pair comparison per node pair (n * nodes-per-layer + 1)."""
    counts = []
    for depth in (50, 100, 200):
        a, b = _ladder("x", depth), _ladder("x", depth)
        tp.reset_counters()
        assert structurally_equal(a, b)
        counts.append(tp.counters()["equality_calls"])
    assert counts[1] - counts[0] == (counts[2] - counts[1]) / 2 == 2 * 50


# ------------------------------------------------------------------ interning

def test_same_expression_is_same_object():
    x = tp.input((3, 3), name="x")
    y = tp.input((3,), name="y")
    const = np.arange(9.0).reshape(3, 3)
    assert (x * x) is (x * x)
    assert (x + x) is (x + x)
    assert (x - y) is (x - y)                       # through implicit broadcasting
    assert (x / 2.0) is (x / 2.0)
    assert (x + 1.0) is (x + 1.0)
    assert (x + const) is (x + const.copy())        # equal constants merge
    assert (x @ x) is (x @ x)
    assert (x @ y) is (x @ y)
    assert x.T is x.T
    assert x.transpose(1, 0) is x.T
    assert x.reshape(9) is x.reshape(-1)
    assert x.sum() is x.sum()
    assert x.sum(axis=0, keepdims=True) is x.sum(axis=0, keepdims=True)
    assert x.max(axis=1) is tp.amax(x, axis=1)
    assert tp.exp(x) is tp.exp(x)
    assert tp.sin(x) is tp.sin(x)
    assert (x ** 2) is (x ** 2)
    assert x[:, :2] is x[:, :2]
    assert tp.einsum("ij,jk->ik", x, x) is tp.einsum("ij,jk->ik", x, x)
    assert tp.tensordot(x, x, 1) is tp.tensordot(x, x, 1)
    assert ((x * x) * 0.5).sum() is ((x * x) * 0.5).sum()


def test_different_expressions_are_different_objects():
    x = tp.input((3, 3))
    z = tp.input((3, 3))
    assert x is not z
    assert (x * x) is not (x * z)
    assert (x + 1.0) is not (x + 2.0)
    assert (x * 0.5) is not (x * 0.25)
    assert x.sum(axis=0) is not x.sum(axis=1)
    assert (x + np.zeros((3, 3))) is not (x + np.ones((3, 3)))
    assert (x + np.zeros((3, 3), np.float32)) is (x + np.zeros((3, 3)))  # same f64 constant
    assert tp.input((3, 3), name="x") is not tp.input((3, 3), name="x")


def test_value_of_shared_subexpression():
    x = tp.input((3,))
    y = x * x
    out = (y * y + y).sum()
    a = rand((3,), seed=86)
    np.testing.assert_allclose(tp.evaluate(out, {x: a}), (a ** 4 + a ** 2).sum(), rtol=1e-12)


# ------------------------------------------------------------------ random DAGs and bit patterns

_SCALES = (0.5, 2.0, -1.5, 0.0, -0.0, 3.0)
_SCALE_BITS = tuple(struct.unpack("<Q", struct.pack("<d", c))[0] for c in _SCALES)


def _float_of_bits(bits: int) -> float:
    """A fresh float object with exactly these 64 bits (NaN payloads included)."""
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


_STEP = st.tuples(st.sampled_from(("add", "mul", "sin", "exp", "scale", "matmul")),
                  st.integers(0, 50), st.integers(0, 50), st.sampled_from(_SCALE_BITS))
_RECIPE = st.lists(_STEP, min_size=1, max_size=7)


def _build(recipe, inputs) -> list:
    nodes = list(inputs)
    for op, i, j, bits in recipe:
        a, b = nodes[i % len(nodes)], nodes[j % len(nodes)]
        if op == "add":
            node = a + b
        elif op == "mul":
            node = a * b
        elif op == "sin":
            node = tp.sin(a)
        elif op == "exp":
            node = tp.exp(a)
        elif op == "scale":
            node = a * _float_of_bits(bits)
        else:
            node = a @ b
        nodes.append(node)
    return nodes


def _naive_equal(r1, i, r2, j) -> bool:
    """Recursive structural equality of recipe trees (no memo: fine for tiny DAGs)."""
    if i < 2 or j < 2:
        return i == j
    op1, a1, b1, bits1 = r1[i - 2]
    op2, a2, b2, bits2 = r2[j - 2]
    if op1 != op2:
        return False
    a1, b1, a2, b2 = a1 % i, b1 % i, a2 % j, b2 % j
    if op1 in ("sin", "exp"):
        return _naive_equal(r1, a1, r2, a2)
    if op1 == "scale":
        return bits1 == bits2 and _naive_equal(r1, a1, r2, a2)
    return _naive_equal(r1, a1, r2, a2) and _naive_equal(r1, b1, r2, b2)


@settings(max_examples=400, **FUZZ)
@given(_RECIPE, _RECIPE)
def test_random_dags_merge_iff_naively_structurally_equal(r1, r2):
    inputs = [tp.input((2, 2), name="a"), tp.input((2, 2), name="b")]
    n1, again, n2 = _build(r1, inputs), _build(r1, inputs), _build(r2, inputs)
    assert all(p is q for p, q in zip(n1, again))
    for i in range(len(n1)):
        for j in range(len(n2)):
            assert (n1[i] is n2[j]) == _naive_equal(r1, i, r2, j), (i, j)


@settings(max_examples=300, **FUZZ)
@given(_RECIPE, _RECIPE)
def test_structural_equality_across_placeholders_agrees_with_the_naive_one(r1, r2):
    n1 = _build(r1, [tp.input((2, 2), name="a"), tp.input((2, 2), name="b")])
    n2 = _build(r2, [tp.input((2, 2), name="a"), tp.input((2, 2), name="b")])
    for i in range(len(n1)):
        for j in range(len(n2)):
            expected = _naive_equal(r1, i, r2, j)
            assert structurally_equal(n1[i], n2[j]) == expected, (i, j)
            if not expected:
                assert n1[i] is not n2[j]


_NAN_BITS = st.one_of(st.integers(0x7FF0000000000001, 0x7FFFFFFFFFFFFFFF),
                      st.integers(0xFFF0000000000001, 0xFFFFFFFFFFFFFFFF),
                      st.just(0x7FF8000000000000))
_BITS64 = st.one_of(st.integers(0, 2**64 - 1), _NAN_BITS,
                    st.sampled_from((0, 1 << 63, 0x3FF0000000000000, 0x7FF0000000000000,
                                     0xFFF0000000000000)))
_BITS32 = st.one_of(st.integers(0, 2**32 - 1), st.integers(0x7F800001, 0x7FFFFFFF),
                    st.sampled_from((0, 1 << 31, 0x3F800000, 0x7FC00000)))


def _f32_of_bits(bits: int) -> np.float32:
    return np.frombuffer(struct.pack("<I", bits), dtype=np.float32)[0]


@settings(max_examples=400, **FUZZ)
@given(_BITS64, _BITS64, _BITS32, _BITS32)
@example(0, 1 << 63, 0, 1 << 31)                                          # 0.0 vs -0.0
@example(0x7FF8000000000000, 0x7FF8000000000000, 0x7FC00000, 0x7FC00000)  # same NaN
@example(0x7FF8000000000000, 0x7FF8000000000001, 0x7FC00000, 0x7FC00001)  # NaN payloads
def test_constants_are_keyed_by_dtype_and_bit_pattern(b1, b2, c1, c2):
    x = tp.input((2,), name="x")
    v1, v2 = np.float64(_float_of_bits(b1)), np.float64(_float_of_bits(b2))
    same = b1 == b2
    assert ((x + v1) is (x + v2)) == same
    assert (tp.constant(np.array([v1, 1.0])) is tp.constant(np.array([v2, 1.0]))) == same
    y = tp.input((2,), dtype="float32", name="y")
    w1, w2 = _f32_of_bits(c1), _f32_of_bits(c2)
    assert ((y + w1) is (y + w2)) == (c1 == c2)
    # float32 and float64 constants never merge, whatever the value
    assert tp.constant(np.float32(w1)) is not tp.constant(np.float64(w1))
    assert tp.constant(np.float32(w1)).dtype == np.float32
    # across placeholders: structural equality agrees
    z = tp.input((2,), name="x")
    assert structurally_equal(x + v1, z + v2) == same
    # the static scalar of the addition holds exactly these bits
    node = x + v1
    assert node.prim.name == "shift" and node.params.bits == (b1,)


@settings(max_examples=100, **FUZZ)
@given(_BITS64, _BITS64)
@example(0, 1 << 63)
@example(0x7FF8000000000000, 0x7FF8000000000001)
@example(0x7FF8000000000000, 0x7FF8000000000000)
def test_static_scale_factors_are_keyed_by_bit_pattern(b1, b2):
    """``x * c`` keeps ``c`` as a static parameter: like a constant, the same bits (NaN
    payloads included) must give the same node, different bits (0.0 / -0.0) different."""
    x = tp.input((2,), name="x")
    f1, f2 = _float_of_bits(b1), _float_of_bits(b2)
    if f1 == 1.0 or f2 == 1.0:
        return                             # x * 1.0 is x itself
    assert ((x * f1) is (x * f2)) == (b1 == b2)
    z = tp.input((2,), name="x")
    assert structurally_equal(x * f1, z * f2) == (b1 == b2)

"""Saved programs: ``Program.save`` / ``tp.load_program`` round-trip values, dtypes, NaN
and -0.0 constants, complex constants and every primitive of the spec table bit-exactly; a
loaded graph compares structurally equal to the original in linear time; corrupt or edited
files (cut, random bytes, bad JSON, unknown ops, bad ids, dtypes, params; hypothesis edits)
raise SaveFormatError, and nothing is ever unpickled.  Hostile files and the loading
limits: tests/test_saved_program_limits.py.
"""
import copy
import io
import json
import pathlib
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenpy_ad as tp
from tenpy_ad.errors import SaveFormatError
from tenpy_ad.introspection import graph_nodes, structurally_equal
from tenpy_ad.testing import random_array

from fuzzing import FUZZ
from specs import SPECS, make_args


def _saved_graph():
    x = tp.input((3, 4), dtype="float32", name="x")
    z = tp.input((4, 3), dtype="complex128", name="z")
    u, s, vt = tp.linalg.svd(x @ x.T + np.float32(1.0))
    e = tp.einsum("ij,jk->ik", x, z)
    nan_mask = np.array([[np.nan, 1.0], [1.0, 2.0]])
    w = tp.abs(e[1:, ::-2] * nan_mask)                        # slicing, a NaN constant
    signed = tp.divide(x[0, :2] * 0.0 + 1.0, np.array([-0.0, 0.0]))   # 1/-0.0 = -inf
    ladder = x[:2, :2]
    for _ in range(40):                                     # 2^40 paths: must stay linear
        ladder = (ladder * ladder) * 0.5
    out = (u * s).sum() + w.sum() + e.real[::2].sum() + ladder.sum() + (x * -0.0).sum()
    return [x, z], [out, u, s, w, signed, ladder, e]


def _saved_inputs(seed):
    rng = np.random.default_rng(seed)
    x = (rng.normal(size=(3, 4)) * 0.5).astype(np.float32)
    z = random_array(rng, (4, 3), "complex128")
    return x, z


def _assert_same_arrays(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)                   # NaN positions included
    assert (np.signbit(a.real) == np.signbit(b.real)).all()


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")   # +-inf on purpose
def test_saved_program_round_trips(tmp_path):
    inputs, outputs = _saved_graph()
    program = tp.compile(outputs, inputs=inputs)
    path = tmp_path / "program.tpz"
    program.save(path)
    loaded = tp.load_program(path)
    for seed in (1, 2):
        for a, b in zip(program(*_saved_inputs(seed)), loaded(*_saved_inputs(seed))):
            _assert_same_arrays(a, b)
    got = loaded(*_saved_inputs(3))
    assert got[4].tolist() == [-np.inf, np.inf]           # the -0.0 constant survived
    assert np.isnan(got[3][0, 0]) and np.isfinite(got[3][1:]).all()
    assert got[0].dtype == np.float64 and got[1].dtype == np.float32
    assert got[6].dtype == np.complex128


def test_loaded_graph_is_structurally_equal_in_linear_time(tmp_path):
    inputs, outputs = _saved_graph()
    path = tmp_path / "program.tpz"
    tp.compile(outputs, inputs=inputs).save(path)
    loaded_inputs, loaded_outputs = tp.load_graph(path)
    assert [(v.name, v.shape, v.dtype) for v in loaded_inputs] == \
        [(v.name, v.shape, v.dtype) for v in inputs]
    assert len(loaded_outputs) == len(outputs)
    for original, loaded in zip(outputs, loaded_outputs):
        assert loaded is not original
        n_nodes = len(graph_nodes([original]))
        tp.reset_counters()
        assert structurally_equal(original, loaded)
        calls = tp.counters()["equality_calls"]
        assert calls <= n_nodes + 4, f"{calls} pair comparisons for {n_nodes} nodes"
    # a different graph is told apart
    assert not structurally_equal(outputs[0], loaded_outputs[5].sum())


def _write_zip(path, members: dict):
    with zipfile.ZipFile(path, "w") as archive:
        for name, payload in members.items():
            archive.writestr(name, payload)


def _members(path) -> dict:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _save_sample(path):
    """A small saved program (sin, einsum, svd, slicing, a constant): (path, members of
    the archive, the parsed program.json)."""
    x = tp.input((3, 2), name="x")
    u, s, vt = tp.linalg.svd(x)
    y = (tp.einsum("ij,jk->ik", u, vt)[1:, ::-1] * 2.0).reshape(4) + np.array(
        [1.0, -0.0, np.nan, 2.0])
    tp.compile([tp.sin(y).sum(), s], inputs=[x]).save(path)
    members = _members(path)
    return path, members, json.loads(members["program.json"])


@pytest.fixture(scope="module")
def saved_sample(tmp_path_factory):
    return _save_sample(tmp_path_factory.mktemp("saved") / "good.tpz")


def _expect_save_format_error(path, *words):
    with pytest.raises(SaveFormatError) as excinfo:
        tp.load_program(path)
    message = str(excinfo.value)
    assert message and all(w.lower() in message.lower() for w in words), message
    return message


def test_corrupt_files_raise_save_format_error(tmp_path, saved_sample):
    path, members, document = saved_sample
    data = path.read_bytes()
    for cut in (0, 10, len(data) // 2, len(data) - 1):
        bad = tmp_path / f"cut{cut}.tpz"
        bad.write_bytes(data[:cut])
        _expect_save_format_error(bad)
    bad = tmp_path / "random.tpz"
    bad.write_bytes(np.random.default_rng(0).bytes(2000))
    _expect_save_format_error(bad)
    bad = tmp_path / "nojson.tpz"
    _write_zip(bad, {k: v for k, v in members.items() if k != "program.json"})
    _expect_save_format_error(bad, "program.json")
    bad = tmp_path / "notjson.tpz"
    _write_zip(bad, dict(members, **{"program.json": b"{not json"}))
    _expect_save_format_error(bad)
    for field, value, word in (("format", "something-else", "not a saved tenpy_ad program"),
                               ("version", 99, "version")):
        bad = tmp_path / f"{field}.tpz"
        _write_zip(bad, dict(members, **{"program.json": json.dumps(
            dict(document, **{field: value}))}))
        _expect_save_format_error(bad, word)
    unknown = copy.deepcopy(document)
    next(n for n in unknown["nodes"] if n["op"] == "sin")["op"] = "frobnicate"
    bad = tmp_path / "unknown.tpz"
    _write_zip(bad, dict(members, **{"program.json": json.dumps(unknown)}))
    _expect_save_format_error(bad, "frobnicate")
    # a truncated constant inside an intact archive
    constant = next(k for k in members if k.endswith(".npy"))
    bad = tmp_path / "short_npy.tpz"
    _write_zip(bad, dict(members, **{constant: members[constant][:-5]}))
    _expect_save_format_error(bad)


class _Touch:
    """Unpickling this would create a file: proof that loading never unpickles."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.path),))


def test_loading_never_unpickles(tmp_path, saved_sample):
    path, members, document = saved_sample
    marker = tmp_path / "unpickled"
    buffer = io.BytesIO()
    np.save(buffer, np.array([_Touch(marker), None], dtype=object), allow_pickle=True)
    constant = next(k for k in members if k.endswith(".npy"))
    bad = tmp_path / "object.tpz"
    _write_zip(bad, dict(members, **{constant: buffer.getvalue()}))
    _expect_save_format_error(bad)
    with pytest.raises(SaveFormatError):
        tp.load_graph(bad)
    assert not marker.exists()


def _mutated(document, edit):
    document = copy.deepcopy(document)
    edit(document)
    return document


def _node(document, op):
    return next(n for n in document["nodes"] if n["op"] == op)


_DOCUMENT_EDITS = {
    "einsum params not a string": lambda d: _node(d, "einsum").update(params=7),
    "reshape params of the wrong size": lambda d: _node(d, "reshape").update(
        params={"tuple": [7]}),
    "an input id that is not an input": lambda d: d.update(inputs=[1]),
    "an input id that does not exist": lambda d: d.update(inputs=[999]),
    "an output id that does not exist": lambda d: d.update(outputs=[999]),
    "an operand id that does not exist": lambda d: _node(d, "sin").update(inputs=[999]),
    "nodes is not a list": lambda d: d.update(nodes=7),
    "an unsupported input dtype": lambda d: _node(d, "input").update(dtype="float16"),
    "a negative input dim": lambda d: _node(d, "input").update(shape=[-3, 2]),
    "metadata that disagrees": lambda d: _node(d, "sin").update(meta=[["float32", [4]]]),
    "an unreadable param": lambda d: _node(d, "reshape").update(params={"float": "zz"}),
}


@pytest.mark.parametrize("edit", sorted(_DOCUMENT_EDITS))
def test_corrupt_documents_raise_save_format_error(tmp_path, saved_sample, edit):
    path, members, document = saved_sample
    bad = tmp_path / "edited.tpz"
    _write_zip(bad, dict(members, **{"program.json": json.dumps(
        _mutated(document, _DOCUMENT_EDITS[edit]))}))
    _expect_save_format_error(bad)


_JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-3, 1000),
                         st.floats(allow_nan=False), st.text(max_size=8),
                         st.sampled_from(["float64", "int32", "svd", "input", "constant",
                                          "einsum", "ij,jk->ik"]),
                         st.lists(st.integers(-1, 12), max_size=3),
                         st.just({"tuple": [1, 2]}), st.just({"float": "0x1p-1"}))


def _leaf_paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaf_paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaf_paths(v, path + (i,))


@settings(max_examples=300, **FUZZ)
@given(data=st.data())
def test_randomly_edited_documents_load_or_raise_save_format_error(data, saved_sample):
    path, members, document = saved_sample
    document = copy.deepcopy(document)
    paths = [p for p in _leaf_paths(document) if p]
    fields = [("nodes", i, key) for i, node in enumerate(document["nodes"]) for key in node]
    fields += [(key,) for key in document]
    edits = []
    for _ in range(data.draw(st.integers(1, 2), label="edits")):
        target = data.draw(st.one_of(st.sampled_from(fields), st.sampled_from(paths)),
                           label="path")
        value = data.draw(_JSON_LEAVES, label="value")
        edits.append(f"{'/'.join(map(str, target))} = {value!r}")
        holder = document
        try:
            for key in target[:-1]:
                holder = holder[key]
            holder[target[-1]] = value
        except (KeyError, IndexError, TypeError):
            pass
    bad = path.parent / "randomly_edited.tpz"
    _write_zip(bad, dict(members, **{"program.json": json.dumps(document)}))
    try:
        tp.load_program(bad)
    except SaveFormatError:
        pass
    except Exception as error:  # noqa: BLE001 - the point of the test
        raise AssertionError(f"loading a file edited with {edits} raised "
                             f"{type(error).__name__}: {error}") from error


def test_saving_a_checkpoint_region_raises_save_format_error(tmp_path):
    x = tp.input((3,), name="x")
    region = tp.checkpoint(lambda a: tp.sin(a) * 2.0)
    loss = region(x).sum()
    program = tp.compile([loss, tp.ad.grad(loss, x)], inputs=[x])
    value, grad = program(np.zeros(3))
    assert value == 0.0
    np.testing.assert_allclose(grad, 2.0 * np.ones(3))
    with pytest.raises(SaveFormatError) as excinfo:
        program.save(tmp_path / "checkpoint.tpz")
    assert "checkpoint" in str(excinfo.value)


# ------------------------------------------------------------------ every primitive

def _spec_program(spec, rng):
    """The spec's function and its VJP compiled (complex dtype where the spec has one)."""
    args = make_args(spec, spec.dtypes[-1], rng)
    xs = [tp.input(a.shape, a.dtype) for a in args]
    out = spec.fn(*xs)
    grads = tp.ad.vjp([out], xs, [np.ones(out.shape, out.dtype)])
    return tp.compile([out, *grads], inputs=xs), args


def _outcome(program, args):
    try:
        return program(*args)
    except Exception as error:  # noqa: BLE001 - the loaded program must fail alike
        return type(error)


def test_every_spec_program_round_trips_bit_exactly(tmp_path):
    """Each primitive's params survive saving (through their schemas on loading): the
    spec table's functions and VJPs give the same bits after a round trip."""
    rng = np.random.default_rng(5)
    saved, unsaveable = 0, set()
    for spec in SPECS:
        program, args = _spec_program(spec, rng)
        path = tmp_path / "spec.tpz"
        try:
            program.save(path)
        except SaveFormatError as error:          # fixed_point problems, checkpoints, operators
            assert "cannot save a parameter" in str(error)
            unsaveable.add(spec.name)
            continue
        loaded = tp.load_program(path)
        before, after = _outcome(program, args), _outcome(loaded, args)
        if isinstance(before, type):
            assert after is before, spec.name
            continue
        for a, b in zip(before, after):
            assert a.dtype == b.dtype and a.shape == b.shape, spec.name
            assert a.tobytes() == b.tobytes(), spec.name
        saved += 1
    assert saved > 250 and all("fixed_point" in n or "checkpoint" in n or n.startswith("sparse_")
                             for n in unsaveable), \
        (saved, sorted(unsaveable))


def test_complex_and_odd_constants_round_trip_bit_exactly(tmp_path):
    x = tp.input((2, 3), dtype="complex64", name="x")
    z = tp.input((3,), dtype="complex128", name="z")
    c64 = np.array([[1 + 2j, np.nan + 0j, -0.0 - 0j], [np.inf * 1j, 3e-40 + 1e-39j, 1j]],
                   dtype=np.complex64)
    c128 = np.array([complex(-0.0, np.nan), 1e-310 + 1e308j, -1 - 1j])
    mask = np.array([True, False, True])
    counts = np.array([3, -2, 7], dtype=np.int64)
    out = [x * c64, z * c128, tp.where(mask, z, c128), z * counts, (x * c64).sum()]
    program = tp.compile(out, inputs=[x, z])
    path = tmp_path / "complex.tpz"
    program.save(path)
    loaded = tp.load_program(path)
    args = (np.ones((2, 3), np.complex64) * (1 - 1j), np.array([1j, -2.0, 0.5 + 0.5j]))
    with np.errstate(invalid="ignore", over="ignore"):
        for a, b in zip(program(*args), loaded(*args)):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()

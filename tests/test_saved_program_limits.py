"""Loading saved programs within limits: hostile files (a padded program.json, huge
declared constants, headers that lie, deep or wide JSON, corrupt deflate streams, unknown
params, odd members) raise SaveFormatError naming the member and the limit before anything
big is allocated or decompressed (tracemalloc checks the peak), and legitimate programs (TRG
at chi = 32 with 20 steps) load with the default limits.  Each hostile file is small on
disk: the big sizes are declared, or deflate bombs built from repeated compressed blocks.
"""
import copy
import io
import json
import struct
import tracemalloc
import warnings
import zipfile
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenpy_ad as tp
from tenpy_ad.compiler import safe_archive, saved_programs
from tenpy_ad.errors import ArgumentError, SaveFormatError
from tenpy_ad.introspection import structurally_equal
from tenpy_ad.models import trg

from fuzzing import FUZZ

MiB, GiB = 1 << 20, 1 << 30


# ------------------------------------------------------------------ building archives

def _deflate(prefix: bytes, filler: bytes = b" ", mebibytes: int = 0) -> bytes:
    """A raw deflate stream of ``prefix`` and ``mebibytes`` MiB of ``filler``, made of one
    compressed MiB repeated (a full flush makes the blocks independent): a bomb of any
    declared size costs about 1 KB per MiB to build and to store."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = compressor.compress(prefix) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(filler * MiB) + compressor.flush(zlib.Z_FULL_FLUSH)
    return head + block * mebibytes + compressor.flush(zlib.Z_FINISH)


def _raw_zip(path, members, flags: int = 0):
    """A zip written byte by byte: ``members`` are ``(name, deflated data, crc, declared
    uncompressed size)``, so a test can declare any size, true or not."""
    out, directory = bytearray(), bytearray()
    for name, data, crc, size in members:
        encoded, offset = name.encode(), len(out)
        out += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, flags, 8, 0, 33, crc, len(data),
                           size, len(encoded), 0) + encoded + data
        directory += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, flags, 8, 0, 33, crc,
                                 len(data), size, len(encoded), 0, 0, 0, 0, 0, offset) + encoded
    out += directory + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members),
                                   len(members), len(directory), len(out), 0)
    path.write_bytes(bytes(out))
    return path


def _member(name: str, content: bytes, declared: int | None = None, filler=b" ",
            mebibytes: int = 0, crc: int | None = None):
    """A ``_raw_zip`` member: ``content`` then ``mebibytes`` MiB of ``filler``."""
    if crc is None:
        crc = zlib.crc32(content + filler * MiB * mebibytes) if mebibytes <= 8 else 0
    size = len(content) + mebibytes * MiB if declared is None else declared
    return name, _deflate(content, filler, mebibytes), crc, size


def _write_zip(path, members: dict, compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, payload in members.items():
            archive.writestr(name, payload)
    return path


def _header(fields: dict) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, fields)
    return buffer.getvalue()


def _npy(array, header_shape=None) -> bytes:
    """``array`` as .npy bytes; ``header_shape`` replaces the shape its header declares."""
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    data = buffer.getvalue()
    if header_shape is None:
        return data
    fields = np.lib.format.header_data_from_array_1_0(array)
    body = data[len(_header(fields)):]
    return _header(dict(fields, shape=header_shape)) + body


def _sample_program():
    """A gather, a reduction, broadcasts and two constants (a vector and a matrix)."""
    x = tp.input((3, 4), name="x")
    y = x[tp.argmax(x, axis=0)].sum(axis=0) * np.array([1.0, -0.0, 2.0, 3.0]) + \
        x * np.arange(12.0).reshape(3, 4)
    return tp.compile([y, tp.sin(x)], inputs=[x])


SAMPLE_VALUE = [[4.0, 1.0, 10.0, 15.0], [8.0, 5.0, 14.0, 19.0], [12.0, 9.0, 18.0, 23.0]]


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The saved sample: (path, members, parsed program.json, its matrix constant)."""
    path = tmp_path_factory.mktemp("limits") / "sample.tpz"
    _sample_program().save(path)
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    constant = next(name for name in members
                    if name.endswith(".npy") and np.load(io.BytesIO(members[name])).ndim == 2)
    return path, members, json.loads(members["program.json"]), constant


def _expect(path, *words, **limits) -> str:
    with pytest.raises(SaveFormatError) as excinfo:
        tp.load_program(path, **limits)
    message = str(excinfo.value)
    assert all(w in message for w in words), message
    return message


def _peak_while_failing(path, **limits) -> int:
    """Peak traced allocation (bytes) while loading ``path`` fails."""
    tracemalloc.start()
    try:
        with pytest.raises(SaveFormatError):
            tp.load_program(path, **limits)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ------------------------------------------------------------------ the limits

def test_defaults_are_documented_and_raised_by_keyword(tmp_path, sample):
    limits = saved_programs.LIMITS
    assert limits == saved_programs.LoadLimits()
    assert (limits.max_bytes, limits.max_json_bytes, limits.max_depth, limits.max_nodes,
            limits.max_members) == (GiB, 256 * MiB, 64, 1 << 24, 1 << 16)
    assert safe_archive.limits_with(max_bytes=5, max_depth=None) == \
        saved_programs.LoadLimits(max_bytes=5)
    for bad in (-1, 1.5, True, "8"):
        with pytest.raises(ArgumentError, match="max_bytes must be an int >= 0"):
            tp.load_program(sample[0], max_bytes=bad)
    tp.load_graph(sample[0], max_bytes=GiB, max_json_bytes=MiB, max_depth=12,
                  max_nodes=10 ** 4, max_members=3)


def test_a_padded_program_json_is_refused_before_it_is_decompressed(tmp_path, sample):
    document = sample[1]["program.json"]
    constant = sample[3]
    others = [_member(name, data) for name, data in sample[1].items() if name.endswith(".npy")]
    padded = [_member("program.json", document, mebibytes=1536)] + others   # 1.5 GB of spaces
    path = _raw_zip(tmp_path / "padded.tpz", padded)
    assert path.stat().st_size < 2 * MiB
    _expect(path, "program.json", f"exceed max_json_bytes={256 * MiB}")
    assert _peak_while_failing(path) < MiB
    # the same at a size a test can afford: refused under a lowered limit, loaded above it
    small = _raw_zip(tmp_path / "small.tpz",
                     [_member("program.json", document, mebibytes=3)] + others)
    _expect(small, "program.json", f"exceed max_json_bytes={2 * MiB}", max_json_bytes=2 * MiB)
    assert _peak_while_failing(small, max_json_bytes=2 * MiB) < MiB // 2
    program = tp.load_program(small, max_json_bytes=4 * MiB)
    assert program(np.ones((3, 4)))[0].tolist() == SAMPLE_VALUE


def test_a_header_that_lies_about_its_size_stops_at_the_declared_size(tmp_path, sample):
    """The directory declares program.json's true size, the stream holds 1.5 GB more:
    only the declared bytes are ever decompressed, and a CRC of the whole stream fails."""
    document = sample[1]["program.json"]
    others = [_member(name, data) for name, data in sample[1].items() if name.endswith(".npy")]
    for crc, works in ((zlib.crc32(document), True), (zlib.crc32(document + b" "), False)):
        liar = _member("program.json", document, declared=len(document), mebibytes=1536,
                       crc=crc)
        path = _raw_zip(tmp_path / "liar.tpz", [liar] + others)
        tracemalloc.start()
        try:
            if works:
                program = tp.load_program(path)
            else:
                with pytest.raises(SaveFormatError, match="program.json: unreadable .BadZip"):
                    tp.load_program(path)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 4 * MiB
    assert program(np.ones((3, 4)))[0].tolist() == SAMPLE_VALUE


def test_a_huge_declared_constant_is_refused_before_it_is_allocated(tmp_path, sample):
    path_in, members, document, constant = sample
    three_gib = np.zeros(0)                 # the header declares 3 GiB of float64
    header = _npy(three_gib, header_shape=(3 * GiB // 8,))
    bomb = _raw_zip(tmp_path / "bomb.tpz", [
        _member("program.json", members["program.json"]),
        _member(constant, header, filler=b"\0", mebibytes=3 * 1024)])    # honest sizes
    assert bomb.stat().st_size < 4 * MiB
    _expect(bomb, constant, f"more than max_bytes={GiB}")
    assert _peak_while_failing(bomb) < MiB
    # the .npy header itself is checked: a small member declaring 10^12 entries
    for shape, words in (((10 ** 12,), [f"{8 * 10 ** 12} bytes", f"max_bytes={GiB}"]),
                         ((3, 4), ["declares 96 bytes", "holds"])):
        path = _write_zip(tmp_path / "header.tpz", dict(members, **{
            constant: _npy(np.zeros(3), header_shape=shape)}))
        _expect(path, constant, *words)
        assert _peak_while_failing(path) < MiB
    # all members together: each fits, all of them do not
    sizes = [len(data) for data in members.values()]
    assert sum(sizes) - 1 >= max(sizes)
    _expect(path_in, f"more than max_bytes={sum(sizes) - 1}", max_bytes=sum(sizes) - 1)


def test_deep_and_wide_json_is_refused_without_recursion(tmp_path, sample):
    deep = _write_zip(tmp_path / "deep.tpz", {"program.json": "[" * 5000 + "]" * 5000})
    _expect(deep, "program.json", "nests 5000 levels deep", "max_depth=64")
    # a raised depth limit hands it to json, whose recursion error is a SaveFormatError
    _expect(deep, "program.json", "not valid JSON", max_depth=10 ** 6)
    _expect(sample[0], "program.json", "max_nodes=100", max_nodes=100)
    wide = _write_zip(tmp_path / "wide.tpz", {"program.json": "[" + "[]," * 10 ** 5 + "0]"})
    _expect(wide, "program.json", "max_nodes=1000", max_nodes=1000)


def test_json_structure_matches_a_reference_scan(monkeypatch):
    """The chunked scan: depth and node count outside strings, escapes across chunks."""
    def reference(text: str):
        depth = deepest = 0
        nodes, inside, escaped = 1, False, False
        for ch in text:
            if inside:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    inside = False
            elif ch == '"':
                inside = True
            elif ch in "[{":
                depth += 1
                deepest = max(deepest, depth)
                nodes += 1
            elif ch in "]}":
                depth -= 1
            elif ch in ",:":
                nodes += 1
        return deepest, nodes

    rng = np.random.default_rng(3)
    pieces = ['"a\\\\"', '"\\"[["', '"x\\\\\\"]"', "[", "]", "{", "}", ",", ":", "1", '"[{,"']
    monkeypatch.setattr(safe_archive, "_CHUNK_SCAN", 7)      # many chunk boundaries
    for _ in range(300):
        text = "".join(rng.choice(pieces, size=rng.integers(1, 40)))
        assert safe_archive.json_structure(text.encode()) == reference(text), text
    value = {"a": [1, {"b\\\"": [[2, "]]]"], {}]}], "c": "\\\\"}
    text = json.dumps(value)
    assert safe_archive.json_structure(text.encode()) == reference(text) == (5, 14)


# ------------------------------------------------------------------ damaged archives

def test_a_corrupt_deflate_stream_names_the_member(tmp_path, sample):
    path = tmp_path / "corrupt.tpz"
    data = bytearray(sample[0].read_bytes())
    with zipfile.ZipFile(sample[0]) as archive:
        info = archive.getinfo("program.json")
    start = info.header_offset + 30 + len("program.json")
    data[start + 10:start + 40] = b"\xff" * 30
    path.write_bytes(bytes(data))
    with pytest.raises(SaveFormatError, match="program.json: unreadable") as excinfo:
        tp.load_program(path)
    assert isinstance(excinfo.value.__cause__, zlib.error)


@pytest.mark.parametrize("case", ["extra member", "unreferenced constant", "duplicate",
                                  "missing constant", "no program.json", "not a zip",
                                  "truncated", "encrypted", "bzip2", "too many members",
                                  "object dtype", "float16 dtype", "non-ASCII JSON"])
def test_odd_archives_raise_save_format_error_naming_the_member(tmp_path, sample, case):
    path_in, members, document, constant = sample
    path = tmp_path / "odd.tpz"
    words, limits = [], {}
    if case == "extra member":
        _write_zip(path, dict(members, **{"notes.txt": b"hi"}))
        words = ["notes.txt", "unexpected member"]
    elif case == "unreferenced constant":
        _write_zip(path, dict(members, **{"constant_999.npy": _npy(np.zeros(2))}))
        words = ["constant_999.npy", "not referenced"]
    elif case == "duplicate":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)     # zipfile: "Duplicate name"
            with zipfile.ZipFile(path, "w") as archive:
                for name, payload in list(members.items()) + [(constant, members[constant])]:
                    archive.writestr(name, payload)
        words = [constant, "appears twice"]
    elif case == "missing constant":
        _write_zip(path, {k: v for k, v in members.items() if k != constant})
        words = [constant, "missing from the archive"]
    elif case == "no program.json":
        _write_zip(path, {constant: members[constant]})
        words = ["program.json", "missing"]
    elif case == "not a zip":
        path.write_bytes(np.random.default_rng(0).bytes(3000))
        words = ["not a zip archive"]
    elif case == "truncated":
        path.write_bytes(path_in.read_bytes()[:-30])
        words = ["zip"]
    elif case == "encrypted":
        _raw_zip(path, [_member("program.json", members["program.json"])], flags=1)
        words = ["program.json", "is encrypted"]
    elif case == "bzip2":
        _write_zip(path, members, compression=zipfile.ZIP_BZIP2)
        words = ["compression method 12"]
    elif case == "too many members":
        limits = {"max_members": 1}
        _write_zip(path, members)
        words = [f"{len(members)} members exceed max_members=1"]
    elif case == "object dtype":
        buffer = io.BytesIO()
        np.save(buffer, np.array([None, 1], dtype=object), allow_pickle=True)
        _write_zip(path, dict(members, **{constant: buffer.getvalue()}))
        words = [constant, "object dtype", "never unpickled"]
    elif case == "float16 dtype":
        _write_zip(path, dict(members, **{constant: _npy(np.zeros(3, np.float16))}))
        words = [constant, "<f2", "is not one of the engine's"]
    elif case == "non-ASCII JSON":
        text = json.dumps(document).replace('"x"', '"\u00e9"', 1).encode("utf-8")
        _write_zip(path, dict(members, **{"program.json": text}))
        words = ["program.json", "ASCII"]
    _expect(path, *words, **limits)
    with pytest.raises(SaveFormatError):
        tp.load_graph(path, **limits)


def test_a_fortran_ordered_constant_loads_as_its_values(tmp_path, sample):
    path_in, members, document, constant = sample
    values = np.load(io.BytesIO(members[constant]))
    fortran = _npy(np.asfortranarray(values))
    assert b"'fortran_order': True" in fortran
    path = _write_zip(tmp_path / "fortran.tpz", dict(members, **{constant: fortran}))
    assert tp.load_program(path)(np.ones((3, 4)))[0].tolist() == SAMPLE_VALUE


# ------------------------------------------------------------------ params and documents

def _edited(tmp_path, sample, edit):
    path_in, members, document, constant = sample
    edited = copy.deepcopy(document)
    edit(edited)
    return _write_zip(tmp_path / "edited.tpz", dict(members, **{
        "program.json": json.dumps(edited)}))


def _node(document, op):
    return next(n for n in document["nodes"] if n["op"] == op)


PARAM_EDITS = {   # the edit, and the words the message must hold
    "unknown gather mode": (
        lambda d: _node(d, "gather")["params"]["tuple"].__setitem__(1, "xxx"),
        ["'gather'", "params[1] = 'xxx'", "'raise', 'wrap', 'clip'"]),
    "negative axis": (
        lambda d: _node(d, "reduce_sum").update(params={"tuple": [-1]}),
        ["'reduce_sum'", "params[0] = -1"]),
    "a string where an int is due": (
        lambda d: _node(d, "reduce_sum").update(params={"tuple": ["0"]}),
        ["'reduce_sum'", "params[0] = '0'"]),
    "params for a primitive without": (
        lambda d: _node(d, "sin").update(params=3),
        ["'sin'", "takes no params"]),
    "a negative shape entry": (
        lambda d: _node(d, "broadcast_in_dim").update(
            params={"tuple": [{"tuple": [-2]}, {"tuple": [0]}]}),
        ["'broadcast_in_dim'", "shape[0] = -2"]),
    "a constant file of another buffer": (
        lambda d: _node(d, "constant").update(file="constant_99999.npy"),
        ["is not constant_"]),
    "a buffer defined twice": (
        lambda d: d["nodes"].append(copy.deepcopy(_node(d, "sin"))),
        ["defined twice"]),
    "a bool buffer id": (
        lambda d: _node(d, "sin").update(inputs=[True]), ["buffer id True"]),
    "an input that is not an input node": (
        lambda d: d.update(inputs=[_node(d, "sin")["outputs"][0][1]]),
        ["is not an input node"]),
    "single with two outputs": (lambda d: d.update(single=True), ["'single' is True"]),
    "a huge input shape list": (
        lambda d: _node(d, "input").update(shape=[1] * 65), ["up to 64 ints"]),
}


@pytest.mark.parametrize("case", sorted(PARAM_EDITS))
def test_malformed_documents_name_the_node(tmp_path, sample, case):
    edit, words = PARAM_EDITS[case]
    path = _edited(tmp_path, sample, edit)
    _expect(path, "program.json", *words)


# ------------------------------------------------------------------ real programs

KS32 = [2, 4, 4, 16, 16] + [32] * 15           # trg.ks_rule(32, 20)


def test_a_trg_program_at_chi_32_loads_with_the_default_limits(tmp_path):
    beta = tp.input((), name="beta")
    lnz = trg.trg_lnz(beta, 32, 20, ks=KS32)
    first = tp.ad.grad(lnz, beta)
    outputs = [lnz, first, tp.ad.grad(first, beta)]
    path = tmp_path / "trg.tpz"
    program = tp.compile(outputs, inputs=[beta])
    program.save(path)
    with zipfile.ZipFile(path) as archive:      # what the defaults have to allow
        assert archive.getinfo("program.json").file_size > MiB
    loaded_inputs, loaded_outputs = tp.load_graph(path)
    assert all(structurally_equal(a, b) for a, b in zip(outputs, loaded_outputs))
    assert tp.load_program(path).n_instructions == program.n_instructions


def test_a_small_trg_program_round_trips_bit_exactly(tmp_path):
    compiled = trg.CompiledTRG(chi=8, steps=6)
    path = tmp_path / "trg8.tpz"
    compiled.program.save(path)
    loaded = tp.load_program(path)
    for beta in (0.3, 0.44):
        for a, b in zip(compiled.program(np.float64(beta)), loaded(np.float64(beta))):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


@settings(max_examples=200, **FUZZ)
@given(data=st.data())
def test_damaged_bytes_load_or_raise_save_format_error(data, sample):
    """Bytes of a saved archive overwritten anywhere (headers, deflate streams, the
    directory): loading works or raises SaveFormatError, never a raw zlib or zip error."""
    raw = bytearray(sample[0].read_bytes())
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        at = data.draw(st.integers(0, len(raw) - 1), label="at")
        raw[at] = data.draw(st.integers(0, 255), label="byte")
    try:
        tp.load_program(io.BytesIO(bytes(raw)))
    except SaveFormatError:
        pass

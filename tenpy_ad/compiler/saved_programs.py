"""Saving and loading compiled programs in a safe format.

A saved program is a zip archive holding ``program.json`` — the graph as data: each buffer's
primitive (by name), static params, inputs and output slots, dtypes and shapes — and one
``constant_<buffer>.npy`` file per constant.  Loading never runs code from the file: it
looks primitives up by name in the registry, checks each node's params against its
primitive's schema (:mod:`tenpy_ad.param_schema`), rebuilds the graph through the ordinary
shape-checked interning, then compiles it.

Loading is bounded (:mod:`tenpy_ad.compiler.safe_archive`): every size is checked against
:data:`LIMITS` before it is allocated or decompressed (the archive's members, program.json's
size, nesting and number of values, each constant's declared shape, all constants together);
the keywords of ``tp.load_program`` and :func:`load_graph` raise a limit.  A corrupt,
truncated, foreign or oversized file raises :class:`~tenpy_ad.errors.SaveFormatError`
naming the member (``program.json``, ``constant_12.npy``) and, for a limit, the limit.
"""
from __future__ import annotations

import io
import json
import zipfile

import numpy as np

from .. import dtypes
from .._compiled import _core
from ..errors import SaveFormatError, TenpyAdError
from ..param_schema import MAX_NDIM, check_params
from ..param_schema import short_repr as _short
from ..primitive import PRIMITIVES, bind, constant, constant_p, is_traced
from ..traced import input as placeholder
from ..traced import input_p
from .safe_archive import LIMITS, PROGRAM, Archive, LoadLimits, json_structure, limits_with

Scalar = _core.Scalar
FORMAT = "tenpy_ad-program"
VERSION = 1


# ------------------------------------------------------------------ params as JSON

def _encode(value):
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, str)):
        return value if not isinstance(value, bool) else {"bool": value}
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return {"float": value.hex()}
    if isinstance(value, complex):
        return {"complex": [value.real.hex(), value.imag.hex()]}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v) for v in value]}
    if isinstance(value, list):
        return {"list": [_encode(v) for v in value]}
    if type(value) is Scalar:
        return {"scalar": _encode(value.value)}
    raise SaveFormatError(f"cannot save a parameter of type {type(value).__name__} "
                          "(programs with tp.checkpoint regions cannot be saved)")


def _decode(value):
    """Params from their JSON form.  Recursive over the params' nesting, which the depth
    limit on program.json bounds (``max_depth``)."""
    if value is None or type(value) in (int, str):
        return value
    if type(value) is dict and len(value) == 1:
        (kind, payload), = value.items()
        if kind == "bool" and type(payload) is bool:
            return payload
        if kind == "float" and type(payload) is str:
            return float.fromhex(payload)
        if kind == "complex" and type(payload) is list and len(payload) == 2 and \
                all(type(p) is str for p in payload):
            return complex(float.fromhex(payload[0]), float.fromhex(payload[1]))
        if kind == "tuple" and type(payload) is list:
            return tuple([_decode(v) for v in payload])
        if kind == "list" and type(payload) is list:
            return [_decode(v) for v in payload]
        if kind == "scalar":
            scalar = _decode(payload)
            if type(scalar) in (bool, int, float, complex):
                return Scalar(scalar)
    raise _DocumentError(f"unreadable parameter {_short(value)}")


# ------------------------------------------------------------------ save

def save_program(plan, input_specs: list, single: bool, path) -> None:
    """Write a scheduled ``plan`` (its rows, metadata and constants) to ``path``;
    ``input_specs`` are the program's ``(buffer, shape, dtype, name)`` per input, ``single``
    whether it returns one array rather than a list."""
    nodes, arrays = [], {}
    for row in plan.rows:
        if row.prim is input_p:
            ((_, k),) = row.outputs
            code, shape = plan.metadata[k]
            nodes.append({"op": "input", "buffer": k, "name": row.params,
                          "dtype": dtypes.DTYPES[code].name, "shape": list(shape)})
        elif row.prim is constant_p:
            ((_, k),) = row.outputs
            arrays[f"constant_{k}.npy"] = row.params.array
            nodes.append({"op": "constant", "buffer": k, "file": f"constant_{k}.npy"})
        else:
            nodes.append({"op": row.prim.name, "params": _encode(row.params),
                          "inputs": list(row.inputs),
                          "outputs": [[slot, b] for slot, b in row.outputs],
                          "meta": [[dtypes.DTYPES[plan.metadata[b][0]].name,
                                    list(plan.metadata[b][1])] for _, b in row.outputs]})
    document = {"format": FORMAT, "version": VERSION, "nodes": nodes,
                "inputs": [spec[0] for spec in input_specs],
                "input_specs": [{"name": name, "dtype": dtype.name, "shape": list(shape)}
                                for _, shape, dtype, name in input_specs],
                "outputs": list(plan.outputs), "single": single}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("program.json", json.dumps(document))
        for name, array in arrays.items():
            buffer = io.BytesIO()
            np.save(buffer, array, allow_pickle=False)
            archive.writestr(name, buffer.getvalue())


# ------------------------------------------------------------------ load

class _DocumentError(Exception):
    """program.json does not describe a graph (reported as a SaveFormatError with where)."""


#: what rebuilding one node from a hostile document may raise; each becomes a
#: SaveFormatError naming the node
_NODE_ERRORS = (_DocumentError, TenpyAdError, ValueError, TypeError, LookupError,
                AttributeError, ArithmeticError, RecursionError)
_DTYPE_NAMES = tuple(dtype.name for dtype in dtypes.DTYPES)
_MAX_BUFFER = (1 << 63) - 1


def load_graph(path, *, max_bytes: int | None = None, max_json_bytes: int | None = None,
               max_depth: int | None = None, max_nodes: int | None = None,
               max_members: int | None = None) -> tuple:
    """``(inputs, outputs)``: the graph saved by ``Program.save`` rebuilt as TracedTensors
    in this process.

    Loading stays within :data:`LIMITS` (a :class:`LoadLimits`: all members together 1 GiB
    uncompressed, program.json 256 MiB, nested 64 deep, 2**24 values, 65536 members),
    each checked before the memory it bounds is taken; raise one with its keyword.  Every
    node's params are checked against its primitive's schema.  Any failure, a limit
    included, raises :class:`~tenpy_ad.errors.SaveFormatError` naming the member.
    """
    limits = limits_with(max_bytes=max_bytes, max_json_bytes=max_json_bytes,
                         max_depth=max_depth, max_nodes=max_nodes, max_members=max_members)
    with Archive(path, limits) as archive:
        return _Rebuild(archive, _read_document(archive)).graph()


def _read_document(archive: Archive) -> dict:
    """program.json parsed, after its nesting and size were checked without recursion."""
    data, limits = archive.read_json(), archive.limits
    if not data.isascii():
        raise archive.error(PROGRAM, "is not ASCII JSON (Program.save escapes the rest)")
    depth, nodes = json_structure(data)
    if depth > limits.max_depth:
        raise archive.error(PROGRAM, f"nests {depth} levels deep, more than max_depth="
                                     f"{limits.max_depth}")
    if nodes > limits.max_nodes:
        raise archive.error(PROGRAM, f"holds up to {nodes} values and keys, more than "
                                     f"max_nodes={limits.max_nodes}")
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise archive.error(PROGRAM, f"not valid JSON ({type(error).__name__}: {error})") \
            from error
    if type(document) is not dict or document.get("format") != FORMAT:
        raise archive.error(PROGRAM, "not a saved tenpy_ad program")
    if document.get("version") != VERSION:
        raise archive.error(PROGRAM, f"format version {_short(document.get('version'))}, "
                                     f"this tenpy_ad reads version {VERSION}")
    return document


class _Rebuild:
    """The graph of a parsed program.json, node by node, through the ordinary binding."""

    def __init__(self, archive: Archive, document: dict):
        self.archive, self.document = archive, document
        self.buffers: dict = {}
        self.kinds: dict = {}           # buffer -> "input", "constant" or a primitive name
        self.files: set = set()

    def graph(self) -> tuple:
        nodes = self.document.get("nodes")
        if type(nodes) is not list:
            raise self.archive.error(PROGRAM, "'nodes' is not a list")
        for index, entry in enumerate(nodes):
            try:
                self._node(entry)
            except SaveFormatError:
                raise
            except _NODE_ERRORS as error:
                raise self._node_error(index, entry, error) from error
        extra = self.archive.unreferenced(self.files)
        if extra:
            raise self.archive.error(extra[0], "is not referenced by program.json")
        try:
            return self._ends()
        except _NODE_ERRORS as error:
            raise self.archive.error(PROGRAM, f"{_message(error)}") from error

    def _node_error(self, index: int, entry, error) -> SaveFormatError:
        op = entry.get("op") if type(entry) is dict else None
        return self.archive.error(PROGRAM, f"nodes[{index}] ({_short(op)}): {_message(error)}")

    def _node(self, entry) -> None:
        if type(entry) is not dict:
            raise _DocumentError("not an object")
        op = entry.get("op")
        if op == "input":
            name = entry.get("name")
            check_params(input_p, name)
            node = placeholder(_shape(entry.get("shape")), _dtype(entry.get("dtype")), name)
            self._define(entry.get("buffer"), node, "input")
        elif op == "constant":
            buffer = _buffer(entry.get("buffer"))
            file = entry.get("file")
            if file != f"constant_{buffer}.npy":
                raise _DocumentError(f"file {_short(file)} is not constant_{buffer}.npy")
            self._define(buffer, constant(self.archive.read_constant(file)), "constant")
            self.files.add(file)
        else:
            self._operation(op, entry)

    def _operation(self, op, entry) -> None:
        prim = PRIMITIVES.get(op) if type(op) is str else None
        if prim is None or prim is input_p or prim is constant_p:
            raise _DocumentError(f"unknown primitive {_short(op)} in the saved program")
        params = _decode(entry.get("params"))
        check_params(prim, params)
        args = [self._buffer_of(b) for b in _list(entry, "inputs")]
        result = bind(prim, params, *args)
        results = result if prim.n_outputs > 1 else (result,)
        outputs, meta = _list(entry, "outputs"), _list(entry, "meta")
        if not 1 <= len(outputs) == len(meta) <= prim.n_outputs:
            raise _DocumentError(f"{len(outputs)} outputs with {len(meta)} metadata entries "
                                 f"for {prim.n_outputs} results")
        for output, saved in zip(outputs, meta):
            slot, buffer = _pair(output, "output")
            dtype, shape = _pair(saved, "metadata")
            node = results[_index(slot, prim.n_outputs)]
            if not is_traced(node) or node.dtype.name != dtype or \
                    list(node.shape) != shape:
                raise _DocumentError(f"{op!r} rebuilt with metadata different from the saved "
                                     "one")
            self._define(buffer, node, op)

    def _define(self, buffer, node, kind: str) -> None:
        buffer = _buffer(buffer)
        if buffer in self.buffers:
            raise _DocumentError(f"buffer {buffer} is defined twice")
        self.buffers[buffer], self.kinds[buffer] = node, kind

    def _buffer_of(self, buffer):
        node = self.buffers.get(_buffer(buffer))
        if node is None:
            raise _DocumentError(f"buffer {buffer} is used before it is defined")
        return node

    def _ends(self) -> tuple:
        """The program's inputs (unused ones from input_specs) and outputs."""
        ids, specs = _list(self.document, "inputs"), _list(self.document, "input_specs")
        if len(specs) != len(ids):
            raise _DocumentError(f"{len(ids)} inputs with {len(specs)} input_specs")
        inputs = [self._input(b, spec) for b, spec in zip(ids, specs)]
        if len(set(map(id, inputs))) != len(inputs):
            raise _DocumentError("an input is listed twice")
        outputs = [self._buffer_of(b) for b in _list(self.document, "outputs")]
        single = self.document.get("single")
        if type(single) is not bool or (single and len(outputs) != 1):
            raise _DocumentError(f"'single' is {_short(single)} for {len(outputs)} outputs")
        return inputs, (outputs[0] if single else outputs)

    def _input(self, buffer, spec):
        if type(buffer) is int and buffer == -1:       # an input the outputs do not use
            if type(spec) is not dict:
                raise _DocumentError("an input_specs entry is not an object")
            check_params(input_p, spec.get("name"))
            return placeholder(_shape(spec.get("shape")), _dtype(spec.get("dtype")),
                               spec.get("name"))
        if self.kinds.get(_buffer(buffer)) != "input":
            raise _DocumentError(f"input buffer {buffer} is not an input node")
        return self.buffers[buffer]


def _buffer(value) -> int:
    if type(value) is not int or not 0 <= value <= _MAX_BUFFER:
        raise _DocumentError(f"buffer id {_short(value)} is not an int >= 0")
    return value


def _index(value, n: int) -> int:
    if type(value) is not int or not 0 <= value < n:
        raise _DocumentError(f"output slot {_short(value)} is not in [0, {n})")
    return value


def _list(holder: dict, key: str) -> list:
    value = holder.get(key)
    if type(value) is not list:
        raise _DocumentError(f"{key!r} is not a list")
    return value


def _pair(value, what: str) -> list:
    if type(value) is not list or len(value) != 2:
        raise _DocumentError(f"{what} {_short(value)} is not a pair")
    return value


def _shape(value) -> tuple:
    if type(value) is not list or len(value) > MAX_NDIM or \
            any(type(d) is not int or not 0 <= d <= _MAX_BUFFER for d in value):
        raise _DocumentError(f"shape {_short(value)} is not a list of up to {MAX_NDIM} "
                             "ints >= 0")
    return tuple(value)


def _dtype(value) -> str:
    if type(value) is not str or value not in _DTYPE_NAMES:
        raise _DocumentError(f"dtype {_short(value)} is not one of {', '.join(_DTYPE_NAMES)}")
    return value


def _message(error: BaseException) -> str:
    """An error's text; the type too where it is not one of ours."""
    if isinstance(error, (_DocumentError, TenpyAdError)):
        return str(error)
    return f"{type(error).__name__}: {error}"


__all__ = ["save_program", "load_graph", "LoadLimits", "LIMITS"]

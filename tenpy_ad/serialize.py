"""Saving and loading compiled programs in a safe format.

A saved program is a zip archive holding ``program.json`` — the graph as data: each buffer's
primitive (by name), static params, inputs and output slots, dtypes and shapes — and one
``.npy`` file per constant (read with ``allow_pickle=False``).  Loading never runs code from
the file: it looks primitives up by name in the registry and rebuilds the graph through the
ordinary shape-checked interning, then compiles it.  A corrupt, truncated or foreign file
raises :class:`~tenpy_ad.errors.SaveFormatError`.
"""
from __future__ import annotations

import io
import json
import zipfile

import numpy as np

from . import dtypes
from .errors import SaveFormatError, TenpyAdError
from ._compiled import _core
from .primitive import PRIMITIVES, TracedTensor, bind, constant, constant_p
from .traced import input as placeholder
from .traced import input_p

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
    if value is None or isinstance(value, (int, str)) and not isinstance(value, bool):
        return value
    if isinstance(value, dict) and len(value) == 1:
        (kind, payload), = value.items()
        if kind == "bool" and isinstance(payload, bool):
            return payload
        if kind == "float":
            return float.fromhex(payload)
        if kind == "complex":
            return complex(float.fromhex(payload[0]), float.fromhex(payload[1]))
        if kind == "tuple":
            return tuple(_decode(v) for v in payload)
        if kind == "list":
            return [_decode(v) for v in payload]
        if kind == "scalar":
            return Scalar(_decode(payload))
    raise SaveFormatError(f"unreadable parameter {value!r}")


# ------------------------------------------------------------------ save

def save_program(program, path) -> None:
    plan = program._plan
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
                "inputs": [spec[0] for spec in program._input_specs],
                "input_specs": [{"name": name, "dtype": dtype.name, "shape": list(shape)}
                                for _, shape, dtype, name in program._input_specs],
                "outputs": list(plan.outputs), "single": program._single}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("program.json", json.dumps(document))
        for name, array in arrays.items():
            buffer = io.BytesIO()
            np.save(buffer, array, allow_pickle=False)
            archive.writestr(name, buffer.getvalue())


# ------------------------------------------------------------------ load

def load_graph(path) -> tuple:
    """``(inputs, outputs)``: the saved graph rebuilt as TracedTensors in this process."""
    try:
        with zipfile.ZipFile(path) as archive:
            document = json.loads(archive.read("program.json"))
            if not isinstance(document, dict) or document.get("format") != FORMAT:
                raise SaveFormatError(f"{path}: not a saved tenpy_ad program")
            if document.get("version") != VERSION:
                raise SaveFormatError(f"{path}: format version {document.get('version')!r}, "
                                      f"this tenpy_ad reads version {VERSION}")
            return _rebuild(document, archive)
    except SaveFormatError:
        raise
    except (zipfile.BadZipFile, KeyError, ValueError, TypeError, IndexError, EOFError,
            AttributeError, OSError, TenpyAdError) as error:
        raise SaveFormatError(f"{path}: cannot read the saved program "
                              f"({type(error).__name__}: {error})") from error


def _rebuild(document, archive) -> tuple:
    buffers: dict = {}
    for entry in document["nodes"]:
        op = entry["op"]
        if op == "input":
            buffers[entry["buffer"]] = placeholder(tuple(entry["shape"]), entry["dtype"],
                                                   entry["name"])
        elif op == "constant":
            array = np.load(io.BytesIO(archive.read(entry["file"])), allow_pickle=False)
            buffers[entry["buffer"]] = constant(array)
        else:
            prim = PRIMITIVES.get(op)
            if prim is None or prim is input_p or prim is constant_p:
                raise SaveFormatError(f"unknown primitive {op!r} in the saved program")
            args = [buffers[b] for b in entry["inputs"]]
            result = bind(prim, _decode(entry["params"]), *args)
            results = result if prim.n_outputs > 1 else (result,)
            for (slot, b), (dtype, shape) in zip(entry["outputs"], entry["meta"]):
                node = results[slot]
                if type(node) is not TracedTensor or node.dtype.name != dtype or \
                        list(node.shape) != shape:
                    raise SaveFormatError(f"{op!r} rebuilt with metadata different from the "
                                          "saved one")
                buffers[b] = node
    inputs = [buffers[b] for b in document["inputs"] if b >= 0]
    if len(inputs) != len(document["inputs"]):
        specs = document["input_specs"]
        inputs = [buffers[b] if b >= 0 else placeholder(tuple(spec["shape"]), spec["dtype"],
                                                         spec["name"])
                  for b, spec in zip(document["inputs"], specs)]
    outputs = [buffers[b] for b in document["outputs"]]
    return inputs, (outputs[0] if document.get("single") else outputs)


def load_program(path):
    """A Program compiled from a file written by ``Program.save``."""
    from .program import Program
    inputs, outputs = load_graph(path)
    try:
        return Program(outputs, inputs)
    except TenpyAdError as error:
        raise SaveFormatError(f"{path}: the saved graph does not compile ({error})") from error


__all__ = ["load_program", "load_graph"]

"""A program's listing (``str(program)``): one instruction a line, with buffers, dtypes and
shapes, as ``%3:f64[3,3] = mul %1 %2``."""
from __future__ import annotations

from .. import dtypes
from ..traced import input_p

_SHORT = {"float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128",
          "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
          "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64"}


def type_label(code: int, shape: tuple) -> str:
    """``f64[3,4]`` for a buffer of dtype ``code`` and ``shape``."""
    return f"{_SHORT[dtypes.DTYPES[code].name]}[{','.join(str(d) for d in shape)}]"


def _row_text(row, metadata) -> str:
    targets = ", ".join(f"%{b}:{type_label(*metadata[b])}" for _, b in row.outputs)
    prim, params = row.prim, row.params
    if prim is input_p:
        text = "input" if params is None else f"input {params!r}"
    else:
        text = prim.name
        if prim.format_params is not None and params is not None:
            text += " " + prim.format_params(params)
    operands = " ".join(f"%{a}" for a in row.inputs)
    return f"  {targets} = {text}" + (f" {operands}" if row.inputs else "")


def listing(plan, input_specs) -> str:
    """The text of a scheduled ``plan`` whose inputs are ``input_specs`` (``(buffer, shape,
    dtype, name)`` each): inputs, every row in order, the returned buffers."""
    ins = ", ".join(f"%{buf}:{type_label(dtypes.code_of(dtype), shape)}"
                    for buf, shape, dtype, name in input_specs)
    lines = [f"program({ins}) {{"]
    lines.extend(_row_text(row, plan.metadata) for row in plan.rows)
    lines.append("  return " + ", ".join(f"%{b}" for b in plan.outputs))
    lines.append("}")
    return "\n".join(lines)


__all__ = ["listing", "type_label"]

"""Read-only views of the engine's state, for tests, benchmarks and the curious.

Everything here is deterministic (counts and sizes, never times), so tests can assert
exact values: ``tests/test_scaling.py`` checks that the counters grow by the same amount
per layer of a chain, the memory tests that the tables return to their size once a graph
is dropped.  These functions are the only public door into the compiled core's
bookkeeping; nothing outside the package should need ``tenpy_ad._core``.
"""
from __future__ import annotations

from typing import Iterable, NamedTuple

import numpy as np

from ._compiled import _core
from .dtypes import DTYPES
from .primitive import TracedTensor


def counters() -> dict[str, int]:
    """A snapshot of the engine's deterministic counters (nodes interned and released,
    table probes, rules applied, instructions run, eager tape entries, ...)."""
    return dict(_core.counters())


def reset_counters() -> None:
    """Set every counter to zero."""
    _core.reset_counters()


def table_sizes() -> dict[str, int]:
    """``{"interned": ..., "metadata_rows": ...}``: the traced nodes in the intern table
    and the rows in use in the metadata table (one per live traced node, interned or
    not, such as placeholders).  Both return to their size when a graph is dropped."""
    return {"interned": _core.intern_table_size(), "metadata_rows": _core.table_size()}


def graph_nodes(outputs: Iterable[TracedTensor]) -> list[TracedTensor]:
    """Every node ``outputs`` depend on (themselves included), each once, inputs before
    their users.  Iterative: fine for graphs of any depth."""
    return _core.toposort(list(outputs))


def structurally_equal(a: TracedTensor, b: TracedTensor) -> bool:
    """Whether two graphs built apart (a loaded program, separate placeholders) have the
    same structure: placeholders match by name, dtype and shape, other nodes by primitive,
    parameters and inputs.  For nodes built against each other ``a is b`` already says
    it (nodes are interned).  Linear in graph size: each pair of nodes is compared once."""
    return _core.structurally_equal(a, b)


class MetadataRow(NamedTuple):
    """One row of the metadata table: a live node's dtype and shape.  ``shape`` is None
    for ranks above the table's inline width (those shapes are kept beside the table)."""
    dtype: "numpy.dtype"                                  # noqa: F821 - a name for pdoc
    shape: "tuple[int, ...] | None"


def metadata_row(node_id: int) -> MetadataRow | None:
    """The metadata table's row for ``node_id`` (a node's ``.id``), or None if the row
    is free: a dropped node gives its row back at once (a new node may reuse it)."""
    codes, ndims, dims = _core.metadata_arrays()
    if not 0 <= node_id < len(ndims) or ndims[node_id] < 0:
        return None
    ndim, row = ndims[node_id], np.asarray(dims)[node_id]
    shape = tuple(int(d) for d in row[:ndim]) if ndim <= len(row) else None
    return MetadataRow(DTYPES[codes[node_id]], shape)


__all__ = ["counters", "reset_counters", "table_sizes", "graph_nodes", "structurally_equal",
           "MetadataRow", "metadata_row"]

"""A compiled program's memory plan: which steps write their result into arrays allocated
once and reused on every call, and which steps share an array, from the liveness, shapes
and dtypes of the values — computed once, when the program is compiled.

* **Who writes into a planned array.**  Primitives whose ``array_fn`` is a NumPy ufunc (with
  no params, one output, the dtype NumPy itself would give): ``ufunc(*xs, out=array)``; and
  primitives registered with :func:`writes_into` (einsum: its ``np.matmul``).  These always
  return new memory, never a view of an operand.
* **Aliasing.**  Other steps may return views of their operands (transpose, reshape,
  slicing, ...), so their results join their operands' *alias class* (union-find over the
  buffers), unless the primitive is registered with :func:`fresh_outputs`.  A planned
  array stays reserved until the last read of any value of its class; a class holding a
  program output gets no planned array at all (its steps allocate as usual), so nothing
  handed to the caller is overwritten by a later call.
* **Reuse.**  Steps are visited in order; a step takes a free array of its byte size (or a
  new one), and the array returns to the pool after the last read of its class — never
  while the step reads its operands (no in-place writes).
* **Threads.**  :meth:`MemoryPlan.new_arrays` allocates a fresh set of arrays; a Program
  keeps a pool of sets and gives each concurrent call its own.

Results are bit-identical with and without the plan (the same NumPy/BLAS calls, only the
destination differs): ``tests/test_buffers.py``.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from . import dtypes

_writers: dict = {}
_fresh: set = set()


def writes_into(prim, storage_shape: Callable, kernel: Callable) -> None:
    """Let program steps of ``prim`` write into a planned array.

    ``storage_shape(params, operand_shapes, output_shape)`` -> the shape of the array the
    kernel needs (of the output's dtype and size), or None when it cannot for these
    operands; ``kernel(out, params, *arrays)`` computes the step into ``out`` and returns
    the result (``out`` itself or a view of it).
    """
    _writers[prim] = (storage_shape, kernel)
    _fresh.add(prim)


def fresh_outputs(prim) -> None:
    """Declare that ``prim``'s impl never returns memory shared with its operands."""
    _fresh.add(prim)


def _is_fresh(prim, params) -> bool:
    """Whether the impl's results never share memory with its operands (a ufunc always
    allocates its result)."""
    return prim in _fresh or (params is None and isinstance(prim.array_fn, np.ufunc))


def _ufunc_writer(prim, params, operands, output):
    """The ufunc of an elementwise step that can write into ``output``'s array, or None."""
    ufunc = prim.array_fn
    if not isinstance(ufunc, np.ufunc) or params is not None or ufunc.nout != 1 \
            or ufunc.nin != len(operands):
        return None
    try:
        resolved = ufunc.resolve_dtypes(tuple(dtypes.DTYPES[c] for c, _ in operands) + (None,))
    except (TypeError, ValueError):
        return None
    return ufunc if resolved[-1] == dtypes.DTYPES[output[0]] else None


def writer(prim, params, operands: list, output: tuple):
    """``(kernel, storage_shape)`` of a step that can write into a planned array, or None;
    ``operands`` and ``output`` are ``(dtype code, shape)``."""
    code, shape = output
    if not shape or 0 in shape:
        return None                 # 0-d and empty results: nothing to gain
    ufunc = _ufunc_writer(prim, params, operands, output)
    if ufunc is not None:
        return ufunc, shape
    registered = _writers.get(prim)
    if registered is None:
        return None
    storage_shape, kernel = registered
    planned_shape = storage_shape(params, [s for _, s in operands], shape)
    return None if planned_shape is None else (kernel, planned_shape)


class _AliasClasses:
    """Union-find over buffer indices, with the last read of each class."""

    def __init__(self, n: int):
        self.parent = list(range(n))
        self.end = [-1] * n

    def find(self, b: int) -> int:
        parent = self.parent
        root = b
        while parent[root] != root:
            root = parent[root]
        while parent[b] != root:            # path compression, iteratively
            parent[b], b = root, parent[b]
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra
            self.end[ra] = max(self.end[ra], self.end[rb])

    def read(self, b: int, step: int) -> None:
        r = self.find(b)
        self.end[r] = max(self.end[r], step)


class MemoryPlan:
    """Per step the planned array it writes into (or none), and the arrays themselves.

    ``kernels[k]``: the kernel of a planned step (or None); ``storage[k]``: the index of its
    array (-1: none); ``views[k]``: ``(dtype, shape)`` the kernel sees; ``sizes[s]``: bytes
    of array ``s``.
    """

    def __init__(self, plan, enabled: bool = True):
        steps = plan.steps
        n = len(steps)
        self.kernels = [None] * n
        self.storage = [-1] * n
        self.views = [None] * n
        self.sizes = []
        if not enabled or n == 0:
            return
        candidates = self._candidates(plan)
        classes = self._alias_classes(plan, candidates)
        self._assign(plan, candidates, classes)

    def _candidates(self, plan) -> dict:
        """step index -> (kernel, storage shape) for the steps that can write into arrays."""
        metadata = plan.metadata
        found = {}
        for k, step in enumerate(plan.steps):
            if step.prim.n_outputs != 1:
                continue
            operands = [metadata[b] for b in step.inputs]
            w = writer(step.prim, step.params, operands, metadata[step.outputs[0][1]])
            if w is not None:
                found[k] = w
        return found

    @staticmethod
    def _alias_classes(plan, candidates: dict) -> _AliasClasses:
        classes = _AliasClasses(len(plan.metadata))
        n = len(plan.steps)
        for k, step in enumerate(plan.steps):
            for b in step.inputs:
                classes.read(b, k)
            for _, b in step.outputs:
                classes.read(b, k)           # defined here (read or not later)
            if k in candidates or _is_fresh(step.prim, step.params):
                continue
            for _, out in step.outputs:     # may be a view of any operand
                for b in step.inputs:
                    classes.union(b, out)
        for b in plan.outputs:
            classes.read(b, n)               # handed to the caller: never reused
        return classes

    def _assign(self, plan, candidates: dict, classes: _AliasClasses) -> None:
        n = len(plan.steps)
        metadata = plan.metadata
        free: dict = {}                      # bytes -> storage indices free now
        released = [[] for _ in range(n)]    # storages to free after step k
        for k, step in enumerate(plan.steps):
            if k in candidates:
                out = step.outputs[0][1]
                end = classes.end[classes.find(out)]
                if end < n:
                    kernel, shape = candidates[k]
                    dtype = dtypes.DTYPES[metadata[out][0]]
                    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
                    pool = free.get(size)
                    s = pool.pop() if pool else self._new_storage(size)
                    self.kernels[k], self.storage[k] = kernel, s
                    self.views[k] = (dtype, shape)
                    released[end].append(s)
            for s in released[k]:
                free.setdefault(self.sizes[s], []).append(s)

    def _new_storage(self, size: int) -> int:
        self.sizes.append(size)
        return len(self.sizes) - 1

    @property
    def n_planned(self) -> int:
        """Steps that write into planned arrays."""
        return sum(1 for s in self.storage if s >= 0)

    @property
    def nbytes(self) -> int:
        """Bytes of one set of planned arrays."""
        return sum(self.sizes)

    def new_arrays(self) -> list:
        """A fresh set of arrays, as the per-step ``outs`` list of the executor."""
        if not self.sizes:
            return None
        storages = [np.empty(size, np.uint8) for size in self.sizes]
        outs = [None] * len(self.storage)
        for k, s in enumerate(self.storage):
            if s >= 0:
                dtype, shape = self.views[k]
                outs[k] = storages[s].view(dtype).reshape(shape)
        return outs


__all__ = ["MemoryPlan", "writes_into", "fresh_outputs", "writer"]

"""A compiled program's memory plan: which steps write their result into arrays allocated
once and reused on every call, and which steps share an array, from the liveness, shapes
and dtypes of the values — computed once, when the program is compiled.

* **Who writes into a planned array.**  Steps with a result of at least ``MIN_BYTES`` (16
  KiB; smaller ones come cheaply from NumPy's cache and the heap) of primitives whose
  ``array_fn`` is a NumPy ufunc (with no params, one output, the dtype NumPy itself would
  give): ``ufunc(*xs, out=array)``; and of primitives that declare a ``writes_into``
  (:mod:`tenpy_ad.step_facts`; einsum: its ``np.matmul``).  Steps of any size that get
  one of the core's C kernels (:mod:`tenpy_ad.compiler.small_kernels`: small float64
  elementwise steps, small contractions), which write only into planned arrays.  These
  always return new memory, never a view of an operand.
* **Aliasing.**  Other steps may return views of their operands (transpose, reshape,
  slicing, ...), so their results join their operands' *alias class* (union-find over the
  buffers), unless the primitive declares ``fresh_outputs``.  A planned
  array stays reserved until the last read of any value of its class; a class holding a
  program output gets no planned array at all (its steps allocate as usual), so nothing
  handed to the caller is overwritten by a later call.
* **Reuse.**  Steps are visited in order; a step takes a free array of its byte size (or a
  new one), and the array returns to the pool after the last read of its class — never
  while the step reads its operands (no in-place writes).  Scratch arrays (einsum's copies
  of operands that need a BLAS-friendly layout) return to the pool right after the step.
* **Threads.**  :meth:`MemoryPlan.new_arrays` allocates a fresh set of arrays; a Program
  keeps a pool of sets and gives each concurrent call its own.

Results are bit-identical with and without the plan (the same NumPy/BLAS calls, or C
kernels giving NumPy's bits; only the destination differs): ``tests/test_buffers.py``.
A small contraction whose output is its product transposed is stored in the output's order
on every path (the C kernel, ``_Contraction.small_kernel``, ``_Contraction.into``), so a
later sum over it adds in one order.  The passes over the steps are the compiled core's
``plan_steps`` (linear in the number of steps); :func:`writers` answers, once per kind
of step (:mod:`tenpy_ad.compiler.step_choice`), whether and how it writes into an array.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import dtypes

#: results smaller than this are not planned (NumPy's cache and the heap serve them cheaply)
MIN_BYTES = MIN_BYTES_DEFAULT = 16 << 10


@functools.lru_cache(maxsize=1024)
def _ufunc_result_code(ufunc, codes: tuple):
    """The dtype code NumPy gives ``ufunc`` on operands of ``codes`` (None: not one of
    ours, or no loop)."""
    try:
        resolved = ufunc.resolve_dtypes(tuple(dtypes.DTYPES[c] for c in codes) + (None,))
        return dtypes.code_of(resolved[-1])
    except (TypeError, ValueError, KeyError):
        return None


def writers(signatures: list, c_kernels: list) -> list:
    """Per ``(prim, params, operand metadata, result metadata)`` of ``signatures``
    (metadata: ``(dtype code, shape)``), how its steps write into a planned array:
    ``(kernel, storage shape, scratch bytes)``, or None.  ``c_kernels``: per signature the
    ``(kernel, scratch counts)`` of a C kernel that writes into one (``small_kernels``),
    which wins, or None."""
    return [None if result is None else _writer(prim, params, operands, result, c_kernel)
            for (prim, params, operands, result), c_kernel in zip(signatures, c_kernels)]


def _writer(prim, params, operands: tuple, output: tuple, c_kernel):
    code, shape = output
    if not shape or 0 in shape:
        return None                 # 0-d and empty results: nothing to gain
    itemsize = dtypes.DTYPES[code].itemsize
    if c_kernel is not None:
        kernel, counts = c_kernel
        return kernel, shape, tuple(c * itemsize for c in counts)
    if itemsize * math.prod(shape) < MIN_BYTES:
        return None
    ufunc = prim.array_fn
    if params is None and isinstance(ufunc, np.ufunc):
        if ufunc.nout == 1 and ufunc.nin == len(operands) and \
                _ufunc_result_code(ufunc, tuple(c for c, _ in operands)) == code:
            return ufunc, shape, ()
        return None
    write = None if prim.step_facts is None else prim.step_facts.writes_into
    if write is None:
        return None
    shapes = [s for _, s in operands]
    planned_shape = write.storage_shape(params, shapes, shape)
    if planned_shape is None:
        return None
    counts = () if write.scratch is None else write.scratch(params, shapes)
    return write.kernel, tuple(planned_shape), tuple(c * itemsize for c in counts)


class MemoryPlan:
    """The planned arrays of a program (``plan_steps`` in ``_core/schedule.pxi`` chose
    them): ``sizes[a]``, the bytes of array ``a``; ``slots[s]``, ``(array indices, dtype,
    shape)`` of a planned array as its steps see it (the result's array, then any scratch
    arrays, -1 for a size 0); the step records hold the index of their slot.  Results of at
    least ``MIN_BYTES`` are planned, and those of steps with a C kernel."""

    def __init__(self, slots: list, sizes: list, n_planned: int):
        self.slots, self.sizes, self._n_planned = slots, sizes, n_planned

    @property
    def n_planned(self) -> int:
        """Steps that write into planned arrays."""
        return self._n_planned

    @property
    def nbytes(self) -> int:
        """Bytes of one set of planned arrays."""
        return sum(self.sizes)

    def new_arrays(self) -> list:
        """A fresh set of arrays, one per slot, as the interpreter takes them (None when
        nothing is planned)."""
        if not self.sizes:
            return None
        storages = [np.empty(size, np.uint8) for size in self.sizes]
        arrays, views = [], {}      # slots of one array and shape share the view
        for indices, dtype, shape in self.slots:
            key = (indices[0], dtype, shape)
            out = views.get(key)
            if out is None:
                out = views[key] = storages[indices[0]].view(dtype).reshape(shape)
            if len(indices) > 1:
                out = (out,) + tuple(None if s < 0 else storages[s].view(dtype)
                                     for s in indices[1:])
            arrays.append(out)
        return arrays


__all__ = ["MIN_BYTES", "MemoryPlan", "writers"]

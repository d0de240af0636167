"""A compiled program's memory plan: which steps write their result into arrays allocated
once and reused on every call, and which steps share an array, from the liveness, shapes
and dtypes of the values — computed once, when the program is compiled.

* **Who writes into a planned array.**  Steps with a result of at least ``MIN_BYTES`` (16
  KiB; smaller ones come cheaply from NumPy's cache and the heap) of
  primitives whose ``array_fn`` is a NumPy ufunc (with no params, one output, the dtype
  NumPy itself would give): ``ufunc(*xs, out=array)``; and of primitives that declare a
  ``writes_into`` (:mod:`tenpy_ad.step_facts`; einsum: its ``np.matmul``).  Steps of any size that get one of the
  core's C kernels (:mod:`tenpy_ad.compiler.small_kernels`: small float64 elementwise steps, small
  contractions), which write only into planned arrays.  These always return new memory,
  never a view of an operand.
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
``plan_memory`` (linear in the number of steps).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import dtypes
from .._compiled import _core
from ..primitive import PRIMITIVES
from . import small_kernels

#: results smaller than this are not planned (NumPy's cache and the heap serve them cheaply)
MIN_BYTES = MIN_BYTES_DEFAULT = 16 << 10

def _is_fresh(prim, params) -> bool:
    """Whether the impl's results never share memory with its operands (a ufunc always
    allocates its result)."""
    facts = prim.step_facts
    return (facts is not None and facts.fresh_outputs) or \
        (params is None and isinstance(prim.array_fn, np.ufunc))


@functools.lru_cache(maxsize=1024)
def _ufunc_result_code(ufunc, codes: tuple):
    """The dtype code NumPy gives ``ufunc`` on operands of ``codes`` (None: not one of
    ours, or no loop)."""
    try:
        resolved = ufunc.resolve_dtypes(tuple(dtypes.DTYPES[c] for c in codes) + (None,))
        return dtypes.code_of(resolved[-1])
    except (TypeError, ValueError, KeyError):
        return None


def writer(prim, params, operands: list, output: tuple):
    """``(kernel, storage shape, scratch bytes)`` of a step that can write into a planned
    array, or None; ``operands`` and ``output`` are ``(dtype code, shape)``."""
    code, shape = output
    if not shape or 0 in shape:
        return None                 # 0-d and empty results: nothing to gain
    found = _c_kernel(prim, params, operands, output)
    if found is not None:
        kernel, counts = found
        return kernel, shape, tuple(c * dtypes.DTYPES[code].itemsize for c in counts)
    if dtypes.DTYPES[code].itemsize * math.prod(shape) < MIN_BYTES:
        return None
    ufunc = prim.array_fn
    if params is None and isinstance(ufunc, np.ufunc):
        if ufunc.nout == 1 and ufunc.nin == len(operands) and \
                _ufunc_result_code(ufunc, tuple(c for c, _ in operands)) == code:
            return ufunc, shape, ()
        return None
    facts = prim.step_facts
    write = None if facts is None else facts.writes_into
    if write is None:
        return None
    shapes = [s for _, s in operands]
    planned_shape = write.storage_shape(params, shapes, shape)
    if planned_shape is None:
        return None
    itemsize = dtypes.DTYPES[code].itemsize
    counts = () if write.scratch is None else write.scratch(params, shapes)
    return write.kernel, planned_shape, tuple(c * itemsize for c in counts)


def _c_kernel(prim, params, operands: list, output: tuple):
    """``(kernel, scratch counts)`` of a step computed by one of the core's C kernels, or
    None."""
    kernel = small_kernels.elementwise(prim, params, operands, output)
    if kernel is not None:
        return kernel, ()
    choose = prim.step_facts.c_kernel if prim.step_facts is not None else None
    if not small_kernels.ENABLED or not callable(choose) or \
            any(code != output[0] for code, _ in operands):
        return None
    return choose(params, [s for _, s in operands], output[1], output[0])


def _c_kernel_primitives() -> set:
    """The primitives whose steps may get a C kernel, whatever their size."""
    return small_kernels.elementwise_primitives() | {
        prim for prim in PRIMITIVES.values()
        if prim.step_facts is not None and callable(prim.step_facts.c_kernel)}


class MemoryPlan:
    """Per step the planned array it writes into (or none), and the arrays' sizes.

    ``kernels[k]``: the kernel of a planned step (or None); ``storage[k]``: the indices of
    its arrays, the result's then any scratch (None: none); ``views[k]``: ``(dtype, shape)``
    of the result's array as the kernel sees it; ``sizes[s]``: bytes of array ``s``.
    Results of at least ``MIN_BYTES`` are planned, and those of steps with a C kernel.
    """

    def __init__(self, plan, enabled: bool = True):
        n = len(plan.steps)
        self.kernels, self.storage, self.views = [None] * n, [None] * n, [None] * n
        self.sizes = []
        if not enabled or n == 0:
            return
        steps, metadata = plan.steps, plan.metadata
        # the core asks about results of MIN_BYTES (read here, not bound at import: the
        # tests lower it), or of any size when a step may get a C kernel
        any_size = bool(_core.steps_using(steps, _c_kernel_primitives()))

        def step_writer(k):         # asked once per step signature (the core remembers)
            step = steps[k]
            return writer(step.prim, step.params, [metadata[b] for b in step.inputs],
                          metadata[step.outputs[0][1]])

        self.kernels, self.views, self.storage, self.sizes = _core.plan_memory(
            plan, step_writer, _is_fresh, 0 if any_size else MIN_BYTES)

    @property
    def n_planned(self) -> int:
        """Steps that write into planned arrays."""
        return sum(1 for s in self.storage if s is not None)

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
        views = {}                  # steps sharing an array and its shape share the view
        for k, indices in enumerate(self.storage):
            if indices is not None:
                dtype, shape = self.views[k]
                key = (indices[0], dtype, shape)
                out = views.get(key)
                if out is None:
                    out = views[key] = storages[indices[0]].view(dtype).reshape(shape)
                if len(indices) > 1:
                    out = (out,) + tuple(None if s < 0 else storages[s].view(dtype)
                                         for s in indices[1:])
                outs[k] = out
        return outs


__all__ = ["MemoryPlan", "writer"]

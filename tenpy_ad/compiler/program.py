"""Compiled programs: a traced graph scheduled into a flat instruction list.

``tp.compile(outputs, inputs=[...])`` orders the graph topologically (iteratively), keeps
only what the outputs need (dead-code elimination), computes each buffer's last use so it is
released right after, and pre-evaluates constants.  The Program holds no graph nodes, so
dropping a graph frees it even while its Program lives on.

Two plans are made when it is compiled and used on every call:

* a memory plan (:mod:`tenpy_ad.compiler.memory_plan`): steps that can write into arrays allocated
  once (ufuncs, einsum's matmul) reuse them from call to call and from step to step, so
  repeated runs do not page-fault fresh temporaries.  Concurrent calls of one Program get
  separate sets of arrays; nothing returned to the caller is ever overwritten.
* BLAS threads per step (:mod:`tenpy_ad.blas`), for the current ``tp.config.blas_threads``:
  a run switches only where the count changes and restores the process's setting at the
  end.
* C kernels for small steps (:mod:`tenpy_ad.compiler.small_kernels`): float64 elementwise
  arithmetic and sums, float64/complex128 contractions skip NumPy's per-call machinery.
"""
from __future__ import annotations

import numpy as np

from .._compiled import _core
from .._gcpause import paused_gc
from .._sequences import array_of, is_tensor, tensor_list
from ..config import config
from ..errors import (ArgumentError, GraphError, ProgramInputError, SaveFormatError,
                      ShapeError, TenpyAdError)
from ..primitive import TracedTensor, constant_p
from ..runtime import blas_control
from ..traced import input_p
from . import small_kernels, step_choice
from .listing import listing
from .memory_plan import MemoryPlan
from .saved_programs import load_graph, save_program
from .scalar_broadcasts import pass_through, skippable


class Program:
    """A compiled graph; call it with arrays for its inputs to get arrays for its outputs."""

    def __init__(self, outputs, inputs, reuse_buffers: bool = True):
        self._single = is_tensor(outputs)
        outputs = tensor_list(outputs, "compile", "outputs")
        inputs = tensor_list(inputs, "compile", "inputs")
        for x in outputs + inputs:
            if type(x) is not TracedTensor:
                raise ArgumentError(f"compile: outputs and inputs must be TracedTensors, got "
                                f"{type(x).__name__}")
        for x in inputs:
            if x.prim is not input_p:
                raise GraphError(f"compile: {x!r} is not a tp.input placeholder")
        if len({x.id for x in inputs}) != len(inputs):
            raise GraphError("compile: an input is listed twice")
        with paused_gc():
            self._compile(outputs, inputs, reuse_buffers)

    def _compile(self, outputs, inputs, reuse_buffers):
        plan = _core.schedule(outputs, inputs, input_p, constant_p)
        if plan.unbound is not None:
            raise GraphError(f"compile: the graph depends on {plan.unbound!r}, which is "
                             "not in inputs=[...]")
        self._plan = plan                  # holds no graph node once ``unbound`` is None
        self._input_specs = [(buf, x.shape, x.dtype, x.name)
                             for buf, x in zip(plan.inputs, inputs)]
        self._frees = _core.last_uses(plan)  # per step: the buffers dead after it
        self._memory = MemoryPlan(plan, enabled=reuse_buffers)
        self._skipped = skippable(plan)    # broadcasts of scalars the readers make
        self._scalar_kernels = small_kernels.scalar_steps(plan)   # 0-d results in C
        self._idle_arrays = []            # sets of planned arrays not in use by a call
        self._by_setting = {}             # blas_threads setting -> (kernels, threads)

    # ------------------------------------------------------------------ running

    def _bind_inputs(self, args) -> list:
        if len(args) != len(self._input_specs):
            raise ProgramInputError(f"program: it takes {len(self._input_specs)} inputs "
                                    f"({self._input_names()}), got {len(args)}")
        buffers = list(self._plan.template)
        for k, ((buf, shape, dtype, name), value) in enumerate(zip(self._input_specs, args)):
            label = f"program: input {k}" + (f" ({name!r})" if name else "")
            array = self._input_array(value, label)
            if array.shape != shape:
                raise ProgramInputError(f"{label}: expected shape {list(shape)}, got "
                                        f"{list(array.shape)}")
            if array.dtype != dtype:
                if not np.can_cast(array.dtype, dtype, "safe"):
                    raise ProgramInputError(f"{label}: expected dtype {dtype.name}, got "
                                            f"{array.dtype.name} (no safe cast)")
                array = array.astype(dtype)
            if buf >= 0:
                buffers[buf] = array
        return buffers

    def _input_names(self) -> str:
        """The inputs as a caller names them: ``'x', input 1, 'y'``."""
        return ", ".join(repr(name) if name else f"input {k}"
                         for k, (_, _, _, name) in enumerate(self._input_specs))

    @staticmethod
    def _input_array(value, label: str) -> np.ndarray:
        try:
            array = array_of(value, label, copy=False)
        except ShapeError as error:
            raise ProgramInputError(str(error)) from None
        if array.dtype.kind not in "biufc":
            raise ProgramInputError(f"{label}: expected numbers, got an array of dtype "
                                    f"{array.dtype} (from {type(value).__name__})")
        return array

    def _kernels(self, setting) -> tuple:
        """Per step what to call instead of its impl (None: the impl) and its BLAS threads
        (None if no step switches)."""
        found = self._by_setting.get(setting)
        if found is None:
            steps, metadata = self._plan.steps, self._plan.metadata
            kernels, threads = list(self._memory.kernels), None
            for k in self._skipped:
                kernels[k] = pass_through
            for k, kernel in self._scalar_kernels.items():
                kernels[k] = kernel
            for k in _core.steps_using(steps, step_choice.threaded_primitives()):
                step = steps[k]
                operands = [metadata[b] for b in step.inputs]
                count = step_choice.blas_threads(step.prim, step.params, operands, setting)
                if kernels[k] is None:
                    kernels[k] = step_choice.blas_kernel(step.prim, step.params, operands)
                if count is not None:
                    threads = threads or [None] * len(steps)
                    threads[k] = count
            if all(kernel is None for kernel in kernels):
                kernels = None                     # every step calls its impl
            found = self._by_setting[setting] = (kernels, threads)
        return found

    def _run(self, buffers) -> None:
        kernels, threads = self._kernels(config.blas_threads)
        try:
            outs = self._idle_arrays.pop()        # atomic: each call gets its own set
        except IndexError:
            outs = self._memory.new_arrays()
        try:
            if threads is None:
                _core.execute(self._plan.steps, self._frees, buffers, kernels, outs)
                return
            control = blas_control()
            control.enter_call()
            try:
                _core.execute(self._plan.steps, self._frees, buffers, kernels, outs,
                              threads, control)
            finally:
                control.leave_call()
        finally:
            if outs is not None:
                self._idle_arrays.append(outs)

    def __call__(self, *args):
        buffers = self._bind_inputs(args)
        self._run(buffers)
        results = []
        for b in self._plan.outputs:
            value = buffers[b]
            if not isinstance(value, np.ndarray) or not value.flags.writeable:
                value = np.array(value)
            results.append(value)
        return results[0] if self._single else results

    def save(self, path) -> None:
        """Write the program to ``path`` in a safe format (JSON structure and .npy
        constants in a zip; nothing is unpickled on load).  See :func:`load_program`."""
        save_program(self._plan, self._input_specs, self._single, path)

    # ------------------------------------------------------------------ introspection

    @property
    def n_instructions(self) -> int:
        """Number of instructions executed per call."""
        return len(self._plan.steps)

    def release_buffers(self) -> None:
        """Free the planned arrays kept between calls (the next call allocates them
        again); a program keeps about its peak working memory otherwise."""
        self._idle_arrays.clear()

    @property
    def memory_plan(self) -> MemoryPlan:
        """Which steps write into planned arrays, and the arrays' sizes."""
        return self._memory

    def blas_threads(self, setting=None) -> list:
        """``(step, primitive name, threads)`` of every step that sets BLAS threads under
        ``setting`` (default ``tp.config.blas_threads``): ``0`` is the process's own
        setting (see :mod:`tenpy_ad.blas`)."""
        _, threads = self._kernels(config.blas_threads if setting is None else setting)
        steps = self._plan.steps
        return [] if threads is None else [(k, steps[k].prim.name, count)
                                           for k, count in enumerate(threads)
                                           if count is not None]

    def kernel_kinds(self) -> list:
        """Per step what computes it: the kind of the core's C kernel ("add", "scale",
        "gemm", ...; see :mod:`tenpy_ad.compiler.small_kernels`; "pass" for a skipped broadcast)
        or "numpy"."""
        kernels, _ = self._kernels(config.blas_threads)
        if kernels is None:
            return ["numpy"] * len(self._plan.steps)
        return [small_kernels.kind_of(kernel) for kernel in kernels]

    @property
    def n_nodes(self) -> int:
        """Number of graph nodes the program was compiled from (after pruning)."""
        return len(self._plan.metadata)

    def __repr__(self):
        return (f"<Program: {len(self._input_specs)} inputs, {len(self._plan.outputs)} "
                f"outputs, {self.n_instructions} instructions>")

    def __str__(self):
        return listing(self._plan, self._input_specs)


def compile(outputs, inputs, reuse_buffers: bool = True) -> Program:  # noqa: A001
    """Compile ``outputs`` (a TracedTensor, or a list/tuple of them) as functions of
    ``inputs`` (a tp.input placeholder, or a list/tuple of them).  Called with one array
    per input, the program returns one array for a single output, else a list.

    ``reuse_buffers=False`` turns the memory plan off (every step allocates its result, as
    NumPy does); results are bit-identical either way."""
    return Program(outputs, inputs, reuse_buffers)


def evaluate(outputs, feed: dict):
    """Compile and run once: ``feed`` maps each input placeholder to its array."""
    if not isinstance(feed, dict):
        raise ArgumentError(f"evaluate: feed must be a dict of placeholders to arrays, got "
                            f"{type(feed).__name__}")
    program = Program(outputs, list(feed))
    return program(*feed.values())


def load_program(path, *, max_bytes: int | None = None, max_json_bytes: int | None = None,
                 max_depth: int | None = None, max_nodes: int | None = None,
                 max_members: int | None = None) -> Program:
    """A Program compiled from a file written by ``Program.save``.

    The keywords raise the loading limits (defaults:
    :data:`tenpy_ad.compiler.saved_programs.LIMITS`; see :func:`load_graph`), e.g.
    ``tp.load_program(path, max_bytes=4 << 30)`` for 4 GiB of constants.  Any failure raises
    :class:`~tenpy_ad.errors.SaveFormatError` naming the archive member and, for a limit,
    the limit and its value."""
    inputs, outputs = load_graph(path, max_bytes=max_bytes, max_json_bytes=max_json_bytes,
                                 max_depth=max_depth, max_nodes=max_nodes,
                                 max_members=max_members)
    try:
        return Program(outputs, inputs)
    except (TenpyAdError, ValueError, TypeError, LookupError, ArithmeticError) as error:
        raise SaveFormatError(f"{path}: the saved graph does not compile ({error})") from error


__all__ = ["Program", "compile", "evaluate", "load_program"]

"""Compiled programs: a traced graph scheduled into a flat list of step records.

``tp.compile(outputs, inputs=[...])`` goes to the core twice and keeps no graph node:

1. the core's ``schedule`` orders the graph topologically (iteratively, "as late as
   possible"), keeps only what the outputs need (dead-code elimination), gives each value a
   buffer and lists the distinct signatures of the steps (primitive, params, dtypes and
   shapes);
2. :func:`step_choice.choose <tenpy_ad.compiler.step_choice.choose>` answers each signature
   once from the facts its primitive declares (:mod:`tenpy_ad.step_facts`): whether it
   writes into a planned array and how, a C kernel for small steps
   (:mod:`tenpy_ad.compiler.small_kernels`), what a BLAS-calling step calls and its
   threads for the current ``tp.config.blas_threads`` (:mod:`tenpy_ad.blas`), whether a
   broadcast may be skipped;
3. the core's ``plan_steps`` applies the answers to every step: the buffers dead after it,
   the skipped broadcasts, the memory plan (:mod:`tenpy_ad.compiler.memory_plan`: steps
   that can write into arrays allocated once reuse them from call to call and from step to
   step, so repeated runs do not page-fault fresh temporaries) and each step's record.

A call runs the records in the core's interpreter (``execute``), one set of planned arrays
per concurrent call (nothing returned to the caller is ever overwritten), switching BLAS
threads only where a step sets them and restoring the process's setting at the end.
Dropping a graph frees it even while its Program lives on.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .._compiled import _core
from .._gcpause import paused_gc
from .._sequences import array_of, is_tensor, tensor_list
from ..config import config
from ..errors import (ArgumentError, GraphError, ProgramInputError, SaveFormatError,
                      ShapeError, TenpyAdError)
from ..primitive import constant_p, is_traced
from ..runtime import blas_control
from ..traced import input_p
from . import small_kernels, step_choice
from .listing import listing
from .memory_plan import MemoryPlan
from .saved_programs import load_graph, save_program


class Program:
    """A compiled graph; call it with arrays for its inputs to get arrays for its outputs."""

    def __init__(self, outputs, inputs, reuse_buffers: bool = True):
        self._single = is_tensor(outputs)
        outputs = tensor_list(outputs, "compile", "outputs")
        inputs = tensor_list(inputs, "compile", "inputs")
        for x in outputs + inputs:
            if not is_traced(x):
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
        setting = config.blas_threads
        self._choices = step_choice.choose(plan.signatures, reuse_buffers, setting)
        slots, sizes, n_planned, threaded = _core.plan_steps(
            plan, self._choices, reuse_buffers, step_choice.MIN_SHARE)
        self._memory = MemoryPlan(slots, sizes, n_planned)
        self._idle_arrays = []            # sets of planned arrays not in use by a call
        # blas_threads setting -> (the step records, whether any sets BLAS threads)
        self._by_setting = {setting: (_core.StepTable(plan.steps), threaded)}

    # ------------------------------------------------------------------ running

    def _bind_inputs(self, args, start: int = 0, stop: int | None = None,
                     template: list | None = None) -> list:
        """The buffers with ``args`` as inputs ``start, ..., stop - 1`` (checked), the
        others as in ``template`` (default: the plan's: none bound)."""
        stop = len(self._input_specs) if stop is None else stop
        if len(args) != stop - start:
            raise ProgramInputError(f"program: it takes {len(self._input_specs)} inputs "
                                    f"({self._input_names()}), got {len(args)}")
        buffers = list(self._plan.template if template is None else template)
        for k, ((buf, shape, dtype, name), value) in enumerate(
                zip(self._input_specs[start:stop], args), start):
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

    def _steps_for(self, setting) -> tuple:
        """The step records for a ``tp.config.blas_threads`` setting (those of another
        setting than the compile's are copies where the threads differ) as the
        interpreter's StepTable, and whether any sets BLAS threads."""
        found = self._by_setting.get(setting)
        if found is None:
            threads = step_choice.threads_of(self._plan.signatures, setting)
            changed = any(count is not None and count != choice.threads
                          for count, choice in zip(threads, self._choices))
            steps = _core.rethreaded(self._plan.steps, threads) if changed else \
                self._plan.steps
            found = self._by_setting[setting] = (_core.StepTable(steps),
                                                 bool(_core.threaded_steps(steps)))
        return found

    def _run(self, buffers) -> None:
        table, threaded = self._steps_for(config.blas_threads)
        try:
            arrays = self._idle_arrays.pop()      # atomic: each call gets its own set
        except IndexError:
            arrays = self._memory.new_arrays()
        try:
            if not threaded:
                _core.execute(table, buffers, arrays)
                return
            control = blas_control()
            control.enter_call()
            try:
                _core.execute(table, buffers, arrays, control)
            finally:
                control.leave_call()
        finally:
            if arrays is not None:
                self._idle_arrays.append(arrays)

    def __call__(self, *args):
        return self._results(self._bind_inputs(args))

    def with_last_inputs(self, values, trusted: int = 0) -> Callable:
        """The program as a function of its first inputs, the last ones fixed to
        ``values`` (checked once: a solver applies a step many times with the same
        operands).  The last ``trusted`` of ``values`` are arrays that another program
        made for exactly these inputs (a staged step's prepared values): bound as they
        are when their shape and dtype are the inputs', else checked like the others."""
        values = list(values)
        head = len(self._input_specs) - len(values)
        if head < 0:
            raise ProgramInputError(f"program: it takes {len(self._input_specs)} inputs "
                                    f"({self._input_names()}), got {len(values)} to fix")
        stop = len(self._input_specs) - trusted
        fixed = self._bind_inputs(values[:len(values) - trusted], head, stop)
        for k, ((buf, shape, dtype, _), value) in enumerate(
                zip(self._input_specs[stop:], values[stop - head:]), stop):
            if type(value) is not np.ndarray or value.shape != shape or value.dtype != dtype:
                fixed = self._bind_inputs([value], k, k + 1, fixed)    # (checked, cast)
            elif buf >= 0:
                fixed[buf] = value

        def call(*args):
            return self._results(self._bind_inputs(args, 0, head, fixed))
        return call

    def _results(self, buffers):
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
        table, _ = self._steps_for(config.blas_threads if setting is None else setting)
        steps = table.steps
        return [(k, steps[k].prim.name, steps[k].threads)
                for k in _core.threaded_steps(steps)]

    def kernel_kinds(self) -> list:
        """Per step what computes it: the kind of the core's C kernel ("add", "scale",
        "gemm", ...; see :mod:`tenpy_ad.compiler.small_kernels`; "pass" for a skipped
        broadcast) or "numpy"."""
        return [small_kernels.kind_of(step.kernel) for step in self._plan.steps]

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

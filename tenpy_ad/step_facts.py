"""What compiling a program needs to know about a primitive's steps, declared next to the
primitive's definition (in ``tenpy_ad/ops/``) with :func:`declare_steps` and kept on the
primitive itself (``prim.step_facts``, a :class:`StepFacts`, None when it declares none).
The compiler (:mod:`tenpy_ad.compiler.step_choice`) reads them when it plans a program;
nothing here decides anything:

* ``fresh_outputs``: the impl's results never share memory with its operands (else a result
  may be a view of one, and the memory plan keeps their arrays reserved while it lives); a
  primitive whose ``array_fn`` is a NumPy ufunc is fresh without params, undeclared;
* ``writes_into``: a :class:`PlannedWrite`, how a step writes its result into an array that
  the program allocates once (einsum: its matmul's product);
* ``c_kernel``: which of the core's C kernels may compute a small step: an
  :class:`ElementwiseLoop` (add, ..., shift), :data:`FULL_SUM` (a sum of every value), or a
  function choosing one per step (einsum: a gemm);
* ``blas``: a :class:`BlasWork`, the BLAS/LAPACK work of a call for the threads policy
  (declared by :func:`tenpy_ad.blas.threaded`, which wraps the eager impl as well);
* ``broadcasts_scalar``: a broadcast whose 0-d operand a ufunc reading its result would
  broadcast by itself (a program may skip it).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .errors import ArgumentError, ArgumentValueError

#: the operations of the core's elementwise loops (``_core/small_kernels.pxi``)
ELEMENTWISE_OPS = ("add", "sub", "mul", "div", "neg", "scale", "shift")


@dataclass(frozen=True)
class PlannedWrite:
    """How a step writes its result into a planned array.

    ``storage_shape(params, operand_shapes, output_shape)`` -> the shape of the array the
    kernel needs (of the output's dtype and size), or None when it cannot for these
    operands; ``scratch(params, operand_shapes)`` -> element counts (of the output's dtype)
    of scratch arrays it may use during the step.  ``kernel(out, params, *arrays)`` computes
    the step into ``out`` -- the array, or ``(array, *scratch)`` with flat scratch arrays
    (None for a count 0) -- and returns the result (the array or a view of it)."""
    storage_shape: Callable
    kernel: Callable
    scratch: Callable | None = None


@dataclass(frozen=True)
class ElementwiseLoop:
    """The core's elementwise loop ``op`` (one of :data:`ELEMENTWISE_OPS`) for small float64
    steps.  ``constant(params)`` gives scale's factor or shift's term (a float, else the
    step keeps NumPy); ``numpy_fn`` is NumPy's ufunc for it (default: the primitive's
    ``array_fn``), which a step the loop declines calls into its planned array."""
    op: str
    constant: Callable | None = None
    numpy_fn: Callable | None = None


@dataclass(frozen=True)
class FullSum:
    """The core's summation in NumPy's order, for small float64 steps of a sum over the axes
    its params give that sum every value."""


FULL_SUM = FullSum()


@dataclass(frozen=True)
class BlasWork:
    """A primitive whose impl runs BLAS/LAPACK: ``work(params, *shapes)`` -> ``(kind,
    work)`` (or None: no BLAS call for these operands; see :mod:`tenpy_ad.blas`);
    ``impl`` the impl a program calls (without the eager per-call decision);
    ``specialize(params, *shapes)`` -> a kernel for those shapes made when a program is
    compiled (None: ``impl``)."""
    work: Callable
    impl: Callable
    specialize: Callable | None = None


@dataclass(frozen=True)
class StepFacts:
    """The facts a primitive has declared (see the module's docstring)."""
    fresh_outputs: bool = False
    writes_into: PlannedWrite | None = None
    c_kernel: object = None
    blas: BlasWork | None = None
    broadcasts_scalar: bool = False


_FIELDS = frozenset(field.name for field in dataclasses.fields(StepFacts))


def declare_steps(prim, **facts) -> StepFacts:
    """Declare facts of ``prim``'s program steps (the keywords are :class:`StepFacts`'
    fields); later declarations add to earlier ones.  Returns the primitive's facts."""
    unknown = sorted(set(facts) - _FIELDS)
    if unknown:
        raise ArgumentError(f"declare_steps: {prim.name}: no step fact {unknown[0]!r} "
                            f"(known: {', '.join(sorted(_FIELDS))})")
    loop = facts.get("c_kernel")
    if isinstance(loop, ElementwiseLoop):
        facts["c_kernel"] = _complete(prim, loop)
    current = prim.step_facts or StepFacts()
    prim.step_facts = dataclasses.replace(current, **facts)
    return prim.step_facts


def _complete(prim, loop: ElementwiseLoop) -> ElementwiseLoop:
    """``loop`` with NumPy's ufunc filled in, checked."""
    if loop.op not in ELEMENTWISE_OPS:
        raise ArgumentValueError(f"declare_steps: {prim.name}: no elementwise loop "
                                 f"{loop.op!r} (known: {', '.join(ELEMENTWISE_OPS)})")
    numpy_fn = loop.numpy_fn or prim.array_fn
    if not isinstance(numpy_fn, np.ufunc):
        raise ArgumentError(f"declare_steps: {prim.name} needs a NumPy ufunc for its "
                            "elementwise loop")
    return dataclasses.replace(loop, numpy_fn=numpy_fn)


__all__ = ["StepFacts", "PlannedWrite", "ElementwiseLoop", "FullSum", "FULL_SUM",
           "BlasWork", "ELEMENTWISE_OPS", "declare_steps"]

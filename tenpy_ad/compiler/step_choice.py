"""What computes each kind of program step, decided once when a program is compiled.

The core's ``schedule`` gives the distinct signatures of a plan's steps (primitive,
params, the dtypes and shapes of operands and result) that the compiler may do something
about: those of primitives that declare step facts (:mod:`tenpy_ad.step_facts`) and of
ufuncs without params.  :func:`choose` answers each once, reading only the primitive's
declared facts, with a ``StepChoice``; the core's ``plan_steps`` then applies the answers
to every step (linear passes in C, no call back here):

* whether and how a step writes into a planned array (:func:`memory_plan.writers
  <tenpy_ad.compiler.memory_plan.writers>`: a C kernel, a ufunc or the primitive's
  ``writes_into``), and whether its results are new memory;
* a C kernel for a 0-d result (:mod:`tenpy_ad.compiler.small_kernels`);
* for primitives that declare BLAS work, what a program calls (their kernel for the
  shapes, or the impl without the eager per-call decision) and the BLAS threads of the
  step under ``tp.config.blas_threads`` (:mod:`tenpy_ad.blas`);
* skipped broadcasts.  Elementwise primitives take operands of one shape, so ``x / norm``
  builds a ``broadcast_in_dim`` of the scalar ``norm`` to ``x``'s shape before the
  ``div``: in a program an allocation and a copy (about 1.2 µs on a small array, as much
  as the division), while a ufunc reading it would broadcast the 0-d value itself.  A
  broadcast of a 0-d value (its primitive declares ``broadcasts_scalar``) whose every
  reader is a ufunc step with another operand of the full shape, and that is no program
  output, passes its operand through (the readers give the same values: NumPy broadcasts
  a 0-d operand exactly as the copy would have).  Only when at least :data:`MIN_SHARE` of
  the steps are such broadcasts does the core look for them.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .._compiled import _core
from ..blas import threads_of_work
from . import memory_plan, small_kernels

#: below this share of steps the search for skippable broadcasts costs more than it saves
MIN_SHARE = 0.01

StepChoice = _core.StepChoice


def choose(signatures: list, plan_memory: bool, setting) -> list:
    """The StepChoice of each ``(prim, params, operand metadata, result metadata)`` of
    ``signatures`` (metadata: ``(dtype code, shape)``; the result's is None for several
    outputs); ``plan_memory``: whether steps may write into planned arrays; ``setting``:
    the ``tp.config.blas_threads`` the threads are chosen for."""
    into_kernels, scalar_kernels = small_kernels.choose(signatures)
    writes = memory_plan.writers(signatures, into_kernels) if plan_memory else \
        [None] * len(signatures)
    return [_choice(signature, write, kernel, setting)
            for signature, write, kernel in zip(signatures, writes, scalar_kernels)]


def _choice(signature: tuple, write, kernel, setting):
    """The StepChoice of a signature with its planned ``write`` (or None) and the C
    ``kernel`` of a 0-d result (or None)."""
    prim, params, operands, result = signature
    facts = prim.step_facts
    into, shape, scratch = (None, None, ()) if write is None else write
    threads = None
    if facts is not None and facts.blas is not None:
        if kernel is None:
            kernel = blas_kernel(prim, params, operands)
        threads = blas_threads(prim, params, operands, setting)
    fresh = (facts is not None and facts.fresh_outputs) or \
        (params is None and isinstance(prim.array_fn, np.ufunc))
    passes = facts is not None and facts.broadcasts_scalar and operands[0][1] == ()
    return StepChoice(kernel, into, shape, scratch, -1 if threads is None else threads,
                      fresh, passes)


def threads_of(signatures: list, setting) -> list:
    """Per signature the BLAS threads its steps set under ``setting`` (-1: as they are),
    None for one whose primitive declares no BLAS work."""
    threads = [None] * len(signatures)
    for s, (prim, params, operands, _) in enumerate(signatures):
        if prim.step_facts is not None and prim.step_facts.blas is not None:
            count = blas_threads(prim, params, operands, setting)
            threads[s] = -1 if count is None else count
    return threads


def blas_threads(prim, params, operands, setting):
    """The BLAS threads of a step of ``prim`` on ``operands`` (``(dtype code, shape)``
    each) under ``setting``: None (as they are), ``runtime.PROCESS`` or a count."""
    work = prim.step_facts.blas if prim.step_facts is not None else None
    if work is None:
        return None
    return threads_of_work(work.work, params, [shape for _, shape in operands],
                           dtypes.is_complex(operands[0][0]), setting)


def blas_kernel(prim, params, operands):
    """What a program calls for a step of a primitive that declares BLAS work: its kernel
    for these shapes, or the impl without the eager per-call decision."""
    work = prim.step_facts.blas
    specialized = None if work.specialize is None else \
        work.specialize(params, *[shape for _, shape in operands])
    return specialized or work.impl


__all__ = ["MIN_SHARE", "StepChoice", "choose", "threads_of", "blas_threads", "blas_kernel"]

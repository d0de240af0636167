"""Program steps that need not run: broadcasts of a 0-d value read only by NumPy ufuncs.

Elementwise primitives take operands of one shape, so ``x / norm`` builds a
``broadcast_in_dim`` of the scalar ``norm`` to ``x``'s shape before the ``div``.  In a
compiled program that step is an array allocation and copy (about 1.2 µs on a small
array, as much as the division itself), while the ufunc that reads it would broadcast the
0-d value by itself.  When every reader of such a broadcast is a ufunc step whose other
operand already has the full shape, the program skips the broadcast: the step passes its
0-d operand through, and the readers give the same values (NumPy broadcasts a 0-d operand
exactly as the copy would have).  A broadcast whose result is a program output, or is
read by anything else, runs as before.
"""
from __future__ import annotations

import numpy as np

from .._compiled import _core
from ..primitive import PRIMITIVES

#: below this share of steps the search for skippable broadcasts costs more than it saves
MIN_SHARE = 0.01


#: the kernel of a skipped broadcast: its 0-d operand (run by the core, no Python call)
pass_through = _core.PassThrough()


def skippable(plan) -> list:
    """The indices of the steps of ``plan`` that may pass their 0-d operand through."""
    steps, metadata = plan.steps, plan.metadata
    candidates = {}
    broadcasts = {prim for prim in PRIMITIVES.values()
                  if prim.step_facts is not None and prim.step_facts.broadcasts_scalar}
    for k in _core.steps_using(steps, broadcasts):
        step = steps[k]
        if metadata[step.inputs[0]][1] == ():
            candidates[step.outputs[0][1]] = k
    if len(candidates) < MIN_SHARE * len(steps):
        return []
    outputs = set(plan.outputs)
    ruled_out = {b for b in candidates if b in outputs}
    for step in steps:
        for b in step.inputs:
            if b in candidates and b not in ruled_out and \
                    not _broadcasts_itself(step, b, metadata, candidates):
                ruled_out.add(b)
    return sorted(k for b, k in candidates.items() if b not in ruled_out)


def _broadcasts_itself(step, buffer: int, metadata, candidates) -> bool:
    """Whether ``step`` is a ufunc step with another operand of the full result shape that
    is not itself a broadcast that may be skipped (two skipped operands would make the
    result 0-d)."""
    if step.params is not None or not isinstance(step.prim.array_fn, np.ufunc):
        return False
    shape = metadata[step.outputs[0][1]][1]
    return any(b != buffer and b not in candidates and metadata[b][1] == shape
               for b in step.inputs)

"""A traced step compiled in two stages: what its fixed operands alone determine, run once,
and the rest, run at each step.

An iterative solver applies one step many times with the same fixed operands: a fixed
point ``x -> f(x, args)``, and above all the linear problems of its derivatives, whose
step is a pullback or a pushforward of ``f`` *at* the solution (the forward values of
``f`` at ``x*`` are the same at every application; only the cotangent or tangent
changes).  Compiled as one program, every application would compute those forward values
again.  :class:`StagedProgram` cuts the traced step where the part that depends on the
iterate reads the part that does not: ``prepare`` computes the cut's values from the fixed
operands, and ``step`` takes them as inputs, as JAX's ``linearize`` keeps a function's
linearisation.
"""
from __future__ import annotations

from typing import Callable, Sequence

from .compiler import compile as compile_program
from .introspection import graph_nodes
from .primitive import bind, graph_mode
from .traced import input as placeholder

#: nodes that are never cut: a step takes them as they are
_UNCUT = frozenset(["input", "constant"])


class StagedProgram:
    """``outputs`` of the traced step on placeholders ``varying`` (the iterate) and
    ``fixed`` (the operands a solve keeps), compiled as ``prepare(fixed) -> cut`` and
    ``step(varying, fixed, cut) -> outputs``.  ``bind(fixed_values)`` runs ``prepare``
    once and returns the step as a function of the iterate's arrays.

    With ``head=k``, also a step that computes only the first ``k`` outputs from the
    first ``k`` varying operands (the rest of the step pruned; the others must not be
    read by those outputs): ``bind_head`` gives both, sharing one ``prepare``."""

    def __init__(self, outputs: Sequence, varying: Sequence, fixed: Sequence,
                 head: int | None = None):
        varying, fixed, outputs = list(varying), list(fixed), list(outputs)
        cut = _cut(outputs, varying)
        self.cut_size = len(cut)
        stand_ins = [placeholder(x.shape, x.dtype) for x in cut]
        if cut:
            outputs = substituted(outputs, {id(x): s for x, s in zip(cut, stand_ins)})
        self.prepare = compile_program(cut, fixed) if cut else None
        self.step = compile_program(outputs, varying + fixed + stand_ins)
        self.head_step = None if head is None else \
            compile_program(outputs[:head], varying[:head] + fixed + stand_ins)

    def bind(self, fixed_values: Sequence) -> Callable:
        """The step as a function of the iterate's arrays, for these fixed operands."""
        return self._bound(self.step, self._prepared(fixed_values))

    def bind_head(self, fixed_values: Sequence) -> tuple:
        """``(head step, whole step)`` for these fixed operands, prepared once."""
        prepared = self._prepared(fixed_values)
        return self._bound(self.head_step, prepared), self._bound(self.step, prepared)

    def _prepared(self, fixed_values: Sequence) -> list:
        fixed_values = list(fixed_values)
        if self.prepare is not None:
            fixed_values += list(self.prepare(*fixed_values))
        return fixed_values

    def _bound(self, program, fixed_values: list) -> Callable:
        # the fixed operands checked once; prepare's outputs, made for the step, not at all
        step = program.with_last_inputs(fixed_values, trusted=self.cut_size)
        return lambda xs: list(step(*xs))


def _cut(outputs: list, varying: list) -> list:
    """The nodes that do not depend on ``varying`` and that a node which does reads (or
    that are outputs), placeholders and constants aside; in topological order."""
    nodes = graph_nodes(outputs)
    depends = {id(x) for x in varying}
    for node in nodes:
        if id(node) not in depends and any(id(x) in depends for x in node.inputs):
            depends.add(id(node))
    read, cut = set(), []
    wanted = [x for node in nodes if id(node) in depends for x in node.inputs] + outputs
    for x in wanted:
        if id(x) not in depends and id(x) not in read and x.prim.name not in _UNCUT:
            read.add(id(x))
            cut.append(x)
    return cut


def substituted(outputs: list, substitutes: dict) -> list:
    """``outputs`` rebuilt with ``substitutes`` (node id -> node): every node that reads a
    substituted one is bound again, in topological order (one pass, no recursion)."""
    built = dict(substitutes)
    with graph_mode():                 # the nodes as they are (no in-place forwarding)
        for node in graph_nodes(outputs):
            if id(node) in built or not any(id(x) in built for x in node.inputs):
                continue
            result = bind(node.prim, node.params, *[built.get(id(x), x) for x in node.inputs])
            built[id(node)] = result[node.slot] if node.prim.n_outputs > 1 else result
    return [built.get(id(y), y) for y in outputs]

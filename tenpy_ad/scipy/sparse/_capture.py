"""What a matvec closes over: the tensors an operator ``v -> matvec(v)`` depends on, found
by calling it once on a probe, and the matvec on arrays.

* Traced: ``matvec`` runs on a ``tp.input`` placeholder.  The nodes that depend on it form
  the operator; the other nodes they read that depend on a placeholder (the *frontier*)
  are the captured tensors.  The operator is rebuilt on fresh placeholders for the probe and the
  captured tensors and compiled, so it runs on arrays with any captured values.
* Eager: an eager tensor that requires grad cannot enter a traced graph (nor can a traced
  vector enter NumPy code), so the traced probe fails; the operator is then used as it is: on arrays under ``tp.no_grad`` for the
  values, on tensors (recording the tape) for the derivatives.

Traced, the operator is also kept as a graph :class:`OperatorGraph` ``y = A(c) v`` on
placeholders, from which the derivative rules build, as ordinary (differentiable) graph
nodes, ``A(c) x`` at any vector ``x`` and the partial derivatives in the captured tensors
``c`` at a fixed ``x``: ``dA x`` (the JVP in ``c``) and ``d<u, A(c) x>/dc`` (the VJP).
Because these are plain nodes of ``x`` and ``c``, the rules that use them are themselves
differentiable, to any order.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ... import introspection
from ...compiler import compile as compile_program
from ...eager import no_grad
from ...errors import ArgumentError, ConcretizationError, NotDifferentiableError
from ...primitive import (bind, current, full_like, graph_mode, is_traced, needs_grad,
                         plain_value)
from ...ad import jvp as graph_jvp, vjp as graph_vjp
from ...traced import input as placeholder


class Captured:
    """An operator's matvec as a function of arrays ``(v, captured)``.

    ``tensors`` are the captured traced tensors (operands of the primitives that use the
    operator; empty in eager mode, where ``matvec`` closes over the tensors itself);
    ``graph`` (traced only) the :class:`OperatorGraph` the derivative rules build from."""

    def __init__(self, name: str, n: int, dtype, tensors: tuple, forward: Callable,
                 adjoint: Callable, graph: "OperatorGraph | None" = None):
        self.name, self.n, self.dtype = name, n, np.dtype(dtype)
        self.tensors = tensors
        self._forward, self._adjoint = forward, adjoint
        self.graph = graph

    def matvec(self, v: np.ndarray, captured: tuple) -> np.ndarray:
        return np.asarray(self._forward(v, captured))

    def rmatvec(self, u: np.ndarray, captured: tuple) -> np.ndarray:
        """``A^H u``: the VJP of the (linear) matvec in ``v``."""
        return np.asarray(self._adjoint(u, captured))

    @property
    def traced(self) -> bool:
        return bool(self.tensors)


def capture(name: str, matvec: Callable, n: int, dtype) -> Captured:
    """The operator ``matvec`` of size ``n`` (see the module docstring)."""
    probe = placeholder((n,), np.dtype(dtype))
    try:
        out = current(matvec(probe))      # (a written result: its value's node)
    except (NotDifferentiableError, ConcretizationError):
        # an eager tensor that requires grad, or a matvec that needs values (NumPy/SciPy
        # code): the eager way, where the tape sees what the matvec does with tensors
        return _eager(name, matvec, n, dtype)
    if not is_traced(out):
        raise ArgumentError(f"{name}: the matvec returned {type(out).__name__} for a traced "
                            "vector; it must compute with the tensors it is given "
                            "(tp.* or NumPy functions on tensors), not convert them")
    nodes, frontier = _frontier(probe, out)
    if not frontier:
        return _eager(name, matvec, n, dtype)     # nothing traced: constant or eager
    graph = _operator_graph(probe, nodes, frontier, out)
    return Captured(name, n, dtype, tuple(frontier),
                    lambda v, c: graph.program()(v, *c)[0],
                    lambda u, c: graph.adjoint().program()(u, *c)[0], graph)


def _frontier(probe, out) -> tuple:
    """The nodes that depend on ``probe`` (inputs first) and the other nodes they read that
    depend on a placeholder (nodes of constants alone stay in the operator), each once."""
    depends, variable = {id(probe)}, set()
    nodes, frontier, seen = [], [], set()
    for node in introspection.graph_nodes([out]):
        if node.prim.name == "input" or any(id(x) in variable for x in node.inputs):
            variable.add(id(node))
        if node is probe or not any(id(x) in depends for x in node.inputs):
            continue
        depends.add(id(node))
        nodes.append(node)
    for node in nodes:
        for x in node.inputs:
            if id(x) not in depends and id(x) in variable and id(x) not in seen:
                seen.add(id(x))
                frontier.append(x)
    return nodes, frontier


def _replay(nodes, substitutes: dict):
    """The graph of ``nodes`` rebuilt with ``substitutes`` (id -> node) for its inputs."""
    built = dict(substitutes)
    with graph_mode():                  # the nodes as they are (no in-place forwarding)
        for node in nodes:
            inputs = [built.get(id(x), x) for x in node.inputs]
            result = bind(node.prim, node.params, *inputs)
            built[id(node)] = result[node.slot] if node.prim.n_outputs > 1 else result
    return built


def _operator_graph(probe, nodes, frontier, out) -> "OperatorGraph":
    """The matvec rebuilt on fresh placeholders for the vector and the captured tensors."""
    v = placeholder(probe.shape, probe.dtype)
    cs = [placeholder(x.shape, x.dtype) for x in frontier]
    built = _replay(nodes, {id(probe): v, **{id(x): c for x, c in zip(frontier, cs)}})
    return OperatorGraph(v, tuple(cs), built[id(out)])


def substitute(outputs: list, substitutes: dict) -> list:
    """``outputs`` rebuilt with ``substitutes`` (placeholder id -> tensor): every node that
    depends on a substituted placeholder is bound again (in topological order, one pass);
    the others (constants) are kept."""
    built = dict(substitutes)
    with graph_mode():
        for node in introspection.graph_nodes(outputs):
            if id(node) in built or not any(id(x) in built for x in node.inputs):
                continue
            inputs = [built.get(id(x), x) for x in node.inputs]
            result = bind(node.prim, node.params, *inputs)
            built[id(node)] = result[node.slot] if node.prim.n_outputs > 1 else result
    return [built.get(id(y), y) for y in outputs]


class OperatorGraph:
    """``y = G(c, x)``, linear in ``x``, as a graph on placeholders ``x`` and ``c``; its
    derivative graphs are built once, on first use, and instantiated per call by
    :func:`substitute` (so that what a rule builds from them is differentiable again)."""

    def __init__(self, x, cs: tuple, y):
        self.x, self.cs, self.y = x, cs, y
        self._program = self._adjoint = self._jvp = self._vjp = None

    def program(self):
        """``G`` on arrays: a program of ``(x, *c)``."""
        if self._program is None:
            self._program = compile_program([self.y], [self.x, *self.cs])
        return self._program

    def adjoint(self) -> "OperatorGraph":
        """``G^H u``: the VJP of ``G`` in ``x`` (linear), on the same ``c``."""
        if self._adjoint is None:
            u = placeholder(self.y.shape, self.y.dtype)
            (back,) = graph_vjp([self.y], [self.x], [u])
            self._adjoint = OperatorGraph(u, self.cs, back)
        return self._adjoint

    def _bound(self, graph_outputs, x, cs, extra: dict) -> list:
        subs = {id(self.x): x, **{id(p): c for p, c in zip(self.cs, cs)}, **extra}
        return substitute(graph_outputs, subs)

    def apply(self, x, cs) -> object:
        """``G(c, x)`` as nodes of ``x`` and ``c``."""
        return self._bound([self.y], x, cs, {})[0]

    def pushforward(self, x, dcs, cs):
        """``dG(c)[dc] x``: the JVP in ``c`` at fixed ``x`` (None if every ``dc`` is)."""
        if all(d is None for d in dcs):
            return None
        if self._jvp is None:
            seeds = [placeholder(p.shape, p.dtype) for p in self.cs]
            (tangent,) = graph_jvp([self.y], list(self.cs), seeds)
            self._jvp = (tangent, seeds)
        tangent, seeds = self._jvp
        extra = {id(s): (full_like(c, 0) if d is None else d)
                 for s, c, d in zip(seeds, cs, dcs)}
        return self._bound([tangent], x, cs, extra)[0]

    def pullback(self, x, u, cs) -> list:
        """The cotangents of ``c`` of ``<u, G(c, x)>`` at fixed ``x`` (the VJP in ``c``)."""
        if self._vjp is None:
            seed = placeholder(self.y.shape, self.y.dtype)
            self._vjp = (graph_vjp([self.y], list(self.cs), [seed]), seed)
        cts, seed = self._vjp
        return self._bound(list(cts), x, cs, {id(seed): u})


def _eager(name: str, matvec: Callable, n: int, dtype) -> Captured:
    def forward(v, _):
        with no_grad():
            return _array(name, matvec(v))

    def adjoint(u, _):
        from ...eager import grad_of, tensor
        probe = tensor(np.zeros(n, dtype), requires_grad=True)
        y = matvec(probe)
        if not needs_grad(y):                     # the operator ignores its vector
            return np.zeros(n, dtype)
        (g,) = grad_of([y], [probe], [u])
        return plain_value(g)
    return Captured(name, n, dtype, (), forward, adjoint)


def _array(name: str, value) -> np.ndarray:
    if is_traced(value):
        raise ArgumentError(f"{name}: the matvec mixes traced tensors with eager tensors "
                            "that require grad; use one mode (tp.input placeholders, or "
                            "eager tensors)")
    return np.asarray(plain_value(value))

"""What a matvec closes over: the tensors an operator ``v -> matvec(v)`` depends on, found
by calling it once on a probe, and the matvec on arrays.

* Traced: ``matvec`` runs on a ``tp.input`` placeholder.  The nodes that depend on it form
  the operator; the other nodes they read that depend on a placeholder (the *frontier*)
  are the captured tensors.  The operator is rebuilt on fresh placeholders for the probe and the
  captured tensors and compiled, so it runs on arrays with any captured values.
* Eager: the probe runs under :class:`~tenpy_ad.primitive.lifting`: each eager tensor that
  requires grad entering the trace becomes a placeholder of its own, and the operator is
  the graph of every node that depends on the probe or on one of them, on placeholders for
  the vector and those tensors (``Captured.lifted``: the eager tensors are the operands,
  as traced tensors are traced).  A matvec that needs values (NumPy/SciPy code, which a
  traced vector cannot enter) is used as it is: on arrays under ``tp.no_grad`` for the
  values, on tensors (recording the tape) for a first-order derivative.

The operator is kept as a graph :class:`OperatorGraph` ``y = A(c) v`` on placeholders, from
which the derivative rules build ``A(c) x`` at any vector ``x`` and the partial derivatives
in the captured tensors ``c`` at a fixed ``x``: ``dA x`` (the JVP in ``c``) and
``d<u, A(c) x>/dc`` (the VJP), as graph nodes (traced values), taped eager operations
(eager tensors that require grad: a higher derivative being recorded) or arrays (a
compiled program: the first order).  Because these are ordinary operations of ``x`` and
``c``, the rules that use them are themselves differentiable, to any order.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ... import introspection
from ...compiler import compile as compile_program
from ...eager import no_grad
from ...errors import ArgumentError, ConcretizationError, NotDifferentiableError, TapeError
from ...primitive import (bind, current, full_like, graph_mode, is_lifting, is_traced,
                         lifting, needs_grad, plain_value)
from ...ad import jvp as graph_jvp, vjp as graph_vjp
from ...staging import substituted
from ...traced import input as placeholder


class Captured:
    """An operator's matvec as a function of arrays ``(v, captured)``.

    ``tensors`` are the captured tensors, operands of the primitives that use the
    operator: traced tensors, or (``lifted``) the eager tensors that require grad the
    matvec closes over; empty for a constant operator or one that needs values (then
    ``matvec`` closes over the tensors itself).  ``graph`` is the :class:`OperatorGraph`
    the derivative rules build from (None without tensors)."""

    def __init__(self, name: str, n: int, dtype, tensors: tuple, forward: Callable,
                 adjoint: Callable, graph: "OperatorGraph | None" = None,
                 lifted: bool = False):
        self.name, self.n, self.dtype = name, n, np.dtype(dtype)
        self.tensors = tensors
        self._forward, self._adjoint = forward, adjoint
        self.graph = graph
        self.lifted = lifted
        # (lifted) the tensors' arrays when the operator was captured, to recognise a
        # tensor written in place since (a write gives the handle a new array)
        self._arrays = tuple(plain_value(t) for t in tensors) if lifted else ()

    def matvec(self, v: np.ndarray, captured: tuple) -> np.ndarray:
        return np.asarray(self._forward(v, captured))

    def rmatvec(self, u: np.ndarray, captured: tuple) -> np.ndarray:
        """``A^H u``: the VJP of the (linear) matvec in ``v``."""
        return np.asarray(self._adjoint(u, captured))

    def check_unwritten(self, values) -> None:
        """Raise if an eager tensor among ``values`` (the operands of a rule: the saved
        arrays, or, recording a higher derivative, tensors on the tape, the leaves
        themselves) no longer holds the array it held at the solve: it was written in
        place since, and a derivative at its new values would not be the solve's."""
        for array, value in zip(self._arrays, values):
            if plain_value(value) is not array:
                raise TapeError(f"{self.name}: a tensor the operator's matvec uses was "
                                "written in place after the solve, so the solve's "
                                "derivative would mix its old and new values; "
                                "differentiate before writing it (or solve again)")

    @property
    def traced(self) -> bool:
        """Whether the captured tensors are traced (not eager tensors, :func:`capture`)."""
        return bool(self.tensors) and not self.lifted


def capture(name: str, matvec: Callable, n: int, dtype, lift: bool = True) -> Captured:
    """The operator ``matvec`` of size ``n`` (see the module docstring); ``lift=False``
    takes an operator of eager tensors that require grad the eager way (its matvec)."""
    probe = placeholder((n,), np.dtype(dtype))
    lifts = lifting()
    try:
        if lift:
            with lifts:
                out = current(matvec(probe))      # (a written result: its value's node)
        else:
            out = current(matvec(probe))
    except (NotDifferentiableError, ConcretizationError):
        # a matvec that needs values (NumPy/SciPy code), or (lift=False) eager tensors
        # that require grad: the eager way, where the tape sees the matvec's tensor code
        return _eager(name, matvec, n, dtype)
    if not is_traced(out):
        raise ArgumentError(f"{name}: the matvec returned {type(out).__name__} for a traced "
                            "vector; it must compute with the tensors it is given "
                            "(tp.* or NumPy functions on tensors), not convert them")
    if lifts.tensors:
        return _lifted(name, matvec, n, dtype, probe, out, lifts)
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


def _lifted(name: str, matvec: Callable, n: int, dtype, probe, out,
            lifts: lifting) -> Captured:
    """An operator of eager tensors: the matvec traced with them lifted to placeholders
    (:class:`~tenpy_ad.primitive.lifting`), as a graph of the vector and those tensors,
    which are the operands.  Every node that depends on the probe or on a lifted tensor is
    part of the operator (also what the matvec computes from the tensors alone), so the
    graph is the matvec as a function of the tensors it closes over."""
    sources = {id(probe)} | {id(p) for p in lifts.placeholders}
    depends, foreign, nodes = set(sources), set(), []
    for node in introspection.graph_nodes([out]):
        if node.prim.name == "input":
            if id(node) not in sources:
                foreign.add(id(node))
            continue
        if any(id(x) in foreign for x in node.inputs):
            foreign.add(id(node))
        if any(id(x) in depends for x in node.inputs):
            depends.add(id(node))
            nodes.append(node)
    if id(out) in foreign:
        raise ArgumentError(f"{name}: the matvec mixes traced tensors with eager tensors that "
                            "require grad; use one mode (tp.input placeholders, or eager "
                            "tensors)")
    read = {id(x) for node in nodes for x in node.inputs}
    pairs = [(t, p) for t, p in zip(lifts.tensors, lifts.placeholders) if id(p) in read]
    if not pairs:                       # no lifted tensor reaches the result: constant
        return _eager(name, matvec, n, dtype)
    graph = _operator_graph(probe, nodes, [p for _, p in pairs], out)
    return Captured(name, n, dtype, tuple(t for t, _ in pairs),
                    lambda v, c: graph.program()(v, *c)[0],
                    lambda u, c: graph.adjoint().program()(u, *c)[0], graph, lifted=True)


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


class OperatorGraph:
    """``y = G(c, x)``, linear in ``x``, as a graph on placeholders ``x`` and ``c``; its
    derivative graphs are built once, on first use, and instantiated per call at the
    given ``x`` and ``c`` (:meth:`_bound`): traced values give graph nodes
    (:func:`~tenpy_ad.staging.substituted`), eager tensors that require grad taped operations
    (:func:`evaluate`), other values arrays (a compiled program).  What a rule builds from
    them is therefore differentiable again, in every mode, to any order."""

    def __init__(self, x, cs: tuple, y):
        self.x, self.cs, self.y = x, cs, y
        self._adjoint = self._jvp = self._vjp = None
        self._programs: dict = {}

    def program(self):
        """``G`` on arrays: a program of ``(x, *c)``."""
        return self._program([self.y], [self.x, *self.cs])

    def _program(self, outputs: list, placeholders: list):
        key = (tuple(id(y) for y in outputs), tuple(id(p) for p in placeholders))
        program = self._programs.get(key)
        if program is None:
            program = self._programs[key] = compile_program(outputs, placeholders)
        return program

    def adjoint(self) -> "OperatorGraph":
        """``G^H u``: the VJP of ``G`` in ``x`` (linear), on the same ``c``."""
        if self._adjoint is None:
            u = placeholder(self.y.shape, self.y.dtype)
            (back,) = graph_vjp([self.y], [self.x], [u])
            self._adjoint = OperatorGraph(u, self.cs, back)
        return self._adjoint

    def _bound(self, graph_outputs, x, cs, extra: list) -> list:
        """``graph_outputs`` at ``x``, ``c`` and ``extra`` (pairs of a placeholder and its
        value), in the mode of the values (class docstring)."""
        holders = [self.x, *self.cs, *[p for p, _ in extra]]
        values = [x, *cs, *[v for _, v in extra]]
        if any(is_traced(v) for v in values):
            if any(needs_grad(v) for v in values) and not is_lifting():
                raise ArgumentError("tp.scipy.sparse.linalg: an operator's graph applied to "
                                    "traced tensors and eager tensors that require grad")
            return substituted(graph_outputs, {id(p): v for p, v in zip(holders, values)})
        arrays = [_as_input(v, p) for v, p in zip(values, holders)]
        if any(needs_grad(v) for v in values) or any(a is None for a in arrays):
            return evaluate(graph_outputs, {id(p): v for p, v in zip(holders, values)})
        result = self._program(list(graph_outputs), holders)(*arrays)
        return list(result) if isinstance(result, list) else [result]

    def apply(self, x, cs) -> object:
        """``G(c, x)`` as nodes of ``x`` and ``c``."""
        return self._bound([self.y], x, cs, [])[0]

    def pushforward(self, x, dcs, cs):
        """``dG(c)[dc] x``: the JVP in ``c`` at fixed ``x`` (None if every ``dc`` is)."""
        if all(d is None for d in dcs):
            return None
        if self._jvp is None:
            seeds = [placeholder(p.shape, p.dtype) for p in self.cs]
            (tangent,) = graph_jvp([self.y], list(self.cs), seeds)
            self._jvp = (tangent, seeds)
        tangent, seeds = self._jvp
        extra = [(s, full_like(c, 0) if d is None else d) for s, c, d in zip(seeds, cs, dcs)]
        return self._bound([tangent], x, cs, extra)[0]

    def pullback(self, x, u, cs) -> list:
        """The cotangents of ``c`` of ``<u, G(c, x)>`` at fixed ``x`` (the VJP in ``c``)."""
        if self._vjp is None:
            seed = placeholder(self.y.shape, self.y.dtype)
            self._vjp = (graph_vjp([self.y], list(self.cs), [seed]), seed)
        cts, seed = self._vjp
        return self._bound(list(cts), x, cs, [(seed, u)])


def _as_input(value, holder):
    """``value`` as an array for the placeholder ``holder`` of a compiled program (its dtype,
    cast if that is safe), or None (then :func:`evaluate` promotes as the operations do)."""
    array = np.asarray(plain_value(value))
    if array.shape != tuple(holder.shape):
        return None
    if array.dtype == holder.dtype:
        return array
    return array.astype(holder.dtype) if np.can_cast(array.dtype, holder.dtype) else None


def evaluate(outputs: list, substitutes: dict) -> list:
    """``outputs`` (nodes of a graph on placeholders) computed now, node by node in
    topological order (one pass), from concrete ``substitutes`` (placeholder id -> array or
    eager tensor): on eager tensors that require grad the operations record the tape, so
    the result is differentiable in them (the eager rules of any order use this)."""
    built, multi = dict(substitutes), {}
    for node in introspection.graph_nodes(outputs):
        if id(node) in built:
            continue
        if node.prim.name == "constant":
            built[id(node)] = node.params.array
            continue
        if node.prim.name == "input":
            raise ArgumentError("tp.scipy.sparse.linalg: an operator's graph evaluated "
                                "without a value for one of its placeholders")
        inputs = [built[id(x)] for x in node.inputs]
        if node.prim.n_outputs == 1:
            built[id(node)] = bind(node.prim, node.params, *inputs)
            continue
        key = (id(node.prim), id(node.params), tuple(id(x) for x in node.inputs))
        if key not in multi:                    # (one computation for all its slots)
            multi[key] = bind(node.prim, node.params, *inputs)
        built[id(node)] = multi[key][node.slot]
    return [built[id(y)] for y in outputs]


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

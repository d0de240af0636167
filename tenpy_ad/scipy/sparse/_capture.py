"""What a matvec closes over: the tensors an operator ``v -> matvec(v)`` depends on, found
by calling it once on a probe, and the matvec on arrays.

* Traced: ``matvec`` runs on a ``tp.input`` placeholder.  The nodes that depend on it form
  the operator; the other nodes they read that depend on a placeholder (the *frontier*)
  are the captured tensors.  The operator is rebuilt on fresh placeholders for the probe and the
  captured tensors and compiled, so it runs on arrays with any captured values.
* Eager: an eager tensor that requires grad cannot enter a traced graph (nor can a traced
  vector enter NumPy code), so the traced probe fails; the operator is then used as it is: on arrays under ``tp.no_grad`` for the
  values, on tensors (recording the tape) for the derivatives.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ... import introspection
from ...compiler import compile as compile_program
from ...eager import no_grad
from ...errors import ArgumentError, ConcretizationError, NotDifferentiableError
from ...primitive import bind, current, graph_mode, is_traced, needs_grad, plain_value
from ...ad import vjp as graph_vjp
from ...traced import input as placeholder


class Captured:
    """An operator's matvec as a function of arrays ``(v, captured)``.

    ``tensors`` are the captured traced tensors (operands of the primitives that use the
    operator; empty in eager mode, where ``matvec`` closes over the tensors itself)."""

    def __init__(self, name: str, n: int, dtype, tensors: tuple, forward: Callable,
                 adjoint: Callable):
        self.name, self.n, self.dtype = name, n, np.dtype(dtype)
        self.tensors = tensors
        self._forward, self._adjoint = forward, adjoint

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
    forward, adjoint = _programs(probe, nodes, frontier, out)
    return Captured(name, n, dtype, tuple(frontier),
                    lambda v, c: forward(v, *c)[0], lambda u, c: adjoint(u, *c)[0])


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


def _programs(probe, nodes, frontier, out):
    """The matvec and its adjoint as programs of ``(vector, *captured)``."""
    v = placeholder(probe.shape, probe.dtype)
    cs = [placeholder(x.shape, x.dtype) for x in frontier]
    built = _replay(nodes, {id(probe): v, **{id(x): c for x, c in zip(frontier, cs)}})
    y = built[id(out)]
    u = placeholder(y.shape, y.dtype)
    (back,) = graph_vjp([y], [v], [u])
    return compile_program([y], [v, *cs]), compile_program([back], [u, *cs])


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

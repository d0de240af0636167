"""The primitives of ``tp.scipy.sparse.linalg.expm_multiply``: ``y = exp(A) B`` by SciPy's
``expm_multiply`` on an operator given by its matvec, differentiable in ``B`` and in the
tensors the operator captures.

The derivative in ``B`` is ``exp(A) dB`` (reverse ``exp(A^H) g``: the same primitive on the
adjoint operator).  In the operator (``dA`` the matvec's own derivative) it is the Fréchet
derivative ``dy = int_0^1 exp((1-s)A) dA w(s) ds`` with ``w(s) = exp(sA) B``, computed two
exact ways:

* forward, the block operator ``M = [[A, dA], [0, A]]`` (``2n``): ``exp(M) [dB; B]`` is
  ``[exp(A) dB + dy; y]``, so the JVP is one ``expm_multiply`` again, whose accuracy SciPy
  controls as for ``y`` itself;
* reverse (cotangent ``G``, ``u(s) = exp((1-s)A^H) G``), the cotangent of the captured
  tensors ``c`` is ``int_0^1 P(w(s), u(s)) ds`` with ``P(w, u) = d<u, A(c) w>/dc`` (the
  matvec's VJP in ``c``).  The integrand is entire in ``s``: about ``s = 1/2`` its Taylor
  coefficients are bounded by ``rho^k / k!`` (relative), ``rho = ||A - mu||`` (``mu =
  traceA / n``; ``[A, .]`` has norm at most ``2 rho`` and ``|s - 1/2| <= 1/2``), so a
  Gauss-Legendre rule with ``m`` nodes errs by at most ``2 sum_{k >= 2m} rho^k / k!``.
  ``m`` is chosen from twice SciPy's ``onenormest`` of ``A - mu`` to make that below
  ``1e-17``; traced, the rule is checked against ``2m`` nodes (doubled until they agree to
  ``QUADRATURE_TOL`` of the integral of ``|P|``, else ConvergenceError).  The nodes are
  chosen when the primitive runs, from the values, so a traced graph stays one node while
  its accuracy follows the operator.  The cost (rules of ``m`` and ``2m`` nodes) is ``3m``
  products ``exp(dt A) w`` from node to node (``sum dt = 1`` per rule), as many with
  ``A^H`` for ``u``, and ``3m`` VJPs of the matvec per column of ``B``; ``m`` grows like
  ``e ||A|| / 2`` for a large norm.  (A block operator gives no
  reverse: the cotangent of ``c`` sums ``P`` over every intermediate vector, which no
  single exponential of a ``2n`` operator carries.)

Traced (``tp.ad``, ``tp.compile``, ``tp.jit``) every order is exact: the captured tensors
are operands, and

* ``operator_expm_multiply(B, *c)``: its JVP is itself on the block operator (whose
  captured tensors are ``(c, dc)``), its VJP itself on ``A^H`` (for ``B``) and
* ``operator_expm_pullback/k(B, G, *c)``: the quadrature above, on arrays.  Its JVP is the
  ``c``-part of the pullback of the block operator at ``([dB; B], [G; dG])`` (the second
  derivative is symmetric); its VJP (cotangent ``H`` of ``c``) is, with ``M_H`` the block
  operator of direction ``H``, ``ct_G = top exp(M_H) [0; B]``, ``ct_B = bottom
  exp(M_H^H) [G; 0]`` and ``ct_c`` the ``c``-part of the pullback of ``M_H`` at ``([0; B],
  [G; 0])``.

So every rule is made of these two primitives on (block) operators, and of the operator's
graph (``dA x``, ``P``) rebuilt as nodes, and differentiates again.

Eager, the matvec is traced with its tensors that require grad lifted to placeholders
(_capture.py): those tensors are the operands, and the same rules run on the tape, so every
order is exact there too.  A matvec that cannot be traced (it needs values) takes the
first-order way: ``Z = A W`` at the quadrature's vectors ``W = [w(s_j)]`` (``m`` from the
norm bound; the nodes are fixed in the forward pass) is recorded on the tape by the user's
matvec, and is an operand; its tangent is ``dA W`` (``dy = sum_j c_j exp((1-s_j)A) dZ_j``)
and its cotangent ``c_j u(s_j)``.  The derivative's own products are
``operator_expm_multiply`` nodes tied to ``Z`` whose rules refuse a second derivative in the
operator.
"""
from __future__ import annotations

import math
import weakref

import numpy as np
import scipy.sparse.linalg as _sla

from ... import dtypes
from ... import numpy as tnp
from ...compiler import compile as compile_program
from ...errors import ConvergenceError, NotDifferentiableError
from ...ops import elementwise as ew
from ...param_schema import Instance
from ...primitive import (bind, code_of_value, full_like, graph_mode, is_complex_value,
                          primitive)
from ...rules import defrules, per_output_count
from ...traced import input as placeholder
from ._capture import Captured, OperatorGraph

#: the Gauss-Legendre rule's a-priori error bound (relative to the integral of |P|)
QUADRATURE_BOUND = 1e-17
#: traced, the m-node and 2m-node rules must agree to this (relative to the integral of |P|)
QUADRATURE_TOL = 1e-11
#: the most nodes a rule may take before the quadrature gives up
MAX_NODES = 4096


class ExpmProblem:
    """The static param: the operator, ``traceA``, whether to apply ``exp(t A^H)``, the time
    ``t`` (1 for the user's call; the eager derivative's ``1 - s_j``), and the eager layout:
    ``nodes`` (the forward's quadrature ``(s, c)``, operands ``(B, Z)``) or ``refuse`` (a
    derivative product tied to ``Z``, operands ``(b, Z)``, whose rules raise in ``Z``)."""

    def __init__(self, operator: Captured, trace, adjoint: bool = False, time: float = 1.0,
                 nodes: tuple | None = None, refuse: bool = False):
        self.operator, self.trace, self.adjoint, self.time = operator, trace, adjoint, time
        self.nodes, self.refuse = nodes, refuse
        self._flipped = self._block = None

    def _variant(self, **changes) -> "ExpmProblem":
        fields = dict(operator=self.operator, trace=self.trace, adjoint=self.adjoint,
                      time=self.time, nodes=self.nodes, refuse=self.refuse)
        fields.update(changes)
        return ExpmProblem(**fields)

    def flipped(self) -> "ExpmProblem":
        """The problem of ``exp(t A^H)``."""
        if self._flipped is None:
            self._flipped = self._variant(trace=np.conj(self.trace), adjoint=not self.adjoint)
            self._flipped._flipped = self
        return self._flipped

    def at(self, time: float) -> "ExpmProblem":
        """The eager derivative's product ``exp(time A)`` (tied to ``Z``)."""
        return self._variant(time=float(time), nodes=None, refuse=True)

    def with_nodes(self, nodes: tuple) -> "ExpmProblem":
        return self._variant(nodes=nodes)

    @property
    def eager(self) -> bool:
        return self.nodes is not None or self.refuse

    def graph(self) -> OperatorGraph:
        """The operator's graph (traced): ``A``, or ``A^H`` for the adjoint problem."""
        graph = self.operator.graph
        return graph.adjoint() if self.adjoint else graph

    def block(self) -> "ExpmProblem":
        """The problem of ``[[A, dA], [0, A]]`` (traced), captured tensors ``(c, dc)``."""
        if self._block is None:
            self._block = ExpmProblem(_block_operator(self.operator.name, self.graph()),
                                      2 * self.trace, time=self.time)
        return self._block

    def linear(self, captured: tuple, dtype, time: float | None = None):
        """``time A`` (``time A^H``) on arrays as SciPy's operator."""
        op = self.operator
        t = self.time if time is None else time
        forward, backward = op.matvec, op.rmatvec
        if self.adjoint:
            forward, backward = backward, forward
        tc = np.conj(t)
        return _sla.LinearOperator(
            (op.n, op.n), dtype=dtype,
            matvec=lambda x: t * forward(np.ravel(x).astype(op.dtype, copy=False), captured),
            rmatvec=lambda x: tc * backward(np.ravel(x).astype(op.dtype, copy=False),
                                            captured))

    def apply(self, b: np.ndarray, captured: tuple, time: float | None = None) -> np.ndarray:
        """``exp(time A) b`` on arrays."""
        t = self.time if time is None else time
        dtype = np.result_type(b.dtype, self.operator.dtype)
        if t == 0:
            return b.astype(dtype, copy=True)
        return np.asarray(_sla.expm_multiply(self.linear(captured, dtype, t), b.astype(dtype),
                                             traceA=t * self.trace), dtype)

    def norm(self, captured: tuple) -> float:
        """An estimate of ``||t (A - mu)||_1`` (``mu = traceA / n``) by SciPy's onenormest
        (``t=1``: deterministic)."""
        n = self.operator.n
        dtype = np.result_type(self.operator.dtype, np.asarray(self.trace).dtype)
        mu = self.time * self.trace / n
        linear = self.linear(captured, dtype)
        shifted = _sla.LinearOperator(
            (n, n), dtype=dtype,
            matvec=lambda x: np.ravel(linear.matvec(x)) - mu * np.ravel(x),
            rmatvec=lambda x: np.ravel(linear.rmatvec(x)) - np.conj(mu) * np.ravel(x))
        if n <= 4:                         # onenormest wants t < n; small: the exact norm
            return float(np.max(np.sum(np.abs(shifted.matmat(np.eye(n, dtype=dtype))), 0)))
        return float(_sla.onenormest(shifted, t=1))

    def __repr__(self):
        return (f"<expm_multiply n={self.operator.n}{' adjoint' if self.adjoint else ''}"
                f"{'' if self.time == 1.0 else f' t={self.time:.6g}'}"
                f"{' eager' if self.eager else ''}>")


# ------------------------------------------------------------------ the quadrature

def node_count(rho: float) -> int:
    """The Gauss-Legendre nodes that make ``2 sum_{k >= 2m} rho^k / k!`` (the error bound
    of the module docstring, for twice the norm estimate ``rho``) below QUADRATURE_BOUND."""
    rho = 2.0 * max(float(rho), 1e-3)              # onenormest is a lower bound: a margin
    for m in range(2, MAX_NODES + 1):
        k = 2 * m
        if k + 1 <= rho:
            continue
        log_term = k * math.log(rho) - math.lgamma(k + 1)
        if math.log(2.0) + log_term - math.log(1.0 - rho / (k + 1)) <= math.log(
                QUADRATURE_BOUND):
            return m
    raise ConvergenceError(f"expm_multiply: the operator's norm estimate ({rho / 2:.3g}) "
                           f"needs more than {MAX_NODES} quadrature nodes for the derivative "
                           "in its tensors", rho, 0)


def gauss(m: int) -> tuple:
    """Gauss-Legendre nodes ``s`` (ascending) and weights ``c`` on ``[0, 1]``."""
    x, w = np.polynomial.legendre.leggauss(m)
    return (x + 1.0) / 2.0, w / 2.0


def forward_vectors(problem: ExpmProblem, b: np.ndarray, captured: tuple, s) -> list:
    """``w(s_j) = exp(s_j t A) b``, each from the previous (the nodes ascend)."""
    out, last, previous = [], b, 0.0
    for sj in s:
        last = problem.apply(last, captured, problem.time * (sj - previous))
        out.append(last)
        previous = sj
    return out


def _backward_vectors(problem: ExpmProblem, g: np.ndarray, captured: tuple, s) -> list:
    """``u(s_j) = exp((1 - s_j) t A^H) g``, each from the next."""
    flipped = problem.flipped()
    out, last, following = [None] * len(s), g, 1.0
    for j in range(len(s) - 1, -1, -1):
        last = flipped.apply(last, captured, problem.time * (following - s[j]))
        out[j] = last
        following = s[j]
    return out


#: each operator graph's compiled pullback, dropped with the graph
_PULLBACK_PROGRAMS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _pullback_program(graph: OperatorGraph):
    """``(x, u, *c) -> P(x, u)`` (the cotangents of ``c`` of ``<u, A(c) x>``) on arrays."""
    program = _PULLBACK_PROGRAMS.get(graph)
    if program is None:
        x = placeholder(graph.x.shape, graph.x.dtype)
        u = placeholder(graph.y.shape, graph.y.dtype)
        cs = [placeholder(c.shape, c.dtype) for c in graph.cs]
        cts = graph.pullback(x, u, cs)
        cts = [full_like(c, 0) if ct is None else ct for c, ct in zip(cs, cts)]
        program = _PULLBACK_PROGRAMS[graph] = compile_program(cts, [x, u, *cs])
    return program


def _quadrature(problem, b, g, captured, m) -> tuple:
    """The m-node rule for ``int_0^1 P(w(s), u(s)) ds`` and for ``int |P|``."""
    program = _pullback_program(problem.graph())
    s, c = gauss(m)
    ws = forward_vectors(problem, b, captured, s)
    us = _backward_vectors(problem, g, captured, s)
    total = [np.zeros(x.shape, x.dtype) for x in captured]
    size = 0.0
    for cj, w, u in zip(c, ws, us):
        columns = zip(w.reshape(len(w), -1).T, u.reshape(len(u), -1).T)
        for wk, uk in columns:
            for i, p in enumerate(program(wk, uk, *captured)):
                p = np.asarray(p)
                total[i] = total[i] + cj * (p if total[i].dtype.kind == "c" else np.real(p))
                size += cj * float(np.sum(np.abs(p)))
    return total, size


def pullback_values(problem: ExpmProblem, b: np.ndarray, g: np.ndarray,
                    captured: tuple) -> list:
    """``int_0^1 P(w(s), u(s)) ds`` by Gauss-Legendre, checked against twice the nodes."""
    dtype = np.result_type(b.dtype, g.dtype, problem.operator.dtype)
    b, g = b.astype(dtype, copy=False), g.astype(dtype, copy=False)
    m = node_count(problem.norm(captured))
    coarse, _ = _quadrature(problem, b, g, captured, m)
    while True:
        fine, size = _quadrature(problem, b, g, captured, 2 * m)
        error = max((float(np.max(np.abs(x - y))) for x, y in zip(coarse, fine)
                     if x.size), default=0.0)
        if error <= QUADRATURE_TOL * max(size, np.finfo(float).tiny):
            return fine
        m *= 2
        if 2 * m > MAX_NODES:
            raise ConvergenceError(f"expm_multiply: the quadrature of the derivative in the "
                                   f"operator's tensors did not converge ({error / size:.3g} "
                                   f"with {m} nodes)", error / size, 0)
        coarse = fine


# ------------------------------------------------------------------ the block operator

def _block_operator(name: str, graph: OperatorGraph) -> Captured:
    """``[x1; x2] -> [A x1 + dA x2; A x2]`` as a captured operator on ``(c, dc)``."""
    n = graph.x.shape[0]
    with graph_mode():
        x = placeholder((2 * n,), graph.x.dtype)
        cs = [placeholder(c.shape, c.dtype) for c in graph.cs]
        ds = [placeholder(c.shape, c.dtype) for c in graph.cs]
        x1, x2 = x[:n], x[n:]
        top = graph.apply(x1, cs) + graph.pushforward(x2, ds, cs)
        y = tnp.concatenate([top, graph.apply(x2, cs)])
    block = OperatorGraph(x, tuple(cs) + tuple(ds), y)
    return Captured(name, 2 * n, np.dtype(graph.y.dtype), tuple(cs) + tuple(ds),
                    lambda v, c: block.program()(v, *c)[0],
                    lambda u, c: block.adjoint().program()(u, *c)[0], block)


def _stacked(top, bottom, like):
    """``[top; bottom]`` along the rows (None: zeros like ``like``)."""
    top = full_like(like, 0) if top is None else top
    bottom = full_like(like, 0) if bottom is None else bottom
    if is_complex_value(top) != is_complex_value(bottom):    # one complex dtype
        top, bottom = (x if is_complex_value(x) else x + 0j for x in (top, bottom))
    return tnp.concatenate([top, bottom], axis=0)


def _half(y, n: int, top: bool):
    return y[:n] if top else y[n:]


def _filled(tangents, cs) -> list:
    return [full_like(c, 0) if t is None else t for t, c in zip(tangents, cs)]


def _like(ct, x):
    """The cotangent of ``x``: real for a real ``x`` (a complex operator's product)."""
    if ct is not None and not is_complex_value(x) and is_complex_value(ct):
        return ew.real(ct)
    return ct


def _add(a, b):
    return b if a is None else a if b is None else a + b


# ------------------------------------------------------------------ exp(A) B

def _impl(problem, b, *extra):
    captured = () if problem.eager or not problem.operator.tensors else tuple(extra)
    return problem.apply(b, captured)


def _shape_rule(problem, b, *extra):
    code = code_of_value(b)
    if np.dtype(problem.operator.dtype).kind == "c":
        code = dtypes.complex_code(code)
    return code, tuple(b.shape)


def _not_in_the_operator():
    raise NotDifferentiableError(
        "expm_multiply: its operator's matvec needs values (it cannot be traced), so "
        "derivatives of order two and higher in the operator's tensors are not available "
        "(first order is exact); write the matvec with tensor operations")


def _jvp(problem, tangents, out, xs):
    if problem.eager:
        return _eager_jvp(problem, tangents, xs)
    db, dcs, cs = tangents[0], tangents[1:], xs[1:]
    problem.operator.check_unwritten(cs)
    if all(d is None for d in dcs):
        return None if db is None else bind(expm_p, problem, db, *cs)
    n = problem.operator.n
    y = bind(expm_p, problem.block(), _stacked(db, xs[0], xs[0]), *cs, *_filled(dcs, cs))
    return _half(y, n, True)


def _vjp(problem, g, out, xs, active):
    if g is None or not any(active):
        return (None,) * len(xs)
    if problem.eager:
        return _eager_vjp(problem, g, xs, active)
    cs = xs[1:]
    problem.operator.check_unwritten(cs)
    ct = bind(expm_p, problem.flipped(), g, *cs) if active[0] else None
    result = [_like(ct, xs[0])] + [None] * len(cs)
    if any(active[1:]):
        cts = pulled(problem, xs[0], g, cs)
        for k in range(len(cs)):
            result[1 + k] = cts[k] if active[1 + k] else None
    return tuple(result)


# ------------------------------------------------------------------ eager

def _eager_jvp(problem, tangents, xs):
    if problem.refuse:                           # a derivative product tied to Z
        if len(tangents) > 1 and tangents[1] is not None:
            _not_in_the_operator()
        return None if tangents[0] is None else bind(expm_p, problem, tangents[0], xs[1])
    db, dz = tangents[0], tangents[1] if len(tangents) > 1 else None
    z = xs[1]
    result = None if db is None else bind(expm_p, problem.at(problem.time), db, z)
    if dz is not None:
        s, c = problem.nodes
        for j, (sj, cj) in enumerate(zip(s, c)):
            column = _node_columns(dz, j, xs[0])
            term = bind(expm_p, problem.at(problem.time * (1 - sj)), column, z)
            result = _add(result, cj * term)
    return result


def _eager_vjp(problem, g, xs, active):
    z = xs[1]
    if problem.refuse:
        if active[1]:
            _not_in_the_operator()
        return (bind(expm_p, problem.flipped(), g, z), None)
    ct_b = bind(expm_p, problem.at(problem.time).flipped(), g, z) if active[0] else None
    ct_z = None
    if active[1]:
        s, c = problem.nodes
        flipped = problem.flipped()
        parts = [cj * bind(expm_p, flipped.at(problem.time * (1 - sj)), g, z)
                 for sj, cj in zip(s, c)]
        ct_z = tnp.concatenate([tnp.reshape(p, (problem.operator.n, -1)) for p in parts],
                               axis=1)
        ct_z = _like(ct_z, z)
    return (_like(ct_b, xs[0]), ct_z)


def _node_columns(z, j: int, b):
    """The columns of ``Z = A W`` at node ``j``, shaped as ``B``."""
    shape = tuple(b.shape)
    k = 1 if len(shape) == 1 else shape[1]
    part = z[:, j * k:(j + 1) * k]
    return tnp.reshape(part, shape)


def eager_vectors(problem: ExpmProblem, b: np.ndarray) -> tuple:
    """The eager forward's quadrature: ``(problem with its nodes, W)``, ``W`` the
    ``n x (m k)`` matrix of ``w(s_j)`` (node by node, ``k`` columns of ``B`` each)."""
    s, c = gauss(node_count(problem.norm(())))
    ws = forward_vectors(problem, b, (), s)
    n = problem.operator.n
    w = np.concatenate([x.reshape(n, -1) for x in ws], axis=1)
    return problem.with_nodes((s, c)), w


# exp(t A) B (exp(t A^H) B) by SciPy's expm_multiply; operands (B, *c) traced, (B, Z)
# or (B,) eager.
expm_p = defrules(primitive("operator_expm_multiply", _impl, _shape_rule,
                            params=Instance(ExpmProblem)), _jvp, _vjp)


# ------------------------------------------------------------------ the pullback (traced)

def _one_or_all(values):
    """A primitive of one output takes and gives it alone, of several a sequence."""
    values = tuple(values)
    return values[0] if len(values) == 1 else values


def pulled(problem: ExpmProblem, b, g, cs) -> list:
    """The pullback node's outputs as a list (one per captured tensor)."""
    out = bind(pullback_p(len(cs)), problem, b, g, *cs)
    return [out] if len(cs) == 1 else list(out)


def _pullback_impl(problem, b, g, *captured):
    return _one_or_all(pullback_values(problem, np.asarray(b), np.asarray(g),
                                       tuple(captured)))


def _pullback_shape(problem, b, g, *captured):
    return _one_or_all((code_of_value(c), tuple(c.shape)) for c in captured)


def _pullback_jvp(problem, tangents, out, xs):
    db, dg, dcs = tangents[0], tangents[1], tangents[2:]
    b, g, cs = xs[0], xs[1], xs[2:]
    problem.operator.check_unwritten(cs)
    k = len(cs)
    if all(d is None for d in dcs):
        result = [None] * k
        for bb, gg in ((db, g), (b, dg)):
            if bb is not None and gg is not None:
                part = pulled(problem, bb, gg, cs)
                result = [_add(r, p) for r, p in zip(result, part)]
        return _one_or_all(result)
    full = pulled(problem.block(), _stacked(db, b, b), _stacked(g, dg, g),
                  (*cs, *_filled(dcs, cs)))
    return _one_or_all(full[:k])


def _pullback_vjp(problem, cts, out, xs, active):
    b, g, cs = xs[0], xs[1], xs[2:]
    problem.operator.check_unwritten(cs)
    k, n = len(cs), problem.operator.n
    cts = cts if type(cts) is tuple else (cts,)
    if all(h is None for h in cts) or not any(active):
        return (None,) * len(xs)
    hs = _filled(cts, cs)
    block = problem.block()
    result = [None] * len(xs)
    if active[1]:                                            # ct_G = top exp(M_H) [0; B]
        y = bind(expm_p, block, _stacked(None, b, b), *cs, *hs)
        result[1] = _like(_half(y, n, True), g)
    if active[0]:                                            # ct_B = bottom exp(M_H^H) [G; 0]
        y = bind(expm_p, block.flipped(), _stacked(g, None, g), *cs, *hs)
        result[0] = _like(_half(y, n, False), b)
    if any(active[2:]):
        full = pulled(block, _stacked(None, b, b), _stacked(g, None, g), (*cs, *hs))
        for i in range(k):
            result[2 + i] = full[i] if active[2 + i] else None
    return tuple(result)


# int_0^1 d<u(s), A(c) w(s)>/dc ds: the cotangents of the captured tensors c (one output
# each) of <G, exp(A(c)) B>, by Gauss-Legendre (module docstring).
pullback_p = per_output_count("operator_expm_pullback", _pullback_impl, _pullback_shape,
                              _pullback_jvp, _pullback_vjp, Instance(ExpmProblem))

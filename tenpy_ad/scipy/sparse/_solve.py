"""The primitives of ``gmres``, ``cg`` and ``minres`` on an operator given by its matvec:
``x = A^{-1} b`` by SciPy's Krylov solver, differentiated through ``A x = b``:
``dx = A^{-1} (db - dA x)``, and in reverse ``lam = A^{-H} g``, ``ct_b = lam`` and the
cotangents of the operator's tensors those of ``-<lam, A x>``.

The derivative's solves are solves again, with the same operator (forward) or its adjoint
(reverse), by the same primitives: JAX's ``custom_linear_solve``.  How ``dA x`` reaches
the tensors the matvec uses depends on the mode:

* with a graph (traced tensors, or eager tensors that require grad, :mod:`._capture`):
  the captured tensors ``c`` are operands, and ``dA x`` and the cotangents of ``c`` are
  built from the operator's graph at the differentiable solution ``x``
  (:class:`~._capture.OperatorGraph`: graph nodes, taped eager operations, or arrays).
  Every rule is made of solves and ordinary operations, so derivatives of every order are
  exact, eager as traced;
* a matvec that needs values (no graph): ``Z = A x0`` from the user's matvec on the tape
  is an operand (its tangent is ``dA x0``); first-order derivatives are exact, and
  ``operator_solve_derivative`` (the solve on arrays) refuses to be differentiated in the
  operator's tensors.

Primitives:

* ``operator_solve``: ``(x, info)`` from ``b`` and the captured tensors (values only; zero
  derivative, carried by ``operator_solve_map``);
* ``operator_solve_map(b, x0, *c)`` (with a graph) or ``(b, x0, Z)`` (without): returns
  ``x``;
* ``operator_solve_derivative`` (without a graph): ``A^{-1} r`` (or ``A^{-H} r``) on
  arrays.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as _sla

from ... import dtypes
from ...errors import ArgumentError, ConvergenceError, NotDifferentiableError
from ...ops import elementwise as ew
from ...param_schema import Instance
from ...primitive import (bind, code_of_value, is_complex_value, is_traced, needs_grad,
                          plain_value, primitive)
from ...rules import defrules
from ._capture import Captured

#: relative residual of the derivative's solves
SOLVE_TOL = 1e-12


class SolveProblem:
    """The static param of the solve primitives: the operator, SciPy's method and options.

    ``adjoint`` solves with ``A^H``; ``method=None`` is the derivative's solve (GMRES, or
    MINRES for a real ``hermitian`` operator, to SOLVE_TOL, checked); ``eager`` selects the
    eager operand layout of the map (module docstring), and ``refuse`` (eager, an operator
    whose tensors require grad) makes the eager derivative's solve refuse to be
    differentiated; with ``failure`` (a message) the residual of each of ``blocks`` columns
    of the vector (an ``(n, blocks)`` matrix, raveled) is checked."""

    def __init__(self, name: str, method, operator: Captured, x0, options: dict,
                 adjoint: bool = False, hermitian: bool = False, eager: bool = False,
                 blocks: int = 1, failure: str | None = None, refuse: bool = False):
        self.name, self.method, self.operator = name, method, operator
        self.x0 = None if x0 is None else np.asarray(x0)
        self.options, self.adjoint, self.hermitian = options, adjoint, hermitian
        self.eager, self.blocks, self.failure, self.refuse = eager, blocks, failure, refuse
        self._flipped = self._exact = None

    def _variant(self, **changes) -> "SolveProblem":
        fields = dict(name=self.name, method=self.method, operator=self.operator,
                      x0=self.x0, options=self.options, adjoint=self.adjoint,
                      hermitian=self.hermitian, eager=self.eager, blocks=self.blocks,
                      failure=self.failure, refuse=self.refuse)
        fields.update(changes)
        return SolveProblem(**fields)

    def flipped(self) -> "SolveProblem":
        """The problem of ``A^H`` (``self`` for a Hermitian operator)."""
        if self.hermitian:
            return self
        if self._flipped is None:
            self._flipped = self._variant(adjoint=not self.adjoint)
            self._flipped._flipped = self
        return self._flipped

    def exact(self) -> "SolveProblem":
        """The derivative's problem: the same operator, solved to SOLVE_TOL."""
        if self.method is None:
            return self
        if self._exact is None:
            self._exact = self._variant(method=None, x0=None, options={})
        return self._exact

    def graph(self):
        """The operator's graph (traced): ``A``, or ``A^H`` for the adjoint problem."""
        graph = self.operator.graph
        return graph.adjoint() if self.adjoint else graph

    def linear_operator(self, captured: tuple, dtype) -> _sla.LinearOperator:
        op, n = self.operator, self.operator.n
        apply = op.rmatvec if self.adjoint else op.matvec
        return _sla.LinearOperator((n, n), matvec=lambda x: apply(
            np.ravel(x).astype(op.dtype, copy=False), captured), dtype=dtype)

    def values(self, b: np.ndarray, captured: tuple) -> tuple:
        dtype = np.result_type(b.dtype, self.operator.dtype)
        if self.method is None:
            return self.solve_exactly(b.astype(dtype, copy=False), captured), 0
        x, info = self.method(self.linear_operator(captured, dtype), b.astype(dtype),
                              x0=self.x0, **self.options)
        return np.asarray(x, dtype), int(info)

    def solve_exactly(self, r: np.ndarray, captured: tuple) -> np.ndarray:
        """``A^{-1} r`` (``A^{-H} r``) to SOLVE_TOL, its residual checked."""
        if np.linalg.norm(r) == 0.0:
            return np.zeros_like(r)
        op = self.linear_operator(captured, r.dtype)
        n = self.operator.n
        if self.hermitian and not np.iscomplexobj(r):
            x = _sla.minres(op, r, rtol=SOLVE_TOL, maxiter=20 * n + 100)[0]
        else:          # SciPy's MINRES is for real operators; GMRES for the others
            x = _sla.gmres(op, r, rtol=SOLVE_TOL, atol=0.0, restart=min(n, 200),
                           maxiter=20 * n + 100)[0]
        self._check(op.matvec(x) - r, r)
        return x.astype(r.dtype, copy=False)

    def _check(self, residual: np.ndarray, r: np.ndarray) -> None:
        if self.failure is None:
            relative = np.linalg.norm(residual) / np.linalg.norm(r)
            if not relative <= 1e-8:
                raise ConvergenceError(f"{self.name}: the derivative's solve with A did not "
                                       f"converge (relative residual {relative:.3g}); is A "
                                       "singular?", relative, 0)
            return
        for i, (res, rhs) in enumerate(zip(residual.reshape(-1, self.blocks).T,
                                           r.reshape(-1, self.blocks).T)):
            norm = np.linalg.norm(rhs)
            relative = np.linalg.norm(res) / norm if norm else np.linalg.norm(res)
            if not relative <= 1e-6:
                raise ConvergenceError(self.failure.format(i=i, residual=relative),
                                       relative, 0)

    def __repr__(self):
        return f"<{self.name} n={self.operator.n}{' adjoint' if self.adjoint else ''}>"


# ------------------------------------------------------------------ values

def _values_impl(problem, b, *captured):
    x, info = problem.values(b, tuple(captured))
    return x, np.asarray(info, np.int64)


def _values_shape(problem, b, *captured):
    code = dtypes.code_of(np.result_type(dtypes.DTYPES[code_of_value(b)],
                                         problem.operator.dtype))
    return [(code, (problem.operator.n,)), (dtypes.code_of(np.int64), ())]


# (x, info) by SciPy's Krylov solver (or the derivative's exact solve) from b and the
# captured tensors; zero derivative (the map's).
values_p = defrules(primitive("operator_solve", _values_impl, _values_shape, n_outputs=2,
                              params=Instance(SolveProblem)),
                    lambda problem, tangents, out, xs: (None, None),
                    lambda problem, cts, out, xs, active: (None,) * len(xs))


# ------------------------------------------------------------------ the derivative map

def _difference(a, b):
    """``a - b`` with None for symbolic zeros."""
    if b is None:
        return a
    return -b if a is None else a - b


def _like_b(lam, b):
    """The cotangent of ``b``: real for a real ``b`` (a complex operator's solve)."""
    if not is_complex_value(b) and is_complex_value(lam):
        return ew.real(lam)
    return lam


def _map_jvp(problem, tangents, out, xs):
    if problem.eager:
        rhs = _difference(tangents[0], tangents[2])          # db - dZ, dZ = dA x0
        return None if rhs is None else bind(derivative_p, problem, rhs, *_tied(problem, xs))
    db, dcs, cs = tangents[0], tangents[2:], xs[2:]
    problem.operator.check_unwritten(cs)
    rhs = _difference(db, problem.graph().pushforward(out, dcs, cs) if cs else None)
    return None if rhs is None else solve_traced(problem.exact(), rhs, cs)[0]


def _map_vjp(problem, g, out, xs, active):
    result = [None] * len(xs)
    if g is None or not any(active):
        return tuple(result)
    if problem.eager:
        lam = bind(derivative_p, problem.flipped(), g, *_tied(problem, xs))
        result[0] = _like_b(lam, xs[0]) if active[0] else None
        result[2] = -lam if active[2] else None
        return tuple(result)
    cs = xs[2:]
    problem.operator.check_unwritten(cs)
    lam = solve_traced(problem.exact().flipped(), g, cs)[0]
    result[0] = _like_b(lam, xs[0]) if active[0] else None
    if any(active[2:]):
        for k, ct in enumerate(problem.graph().pullback(out, lam, cs)):
            result[2 + k] = -ct if active[2 + k] else None
    return tuple(result)


# x again, differentiable in b and the operator: dx = A^{-1} (db - dA x).
map_p = defrules(primitive("operator_solve_map",
                           lambda problem, b, x, *rest: np.array(x, copy=True),
                           lambda problem, b, x, *rest: (code_of_value(x), tuple(x.shape)),
                           params=Instance(SolveProblem)), _map_jvp, _map_vjp)


# ------------------------------------------------------------------ A^{-1} r on arrays (eager)

def _not_in_the_operator(problem):
    raise NotDifferentiableError(
        f"{problem.name}: derivatives of order two and higher in the tensors of an operator "
        "whose matvec needs values (it could not be traced: NumPy or SciPy code on arrays, "
        "float() or control flow on the vector's values) are not implemented (first order "
        "is exact); write the matvec with tensor operations (tp.* or NumPy functions on "
        "tensors), which are differentiated to every order, eager or traced")


def _tied(problem, xs) -> tuple:
    """Eager, an operator whose tensors require grad: ``Z`` (which depends on them) as an
    extra operand of the derivative's solve, so that its result is on the tape when a
    higher derivative is recorded, and that derivative reaches its refusing rules."""
    return (xs[2],) if problem.refuse else ()


def _derivative_jvp(problem, tangents, out, xs):
    if problem.refuse and any(t is not None for t in tangents):
        _not_in_the_operator(problem)
    return None if tangents[0] is None else bind(derivative_p, problem, tangents[0])


def _derivative_vjp(problem, g, out, xs, active):
    if g is None or not any(active):
        return (None,) * len(xs)
    if problem.refuse:
        _not_in_the_operator(problem)
    return (bind(derivative_p, problem.flipped(), g),)


def _derivative_impl(problem, r, *tied):
    return problem.exact().values(r, ())[0]


# A^{-1} r (A^{-H} r) to tight tolerance on arrays: the derivative's solve of an operator
# without a graph (eager, a matvec that needs values), linear in r.  The operator's
# tensors are not its operands (the matvec closes over them), so when they require grad
# (``refuse``) its own rules raise: its result depends on them, and a derivative through
# it would silently miss that.
derivative_p = defrules(primitive("operator_solve_derivative", _derivative_impl,
                                  lambda problem, r, *tied: (code_of_value(r),
                                                             tuple(r.shape)),
                                  params=Instance(SolveProblem)),
                        _derivative_jvp, _derivative_vjp)


# ------------------------------------------------------------------ the call

def solve_traced(problem: SolveProblem, b, cs) -> tuple:
    """``(x, info)`` of ``A x = b`` as nodes (the captured tensors ``cs``): the values by
    SciPy, then the map that carries the derivative."""
    x0, info = bind(values_p, problem, b, *cs)
    return bind(map_p, problem, b, x0, *cs), info


def solve(problem: SolveProblem, matvec, b) -> tuple:
    """``(x, info)``: traced nodes, eager tensors, or arrays (nothing to differentiate)."""
    from ...eager import tensor
    operator = problem.operator
    if operator.traced or is_traced(b):
        if not operator.traced and needs_grad(matvec(tensor(np.ones(operator.n,
                                                                    operator.dtype)))):
            raise ArgumentError(f"{problem.name}: a traced b with an operator whose matvec "
                                "uses eager tensors that require grad; use one mode "
                                "(tp.input placeholders, or eager tensors)")
        return solve_traced(problem, b, operator.tensors)
    if operator.lifted:             # eager tensors as operands: the rules of every order
        x, info = solve_traced(problem, b, operator.tensors)
        return x, int(plain_value(info))
    x0, info = problem.values(np.asarray(plain_value(b)), ())
    z = matvec(tensor(x0))
    if not (needs_grad(z) or needs_grad(b)):
        return x0, info
    eager = problem._variant(eager=True, refuse=needs_grad(z))
    return bind(map_p, eager, b, x0, z), info

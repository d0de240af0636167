"""The primitives of ``gmres``, ``cg`` and ``minres`` on an operator given by its matvec:
``x = A^{-1} b`` by SciPy's Krylov solver, differentiated through ``A x = b``:
``dx = A^{-1} (db - dA x)``, and in reverse ``lam = A^{-H} g``, ``ct_b = lam``,
``ct_Z = -lam`` for ``Z = A x`` (built by the caller from the user's matvec, as for
eigsh: :mod:`._eigsh`).

* ``operator_solve`` (traced only): ``(x, info)`` from ``b`` and the captured tensors;
  zero derivative, carried by ``operator_solve_map``;
* ``operator_solve_map(b, Z, x, *captured)``: returns ``x``;
* ``operator_solve_derivative``: ``A^{-1} r`` (or ``A^{-H} r``) to tight tolerance; linear
  in ``r`` to any order, its derivative in the captured tensors is not implemented.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as _sla

from ... import dtypes
from ...errors import ConvergenceError, NotDifferentiableError
from ...param_schema import Instance
from ...primitive import bind, code_of_value, is_traced, needs_grad, plain_value, primitive
from ...rules import defrules
from ._capture import Captured

#: relative residual of the derivative's solves
SOLVE_TOL = 1e-12


class SolveProblem:
    """The static param of the solve primitives: the operator, SciPy's method and options;
    ``adjoint`` solves with ``A^H`` (the derivative's reverse solve)."""

    def __init__(self, name: str, method, operator: Captured, x0, options: dict,
                 adjoint: bool = False):
        self.name, self.method, self.operator = name, method, operator
        self.x0 = None if x0 is None else np.asarray(x0)
        self.options, self.adjoint = options, adjoint
        self._flipped = None

    def flipped(self) -> "SolveProblem":
        if self._flipped is None:
            self._flipped = SolveProblem(self.name, self.method, self.operator, self.x0,
                                         self.options, not self.adjoint)
            self._flipped._flipped = self
        return self._flipped

    def linear_operator(self, captured: tuple, dtype) -> _sla.LinearOperator:
        op, n = self.operator, self.operator.n
        apply = op.rmatvec if self.adjoint else op.matvec
        return _sla.LinearOperator((n, n), matvec=lambda x: apply(
            np.ravel(x).astype(op.dtype, copy=False), captured), dtype=dtype)

    def values(self, b: np.ndarray, captured: tuple) -> tuple:
        dtype = np.result_type(b.dtype, self.operator.dtype)
        x, info = self.method(self.linear_operator(captured, dtype), b.astype(dtype),
                              x0=self.x0, **self.options)
        return np.asarray(x, dtype), int(info)

    def exact(self, r: np.ndarray, captured: tuple) -> np.ndarray:
        """``A^{-1} r`` (``A^{-H} r``) by GMRES to SOLVE_TOL, checked."""
        norm = np.linalg.norm(r)
        if norm == 0.0:
            return np.zeros_like(r)
        op = self.linear_operator(captured, r.dtype)
        n = self.operator.n
        x, _ = _sla.gmres(op, r, rtol=SOLVE_TOL, atol=0.0, restart=min(n, 200),
                          maxiter=20 * n + 100)
        residual = np.linalg.norm(op.matvec(x) - r) / norm
        if not residual <= 1e-8:
            raise ConvergenceError(f"{self.name}: the derivative's solve with A did not "
                                   f"converge (relative residual {residual:.3g}); is A "
                                   "singular?", residual, 0)
        return x.astype(r.dtype, copy=False)

    def __repr__(self):
        return f"<{self.name} n={self.operator.n}{' adjoint' if self.adjoint else ''}>"


# ------------------------------------------------------------------ values (traced)

def _values_impl(problem, b, *captured):
    x, info = problem.values(b, tuple(captured))
    return x, np.asarray(info, np.int64)


def _values_shape(problem, b, *captured):
    code = dtypes.code_of(np.result_type(dtypes.DTYPES[code_of_value(b)],
                                         problem.operator.dtype))
    return [(code, (problem.operator.n,)), (dtypes.code_of(np.int64), ())]


# (x, info) by SciPy's Krylov solver from b and the captured tensors (traced); zero
# derivative (the map's).
values_p = defrules(primitive("operator_solve", _values_impl, _values_shape, n_outputs=2,
                              params=Instance(SolveProblem)),
                    lambda problem, tangents, out, xs: (None, None),
                    lambda problem, cts, out, xs, active: (None,) * len(xs))


# ------------------------------------------------------------------ the derivative map

def _map_jvp(problem, tangents, out, xs):
    db, dz = tangents[0], tangents[1]
    if db is None and dz is None:
        return None
    rhs = db if dz is None else (-dz if db is None else db - dz)
    return bind(derivative_p, problem, rhs, *xs[3:])


def _map_vjp(problem, g, out, xs, active):
    result = [None] * len(xs)
    if g is None or not (active[0] or active[1]):
        return tuple(result)
    lam = bind(derivative_p, problem.flipped(), g, *xs[3:])
    result[0] = lam if active[0] else None
    result[1] = -lam if active[1] else None
    return tuple(result)


# x again, differentiable in b and Z = A x: dx = A^{-1} (db - dZ).
map_p = defrules(primitive("operator_solve_map",
                           lambda problem, b, z, x, *captured: np.array(x, copy=True),
                           lambda problem, b, z, x, *captured: (code_of_value(x),
                                                                tuple(x.shape)),
                           params=Instance(SolveProblem)), _map_jvp, _map_vjp)


# ------------------------------------------------------------------ A^{-1} r on arrays

def _not_in_the_operator(problem):
    raise NotDifferentiableError(
        f"{problem.name}: derivatives of order two and higher in the operator's tensors "
        "are not implemented (first order is exact); for higher orders use "
        "tp.linalg.solve on the dense matrix")


def _derivative_jvp(problem, tangents, out, xs):
    if any(t is not None for t in tangents[1:]):
        _not_in_the_operator(problem)
    return None if tangents[0] is None else bind(derivative_p, problem, tangents[0], *xs[1:])


def _derivative_vjp(problem, g, out, xs, active):
    if any(active[1:]) and g is not None:
        _not_in_the_operator(problem)
    if g is None or not active[0]:
        return (None,) * len(xs)
    return (bind(derivative_p, problem.flipped(), g, *xs[1:]),) + (None,) * (len(xs) - 1)


# A^{-1} r (A^{-H} r) to tight tolerance: the derivative's solve.
derivative_p = defrules(primitive("operator_solve_derivative",
                                  lambda problem, r, *captured: problem.exact(r, captured),
                                  lambda problem, r, *captured: (code_of_value(r),
                                                                 tuple(r.shape)),
                                  params=Instance(SolveProblem)),
                        _derivative_jvp, _derivative_vjp)


# ------------------------------------------------------------------ the call

def solve(problem: SolveProblem, matvec, b) -> tuple:
    # (x, info): traced nodes, eager tensors, or arrays (nothing to differentiate)
    from ...eager import tensor
    operator = problem.operator
    if operator.traced or is_traced(b):
        x0, info = bind(values_p, problem, b, *operator.tensors)
        z = matvec(x0)
        return bind(map_p, problem, b, z, x0, *operator.tensors), info
    x0, info = problem.values(np.asarray(plain_value(b)), ())
    z = matvec(tensor(x0))
    if not (needs_grad(z) or needs_grad(b)):
        return x0, info
    return bind(map_p, problem, b, z, x0), info

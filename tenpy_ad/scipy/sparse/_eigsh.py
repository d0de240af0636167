"""The primitives of ``tp.scipy.sparse.linalg.eigsh`` on an operator given by its matvec.

The eigenpairs ``(w, V)`` come from SciPy's ARPACK; their derivative is implicit, from
the eigen-equation ``A v_i = w_i v_i`` (never through the Lanczos iterations).  With
``dZ = dA V`` (the matvec's own derivative at the computed vectors) and ``P = V^H dZ``:

* ``dw_i = Re P_ii`` (Hellmann-Feynman);
* ``dv_i = sum_{j != i} v_j P_ji / (w_i - w_j) + x_i`` with ``(A - w_i) x_i = -Q dz_i``,
  ``Q = 1 - V V^H``, solved by MINRES (GMRES if complex) on the complement of the computed vectors.

Three primitives carry this (``Z = A V`` is built by the caller from the user's matvec, so
the derivative of ``Z`` reaches every tensor the matvec uses, visible or not):

* ``eigsh_operator`` (traced only): the values from the captured tensors; its derivative
  is zero, because ``eigsh_operator_map`` carries it;
* ``eigsh_operator_map(Z, w, V, *captured)``: returns ``(w, V)``; JVP ``T(dZ)``, VJP the
  adjoint ``T^H(gw, gV)``;
* ``eigsh_operator_derivative/n``: ``T`` (n = 2) or ``T^H`` (n = 1) on arrays.  Its own
  rules raise: derivatives of order two and higher are not implemented.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as _sla

from ... import dtypes
from ...errors import ConvergenceError, GaugeError, NotDifferentiableError
from ...param_schema import Instance
from ...primitive import bind, code_of_value, primitive
from ...rules import defrules, per_output_count
from ._capture import Captured

#: relative gap below which two computed eigenvalues count as degenerate
DEGENERATE = 1e-9


class EigshProblem:
    """The static param of the eigsh primitives: the operator and the ARPACK options."""

    def __init__(self, operator: Captured, k: int, which: str, v0, ncv, maxiter, tol: float,
                 solve_tol: float = 1e-12, sigma: float | None = None):
        self.operator, self.k, self.which = operator, k, which
        self.v0, self.ncv, self.maxiter, self.tol = v0, ncv, maxiter, tol
        self.solve_tol, self.sigma = solve_tol, sigma

    def linear_operator(self, captured: tuple) -> _sla.LinearOperator:
        n, op = self.operator.n, self.operator
        return _sla.LinearOperator((n, n), matvec=lambda x: op.matvec(np.ravel(x), captured),
                                   dtype=op.dtype)

    def eigenpairs(self, captured: tuple) -> tuple:
        w, v = _sla.eigsh(self.linear_operator(captured), k=self.k, which=self.which,
                          v0=self.v0, ncv=self.ncv, maxiter=self.maxiter, tol=self.tol,
                          sigma=self.sigma)
        order = np.argsort(w, kind="stable")
        return w[order], np.ascontiguousarray(v[:, order])

    def __repr__(self):
        shift = "" if self.sigma is None else f" sigma={self.sigma!r}"
        return f"<eigsh k={self.k} which={self.which}{shift} n={self.operator.n}>"


# ------------------------------------------------------------------ values (traced)

def _values_impl(problem, *captured):
    return problem.eigenpairs(tuple(captured))


def _values_shape(problem, *captured):
    code = dtypes.code_of(problem.operator.dtype)
    return [(dtypes.real_code(code), (problem.k,)), (code, (problem.operator.n, problem.k))]


def _values_jvp(problem, tangents, out, xs):
    return None, None                 # carried by eigsh_operator_map (module docstring)


def _values_vjp(problem, cts, out, xs, active):
    return (None,) * len(xs)


# The k eigenpairs by ARPACK from the captured tensors (traced); zero derivative (the map's).
values_p = defrules(primitive("eigsh_operator", _values_impl, _values_shape, n_outputs=2,
                              params=Instance(EigshProblem)), _values_jvp, _values_vjp)


# ------------------------------------------------------------------ the derivative map

def _map_impl(problem, z, w, v, *captured):
    return np.array(w, copy=True), np.array(v, copy=True)


def _map_shape(problem, z, w, v, *captured):
    return [(code_of_value(w), tuple(w.shape)), (code_of_value(v), tuple(v.shape))]


def _map_jvp(problem, tangents, out, xs):
    dz = tangents[0]
    if dz is None:
        return None, None
    _, w, v, *captured = xs
    return tuple(bind(derivative_p(2), problem, dz, w, v, *captured))


def _map_vjp(problem, cts, out, xs, active):
    gw, gv = cts
    result = [None] * len(xs)
    if active[0] and not (gw is None and gv is None):
        _, w, v, *captured = xs
        gw = np.zeros(w.shape, w.dtype) if gw is None else gw
        gv = np.zeros(v.shape, v.dtype) if gv is None else gv
        result[0] = bind(derivative_p(1), problem, gw, gv, w, v, *captured)
    return tuple(result)


# (w, V) again, differentiable in Z = A V: first-order JVP T(dZ), VJP T^H(gw, gV).
map_p = defrules(primitive("eigsh_operator_map", _map_impl, _map_shape, n_outputs=2,
                           params=Instance(EigshProblem)), _map_jvp, _map_vjp)


# ------------------------------------------------------------------ T and T^H on arrays

def _is_adjoint(operands) -> bool:
    """``T^H`` takes ``(gw, gV, w, V, ...)`` (a 1-d first operand), ``T`` ``(dZ, w, V, ...)``."""
    return operands[0].ndim == 1


def _derivative_impl(problem, *arrays):
    if _is_adjoint(arrays):
        gw, gv, w, v, *captured = arrays
        return adjoint_map(problem, gw, gv, w, v, tuple(captured))
    dz, w, v, *captured = arrays
    return tangent_map(problem, dz, w, v, tuple(captured))


def _derivative_shape(problem, *operands):
    if _is_adjoint(operands):                             # the cotangent of Z
        gv = operands[1]
        return code_of_value(gv), tuple(gv.shape)
    w, v = operands[1], operands[2]
    return [(code_of_value(w), tuple(w.shape)), (code_of_value(v), tuple(v.shape))]


def _no_second_order(*_):
    raise NotDifferentiableError(
        "eigsh: derivatives of order two and higher of eigsh on a LinearOperator are not "
        "implemented (first-order JVPs and VJPs are exact); for higher orders use "
        "tp.linalg.eigh on the dense matrix")


# The eigenpairs' derivative map T (2 outputs: dw, dV) or its adjoint (1: ct of Z = A V).
derivative_p = per_output_count("eigsh_operator_derivative", _derivative_impl,
                                _derivative_shape, _no_second_order, _no_second_order,
                                Instance(EigshProblem))


def _inverse_gaps(w: np.ndarray) -> tuple:
    """``F[j, i] = 1/(w_i - w_j)`` (0 on the diagonal and between degenerate pairs) and
    the mask of degenerate pairs."""
    gaps = w[None, :] - w[:, None]
    scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
    degenerate = np.abs(gaps) <= DEGENERATE * scale
    np.fill_diagonal(degenerate, False)
    safe = np.where(degenerate | (gaps == 0), 1.0, gaps)
    f = np.where(degenerate, 0.0, 1.0 / safe)
    np.fill_diagonal(f, 0.0)
    return f, degenerate


def tangent_map(problem, dz, w, v, captured) -> tuple:
    """``(dw, dV)`` of ``dZ = dA V`` (module docstring)."""
    p = v.conj().T @ dz
    f, degenerate = _inverse_gaps(w)
    if np.any(np.abs(p[degenerate]) > 1e-8 * max(1.0, float(np.max(np.abs(p))))):
        raise GaugeError("eigsh: two computed eigenvalues are degenerate and the "
                         "perturbation mixes their eigenvectors: the eigenvectors' "
                         "derivative depends on the basis of the degenerate subspace")
    rhs = -(dz - v @ p)
    dv = v @ (f * p) + _complement_solves(problem, w, v, rhs, captured)
    return np.real(np.diagonal(p)).astype(w.dtype), dv.astype(v.dtype, copy=False)


def adjoint_map(problem, gw, gv, w, v, captured) -> np.ndarray:
    """The cotangent of ``Z = A V``: ``V (F o G + diag(gw)) + Y``, ``G = V^H gV``."""
    g = v.conj().T @ gv
    f, degenerate = _inverse_gaps(w)
    _check_gauge(g, degenerate, np.iscomplexobj(v))
    rhs = -(gv - v @ g)
    u = v @ (f * g + np.diag(gw)) + _complement_solves(problem, w, v, rhs, captured)
    return u.astype(v.dtype, copy=False)


def _check_gauge(g, degenerate, complex_vectors: bool) -> None:
    """A loss that depends on the basis inside a degenerate subspace (``G`` not Hermitian
    there) or, complex, on the phase of a vector (``Im G_ii != 0``) has no derivative."""
    asymmetric = np.abs(g - g.conj().T)
    tol = 1e-8 * max(1.0, float(np.max(np.abs(g))) if g.size else 1.0)
    if np.any(asymmetric[degenerate] > tol):
        raise GaugeError("eigsh: two computed eigenvalues are degenerate and the loss "
                         "depends on the choice of basis of their eigenspace, so it has no "
                         "derivative; make the loss invariant under rotations of degenerate "
                         "eigenvectors (e.g. use projectors or |<v, u>|^2 summed over the "
                         "subspace)")
    if complex_vectors and np.any(np.abs(np.imag(np.diagonal(g))) > tol):
        raise GaugeError("eigsh: the loss depends on the phase of a complex eigenvector, "
                         "which is arbitrary; make it phase-invariant (|<v, u>|^2, v v^H)")


def _complement_solves(problem, w, v, rhs, captured) -> np.ndarray:
    """Column i: ``x`` with ``Q (A - w_i) Q x = rhs_i`` and ``V^H x = 0`` (MINRES)."""
    op = problem.operator
    out = np.zeros(rhs.shape, np.result_type(rhs.dtype, v.dtype))
    for i in range(rhs.shape[1]):
        b = rhs[:, i] - v @ (v.conj().T @ rhs[:, i])
        norm = np.linalg.norm(b)
        if norm == 0.0:
            continue
        shifted = _projected_shift(op, v, w[i], captured, out.dtype)
        x = _krylov(shifted, b, problem.solve_tol, op.n)
        x = x - v @ (v.conj().T @ x)
        residual = np.linalg.norm(shifted.matvec(x) - b) / norm
        if not residual <= 1e-6:
            raise ConvergenceError(
                f"eigsh: the derivative's solve with (A - w_{i}) on the complement of the "
                f"computed eigenvectors did not converge (relative residual {residual:.3g}); "
                f"w_{i} is probably degenerate with an eigenvalue that was not computed: "
                "raise k to include the whole degenerate subspace", residual, 0)
        out[:, i] = x
    return out


def _krylov(shifted, b, tol: float, n: int) -> np.ndarray:
    """MINRES for real operators; GMRES for complex ones (SciPy's MINRES is real only)."""
    if np.iscomplexobj(b):
        return _sla.gmres(shifted, b, rtol=tol, atol=0.0, restart=min(n, 200),
                          maxiter=20 * n + 100)[0]
    return _sla.minres(shifted, b, rtol=tol, maxiter=20 * n + 100)[0]


def _projected_shift(op: Captured, v, shift, captured, dtype) -> _sla.LinearOperator:
    n = op.n

    def apply(x):
        x = np.ravel(x)
        x = x - v @ (v.conj().T @ x)
        y = op.matvec(x.astype(op.dtype, copy=False), captured) - shift * x
        return y - v @ (v.conj().T @ y)
    return _sla.LinearOperator((n, n), matvec=apply, dtype=dtype)

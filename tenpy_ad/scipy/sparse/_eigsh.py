"""The primitives of ``tp.scipy.sparse.linalg.eigsh`` on an operator given by its matvec.

The eigenpairs ``(w, V)`` of ``A v = w M v`` (``M = 1`` unless given; ``V^H M V = 1``)
come from SciPy's ARPACK; their derivative is implicit, from the eigen-equation (never
through the Lanczos iterations).  With ``dZ_A = dA V``, ``dZ_M = dM V`` (the matvecs' own
derivatives at the eigenvectors), ``P_A = V^H dZ_A``, ``P_M = V^H dZ_M`` and
``E = P_A - P_M diag(w)`` (``E_ji = v_j^H (dA - w_i dM) v_i``):

* ``dw_i = Re E_ii`` (Hellmann-Feynman);
* ``dV = V C + X`` with ``C_ji = E_ji / (w_i - w_j)`` off the diagonal and
  ``C_ii = -P_M,ii / 2`` (from ``v^H M v = 1``), and ``X`` in the M-orthogonal complement
  of the computed vectors: ``B_i x_i = -Q (dz_A,i - w_i dz_M,i)``, with ``Q = 1 - M V V^H``
  and the Hermitian ``B_i = Q (A - w_i M) Q^H + M V V^H M`` (invertible when ``w_i`` is
  not degenerate with an eigenvalue that was not computed), solved by MINRES (GMRES if
  complex) for all columns at once.

Inside a degenerate computed eigenspace ``C`` is ``-P_M / 2``; a tangent that mixes the
degenerate vectors (``E`` not zero there) or a loss that depends on their basis (``G =
V^H gV`` not Hermitian there, or, complex, on a vector's phase: ``Im G_ii != 0``) raises
:class:`~tenpy_ad.errors.GaugeError` (``eigsh_gauge_check``, which also refuses a second
derivative at degenerate eigenvalues: it is not implemented).

Primitives:

* ``eigsh_operator(*c_A, *c_M)``: the values; zero derivative, carried by
* ``eigsh_operator_map(w, V, ...)``: returns ``(w, V)`` again.  Its operands are ``(w, V,
  *c_A, *c_M)`` (the captured tensors: traced, or eager tensors that require grad), and
  its rules build ``dZ``, the complement solve (by the solve primitives of :mod:`._solve`,
  on ``B`` as a captured operator when it must be differentiable) and the cotangents of
  the captured tensors at the differentiable ``(w, V)``: graph nodes traced, taped
  operations when eager mode records a higher derivative, arrays otherwise; derivatives
  of every order.  For a matvec that needs values (no graph: :mod:`._capture`) its
  operands are ``(w, V, Z_A[, Z_M])`` with ``Z = A V`` from the user's matvec on the tape,
  and
* ``eigsh_operator_derivative`` (that case) applies the same maps on arrays; its own rules
  raise (derivatives of order two and higher need the matvec's graph).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as _sla

from ... import dtypes
from ... import numpy as tnp
from ...errors import GaugeError, NotDifferentiableError, UnsupportedError
from ...param_schema import Instance
from ...primitive import (bind, code_of_value, full_like, is_traced, needs_grad, primitive,
                          shape_of)
from ...rules import defrules
from . import _solve
from ._capture import Captured, capture

#: relative gap below which two computed eigenvalues count as degenerate
DEGENERATE = 1e-9


class EigshProblem:
    """The static param of the eigsh primitives: the operators (``A``, optional ``M``),
    SciPy's options and aids (``Minv``, ``OPinv``: operators on arrays), and whether the
    map has the eager operand layout (module docstring)."""

    def __init__(self, operator: Captured, k: int, which: str, v0, ncv, maxiter, tol: float,
                 sigma: float | None = None, metric: Captured | None = None,
                 mode: str = "normal", minv=None, opinv=None, eager: bool = False):
        self.operator, self.metric, self.k, self.which = operator, metric, k, which
        self.v0, self.ncv, self.maxiter, self.tol = v0, ncv, maxiter, tol
        self.sigma, self.mode, self.minv, self.opinv = sigma, mode, minv, opinv
        self.eager = eager

    def eager_variant(self) -> "EigshProblem":
        return EigshProblem(self.operator, self.k, self.which, self.v0, self.ncv,
                            self.maxiter, self.tol, self.sigma, self.metric, self.mode,
                            self.minv, self.opinv, eager=True)

    @property
    def n_a(self) -> int:
        """How many captured tensors of ``A`` lead those of ``M`` among the operands."""
        return len(self.operator.tensors)

    def check_unwritten(self, captured_a, captured_m) -> None:
        """The captured eager tensors still hold their values of the solve (Captured)."""
        self.operator.check_unwritten(captured_a)
        if self.metric is not None:
            self.metric.check_unwritten(captured_m)

    def split(self, captured) -> tuple:
        captured = tuple(captured)
        return captured[:self.n_a], captured[self.n_a:]

    def _linear(self, op: Captured, captured: tuple) -> _sla.LinearOperator:
        return _sla.LinearOperator((op.n, op.n), dtype=op.dtype,
                                   matvec=lambda x: op.matvec(np.ravel(x), captured))

    def eigenpairs(self, captured_a: tuple, captured_m: tuple) -> tuple:
        """``(w, V)`` by SciPy's eigsh, ``w`` ascending, ``V^H M V = 1``."""
        m = None if self.metric is None else self._linear(self.metric, captured_m)
        w, v = _sla.eigsh(self._linear(self.operator, captured_a), k=self.k, M=m,
                          sigma=self.sigma, which=self.which, v0=self.v0, ncv=self.ncv,
                          maxiter=self.maxiter, tol=self.tol, Minv=self.minv,
                          OPinv=self.opinv, mode=self.mode)
        order = np.argsort(w, kind="stable")
        w, v = w[order], np.ascontiguousarray(v[:, order])
        if m is not None:
            v = self._normalised(v, m)
        return w, v

    def _normalised(self, v: np.ndarray, m) -> np.ndarray:
        """The vectors scaled to ``v^H M v = 1`` (what the derivative assumes)."""
        norms = np.real(np.einsum("ij,ij->j", v.conj(), m.matmat(v)))
        if not np.all(norms > 0):
            raise UnsupportedError("eigsh: M must be Hermitian positive definite on "
                                   f"tensors (v^H M v = {norms.min():.3g} for an eigenvector)")
        return v / np.sqrt(norms)

    def __repr__(self):
        shift = "" if self.sigma is None else f" sigma={self.sigma!r}"
        metric = "" if self.metric is None else " M"
        return f"<eigsh k={self.k} which={self.which}{shift}{metric} n={self.operator.n}>"


# ------------------------------------------------------------------ values (traced)

def _values_impl(problem, *captured):
    return problem.eigenpairs(*problem.split(captured))


def _values_shape(problem, *captured):
    code = dtypes.code_of(problem.operator.dtype)
    return [(dtypes.real_code(code), (problem.k,)), (code, (problem.operator.n, problem.k))]


# The k eigenpairs by ARPACK from the captured tensors; zero derivative (the map's).
values_p = defrules(primitive("eigsh_operator", _values_impl, _values_shape, n_outputs=2,
                              params=Instance(EigshProblem)),
                    lambda problem, tangents, out, xs: (None, None),
                    lambda problem, cts, out, xs, active: (None,) * len(xs))


# ------------------------------------------------------------------ operators as code

class ConstantApply:
    """The param of ``operator_apply``: an operator without traced tensors (arrays, a
    SciPy operator) applied to a traced vector, or its adjoint."""

    def __init__(self, operator: Captured, adjoint: bool = False):
        self.operator, self.adjoint = operator, adjoint
        self._flipped = None

    def flipped(self) -> "ConstantApply":
        if self._flipped is None:
            self._flipped = ConstantApply(self.operator, not self.adjoint)
            self._flipped._flipped = self
        return self._flipped

    def __repr__(self):
        return f"<apply n={self.operator.n}{' adjoint' if self.adjoint else ''}>"


def _constant_apply(params, x):
    op = params.operator
    apply = op.rmatvec if params.adjoint else op.matvec
    return np.asarray(apply(x.astype(op.dtype, copy=False), ()), np.result_type(x, op.dtype))


def _constant_apply_shape(params, x):
    code = code_of_value(x)
    if np.dtype(params.operator.dtype).kind == "c":
        code = dtypes.complex_code(code)
    return code, tuple(x.shape)


# A x for a constant operator and a traced x: linear, to any order.
apply_p = defrules(primitive("operator_apply", _constant_apply, _constant_apply_shape,
                             params=Instance(ConstantApply)),
                   lambda params, tangents, out, xs: None if tangents[0] is None
                   else bind(apply_p, params, tangents[0]),
                   lambda params, g, out, xs, active: (None if g is None
                                                       else bind(apply_p, params.flipped(),
                                                                 g),))


def apply(op: Captured, x, captured):
    """``A x`` as code: the operator's graph (traced), ``operator_apply`` (a constant
    operator on a traced vector) or the matvec on arrays."""
    if op.graph is not None:
        return op.graph.apply(x, captured)
    if is_traced(x) or needs_grad(x):            # (eager: a higher derivative's tape)
        return bind(apply_p, ConstantApply(op), x)
    return op.matvec(np.asarray(x), ())


def _columns(op: Captured | None, x, captured):
    """``A X`` column by column (``X`` itself for a missing ``M``)."""
    if op is None:
        return x
    return tnp.stack([apply(op, x[:, i], captured) for i in range(shape_of(x)[1])], axis=1)


# ------------------------------------------------------------------ gauge checks

class GaugeCheck:
    """The param of ``eigsh_gauge_check``: ``kind`` "tangent" (``E`` must vanish between
    degenerate eigenvalues) or "cotangent" (``G`` Hermitian there, real diagonal if
    complex); ``order`` 2 for its derivatives, which refuse degenerate eigenvalues."""

    def __init__(self, kind: str, order: int = 1):
        self.kind, self.order = kind, order
        self._next = None

    def higher(self) -> "GaugeCheck":
        if self._next is None:
            self._next = self if self.order > 1 else GaugeCheck(self.kind, 2)
        return self._next

    def __repr__(self):
        return f"<gauge {self.kind} order={self.order}>"


def _degenerate_pairs(w: np.ndarray) -> np.ndarray:
    gaps = w[None, :] - w[:, None]
    scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
    degenerate = np.abs(gaps) <= DEGENERATE * scale
    np.fill_diagonal(degenerate, False)
    return degenerate


def _check_impl(check, x, w):
    degenerate = _degenerate_pairs(np.asarray(w))
    if check.order > 1:
        if np.any(degenerate):
            raise NotDifferentiableError(
                "eigsh: derivatives of order two and higher of eigenvectors at degenerate "
                "computed eigenvalues are not implemented")
        return np.array(x, copy=True)
    tol = 1e-8 * max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)
    if check.kind == "tangent":
        if np.any(np.abs(x[degenerate]) > tol):
            raise GaugeError("eigsh: two computed eigenvalues are degenerate and the "
                             "perturbation mixes their eigenvectors: the eigenvectors' "
                             "derivative depends on the basis of the degenerate subspace")
        return np.array(x, copy=True)
    if np.any(np.abs(x - x.conj().T)[degenerate] > tol):
        raise GaugeError("eigsh: two computed eigenvalues are degenerate and the loss "
                         "depends on the choice of basis of their eigenspace, so it has no "
                         "derivative; make the loss invariant under rotations of degenerate "
                         "eigenvectors (e.g. use projectors or |<v, u>|^2 summed over the "
                         "subspace)")
    if np.iscomplexobj(x) and np.any(np.abs(np.imag(np.diagonal(x))) > tol):
        raise GaugeError("eigsh: the loss depends on the phase of a complex eigenvector, "
                         "which is arbitrary; make it phase-invariant (|<v, u>|^2, v v^H)")
    return np.array(x, copy=True)


# X itself, after checking it against the degenerate pairs of w (GaugeError); linear in X.
check_p = defrules(primitive("eigsh_gauge_check", _check_impl,
                             lambda check, x, w: (code_of_value(x), tuple(x.shape)),
                             params=Instance(GaugeCheck)),
                   lambda check, tangents, out, xs: None if tangents[0] is None
                   else bind(check_p, check.higher(), tangents[0], xs[1]),
                   lambda check, g, out, xs, active: (
                       None if g is None or not active[0]
                       else bind(check_p, check.higher(), g, xs[1]), None))


def checked(kind: str, x, w):
    """``x`` (``E`` of a tangent or ``G`` of a cotangent) checked against the degenerate
    pairs of ``w``: GaugeError where the derivative depends on a degenerate basis."""
    return bind(check_p, GaugeCheck(kind), x, w)


# ------------------------------------------------------------------ the maps, as code

def _gaps(w):
    """``F[j, i] = 1/(w_i - w_j)`` (0 on the diagonal and between degenerate pairs) and the
    mask of those entries, as code of ``w`` (differentiable where it is not masked)."""
    gaps = w[None, :] - w[:, None]
    scale = tnp.maximum(1.0, tnp.max(tnp.abs(w)))
    masked = (tnp.abs(gaps) <= DEGENERATE * scale) | np.eye(shape_of(w)[0], dtype=bool)
    return tnp.where(masked, 0.0, 1.0 / tnp.where(masked, 1.0, gaps)), masked


class Pairs:
    """The eigenpairs, ``M V`` and how to apply ``A`` and ``M`` to columns and to solve
    on the complement, as code (graph nodes, or arrays in the eager derivative)."""

    def __init__(self, problem: EigshProblem, w, v, captured_a, captured_m):
        self.problem, self.w, self.v = problem, w, v
        self.ca, self.cm = captured_a, captured_m
        self.mv = _columns(problem.metric, v, captured_m)

    def a(self, x):
        return _columns(self.problem.operator, x, self.ca)

    def m(self, x):
        return _columns(self.problem.metric, x, self.cm)

    def shifted(self, y):
        """``B y`` for the raveled ``(n, k)`` block ``y`` (module docstring)."""
        n, k = self.problem.operator.n, self.problem.k
        y = tnp.reshape(y, (n, k))
        vh, mvh = tnp.conj(self.v).T, tnp.conj(self.mv).T
        inside = y - self.v @ (mvh @ y)                       # Q^H y
        t = self.a(inside) - self.m(inside) * self.w[None, :]
        return tnp.reshape(t - self.mv @ (vh @ t) + self.mv @ (mvh @ y), (-1,))

    def complement(self, r):
        """``B_i^{-1} r_i`` for each column (the derivative's solves)."""
        n, k = self.problem.operator.n, self.problem.k
        dtype = np.result_type(self.problem.operator.dtype, dtypes.DTYPES[code_of_value(r)])
        failure = ("eigsh: the derivative's solve with (A - w_{i} M) on the complement of the "
                   "computed eigenvectors did not converge (relative residual "
                   "{residual:.3g}); w_{i} is probably degenerate with an eigenvalue that "
                   "was not computed: raise k to include the whole degenerate subspace")
        if self._differentiable(r):
            # B as an operator of the eigenpairs and the captured tensors (graph nodes, or
            # eager tensors lifted by capture), solved by the differentiable primitives
            op = capture("eigsh", self.shifted, n * k, dtype)
            solve = _solve.SolveProblem("eigsh", None, op, None, {}, hermitian=True,
                                        blocks=k, failure=failure)
            x = _solve.solve_traced(solve, tnp.reshape(r, (-1,)), op.tensors)[0]
        else:
            op = Captured("eigsh", n * k, dtype, (), lambda x, _: self.shifted(x), None)
            solve = _solve.SolveProblem("eigsh", None, op, None, {}, hermitian=True,
                                        blocks=k, failure=failure)
            x = solve.solve_exactly(np.ravel(r).astype(dtype, copy=False), ())
        return tnp.reshape(x, (n, k))

    def _differentiable(self, r) -> bool:
        """Whether the complement's solve must be differentiable: traced, or eager values
        on the tape of a derivative being recorded (a higher order)."""
        values = (r, self.v, self.w, self.mv, *self.ca, *self.cm)
        return any(is_traced(x) or needs_grad(x) for x in values)

    def project_out(self, x):
        """``Q x = x - M V V^H x``."""
        return x - self.mv @ (tnp.conj(self.v).T @ x)


def tangent_map(pairs: Pairs, dza, dzm) -> tuple:
    """``(dw, dV)`` of ``dZ_A = dA V`` and ``dZ_M = dM V`` (None: zero)."""
    w, v = pairs.w, pairs.v
    vh = tnp.conj(v).T
    e = vh @ dza
    pm = None if dzm is None else vh @ dzm
    if pm is not None:
        e = e - pm * w[None, :]
    e = checked("tangent", e, w)
    f, masked = _gaps(w)
    c = f * e
    if pm is not None:            # the normalisation v^H M v = 1, and inside degenerate blocks
        c = c - 0.5 * tnp.where(masked, pm, 0.0)
    r = dza if dzm is None else dza - dzm * w[None, :]
    dv = v @ c + pairs.complement(-pairs.project_out(r))
    return tnp.real(tnp.diagonal(e)), dv


def adjoint_map(pairs: Pairs, gw, gv) -> tuple:
    """The cotangents ``(U_A, U_M)`` of ``Z_A = A V`` and ``Z_M = M V`` (``U_M`` None
    without ``M``): the adjoint of :func:`tangent_map`."""
    w, v = pairs.w, pairs.v
    k = shape_of(v)[1]
    diag_gw = 0.0 if gw is None else tnp.diag(gw)
    if gv is None:
        ct_e, g, ct_r, masked = diag_gw + tnp.zeros((k, k)), None, None, None
    else:
        g = checked("cotangent", tnp.conj(v).T @ gv, w)
        f, masked = _gaps(w)
        ct_e = f * g + diag_gw
        y = pairs.complement(gv)
        ct_r = -(y - v @ (tnp.conj(pairs.mv).T @ y))                  # -Q^H B^{-1} gV
    ua = v @ ct_e if ct_r is None else v @ ct_e + ct_r
    if pairs.problem.metric is None:
        return ua, None
    ct_pm = -ct_e * w[None, :]
    if g is not None:
        ct_pm = ct_pm - 0.5 * tnp.where(masked, g, 0.0)
    um = v @ ct_pm
    return ua, (um if ct_r is None else um - ct_r * w[None, :])


# ------------------------------------------------------------------ the map primitive

def _map_impl(problem, w, v, *rest):
    return np.array(w, copy=True), np.array(v, copy=True)


def _map_shape(problem, w, v, *rest):
    return [(code_of_value(w), tuple(w.shape)), (code_of_value(v), tuple(v.shape))]


def _eager_derivative(problem, *operands) -> tuple:
    """A matvec without a graph: ``(dw, dV)`` of ``(dZ_A, dZ_M)`` or ``(U_A, U_M)`` of
    ``(gw, gV)`` on arrays (the tangent map or its adjoint), from the eigenpairs and the Z
    of the map."""
    return tuple(bind(derivative_p, problem, *operands))


def _map_jvp(problem, tangents, out, xs):
    if problem.eager:
        dza, dzm = tangents[2], (tangents[3] if len(tangents) > 3 else None)
        if dza is None and dzm is None:
            return None, None
        zeros = full_like(xs[1], 0)
        return _eager_derivative(problem, zeros if dza is None else dza,
                                 zeros if dzm is None else dzm, xs[0], xs[1], *xs[2:])
    ca, cm = problem.split(xs[2:])
    problem.check_unwritten(ca, cm)
    dca, dcm = problem.split(tangents[2:])
    dza = _pushforward(problem.operator, out[1], dca, ca)
    dzm = None if problem.metric is None else _pushforward(problem.metric, out[1], dcm, cm)
    if dza is None and dzm is None:
        return None, None
    pairs = Pairs(problem, out[0], out[1], ca, cm)
    return tangent_map(pairs, full_like(out[1], 0) if dza is None else dza, dzm)


def _pushforward(op: Captured, v, dcs, cs):
    if not cs:
        return None
    return tnp.stack([op.graph.pushforward(v[:, i], dcs, cs) for i in range(shape_of(v)[1])],
                     axis=1) if any(d is not None for d in dcs) else None


def _pullback(op: Captured, v, u, cs, active) -> list:
    """The cotangents of ``c`` of ``sum_i <u_i, A(c) v_i>`` (None where not active)."""
    if u is None or not any(active):
        return [None] * len(cs)
    total = None
    for i in range(shape_of(v)[1]):
        cts = op.graph.pullback(v[:, i], u[:, i], cs)
        total = cts if total is None else [a + b for a, b in zip(total, cts)]
    return [ct if on else None for ct, on in zip(total, active)]


def _map_vjp(problem, cts, out, xs, active):
    gw, gv = cts
    result = [None] * len(xs)
    if gw is None and gv is None:
        return tuple(result)
    if problem.eager:
        if any(active[2:]):
            w, v = xs[0], xs[1]
            gw = tnp.zeros(w.shape, w.dtype) if gw is None else gw
            gv = tnp.zeros(v.shape, v.dtype) if gv is None else gv
            ua, um = _eager_derivative(problem, gw, gv, w, v, *xs[2:])
            result[2] = ua if active[2] else None
            if len(xs) > 3:
                result[3] = um if active[3] else None
        return tuple(result)
    ca, cm = problem.split(xs[2:])
    active_a, active_m = problem.split(active[2:])
    if not (any(active_a) or any(active_m)):
        return tuple(result)
    problem.check_unwritten(ca, cm)
    pairs = Pairs(problem, out[0], out[1], ca, cm)
    ua, um = adjoint_map(pairs, gw, gv)
    result[2:] = (_pullback(problem.operator, out[1], ua, ca, active_a)
                  + (_pullback(problem.metric, out[1], um, cm, active_m) if cm else []))
    return tuple(result)


# (w, V) again, differentiable in the operators (module docstring).
map_p = defrules(primitive("eigsh_operator_map", _map_impl, _map_shape, n_outputs=2,
                           params=Instance(EigshProblem)), _map_jvp, _map_vjp)


# ------------------------------------------------------------------ no graph: the maps on arrays

def _derivative_impl(problem, a, b, w, v, *tied):
    pairs = Pairs(problem, w, v, (), ())
    if a.ndim == 1:                                      # (gw, gV): the adjoint
        ua, um = adjoint_map(pairs, a, b)
        return ua.astype(v.dtype, copy=False), (np.zeros_like(v) if um is None
                                                else um.astype(v.dtype, copy=False))
    dw, dv = tangent_map(pairs, a, None if problem.metric is None else b)
    return np.asarray(dw, w.dtype), dv.astype(v.dtype, copy=False)


def _derivative_shape(problem, a, b, w, v, *tied):
    if a.ndim == 1:
        return [(code_of_value(v), tuple(v.shape))] * 2
    return [(code_of_value(w), tuple(w.shape)), (code_of_value(v), tuple(v.shape))]


def _no_second_order(*_):
    raise NotDifferentiableError(
        "eigsh: derivatives of order two and higher of eigsh on a LinearOperator whose "
        "matvec needs values (it could not be traced: NumPy or SciPy code on arrays, "
        "float() or control flow on the vector's values) are not implemented (first order "
        "is exact); write the matvec with tensor operations (tp.* or NumPy functions on "
        "tensors), which are differentiated to every order, eager or traced")


# A matvec without a graph: (dw, dV) of (dZ_A, dZ_M), or (U_A, U_M) of (gw, gV), on
# arrays; its rules raise.
# Its trailing operands are the Z of the map (unused values): they depend on the
# operator's tensors, so that its results are on the tape when a higher derivative is
# recorded, and that derivative reaches the refusal instead of a silent zero.
derivative_p = defrules(primitive("eigsh_operator_derivative", _derivative_impl,
                                  _derivative_shape, n_outputs=2,
                                  params=Instance(EigshProblem)),
                        _no_second_order, _no_second_order)

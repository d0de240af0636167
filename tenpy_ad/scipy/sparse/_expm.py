"""The primitive of ``tp.scipy.sparse.linalg.expm_multiply``: ``y = exp(A) B`` by SciPy's
``expm_multiply`` on an operator given by its matvec, differentiable in ``B`` to any order
(``dy = exp(A) dB``, reverse ``exp(A^H) g``: the same primitive on the adjoint operator).

The derivative with respect to tensors inside the operator is not implemented: without a
dense matrix it is an integral ``int_0^1 exp((1-s)A) dA exp(sA) B ds`` over every
intermediate vector, not a finite set of matvecs.  Those tensors are operands (traced: the
captured tensors; eager: ``Z = A B`` from the user's matvec, which reaches them on the
tape), and a rule asked for their derivative raises instead of returning zero.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as _sla

from ... import dtypes
from ...errors import NotDifferentiableError
from ...ops import elementwise as ew
from ...param_schema import Instance
from ...primitive import bind, code_of_value, is_complex_value, primitive
from ...rules import defrules
from ._capture import Captured


class ExpmProblem:
    """The static param: the operator, ``traceA``, and whether to apply ``exp(A^H)``."""

    def __init__(self, operator: Captured, trace: float, adjoint: bool = False):
        self.operator, self.trace, self.adjoint = operator, trace, adjoint
        self._flipped = None

    def flipped(self) -> "ExpmProblem":
        if self._flipped is None:
            self._flipped = ExpmProblem(self.operator, np.conj(self.trace), not self.adjoint)
            self._flipped._flipped = self
        return self._flipped

    def apply(self, b: np.ndarray, captured: tuple) -> np.ndarray:
        op = self.operator
        forward, backward = op.matvec, op.rmatvec
        if self.adjoint:
            forward, backward = backward, forward
        dtype = np.result_type(b.dtype, op.dtype)
        linear = _sla.LinearOperator(
            (op.n, op.n), dtype=dtype,
            matvec=lambda x: forward(np.ravel(x).astype(op.dtype, copy=False), captured),
            rmatvec=lambda x: backward(np.ravel(x).astype(op.dtype, copy=False), captured))
        return np.asarray(_sla.expm_multiply(linear, b.astype(dtype), traceA=self.trace),
                          dtype)

    def __repr__(self):
        return f"<expm_multiply n={self.operator.n}{' adjoint' if self.adjoint else ''}>"


def _impl(problem, b, *extra):
    captured = tuple(extra) if problem.operator.traced else ()
    return problem.apply(b, captured)


def _shape_rule(problem, b, *extra):
    code = code_of_value(b)
    if np.dtype(problem.operator.dtype).kind == "c":
        code = dtypes.complex_code(code)
    return code, tuple(b.shape)


def _inside_the_operator():
    raise NotDifferentiableError(
        "expm_multiply: the derivative with respect to tensors inside the operator is not "
        "implemented (only with respect to B); use tp.scipy.linalg.expm(a) @ b on the dense "
        "matrix for it")


def _jvp(problem, tangents, out, xs):
    if any(t is not None for t in tangents[1:]):
        _inside_the_operator()
    return None if tangents[0] is None else bind(expm_p, problem, tangents[0], *xs[1:])


def _vjp(problem, g, out, xs, active):
    if g is None:
        return (None,) * len(xs)
    if any(active[1:]):
        _inside_the_operator()
    ct = bind(expm_p, problem.flipped(), g, *xs[1:]) if active[0] else None
    if ct is not None and not is_complex_value(xs[0]) and is_complex_value(ct):
        ct = ew.real(ct)                      # a real B of a complex operator
    return (ct,) + (None,) * (len(xs) - 1)


# exp(A) B (exp(A^H) B) by SciPy's expm_multiply on the captured operator.
expm_p = defrules(primitive("operator_expm_multiply", _impl, _shape_rule,
                            params=Instance(ExpmProblem)), _jvp, _vjp)

"""``tp.scipy.sparse.linalg``: SciPy's iterative methods on operators whose matvec is tensor
code, with exact implicit derivatives.

``LinearOperator(shape, matvec, ...)`` takes a matvec written with tenpy_ad (or NumPy)
functions, typically a closure over tensors: an effective Hamiltonian
``lambda v: tp.einsum("awb,wxst,cxd,btd->asc", L, W, R, v.reshape(D, d, D)).ravel()``.
``eigsh``, ``svds``, ``gmres``, ``cg`` and ``minres`` compute their values with SciPy's
own solvers (ARPACK, Krylov) on arrays and differentiate them through the equations they
solve, never through the iterations:

* ``eigsh``: ``dw_i = v_i^H dA v_i`` (Hellmann-Feynman); ``dv_i`` from ``(A - w_i)``
  solved by MINRES (GMRES if complex) on the complement of the computed eigenvectors plus
  ``v_j (v_j^H dA v_i)/(w_i - w_j)`` inside them.  Generalised (``M=``, Hermitian positive
  definite, a matrix, tensor or operator whose matvec may be tensor code): ``A v = w M v``
  with ``V^H M V = 1``, ``dw_i = v_i^H (dA - w_i dM) v_i``, and ``dv_i`` gains
  ``-v_i (v_i^H dM v_i)/2`` from the normalisation (:mod:`._eigsh`).  A loss that depends
  on the basis of a degenerate computed eigenspace (or on a complex eigenvector's phase)
  raises :class:`~tenpy_ad.errors.GaugeError`; an eigenvalue degenerate with one not
  computed raises :class:`~tenpy_ad.errors.ConvergenceError` (raise ``k``).
* ``gmres``, ``cg``, ``minres``: ``dx = A^{-1} (db - dA x)``, the adjoint solve with
  ``A^H`` (the VJP of the matvec).
* ``svds``: ``eigsh`` of the Hermitian dilation ``[[0, A], [A^H, 0]]`` (needs ``rmatvec``).
* ``expm_multiply``: ``exp(A) B``; ``dy = exp(A) dB + int_0^1 exp((1-s)A) dA exp(sA) B ds``,
  forward as ``exp`` of the block operator ``[[A, dA], [0, A]]`` on ``[dB; B]``, reverse
  (for the operator's tensors) by a Gauss-Legendre quadrature in ``s`` whose node count
  follows from a norm estimate of ``A`` (:mod:`._expm`).

**Which tensors the derivative reaches.**  The matvec is called once on a placeholder
vector (:mod:`._capture`).  Traced, the traced tensors the result depends on other than
through the vector (the graph's frontier) become operands of the solver's node.  Eager,
each tensor that requires grad entering that trace stands in it as a placeholder of its
own (:class:`~tenpy_ad.primitive.lifting`), so every such tensor the matvec uses through
tensor operations, however it reaches it (closure, attribute, global, a tensor computed
from others before or inside the matvec), becomes an operand and gets its gradient.  The
values are computed by a program compiled from the graph.  A matvec that hides a tensor
from the tape (``np.asarray`` of a tensor that requires grad, a SciPy function on it)
raises :class:`~tenpy_ad.errors.NotDifferentiableError` naming the solver, and one that
mixes traced tensors with eager tensors that require grad raises
:class:`~tenpy_ad.errors.ArgumentError`: a gradient is never silently dropped.
(``tp.no_grad()`` and ``.detach()`` inside the matvec are explicit and respected.)

**Orders.**  Derivatives of every order are exact, eager (``backward(create_graph=True)``,
nested ``tp.grad``, ``tp.jvp`` of ``tp.grad``) and traced (``tp.ad``, ``tp.compile``,
``tp.jit``) alike: the rules are made of the same solve primitives (a linear solve's
derivative is a solve with the same operator or its adjoint, as JAX's
``custom_linear_solve``; the eigenvectors' correction a solve with the shifted, projected
operator) and of the matvec's graph at the differentiable solution (``dA x`` and the
cotangents of the captured tensors), so a Hessian-vector product is the first-order rules
applied again, with no unrolled iterations.  The first order runs on arrays (compiled
programs); only when a higher derivative is recorded do the rules evaluate the graph on
the tape.  Exceptions: a matvec that cannot be traced (it needs values: NumPy or SciPy
code on arrays, ``float()`` of the vector) is differentiated through the tape of its calls
on the computed vectors, exactly at first order, and its second derivative raises
:class:`~tenpy_ad.errors.NotDifferentiableError`; at degenerate computed eigenvalues the
eigenvectors' second derivative raises too.  The rules use the captured tensors' values of
the solve; a tensor the matvec uses (a leaf) written in place after the solve makes a
higher derivative raise :class:`~tenpy_ad.errors.TapeError`.  On operators without tensors
(plain arrays, SciPy operators) the results are arrays.

**eigsh's options.**  A real ``sigma`` (shift-invert, ``mode`` "normal" or "cayley"; SciPy
inverts ``A - sigma M`` iteratively unless ``OPinv`` is given) finds the eigenpairs nearest
it, with the same derivative.  ``Minv`` and ``OPinv`` are solver aids with SciPy's
semantics: they must be consistent with ``A`` and ``M``, the eigenpairs do not depend on
them, so they have no derivative; they must be constant (arrays, SciPy operators, or
operators of tensors that need no gradient), and one that uses tensors that require grad,
or traced tensors, raises :class:`~tenpy_ad.errors.NotDifferentiableError`.  ``mode``
"buckling" (whose vectors are not M-orthonormal), a complex ``sigma`` and the solvers'
preconditioners ``M`` raise :class:`~tenpy_ad.errors.UnsupportedError`.
"""
from __future__ import annotations

import numbers
from typing import Callable

import numpy as np
import scipy.sparse.linalg as _sla

from ... import dtypes
from ... import numpy as tnp
from ...eager import no_grad, tensor
from ...errors import (ArgumentError, ArgumentValueError, NotDifferentiableError,
                       ShapeError, TenpyAdError, UnsupportedError)
from ...numpy._dispatch import implements
from ...primitive import (bind, code_of_value, is_tensor, is_traced, needs_grad,
                         plain_value, shape_of)
from . import _eigsh, _expm, _solve
from ._capture import Captured, capture

__all__ = ["LinearOperator", "aslinearoperator", "eigsh", "svds", "gmres", "cg", "minres",
           "expm_multiply"]


# ------------------------------------------------------------------ operators

class LinearOperator:
    """SciPy's ``LinearOperator`` with a matvec on tensors: ``A @ v``, ``A.matvec(v)``,
    ``A.dot``, ``A.matmat``, ``A.H`` and ``A.T`` (when ``rmatvec`` is given), ``A.adjoint()``.
    ``dtype`` defaults to that of ``matvec(zeros)`` (at least float64)."""

    def __init__(self, shape, matvec: Callable, rmatvec: Callable | None = None,
                 matmat: Callable | None = None, dtype=None,
                 rmatmat: Callable | None = None):
        shape = tuple(int(s) for s in shape)
        if len(shape) != 2 or min(shape) < 0:
            raise ShapeError(f"LinearOperator: shape must be (m, n), got {shape}")
        if not callable(matvec):
            raise ArgumentError("LinearOperator: matvec must be callable")
        self.shape, self._mv, self._rmv = shape, matvec, rmatvec
        self._mm, self._rmm = matmat, rmatmat
        self.dtype = np.dtype(dtype) if dtype is not None else self._infer_dtype()
        self.ndim = 2

    def _infer_dtype(self) -> np.dtype:
        out = self._mv(np.zeros(self.shape[1]))
        return np.result_type(getattr(out, "dtype", np.float64), np.float64)

    def matvec(self, x):
        """``A x`` for a vector (or an ``(n, 1)`` column, as SciPy)."""
        column = len(shape_of(x)) == 2
        y = self._mv(tnp.reshape(x, (-1,)) if column else x)
        return tnp.reshape(y, (-1, 1)) if column else y

    def rmatvec(self, x):
        """``A^H x``."""
        if self._rmv is None:
            raise UnsupportedError("LinearOperator: rmatvec is not defined (give rmatvec=)")
        return self._rmv(x)

    def matmat(self, x):
        """``A X`` for a matrix, column by column unless ``matmat`` was given."""
        if self._mm is not None:
            return self._mm(x)
        return tnp.stack([self._mv(x[:, j]) for j in range(shape_of(x)[1])], axis=1)

    def rmatmat(self, x):
        if self._rmm is not None:
            return self._rmm(x)
        return tnp.stack([self.rmatvec(x[:, j]) for j in range(shape_of(x)[1])], axis=1)

    def dot(self, x):
        return self.matvec(x) if len(shape_of(x)) == 1 else self.matmat(x)

    __matmul__ = __call__ = dot

    def adjoint(self) -> "LinearOperator":
        if self._rmv is None:
            raise UnsupportedError("LinearOperator.H: needs rmatvec")
        return LinearOperator(self.shape[::-1], self._rmv, self._mv, dtype=self.dtype)

    def transpose(self) -> "LinearOperator":
        if self._rmv is None:
            raise UnsupportedError("LinearOperator.T: needs rmatvec")
        return LinearOperator(self.shape[::-1], lambda x: tnp.conj(self._rmv(tnp.conj(x))),
                              lambda x: tnp.conj(self._mv(tnp.conj(x))), dtype=self.dtype)

    H = property(adjoint)
    T = property(transpose)

    def __repr__(self):
        return f"<{self.shape[0]}x{self.shape[1]} tp LinearOperator with dtype={self.dtype}>"


def aslinearoperator(A) -> LinearOperator:
    """``A`` as a :class:`LinearOperator`: itself, a SciPy operator's methods, or the
    products with a dense matrix (tensor or array)."""
    if isinstance(A, LinearOperator):
        return A
    if isinstance(A, _sla.LinearOperator):
        return LinearOperator(A.shape, A.matvec, A.rmatvec, dtype=A.dtype)
    if is_tensor(A) or isinstance(A, (np.ndarray, list, tuple)):
        if len(shape_of(A)) != 2:
            raise ShapeError(f"aslinearoperator: expected a matrix, got shape "
                             f"{list(shape_of(A))}")
        return LinearOperator(shape_of(A), lambda v: A @ v,
                              lambda v: tnp.conj(tnp.matrix_transpose(A)) @ v,
                              dtype=np.result_type(A.dtype, np.float64))
    raise ArgumentError(f"aslinearoperator: cannot make an operator of {type(A).__name__}")


def _square(name: str, A) -> LinearOperator:
    op = aslinearoperator(A)
    if op.shape[0] != op.shape[1]:
        raise ShapeError(f"{name}: expected a square operator, got shape {op.shape}")
    return op


def _promoted(op: LinearOperator, b) -> LinearOperator:
    """``op`` applied to vectors of the common dtype of ``op`` and ``b`` (a complex ``b``
    of a real operator: the matvec runs on complex vectors)."""
    dtype = np.result_type(op.dtype, dtypes.DTYPES[code_of_value(b)])
    return op if dtype == op.dtype else LinearOperator(op.shape, op._mv, op._rmv, dtype=dtype)


def _captured(name: str, op: LinearOperator, lift: bool = True) -> Captured:
    try:
        return capture(name, _guarded(name, op._mv), op.shape[1], op.dtype, lift)
    except NotDifferentiableError as error:
        raise NotDifferentiableError(f"{name}: {error}") from None


def _guarded(name: str, matvec: Callable) -> Callable:
    """``matvec`` with its errors naming the solver."""
    def call(v):
        try:
            return matvec(v)
        except TenpyAdError as error:
            if str(error).startswith(name):
                raise
            raise type(error)(f"{name}: in the matvec: {error}") from None
    return call


def _columns(name: str, matvec: Callable, vectors, n: int):
    """``A V`` column by column, from the user's matvec (the derivative's route)."""
    cols = [matvec(vectors[:, i]) for i in range(shape_of(vectors)[1])]
    for col in cols:
        if tuple(shape_of(col)) != (n,):
            raise ShapeError(f"{name}: the matvec returned shape {list(shape_of(col))}, "
                             f"expected [{n}]")
    return tnp.stack(cols, axis=1)


# ------------------------------------------------------------------ eigsh

@implements("scipy.sparse.linalg.eigsh", fallback=False)
def eigsh(A, k: int = 6, M=None, sigma=None, which: str = "LM", v0=None, ncv=None,
          maxiter=None, tol: float = 0, return_eigenvectors: bool = True, Minv=None,
          OPinv=None, mode: str = "normal"):
    """``k`` eigenpairs ``(w, v)`` of the Hermitian operator ``A`` (of ``A v = w M v`` with
    ``M`` Hermitian positive definite, ``v^H M v = 1``) by SciPy's ARPACK, ``w`` ascending;
    differentiable to every order in every tensor the matvecs of ``A`` and ``M`` use (see
    the module docstring for the rule, the modes and the errors).  ``sigma`` (a real
    shift; ``mode`` "normal" or "cayley") finds the eigenvalues nearest it by SciPy's
    shift-invert; ``Minv`` and ``OPinv`` are SciPy's solver aids (constant operators)."""
    if sigma is not None and not isinstance(sigma, numbers.Real):
        raise UnsupportedError(f"eigsh: sigma= on tensors takes a real number, got "
                               f"sigma={sigma!r}")
    if mode not in ("normal", "cayley"):
        raise UnsupportedError(f"eigsh: mode={mode!r} is not supported on tensors (its "
                               "eigenvectors are not M-orthonormal); use mode='normal' or "
                               "'cayley'")
    op = _square("eigsh", A)
    n = op.shape[0]
    if not (isinstance(k, (int, np.integer)) and 1 <= k < n):
        raise ArgumentValueError(f"eigsh: k must be an integer with 1 <= k < n = {n}, "
                                 f"got {k!r}")
    if which not in ("LM", "SM", "LA", "SA", "BE"):
        raise ArgumentValueError(f"eigsh: which must be LM, SM, LA, SA or BE, got {which!r}")
    mop = None if M is None else _metric(M, n)
    if mop is not None and mop.dtype != op.dtype:
        dtype = np.result_type(op.dtype, mop.dtype)
        op, mop = _with_dtype(op, dtype), _with_dtype(mop, dtype)
    operator = _captured("eigsh", op)
    metric = None if mop is None else _captured("eigsh", mop)
    if metric is not None and _one_eager_way(operator, op, metric, mop):
        operator, metric = _captured("eigsh", op, False), _captured("eigsh", mop, False)
    v0 = None if v0 is None else np.asarray(v0, operator.dtype)
    problem = _eigsh.EigshProblem(operator, int(k), which, v0, ncv, maxiter, tol,
                                  sigma=None if sigma is None else float(sigma),
                                  metric=metric, mode=mode,
                                  minv=_aid("Minv", Minv, n), opinv=_aid("OPinv", OPinv, n))
    w, v = _eigenpairs(problem, _guarded("eigsh", op._mv),
                       None if mop is None else _guarded("eigsh", mop._mv))
    return (w, v) if return_eigenvectors else w


def _one_eager_way(operator: Captured, op: LinearOperator, metric: Captured,
                   mop: LinearOperator) -> bool:
    """Whether ``A`` and ``M`` must both be taken the eager way (their matvecs on the
    tape: first order): one has eager tensors as operands (lifted) while the other's
    matvec needs values and uses tensors that require grad, so it has no graph."""
    for lifted, (other, other_op) in ((operator, (metric, mop)), (metric, (operator, op))):
        if lifted.lifted and not other.tensors and _guard(
                _guarded("eigsh", other_op._mv), other.n, other.dtype) is not None:
            return True
    return False


def _metric(M, n: int) -> LinearOperator:
    """``M`` of a generalised problem as an operator of the size of ``A``."""
    mop = aslinearoperator(M)
    if mop.shape != (n, n):
        raise ShapeError(f"eigsh: M must have the shape of A, ({n}, {n}), got {mop.shape}")
    return mop


def _with_dtype(op: LinearOperator, dtype) -> LinearOperator:
    return op if op.dtype == dtype else LinearOperator(op.shape, op._mv, op._rmv,
                                                       dtype=dtype)


def _aid(name: str, aid, n: int):
    """``Minv`` / ``OPinv`` for SciPy: solver aids, which do not change the result (they
    must be consistent with ``A`` and ``M``), so they have no derivative; one that uses
    tensors that require grad, or traced tensors, raises instead of being taken as a
    constant."""
    if aid is None or isinstance(aid, (np.ndarray, _sla.LinearOperator)) or (
            not is_tensor(aid) and not isinstance(aid, LinearOperator)):
        return aid                                 # arrays, SciPy operators, sparse matrices
    op = aslinearoperator(aid)
    if op.shape != (n, n):
        raise ShapeError(f"eigsh: {name} must have shape ({n}, {n}), got {op.shape}")
    probe = op._mv(tensor(np.ones(n, op.dtype)))
    if needs_grad(probe) or is_traced(probe):
        raise NotDifferentiableError(
            f"eigsh: {name}= is a solver aid (the eigenpairs do not depend on it, so it has "
            "no derivative) and must be a constant operator, but it uses tensors that "
            f"{'are traced' if is_traced(probe) else 'require grad'}; build it from "
            "arrays or .detach()ed tensors")

    def matvec(x):
        with no_grad():
            return np.asarray(plain_value(op._mv(np.ravel(x))))
    return _sla.LinearOperator((n, n), matvec=matvec, dtype=op.dtype)


def _eigenpairs(problem, matvec: Callable, mmatvec: Callable | None) -> tuple:
    operator, metric = problem.operator, problem.metric
    captured = operator.tensors + (() if metric is None else metric.tensors)
    if captured:          # traced tensors, or eager ones (lifted): their rules, any order
        if operator.traced or (metric is not None and metric.traced):
            for op, mv in ((operator, matvec), (metric, mmatvec)):
                if op is not None and not op.traced:
                    _no_eager_gradients("eigsh", mv, op)
        w0, v0 = bind(_eigsh.values_p, problem, *captured)
        return bind(_eigsh.map_p, problem, w0, v0, *captured)
    w0, v0 = problem.eigenpairs((), ())
    zs = [_columns("eigsh", matvec, tensor(v0), operator.n)]
    if mmatvec is not None:
        zs.append(_columns("eigsh", mmatvec, tensor(v0), operator.n))
    if not any(needs_grad(z) for z in zs):
        return w0, v0
    return bind(_eigsh.map_p, problem.eager_variant(), w0, v0, *zs)


# ------------------------------------------------------------------ svds

@implements("scipy.sparse.linalg.svds", fallback=False)
def svds(A, k: int = 6, ncv=None, tol: float = 0, which: str = "LM", v0=None,
         maxiter=None, return_singular_vectors=True, solver: str = "arpack",
         random_state=None, options=None):
    """The ``k`` largest singular triplets ``(u, s, vh)`` (``s`` ascending, as SciPy),
    from :func:`eigsh` of the dilation ``[[0, A], [A^H, 0]]``: its eigenpairs
    ``(s, (u; v)/sqrt(2))`` give the derivative (needs ``rmatvec``).  ``v0``, if given,
    starts ARPACK on the dilation (``m + n`` entries); ``random_state`` and ``options``
    are ignored."""
    if which != "LM" or solver != "arpack":
        raise UnsupportedError("svds: only which='LM' with solver='arpack' on tensors")
    op = aslinearoperator(A)
    if op._rmv is None:
        raise UnsupportedError("svds: the operator needs rmatvec (A^H x) on tensors")
    m, n = op.shape
    if not (isinstance(k, (int, np.integer)) and 1 <= k < min(m, n)):
        raise ArgumentValueError(f"svds: k must be an integer with 1 <= k < min(A.shape) "
                                 f"= {min(m, n)}, got {k!r}")

    def dilation(x):
        return tnp.concatenate([op.matvec(x[m:]), op.rmatvec(x[:m])])

    w, vectors = eigsh(LinearOperator((m + n, m + n), dilation, dtype=op.dtype), k=k,
                       which="LA", v0=v0, ncv=ncv, tol=tol, maxiter=maxiter)
    u, v = vectors[:m] * np.sqrt(2.0), vectors[m:] * np.sqrt(2.0)
    vh = tnp.conj(tnp.matrix_transpose(v))
    if return_singular_vectors is False:
        return w
    if return_singular_vectors == "u":
        return u, w, None
    if return_singular_vectors == "vh":
        return None, w, vh
    return u, w, vh


# ------------------------------------------------------------------ linear solves

@implements("scipy.sparse.linalg.gmres", fallback=False)
def gmres(A, b, x0=None, *, rtol: float = 1e-5, atol: float = 0.0, restart=None,
          maxiter=None, M=None, callback=None, callback_type=None):
    """``(x, info)`` with ``A x = b`` by SciPy's GMRES; ``dx = A^{-1} (db - dA x)``."""
    options = dict(rtol=rtol, atol=atol, restart=restart, maxiter=maxiter)
    return _solve_with("gmres", _sla.gmres, A, b, x0, M, callback, options)


@implements("scipy.sparse.linalg.cg", fallback=False)
def cg(A, b, x0=None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter=None, M=None,
       callback=None):
    """``(x, info)`` for Hermitian positive definite ``A`` by SciPy's CG, with the
    derivative of ``x = A^{-1} b`` (module docstring)."""
    return _solve_with("cg", _sla.cg, A, b, x0, M, callback,
                       dict(rtol=rtol, atol=atol, maxiter=maxiter))


@implements("scipy.sparse.linalg.minres", fallback=False)
def minres(A, b, x0=None, *, shift: float = 0.0, rtol: float = 1e-5, maxiter=None, M=None,
           callback=None, show: bool = False, check: bool = False):
    """``(x, info)`` for Hermitian ``A`` by SciPy's MINRES (``shift`` unsupported on
    tensors), with the derivative of ``x = A^{-1} b``."""
    if shift:
        raise UnsupportedError("minres: shift= is not supported on tensors")
    return _solve_with("minres", _sla.minres, A, b, x0, M, callback,
                       dict(rtol=rtol, maxiter=maxiter))


def _solve_with(name: str, method, A, b, x0, M, callback, options: dict):
    if M is not None or callback is not None:
        raise UnsupportedError(f"{name}: M= and callback= are not supported on tensors")
    op = _square(name, A)
    n = op.shape[0]
    if tuple(shape_of(b)) not in ((n,), (n, 1)):
        raise ShapeError(f"{name}: b must have shape ({n},), got {list(shape_of(b))}")
    b = tnp.reshape(b, (n,))
    op = _promoted(op, b)
    operator = _captured(name, op)
    problem = _solve.SolveProblem(name, method, operator, x0, options)
    return _solve.solve(problem, _guarded(name, op._mv), b)


# ------------------------------------------------------------------ expm_multiply

@implements("scipy.sparse.linalg.expm_multiply", fallback=False)
def expm_multiply(A, B, start=None, stop=None, num=None, endpoint=None, traceA=None):
    """``exp(A) B`` by SciPy's ``expm_multiply`` (``B`` a vector or a matrix), differentiable
    in ``B`` and in the tensors inside the operator (the Fréchet derivative: forward by the
    block operator ``[[A, dA], [0, A]]``, reverse by Gauss-Legendre quadrature over
    ``exp(sA) B``; see :mod:`._expm`), to every order (eager: for a matvec that can be
    traced; one that needs values, once).  ``start``,
    ``stop``, ``num``, ``endpoint`` (a time grid) are not supported on tensors."""
    if any(x is not None for x in (start, stop, num, endpoint)):
        raise UnsupportedError("expm_multiply: the time grid (start, stop, num, endpoint) is "
                               "not supported on tensors")
    op = _square("expm_multiply", A)
    n = op.shape[0]
    if not 1 <= len(shape_of(B)) <= 2 or shape_of(B)[0] != n:
        raise ShapeError(f"expm_multiply: B must have {n} rows, got shape "
                         f"{list(shape_of(B))}")
    op = _promoted(op, B)
    operator = _captured("expm_multiply", op)
    problem = _expm.ExpmProblem(operator, 0.0 if traceA is None else complex(traceA).real
                                if np.isrealobj(traceA) else complex(traceA))
    if operator.lifted and is_traced(B):
        raise ArgumentError("expm_multiply: a traced B with an operator whose matvec uses "
                            "eager tensors that require grad; use one mode (tp.input "
                            "placeholders, or eager tensors)")
    if operator.tensors:          # traced, or eager tensors as operands: every order
        return bind(_expm.expm_p, problem, B, *operator.tensors)
    matvec = _guarded("expm_multiply", op._mv)
    if _guard(matvec, n, op.dtype) is None:
        if not needs_grad(B) and not is_traced(B):
            return problem.apply(np.asarray(plain_value(B)), ())
        return bind(_expm.expm_p, problem, B)
    if is_traced(B):
        raise ArgumentError("expm_multiply: a traced B with an operator whose matvec uses "
                            "eager tensors that require grad; use one mode (tp.input "
                            "placeholders, or eager tensors)")
    # eager: Z = A W at the quadrature's vectors, on the tape (module docstring of _expm)
    eager, w = _expm.eager_vectors(problem, np.asarray(plain_value(B)))
    z = _columns("expm_multiply", matvec, tensor(w), n)
    return bind(_expm.expm_p, eager, B, z)


def _no_eager_gradients(name: str, matvec: Callable, operator: Captured) -> None:
    """Traced, an operator without traced tensors is a constant: one whose matvec uses
    eager tensors that require grad would lose their gradient, so it raises."""
    if needs_grad(matvec(tensor(np.ones(operator.n, operator.dtype)))):
        raise ArgumentError(f"{name}: the operators mix traced tensors with eager tensors "
                            "that require grad; use one mode (tp.input placeholders, or "
                            "eager tensors)")


def _guard(matvec, n: int, dtype):
    """``A 1`` from the user's matvec if it reaches, on the tape, tensors that require grad
    (else None: the operator is a constant)."""
    z = matvec(tensor(np.ones(n, dtype)))
    return z if needs_grad(z) else None

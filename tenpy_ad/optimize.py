"""``tp.optimize``: gradient-based minimisation over pytrees of parameters, compiled by default.

* :func:`minimize` -- L-BFGS with a backtracking (Armijo) line search, restarts when a step
  fails (a noisy objective: an environment converged only to a tolerance), a progress line,
  checkpoints that a later call resumes, and a *carry*: a pytree threaded from one
  evaluation to the next (``fun(params, carry) -> (value, carry)``, e.g. a CTMRG environment
  as the warm start of the next), an input and an output of the one compiled program.
* :func:`scipy_minimize` -- the same objective handed to ``scipy.optimize.minimize``
  (``jac=True``), for its other methods and options.

Both evaluate ``tp.jit(tp.value_and_grad(fun))`` unless ``compiled=False``: the objective is
traced once (per shape of its inputs) and every evaluation runs the compiled program --
typically several times faster than tracing or taping the objective anew at every call.
"""
from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .errors import ArgumentError, ConvergenceError
from .functional import jit, value_and_grad
from .solvers import Packer
from .tree import tree_flatten, tree_unflatten

__all__ = ["minimize", "scipy_minimize", "OptimizeResult", "METHODS"]

METHODS = ("lbfgs",)


@dataclass
class OptimizeResult:
    """What :func:`minimize` found: ``x`` (a pytree like ``params``), its value ``fun`` and
    gradient norm ``grad_norm`` (largest entry), the counts ``nit`` (iterations) and
    ``nfev`` (evaluations), ``success`` and ``message``, ``history`` (the value after each
    iteration), ``carry`` (the last one) and ``seconds``."""
    x: Any
    fun: float
    grad_norm: float
    nit: int
    nfev: int
    success: bool
    message: str
    history: list = field(default_factory=list)
    carry: Any = None
    seconds: float = 0.0


# ------------------------------------------------------------------ the objective

class _Objective:
    """``fun`` as ``vector -> (value, gradient vector)``, counting evaluations and
    threading the carry."""

    def __init__(self, fun: Callable, params, carry, compiled: bool):
        leaves, self.treedef = tree_flatten(params)
        leaves = [np.asarray(leaf) for leaf in leaves]
        if any(leaf.dtype.kind != "f" for leaf in leaves):
            raise ArgumentError("tp.optimize: parameters must be real floating-point "
                                "arrays (split complex ones into real and imaginary parts)")
        self.packer = Packer(leaves)
        self.x0 = self.packer.pack(leaves)
        self.has_carry = carry is not None
        self.carry = carry
        evaluate = value_and_grad(fun, has_aux=self.has_carry)
        self.evaluate = jit(evaluate) if compiled else evaluate
        self.count = 0

    def tree(self, vector: np.ndarray):
        return tree_unflatten(self.treedef, self.packer.unpack(vector))

    def __call__(self, vector: np.ndarray) -> tuple:
        self.count += 1
        params = self.tree(vector)
        if self.has_carry:
            (value, carry), grad = self.evaluate(params, self.carry)
            leaves, treedef = tree_flatten(carry)
            self.carry = tree_unflatten(treedef, [np.asarray(x) for x in leaves])
        else:
            value, grad = self.evaluate(params)
        value = float(np.asarray(value))
        grad = self.packer.pack(tree_flatten(grad)[0])
        if not (math.isfinite(value) and np.all(np.isfinite(grad))):
            raise FloatingPointError(f"tp.optimize: the objective gave {value} (or a "
                                     f"non-finite gradient) at evaluation {self.count}")
        return value, grad


# ------------------------------------------------------------------ L-BFGS

def minimize(fun: Callable, params, method: str = "lbfgs", *, carry=None,
             gtol: float = 1e-8, ftol: float = 1e-15, maxiter: int = 1000,
             memory: int = 10, compiled: bool = True, progress: bool = False,
             checkpoint: str | os.PathLike | None = None,
             callback: Callable | None = None) -> OptimizeResult:
    """Minimise ``fun(params)`` (or, with ``carry``, ``fun(params, carry) -> (value,
    carry)``) over the pytree ``params`` of real arrays by L-BFGS.

    Stops when the gradient's largest entry is at most ``gtol``, or when an iteration
    lowers the value by at most ``ftol`` relative to it (SciPy's ``factr * eps``), or after
    ``maxiter`` iterations.  The line search backtracks from the quasi-Newton step until
    the Armijo condition holds (up to rounding of the value), and also from a trial point
    where the objective raises ConvergenceError (an iterative solve inside it that does
    not converge there; at the starting point that error propagates); a failed search
    discards the
    curvature memory and restarts along the gradient, and a second failure in a row ends
    the run (``success=False``: the objective is noisier than the step, e.g. a CTMRG
    environment converged only to its tolerance).  ``progress`` prints one line per
    iteration to stderr; ``checkpoint`` (a path) saves the state after every iteration and
    resumes from it when it exists; ``callback(iteration, x, value)`` is called after each.
    """
    if method not in METHODS:
        raise ArgumentError(f"tp.optimize.minimize: method must be one of {METHODS}, got "
                            f"{method!r}")
    if not (isinstance(memory, int) and memory >= 1):
        raise ArgumentError(f"tp.optimize.minimize: memory must be an int >= 1, got {memory!r}")
    start = time.perf_counter()
    objective = _Objective(fun, params, carry, compiled)
    state = _State.start(objective, checkpoint)
    message, success = "the iteration limit was reached", False
    while state.iteration < maxiter:
        if np.max(np.abs(state.grad)) <= gtol:
            message, success = "the gradient is below gtol", True
            break
        previous = state.value
        if _line_search(objective, state, memory) is None:
            message = ("the line search failed twice: the objective is noisier than the "
                       "step (converge it more tightly, or stop here)")
            break
        state.iteration += 1
        state.history.append(state.value)
        if checkpoint is not None:
            state.save(checkpoint, objective)
        if progress:
            _report(state, objective)
        if callback is not None:
            callback(state.iteration, objective.tree(state.x), state.value)
        if previous - state.value <= ftol * max(abs(previous), abs(state.value), 1.0):
            message, success = "the relative reduction of the value is below ftol", True
            break
    if progress:
        print(file=sys.stderr)
    return OptimizeResult(objective.tree(state.x), state.value,
                          float(np.max(np.abs(state.grad))), state.iteration,
                          objective.count, success, message, list(state.history),
                          objective.carry, time.perf_counter() - start)


@dataclass
class _State:
    x: np.ndarray
    value: float
    grad: np.ndarray
    pairs: list                        # (s, y) curvature pairs, oldest first
    iteration: int = 0
    history: list = field(default_factory=list)
    failures: int = 0

    @classmethod
    def start(cls, objective: _Objective, checkpoint) -> "_State":
        if checkpoint is not None and os.path.exists(checkpoint):
            return cls.load(checkpoint, objective)
        value, grad = objective(objective.x0)
        return cls(objective.x0, value, grad, [])

    def save(self, path, objective: _Objective) -> None:
        carry = tree_flatten(objective.carry)[0] if objective.has_carry else []
        arrays = {"x": self.x, "value": self.value, "grad": self.grad,
                  "iteration": self.iteration, "history": np.array(self.history),
                  "s": np.array([s for s, _ in self.pairs]).reshape(-1, self.x.size),
                  "y": np.array([y for _, y in self.pairs]).reshape(-1, self.x.size)}
        arrays.update({f"carry_{i}": np.asarray(leaf) for i, leaf in enumerate(carry)})
        temporary = f"{os.fspath(path)}.partial.npz"
        np.savez(temporary, **arrays)
        os.replace(temporary, path)            # never a half-written checkpoint

    @classmethod
    def load(cls, path, objective: _Objective) -> "_State":
        with np.load(path) as saved:
            x = saved["x"]
            if x.shape != objective.x0.shape:
                raise ArgumentError(f"tp.optimize: the checkpoint {os.fspath(path)!r} holds "
                                    f"{x.size} parameters, this problem has "
                                    f"{objective.x0.size}")
            if objective.has_carry:
                leaves, treedef = tree_flatten(objective.carry)
                objective.carry = tree_unflatten(
                    treedef, [saved[f"carry_{i}"] for i in range(len(leaves))])
            pairs = list(zip(saved["s"], saved["y"]))
            return cls(x, float(saved["value"]), saved["grad"], pairs,
                       int(saved["iteration"]), list(saved["history"]))


def _direction(grad: np.ndarray, pairs: list) -> np.ndarray:
    """The L-BFGS direction ``-H grad`` (the two-loop recursion)."""
    q = grad.copy()
    alphas = []
    for s, y in reversed(pairs):
        alpha = (s @ q) / (y @ s)
        alphas.append(alpha)
        q -= alpha * y
    if pairs:
        s, y = pairs[-1]
        q *= (s @ y) / (y @ y)
    for (s, y), alpha in zip(pairs, reversed(alphas)):
        q += (alpha - (y @ q) / (y @ s)) * s
    return -q


def _line_search(objective: _Objective, state: _State, memory: int):
    """One step along the L-BFGS direction (or, after a failure, the gradient); updates
    ``state`` and returns True, or None after two failures in a row."""
    direction = _direction(state.grad, state.pairs)
    slope = direction @ state.grad
    if not slope < 0:                            # not a descent direction: restart
        state.pairs.clear()
        direction, slope = -state.grad, -(state.grad @ state.grad)
    step = 1.0 if state.pairs else min(1.0, 1.0 / max(np.max(np.abs(state.grad)), 1e-300))
    slack = 64 * np.finfo(float).eps * max(abs(state.value), 1.0)    # rounding of f
    for _ in range(40):
        x = state.x + step * direction
        try:
            value, grad = objective(x)
        except ConvergenceError:        # e.g. no environment converges there: step less
            step *= 0.5
            continue
        if value <= state.value + 1e-4 * step * slope + slack:
            s, y = x - state.x, grad - state.grad
            if s @ y > 1e-12 * np.linalg.norm(s) * np.linalg.norm(y):
                state.pairs.append((s, y))
                del state.pairs[:-memory]
            state.x, state.value, state.grad, state.failures = x, value, grad, 0
            return True
        step *= 0.5
    state.failures += 1
    state.pairs.clear()
    return None if state.failures >= 2 else _line_search(objective, state, memory)


def _report(state: _State, objective: _Objective) -> None:
    print(f"\riteration {state.iteration:5d}  value {state.value:+.15f}  "
          f"|grad| {np.max(np.abs(state.grad)):.2e}  evaluations {objective.count}",
          end="", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ SciPy

def scipy_minimize(fun: Callable, params, method: str = "L-BFGS-B", *, carry=None,
                   compiled: bool = True, **options):
    """``scipy.optimize.minimize`` of ``fun`` (as :func:`minimize` takes it) with the
    gradient from ``tp.value_and_grad`` (compiled by default); ``options`` are SciPy's
    (``tol``, ``options``, ``bounds``, ``callback``, ...).  Returns SciPy's result with
    ``x`` as a pytree like ``params`` and, with ``carry``, the last ``carry``."""
    from scipy import optimize as scipy_optimize
    objective = _Objective(fun, params, carry, compiled)
    result = scipy_optimize.minimize(objective, objective.x0, method=method, jac=True,
                                     **options)
    result.x = objective.tree(result.x)
    result.carry = objective.carry
    return result

"""``tp.fixed_point(f, x0, *args)``: the solution of ``x = f(x, *args)`` and its implicit
derivative.

The forward pass iterates ``f`` on arrays (optionally with Anderson acceleration) and
records nothing, so memory does not grow with the number of iterations.  The derivative
with respect to ``args`` follows from the implicit function theorem at the solution
``x*``: with ``A = df/dx`` and ``B = df/dargs`` there,

* reverse mode solves ``lam = A^T lam + xbar`` and returns ``B^T lam``;
* forward mode solves ``dx = A dx + B dargs``.

Both are fixed points again, of maps built from one VJP (JVP) of ``f``, so they are
solved, and differentiated, by the same primitive: the derivative of a derivative is once
more implicit, to any order.  The reverse solve carries ``t = B^T lam`` along in its state,
so a rule emits exactly one node (traced) or one tape entry (eager) and never sweeps the
caller's tape; as no step reads ``t``, the solver iterates ``lam`` alone (a pullback pruned
to the cotangent of x) and computes ``t`` once, at the solution.  The linear solves use
GMRES (SciPy) or plain iteration (``solver=``).

The solvers themselves work on arrays (:mod:`tenpy_ad.solvers`).

* Traced: the call is one node whose implementation is ``f`` compiled as a sub-program.
* Eager and on arrays: ``f`` runs on ndarrays, so it must not use tensors that need a
  gradient other than through ``args`` (that raises an error rather than losing them).
"""
from __future__ import annotations

import math
import warnings
from functools import partial
from typing import Callable

import numpy as np

from . import dtypes
from .errors import (ArgumentError, ConvergenceError, ConvergenceWarning, DTypeError,
                     GraphError, ShapeError)
from .functional import jvp as function_jvp, vjp as function_vjp
from .ops import structural as st
from .primitive import (any_traced, as_node, bind, code_of_value, is_tensor, is_traced,
                        needs_grad, plain_value, shape_of)
from .param_schema import Instance
from .rules import per_output_count
from .solvers import residual_of as _residual, solve_affine, solve_by_iteration
from .staging import StagedProgram
from .traced import input as placeholder
from .tree import tree_flatten, tree_unflatten

__all__ = ["fixed_point", "SOLVERS", "ON_STALL"]

#: linear solvers for the derivative (adjoint and tangent) systems
SOLVERS = ("gmres", "iterate")


# ------------------------------------------------------------------ the problem

class Problem:
    """``x = step(x, args)`` on lists of leaves, with how to solve it: the static
    parameter of a fixed_point node.

    ``method`` solves the forward problem ("iterate", or "gmres" for maps affine in x);
    ``solver`` is the method of the derivative problems derived from this one.
    ``linearize(args)``, if given, returns ``xs -> step(xs, args)`` for arrays, prepared
    once per solve (the adjoint problem records one application of f on a tape and runs
    only its backward sweep per iteration).  Traced, the step is compiled in two stages
    (tenpy_ad/staging.py): what the args alone determine -- for a derivative problem,
    f's forward values at the solution -- runs once per solve, the rest per iteration.
    ``tail``: how many of x's last leaves the step never reads (the adjoint's ``t = B^T
    lam``): a solve iterates the others with a step pruned to them and computes these
    once, by one whole step at the solution.
    """

    def __init__(self, step: Callable, n_x: int, label: str, tol: float, max_iter: int,
                 method: str, solver: str, anderson: int, stats: dict | None,
                 avals: list | None, linearize: Callable | None = None,
                 monitor: Callable | None = None, on_stall: str = "raise",
                 check: Callable | None = None, constant: Callable | None = None,
                 tail: int = 0):
        self.step, self.n_x, self.label = step, n_x, label
        self.tail = tail
        self.check = check             # run on the args before solving (arrays)
        #: ``constant(args)``: an affine step's value at x = 0, when the problem knows it
        #: (an adjoint's right-hand side): GMRES then does not apply the step for it
        self.constant = constant
        self.linearize = linearize
        self.tol, self.max_iter = tol, max_iter
        self.method, self.solver, self.anderson = method, solver, anderson
        self.stats = stats
        self.monitor, self.on_stall = monitor, on_stall
        #: how far from a fixed point (element-wise) the derivative accepts a solution
        #: (its accuracy is about this residual)
        self.accepted = min(1e3 * tol, math.sqrt(tol))
        self._checked = False
        self._program = None
        if avals is not None:
            self._compile(avals)

    def _compile(self, avals):
        """Trace ``step`` on placeholders: checks it early and gives a fast sub-program."""
        xs = [placeholder(shape, dtype) for shape, dtype in avals]
        outs = self.step(xs[:self.n_x], xs[self.n_x:])
        outs = [as_node(o) for o in outs]
        self._check_outputs([(o.shape, o.dtype) for o in outs], avals[:self.n_x])
        try:             # (the part the args alone determine: once per solve)
            self._program = StagedProgram(outs, xs[:self.n_x], xs[self.n_x:],
                                          head=self.n_x - self.tail if self.tail else None)
        except GraphError as error:                     # an input f was not given
            raise ArgumentError(f"{self.label}: f uses a traced tensor it was not given; "
                                f"pass every tensor f depends on in args ({error})") from None

    def _check_outputs(self, got, expected):
        for k, ((shape, dtype), (x_shape, x_dtype)) in enumerate(zip(got, expected)):
            if tuple(shape) != tuple(x_shape):
                raise ShapeError(f"{self.label}: f returned shape {list(shape)} for leaf {k} "
                                 f"of x, whose shape is {list(x_shape)}")
            if np.dtype(dtype) != np.dtype(x_dtype):
                raise DTypeError(f"{self.label}: f returned {np.dtype(dtype).name} for leaf "
                                 f"{k} of x, which is {np.dtype(x_dtype).name}; give x0 "
                                 "the dtype of f's result")

    def bound(self, args: list) -> Callable:
        """One step on arrays, as a function of x alone: the compiled sub-program
        (traced), else the prepared linearization, else ``step`` itself on arrays."""
        if self._program is not None:
            return self._program.bind(args)
        step = (self.linearize(args) if self.linearize is not None
                else partial(self.step, params=args))
        return lambda xs: self._arrays(step(xs), xs)

    def _arrays(self, outs, xs) -> list:
        outs = [_as_array(o, self.label) for o in outs]
        if not self._checked:
            self._check_outputs([(o.shape, o.dtype) for o in outs],
                                [(x.shape, x.dtype) for x in xs])
            self._checked = True
        return outs

    def solve(self, x0: list, args: list) -> list:
        if self.check is not None:
            self.check(args)
        if not self.tail:
            return self._solve(self.bound(args), x0, args)[0]
        k = self.n_x - self.tail
        head_step, whole_step = self._bound_head(args, x0[k:])
        head, tail = self._solve(head_step, x0[:k], args, (whole_step, x0[k:]))
        if tail is None:                  # the tail: one whole step at the solution
            tail = whole_step(head + x0[k:])[k:]
        return head + tail

    def _solve(self, step: Callable, x0: list, args: list, whole: tuple | None = None):
        """``(solution, tail)``: GMRES computes its last residual with ``whole`` (the step
        and the tail's filler), whose tail there comes with it; else ``tail`` is None."""
        if self.method != "gmres":
            return solve_by_iteration(self, step, x0), None
        constant = None if self.constant is None else self.constant(args)[:len(x0)]
        return solve_affine(self, step, x0, constant, whole)

    def _bound_head(self, args: list, tail: list) -> tuple:
        """``(step of x's leading leaves alone, whole step)`` (see ``tail``); ``tail``
        fills the leaves the step does not read."""
        if self._program is not None:
            return self._program.bind_head(args)
        whole = self.bound(args)
        k = self.n_x - self.tail
        return (lambda xs: whole(list(xs) + tail)[:k]), whole

    def record(self, iterations: int, residual: float, monitored: float | None = None,
               converged: bool = True) -> None:
        if self.stats is not None:
            prefix = self.label.partition(" ")[2].replace(" ", "_")
            prefix = prefix + "_" if prefix else ""
            self.stats[prefix + "iterations"] = iterations
            self.stats[prefix + "residual"] = residual
            self.stats[prefix + "converged"] = converged
            if self.monitor is not None:
                self.stats[prefix + "monitor_residual"] = monitored

    def stalled(self, iterations: int, residual: float, reached_iterate: list,
                monitored: float | None = None, why: str = "no convergence",
                note: Callable[[], str] | None = None) -> list:
        """The end of a solve that did not reach ``tol``, given the best iterate it
        reached: ``on_stall="raise"`` raises; "warn" warns and returns it; "accept"
        returns it if its residual (or the monitored one) is within ``accepted`` -- the
        floor the solve stalled at, reported in ``stats`` -- and raises otherwise.
        ``note()`` (a diagnosis of the failure, computed only then) ends the error or the
        warning."""
        reached = residual if monitored is None else monitored
        accepted = self.on_stall == "accept" and reached <= self.accepted
        note = "" if accepted or note is None else note()
        if not accepted and self.on_stall != "warn":
            raise self.fail(iterations, reached, why, note)
        self.record(iterations, residual, monitored, converged=False)
        if not accepted:
            warnings.warn(ConvergenceWarning(
                f"{self.label}: {why} after {iterations} iterations (residual "
                f"{reached:.3g}, tol {self.tol:g}); on_stall='warn' returns the best "
                f"iterate, whose implicit derivative is accurate to about that residual"
                + (f". {note}" if note else "")), stacklevel=2)
        return reached_iterate

    def fail(self, iterations: int, residual: float, why: str, note: str = ""):
        advice = note or ("Raise max_iter, loosen tol, or check that the map contracts "
                          "(and, if its fixed point has a gauge freedom, fix it: "
                          "gauge_fix=).")
        return ConvergenceError(
            f"{self.label}: {why} after {iterations} iterations (residual {residual:.3g}, "
            f"tol {self.tol:g}). {advice}", residual, iterations)

    def __repr__(self):
        name = getattr(self.step, "__name__", "f")
        return f"<{self.label} {name} tol={self.tol:g} method={self.method}>"


def _as_array(value, label: str) -> np.ndarray:
    if is_traced(value):
        raise ArgumentError(f"{label}: f uses a traced tensor it was not given; pass every "
                            "tensor f depends on in args")
    if needs_grad(value):
        raise ArgumentError(f"{label}: f uses a tensor that requires grad but is not "
                            "in args; pass it in args so that its gradient is computed")
    return np.asarray(plain_value(value))


# ------------------------------------------------------------------ the primitive

def _impl(problem, *arrays):
    solution = problem.solve(list(arrays[:problem.n_x]), list(arrays[problem.n_x:]))
    return solution[0] if problem.n_x == 1 else tuple(solution)


def _shape_rule(problem, *operands):
    avals = [(code_of_value(x), tuple(shape_of(x))) for x in operands[:problem.n_x]]
    return avals[0] if problem.n_x == 1 else avals


def _solve(step, x0: list, args: list, label: str, tol: float, max_iter: int, method: str,
           solver: str, anderson: int = 0, stats: dict | None = None,
           linearize: Callable | None = None, monitor: Callable | None = None,
           on_stall: str = "raise", check: Callable | None = None,
           constant: Callable | None = None, tail: int = 0) -> list:
    """Bind one fixed_point node (traced), tape entry (eager) or solve (arrays)."""
    operands = [_as_operand(a) for a in x0 + args]
    avals = None
    if any_traced(operands):
        avals = [(tuple(shape_of(a)), dtypes.DTYPES[code_of_value(a)]) for a in operands]
    problem = Problem(step, len(x0), label, tol, max_iter, method, solver, anderson, stats,
                      avals, linearize, monitor, on_stall, check, constant, tail)
    out = bind(_primitive(len(x0)), problem, *operands)
    return [out] if len(x0) == 1 else list(out)


def _as_operand(value):
    if is_tensor(value):
        return value
    array = np.asarray(value)
    if array.dtype.kind not in "biufc":
        raise ArgumentError(f"fixed_point: x0 and args must hold numbers and tensors, got "
                            f"{type(value).__name__}")
    return array.astype(dtypes.DTYPES[dtypes.value_code(array.dtype)], copy=False)


def _zeros_like(x):
    return st.full_like(x, 0)


# ------------------------------------------------------------------ derivative rules

def _derived(problem: Problem, kind: str) -> dict:
    """Options of the adjoint/tangent problem of ``problem``: affine, so solved by the
    derivative solver, with the same tolerances."""
    return dict(label=f"{problem.label} {kind}", tol=problem.tol, max_iter=problem.max_iter,
                method=problem.solver, solver=problem.solver, stats=problem.stats,
                on_stall=problem.on_stall)


def _vjp(problem, cts, out, xs, active):
    """``B^T lam`` with ``lam = A^T lam + xbar``, solved as one fixed point whose state
    also carries ``t = B^T lam`` (for the args that need a cotangent)."""
    n = problem.n_x
    cts = cts if type(cts) is tuple else (cts,)
    x_star = list(out) if type(out) is tuple else [out]
    theta = list(xs[n:])
    wanted = [k for k in range(len(theta)) if active[n + k]]
    result = [None] * len(xs)
    if not wanted or all(c is None for c in cts):
        return tuple(result)
    x_bar = [_zeros_like(o) if c is None else c for c, o in zip(cts, x_star)]
    step = problem.step

    def linearize(params):
        x, th, xb = _split(params, n, len(theta))
        _, pullback = function_vjp(step, x, th)          # f's tape at (x*, args), kept

        def apply(state):
            ct_x, ct_theta = pullback(list(state[:n]))
            return [g + b for g, b in zip(ct_x, xb)] + [ct_theta[k] for k in wanted]
        return apply

    def adjoint_step(state, params):
        return linearize(params)(state)

    adjoint_step.__name__ = f"adjoint({getattr(step, '__name__', 'f')})"

    def constant(params):            # the step at state 0: xbar, and t = B^T 0 = 0
        _, th, xb = _split(params, n, len(theta))
        return list(xb) + [np.zeros(np.shape(th[k]), np.asarray(th[k]).dtype) for k in wanted]

    init = x_bar + [_zeros_like(theta[k]) for k in wanted]
    solution = _solve(adjoint_step, init, x_star + theta + x_bar,
                      **_derived(problem, "adjoint"), linearize=linearize,
                      check=_at_fixed_point(problem, len(theta)), constant=constant,
                      tail=len(wanted))
    for k, ct in zip(wanted, solution[n:]):
        result[n + k] = ct
    return tuple(result)


def _jvp(problem, tangents, out, xs):
    """``dx = A dx + B dargs``, solved as one fixed point."""
    n = problem.n_x
    x_star = list(out) if type(out) is tuple else [out]
    theta = list(xs[n:])
    moving = [k for k, t in enumerate(tangents[n:]) if t is not None]
    if not moving:
        return None if n == 1 else (None,) * n
    step = problem.step

    def tangent_step(state, params):
        x, th, dth = _split(params, n, len(theta))

        def along_moving(x_, th_moving):
            full = list(th)
            for k, value in zip(moving, th_moving):
                full[k] = value
            return step(x_, full)

        _, dx = function_jvp(along_moving, (x, [th[k] for k in moving]), (list(state), dth))
        return list(dx)

    tangent_step.__name__ = f"tangent({getattr(step, '__name__', 'f')})"
    d_theta = [tangents[n + k] for k in moving]
    solution = _solve(tangent_step, [_zeros_like(o) for o in x_star], x_star + theta + d_theta,
                      **_derived(problem, "tangent"), check=_at_fixed_point(problem, len(theta)))
    return solution[0] if n == 1 else tuple(solution)


def _at_fixed_point(problem: Problem, n_theta: int) -> Callable | None:
    """For a solution found by a monitor: the check, on the derivative problem's args
    ``(x*, theta, ...)``, that ``x*`` is a fixed point element-wise (the implicit function
    theorem needs one; a monitor may stop where only gauge-invariant quantities are)."""
    if problem.monitor is None:
        return None

    def check(params: list) -> None:
        x, theta, _ = _split(params, problem.n_x, n_theta)
        residual = _residual(problem.bound(theta)(x), x)
        if not residual <= problem.accepted:
            raise ConvergenceError(
                f"{problem.label}: the derivative needs a fixed point, but the solution "
                f"the monitor accepted changes by {residual:.3g} under one more step "
                f"(relative; at most {problem.accepted:.3g} would do): f is not "
                "converged element-wise, e.g. its gauge is not fixed; differentiate a map "
                "whose fixed point is unique (gauge_fix=), or tighten tol", residual)
    return check


_primitive = per_output_count("fixed_point", _impl, _shape_rule, _jvp, _vjp,
                              Instance(Problem))


def _split(params: list, n: int, n_theta: int):
    return params[:n], params[n:n + n_theta], params[n + n_theta:]


# ------------------------------------------------------------------ public API

def fixed_point(f: Callable, x0, *args, tol: float = 1e-12, max_iter: int = 10_000,
                solver: str = "gmres", gauge_fix: Callable | None = None, anderson: int = 0,
                monitor: Callable | None = None, on_stall: str = "raise",
                stats: dict | None = None):
    """``x*`` with ``x* = f(x*, *args)``, differentiable in ``args`` by the implicit
    function theorem (not through the iterations).

    ``x0`` and each of ``args`` are pytrees (tuples, lists, dicts) of tensors or arrays;
    ``f(x, *args)`` returns a pytree of ``x0``'s structure, shapes and dtypes.  The
    iteration stops when no leaf changes by more than ``tol`` relative to its largest
    entry; after ``max_iter`` steps it raises :class:`~tenpy_ad.errors.ConvergenceError`
    (so does a derivative solve that does not converge; where the map's derivative at the
    fixed point has an eigenvalue of modulus ~1 -- a fixed point that is not isolated or
    does not attract, whose implicit derivative is not defined -- the error says so).

    ``gauge_fix(x)``, applied after every step, makes a fixed point that is only defined
    up to a gauge (signs or phases of eigenvectors) unique; it is part of the map that is
    differentiated.  ``anderson=m`` mixes the last ``m`` steps (Anderson acceleration).
    ``solver`` ("gmres" or "iterate") solves the linear systems of the derivative.

    ``monitor(x)``, a function of the iterate returning a pytree of tensors, replaces the
    convergence test: the iteration stops once the monitored quantities (a spectrum, an
    energy: what no gauge changes) change by at most ``tol`` between steps.  The
    element-wise residual is still reported, and the derivative, which holds only at a
    fixed point, refuses a solution whose residual exceeds ``min(1e3 tol, sqrt(tol))``
    (a ConvergenceError that says so) -- differentiate a gauge-fixed map instead.

    When a solve stalls (``max_iter`` iterations, or GMRES's; or a plain iteration that
    alternates between two iterates, ``f(f(x)) = x`` while ``f(x) != x``, five steps in a
    row -- a gauge that flips at every step; or one whose tol is out of reach by
    ``max_iter`` even at the rate of one halving of its residual per as many iterations
    as it has gone without one: it stops there), ``on_stall="raise"``
    raises ConvergenceError; ``"warn"`` issues a
    :class:`~tenpy_ad.errors.ConvergenceWarning` with the residual reached and returns the
    best iterate (of the smallest change; a truncated solve), whose derivative is
    accurate to about that residual; ``"accept"`` stops once the residual has not decreased for
    ``solvers.PATIENCE`` iterations and takes the best iterate if it is within
    ``min(1e3 tol, sqrt(tol))`` (a rounding floor: a map whose result is sensitive, as
    a CTMRG move's weakest states are), else raises -- ``stats["converged"]`` is False
    and ``stats["residual"]`` the accuracy reached.  The derivative solves follow the
    same rule; a derivative solve whose solution grows beyond what its products resolve
    (``I - df/dx`` singular to rounding, as at a fixed point that is not isolated) stalls
    at once, that rounding its residual, however small the residual it computed.

    ``stats``, a dict, receives ``iterations``, ``residual`` (element-wise, of the
    iterate), ``converged`` (and ``monitor_residual``) of each solve (the derivative
    solves under ``adjoint_``/``tangent_`` prefixes).

    The derivative with respect to ``x0`` is zero: the solution does not depend on it.
    """
    _check_options(f, tol, max_iter, solver, gauge_fix, anderson, monitor, on_stall)
    x_leaves, x_def = tree_flatten(x0)
    arg_leaves, arg_def = tree_flatten(args)
    if not x_leaves:
        raise ArgumentError("fixed_point: x0 has no leaves (tensors)")

    def step(xs, params):
        x = f(tree_unflatten(x_def, xs), *tree_unflatten(arg_def, params))
        if gauge_fix is not None:
            x = gauge_fix(x)
        leaves, out_def = tree_flatten(x)
        if out_def != x_def:
            raise ArgumentError(f"fixed_point: f returned the structure {out_def}, x0 has "
                                f"{x_def}")
        return leaves

    step.__name__ = getattr(f, "__name__", "f")
    watch = None if monitor is None else partial(_monitored, monitor, x_def)
    solution = _solve(step, x_leaves, arg_leaves, "fixed_point", tol, max_iter, "iterate",
                      solver, anderson, stats, monitor=watch, on_stall=on_stall)
    return tree_unflatten(x_def, solution)


def _monitored(monitor: Callable, x_def, leaves: list) -> list:
    """The monitored quantities of the iterate ``leaves`` (arrays), as arrays."""
    values, _ = tree_flatten(monitor(tree_unflatten(x_def, leaves)))
    return [np.asarray(plain_value(v)) for v in values]


#: what a stalled solve does
ON_STALL = ("raise", "warn", "accept")


def _check_options(f, tol, max_iter, solver, gauge_fix, anderson, monitor,
                   on_stall) -> None:
    if not callable(f):
        raise ArgumentError(f"fixed_point: f must be callable, got {type(f).__name__}")
    if gauge_fix is not None and not callable(gauge_fix):
        raise ArgumentError("fixed_point: gauge_fix must be callable or None")
    if not (isinstance(tol, (int, float)) and 0 < tol < 1):
        raise ArgumentError(f"fixed_point: tol must be a number in (0, 1), got {tol!r}")
    if not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ArgumentError(f"fixed_point: max_iter must be an integer >= 1, got {max_iter!r}")
    if solver not in SOLVERS:
        raise ArgumentError(f"fixed_point: solver must be one of {SOLVERS}, got {solver!r}")
    if not isinstance(anderson, (int, np.integer)) or anderson < 0:
        raise ArgumentError(f"fixed_point: anderson must be an integer >= 0, got {anderson!r}")
    if monitor is not None and not callable(monitor):
        raise ArgumentError("fixed_point: monitor must be callable or None")
    if on_stall not in ON_STALL:
        raise ArgumentError(f"fixed_point: on_stall must be one of {ON_STALL}, got "
                            f"{on_stall!r}")

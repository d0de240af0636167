"""The numerical solvers of ``tp.fixed_point``, on lists of arrays (the leaves of x).

``step(xs)`` applies the map once; ``problem`` (a :class:`tenpy_ad.fixed_point.Problem`)
gives ``tol``, ``max_iter``, ``anderson`` and ``monitor``, and the solvers report with
``problem.record(iterations, residual)``, raise ``problem.fail(iterations, residual,
why)``, and end a stalled solve with ``problem.stalled(iterations, residual, best)``
(which raises, or returns the best iterate with a warning or as an accepted floor).

* :func:`solve_by_iteration` -- ``x <- f(x)``, optionally with Anderson mixing;
* :func:`solve_affine` -- GMRES (:mod:`tenpy_ad.krylov`) for a step affine in x, on the
  real vector of the leaves (complex leaves as real and imaginary parts, so real-linear
  maps are solved too).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, LinearOperator, eigs

from .krylov import gmres

__all__ = ["solve_by_iteration", "solve_affine", "residual_of", "GMRES_RESTART"]

#: GMRES restart length (Krylov vectors kept)
GMRES_RESTART = 60
#: the most products a failed GMRES solve spends on the step's leading eigenvalue
DIAGNOSIS_PRODUCTS = 300
#: a leading eigenvalue of at least this modulus explains the failure (I - M singular)
NEUTRAL = 0.999


def residual_of(new: list, old: list) -> float:
    """The largest change of any leaf, relative to that leaf's largest entry (NaN once a
    value is not finite)."""
    worst = 0.0
    for y, x in zip(new, old):
        if not y.size:
            continue
        change = np.abs(y - x)           # (the methods: no dispatch; a few us per leaf)
        change, scale = float(change.max()), float(np.abs(y).max())
        if not (math.isfinite(change) and math.isfinite(scale)):
            return math.nan
        if change > 0.0:
            worst = max(worst, change / scale if scale > 0.0 else math.inf)
    return worst


#: iterations in which the residual has not halved after which ``on_stall="accept"``
#: stops
PATIENCE = 40
#: iterations in a row that return to the iterate before the last (``f(f(x)) = x`` to
#: ``tol`` and to ``CYCLE_RATIO`` of the step's own change) after which the iteration is a
#: 2-cycle that will not converge (an oscillating contraction that close to a cycle
#: would need more than 1/CYCLE_RATIO iterations per e-fold)
CYCLE = 5
CYCLE_RATIO = 1e-6


def solve_by_iteration(problem, step, x: list) -> list:
    """``x <- f(x)`` (with Anderson mixing if asked) until the relative change <= tol (of
    the iterate, or with ``problem.monitor`` of the monitored quantities).  A stalled
    iteration ends in ``problem.stalled``, given the best iterate: it raises, warns, or
    (``on_stall="accept"``) takes an iterate whose change has stopped decreasing at a
    floor within ``problem.accepted`` (rounding, in a map whose result is sensitive).
    A plain iteration that alternates between two iterates (``CYCLE`` times in a row,
    e.g. a gauge that flips at every step) is stalled at once, not after ``max_iter``."""
    mixer = _Anderson(problem.anderson, x) if problem.anderson else None
    monitor = problem.monitor
    watched = None if monitor is None else monitor(x)
    best = (math.inf, math.inf, x)                # (criterion, residual, iterate)
    progress = (math.inf, 0)                      # (criterion, n) at the last halving
    accepting = problem.on_stall == "accept"
    earlier, returns, last = None, 0, math.inf    # x's predecessor, 2-cycle count, criterion
    for n in range(1, problem.max_iter + 1):
        y = step(x)
        residual = residual_of(y, x)
        if math.isnan(residual):
            raise problem.fail(n, residual, "the iteration diverged")
        criterion = residual
        if monitor is not None:
            watched, before = monitor(y), watched
            criterion = residual_of(watched, before)
        if criterion <= problem.tol:
            problem.record(n, residual, criterion)
            return y
        if criterion < best[0]:
            best = (criterion, residual, y)
        if criterion < 0.5 * progress[0]:
            progress = (criterion, n)
        elif accepting and n - progress[1] >= PATIENCE and best[0] <= problem.accepted:
            break                                 # a floor: not halved for a while
        elif _out_of_reach(problem, n, n - progress[1], best[0]):
            return _stalled(problem, n, best, monitor, "no progress (at its best rate "
                            f"since the last halving, {n - progress[1]} iterations, tol "
                            "is beyond max_iter)")
        if mixer is None:             # (a criterion still falling is no cycle: not checked)
            returns = returns + 1 if criterion > 0.9 * last and _returned(
                y, earlier, min(problem.tol, CYCLE_RATIO * residual)) else 0
            last = criterion
            if returns >= CYCLE:
                return _stalled(problem, n, best, monitor, "the iteration alternates "
                                "between two iterates (f(f(x)) = x, f(x) != x)")
            earlier, x = x, y
        else:
            x = mixer.mix(x, y)
    return _stalled(problem, n, best, monitor, "no convergence")


def _out_of_reach(problem, n: int, since: int, best: float) -> bool:
    """Whether tol is out of reach by ``max_iter`` even if the criterion, which has not
    halved in the last ``since`` iterations, halved from now on every ``since``
    iterations (it needs ``log2(best / tol)`` halvings): a solve that makes no progress
    stops early instead of after ``max_iter`` iterations."""
    if since < PATIENCE or not best > problem.tol:
        return False
    return since * (math.log2(best / problem.tol) - 1.0) > problem.max_iter - n


def _returned(y: list, earlier: list | None, tol: float) -> bool:
    """Whether ``y`` is the iterate ``earlier`` (to ``tol``; a step may grow the leaves)."""
    return earlier is not None and all(a.shape == b.shape for a, b in zip(y, earlier)) \
        and residual_of(y, earlier) <= tol


def _stalled(problem, n: int, best: tuple, monitor, why: str) -> list:
    criterion, residual, y = best
    return problem.stalled(n, residual, y, criterion if monitor is not None else None, why)


class _Anderson:
    """Anderson mixing (type II) over the last ``depth`` steps, on real vectors."""

    def __init__(self, depth: int, like: list):
        self.depth, self.packer = depth, Packer(like)
        self.history: list = []
        self.previous = None

    def mix(self, x: list, y: list) -> list:
        g = self.packer.pack(y)
        f = g - self.packer.pack(x)
        if self.previous is not None:
            self.history.append((f - self.previous[0], g - self.previous[1]))
            del self.history[:-self.depth]
        self.previous = (f, g)
        if not self.history:
            return y
        df = np.stack([h[0] for h in self.history], axis=1)
        dg = np.stack([h[1] for h in self.history], axis=1)
        gamma = np.linalg.lstsq(df, f, rcond=1e-12)[0]
        return self.packer.unpack(g - dg @ gamma)


class Packer:
    """Leaves <-> one real vector (complex leaves as real and imaginary parts)."""

    def __init__(self, like: list):
        self.shapes = [x.shape for x in like]
        self.dtypes = [x.dtype for x in like]
        self.size = sum(x.size * (2 if x.dtype.kind == "c" else 1) for x in like)

    def pack(self, leaves: list) -> np.ndarray:
        parts = []
        for x in leaves:
            x = np.asarray(x).ravel()
            parts += [x.real, x.imag] if x.dtype.kind == "c" else [x]
        return np.concatenate(parts).astype(np.float64, copy=False) if parts else np.zeros(0)

    def unpack(self, vector: np.ndarray) -> list:
        leaves, start = [], 0
        for shape, dtype in zip(self.shapes, self.dtypes):
            n = math.prod(shape)
            if dtype.kind == "c":
                part = vector[start:start + n] + 1j * vector[start + n:start + 2 * n]
                start += 2 * n
            else:
                part = vector[start:start + n]
                start += n
            leaves.append(part.reshape(shape).astype(dtype))
        return leaves


def solve_affine(problem, step, x0: list, constant: list | None = None,
                 whole: tuple | None = None) -> tuple:
    """GMRES on ``(I - M) x = b`` for an affine step ``x -> M x + b`` (real-linear M):
    ``(x, tail)``.  ``constant`` is ``b``'s leaves when the caller knows them (else one
    step at 0).  ``whole = (whole_step, filler)``: a step with more outputs than x's
    leaves, on x's leaves and ``filler``; the true residuals are computed with it, and
    ``tail`` is its further outputs at the solution (None if it was not run there)."""
    packer = Packer(x0)
    if constant is None:
        constant = step([np.zeros(x.shape, x.dtype) for x in x0])
    b = packer.pack(constant)

    def matvec(v):                     # (I - M) v = v - (step(v) - b)
        return v - (packer.pack(step(packer.unpack(v))) - b)

    last = []                          # (vector, tail) of the last residual product

    def residual_matvec(v):
        outs = whole[0](packer.unpack(v) + list(whole[1]))
        last[:] = [v.copy(), outs[len(x0):]]
        return v - (packer.pack(outs[:len(x0)]) - b)

    restart = max(1, min(packer.size, GMRES_RESTART, problem.max_iter))
    result = gmres(matvec, b, packer.pack(x0), tol=problem.tol, restart=restart,
                   max_restarts=-(-problem.max_iter // restart),
                   residual_matvec=None if whole is None else residual_matvec)
    tail = last[1] if last and np.array_equal(last[0], result.x) else None
    if not result.converged:
        return problem.stalled(result.iterations, result.residual, packer.unpack(result.x),
                               why="GMRES's solution grew beyond what its products "
                               "resolve (eps |A| |x| above the tolerance times |b|: the "
                               "system is singular to rounding)"
                               if result.rounding else "GMRES did not converge",
                               note=lambda: _singular_note(lambda v: v - matvec(v),
                                                           packer.size)), tail
    problem.record(result.iterations, result.residual)
    return packer.unpack(result.x), tail


def _singular_note(linear_part, n: int) -> str:
    """Why a derivative solve ``(I - M) x = b`` may fail, from ``M``'s leading eigenvalue
    (ARPACK; dense below 3 unknowns): where its modulus is at least ``NEUTRAL``, ``I - M``
    is (nearly) singular -- the fixed point is not isolated (a family of fixed points, or
    a gauge the map leaves free) or not attracting -- and the note says so; else ''."""
    try:
        if n < 3:
            dense = np.column_stack([linear_part(v) for v in np.eye(n)])
            values = np.linalg.eigvals(dense) if n else np.zeros(0)
        else:
            operator = LinearOperator((n, n), matvec=linear_part, dtype=np.float64)
            basis = min(n, 20)                 # ARPACK's restarts cost ~basis products each
            values = eigs(operator, k=1, which="LM", tol=1e-8, ncv=basis,
                          maxiter=max(1, DIAGNOSIS_PRODUCTS // basis),
                          return_eigenvectors=False)
    except ArpackNoConvergence as error:
        values = error.eigenvalues
    except ArpackError:
        return ""
    if not len(values) or not np.max(np.abs(values)) >= NEUTRAL:
        return ""
    value = complex(values[np.argmax(np.abs(values))])
    shown = (f"the eigenvalue {value.real:.9g}" if abs(value.imag) < 1e-12 else
             f"an eigenvalue {value:.6g} of modulus {abs(value):.9g}")
    return (f"The map's derivative at the fixed point has {shown}, so I - df/dx is (nearly) "
            "singular: the fixed point is not isolated (a family of fixed points, along "
            "which the result may change, or a gauge the map leaves free: fix it inside f "
            "or with gauge_fix=) or does not attract, and the implicit derivative is not "
            "defined there.")

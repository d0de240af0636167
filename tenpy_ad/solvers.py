"""The numerical solvers of ``tp.fixed_point``, on lists of arrays (the leaves of x).

``step(xs)`` applies the map once; ``problem`` (a :class:`tenpy_ad.fixed_point.Problem`)
gives ``tol``, ``max_iter``, ``anderson`` and ``monitor``, and the solvers report with
``problem.record(iterations, residual)``, raise ``problem.fail(iterations, residual,
why)``, and end a stalled solve with ``problem.stalled(iterations, residual, best)``
(which raises, or returns the best iterate with a warning or as an accepted floor).

* :func:`solve_by_iteration` -- ``x <- f(x)``, optionally with Anderson mixing;
* :func:`solve_affine` -- GMRES (SciPy) for a step affine in x, on the real vector of the
  leaves (complex leaves as real and imaginary parts, so real-linear maps are solved too).
"""
from __future__ import annotations

import functools
import inspect
import math

import numpy as np

__all__ = ["solve_by_iteration", "solve_affine", "residual_of", "GMRES_RESTART"]

#: GMRES restart length (Krylov vectors kept)
GMRES_RESTART = 60


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


def solve_by_iteration(problem, step, x: list) -> list:
    """``x <- f(x)`` (with Anderson mixing if asked) until the relative change <= tol (of
    the iterate, or with ``problem.monitor`` of the monitored quantities).  A stalled
    iteration ends in ``problem.stalled``, given the best iterate: it raises, warns, or
    (``on_stall="accept"``) takes an iterate whose change has stopped decreasing at a
    floor within ``problem.accepted`` (rounding, in a map whose result is sensitive)."""
    mixer = _Anderson(problem.anderson, x) if problem.anderson else None
    monitor = problem.monitor
    watched = None if monitor is None else monitor(x)
    best = (math.inf, math.inf, x)                # (criterion, residual, iterate)
    progress = (math.inf, 0)                      # (criterion, n) at the last halving
    accepting = problem.on_stall == "accept"
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
        x = mixer.mix(x, y) if mixer is not None else y
    criterion, residual, y = best
    return problem.stalled(n, residual, y, criterion if monitor is not None else None)


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


def solve_affine(problem, step, x0: list, constant: list | None = None) -> list:
    """GMRES on ``(I - M) x = b`` for an affine step ``x -> M x + b`` (real-linear M);
    ``constant`` is ``b``'s leaves when the caller knows them (else one step at 0)."""
    from scipy.sparse.linalg import LinearOperator, gmres
    packer = Packer(x0)
    if constant is None:
        constant = step([np.zeros(x.shape, x.dtype) for x in x0])
    b = packer.pack(constant)

    last = [None, None]           # SciPy ends with b - A x: our residual reuses that A x

    def matvec(v):
        if last[0] is not None and np.array_equal(v, last[0]):
            return last[1].copy()     # (SciPy updates its products in place)
        product = v - (packer.pack(step(packer.unpack(v))) - b)
        last[0], last[1] = v.copy(), product.copy()
        return product

    iterations = 0

    def count(_):
        nonlocal iterations
        iterations += 1

    size = packer.size
    restart = max(1, min(size, GMRES_RESTART, problem.max_iter))
    operator = LinearOperator((size, size), matvec=matvec, dtype=np.float64)
    solution, info = gmres(operator, b, x0=packer.pack(x0), restart=restart,
                           maxiter=-(-problem.max_iter // restart), callback=count,
                           callback_type="pr_norm", **_gmres_tol(problem.tol))
    norm_b = float(np.linalg.norm(b))
    residual = float(np.linalg.norm(matvec(solution) - b)) / norm_b if norm_b else 0.0
    if info < 0:
        raise problem.fail(iterations, residual, "GMRES broke down")
    if info > 0:
        return problem.stalled(iterations, residual, packer.unpack(solution),
                               why="GMRES did not converge")
    problem.record(iterations, residual)
    return packer.unpack(solution)


def _gmres_tol(tol: float) -> dict:
    return {_gmres_tol_name(): tol, "atol": 0.0}


@functools.lru_cache(maxsize=1)
def _gmres_tol_name() -> str:
    """SciPy's name of GMRES's relative tolerance ("tol" before 1.12); inspected once."""
    from scipy.sparse.linalg import gmres
    return "rtol" if "rtol" in inspect.signature(gmres).parameters else "tol"

"""Restarted GMRES on NumPy vectors, for the derivative solves of ``tp.fixed_point``.

SciPy's ``gmres`` spends about 80 us per iteration in Python (a modified Gram-Schmidt
loop of vector operations, and Givens rotations applied through fancy indexing): at the
sizes of a CTMRG environment (~10^3 unknowns, a ~0.3 ms product) that is a fifth of an
adjoint solve.  Here the Arnoldi step is classical Gram-Schmidt applied twice (two
matrix-vector products with the basis, as stable as modified Gram-Schmidt) and the
rotations act on Python floats: a few us per iteration besides the product.

A residual below the rounding of the products proves nothing: where ``|x|`` has grown so
large that ``eps |A| |x|`` exceeds ``max(tol, sqrt(eps)) |b|`` (``A`` singular to rounding,
e.g. the derivative of a fixed point that is not isolated), the solve stops unconverged
with ``rounding`` set and that rounding as its residual, whatever residual it computed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.linalg import solve_triangular

__all__ = ["GmresResult", "gmres"]

_EPS = float(np.finfo(np.float64).eps)
#: a pivot this small relative to its column is rounding: A is singular on the space
_SINGULAR = 16 * _EPS


@dataclass
class GmresResult:
    """``x``; whether ``|b - A x| <= tol |b|`` holds for the true residual; the number of
    products with A in Arnoldi steps; that relative residual (NaN once A gave one);
    whether the solve stopped because ``x`` grew beyond what the products resolve (then
    ``residual`` is that rounding: the accuracy a product can tell)."""
    x: np.ndarray
    converged: bool
    iterations: int
    residual: float
    rounding: bool = False


def gmres(matvec: Callable, b: np.ndarray, x0: np.ndarray | None = None, *, tol: float,
          restart: int, max_restarts: int,
          residual_matvec: Callable | None = None) -> GmresResult:
    """Solve ``A x = b`` (real vectors; ``matvec(v) = A v``) to the relative residual
    ``tol``, restarting every ``restart`` iterations, at most ``max_restarts`` cycles.
    Each cycle ends with the true residual ``b - A x`` (one product), which decides;
    ``residual_matvec`` (default ``matvec``) makes those products, so that the last one
    it makes is at the ``x`` returned (a caller may compute more there; a start that
    needs no iteration is returned without one)."""
    residual_matvec = matvec if residual_matvec is None else residual_matvec
    b = np.asarray(b, dtype=np.float64)
    b_norm = float(np.linalg.norm(b))
    x = np.zeros_like(b) if x0 is None else np.array(x0, dtype=np.float64)
    if b_norm == 0.0:
        return GmresResult(np.zeros_like(b), True, 0, 0.0)
    target = tol * b_norm
    r = b - matvec(x) if x.any() else b.copy()
    r_norm = float(np.linalg.norm(r))
    iterations, scale = 0, 0.0
    noise = max(target, math.sqrt(_EPS) * b_norm) / _EPS   # |A| |x| beyond it: rounding
    basis = np.empty((restart + 1, b.shape[0]))
    for _ in range(max_restarts):
        if not r_norm > target:                  # (converged, or NaN: stop either way)
            break
        basis[0] = r / r_norm
        columns, rhs, steps, cycle_scale = _arnoldi_cycle(matvec, basis, r_norm, target,
                                                          restart)
        iterations, scale = iterations + steps, max(scale, cycle_scale)
        if columns:
            x += _least_squares(columns, rhs) @ basis[:len(columns)]
        r = b - residual_matvec(x)
        r_norm = float(np.linalg.norm(r))
        floor = scale * float(np.linalg.norm(x))
        if floor > noise:                        # (the residual is known to floor at best)
            return GmresResult(x, False, iterations, max(r_norm, _EPS * floor) / b_norm,
                               rounding=True)
        if len(columns) < steps:                 # a singular least-squares problem
            break
    return GmresResult(x, r_norm <= target, iterations, r_norm / b_norm)


def _arnoldi_cycle(matvec, basis, r_norm: float, target: float, restart: int) -> tuple:
    """One GMRES cycle from ``basis[0]``: the columns of the triangular factor of the
    Hessenberg matrix (rotated), the rotated right-hand side, the iterations done, and
    the largest ``|A v|`` of its unit vectors (a lower bound on ``|A|``).
    Stops when the residual estimate reaches ``target``, at an invariant subspace, or at
    a pivot that is zero to rounding (that column left out: the solution is then the
    least-squares one of the columns before, not a division by rounding)."""
    columns, rotations, rhs, scale = [], [], [r_norm], 0.0
    for j in range(restart):
        w = matvec(basis[j])
        first_norm = float(np.linalg.norm(w))
        scale = max(scale, first_norm)
        used = basis[:j + 1]
        h = used @ w
        w -= h @ used
        correction = used @ w                    # the second Gram-Schmidt pass
        w -= correction @ used
        h_next = float(np.linalg.norm(w))
        column = (h + correction).tolist() + [h_next]
        for i, (c, s) in enumerate(rotations):
            column[i], column[i + 1] = c * column[i] + s * column[i + 1], \
                c * column[i + 1] - s * column[i]
        pivot = math.hypot(column[j], column[j + 1])
        if not pivot > _SINGULAR * first_norm:   # A singular on this space (or NaN)
            return columns, rhs[:len(columns)], j + 1, scale
        c, s = column[j] / pivot, column[j + 1] / pivot
        rotations.append((c, s))
        column[j] = pivot
        columns.append(column[:j + 1])
        rhs.append(-s * rhs[j])
        rhs[j] *= c
        invariant = h_next <= _EPS * first_norm
        if not invariant:
            basis[j + 1] = w / h_next
        if not abs(rhs[j + 1]) > target or invariant:
            return columns, rhs[:-1], j + 1, scale
    return columns, rhs[:-1], restart, scale


def _least_squares(columns: list, rhs: list) -> np.ndarray:
    """``y`` of ``R y = rhs`` for the upper-triangular ``R`` of ``columns``."""
    k = len(columns)
    factor = np.zeros((k, k))
    for i, column in enumerate(columns):
        factor[:i + 1, i] = column
    return solve_triangular(factor, np.asarray(rhs[:k]))

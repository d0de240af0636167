"""Corner transfer matrix renormalization (CTMRG) for the 2D Ising model (J = 1), written
once for every mode.

The same functions run on ndarrays (a NumPy pass), on eager Tensors and on TracedTensors.
The bulk tensor is TRG's ``T0`` (:func:`~tenpy_ad.models.trg.ising_tensor`), symmetric
under every permutation of its legs, so one corner ``C`` (k x k) and one edge ``E``
(k x 2 x k, symmetric in its outer legs) describe the whole environment.

One move absorbs a bulk tensor into the corner and the edge::

    M[(x,r),(y,d)] = C[a,b] E[a,s,x] E[b,t,y] T[s,t,d,r]          (the enlarged corner)
    Et[(a,l),d,(b,r)] = E[a,s,b] T[s,l,d,r]                         (the enlarged edge)
    P = the k leading eigenvectors of M, in a canonical gauge
    C <- P^T M P,  E <- P^T Et P,  each divided by its largest |entry|

The environment is the fixed point of the move: found by a NumPy pass (:func:`converge`),
then, from there, by :func:`tenpy_ad.fixed_point` in any mode, which also gives its
derivative implicitly (not through the iterations).  The move is a function of the
environment only once the eigenvectors' gauge is fixed:

* signs: the first entry of each eigenvector larger than half its largest is positive;
* degenerate eigenvalues: the Ising corner spectrum has (near-)degenerate multiplets
  (free-fermion levels), whose eigenvectors any rotation mixes.  Eigenvalues within
  ``CLUSTER_GAP`` of each other form a cluster, whose basis is fixed by diagonalising the
  enlarged edge ``sum_d h_d Et[:, d, :]`` (``h = SPLITTER``) inside it.

Which eigenvalues are kept, the clusters and the sign rows are the move's *structure*:
read from the values on arrays and eager tensors, given (static) when traced.  At most
``chi`` states are kept, whole clusters only, and only states the eigensolver resolves:
each kept eigenvalue lies at least ``RESOLUTION`` (relative to the strongest) from every
eigenvalue outside its cluster and from zero.  eigh determines an eigenvector to about
``eps |M| / gap``, so every kept vector, hence the move, is a function of the environment
to ~1e-11 (measured: consecutive moves then agree element-wise to ~1e-13), below ``TOL``.
Less resolved states weigh less than 1e-20 in the reduced density matrix C^4, and their
vectors drift from move to move (by ~1e-9 for the states near 1e-8 that a cut by weight
alone kept at beta = 0.3, chi = 32): with them no element-wise fixed point exists to TOL.

The forward pass (:func:`converge`) stops when the environment is an element-wise fixed
point to ``tol``, or, should its entries stall at a noise floor above ``tol`` (another
BLAS, a tighter ``tol``), once the gauge-invariant corner spectrum has stopped changing
(to roundoff, for ``STALL_MOVES`` moves, while the entries made no progress): the result
then says how far from a fixed point it is (``Boundary.residual``, a warning),
and the implicit derivatives are as accurate as that residual.

Observables per site:

    lnZ/N = ln( Z(C^4 E^4 T) Z(C^4) / Z(C^4 E^2)^2 )
    m     = Z(C^4 E^4 T_sigma) / Z(C^4 E^4 T)                 (sigma on the centre site)
    <ss>  = Z(2x1 patch, T_sigma T_sigma) / Z(2x1 patch, T T),  u_local = -2 <ss>

and the energy ``u = -d(lnZ/N)/d beta`` by AD through the fixed point.  Below T_c the
boundary starts polarised (spins up), which selects the m > 0 phase.
"""
from __future__ import annotations

import math
import time
import warnings
from collections import deque
from dataclasses import dataclass
from functools import partial

import numpy as np

import tenpy_ad as tp
from tenpy_ad.errors import ArgumentError, ConvergenceError, ConvergenceWarning
from tenpy_ad.models import onsager
from tenpy_ad.models.trg import ising_tensor
from tenpy_ad.models.values import concrete_float, is_traced, values_of

#: consecutive corner eigenvalues closer than this (relatively) form one cluster
CLUSTER_GAP = 0.1
#: a kept eigenvalue lies at least this far (relative to the strongest) from every eigenvalue
#: outside its cluster and from zero, so that eigh resolves its eigenvector to ~1e-11
RESOLUTION = 1e-5
#: the bond vector h that splits clusters: their basis diagonalises sum_d h_d Et[:, d, :]
SPLITTER = np.array([1.0, 0.5])
#: default relative tolerance of the environment (its moves agree element-wise to ~1e-13)
TOL = 1e-10
#: the forward pass accepts a noise floor above tol after this many moves in which the
#: corner spectrum changed by roundoff only (SPECTRUM_EPS) and the entries made no progress
STALL_MOVES = 50
#: changes of the normalised corner spectrum below this are roundoff (eigvalsh's error).
#: A slowly converging iteration (near beta_c) changes it by ~1/5 of its entries' change,
#: so it reaches this only after the entries have converged to any tol >= 1e-13
SPECTRUM_EPS = 100 * float(np.finfo(np.float64).eps)

_SPIN = np.array([1.0, -1.0])
_W_COSH = np.array([[1.0, 0.0], [1.0, 0.0]])
_W_SINH = np.array([[0.0, 1.0], [0.0, -1.0]])
_FREE = np.array([1.0, 0.0])


# ------------------------------------------------------------------ tensors

def bond_factor(beta):
    """``W`` with ``exp(beta s s') = sum_i W[s,i] W[s',i]`` (rows: spin up, down)."""
    e_plus, e_minus = tp.exp(beta), tp.exp(-beta)
    sqrt_cosh = tp.sqrt((e_plus + e_minus) * 0.5)
    sqrt_sinh = tp.sqrt((e_plus - e_minus) * 0.5)
    return sqrt_cosh * _W_COSH + sqrt_sinh * _W_SINH


def spin_tensor(beta):
    """The impurity ``T_sigma[i,j,k,l] = sum_s sigma_s W[s,i] W[s,j] W[s,k] W[s,l]``."""
    w = bond_factor(beta)
    return tp.einsum("a,ai,aj,ak,al->ijkl", _SPIN, w, w, w, w)


def initial_environment(beta: float, polarized: bool) -> tuple:
    """A 2 x 2 corner and 2 x 2 x 2 edge: the bulk tensor with its outer legs closed by a
    free boundary, or by spins fixed up (``polarized``)."""
    t = np.asarray(ising_tensor(float(beta)))
    v = np.asarray(bond_factor(float(beta)))[0] if polarized else _FREE
    return np.einsum("uldr,u,l->rd", t, v, v), np.einsum("uldr,u->ldr", t, v)


# ------------------------------------------------------------------ one move

@dataclass(frozen=True)
class Structure:
    """The discrete choices of a move: the positions of the kept eigenvalues in eigh's
    (ascending) output, strongest first; clusters ``(start, stop)`` among the kept; and
    per kept eigenvector, the row whose sign is made positive."""
    order: tuple
    clusters: tuple
    sign_rows: tuple

    @property
    def kept(self) -> int:
        return len(self.order)


def enlarged(env, t):
    """The enlarged corner ``M`` (2k x 2k, symmetrised) and edge ``Et`` (2k x 2 x 2k)."""
    c, e = env
    k = c.shape[0]
    m = tp.einsum("ab,asx,bty,stdr->xryd", c, e, e, t).reshape(2 * k, 2 * k)
    m = (m + m.T) * 0.5
    et = tp.einsum("asb,sldr->aldbr", e, t).reshape(2 * k, 2, 2 * k)
    return m, et


def move(env, t, structure):
    """One CTMRG move in a fixed gauge.  ``structure``: a :class:`Structure` (any mode),
    or, read from the values (not traced), the number of states to keep or a function of
    the eigenvalues giving it (e.g. ``partial(kept_states, chi=32)``)."""
    m, et = enlarged(env, t)
    p, _ = projector(m, et, structure)
    c_new = p.T @ m @ p
    e_new = tp.einsum("xa,adb,by->xdy", p.T, et, p)
    c_new = (c_new + c_new.T) * 0.5
    e_new = (e_new + e_new.transpose(2, 1, 0)) * 0.5
    return c_new / tp.amax(tp.abs(c_new)), e_new / tp.amax(tp.abs(e_new))


def projector(m, et, structure):
    """The kept eigenvectors of ``m`` in the canonical gauge, and the structure used."""
    w, v = tp.linalg.eigh(m)
    static = isinstance(structure, Structure)
    if static:
        order, clusters = structure.order, structure.clusters
    else:
        values = _values(w)
        order = _strongest(values, structure(values) if callable(structure) else structure)
        clusters = _clusters(values[list(order)])
    p = _fix_clusters(_kept_columns(v, order), et, clusters)
    rows = structure.sign_rows if static else _sign_rows(_values(p))
    p = p * tp.sign(tp.sum(p * _one_hot(rows, p.shape), axis=0))
    return p, Structure(tuple(order), tuple(clusters), tuple(rows))


def _kept_columns(v, order):
    """The columns ``order`` of ``v``, in that order; through a slice when they are one
    block, so that eigh's rule sees the truncation (its derivatives are then exact at every
    order, whatever the discarded spectrum)."""
    lo, hi = min(order), max(order) + 1
    if hi - lo == len(order):
        return v[:, lo:hi] @ _selector(hi - lo, [i - lo for i in order])
    return v @ _selector(v.shape[1], order)


def _fix_clusters(p, et, clusters):
    """Rotate each cluster's eigenvectors to the eigenbasis of the splitter inside it."""
    multi = [(i, j) for i, j in clusters if j - i > 1]
    if not multi:
        return p
    k = p.shape[1]
    splitter = tp.einsum("adb,d->ab", et, SPLITTER)
    singles = np.ones(k)
    rotation = None
    for i, j in multi:
        singles[i:j] = 0.0
        block = p[:, i:j]
        _, r = tp.linalg.eigh(block.T @ splitter @ block)
        embed = _selector(k, range(i, j))                # k x (j - i)
        term = embed @ r[:, ::-1] @ embed.T
        rotation = term if rotation is None else rotation + term
    return p @ (rotation + np.diag(singles))


def _values(x) -> np.ndarray:
    """The values behind the discrete choices of a move (gauge, kept states), explicitly
    detached from any tape."""
    if is_traced(x):
        raise ArgumentError("ctmrg: a traced move needs its structure (see converge())")
    return values_of(x)


def _strongest(w: np.ndarray, count: int) -> tuple:
    return tuple(int(i) for i in np.argsort(-np.abs(w), kind="stable")[:count])


def _clusters(w: np.ndarray) -> tuple:
    """Runs of consecutive values within CLUSTER_GAP of each other."""
    a = np.abs(w)
    clusters, start = [], 0
    for i in range(1, len(a) + 1):
        if i == len(a) or a[i] < (1.0 - CLUSTER_GAP) * a[i - 1]:
            clusters.append((start, i))
            start = i
    return tuple(clusters)


def _sign_rows(p: np.ndarray) -> tuple:
    """Per column, the first row whose entry exceeds half the column's largest."""
    a = np.abs(p)
    return tuple(int(i) for i in np.argmax(a > 0.5 * a.max(axis=0), axis=0))


def _selector(n: int, columns) -> np.ndarray:
    columns = list(columns)
    out = np.zeros((n, len(columns)))
    out[columns, np.arange(len(columns))] = 1.0
    return out


def _one_hot(rows, shape) -> np.ndarray:
    out = np.zeros(tuple(shape))
    out[list(rows), np.arange(shape[1])] = 1.0
    return out


def kept_states(w: np.ndarray, chi: int) -> int:
    """How many of the enlarged corner's eigenvalues ``w`` to keep: whole clusters, at most
    ``chi`` states, each at least ``RESOLUTION`` of the strongest from every eigenvalue
    outside its cluster and from zero (at least one state)."""
    a = np.sort(np.abs(np.asarray(w, dtype=float)))[::-1]
    kept = 0
    for start, stop in _clusters(a):
        if stop > chi or _separation(a, start, stop) < RESOLUTION * a[0]:
            break
        kept = stop
    return max(kept, 1)


def _separation(a: np.ndarray, start: int, stop: int) -> float:
    """The distance of the cluster ``a[start:stop]`` (``a`` descending) from the other
    values and from zero."""
    above = a[start - 1] - a[start] if start > 0 else math.inf
    below = a[stop - 1] - (a[stop] if stop < len(a) else 0.0)
    return min(above, below)


def structure_at(env, t, chi: int | None = None) -> Structure:
    """The structure of the value-driven move at ``env`` (arrays): keeping as many states
    as ``env`` has, or :func:`kept_states` of them when ``chi`` is given."""
    keep = env[0].shape[0] if chi is None else partial(kept_states, chi=chi)
    return projector(*enlarged(env, t), keep)[1]


# ------------------------------------------------------------------ observables

def _half_row(env):
    c, e = env
    return tp.einsum("ax,xsy,yb->asb", c, e, c)


def _site(env, t):
    """Z(C^4 E^4 t): the 3 x 3 patch around one bulk tensor ``t``."""
    half = _half_row(env)
    e = env[1]
    return tp.einsum("asb,alc,bre,sldr,cde->", half, e, e, t, half)


def _pair(env, t1, t2):
    """The 4 x 3 patch around two horizontal neighbours ``t1 t2``."""
    c, e = env
    row = tp.einsum("ax,xsy,ytz,zb->astb", c, e, e, c)
    return tp.einsum("astb,alc,bre,slmp,tpqr,cmqe->", row, e, e, t1, t2, row)


def lnz_per_site(env, t):
    """``ln( Z(C^4 E^4 T) Z(C^4) / Z(C^4 E^2)^2 )``: lnZ/N of the converged environment."""
    c = env[0]
    half = _half_row(env)
    corners = tp.einsum("ab,bc,cd,da->", c, c, c, c)
    two_edges = tp.einsum("asb,asb->", half, half)
    return tp.log(_site(env, t)) + tp.log(corners) - tp.log(two_edges) * 2.0


def magnetization(env, beta):
    """``<sigma>`` on one site (its sign is the phase the boundary selected)."""
    return _site(env, spin_tensor(beta)) / _site(env, ising_tensor(beta))


def bond_correlation(env, beta):
    """``<sigma_i sigma_j>`` of nearest neighbours; the energy per site is ``-2`` times it."""
    t, t_sigma = ising_tensor(beta), spin_tensor(beta)
    return _pair(env, t_sigma, t_sigma) / _pair(env, t, t)


# ------------------------------------------------------------------ the fixed point

class AccuracyWarning(ConvergenceWarning):
    """The environment is a fixed point only to a residual above the tolerance asked (its
    entries stalled at a noise floor while its corner spectrum converged): the values and
    implicit derivatives computed from it are accurate to about that residual (a
    :class:`~tenpy_ad.errors.ConvergenceWarning`)."""


@dataclass
class Boundary:
    """A converged environment (arrays) at ``beta`` and what it took to find it.

    ``residual``: how far ``env`` is from an element-wise fixed point of the move (the
    largest relative change of an entry in its last move, or, when the entries stalled,
    in any of the last ``STALL_MOVES // 2`` moves); ``converged``: whether that met ``tol``;
    ``spectrum_change``: the last change of the normalised corner spectrum."""
    beta: float
    chi: int
    polarized: bool
    env: tuple
    structure: Structure
    iterations: int
    seconds: float
    residual: float = 0.0
    spectrum_change: float = 0.0
    converged: bool = True
    tol: float = TOL

    @property
    def kept(self) -> int:
        return self.structure.kept

    def solve_tol(self, tol: float) -> float:
        """The tolerance of a fixed-point solve started here: ``tol``, or the residual
        reached when the entries stalled above it (an iteration cannot do better)."""
        return tol if self.converged else max(tol, self.residual)


@dataclass
class _Progress:
    """Where an iteration at one size stopped."""
    moves: int
    residual: float
    spectrum_change: float
    converged: bool


def _check(beta, chi) -> None:
    if not isinstance(chi, (int, np.integer)) or chi < 2:
        raise ArgumentError(f"ctmrg: chi must be an integer >= 2, got {chi!r}")
    value = concrete_float(beta)
    if value is not None and not 0 < value < math.inf:
        raise ArgumentError(f"ctmrg: beta must be finite and > 0, got {value}")


def corner_spectrum(env) -> np.ndarray:
    """The corner's eigenvalues by decreasing magnitude, divided by the largest magnitude:
    the same in every gauge (arrays)."""
    w = np.linalg.eigvalsh(np.asarray(env[0]))
    w = w[np.argsort(-np.abs(w), kind="stable")]
    return w / np.abs(w[0])


def _change(new, old) -> float:
    """The largest change of an entry of any leaf, relative to the leaf's largest entry."""
    return max(float(np.max(np.abs(y - x)) / np.max(np.abs(y))) for y, x in zip(new, old))


def _stalled(residuals: deque) -> float | None:
    """For a full window of residuals whose later half did not halve the earlier half's
    best (no progress: a noise floor), the largest of the later half; else None."""
    if len(residuals) < residuals.maxlen:
        return None
    values = list(residuals)
    later, earlier = values[len(values) // 2:], values[:len(values) // 2]
    return max(later) if min(later) > 0.5 * min(earlier) else None


def _iterate(env, t, tol: float, max_iter: int) -> tuple:
    """Moves at the size of ``env`` until its entries change by at most ``tol`` (relative),
    or until they stall (no progress in ``STALL_MOVES`` moves) while the corner spectrum
    changes by roundoff only (``SPECTRUM_EPS``): ``(env, _Progress)``.  Raises
    ConvergenceError after ``max_iter`` moves."""
    size = env[0].shape[0]
    spectrum = corner_spectrum(env)
    quiet: deque = deque(maxlen=STALL_MOVES)   # residuals while the spectrum is at rest
    residual = change = math.inf
    for n in range(1, max_iter + 1):
        new = move(env, t, size)
        residual = _change(new, env)
        new_spectrum = corner_spectrum(new)
        change = float(np.max(np.abs(new_spectrum - spectrum)))
        env, spectrum = new, new_spectrum
        if not math.isfinite(residual):
            raise ConvergenceError(f"ctmrg: the iteration diverged after {n} moves", residual, n)
        if residual <= tol:
            return env, _Progress(n, residual, change, True)
        if change <= SPECTRUM_EPS:
            quiet.append(residual)
            floor = _stalled(quiet)
            if floor is not None:
                return env, _Progress(n, floor, change, False)
        else:
            quiet.clear()
    raise ConvergenceError(
        f"ctmrg: no convergence after {max_iter} moves (element-wise residual "
        f"{residual:.2g}, corner spectrum change {change:.2g}, tol {tol:g})", residual,
        max_iter)


def converge(beta: float, chi: int = 32, polarized: bool | None = None, tol: float = TOL,
             max_iter: int = 10_000) -> Boundary:
    """The environment at ``beta`` by a NumPy pass: grow from the boundary to
    :func:`kept_states` states, then iterate the move to its fixed point.

    The iteration stops when the entries change by at most ``tol`` (relative) in a move;
    should they stall above it (a noise floor), once the corner spectrum, which no gauge
    changes, has changed by roundoff only for ``STALL_MOVES`` moves without progress of
    the entries: the :class:`Boundary` then has ``converged=False`` and the ``residual``
    reached, and an :class:`AccuracyWarning` says so.  ``polarized`` (default: below T_c)
    starts from spins fixed up, selecting m > 0.  (No Anderson mixing here: far from the
    fixed point the gauge's discrete choices change between moves, and mixing across them
    diverges.)  Raises :class:`~tenpy_ad.errors.ConvergenceError` after ``max_iter`` moves
    of the iteration.
    """
    _check(beta, chi)
    beta = float(beta)
    polarized = beta > onsager.BETA_C if polarized is None else bool(polarized)
    start = time.perf_counter()
    t = np.asarray(ising_tensor(beta))
    env = initial_environment(beta, polarized)
    keep = partial(kept_states, chi=chi)
    growth = math.ceil(math.log2(chi)) + 10
    for _ in range(growth):                                 # grow, let the spectrum settle
        env = move(env, t, keep)
    moves = 0
    for _ in range(3):
        env, progress = _iterate(env, t, tol, max(max_iter - moves, 1))
        moves += progress.moves
        w = np.linalg.eigvalsh(np.asarray(enlarged(env, t)[0]))
        if kept_states(w, chi) == env[0].shape[0] or moves >= max_iter:
            break
        env = move(env, t, keep)                             # a cut moved: keep fewer/more
        moves += 1
    boundary = Boundary(beta, chi, polarized, env, structure_at(env, t), growth + moves,
                        time.perf_counter() - start, progress.residual,
                        progress.spectrum_change, progress.converged, tol)
    if not boundary.converged:
        warnings.warn(AccuracyWarning(
            f"ctmrg: at beta = {beta:.6g}, chi = {chi} the environment is a fixed point "
            f"only to {boundary.residual:.1e} element-wise (tol {tol:g}; its corner spectrum "
            f"converged to {boundary.spectrum_change:.1e}): values and derivatives are "
            "accurate to about that residual"), stacklevel=2)
    return boundary


def environment(beta, boundary: Boundary, tol: float = TOL, max_iter: int = 10_000,
                solver: str = "gmres", anderson: int = 0, stats: dict | None = None):
    """``(env, T)``: the fixed point of the move at ``beta`` (any mode), started from
    ``boundary`` with its structure, and the bulk tensor.  Derivatives in ``beta`` are
    implicit (:func:`tenpy_ad.fixed_point`).  ``anderson`` mixing is safe here, near the
    boundary's fixed point, where the structure no longer changes.  The solves use ``tol``,
    or the residual a stalled boundary reached (:meth:`Boundary.solve_tol`; converge()
    warned then): the derivatives are as accurate as the environment is a fixed point."""
    t = ising_tensor(beta)
    step = partial(move, structure=boundary.structure)
    env = tp.fixed_point(step, boundary.env, t, tol=boundary.solve_tol(tol),
                         max_iter=max_iter, solver=solver, anderson=anderson, stats=stats)
    return env, t


def ctmrg_lnz(beta, chi: int = 32, boundary: Boundary | None = None, **options):
    """lnZ/N by CTMRG at bond dimension ``chi``, differentiable in ``beta`` (a float, an
    eager Tensor or a TracedTensor; traced, pass the ``boundary`` of a reference beta)."""
    _check(beta, chi)
    if boundary is None:
        value = concrete_float(beta)
        if value is None:
            raise ArgumentError("ctmrg_lnz: a traced beta needs boundary=converge(beta0, chi)")
        boundary = converge(value, chi)
    env, t = environment(beta, boundary, **options)
    return lnz_per_site(env, t)


def unrolled_environment(beta, boundary: Boundary, moves: int, checkpoint: bool = True):
    """``(env, T)`` after ``moves`` moves from ``boundary.env`` (held fixed), to be
    differentiated through every move (checkpointed) instead of implicitly: derivatives
    approach the implicit ones as ``moves`` grows."""
    t = ising_tensor(beta)
    structure = boundary.structure

    def step(c, e, t):
        return move((c, e), t, structure)

    step = tp.checkpoint(step) if checkpoint else step
    env = boundary.env
    for _ in range(moves):
        env = step(env[0], env[1], t)
    return env, t


# ------------------------------------------------------------------ observables per beta

def point(beta: float, chi: int = 32, second_order: bool = True, tol: float = TOL,
          solver: str = "gmres", polarized: bool | None = None) -> dict:
    """lnZ/N, u, |m| (and c) at ``beta``, with the exact values and the costs.

    The environment comes from :func:`converge` (NumPy); ``u = -d(lnZ/N)/d beta`` and
    ``c = beta^2 d^2(lnZ/N)/d beta^2`` from one compiled graph through
    :func:`tenpy_ad.fixed_point` (implicit derivatives); ``u_local = -2 <s s>`` from the
    environment.  Where the second derivative's solve does not converge, ``c`` comes from
    central differences of the first (:func:`specific_heat`: ``c_method``,
    ``c_uncertainty``, ``c_reason``), or is NaN next to beta_c (``c_error``).  Keys:
    ``beta, chi, kept, lnz, u, m, c, u_local``, the exact ``*_exact`` values, how far the
    environment is from a fixed point (``residual``, element-wise; ``converged``: whether
    that met ``tol``, else the values and derivatives are accurate to about ``residual``
    and :func:`converge` warned), and the costs: ``iterations`` (forward moves),
    ``adjoint_iterations`` (GMRES), ``forward_s``, ``backward_s`` (first derivative, one
    compiled program run), ``second_s``.
    """
    boundary = converge(beta, chi, polarized, tol=tol)
    beta = boundary.beta
    stats: dict = {}
    b = tp.input((), name="beta")
    lnz = ctmrg_lnz(b, chi, boundary=boundary, tol=tol, solver=solver, stats=stats)
    first = tp.ad.grad(lnz, b)
    program = tp.compile([lnz, first], inputs=[b])
    start = time.perf_counter()
    lnz_value, dlnz = (float(v) for v in program(np.float64(beta)))
    backward_s = time.perf_counter() - start
    result = {"beta": beta, "chi": chi, "lnz": lnz_value, "u": -dlnz,
              **environment_report(boundary),
              "adjoint_iterations": stats.get("adjoint_iterations"), "backward_s": backward_s}
    if second_order:
        second = tp.compile(tp.ad.grad(first, b), inputs=[b])
        start = time.perf_counter()
        result.update(specific_heat(lambda x: float(second(np.float64(x))),
                                    lambda x: float(program(np.float64(x))[1]), beta, chi),
                      second_s=time.perf_counter() - start)
    result.update(exact(beta, second_order))
    return result


#: the steps of the central differences of d(lnZ/N)/d beta that give c where its own
#: derivative solve does not converge
DIFFERENCE_STEPS = (2e-3, 1e-3)


def specific_heat(second, first, beta: float, chi: int) -> dict:
    """``c = beta^2 d^2(lnZ/N)/d beta^2`` as the keys ``c`` and ``c_method`` of a point, from
    ``second(beta)`` (the implicit second derivative) or, where its solve does not converge
    (its linearisation contracts too slowly near beta_c: GMRES stalls), from central
    differences of ``first`` (the implicit first derivative, as exact as the
    environment) at the :data:`DIFFERENCE_STEPS` ``h`` and ``h / 2``, extrapolated
    (Richardson): ``c_method`` says so and ``c_uncertainty`` is the extrapolation's own
    change.  Within ``2 h`` of beta_c, where differences straddle the transition, ``c`` is
    NaN and ``c_error`` says why."""
    try:
        return {"c": beta * beta * second(beta), "c_method": "implicit"}
    except ConvergenceError as error:
        reason = failed_point(beta, chi, error)["error"]
    h = DIFFERENCE_STEPS[0]
    if abs(beta - onsager.BETA_C) <= 2 * h:
        return {"c": math.nan, "c_error": f"{reason}; central differences would straddle "
                                          f"beta_c (within {2 * h:g})"}
    slopes = [(first(beta + step) - first(beta - step)) / (2 * step)
              for step in DIFFERENCE_STEPS]
    extrapolated = (4.0 * slopes[1] - slopes[0]) / 3.0
    return {"c": beta * beta * extrapolated, "c_method": "differences",
            "c_uncertainty": beta * beta * abs(extrapolated - slopes[1]),
            "c_reason": reason}


def environment_report(boundary: Boundary) -> dict:
    """What a point reports of its environment: ``kept``, ``m``, ``u_local``, ``residual``,
    ``converged``, ``tol``, ``iterations`` and ``forward_s``."""
    env, beta = boundary.env, boundary.beta
    return {"kept": boundary.kept, "m": abs(float(magnetization(env, beta))),
            "u_local": -2.0 * float(bond_correlation(env, beta)),
            "residual": boundary.residual, "converged": boundary.converged,
            "tol": boundary.tol, "iterations": boundary.iterations,
            "forward_s": boundary.seconds}


def exact(beta: float, second_order: bool = True) -> dict:
    """Onsager's lnZ/N, u (and c) and Yang's |m| at ``beta``, as ``*_exact`` keys."""
    values = {"lnz_exact": onsager.lnz(beta), "u_exact": onsager.energy(beta),
              "m_exact": onsager.magnetization(beta)}
    if second_order:
        values["c_exact"] = onsager.specific_heat(beta)
    return values


#: the failures of one point a sweep keeps as a row instead of losing the others
POINT_FAILURES = (ConvergenceError, np.linalg.LinAlgError)


def failed_point(beta: float, chi: int, error: BaseException) -> dict:
    """The row of a point that failed: ``beta``, ``chi`` and ``error`` (its type and
    message, on one line)."""
    message = " ".join(str(error).split())
    return {"beta": beta, "chi": chi, "error": f"{type(error).__name__}: {message}"}


def sweep(betas, chi: int = 32, second_order: bool = True, executor=None, progress=None,
          on_error: str = "keep", **options) -> list:
    """:func:`point` for every beta, in this process or on ``executor`` (any
    ``concurrent.futures.Executor``); ``progress(i, n)`` is called after each point.

    A point that fails (``POINT_FAILURES``: no convergence, an eigensolver's failure)
    does not lose the others: with ``on_error="keep"`` its row is :func:`failed_point`'s
    (``beta``, ``chi``, ``error``) and a RuntimeWarning names it; ``"raise"`` raises it.
    """
    if on_error not in ("keep", "raise"):
        raise ArgumentError(f"ctmrg.sweep: on_error must be 'keep' or 'raise', got "
                            f"{on_error!r}")
    betas = [float(b) for b in betas]
    if executor is None:
        futures = None
    else:
        futures = [executor.submit(point, beta, chi, second_order, **options)
                   for beta in betas]
    results = []
    for i, beta in enumerate(betas):
        try:
            results.append(point(beta, chi, second_order, **options) if futures is None
                           else futures[i].result())
        except POINT_FAILURES as error:
            if on_error == "raise":
                raise
            results.append(failed_point(beta, chi, error))
            warnings.warn(f"ctmrg.sweep: beta = {beta:.6g} failed ({results[-1]['error']}); "
                          "the other points are kept", RuntimeWarning, stacklevel=2)
        if progress is not None:
            progress(i + 1, len(betas))
    return results


__all__ = ["bond_factor", "spin_tensor", "initial_environment", "Structure", "enlarged",
           "move", "projector", "kept_states", "structure_at", "lnz_per_site",
           "magnetization", "bond_correlation", "AccuracyWarning", "Boundary",
           "corner_spectrum", "converge", "environment", "ctmrg_lnz", "unrolled_environment",
           "point", "environment_report", "exact", "failed_point", "sweep", "POINT_FAILURES",
           "TOL", "CLUSTER_GAP", "RESOLUTION", "STALL_MOVES", "SPECTRUM_EPS", "SPLITTER"]

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

The environment is the fixed point of the move, found by :func:`tenpy_ad.fixed_point`,
which also gives its derivative implicitly (not through the iterations).  The move is a
function of the environment only once the eigenvectors' gauge is fixed:

* signs: the first entry of each eigenvector larger than half its largest is positive;
* degenerate eigenvalues: the Ising corner spectrum has (near-)degenerate multiplets
  (free-fermion levels), whose eigenvectors any rotation mixes.  Eigenvalues within
  ``CLUSTER_GAP`` of each other form a cluster, whose basis is fixed by diagonalising the
  enlarged edge ``sum_d h_d Et[:, d, :]`` (``h = SPLITTER``) inside it.

Which eigenvalues are kept, the clusters and the sign rows are the move's *structure*:
read from the values on arrays and eager tensors, given (static) when traced.  At most
``chi`` states are kept, never a state weaker than ``WEIGHT_CUTOFF`` times the strongest
(its weight in the reduced density matrix C^4 is below 1e-32 and its eigenvector is not
determined to double precision), and never part of a cluster.

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
from dataclasses import dataclass
from functools import partial

import numpy as np

import tenpy_ad as tp
from tenpy_ad.errors import ArgumentError, ConvergenceError
from tenpy_ad.models import onsager
from tenpy_ad.models.trg import ising_tensor
from tenpy_ad.models.values import concrete_float, is_traced, values_of

#: consecutive corner eigenvalues closer than this (relatively) form one cluster
CLUSTER_GAP = 0.1
#: states weaker than this fraction of the strongest are never kept
WEIGHT_CUTOFF = 1e-8
#: the bond vector h that splits clusters: their basis diagonalises sum_d h_d Et[:, d, :]
SPLITTER = np.array([1.0, 0.5])
#: default relative tolerance of the environment (CTMRG converges element-wise to ~1e-11)
TOL = 1e-10

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
    """How many of the enlarged corner's eigenvalues ``w`` to keep: at most ``chi``, none
    below ``WEIGHT_CUTOFF`` of the strongest, and never part of a cluster."""
    a = np.sort(np.abs(np.asarray(w)))[::-1]
    k = min(chi, int(np.count_nonzero(a > WEIGHT_CUTOFF * a[0])))
    while 1 < k < len(a) and a[k] >= (1.0 - CLUSTER_GAP) * a[k - 1]:
        k -= 1
    return max(k, 1)


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

@dataclass
class Boundary:
    """A converged environment (arrays) at ``beta`` and what it took to find it."""
    beta: float
    chi: int
    polarized: bool
    env: tuple
    structure: Structure
    iterations: int
    seconds: float

    @property
    def kept(self) -> int:
        return self.structure.kept


def _check(beta, chi) -> None:
    if not isinstance(chi, (int, np.integer)) or chi < 2:
        raise ArgumentError(f"ctmrg: chi must be an integer >= 2, got {chi!r}")
    value = concrete_float(beta)
    if value is not None and not 0 < value < math.inf:
        raise ArgumentError(f"ctmrg: beta must be finite and > 0, got {value}")


def _same_size_move(env, t):
    return move(env, t, env[0].shape[0])


def converge(beta: float, chi: int = 32, polarized: bool | None = None, tol: float = TOL,
             max_iter: int = 10_000) -> Boundary:
    """The environment at ``beta`` by a NumPy pass: grow from the boundary to ``chi``
    states (:func:`kept_states`), then iterate the move to its fixed point.

    ``polarized`` (default: below T_c) starts from spins fixed up, selecting m > 0.
    (No Anderson mixing here: far from the fixed point the gauge's discrete choices
    change between moves, and mixing across them diverges.)  Raises
    :class:`~tenpy_ad.errors.ConvergenceError` if the iteration does not converge.
    """
    _check(beta, chi)
    beta = float(beta)
    polarized = beta > onsager.BETA_C if polarized is None else bool(polarized)
    start = time.perf_counter()
    t = np.asarray(ising_tensor(beta))
    env = initial_environment(beta, polarized)
    keep = partial(kept_states, chi=chi)
    moves = 0
    for _ in range(math.ceil(math.log2(chi)) + 10):        # grow, let the spectrum settle
        env = move(env, t, keep)
        moves += 1
    for _ in range(3):
        stats: dict = {}
        env = tp.fixed_point(_same_size_move, env, t, tol=tol, max_iter=max_iter,
                             stats=stats)
        moves += stats["iterations"]
        w = np.linalg.eigvalsh(np.asarray(enlarged(env, t)[0]))
        if kept_states(w, chi) == env[0].shape[0]:
            break
        env = move(env, t, keep)                             # a cut moved: keep fewer/more
        moves += 1
    return Boundary(beta, chi, polarized, env, structure_at(env, t), moves,
                    time.perf_counter() - start)


def environment(beta, boundary: Boundary, tol: float = TOL, max_iter: int = 10_000,
                solver: str = "gmres", anderson: int = 0, stats: dict | None = None):
    """``(env, T)``: the fixed point of the move at ``beta`` (any mode), started from
    ``boundary`` with its structure, and the bulk tensor.  Derivatives in ``beta`` are
    implicit (:func:`tenpy_ad.fixed_point`).  ``anderson`` mixing is safe here, near the
    boundary's fixed point, where the structure no longer changes."""
    t = ising_tensor(beta)
    step = partial(move, structure=boundary.structure)
    env = tp.fixed_point(step, boundary.env, t, tol=tol, max_iter=max_iter, solver=solver,
                         anderson=anderson, stats=stats)
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
    environment.  ``c`` is NaN where its derivative solve does not converge.  Keys:
    ``beta, chi, kept, lnz, u, m, c, u_local``, the exact ``*_exact`` values, and
    ``iterations`` (forward moves), ``adjoint_iterations`` (GMRES), ``forward_s``,
    ``backward_s`` (first derivative, one compiled program run), ``second_s``.
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
    adjoint_iterations = stats.get("adjoint_iterations")
    c, second_s = None, None
    if second_order:
        program = tp.compile(tp.ad.grad(first, b), inputs=[b])
        start = time.perf_counter()
        try:
            c = beta * beta * float(program(np.float64(beta)))
        except ConvergenceError:
            c = math.nan
        second_s = time.perf_counter() - start
    env = boundary.env
    result = {"beta": beta, "chi": chi, "kept": boundary.kept, "lnz": lnz_value, "u": -dlnz,
              "m": abs(float(magnetization(env, beta))),
              "u_local": -2.0 * float(bond_correlation(env, beta)),
              "iterations": boundary.iterations, "adjoint_iterations": adjoint_iterations,
              "forward_s": boundary.seconds, "backward_s": backward_s}
    if second_order:
        result.update(c=c, second_s=second_s)
    result.update(exact(beta, second_order))
    return result


def exact(beta: float, second_order: bool = True) -> dict:
    """Onsager's lnZ/N, u (and c) and Yang's |m| at ``beta``, as ``*_exact`` keys."""
    values = {"lnz_exact": onsager.lnz(beta), "u_exact": onsager.energy(beta),
              "m_exact": onsager.magnetization(beta)}
    if second_order:
        values["c_exact"] = onsager.specific_heat(beta)
    return values


def sweep(betas, chi: int = 32, second_order: bool = True, executor=None, progress=None,
          **options) -> list:
    """:func:`point` for every beta, in this process or on ``executor`` (any
    ``concurrent.futures.Executor``); ``progress(i, n)`` is called after each point."""
    betas = [float(b) for b in betas]
    if executor is None:
        futures = None
    else:
        futures = [executor.submit(point, beta, chi, second_order, **options)
                   for beta in betas]
    results = []
    for i, beta in enumerate(betas):
        results.append(point(beta, chi, second_order, **options) if futures is None
                       else futures[i].result())
        if progress is not None:
            progress(i + 1, len(betas))
    return results


__all__ = ["bond_factor", "spin_tensor", "initial_environment", "Structure", "enlarged",
           "move", "projector", "kept_states", "structure_at", "lnz_per_site",
           "magnetization", "bond_correlation", "Boundary", "converge", "environment",
           "ctmrg_lnz", "unrolled_environment", "point", "exact", "sweep", "TOL",
           "CLUSTER_GAP", "WEIGHT_CUTOFF", "SPLITTER"]

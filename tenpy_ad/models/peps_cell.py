"""iPEPS with an ``Lx x Ly`` unit cell of general (non-symmetric, real or complex) site
tensors and their directional CTMRG environment (Corboz, Rice & Troyer, PRB 84, 041108
(2011); Corboz et al., PRB 89, 035133 (2014)) -- written once for every mode.  A 1 x 1 cell
is a general single-site state (the C4v code, :mod:`tenpy_ad.models.peps`, is real only).

**Conventions.**  Site ``(x, y)`` is column ``x`` (to the right) and row ``y`` (downwards),
both periodic in the cell; ``tensors[x][y]`` is ``A[s, u, l, d, r]`` (physical, then the
bonds up, left, down, right, as in :mod:`tenpy_ad.models.peps`), so ``A[x][y]``'s ``r``
meets ``A[x+1][y]``'s ``l`` and its ``d`` meets ``A[x][y+1]``'s ``u``.  Every site has its
own environment, eight tensors around it::

    C1 -- T1 -- C2          C1[d, r]   C2[l, d]   C3[u, l]   C4[r, u]
    |     |     |           T1[r, d, l]  T2[d, l, u]  T3[l, u, r]  T4[u, r, d]
    T4 -- a  -- T2
    |     |     |           (each tensor's legs in the cyclic order u, l, d, r, starting
    C4 -- T3 -- C3           where a quarter turn maps C1 -> C4 -> C3 -> C2 -> C1)

Neighbours share the legs between them: ``T1[x][y]``'s ``r`` is ``T1[x+1][y]``'s ``l`` and
``C1[x+1][y]``'s ``r``; ``T4[x][y]``'s ``d`` is ``T4[x][y+1]``'s ``u`` and ``C1[x][y+1]``'s ``d``;
likewise for the other sides.  So a horizontal pair reads its left half from the left
site's tensors and its right half from the right site's, a vertical pair its halves from
the upper and the lower site's.

**The move.**  A left move absorbs column ``x`` into the left boundary of column ``x + 1``,
for every ``x`` in turn.  Each cut of that boundary, between rows ``y`` and ``y + 1``, gets
projectors from the enlarged corners on either side of it, ``Q1`` (upper-left, of site
``(x, y)``) and ``Q4`` (lower-left, of ``(x, y+1)``), the half-infinite variant: ``Q4 Q1 =
U S V^H`` truncated to ``chi`` gives the oblique projector ``Q1 V S^-1/2 . S^-1/2 U^H Q4``
(the identity where the network can see it; adjoints, which a complex cell's complex
double layers need).  (The half-planes ``Q1 Q2``, ``Q3 Q4`` square
the singular values, and rounding then leaves the weak states' vectors undetermined.)
The top, right and bottom moves are the left move of the cell turned by a quarter turn
(:func:`rotated`), so one code path serves all four; a step is the four moves, left,
top, right, bottom.  At a chi that truncates badly the fixed point depends on the cell
and the order of the moves by about the truncation error (a corner is updated by two
moves, which then need not agree).

**The gauge.**  The singular vectors are fixed up to a phase per kept state (a sign, for a
real cell; and a unitary rotation inside a multiplet of equal singular values).  Each
state is pinned to a pivot row of ``U`` -- for a single state its largest-magnitude entry
(under fixed distinct weights, which break the exact ties of the states odd under the
exchange of a double layer's ket and bra), for a multiplet the rows a column-pivoted QR
picks -- and the basis chosen whose entries on those rows are Hermitian positive definite,
``V``'s with it (:func:`_kept_basis`).  The rows are those of the input's bases, so a step
carries each state's sign (phase) over from a state of its input: iterated to
convergence, it lands on the same environment element-wise, or, where the carried signs
run around a cycle of the cell's bonds, on environments that differ by signs on every bond
from step to step.  So, as in the C4v code, the element-wise solve iterates the step
followed by the constant gauge that maps the invariants' solve's last result back onto
its operand (:func:`aligned_step`, :mod:`tenpy_ad.models.peps_cell_gauge`).  A
sign is piecewise constant; a complex phase is a smooth function of the state and is
differentiated with it (so the derivative does not depend on LAPACK's phases: svd's and
eigh's complex gauge check raises on a loss that does).
:func:`environment` first converges the corners' singular values and the edges' Gram
matrices on their bulk legs (no gauge changes them), then the element-wise fixed point, which :func:`tenpy_ad.fixed_point`
differentiates implicitly (memory flat in the steps).  A truncation that splits a
multiplet, or kept states so weak that rounding decides their vectors, leave no exact
element-wise fixed point: that solve then stalls and ``on_stall`` decides (``"accept"``
takes a rounding floor within ``min(1e3 tol, sqrt(tol))``, else raises) -- never a
silently inaccurate derivative.  (The D = 2 Heisenberg optimum at chi = 16 reaches 9e-8.)
Without a derivative to take (arrays), only the first solve runs.

Energies come from the two-site reduced density matrices of every horizontal and vertical
bond of the cell (:func:`horizontal_density_matrix`, :func:`vertical_density_matrix`), and
next-nearest (diagonal) terms from the 2 x 2 plaquette's (:func:`plaquette_density_matrix`:
the four sites' enlarged corners, each from that site's own environment tensors, joined
as two halves, so no ``chi^4`` tensor is built), each site counting the two diagonals of
the plaquette it is the upper-left corner of.  For a complex cell the density matrices
are Hermitian to rounding and the convergence error, and an energy is the real part of
``tr(rho h)``.  Gradients with respect to complex tensors follow the engine's
convention, ``dE/dx + i dE/dy`` (PyTorch's; JAX's is its conjugate); :func:`optimize`
runs over the real and imaginary parts.

**Observables.**  A site's density matrix is the 3 x 3 network of its own environment
around its open double layer (:func:`site_density_matrix`; made exactly Hermitian, unit
trace); :func:`spin_expectations` reads ``<S^x>, <S^y>, <S^z>`` of every site from it and
:func:`magnetization` the local moments ``|<S>|`` and their average -- in the unrotated
frame of a Neel cell the staggered magnetisation, equal on every site of
:func:`neel_cell`'s to :func:`peps.magnetization` of the C4v tensor (measured 1e-15).
These, like the energies, are differentiable in every mode (a moment's derivative is NaN
where the moment vanishes: ``|<S>|`` has none there).  :func:`correlation_lengths` (arrays)
diagonalises the cell's edge transfer matrices (``T1 T3`` along each row of bonds, ``T4
T2`` along each column: the C4v code's ``T T`` for a Neel cell, to 5e-14), or with the
double layers the channel ones (``T1 a T3``), which also see the correlations inside rows
that a product-state boundary hides (decoupled chains: the chains' length, where the
edges give 0).

**Below the C4v optimum.**  Four independent D = 2 tensors go lower than the C4v ansatz
(:data:`peps.HEISENBERG_D2`, -0.6602311; a general 1 x 1 tensor with the rotated bond also
ends there, while a complex one reaches -0.66251 too): 150 L-BFGS iterations from ``random_cell(2, 2, seed=0)`` at chi = 16 reach
-0.6625140 for the Heisenberg model, with every bond within 1e-4 of the others.  That is
the state's energy, not the optimiser exploiting the truncation: re-evaluated at chi =
24 and 32 it moves by 1e-9, from any closure of the starting boundary it is the same, the
quarter-turned, mirrored and 4 x 4-tiled cells agree to 1e-9, its density matrices are
Hermitian, positive and of unit trace, and on infinite cylinders of circumference 4, 6,
8 (contracted exactly) it is -0.668099, -0.663191, -0.662605, converging to it (the C4v
optimum's: -0.664094, -0.660388, -0.660238).  The Neel cell of a C4v tensor (whose gradient
keeps its symmetry, up to the directional environment's rounding) reaches the C4v
optimum first: from ``peps.random_tensor(2, 2, seed=0)``, -0.6602310934 in 80 iterations.
For the cell that is a saddle: rounding breaks the symmetry, and a longer run leaves it
(-0.66193 after 300 iterations, measured).
"""
from __future__ import annotations

import dataclasses
from functools import partial

import numpy as np
import scipy.linalg
from numpy.typing import DTypeLike

import tenpy_ad as tp
from tenpy_ad import dtypes
from tenpy_ad.errors import ArgumentError
from tenpy_ad.models import peps
from tenpy_ad.models.peps_cell_gauge import regauged, relative_gauge
from tenpy_ad.models.values import is_traced, observed_values, values_of
from tenpy_ad.primitive import bind, needs_grad, primitive, shape_of
from tenpy_ad.rules import defrules

#: default tolerance of the environment (relative, element-wise)
TOL = 1e-10
#: singular values below this (relative to the largest) are not inverted in a projector:
#: their states' vectors, which rounding sets to ~eps / s, the projector would scale by
#: s^-1/2 (kept at 1e-9, they left a perturbed Neel cell no element-wise fixed point)
CUTOFF = 1e-8
#: kept singular values closer than this (relative to the largest) form one multiplet
MULTIPLET_GAP = 1e-5
#: transfer matrices up to this dimension are diagonalised densely, larger ones by eigs
DENSE_TRANSFER = 256


# ------------------------------------------------------------------ the cell

def cell_shape(grid) -> tuple:
    """``(Lx, Ly)`` of a grid ``grid[x][y]`` (every column of the same length)."""
    lx, ly = len(grid), len(grid[0])
    if lx < 1 or ly < 1 or any(len(column) != ly for column in grid):
        raise ArgumentError(f"peps_cell: a unit cell is a list of Lx columns of Ly site "
                            f"tensors each; got column lengths {[len(c) for c in grid]}")
    return lx, ly


def random_cell(lx: int, ly: int, d: int = 2, bond: int = 2, seed: int = 0,
                dtype: DTypeLike = float) -> list:
    """Seeded random site tensors ``A[s, u, l, d, r]`` of unit norm, ``cell[x][y]``: real
    Gaussian entries, or for a complex ``dtype`` real and imaginary parts Gaussian."""
    rng = np.random.default_rng(seed)
    shape = (d,) + (bond,) * 4

    def entries():
        if np.dtype(dtype).kind != "c":
            return rng.standard_normal(shape)
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)

    cell = [[entries().astype(dtype) for _ in range(ly)] for _ in range(lx)]
    return [[a / np.linalg.norm(a) for a in column] for column in cell]


def normalized_cell(tensors) -> list:
    """Each site tensor of unit norm (any mode; real or complex)."""
    cell_shape(tensors)
    return [[a / tp.linalg.norm(a) for a in column] for column in tensors]


def double_layers(tensors) -> list:
    """The double layers ``a[x][y]`` (:func:`peps.double_layer`) of the site tensors."""
    return [[peps.double_layer(a) for a in column] for column in tensors]


def neel_cell(a, flip=None) -> list:
    """The 2 x 2 cell of a single-site state ``a`` in the sublattice-rotated frame of
    :func:`peps.heisenberg`: ``a`` on ``(0,0), (1,1)`` and ``flip``-ed (default
    ``exp(-i pi S^y)`` on the physical leg, the real ``[[0, -1], [1, 0]]``) on ``(0,1), (1,0)``
    -- the same state in the unrotated frame."""
    flip = np.array([[0.0, -1.0], [1.0, 0.0]]) if flip is None else flip
    b = tp.einsum("st,tuldr->suldr", flip, a)
    return [[a, b], [b, a]]


# ------------------------------------------------------------------ the environment

def initial_environment(layers, closure=None) -> list:
    """``env[x][y] = (C1, C2, C3, C4, T1, T2, T3, T4)`` of each site's own double layer with
    its outer bonds closed by the vector ``closure`` (default: the fused identity of a
    double-layer bond; for a classical model e.g. a fixed boundary spin's weights)."""
    lx, ly = cell_shape(layers)

    def closed(a):
        v = peps._bond_identity(a.shape[0]) if closure is None else closure
        return (tp.einsum("uldr,u,l->dr", a, v, v), tp.einsum("uldr,u,r->ld", a, v, v),
                tp.einsum("uldr,d,r->ul", a, v, v), tp.einsum("uldr,d,l->ru", a, v, v),
                tp.einsum("uldr,u->rdl", a, v), tp.einsum("uldr,r->dlu", a, v),
                tp.einsum("uldr,d->lur", a, v), tp.einsum("uldr,l->urd", a, v))

    return [[tuple(_unit(t) for t in closed(layers[x][y])) for y in range(ly)]
            for x in range(lx)]


def _unit(t):
    return t / tp.linalg.norm(t)


def rotated(layers, env) -> tuple:
    """The cell and its environment turned a quarter turn counter-clockwise (up becomes
    left): site ``(x, y)`` goes to ``(y, -x)``, a site tensor's legs ``(u, l, d, r)`` become
    ``(r, u, l, d)``, and ``C2, C3, C4, C1`` (``T2, T3, T4, T1``) take the places of
    ``C1, C2, C3, C4`` (``T1, ...``) unchanged, by the cyclic leg order."""
    lx, ly = cell_shape(layers)
    new_layers = [[tp.transpose(layers[(-yn) % lx][xn], (3, 0, 1, 2)) for yn in range(lx)]
                  for xn in range(ly)]
    return new_layers, None if env is None else _rotated_environment(env)


def _rotated_environment(env) -> list:
    """The environment alone turned as in :func:`rotated`."""
    lx, ly = cell_shape(env)
    return [[_turned(env[(-yn) % lx][xn]) for yn in range(lx)] for xn in range(ly)]


def _turned(site: tuple) -> tuple:
    c1, c2, c3, c4, t1, t2, t3, t4 = site
    return (c2, c3, c4, c1, t2, t3, t4, t1)


def enlarged_corners(layers, env, x: int, y: int) -> tuple:
    """The two enlarged corners on either side of the cut between rows ``y``, ``y + 1`` of
    the left boundary of column ``x + 1``, as matrices: ``Q1`` (bottom x right) of site
    ``(x, y)`` and ``Q4`` (right x top) of ``(x, y+1)``; each leg pair is (boundary, bulk)."""
    _, ly = cell_shape(layers)
    yd = (y + 1) % ly
    c1, _, _, _, t1, _, _, t4 = env[x][y]
    q1 = tp.einsum("pq,rsq,ptw,stdv->wdrv", c1, t1, t4, layers[x][y])
    _, _, _, c4, _, _, t3, t4 = env[x][yd]
    q4 = tp.einsum("qsr,qp,wtp,btsa->rawb", t3, c4, t4, layers[x][yd])
    return _as_matrix(q1), _as_matrix(q4)


def _as_matrix(q):
    k, d2, m, e2 = q.shape
    return q.reshape(k * d2, m * e2)


def projectors(x, y, chi: int) -> tuple:
    """``(upper, lower, s)``: the projectors of a cut between the matrices ``x`` (cut x
    rest, above it) and ``y`` (rest x cut, below it), ``upper`` (k x cut) applied to the legs
    above the cut and ``lower`` (cut x k) to those below: with ``y x = U S V^H`` truncated to
    the ``chi`` largest, ``lower upper = x V S^-1 U^H y``, the oblique projector onto what
    the network sees through the cut (``upper lower`` is the identity).  Also the kept
    singular values ``s`` (of unit largest).  The new bond's basis is a function of the
    input alone (:func:`_kept_basis`); singular values under ``CUTOFF`` are not inverted
    (their states are dropped).  Real or complex input."""
    x, y = x / tp.linalg.norm(x), y / tp.linalg.norm(y)      # (the projector is scale-free)
    u, s, vh = tp.linalg.svd(y @ x, full_matrices=False)
    k = min(chi, s.shape[0])
    u, s, vh = u[:, :k], s[:k], vh[:k]
    large = s > CUTOFF * s[0]
    inv = tp.stop_gradient(tp.where(large, 1.0, 0.0)) / tp.sqrt(tp.where(large, s, 1.0))
    r = _kept_basis(u, s)
    # adjoints, not transposes: upper lower = R^H S^-1/2 U^H (y x) V S^-1/2 R = 1
    lower = (x @ _adjoint(vh)) @ (inv[:, None] * r)
    upper = (_adjoint(r) * inv[None, :]) @ (_adjoint(u) @ y)
    return upper, lower, s / s[0]


def _adjoint(m):
    return tp.conj(m).T


def _is_complex(x) -> bool:
    return np.dtype(x.dtype).kind == "c"


def _kept_basis(u, s):
    """The unitary ``r`` (k x k; orthogonal for real ``u``) that makes the kept states
    ``u r`` a function of the subspaces alone: inside each multiplet of singular values
    (within ``MULTIPLET_GAP`` of the largest, found at run time), whose vectors rounding
    determines only to ``eps / gap``, the basis whose entries on the multiplet's pivot
    rows (:func:`pivot_rows`) form a Hermitian positive definite matrix -- the polar
    factor of those rows.  For a single state that is the phase (sign, if real) that
    makes its weighted-largest entry real and positive.  No operator can do it inside a
    multiplet that a symmetry of the whole environment protects (a real environment that
    represents a complex one pairs every state): each state is pinned to a row of the
    input's basis instead, which a step carries over unchanged, where a rule that rotated
    by an operator's eigenbasis turned the pair by a new angle at every step.  The polar
    factor (from the SVD of the block-diagonal pivot rows) is differentiated exactly also
    at equal singular values, and for complex states it is a smooth function of them, as
    it must be for the derivative not to depend on LAPACK's phases."""
    block, same = peps.multiplet_blocks(s, MULTIPLET_GAP)
    pivots = pivot_rows(tp.stop_gradient(u), block)          # (k, n), one-hot rows
    x, _, yh = tp.linalg.svd(_adjoint((pivots @ u) * same))
    return x @ yh


def pivot_rows(u, block):
    """The one-hot ``(k, n)`` selection of each kept state's pivot row (any mode;
    piecewise constant, so without a derivative): inside each multiplet (``block``, as
    :func:`peps.multiplet_blocks` numbers them), the rows that a column-pivoted QR of the
    multiplet's rows picks, in its order -- for a single state its largest-magnitude
    entry -- under fixed distinct weights in 1..1.5 (:func:`_tie_breaker`), which break
    the exact ties of a state odd under the exchange of a double layer's ket and bra
    (entries of equal magnitude at (i, j) and (j, i))."""
    return bind(_pivot_rows_p, None, u, block)


def _pivot_rows(params, u, block):
    n, k = u.shape
    weighted = np.abs(u) * _tie_breaker(n)[:, None]
    rows = np.argmax(weighted, axis=0)                       # single states
    starts = np.flatnonzero(np.r_[True, np.diff(block) != 0, True])
    for lo, hi in zip(starts[:-1], starts[1:]):
        if hi - lo > 1:                                      # a multiplet
            rows[lo:hi] = scipy.linalg.qr(u[:, lo:hi].conj().T * _tie_breaker(n),
                                          mode="r", pivoting=True)[1][:hi - lo]
    selection = np.zeros((k, n))
    selection[np.arange(k), rows] = 1.0
    return selection


def _pivot_rows_rule(params, u, block):
    n, k = shape_of(u)
    return dtypes.FLOAT64, (k, n)


_pivot_rows_p = primitive("ipeps_cell_pivot_rows", _pivot_rows, _pivot_rows_rule)
# piecewise constant: no tangent, no cotangent
defrules(_pivot_rows_p, lambda params, tangents, out, xs: None,
         lambda params, cts, out, xs, active: (None, None))


def _tie_breaker(n: int) -> np.ndarray:
    """Distinct weights in [1, 1.5), one per entry of a state."""
    return 1.0 + 0.5 * ((np.arange(n) * 0.6180339887) % 1.0)


def left_move(layers, env, chi: int) -> list:
    """Columns ``0 .. Lx-1`` in turn absorbed into the left boundary (C1, T4, C4) of the
    next column (module docstring); returns the new environment."""
    lx, ly = cell_shape(layers)
    env = [list(column) for column in env]
    for x in range(lx):
        cuts = [projectors(*enlarged_corners(layers, env, x, y), chi) for y in range(ly)]
        xr = (x + 1) % lx
        column = []
        for y in range(ly):
            above, below = cuts[(y - 1) % ly], cuts[y]        # the cuts over and under row y
            c1, _, _, c4, t1, _, t3, t4 = env[x][y]
            c1t1 = tp.einsum("dq,req->der", c1, t1)
            c1_new = above[0] @ c1t1.reshape(-1, c1t1.shape[2])
            t4a = tp.einsum("utw,btcr->ubrwc", t4, layers[x][y])
            ku, au, r, kd, ad = t4a.shape
            t4_new = tp.einsum("ak,arb,jb->krj", above[1], t4a.reshape(ku * au, r, kd * ad),
                               below[0])
            c4t3 = tp.einsum("qp,qvn->npv", c4, t3)
            c4_new = c4t3.reshape(c4t3.shape[0], -1) @ below[1]
            column.append((c1_new, t4_new, c4_new))
        for y, (c1_new, t4_new, c4_new) in enumerate(column):
            c1, c2, c3, c4, t1, t2, t3, t4 = env[xr][y]
            env[xr][y] = (_unit(c1_new), c2, c3, _unit(c4_new), t1, t2, t3, _unit(t4_new))
    return [tuple(column) for column in env]


def step(env, layers, chi: int) -> list:
    """One CTMRG step: the left, top, right and bottom moves (each the left move of the
    cell turned by a quarter turn more), back in the cell's own orientation."""
    turned_layers = layers
    for _ in range(4):
        env = left_move(turned_layers, env, chi)
        turned_layers, env = rotated(turned_layers, env)
    return [tuple(tuple(site) for site in column) for column in env]


def corner_spectra(env) -> list:
    """The singular values of every corner, of unit largest (gauge invariant; any mode)."""
    spectra = []
    for column in env:
        for site in column:
            for c in site[:4]:
                s = tp.linalg.svdvals(c)
                spectra.append(s / s[0])
    return spectra


def invariants(env) -> list:
    """What no unitary (for a real cell, orthogonal) change of the boundary bases alters,
    monitored for convergence: every corner's singular values and every edge's Hermitian
    Gram matrix on its bulk leg (unit trace).  The spectra alone are not enough: with
    rank-one boundary bonds (decoupled rows) they are converged from the start while the
    edges are not."""
    grams = []
    for column in env:
        for site in column:
            for t in site[4:]:
                g = tp.einsum("amb,anb->mn", t, tp.conj(t))
                grams.append(g / tp.trace(g))
    return corner_spectra(env) + grams


def grown_environment(layers, chi: int, moves: int = 4, closure=None) -> list:
    """An environment (arrays) to start the fixed point from: the closed boundary grown by
    steps to ``chi`` (or as far as the bonds allow), then ``moves`` more."""
    layers = [[np.asarray(values_of(a)) for a in column] for column in layers]
    env = initial_environment(layers, closure)
    size = 0
    while env[0][0][0].shape[0] < chi and env[0][0][0].shape[0] != size:
        size = env[0][0][0].shape[0]
        env = step(env, layers, chi)
    for _ in range(moves):
        env = step(env, layers, chi)
    return env


def environment(layers, chi: int, env0, tol: float = TOL, max_iter: int = 2000,
                on_stall: str = "accept", implicit: bool | None = None,
                stats: dict | None = None) -> list:
    """The converged environment of the double layers ``layers[x][y]`` (any mode), started
    from ``env0`` (arrays, e.g. :func:`grown_environment`), differentiable in ``layers``.

    Two solves: the steps until the :func:`invariants` converge (values only: the
    gauge-invariant observables are converged there), then -- when a derivative can be
    asked for (``implicit``; by default when a layer is traced or an eager tensor that
    requires grad) -- the step followed by the constant gauge that maps the last step's
    result onto its operand (:func:`aligned_step`) to its element-wise fixed point, which
    :func:`tenpy_ad.fixed_point` differentiates implicitly (with ``implicit=False`` a
    derivative is that of the first solve, which raises ConvergenceError where its
    iterate is no element-wise fixed point, as when the steps flip signs).  A truncation that
    splits a multiplet leaves no element-wise fixed point: that solve then raises
    ConvergenceError (``on_stall``) rather than return a wrong derivative.  ``stats``
    receives the last solve's ``iterations``, ``residual``, ... and the first's as
    ``spectrum_iterations``, ``spectrum_residual``, ....  A real ``env0`` of a complex cell
    is taken as complex."""
    if implicit is None:
        implicit = any(is_traced(a) or needs_grad(a) for column in layers for a in column)
    # implicit=False differentiated: the spectrum solve's own implicit derivative, which
    # refuses an iterate that is no element-wise fixed point (never a zero derivative)
    fixed = [[tp.stop_gradient(a) for a in column] for column in layers] if implicit \
        else layers
    # the first solve's stats as spectrum_..., and as they are when it is the only one
    first = None if stats is None else \
        peps._Prefixed(stats, "spectrum_", *(() if implicit else ("",)))
    start = _start(env0, layers)
    before, env = tp.fixed_point(partial(_stepped_pair, chi=chi), (start, start), fixed,
                                 tol=tol, max_iter=max_iter, monitor=_latest_invariants,
                                 on_stall=on_stall, stats=first)
    if implicit:
        before, rough = (_as_tree([tuple(tp.stop_gradient(t) for t in site)
                                   for site in _flat(e)], len(layers)) for e in (before, env))
        gauge = [tp.stop_gradient(z) for z in relative_gauge(rough, before)]
        # aligned_step(before) = rough in this gauge, and its fixed point is near both
        env = tp.fixed_point(partial(aligned_step, chi=chi), regauged(rough, gauge), layers,
                             gauge, tol=tol, max_iter=max_iter, on_stall=on_stall,
                             stats=stats)
    return [list(column) for column in env]


def aligned_step(env, layers, gauge: list, chi: int) -> list:
    """:func:`step` followed by the constant change of gauge ``gauge`` (one factor per
    bond, :func:`peps_cell_gauge.relative_gauge`): at the converged environment it maps the
    environment to itself element-wise -- the map whose fixed point is differentiated."""
    return regauged(step(env, layers, chi), gauge)


def _stepped_pair(pair, layers, chi: int) -> tuple:
    """``(x, y) -> (y, step(y))``: the invariants' solve keeps the last step's operand, so
    that the gauge is read off its last step (no step more)."""
    return pair[1], step(pair[1], layers, chi)


def _latest_invariants(pair) -> list:
    return invariants(pair[1])


def _start(env0, layers) -> list:
    """``env0`` as the fixed point's start: in the layers' dtype (a complex cell may be
    warm-started from a real cell's environment; the steps' dtype is the layers')."""
    kinds = [np.dtype(a.dtype) for column in layers for a in column if _is_complex(a)]
    if kinds:
        env0 = [[tuple(t if _is_complex(t) else tp.astype(t, np.result_type(t.dtype, *kinds))
                       for t in site) for site in column] for column in env0]
    return _as_tree(env0)


def _flat(env) -> list:
    return [site for column in env for site in column]


def _as_tree(env, lx: int | None = None) -> list:
    """The environment as a list of columns of tuples (the structure ``step`` returns)."""
    if lx is None:
        return [tuple(tuple(site) for site in column) for column in env]
    ly = len(env) // lx
    return [tuple(tuple(env[x * ly + y]) for y in range(ly)) for x in range(lx)]


# ------------------------------------------------------------------ observables

def _left_half(site):
    """``C1 T1 T4 C4 T3`` of a site's environment, the left of a row's pair:
    [T1's r, a's u, a's l, a's d, T3's r]."""
    c1, _, _, c4, t1, _, t3, t4 = site
    return tp.einsum("pq,rsq,ptw,mw,mvn->rstvn", c1, t1, t4, c4, t3)


def _right_half(site):
    """``T1 C2 T2 C3 T3`` of a site's environment, the right of a row's pair:
    [T1's l, a's u, a's r, a's d, T3's l]."""
    _, c2, c3, _, t1, t2, t3, _ = site
    return tp.einsum("qsr,qp,wtp,wm,nvm->rstvn", t1, c2, t2, c3, t3)


def _upper_rows(site):
    """``C1 T1 C2 T4 T2`` of a site's environment, the top of a column's pair or of the
    3 x 3 network: [T4's d, a's u, a's l, a's r, T2's d]."""
    c1, c2, _, _, t1, t2, _, t4 = site
    return tp.einsum("pq,rsq,rm,ptn,wum->nstuw", c1, t1, c2, t4, t2)


def horizontal_density_matrix(env, opened, x: int, y: int):
    """``rho[s1, t1, s2, t2]`` (ket ``s``, bra ``t``; unit trace) of sites ``(x, y)`` and
    ``(x+1, y)``, from the open double layers ``opened[x][y]`` (:func:`peps.open_double_layer`)."""
    lx, _ = cell_shape(opened)
    xr = (x + 1) % lx
    left = tp.einsum("rstvn,iIstva->iIran", _left_half(env[x][y]), opened[x][y])
    right = tp.einsum("rstvn,jJsavt->jJran", _right_half(env[xr][y]), opened[xr][y])
    rho = tp.einsum("iIran,jJran->iIjJ", left, right)
    return rho / tp.einsum("iijj->", rho)


def vertical_density_matrix(env, opened, x: int, y: int):
    """``rho[s1, t1, s2, t2]`` of sites ``(x, y)`` (first) and ``(x, y+1)``."""
    _, ly = cell_shape(opened)
    yd = (y + 1) % ly
    top = tp.einsum("nstuw,iIstdu->iIndw", _upper_rows(env[x][y]), opened[x][y])
    _, _, c3, c4, _, t2, t3, t4 = env[x][yd]
    bottom = tp.einsum("ntp,qp,qsr,mr,muw->ntsuw", t4, c4, t3, c3, t2)
    bottom = tp.einsum("ntsuw,jJdtsu->jJndw", bottom, opened[x][yd])
    rho = tp.einsum("iIndw,jJndw->iIjJ", top, bottom)
    return rho / tp.einsum("iijj->", rho)


def bond_energies(tensors, env, h_bond) -> tuple:
    """``(horizontal, vertical)``: ``<h>`` on the bond right of and below each site, as
    lists of columns (normalised ``tensors``); real (:func:`peps.bond_energy`)."""
    opened = [[peps.open_double_layer(a) for a in column] for column in tensors]
    lx, ly = cell_shape(tensors)
    horizontal = [[peps.bond_energy(horizontal_density_matrix(env, opened, x, y), h_bond)
                   for y in range(ly)] for x in range(lx)]
    vertical = [[peps.bond_energy(vertical_density_matrix(env, opened, x, y), h_bond)
                 for y in range(ly)] for x in range(lx)]
    return horizontal, vertical


def energy_per_site(tensors, env, h_bond, h_diagonal=None):
    """The energy per site of the normalised cell in its environment: the cell's bonds
    (two per site) summed over its sites, and with ``h_diagonal`` (a two-site operator
    like ``h_bond``) the two diagonals of each site's plaquette (:func:`diagonal_energies`;
    two next-nearest bonds per site)."""
    horizontal, vertical = bond_energies(tensors, env, h_bond)
    columns = horizontal + vertical
    if h_diagonal is not None:
        diagonal, anti = diagonal_energies(tensors, env, h_diagonal)
        columns = columns + diagonal + anti
    return _cell_mean(columns, cell_shape(tensors))


def cell_energy(tensors, chi: int, h_bond, env0=None, tol: float = TOL,
                max_iter: int = 2000, on_stall: str = "accept", implicit: bool | None = None,
                stats: dict | None = None, h_diagonal=None):
    """``(E, env)``: the energy per site of the iPEPS of the cell ``tensors[x][y]`` (each
    normalised here) for the two-site operator ``h_bond[s1, s2, s1', s2']`` on every
    horizontal and vertical bond (and ``h_diagonal``, if given, on every diagonal and
    anti-diagonal: :func:`energy_per_site`), at environment dimension ``chi``, and the
    converged environment; differentiable (implicitly, through :func:`environment`).  ``env0``
    (arrays) warm-starts the environment; traced, it is required."""
    cell = normalized_cell(tensors)
    layers = double_layers(cell)
    if env0 is None:
        if any(is_traced(a) for column in tensors for a in column):
            raise ArgumentError("peps_cell.cell_energy: a traced cell needs env0 (e.g. "
                                "grown_environment(double_layers(cell), chi))")
        env0 = grown_environment(layers, chi)
    env = environment(layers, chi, env0, tol=tol, max_iter=max_iter, on_stall=on_stall,
                      implicit=implicit, stats=stats)
    return energy_per_site(cell, env, h_bond, h_diagonal), env


def site_value(env, center, x: int, y: int):
    """The 3 x 3 network of site ``(x, y)``'s environment around ``center[u, l, d, r]`` (its
    double layer, or an impurity: ``<O> = site_value(impurity) / site_value(a)``)."""
    _, _, c3, c4, _, _, t3, _ = env[x][y]
    rows = tp.einsum("nstuw,stdu->ndw", _upper_rows(env[x][y]), center)
    return tp.einsum("ndw,qn,qdr,wr->", rows, c4, t3, c3)


def horizontal_value(env, left, right, x: int, y: int):
    """The 3 x 4 network of the pair ``(x, y), (x+1, y)`` around ``left`` and ``right``
    (``[u, l, d, r]`` each)."""
    lx, _ = cell_shape(env)
    xr = (x + 1) % lx
    half = tp.einsum("rstvn,stva->ran", _left_half(env[x][y]), left)
    other = tp.einsum("rstvn,savt->ran", _right_half(env[xr][y]), right)
    return tp.einsum("ran,ran->", half, other)


def site_density_matrix(env, opened, x: int, y: int):
    """``rho[s, t]`` (ket ``s``, bra ``t``) of site ``(x, y)``: the 3 x 3 network of its
    environment around the open double layer ``opened[x][y]`` (:func:`peps.open_double_layer`),
    of unit trace and made exactly Hermitian (a complex cell's is so to rounding and the
    convergence error; the Hermitian part is what ``tr(rho O)`` of a Hermitian ``O`` reads)."""
    _, _, c3, c4, _, _, t3, _ = env[x][y]
    top = tp.einsum("nstuw,iIstdu->iIndw", _upper_rows(env[x][y]), opened[x][y])
    rho = tp.einsum("iIndw,qn,qdr,wr->iI", top, c4, t3, c3)
    rho = (rho + _adjoint(rho)) * 0.5
    return rho / tp.real(tp.trace(rho))


def spin_expectations(tensors, env) -> tuple:
    """``(Sx, Sy, Sz)``: the spin-1/2 ``<S^a>`` (real numbers, any mode) on every site of the
    cell ``tensors[x][y]`` in its environment, each as a list of columns.  ``<S^y>``, zero
    for a real cell, is read as ``Im tr(rho iS^y)`` with the real ``iS^y`` (no complex
    constant in a real cell's graph)."""
    lx, ly = cell_shape(tensors)
    opened = [[peps.open_double_layer(a) for a in column] for column in tensors]
    rhos = [[site_density_matrix(env, opened, x, y) for y in range(ly)] for x in range(lx)]

    def read(part, operator):
        return [[part(tp.einsum("iI,Ii->", rho, operator)) for rho in column]
                for column in rhos]

    return read(tp.real, peps._SX), read(tp.imag, peps._ISY), read(tp.real, peps._SZ)


def magnetization(tensors, env) -> tuple:
    """``(moments, average)``: the local moment ``|<S>|`` of every site (a list of columns)
    and its average over the cell (any mode; at a vanishing moment ``|<S>|`` has no
    derivative, and the gradient there is NaN, not a made-up value).

    In the unrotated frame of a Neel-ordered cell (e.g. the 2 x 2 :func:`neel_cell`) the
    average is the staggered magnetisation: it is :func:`peps.magnetization` of the C4v
    tensor, whose sublattice-rotated frame turns the staggered moment into a uniform one
    (``|<S>|`` is the same in either frame).  For a non-collinear or non-uniform state it is
    the mean local moment, not the length of the mean staggered vector -- form that from
    :func:`spin_expectations` if needed."""
    sx, sy, sz = spin_expectations(tensors, env)
    moments = [[tp.sqrt(a * a + b * b + c * c) for a, b, c in zip(*columns)]
               for columns in zip(sx, sy, sz)]
    return moments, _cell_mean(moments, cell_shape(tensors))


def _cell_mean(columns, shape: tuple):
    """The sum of the values in ``columns`` (lists of per-site values) over the cell's
    ``Lx * Ly`` sites (any mode)."""
    total = None
    for column in columns:
        for value in column:
            total = value if total is None else total + value
    return total / (shape[0] * shape[1])


def correlation_lengths(env, layers=None) -> tuple:
    """``(horizontal, vertical)``: the correlation lengths in sites (arrays, floats) from the
    transfer matrices of the cell's boundary, largest over the cell's cuts.

    Horizontal: for the cut between rows ``y`` and ``y + 1``, the product over the row's
    ``Lx`` columns of the edge transfer matrices ``sum_m T1[x][y+1][r, m, l] T3[x][y][l', m,
    r']`` (the upper and the lower edge on the same bonds; ``chi^2`` per column), and
    ``xi = -Lx / ln|lambda_2 / lambda_1|``; vertical: the same from ``T2[x][y]`` and
    ``T4[x+1][y]`` along a column (the cell turned a quarter, :func:`rotated`).  With the
    double layers ``layers`` given, the channel transfer matrices ``T1 a T3`` of each row
    (``T4 a T2`` of each column; ``chi^2 D^2``) instead: the edges alone see correlations
    only through the boundary's bonds, so for rows decoupled by rank-one vertical bonds
    (a product-state boundary) they give 0 where the channel gives the chains' length.
    Zero for a rank-one transfer matrix, inf for a degenerate leading eigenvalue (as
    :func:`peps.correlation_length`, which a C4v state's edges reproduce)."""
    read = partial(observed_values, what="peps_cell.correlation_lengths")
    env = [[[np.asarray(read(t)) for t in site] for site in column] for column in env]
    if layers is not None:
        layers = [[np.asarray(read(a)) for a in column] for column in layers]
    turned = None if layers is None else rotated(layers, None)[0]
    return (_correlation_along_rows(env, layers),
            _correlation_along_rows(_rotated_environment(env), turned))


def _correlation_along_rows(env, layers) -> float:
    """The largest correlation length along x over the cuts (edges) or rows (``layers``)."""
    lx, ly = cell_shape(env)
    lengths = []
    for y in range(ly):
        if layers is None:
            factors = [_edge_column(env[x][(y + 1) % ly][4], env[x][y][6]) for x in range(lx)]
        else:
            factors = [_channel_column(env[x][y][4], layers[x][y], env[x][y][6])
                       for x in range(lx)]
        lengths.append(peps._length_of_ratio(_leading_ratio(factors), lx))
    return max(lengths)


def _edge_column(t1, t3) -> tuple:
    """``(shape, map)``: ``v[k, l, l'] -> w[k, r, r']`` (``k`` a batch) of one column's upper
    edge ``T1[r, m, l]`` and lower edge ``T3[l', m, r']`` (their bulk legs on the same bond),
    and the shape of ``v``'s legs."""
    def apply(v):
        w = np.tensordot(v, t1, axes=([1], [2]))                       # k, l', r, m
        return np.tensordot(w, t3, axes=([1, 3], [0, 1]))              # k, r, r'
    return (t1.shape[2], t3.shape[0]), apply


def _channel_column(t1, a, t3) -> tuple:
    """``(shape, map)``: ``v[k, l, la, l'] -> w[k, r, ra, r']`` through ``T1[r, u, l]``,
    ``a[u, la, d, ra]`` and ``T3[l', d, r']`` (pairwise, so that BLAS does the work)."""
    def apply(v):
        w = np.tensordot(v, t1, axes=([1], [2]))                       # k, la, l', r, u
        w = np.tensordot(w, a, axes=([4, 1], [0, 1]))                  # k, l', r, d, ra
        return np.tensordot(w, t3, axes=([1, 3], [0, 1]))              # k, r, ra, r'
    return (t1.shape[2], a.shape[1], t3.shape[0]), apply


def _leading_ratio(factors) -> float:
    """``|lambda_2 / lambda_1|`` of the product of the column maps ``factors`` (each
    ``(shape, map)``, applied in turn): dense up to ``DENSE_TRANSFER``, else scipy's ``eigs``
    on a LinearOperator (two values; the product is never formed as a matrix)."""
    from scipy.sparse.linalg import LinearOperator, eigs
    shape = factors[0][0]
    n = int(np.prod(shape))

    def apply(v):
        v = v.reshape((-1,) + shape)
        for _, factor in factors:
            v = factor(v)
        return v.reshape(v.shape[0], n)

    if n <= DENSE_TRANSFER:
        values = np.linalg.eigvals(apply(np.eye(n)).T)
    else:
        dtype = apply(np.ones(n)).dtype
        values = eigs(LinearOperator((n, n), matvec=lambda v: apply(v)[0], dtype=dtype), k=2,
                      which="LM", return_eigenvectors=False, tol=1e-12)
    values = np.sort(np.abs(values))[::-1]
    return values[1] / values[0] if values[0] > 0.0 else 0.0


# ------------------------------------------------------------------ next-nearest neighbours

def plaquette_density_matrix(env, opened, x: int, y: int):
    """``rho[s1, t1, s2, t2, s3, t3, s4, t4]`` (ket ``s``, bra ``t``; unit trace) of the 2 x 2
    plaquette whose upper-left site is ``(x, y)``: sites 1 = ``(x, y)``, 2 = ``(x+1, y)``,
    3 = ``(x, y+1)``, 4 = ``(x+1, y+1)``, from the open double layers ``opened[x][y]``.

    Each site contributes its own enlarged corner (module docstring: the legs between
    neighbours are shared): the upper-left site ``C1, T1, T4``, the upper-right ``C2, T1,
    T2``, the lower-right ``C3, T2, T3``, the lower-left ``C4, T3, T4``.  The two upper
    corners make the top half, the two lower ones the bottom half, then the halves meet:
    the largest intermediate is a half, ``chi^2 D^4 d^4``, made in ``chi^3 D^6 d^4``
    operations (a corner takes ``chi^2 D^8 d^2``, the meeting ``chi^2 D^4 d^8``)."""
    lx, ly = cell_shape(opened)
    xr, yd = (x + 1) % lx, (y + 1) % ly
    # each corner as [ket, bra, boundary and bulk leg to its horizontal neighbour, the
    # same to its vertical neighbour]
    upper_left = _corner_upper_left(env[x][y], opened[x][y])
    upper_right = _corner_upper_right(env[xr][y], opened[xr][y])
    lower_right = _corner_lower_right(env[xr][yd], opened[xr][yd])
    lower_left = _corner_lower_left(env[x][yd], opened[x][yd])
    top = tp.einsum("iIrawv,jJraWV->iIjJwvWV", upper_left, upper_right)
    bottom = tp.einsum("lLohwv,kKohWV->lLkKwvWV", lower_left, lower_right)
    rho = tp.einsum("iIjJwvWV,lLkKwvWV->iIjJlLkK", top, bottom)
    return rho / tp.einsum("iijjllkk->", rho)


def _corner_upper_left(site, layer):
    """``C1 T1 T4`` and the open layer: [s, t, T1's r, a's r, T4's d, a's d]."""
    c1, _, _, _, t1, _, _, t4 = site
    edges = tp.einsum("rsq,pq->rsp", t1, c1)
    edges = tp.einsum("rsp,ptw->rstw", edges, t4)
    return tp.einsum("rstw,iIstva->iIrawv", edges, layer)


def _corner_upper_right(site, layer):
    """``C2 T1 T2`` and the open layer: [s, t, T1's l, a's l, T2's d, a's d]."""
    _, c2, _, _, t1, t2, _, _ = site
    edges = tp.einsum("qsr,qp->rsp", t1, c2)
    edges = tp.einsum("rsp,wtp->rswt", edges, t2)
    return tp.einsum("rswt,jJscvt->jJrcwv", edges, layer)


def _corner_lower_right(site, layer):
    """``C3 T2 T3`` and the open layer: [s, t, T3's l, a's l, T2's u, a's u]."""
    _, _, c3, _, _, t2, t3, _ = site
    edges = tp.einsum("mtw,mn->wtn", t2, c3)
    edges = tp.einsum("wtn,ovn->wtov", edges, t3)
    return tp.einsum("wtov,kKghvt->kKohwg", edges, layer)


def _corner_lower_left(site, layer):
    """``C4 T3 T4`` and the open layer: [s, t, T3's r, a's r, T4's u, a's u]."""
    _, _, _, c4, _, _, t3, t4 = site
    edges = tp.einsum("mvo,mn->ovn", t3, c4)
    edges = tp.einsum("ovn,wtn->ovwt", edges, t4)
    return tp.einsum("ovwt,lLgtvh->lLohwg", edges, layer)


def diagonal_density_matrices(env, opened, x: int, y: int) -> tuple:
    """``(diagonal, anti)``: ``rho[s1, t1, s2, t2]`` of the diagonal ``(x, y), (x+1, y+1)``
    and of the anti-diagonal ``(x+1, y), (x, y+1)`` (in that order) of the plaquette whose
    upper-left site is ``(x, y)`` (:func:`plaquette_density_matrix`)."""
    rho = plaquette_density_matrix(env, opened, x, y)
    return tp.einsum("iIjjllkK->iIkK", rho), tp.einsum("iijJlLkk->jJlL", rho)


def diagonal_energies(tensors, env, h_diagonal) -> tuple:
    """``(diagonal, anti)``: ``<h_diagonal>`` on the two diagonals of the plaquette whose
    upper-left site is each site (:func:`diagonal_density_matrices`), as lists of columns
    (normalised ``tensors``)."""
    opened = [[peps.open_double_layer(a) for a in column] for column in tensors]
    lx, ly = cell_shape(tensors)
    pairs = [[diagonal_density_matrices(env, opened, x, y) for y in range(ly)]
             for x in range(lx)]
    return tuple([[peps.bond_energy(pair[k], h_diagonal) for pair in column]
                  for column in pairs] for k in range(2))


# ------------------------------------------------------------------ the variational state

def objective(chi: int, h_bond, tol: float = TOL, max_iter: int = 2000, h_diagonal=None):
    """``fun(tensors, env) -> (E, env)``: the energy per site of the cell (with the
    next-nearest ``h_diagonal`` if given) and its converged environment, warm-started from
    ``env`` -- the objective of :func:`tenpy_ad.optimize.minimize` with the environment as
    its carry."""
    def energy_and_environment(tensors, env):
        return cell_energy(tensors, chi, h_bond, env0=env, tol=tol, max_iter=max_iter,
                           implicit=True, h_diagonal=h_diagonal)
    return energy_and_environment


def optimize(h_bond, lx: int = 2, ly: int = 2, bond: int = 2, chi: int = 16, tensors=None,
             seed: int = 0, tol: float = TOL, h_diagonal=None, max_iter: int = 2000,
             dtype: DTypeLike = float, **options):
    """Minimise the energy per site of the ``lx x ly`` cell of bond dimension ``bond`` for
    the two-site ``h_bond`` (and the next-nearest ``h_diagonal``, e.g. :func:`peps.j1j2`'s)
    at environment dimension ``chi``, from ``tensors`` (e.g. :func:`neel_cell`) or seeded
    random ones of ``dtype``, by :func:`tenpy_ad.optimize.minimize` (compiled; ``options``
    are its own); ``tol`` and ``max_iter`` are the environment's (:func:`environment`).
    Returns its result: ``x`` the cell, ``fun`` the energy, ``carry`` the environment.

    The start matters beyond speed: the Neel cell of a C4v tensor first reaches the C4v
    optimum (:data:`peps.HEISENBERG_D2` for D = 2; its gradient keeps the symmetry up to
    rounding), a random 2 x 2 cell of D = 2 goes below it (module docstring).

    A complex cell (any complex tensor) is optimised over the real and imaginary parts of
    its entries, since ``minimize`` takes real parameters: its L-BFGS then runs in the
    real space of twice the dimension (the gradient of a part is that part of the
    engine's complex gradient ``dE/dx + i dE/dy``); ``x`` is the complex cell again."""
    if tensors is None:
        tensors = random_cell(lx, ly, h_bond.shape[0], bond, seed, dtype)
    tensors = [[np.asarray(values_of(a)) for a in column] for column in tensors]
    env = grown_environment(double_layers(normalized_cell(tensors)), chi)
    env = _as_tree(environment(double_layers(normalized_cell(tensors)), chi, env, tol=tol,
                               max_iter=max_iter))
    fun = objective(chi, h_bond, tol, max_iter, h_diagonal)
    if not any(_is_complex(a) for column in tensors for a in column):
        return tp.optimize.minimize(fun, tensors, carry=env, **options)
    parts = [[(a.real.copy(), a.imag.copy()) for a in column] for column in tensors]
    result = tp.optimize.minimize(lambda p, e: fun(_joined(p), e), parts, carry=env,
                                  **options)
    return dataclasses.replace(result, x=[[np.asarray(a) for a in column]
                                          for column in _joined(result.x)])


def _joined(parts) -> list:
    """The complex cell of the ``(real, imaginary)`` pairs ``parts[x][y]`` (any mode)."""
    return [[re + 1j * im for re, im in column] for column in parts]

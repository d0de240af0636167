"""Variational iPEPS on the square lattice: a single-site C4v-symmetric tensor, its CTMRG
environment as a gauge-fixed fixed point, and nearest-neighbour energies -- written once for
every mode (arrays, eager tensors, traced tensors).

The state is one tensor ``A[s, u, l, d, r]`` (physical ``s``, bonds up, left, down, right),
symmetrised over the eight symmetries of the square (:func:`symmetrize`).  Its double layer
``a = sum_s A (x) conj(A)``, with each bond's ket and bra indices fused (dimension D^2), is
the bulk tensor of the norm network, whose environment is one corner ``C`` (k x k,
symmetric) and one edge ``T`` (k x D^2 x k, symmetric in its outer legs).

One move (as in Orus & Vidal's C4v CTMRG, and Liao et al., PRX 9, 031041)::

    M[(x,r),(y,d)] = C[a,b] T[a,s,x] T[b,t,y] a[s,t,d,r]      the enlarged corner
    Tt[(a,l),d,(b,r)] = T[a,s,b] a[s,l,d,r]                     the enlarged edge
    P = the chi eigenvectors of M with the largest |eigenvalue|, by decreasing eigenvalue
    C <- P^T M P,  T <- P^T Tt P,  each symmetrised and of unit norm

(``Tt`` itself, k D^2 x D^2 x k D^2, is never formed: ``P^T Tt P`` is contracted from
``P``, ``T`` and ``a`` directly, a third of the work, and its derivative has no
intermediate of that size.)

**The gauge.**  The environment is defined only up to an orthogonal change of its basis,
and eigh's eigenvectors carry arbitrary signs (and, inside a degenerate multiplet, an
arbitrary rotation).  :func:`tenpy_ad.fixed_point`'s implicit derivative needs a map whose
fixed point is unique element-wise, so the move's basis is made a *smooth* function of
its input: inside each multiplet (eigenvalues within ``MULTIPLET_GAP``, found at run
time), the eigenbasis of a covariant matrix built from the enlarged edge; each vector's
sign, the one whose overlap with a fixed generic vector is positive.  Iterated alone, such
a move still lands on a *gauge-equivalent* environment each time (signs, and the
exchange of the double layer's ket and bra, a symmetry of a real double layer), often
in a cycle.  So :func:`environment` solves twice: the moves until the corner spectrum
(no gauge changes it) converges, then, with the constant gauge that maps that
environment's next move back onto it (:func:`relative_gauge`), the move followed by that
gauge (:func:`aligned_move`), whose fixed point is element-wise and whose derivative is
the implicit one.  Near-degenerate states at the truncation leave a rounding floor in
the element-wise residual, which ``on_stall="accept"`` takes when it is within
``min(1e3 tol, sqrt(tol))``.  Some tensors have no isolated environment at all: a corner
spectrum with two leading values of equal magnitude and opposite sign (a transfer matrix
with dominant eigenvalues +-lambda, as for the random tensor ``random_tensor(2, 2,
seed=106)``, and 4 of 60 random tensors of D = 2 and 3, seeds 200-229) comes with a line
of fixed points along which the energy changes.  The
value is then the one the start leads to, and the gradient raises ConvergenceError
naming the move's eigenvalue 1 (the implicit derivative is not defined there).

Energies come from the two-site reduced density matrix of a horizontal bond, which the
C4v symmetry makes the same on every bond; the energy per site is twice a bond's.
"""
from __future__ import annotations

import math
from functools import partial
from typing import Callable

import numpy as np

import tenpy_ad as tp
from tenpy_ad import dtypes
from tenpy_ad.errors import ArgumentError
from tenpy_ad.param_schema import EPS
from tenpy_ad.primitive import bind, code_of_value, primitive, shape_of
from tenpy_ad.rules import defrules
from tenpy_ad.models.values import is_traced, observed_values, values_of

#: the eight symmetries of the square, as permutations of the bond axes (u, l, d, r)
SQUARE_SYMMETRIES = ((0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2),
                     (0, 3, 2, 1), (2, 1, 0, 3), (1, 0, 3, 2), (3, 2, 1, 0))
#: the reference energies per site of the spin-1/2 Heisenberg model: the D = 2 C4v optimum
#: (chi = 16), the literature's D = 3 C4v value, and quantum Monte Carlo
HEISENBERG_D2 = -0.6602310934799582
HEISENBERG_D3 = -0.6676
HEISENBERG_QMC = -0.669437
#: default tolerance of the environment (relative, element-wise)
TOL = 1e-10
#: kept eigenvalues closer than this (relative to the largest) form one multiplet
MULTIPLET_GAP = 1e-5
#: Anderson mixing depth of the gauge-fixed solve (its map is smooth there)
ANDERSON = 6


# ------------------------------------------------------------------ the state

def symmetrize(a):
    """``A`` averaged over the eight symmetries of the square (its bond axes 1..4)."""
    total = None
    for perm in SQUARE_SYMMETRIES:
        term = tp.transpose(a, (0,) + tuple(p + 1 for p in perm))
        total = term if total is None else total + term
    return total * 0.125


def random_tensor(d: int = 2, bond: int = 2, seed: int = 0) -> np.ndarray:
    """A seeded random real C4v-symmetric ``A[s, u, l, d, r]`` of unit norm."""
    a = np.random.default_rng(seed).standard_normal((d,) + (bond,) * 4)
    a = np.asarray(symmetrize(a))
    return a / np.linalg.norm(a)


def double_layer(a):
    """``sum_s A[s,...] conj(A[s,...])`` with each bond's ket and bra fused (D^2)."""
    d2 = a.shape[1] ** 2
    return tp.einsum("suldr,sULDR->uUlLdDrR", a, tp.conj(a)).reshape(d2, d2, d2, d2)


def open_double_layer(a):
    """``A[s,...] conj(A[t,...])``, physical legs ``s, t`` open: (d, d, D^2 x 4)."""
    d, d2 = a.shape[0], a.shape[1] ** 2
    return tp.einsum("suldr,tULDR->stuUlLdDrR", a, tp.conj(a)).reshape(d, d, d2, d2, d2, d2)


def _bond_identity(d2: int) -> np.ndarray:
    """The fused identity of a double-layer bond (ket = bra): a boundary that closes it."""
    side = math.isqrt(d2)
    return np.eye(side).reshape(d2)


def _check_real(x, what: str) -> None:
    """The C4v moves (eigh of a symmetrised real corner) hold for real states only: refuse
    a complex one, pointing to the unit-cell code, which takes it."""
    if np.dtype(x.dtype).kind == "c":
        raise ArgumentError(f"{what}: the C4v iPEPS takes real tensors only (got "
                            f"{np.dtype(x.dtype).name}); a complex state goes through "
                            "tenpy_ad.models.peps_cell, e.g. as a 1 x 1 cell "
                            "peps_cell.cell_energy([[A]], chi, h)")


# ------------------------------------------------------------------ the environment

def initial_environment(a) -> tuple:
    """``(C, T)`` of bond dimension D^2: the double layer with its outer bonds closed."""
    delta = _bond_identity(a.shape[0])
    return (tp.einsum("uldr,u,l->rd", a, delta, delta), tp.einsum("uldr,u->ldr", a, delta))


def enlarged(env, a):
    """The enlarged corner ``M`` (kD^2 x kD^2, symmetrised)."""
    m = _enlarged_corner(env, a)
    return (m + m.T) * 0.5


def _enlarged_corner(env, a):
    """The enlarged corner as contracted: symmetric up to rounding."""
    c, t = env
    k, d2 = c.shape[0], a.shape[0]
    ct = tp.einsum("ab,asx->bsx", c, t)
    ctt = tp.einsum("bsx,bty->sxty", ct, t)
    return tp.einsum("sxty,stdr->xryd", ctt, a).reshape(k * d2, k * d2)


def projected_edge(t, a, p):
    """``P^T Tt P``, ``[x, d, y]``, of the enlarged edge ``Tt[(a,l),d,(b,r)] = T[a,s,b]
    a[s,l,d,r]`` between the columns of ``p`` (kD^2 x n), contracted without forming
    ``Tt``."""
    k, d2 = t.shape[0], a.shape[0]
    p3 = p.reshape(k, d2, p.shape[1])                        # [a, l, x]
    pt = tp.einsum("alx,asb->xlsb", p3, t)
    pta = tp.einsum("xlsb,sldr->xdbr", pt, a)
    return tp.einsum("xdbr,bry->xdy", pta, p3)


def move(env, a, chi: int):
    """One C4v CTMRG move: the enlarged corner's ``chi`` dominant eigenvectors project the
    enlarged corner and edge, in a basis that is a smooth function of ``env`` (module
    docstring)."""
    # M symmetrised by eigsh (its whole cotangent then symmetrised once) and by the
    # symmetrised C <- P^T M P (which equals P^T sym(M) P)
    m = _enlarged_corner(env, a)
    # eigsh's dense rule: the derivative O(n^2 chi) where eigh's whole would be O(n^3)
    w, p = tp.linalg.eigsh(m, min(chi, m.shape[0]), which="LM", method="full",
                           symmetrize_input=True)
    w, p = w[::-1], p[:, ::-1]
    edge = projected_edge(env[1], a, p)
    r = _multiplet_rotation(w, edge)
    r = r * tp.stop_gradient(tp.sign(_reference(m.shape[0]) @ (p @ r)))
    p = p @ r
    c_new = p.T @ m @ p
    t_new = tp.einsum("xa,xdy,yb->adb", r, edge, r)
    c_new = (c_new + c_new.T) * 0.5
    t_new = (t_new + t_new.transpose(2, 1, 0)) * 0.5
    return c_new / tp.linalg.norm(c_new), t_new / tp.linalg.norm(t_new)


def _multiplet_rotation(w, edge):
    """The rotation that gives each multiplet of (to ``MULTIPLET_GAP`` times the largest)
    equal eigenvalues ``w`` (decreasing) of the kept vectors -- whose eigenvectors
    rounding determines only to ``eps / gap`` -- a covariant basis: the eigenbasis of a
    generic combination of the enlarged edge's projections ``edge`` (:func:`projected_edge`
    in the kept basis) along fixed bond vectors (and their products, which tell apart
    states a symmetry leaves alike in each projection), so the same whatever basis eigh
    returned inside it (the identity, up to signs, for a single eigenvalue).  The
    multiplets are found at run time: the matrix is masked to them, and shifted block by
    block so that eigh keeps them apart, in order."""
    block, same = multiplet_blocks(w)
    bond = np.arange(edge.shape[1])
    k1, k2, k3 = (_along(edge, probe) for probe in
                  (_reference(len(bond)), np.sin(0.4 + 1.3 * bond * bond),
                   np.cos(2.1 * bond + 0.2) - 0.1))
    k = (k1 + (k2 @ k3 + k3 @ k2) * 0.5) * same
    k = (k + k.T) * 0.5
    shift = tp.stop_gradient(block * (2.0 * tp.linalg.norm(k) + 1.0))
    _, r = tp.linalg.eigh(k + tp.diag(shift))
    return r


def multiplet_blocks(w, gap: float = MULTIPLET_GAP) -> tuple:
    """``(block, same)`` for values ``w`` in decreasing order (any mode): each value's
    multiplet number (0, 1, ...; neighbours closer than ``gap`` times the largest modulus
    share one) and the mask of the pairs in one multiplet, as float64 -- piecewise
    constant in ``w``, so without a derivative."""
    return tuple(bind(_multiplets_p, float(gap), w))


def _multiplets(gap, w):
    # a loop over Python floats: chi values, run once per move (a third of NumPy's time)
    values = w.tolist()
    limit = gap * max(map(abs, values), default=0.0)
    numbers, number = [0.0], 0.0
    for before, value in zip(values, values[1:]):
        number += abs(value - before) > limit
        numbers.append(number)
    block = np.array(numbers[:len(values)])
    return block, np.equal.outer(block, block).astype(np.float64)


def _multiplets_rule(gap, w):
    n = shape_of(w)[0]
    return [(dtypes.FLOAT64, (n,)), (dtypes.FLOAT64, (n, n))]


_multiplets_p = primitive("ipeps_multiplets", _multiplets, _multiplets_rule, n_outputs=2,
                          params=EPS)
defrules(_multiplets_p, lambda params, tangents, out, xs: (None, None),
         lambda params, cts, out, xs, active: (None,))


def _along(edge, probe):
    """The projected edge along the bond vector ``probe``, of unit norm (symmetrised)."""
    k = tp.einsum("xdy,d->xy", edge, probe)
    k = (k + k.T) * 0.5
    return k / tp.linalg.norm(k)


def _reference(n: int) -> np.ndarray:
    """A fixed generic unit vector of length ``n``."""
    r = np.cos(1.0 + 0.7 * np.arange(n)) + 0.3
    return r / np.linalg.norm(r)


def aligned_move(env, a, gauge, chi: int):
    """:func:`move` followed by the constant change of gauge ``gauge = (signs, swapped)``
    of :func:`relative_gauge`: at the converged environment it maps the environment to
    itself element-wise -- the map whose fixed point is differentiated."""
    return _regauged(move(env, a, chi), gauge)


def _regauged(env, gauge):
    """``env`` in the gauge ``gauge = (signs, swapped)`` of :func:`relative_gauge`."""
    (c, t), (signs, swapped) = env, gauge
    t = t + (_swap_layers(t) - t) * swapped
    return c * signs[:, None] * signs[None, :], t * signs[:, None, None] * signs[None, None, :]


def _swap_layers(t):
    """``T`` with the ket and bra indices of its double-layer bond exchanged (a symmetry
    of a real double layer, which a C4v environment may break, alternating between ``T``
    and this from move to move)."""
    side = math.isqrt(t.shape[1])
    k = t.shape[0]
    return t.reshape(k, side, side, k).transpose(0, 2, 1, 3).reshape(k, side * side, k)


def relative_gauge(new, old) -> tuple:
    """``(signs, swapped)`` with ``signs * new * signs = old``, ``new``'s edge first
    layer-swapped if ``swapped`` (1.0, else 0.0), for two environments that differ so
    (any mode; piecewise constant, so its derivative is zero)."""
    return tuple(bind(_relative_gauge_p, None, *new, *old))


def _relative_gauge(params, c1, t1, c0, t0):
    best = None
    for swapped, edge in ((0.0, t1), (1.0, _swap_layers(t1))):
        signs = _matching_signs(np.einsum("kml,kml->kl", edge, t0) + c1 * c0)
        mismatch = np.abs(edge * signs[:, None, None] * signs[None, None, :] - t0).max()
        if best is None or mismatch < best[0]:
            best = (mismatch, signs, np.float64(swapped))
    return best[1], best[2]


def _matching_signs(overlaps: np.ndarray) -> np.ndarray:
    """Signs ``s`` with ``s_k s_l = sign(W[k,l])`` for overlaps ``W[k,l] = s_k s_l g_kl``
    (``g >= 0``), read along the tree of the largest overlaps (Prim's), so that no small
    or zero entry decides (a block that nothing couples keeps +)."""
    rows = overlaps.tolist()       # a loop over Python floats: n = chi, too small for NumPy
    n = len(rows)
    signs, parent = [1.0] * n, [0] * n
    best = [abs(v) for v in rows[0]]
    todo = list(range(1, n))
    while todo:
        new = max(todo, key=best.__getitem__)          # (the first of equals, in order)
        todo.remove(new)
        signs[new] = signs[parent[new]] * (-1.0 if rows[parent[new]][new] < 0 else 1.0)
        row = rows[new]
        for k in todo:
            strength = abs(row[k])
            if strength > best[k]:
                best[k], parent[k] = strength, new
    return np.array(signs)


def _relative_gauge_rule(params, c1, t1, c0, t0):
    code = code_of_value(c1)
    return [(code, tuple(shape_of(c1))[:1]), (code, ())]


_relative_gauge_p = primitive("ipeps_relative_gauge", _relative_gauge, _relative_gauge_rule,
                              n_outputs=2)
# piecewise constant: no tangent for either output, no cotangent for any input
defrules(_relative_gauge_p, lambda params, tangents, out, xs: (None, None),
         lambda params, cts, out, xs, active: (None,) * len(xs))


def grown_environment(a, chi: int, moves: int = 4) -> tuple:
    """An environment (arrays) of bond dimension ``min(chi, ...)`` to start the fixed point
    from: the closed boundary grown by moves to that size, then ``moves`` more."""
    a = np.asarray(values_of(a))
    env = initial_environment(a)
    size = env[0].shape[0]
    while size < chi and a.shape[0] > 1:          # (D = 1: a product state, k = 1)
        env = move(env, a, chi)
        size = env[0].shape[0]
    for _ in range(moves):
        env = move(env, a, chi)
    return tuple(np.ascontiguousarray(x) for x in env)   # (tp.jit traces per layout)


def environment(a, chi: int, env0, tol: float = TOL, max_iter: int = 2000,
                on_stall: str = "accept", stats: dict | None = None) -> tuple:
    """The converged environment ``(C, T)`` of the double layer ``a`` (any mode), started
    from ``env0`` (arrays, e.g. :func:`grown_environment`), differentiable in ``a``.

    Two solves: the moves iterated until the corner spectrum converges (values only; the
    eigenvectors' signs may still change from move to move), then the gauge that maps
    the last move's result back onto its operand fixed (:func:`relative_gauge`) and the
    gauge-fixed move (:func:`aligned_move`) iterated from that result in that gauge to
    its element-wise fixed point, through which
    :func:`tenpy_ad.fixed_point` differentiates implicitly (memory flat in the moves).
    ``stats`` receives the second solve's ``iterations``, ``residual``, ... and the
    first's as ``spectrum_iterations``, ``spectrum_residual``."""
    _check_real(a, "peps.environment")
    fixed = tp.stop_gradient(a)
    env0 = tuple(env0)
    before, rough = tp.fixed_point(partial(_moved_pair, chi=chi), (env0, env0), fixed,
                                   tol=tol, max_iter=max_iter, monitor=_latest_spectrum,
                                   on_stall=on_stall, stats=None if stats is None else
                                   _Prefixed(stats, "spectrum_"))
    before, rough = (tuple(tp.stop_gradient(x) for x in e) for e in (before, rough))
    gauge = relative_gauge(rough, before)           # rough = move(before)
    # aligned_move(before) = rough in this gauge, and its fixed point is near both
    start = tuple(tp.stop_gradient(x) for x in _regauged(rough, gauge))
    return tp.fixed_point(partial(aligned_move, chi=chi), start, a, gauge, tol=tol,
                          max_iter=max_iter, anderson=ANDERSON, on_stall=on_stall,
                          stats=stats)


def _moved_pair(pair, a, chi: int):
    """``(x, y) -> (y, move(y))``: the spectrum solve keeps the move's last operand, so
    that the gauge is read off its last move (no move more)."""
    return pair[1], move(pair[1], a, chi)


def _latest_spectrum(pair):
    return corner_spectrum_of(pair[1])


class _Prefixed(dict):
    """A solve's ``stats`` written into ``target`` under each of ``prefixes`` when the
    solve runs (under tp.jit that is each call of the program, not its trace)."""

    def __init__(self, target: dict, *prefixes: str):
        super().__init__()
        self.target, self.prefixes = target, prefixes

    def __setitem__(self, key, value):
        for prefix in self.prefixes:
            self.target[prefix + key] = value


def corner_spectrum_of(env) -> np.ndarray:
    """The corner's eigenvalues, ascending, over the largest modulus: what the spectrum
    solve monitors (on its iterates' values: LAPACK's values alone, no vectors)."""
    w = np.linalg.eigvalsh(np.asarray(values_of(env[0])))
    return w / np.max(np.abs(w))


# ------------------------------------------------------------------ observables

def bond_density_matrix(env, a_open):
    """The reduced density matrix ``rho[s1, t1, s2, t2]`` of two horizontal neighbours
    (ket ``s``, bra ``t``), of unit trace."""
    c, t = env
    corner_edge = tp.einsum("ax,xsy->asy", c, t)                  # top-left: C, top T
    column = tp.einsum("asy,alc->sylc", corner_edge, t)           # + the left T
    column = tp.einsum("sylc,cmw->sylmw", column, corner_edge)    # + bottom-left C, T
    half = tp.einsum("sylmw,iIslmp->yiIpw", column, a_open)       # + the site
    rho = tp.einsum("yiIpw,yjJpw->iIjJ", half, half)   # the right half: the mirror image
    return rho / tp.einsum("iijj->", rho)


def bond_energy(rho, h):
    """``<h>`` of a two-site operator ``h[s1, s2, s1', s2']`` in ``rho[s1, s1', s2, s2']``:
    its real part (for a Hermitian ``h`` and the Hermitian ``rho`` of a complex state the
    imaginary part is rounding and the convergence error; real states have none)."""
    return tp.real(tp.einsum("iIjJ,IJij->", rho, h))


def energy_per_site(a, env, h):
    """The energy per site of the C4v state ``a`` (normalised ``A``) in its environment:
    twice a bond's (two bonds per site)."""
    return bond_energy(bond_density_matrix(env, open_double_layer(a)), h) * 2.0


def normalized(params):
    """The C4v-symmetric state of the unconstrained ``params``, of unit norm."""
    _check_real(params, "peps.normalized")
    a = symmetrize(params)
    return a / tp.linalg.norm(a)


def energy(params, chi: int, h, env0=None, tol: float = TOL, max_iter: int = 2000,
           on_stall: str = "accept", stats: dict | None = None):
    """``(E, env)``: the energy per site of the iPEPS made of ``params`` (any ``A``; it is
    symmetrised and normalised) at environment bond dimension ``chi``, and its converged
    environment.  ``env0`` (arrays) warm-starts the environment; traced, it is required."""
    a = normalized(params)
    dl = double_layer(a)
    if env0 is None:
        if is_traced(params):
            raise ArgumentError("peps.energy: a traced state needs env0 (e.g. "
                                "grown_environment(double_layer(A), chi))")
        env0 = grown_environment(dl, chi)
    env = environment(dl, chi, env0, tol=tol, max_iter=max_iter, on_stall=on_stall,
                      stats=stats)
    return energy_per_site(a, env, h), env


def site_density_matrix(env, a_open):
    """The one-site reduced density matrix ``rho[s, t]`` (ket, bra), of unit trace."""
    return tp.einsum("iIjj->iI", bond_density_matrix(env, a_open))


def magnetization(a, env):
    """``|<S>|`` on a site of the normalised state ``a`` (with the sublattice rotation of
    :func:`heisenberg`, the staggered magnetisation of the antiferromagnet); real states
    have ``<S^y> = 0``."""
    rho = site_density_matrix(env, open_double_layer(a))
    sx, sz = tp.einsum("iI,Ii->", rho, _SX), tp.einsum("iI,Ii->", rho, _SZ)
    return tp.sqrt(tp.real(sx) ** 2 + tp.real(sz) ** 2)


def correlation_length(env) -> float:
    """The correlation length (in sites) of the environment's edge transfer matrix
    ``sum_m T[a,m,b] T[a',m,b']``: ``-1 / ln|lambda_2 / lambda_1|`` (arrays or detached
    tensors -- an environment that requires grad raises NotDifferentiableError, as the
    value has no derivative here; inf for a degenerate leading eigenvalue)."""
    from scipy.sparse.linalg import LinearOperator, eigs
    t = np.asarray(observed_values(env[1], "peps.correlation_length"))
    k = t.shape[0]

    def apply(v):
        v = v.reshape(k, k)
        return np.einsum("amb,AmB,bB->aA", t, t, v, optimize=True).ravel()

    if k * k <= 64:
        values = np.linalg.eigvals(np.einsum("amb,AmB->aAbB", t, t).reshape(k * k, k * k))
    else:
        values = eigs(LinearOperator((k * k, k * k), matvec=apply, dtype=t.dtype), k=2,
                      which="LM", return_eigenvectors=False, tol=1e-12)
    values = np.sort(np.abs(values))[::-1]
    return _length_of_ratio(values[1] / values[0])


def _length_of_ratio(ratio: float, period: int = 1) -> float:
    """``-period / ln(ratio)`` for ``ratio = |lambda_2 / lambda_1|`` of a transfer matrix
    over ``period`` sites: 0 for a rank-one one, inf for a degenerate leading value."""
    if ratio <= 0.0:
        return 0.0
    return math.inf if ratio >= 1.0 else -period / math.log(ratio)


# ------------------------------------------------------------------ models

_SX = np.array([[0.0, 0.5], [0.5, 0.0]])
_ISY = np.array([[0.0, 0.5], [-0.5, 0.0]])            # i S^y, real
_SZ = np.array([[0.5, 0.0], [0.0, -0.5]])
_ID = np.eye(2)


def _two_site(*terms) -> np.ndarray:
    """``sum_k c_k O1_k (x) O2_k`` as ``h[s1, s2, s1', s2']``."""
    h = sum(c * np.kron(o1, o2) for c, o1, o2 in terms)
    return h.reshape(2, 2, 2, 2)


def heisenberg(j: float = 1.0, jz: float | None = None, rotated: bool = True) -> np.ndarray:
    """The bond of the spin-1/2 XXZ model ``J (Sx Sx + Sy Sy) + Jz Sz Sz`` (Heisenberg: ``jz``
    None, = ``j``), by default with one sublattice rotated by pi about y (``Sx, Sz -> -Sx,
    -Sz``), so that one tensor describes the Neel state of the antiferromagnet."""
    jz = j if jz is None else jz
    sign = -1.0 if rotated else 1.0
    # Sy Sy = -(i Sy)(i Sy): real
    return _two_site((sign * j, _SX, _SX), (-j, _ISY, _ISY), (sign * jz, _SZ, _SZ))


def transverse_ising(field: float, j: float = 1.0) -> np.ndarray:
    """The bond of ``-J sum sz sz - g sum sx`` (Pauli matrices), the field shared among a
    site's four bonds."""
    sz, sx = 2 * _SZ, 2 * _SX
    return _two_site((-j, sz, sz), (-field / 4, sx, _ID), (-field / 4, _ID, sx))


def j1j2(j2: float, j1: float = 1.0) -> tuple:
    """``(h_bond, h_diagonal)``: the nearest- and next-nearest-neighbour bonds of the
    spin-1/2 J1-J2 Heisenberg model ``J1 sum_<ij> S_i.S_j + J2 sum_<<ij>> S_i.S_j``, with no
    sublattice rotation (the next-nearest neighbours share a sublattice): for a unit cell
    of general tensors (:func:`tenpy_ad.models.peps_cell.cell_energy`'s ``h_bond`` and
    ``h_diagonal``), which counts each bond once.  (A 1 x 1 cell in the rotated frame takes
    :func:`heisenberg`'s rotated bond with this ``h_diagonal``.)"""
    return heisenberg(j1, rotated=False), heisenberg(j2, rotated=False)


# ------------------------------------------------------------------ the variational state

def objective(chi: int, h, tol: float = TOL, max_iter: int = 2000) -> Callable:
    """``fun(params, env) -> (E, env)``: the energy per site and the converged
    environment, warm-started from ``env`` -- the objective of :func:`tenpy_ad.optimize.
    minimize` with the environment as its carry."""
    def energy_and_environment(params, env):
        return energy(params, chi, h, env0=env, tol=tol, max_iter=max_iter)
    return energy_and_environment


def optimize(h, bond: int = 2, chi: int = 16, params=None, seed: int = 0,
             tol: float = TOL, **options):
    """Minimise the energy per site of the C4v iPEPS of bond dimension ``bond`` for the
    two-site Hamiltonian ``h`` at environment dimension ``chi``, from ``params`` or a seeded
    random tensor, by :func:`tenpy_ad.optimize.minimize` (compiled; ``options`` are its
    own).  Returns its result: ``x`` the tensor, ``fun`` the energy, ``carry`` the
    environment."""
    if params is None:
        params = random_tensor(h.shape[0], bond, seed)
    params = np.asarray(params)
    env = grown_environment(double_layer(normalized(params)), chi)
    return tp.optimize.minimize(objective(chi, h, tol), params, carry=env, **options)

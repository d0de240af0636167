"""The relative gauge of two environments of a unit cell (:mod:`tenpy_ad.models.peps_cell`):
the unitary of every boundary bond -- signs (phases, for a complex cell) per state, and
rotations inside a multiplet that a step turns -- that maps one onto the other, and the
environment changed by them -- the constant gauge of the cell's
element-wise fixed point, as :func:`tenpy_ad.models.peps.relative_gauge` is the C4v one.

A step pins each new state to a pivot row of its input's basis, so it carries each
state's sign over from a state of its input (``peps_cell._kept_basis``); where those
carried signs run around a cycle of the cell's bonds, consecutive steps give environments
that differ by signs on every bond, and no iterate is a fixed point.  With the relative
gauge ``g`` of a step's result and its operand, the map ``E -> g(step(E))`` has one.

**The bonds.**  Each boundary bond joins four legs (two tensors on either side of it): of
site ``(x, y)``'s environment, ``top`` (of its row's upper boundary, right of ``T1``):
``T1[x][y].r``, ``C1[x+1][y].r`` | ``T1[x+1][y].l``, ``C2[x][y].l``; ``left``: ``T4[x][y].d``,
``C1[x][y+1].d`` | ``T4[x][y+1].u``, ``C4[x][y].u``; ``bottom``: ``T3[x][y].r``, ``C4[x+1][y].r``
| ``T3[x+1][y].l``, ``C3[x][y].l``; ``right``: ``T2[x][y].d``, ``C2[x][y+1].d`` |
``T2[x][y+1].u``, ``C3[x][y].u``.  A diagonal unitary ``diag(z)`` on a bond multiplies the
legs before the bar by ``z`` and those after it by ``conj(z)`` (contractions pair the two
sides), so the network is unchanged.

**Finding it.**  The signs (phases) first, along a maximum spanning tree of the entries'
overlaps over the bond states (the strongest relations decide); where they leave a
mismatch (a step that turned the states of a pair: the real pairs of a real environment
that represents a complex one), the unitaries are the polar factors of the leading
eigenvector of a linear map (:func:`_leading_pulls`) -- global, where alternating polar
factors alone stop at local optima once pairs turn by large angles -- polished by
alternating polar factors where the relation is only approximate.
"""
from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph import breadth_first_order, connected_components, \
    minimum_spanning_tree
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigs

import tenpy_ad.numpy as tnp
from tenpy_ad.errors import NotDifferentiableError
from tenpy_ad.param_schema import SIZE, Struct
from tenpy_ad.primitive import bind, code_of_value, shape_of
from tenpy_ad.rules import per_output_count
from tenpy_ad.solvers import Packer, residual_of

TOP, LEFT, BOTTOM, RIGHT = range(4)
#: per tensor of a site (C1, C2, C3, C4, T1, T2, T3, T4), its first and its last leg: the
#: bond's kind, the offset of the site that names it, and the side (+1 before the bar)
LEGS = (((LEFT, 0, -1, 1), (TOP, -1, 0, 1)), ((TOP, 0, 0, -1), (RIGHT, 0, -1, 1)),
        ((RIGHT, 0, 0, -1), (BOTTOM, 0, 0, -1)), ((BOTTOM, -1, 0, 1), (LEFT, 0, 0, -1)),
        ((TOP, 0, 0, 1), (TOP, -1, 0, -1)), ((RIGHT, 0, 0, 1), (RIGHT, 0, -1, -1)),
        ((BOTTOM, -1, 0, -1), (BOTTOM, 0, 0, 1)), ((LEFT, 0, -1, -1), (LEFT, 0, 0, 1)))


def legs(lx: int, ly: int) -> list:
    """Per tensor of the flat environment (site ``(x, y)`` at ``8 (x ly + y)``), its first
    and last leg as ``(bond, side)``; bond ``(kind lx + x) ly + y``."""
    table = []
    for x in range(lx):
        for y in range(ly):
            table += [tuple((((kind * lx + (x + dx) % lx) * ly + (y + dy) % ly), side)
                            for kind, dx, dy, side in pair) for pair in LEGS]
    return table


def relative_gauge(new, old) -> list:
    """The bonds' unitaries (one k x k matrix per bond, in :func:`legs`' numbering) that
    map the environment ``new`` onto ``old`` (``regauged(new, factors) = old``) for two
    that differ so (any mode).  It is read off values and meant as a constant (what is
    computed from a fixed point of the regauged step does not depend on it): pass it
    ``tp.stop_gradient``'ed environments; differentiating it raises NotDifferentiableError."""
    lx, ly = len(new), len(new[0])
    flat = [t for env in (new, old) for column in env for site in column for t in site]
    return list(bind(_relative_gauge_p(4 * lx * ly), (lx, ly), *flat))


def regauged(env, factors: list) -> list:
    """``env`` (a list of columns of site tuples) with each bond's unitary ``factors``
    applied (``U`` on the legs before the bar, ``conj(U)`` on those after it)."""
    lx, ly = len(env), len(env[0])
    table = iter(legs(lx, ly))
    return [tuple(tuple(_applied(t, factors, *next(table)) for t in site) for site in column)
            for column in env]


def _relative_gauge(params, *tensors):
    lx, ly = params
    n = len(tensors) // 2
    new, old = tensors[:n], tensors[n:]
    sizes, table = _bond_sizes([t.shape for t in new], lx, ly), legs(lx, ly)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    edges = [_edges(t_new, t_old, *table[k], starts) for k, (t_new, t_old)
             in enumerate(zip(new, old))]
    a, b, weight, phase, side_a, side_b = (np.concatenate(e) for e in zip(*edges))
    z = _solve_tree(int(starts[-1]), a, b, weight, phase, side_a, side_b,
                    np.result_type(*new))
    factors = [np.diag(z[starts[i]:starts[i + 1]]) for i in range(len(sizes))]
    mismatch = _mismatch(new, old, factors, table)
    if mismatch > PHASES_ONLY:
        factors = _rotations(new, old, factors, table, mismatch)
    return tuple(factors)


#: a diagonal gauge (signs, phases) that leaves a larger mismatch is refined to unitaries
PHASES_ONLY = 1e-9
#: the most Arnoldi restarts of that refinement (31 products converge it at chi = 16;
#: the bound keeps two environments that are no gauge apart from a long search)
RESTARTS = 100
#: the most sweeps of the refinement's polish, and how often it checks whether it gains
SWEEPS, CHECK_EVERY = 3000, 25


def _mismatch(new, old, factors, table) -> float:
    moved = [_applied(t, factors, leg0, leg1) for t, (leg0, leg1) in zip(new, table)]
    return residual_of(moved, list(old))


def _applied(t, factors, leg0, leg1):
    """``t`` with its first leg's factor applied from the left and its last leg's (any
    mode: NumPy's own speed on arrays, the refinement's loop)."""
    first, last = _sided(factors, *leg0), _sided(factors, *leg1)
    return tnp.tensordot(tnp.tensordot(first, t, axes=(1, 0)), last, axes=(t.ndim - 1, 1))


def _sided(factors, bond: int, side: int):
    """The factor of ``bond`` as a leg on ``side`` takes it."""
    return factors[bond] if side > 0 else tnp.conj(factors[bond])


def _rotations(new, old, factors, table, best: float) -> list:
    """The unitary per bond (inside the multiplets of a state that a step turns, not only
    signs) that maps ``new`` onto ``old``: the polar factors of the leading eigenvector of
    the pulls (:func:`_leading_pulls`), polished by alternating polar factors where they
    leave a mismatch; the diagonal gauge ``factors`` (of mismatch ``best``) where that
    does no better."""
    touching = [[k for k, ((b0, _), (b1, _)) in enumerate(table) if bond in (b0, b1)]
                for bond in range(len(factors))]
    leading = _leading_pulls(new, old, factors, table, touching)
    if leading is None:
        return list(factors)
    rotated = [_polar(x) for x in leading]
    mismatch = _mismatch(new, old, rotated, table)
    if mismatch > PHASES_ONLY:          # an approximate relation: its nearest optimum
        rotated = _polished(new, old, rotated, table, touching, mismatch)
        mismatch = _mismatch(new, old, rotated, table)
    return rotated if mismatch < best else list(factors)


def _leading_pulls(new, old, factors, table, touching):
    """The leading eigenvector of the linear map ``X_b -> sum of the pulls on bond b``.
    Where ``old`` is ``new`` in the gauge ``U``, that map takes ``U_b rho_b`` to ``U_b
    rho'_b`` with ``rho -> rho'`` a positive map (the transfer of ``new`` with itself
    around each bond), whose leading eigenvector is positive definite: so the polar
    factors of this one are ``U`` -- a global answer, where alternating polar factors
    alone stop at local optima (pairs of states turned by large angles).  A real-linear
    map (the sides conjugate), so complex factors are iterated as real pairs.  ``None``
    where ARPACK does not converge."""
    packer = Packer(factors)          # (the factors have the environments' dtype)

    def pulls(v):
        xs = packer.unpack(np.asarray(v).ravel())
        return packer.pack([sum(_pull(new[k], old[k], xs, table[k], bond) for k in tensors)
                            for bond, tensors in enumerate(touching)])

    start = packer.pack(factors)
    operator = LinearOperator((start.size, start.size), matvec=pulls, dtype=float)
    try:
        vector = eigs(operator, k=1, which="LR", v0=start, tol=0,
                      maxiter=RESTARTS)[1][:, 0]
    except ArpackNoConvergence:
        return None
    top = vector[np.argmax(np.abs(vector))]
    return packer.unpack((vector * (np.abs(top) / top)).real)   # real: one real root


def _polar(x: np.ndarray) -> np.ndarray:
    w, _, vh = np.linalg.svd(x)
    return w @ vh


def _polished(new, old, factors, table, touching, best: float) -> list:
    """Alternating polar factors, each bond's the one that best matches every tensor on
    it with the other legs' factors fixed, from ``factors`` (of mismatch ``best``) until
    the mismatch stops falling."""
    factors = list(factors)
    for sweep in range(1, SWEEPS + 1):
        for bond, tensors in enumerate(touching):
            factors[bond] = _polar(sum(_pull(new[k], old[k], factors, table[k], bond)
                                       for k in tensors))
        if sweep % CHECK_EVERY == 0:
            mismatch = _mismatch(new, old, factors, table)
            if mismatch > 0.9 * best:
                break
            best = mismatch
    return factors


def _pull(t_new, t_old, factors, legs_of, bond):
    """The matrix whose polar factor maximises this tensor's overlap with ``old`` over the
    factor of ``bond`` (a leg of the tensor is on it)."""
    total = 0.0
    for position, ((b, side), other) in enumerate((legs_of, legs_of[::-1])):
        if b != bond:
            continue
        factor = _sided(factors, *other)
        if position == 0:                      # the bond on the first leg
            y, o = np.tensordot(t_new, factor, axes=(t_new.ndim - 1, 1)), t_old
        else:                                  # on the last leg: moved first
            y = np.moveaxis(np.tensordot(factor, t_new, axes=(1, 0)), -1, 0)
            o = np.moveaxis(t_old, -1, 0)
        pull = o.reshape(o.shape[0], -1) @ y.reshape(y.shape[0], -1).conj().T
        total = total + (pull if side > 0 else np.conj(pull))
    return total


def _bond_sizes(shapes, lx: int, ly: int) -> list:
    sizes = [0] * (4 * lx * ly)
    for shape, ((b0, _), (b1, _)) in zip(shapes, legs(lx, ly)):
        sizes[b0], sizes[b1] = shape[0], shape[-1]
    return sizes


def _edges(t_new, t_old, leg0, leg1, starts) -> tuple:
    """Each entry pair's relation ``f0(z_i) f1(z_j) = phase`` (``f`` = identity or conj
    by side) between the states of the tensor's two legs, weighted by the overlap."""
    product = t_old * np.conj(t_new)
    overlap = product.sum(axis=tuple(range(1, product.ndim - 1)))   # over the bulk leg
    (b0, s0), (b1, s1) = leg0, leg1
    i, j = np.meshgrid(np.arange(overlap.shape[0]), np.arange(overlap.shape[1]),
                       indexing="ij")
    a, b, weight = (starts[b0] + i).ravel(), (starts[b1] + j).ravel(), np.abs(overlap).ravel()
    keep = (a != b) & (weight > 0)
    phase = (overlap.ravel() / np.where(weight > 0, weight, 1.0))[keep]
    count = int(keep.sum())
    return a[keep], b[keep], weight[keep], phase, np.full(count, s0), np.full(count, s1)


def _solve_tree(size, a, b, weight, phase, side_a, side_b, dtype) -> np.ndarray:
    """The factors along the maximum spanning tree of the overlaps (the strongest
    relations decide; each connected part's first state keeps 1)."""
    keys = np.minimum(a, b) * size + np.maximum(a, b)
    strongest = np.lexsort((-weight, keys))
    unique = np.r_[True, keys[strongest][1:] != keys[strongest][:-1]]
    first, first_keys = strongest[unique], keys[strongest][unique]   # one edge per pair
    graph = np.zeros((size, size))
    graph[a[first], b[first]] = -weight[first]
    tree = minimum_spanning_tree(graph)            # of -weight: the maximum spanning tree
    z = np.ones(size, dtype=np.result_type(dtype, phase.dtype))
    count, labels = connected_components(tree, directed=False)
    for part in range(count):
        root = int(np.flatnonzero(labels == part)[0])
        order, parent = breadth_first_order(tree, root, directed=False)
        nodes, known = order[1:], parent[order[1:]]
        edges = first[np.searchsorted(first_keys, np.minimum(nodes, known) * size
                                      + np.maximum(nodes, known))]
        for node, up, k in zip(nodes.tolist(), known.tolist(), edges.tolist()):
            sides = (side_a[k], side_b[k]) if a[k] == up else (side_b[k], side_a[k])
            value = phase[k] / (z[up] if sides[0] > 0 else np.conj(z[up]))
            z[node] = value if sides[1] > 0 else np.conj(value)
    return z.astype(dtype, copy=False)


def _relative_gauge_rule(params, *tensors):
    lx, ly = params
    shapes = [shape_of(t) for t in tensors[:len(tensors) // 2]]
    code = code_of_value(tensors[0])
    return [(code, (size, size)) for size in _bond_sizes(shapes, lx, ly)]


def _not_differentiable() -> None:
    # zero would be wrong: phases and rotations inside multiplets move with the tensors
    raise NotDifferentiableError(
        "ipeps_cell_relative_gauge (peps_cell_gauge.relative_gauge): the unitaries are read "
        "off values, and their continuous part (phases, rotations inside multiplets) has a "
        "derivative this op does not compute; pass it tp.stop_gradient'ed environments "
        "(as a constant gauge, the way the cell's fixed point uses it)")


def _gauge_jvp(params, tangents, out, xs):
    if any(t is not None for t in tangents):
        _not_differentiable()
    return (None,) * len(out)


def _gauge_vjp(params, cts, out, xs, active):
    if any(active):
        _not_differentiable()
    return (None,) * len(xs)


# read off values, held constant by its callers; differentiated, it raises naming itself
_relative_gauge_p = per_output_count("ipeps_cell_relative_gauge", _relative_gauge,
                                     _relative_gauge_rule, _gauge_jvp, _gauge_vjp,
                                     Struct(SIZE, SIZE))

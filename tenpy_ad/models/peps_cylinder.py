"""Exact nearest-neighbour energies of a single-site iPEPS on an infinite cylinder -- a
reference that shares no code with CTMRG (plain NumPy/SciPy; arrays only, no derivatives).

**Conventions** (those of :mod:`tenpy_ad.models.peps_cell`).  The state is one tensor
``A[s, u, l, d, r]`` (physical, then the bonds up, left, down, right), real or complex, on
every site.  Site ``(x, y)`` is column ``x`` (to the right) and row ``y`` (downwards): its
``r`` meets the ``l`` of ``(x+1, y)``, its ``d`` the ``u`` of ``(x, y+1)``.  The cylinder is
periodic vertically, ``y`` modulo the circumference ``L`` (row ``L-1``'s ``d`` meets row
``0``'s ``u``), and infinite horizontally.  A two-site operator is ``h[s1, s2, s1', s2']``,
the matrix element ``<s1 s2| h |s1' s2'>``, site 1 the left (horizontal bond) or the upper
(vertical bond) one, as in :func:`tenpy_ad.models.peps.bond_energy`.

**The method.**  The double layer ``a = sum_s A (x) conj(A)`` (ket and bra of each bond
fused, ``D^2``; :func:`tenpy_ad.models.peps.double_layer`'s layout, written again here) of
the ``L`` sites of one column, their vertical bonds traced around the cylinder, is the
column transfer matrix ``T``, a map from the ``L`` left legs to the ``L`` right legs,
``(D^2)^L`` square.  It is never formed: :func:`apply_column` contracts a vector with the
column one site at a time.  The half-infinite networks left and right of a bond are the
dominant eigenvectors of ``T`` and of its transpose (ARPACK's ``eigs``, a dense ``eig`` for
small ``L``); the two-site reduced density matrices are those boundaries contracted with
one or two columns in which the bond's sites are open (physical ket and bra free), over
the same network without operators.

``T`` is completely positive (``T(X) = sum_s K_s X K_s^H``, ``K_s`` the ket column of the
physical configuration ``s``), so its spectral radius is itself an eigenvalue, real and
positive, even for a complex, non-Hermitian ``T``.  Other eigenvalues may share its
modulus (a phase) or its value (a degeneracy: a symmetry-broken or decoupled cylinder).
The density matrices are those of the long-cylinder limit ``Tr(T^N O) / Tr(T^N)``, averaged
over ``N`` where phases make it oscillate: the projector ``P = R (L^T R)^-1 L^T`` onto the
whole eigenspace of the dominant eigenvalue, ``rho = Tr(P O) / Tr(P)``; phased eigenvalues
of the same modulus are reported (they average out of the limit) but left out.

The cylinder's energies converge to the plane's exponentially in ``L`` (on the scale of
the state's correlation length); :func:`cylinder_energies` also returns the gap of ``T``.
A state whose ``T`` has eigenvalues near ``+q`` and ``-q`` (a staggered mode as strong as
the uniform one) converges unevenly: odd and even ``L`` differ in size.  The complex D = 2
1x1 state optimised below the C4v optimum (rotated Heisenberg bond; ``T``'s subleading
eigenvalues ``+0.40, -0.40``): energy per site -0.662082, -0.668106, -0.662516, -0.663194,
-0.6625141, -0.662606 for L = 3..8, the directional CTMRG -0.6625134 (chi 16 and 32).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.sparse.linalg import LinearOperator, eigs

from tenpy_ad.errors import ArgumentValueError, ConvergenceError
from tenpy_ad.runtime import blas_threads

#: ``T`` up to this size is diagonalised densely (ARPACK needs ``k + 1 < n`` and is slower)
DENSE_SIZE = 64
#: eigenvalues within this (relative to the largest modulus) are the dominant one
DEGENERACY = 1e-8
#: eigenvalues computed per side: enough to see a degenerate dominant space and the gap
EIGENVALUES = 6


@dataclass
class CylinderResult:
    """What :func:`cylinder_energies` found: the bond energies ``horizontal`` and
    ``vertical`` (real parts; ``imag`` the largest imaginary part, zero up to rounding for
    a Hermitian ``h``), the density matrices ``rho_h``, ``rho_v`` (``rho[s1, t1, s2, t2]``,
    ket ``s``, bra ``t``, unit trace), the dominant eigenvalue ``lam`` of ``T`` with its
    multiplicity ``degeneracy``, ``gap`` ``|lambda_next| / lam`` (the largest other
    modulus, phased ones included), ``phased`` the number of eigenvalues of modulus ``lam``
    but another phase, and ``xi`` the correlation length along the cylinder in columns."""
    horizontal: float
    vertical: float
    imag: float
    rho_h: np.ndarray
    rho_v: np.ndarray
    lam: complex
    degeneracy: int
    gap: float
    phased: int
    xi: float


def double_layer(a: np.ndarray) -> np.ndarray:
    """``sum_s A[s,...] conj(A[s,...])``, each bond's (ket, bra) fused: ``a[u, l, d, r]``."""
    d2 = a.shape[1] ** 2
    return np.einsum("suldr,sULDR->uUlLdDrR", a, a.conj()).reshape((d2,) * 4)


def open_double_layer(a: np.ndarray) -> np.ndarray:
    """``A[s,...] conj(A[t,...])`` with the physical ket ``s`` and bra ``t`` free:
    ``o[(s, t), u, l, d, r]``, the physical pair fused (``d^2``)."""
    d, d2 = a.shape[0], a.shape[1] ** 2
    return np.einsum("suldr,tULDR->stuUlLdDrR", a, a.conj()).reshape((d * d,) + (d2,) * 4)


def apply_column(v: np.ndarray, sites: list) -> np.ndarray:
    """One column of the cylinder applied to left boundaries ``v[p, (l_0 .. l_{L-1})]``
    (``p`` a batch, ``l_0`` the most significant leg): ``w[(p, q_0, .., q_{L-1}), (r_0 ..
    r_{L-1})]``.  ``sites[y]`` is row ``y``'s tensor ``t[q, u, l, d, r]`` (``q`` physical
    legs, size 1 for a closed double layer); row ``y``'s ``d`` meets row ``y+1``'s ``u``
    and row ``L-1``'s meets row 0's."""
    length = len(sites)
    p, n = v.shape
    x = sites[0].shape[1]
    # w[p, u_0, c, (r_0 .. r_{y-1}), l_y, (l_{y+1} ..)]: u_0 stays open until the last row
    # closes the ring; c is the vertical bond entering row y.  Seeded with c = u_0.
    w = np.einsum("pn,uc->pucn", v, np.eye(x, dtype=v.dtype)).reshape(p, x, x, 1, x, n // x)
    for y, t in enumerate(sites):
        q = t.shape[0]
        # sum over c (t's u) and l_y (t's l): (p, u_0, R, rest, q, d, r)
        w = np.tensordot(w, t, axes=([2, 4], [1, 2]))
        w = w.transpose(0, 4, 1, 5, 2, 6, 3)            # (p, q, u_0, d, R, r, rest)
        rest = w.shape[-1]
        p, big = p * q, w.shape[4] * x
        nxt = x if y + 1 < length else 1                 # l_{y+1}, the next row's left leg
        w = w.reshape(p, x, x, big, nxt, rest // nxt)
    # close the ring: row L-1's d is row 0's u
    return np.einsum("puurab->prab", w).reshape(p, -1)


def _dominant(matvec, n: int, dtype, k: int) -> tuple:
    """All computed eigenpairs of the operator ``matvec`` (size ``n``), by decreasing
    modulus: ``(values, vectors[n, k])``."""
    if n <= DENSE_SIZE:
        dense = matvec(np.eye(n, dtype=dtype))          # column j: the map of e_j
        values, vectors = np.linalg.eig(dense)
    else:
        op = LinearOperator((n, n), matvec=lambda z: matvec(z[:, None]).ravel(),
                            matmat=matvec, dtype=dtype)
        rng = np.random.default_rng(0)                  # deterministic start
        values, vectors = eigs(op, k=k, which="LM", tol=1e-13, v0=rng.random(n) + 0.5)
    order = np.argsort(-np.abs(values), kind="stable")
    return values[order], vectors[:, order]


def transfer_spectrum(a: np.ndarray, length: int, k: int = EIGENVALUES) -> tuple:
    """The ``k`` largest-modulus eigenvalues of the column transfer matrix of ``A`` on the
    cylinder of circumference ``length`` and its boundaries: ``(values, left[n, k],
    right_values, right[n, k])``.  ``left[:, j]`` is an eigenvector of the column applied
    to a left boundary (over the right legs ``r_0 .. r_{L-1}`` of the half-plane left of a
    column: :func:`apply_column` maps it to ``values[j]`` times itself); ``right[:, j]`` the
    same for the column applied from the right (over the left legs of the half-plane to
    the right), the transpose, of the same spectrum.  Up to ``DENSE_SIZE`` all ``n``
    eigenpairs are returned (dense ``eig``)."""
    dl = double_layer(a)
    x = dl.shape[0]
    n = x ** length
    forward = [dl[None]] * length
    backward = [dl.transpose(0, 3, 2, 1)[None]] * length   # l <-> r: the transpose of T
    dtype = np.result_type(dl.dtype, np.float64)
    k = min(k, n)

    def left_apply(z):                     # z[n, m] -> (T applied to each column)[n, m]
        return apply_column(z.T.astype(dtype, copy=False), forward).T

    def right_apply(z):
        return apply_column(z.T.astype(dtype, copy=False), backward).T

    values, left = _dominant(left_apply, n, dtype, k)
    right_values, right = _dominant(right_apply, n, dtype, k)
    return values, left, right_values, right


def _dominant_space(values: np.ndarray, tol: float) -> tuple:
    """``(selected, phased, gap)`` of eigenvalues sorted by decreasing modulus: the indices
    equal to the dominant one, the number of others of its modulus, and the largest
    remaining modulus over it (None if every computed eigenvalue is in the dominant space).
    The dominant one is, of those of the largest modulus, the nearest the positive real
    axis (where a completely positive map has it; the sort may put a phased one first)."""
    scale = abs(values[0])
    peripheral = np.flatnonzero(np.abs(values) >= (1.0 - tol) * scale)
    top = values[peripheral[np.argmax(values[peripheral].real)]]
    selected = np.flatnonzero(np.abs(values - top) <= tol * scale)
    others = np.setdiff1d(np.arange(len(values)), selected)
    phased = int(np.sum(np.abs(np.abs(values[others]) - scale) <= tol * scale))
    gap = float(np.abs(values[others]).max() / scale) if len(others) else None
    return selected, phased, gap


def _boundaries(a: np.ndarray, length: int, tol: float) -> tuple:
    """The dominant left and right boundaries ``(left[n, m], right[n, m])`` with the
    spectrum's ``(lam, m, gap, phased)``.  More eigenvalues are computed while the smallest
    computed one still has the dominant modulus (the peripheral spectrum may go on)."""
    n = (a.shape[1] ** 2) ** length
    k = EIGENVALUES
    while True:
        values, left, right_values, right = transfer_spectrum(a, length, k)
        if len(values) >= n - 2 or abs(values[-1]) < (1.0 - tol) * abs(values[0]):
            break
        k = min(2 * k, n - 2)
    selected, phased, gap = _dominant_space(values, tol)
    right_selected, _, _ = _dominant_space(right_values, tol)
    if len(right_selected) != len(selected):
        raise ConvergenceError(f"peps_cylinder: the column and its transpose disagree on "
                               f"the dominant multiplicity ({len(selected)} vs "
                               f"{len(right_selected)}); eigenvalues {values[:4]} and "
                               f"{right_values[:4]}")
    lam = values[selected[0]]
    _check_spectrum(lam, len(selected), phased, n, tol)
    spectrum = (lam, len(selected), 0.0 if gap is None else gap, phased)
    return left[:, selected], right[:, right_selected], spectrum


def _check_spectrum(lam, multiplicity: int, phased: int, n: int, tol: float) -> None:
    """Warn where the boundaries, or the limit they stand for, are doubtful."""
    if abs(lam.imag) > tol * abs(lam) or lam.real <= 0:
        warnings.warn(f"peps_cylinder: the dominant eigenvalue {lam} is not real positive "
                      "(a completely positive map's is): the boundaries are suspect",
                      RuntimeWarning, stacklevel=4)
    if phased:
        warnings.warn(f"peps_cylinder: {phased} eigenvalue(s) of the dominant modulus with "
                      "another phase; they average out of the long-cylinder limit and are "
                      "left out", RuntimeWarning, stacklevel=4)
    if multiplicity > 1 and n > DENSE_SIZE:
        # Krylov methods see an exactly degenerate eigenspace only through rounding: ARPACK
        # may return fewer copies than there are, and the mixture would be incomplete.
        warnings.warn(f"peps_cylinder: the dominant eigenvalue is {multiplicity}-fold "
                      "degenerate (by ARPACK, which can miss exact copies); the density "
                      "matrices mix the sectors it found", RuntimeWarning, stacklevel=4)


def _density_matrix(left, right, columns, d: int) -> np.ndarray:
    """``rho[s1, t1, s2, t2]`` (unit trace) of the columns ``columns`` (lists of site
    tensors, with two open sites among them) between the boundaries: ``Tr(P O) / Tr(P)``
    with ``P = right (left^T right)^-1 left^T`` the projector on the dominant space."""
    w = left.T
    for sites in columns:
        w = apply_column(w, sites)
    m = left.shape[1]
    overlap = left.T @ right                      # (m, m); invertible for matched spaces
    x = (w @ right).reshape(m, d ** 4, m)
    rho = np.einsum("iaj,ji->a", x, np.linalg.inv(overlap)).reshape(d, d, d, d)
    return rho / np.einsum("iijj->", rho)


def density_matrices(a: np.ndarray, length: int, tol: float = DEGENERACY) -> tuple:
    """``(rho_h, rho_v, spectrum)``: the two-site reduced density matrices
    ``rho[s1, t1, s2, t2]`` (ket ``s``, bra ``t``, unit trace) of a horizontal bond (site 1
    left) and a vertical bond (site 1 above) of ``A[s, u, l, d, r]`` on the infinite
    cylinder of circumference ``length`` (>= 2), and ``(lam, multiplicity, gap, phased)``
    of the column transfer matrix (see the module docstring)."""
    if length < 2:
        raise ArgumentValueError("peps_cylinder: a vertical bond needs a circumference of 2 "
                                 "or more")
    a = np.asarray(a)
    a = a / np.linalg.norm(a)                     # the scale only shifts lam
    d = a.shape[0]
    # The contractions are many and small (ARPACK's matvecs): threaded BLAS only adds
    # synchronisation, 10-100x slower on a loaded machine; one thread, restored after.
    with blas_threads(1):
        left, right, spectrum = _boundaries(a, length, tol)
        dl, op = double_layer(a)[None], open_double_layer(a)
        one_open = [op] + [dl] * (length - 1)
        rho_h = _density_matrix(left, right, [one_open, one_open], d)
        rho_v = _density_matrix(left, right, [[op, op] + [dl] * (length - 2)], d)
    return rho_h, rho_v, spectrum


def bond_energy(rho: np.ndarray, h: np.ndarray) -> complex:
    """``Tr(rho h)`` for ``rho[s1, t1, s2, t2]`` and ``h[s1, s2, s1', s2']`` (the
    convention of :func:`tenpy_ad.models.peps.bond_energy`, complex here)."""
    return np.einsum("iIjJ,IJij->", rho, h)


def cylinder_energies(a: np.ndarray, length: int, h: np.ndarray,
                      tol: float = DEGENERACY) -> CylinderResult:
    """The exact horizontal and vertical bond energies of the two-site operator ``h`` in
    the single-site iPEPS ``A[s, u, l, d, r]`` (real or complex, any norm) on the infinite
    cylinder of circumference ``length``, with the spectrum of its column transfer matrix
    (:class:`CylinderResult`).  The energy per site is their sum."""
    rho_h, rho_v, (lam, multiplicity, gap, phased) = density_matrices(a, length, tol)
    eh, ev = bond_energy(rho_h, h), bond_energy(rho_v, h)
    xi = float("inf") if gap >= 1.0 else (0.0 if gap <= 0.0 else -1.0 / np.log(gap))
    return CylinderResult(float(eh.real), float(ev.real), float(max(abs(eh.imag),
                          abs(ev.imag))), rho_h, rho_v, complex(lam), multiplicity, gap,
                          phased, xi)

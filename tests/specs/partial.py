"""Spec entries of the partial decompositions (``svds``, ``eigsh``) and of the solve their
derivatives use (``complement_solve``).

Shapes above ``leading.DENSE_SIZE`` run ARPACK, the small ones LAPACK (the rules are the
same).  ``complement_solve`` is checked directly (both outputs, ``L(K) r`` and ``g(K) r``)
with orthonormal kept vectors (the QR factor of an operand: the solve is defined for
orthonormal kept vectors), shifts above ``H``'s spectrum (the case its callers produce)
and inside it (``K`` indefinite: the broadened inverse is defined for any spectrum), and a
broadening large enough to matter; the hint is arbitrary (it only deflates).
"""
import numpy as np

import tenpy_ad as tp
from tenpy_ad.ops.linalg.complement_solve import complement_solve

from .table import Spec


def _svds_invariants(x, k):
    """All three outputs, invariant under the phases of the singular vectors (the input
    scaled to singular values ~1, so that eager == traced holds to 1e-12 absolute)."""
    x = x * (1.0 / max(x.shape))
    u, s, vh = tp.linalg.svds(x, k, method="krylov")
    return (u * s) @ vh + u @ tp.conj(u).T @ x @ tp.conj(vh).T @ vh * s[-1]


def _eigsh_invariants(x, k, which):
    x = x * (1.0 / x.shape[0])
    w, v = tp.linalg.eigsh(x, k, which, method="krylov")
    return (v * w) @ tp.conj(v).T + v @ tp.conj(v).T * w[0]


def _complement_solve(kind, a, z, r, inside):
    """Both outputs of the solve; shifts above ``|H| <= |a|_F`` or inside the spectrum."""
    basis = tp.linalg.qr(z)[0]
    if kind == "hermitian":
        a = (a + tp.conj(a).T) * 0.5
    size = tp.sqrt(tp.sum(tp.abs(a) ** 2))
    shifts = size * (np.array([0.05, -0.2, 0.3]) if inside else np.array([1.5, 2.0, 3.0]))
    hint = np.random.default_rng(7).standard_normal((r.shape[0], 2)).astype(r.dtype)
    lorentz, square = complement_solve(kind, a, basis, shifts, r, hint,
                                       eps=0.5 if inside else 1.0)
    return lorentz + square * 3.0


SPECS = [
    *[Spec(f"svds_{m}x{n}_k{k}", lambda x, k=k: _svds_invariants(x, k), ((m, n),))
      for m, n, k in ((6, 5, 2), (5, 6, 2), (20, 18, 3), (18, 20, 3), (19, 19, 3))],
    Spec("svds_values", lambda x: tp.linalg.svds(x, 3, method="krylov")[1], ((18, 20),)),
    *[Spec(f"eigsh_{which}_{n}_k{k}", lambda x, which=which, k=k: _eigsh_invariants(x, k, which),
           ((n, n),))
      for n, k, which in ((5, 2, "LA"), (5, 2, "LM"), (18, 3, "LA"), (18, 3, "LM"))],
    *[Spec(f"complement_solve_{kind}" + ("_inside" if inside else ""),
           lambda a, z, r, kind=kind, inside=inside: _complement_solve(kind, a, z, r, inside),
           (a, (size, 3), (size, 3)))
      for kind, a, size in (("svd", (8, 6), 14), ("hermitian", (8, 8), 8))
      for inside in (False, True)],
]

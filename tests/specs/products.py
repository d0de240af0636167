"""Products lowered onto einsum with NumPy's shape rules: dot for every ndim, vdot
(conjugating its first operand), inner, outer, kron, cross, einsum's sublist form."""
import tenpy_ad.numpy as tnp

from .table import Spec

SPECS = [
    Spec("dot_nd", tnp.dot, ((2, 3, 4), (5, 4, 2))),
    Spec("dot_matrix_vector", tnp.dot, ((3, 4), (4,))),
    Spec("vdot", tnp.vdot, ((2, 3), (3, 2))),
    Spec("inner", tnp.inner, ((2, 4), (3, 4))),
    Spec("outer", tnp.outer, ((2, 2), (3,))),
    Spec("kron", tnp.kron, ((2, 3), (2, 1, 2))),
    Spec("cross3", lambda a, b: tnp.cross(a, b, axisa=0, axisc=0), ((3, 2), (2, 3))),
    Spec("cross2_3", tnp.cross, ((4, 2), (4, 3))),
    Spec("einsum_sublists",
         lambda a, b: tnp.einsum(a, [0, 1], b, [1, Ellipsis], [Ellipsis, 0]),
         ((2, 3), (3, 4))),
]

"""``tenpy_ad.numpy``: NumPy's names for differentiable tensors.

    import tenpy_ad.numpy as tnp
    tnp.concatenate([x, y]); tnp.where(x > 0, x, -x); tnp.einsum("ij,jk->ik", a, b)

Every function accepts TracedTensors, eager Tensors, ndarrays and Python scalars (mixed),
follows NumPy's semantics (broadcasting, NEP 50 promotion, argument names, return orders)
and returns the kind its operands call for: a graph node when any operand is traced, an
eager Tensor when any is eager, else what NumPy returns.  They lower onto the primitives of
:mod:`tenpy_ad.ops`.
"""
from .. import linalg
from .arithmetic import (abs, add, astype, conj, cos, divide, exp, imag, log, multiply,
                         negative, power, real, scale, scale_real, sign, sin, sqrt, subtract,
                         tanh)
from .creation import ones, zeros
from .indexing import getitem
from .products import einsum, matmul, tensordot
from .reductions import amax, max, sum
from .shape import broadcast_in_dim, broadcast_to, reshape, transpose

SURFACE = {
    "add": add, "subtract": subtract, "multiply": multiply, "divide": divide,
    "matmul": matmul, "power": power, "negative": negative, "abs": abs, "getitem": getitem,
    "sum": sum, "amax": amax, "reshape": reshape, "transpose": transpose, "scale": scale_real,
    "conj": conj, "real": real, "imag": imag, "astype": astype,
    "broadcast_in_dim": broadcast_in_dim,
}

__all__ = [name for name in dir() if not name.startswith("_") and name != "SURFACE"]

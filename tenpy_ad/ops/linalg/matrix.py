"""Matrix building blocks of the decomposition rules.

Each works on TracedTensors, eager Tensors and ndarrays alike (ndarrays take a direct NumPy
path: the eager backward pass runs these on arrays).
"""
from __future__ import annotations

import functools

import numpy as np

from ... import dtypes
from ...primitive import TracedTensor, bind, code_of_value, shape_of
from .. import elementwise as ew
from .. import structural as st
from ..contraction import einsum_strict


def adjoint(x):
    """Conjugate transpose of a matrix."""
    if type(x) is np.ndarray:
        return x.T.conj() if x.dtype.kind == "c" else x.T
    return ew.conj(st.transpose(x, (1, 0)))


def mm(a, b):
    """Matrix product."""
    ta, tb = type(a), type(b)
    if ta is np.ndarray and tb is np.ndarray:
        return a @ b
    if (ta is TracedTensor and tb is TracedTensor and a.ndim == 2 and b.ndim == 2
            and a.dtype_code == b.dtype_code):
        return einsum_strict("ij,jk->ik", a, b)    # the primitive itself: nothing to promote
    return a @ b


def row(v):
    """A vector as a 1 x k matrix."""
    if type(v) is np.ndarray:
        return v[None, :]
    return st.reshape(v, (1, shape_of(v)[0]))


def col(v):
    """A vector as a k x 1 matrix."""
    if type(v) is np.ndarray:
        return v[:, None]
    return st.reshape(v, (shape_of(v)[0], 1))


@functools.lru_cache(maxsize=256)
def frozen(kind: str, n: int, code: int = dtypes.FLOAT64) -> np.ndarray:
    """Read-only rule constants (so traced mode hashes each one once): the identity
    (``eye``), and the strictly lower (``tril``) or upper (``triu``) masks of ones."""
    array = {"eye": np.eye,
             "tril": lambda n: np.tril(np.ones((n, n)), -1),
             "triu": lambda n: np.triu(np.ones((n, n)), 1)}[kind](n)
    array = array.astype(dtypes.DTYPES[code])
    array.flags.writeable = False
    return array


def diag(x):
    """The diagonal of a square matrix."""
    if type(x) is np.ndarray:
        return np.diagonal(x)
    return einsum_strict("ij,ij->i", x, frozen("eye", shape_of(x)[0], code_of_value(x)))


def diag_embed(v):
    """The square matrix with diagonal ``v``."""
    if type(v) is np.ndarray:
        return np.diag(v)
    return einsum_strict("i,ij->ij", v, frozen("eye", shape_of(v)[0], code_of_value(v)))


def strictly_lower(x):
    return x * frozen("tril", shape_of(x)[0])


def strictly_upper(x):
    return x * frozen("triu", shape_of(x)[0])


def lorentz(x, eps, pin=None):
    """``x / (x^2 + eps)``, the broadened ``1/x``; adding ``pin`` (ones where x is 0 by
    construction) to the denominator keeps those entries 0 even for eps = 0."""
    denominator = x * x + eps if pin is None else x * x + eps + pin
    return x / denominator


def add_optional(a, b):
    """``a + b`` where ``None`` stands for zero."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def place_block(block, shape: tuple, offset: tuple):
    """``block`` placed at ``offset`` in a zero matrix of ``shape`` (``scatter_slice``, whose
    transpose is the slice, so the result stays differentiable)."""
    r, c = shape_of(block)
    if (r, c) == tuple(shape):
        return block
    spec = ((offset[0], offset[0] + r, 1), (offset[1], offset[1] + c, 1))
    return bind(st.scatter_slice_p, (tuple(shape), spec), block)


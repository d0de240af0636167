"""Matrix building blocks of the decomposition rules.

Every helper acts on the last two axes and carries any leading (batch) axes along, so one
rule serves a matrix and a stack of matrices alike; a 2-d operand takes exactly the path it
always took (the same nodes).  Each works on TracedTensors, eager Tensors and ndarrays
(ndarrays take a direct NumPy path: the eager backward pass runs these on arrays).
"""
from __future__ import annotations

import functools

import numpy as np

from ... import dtypes
from ...blas import matmul as blas_matmul
from ...primitive import TracedTensor, bind, bind1, code_of_value, shape_of
from .. import elementwise as ew
from .. import structural as st
from ..contraction import einsum_p, einsum_strict
from .gaps import outer_operands, spectral_gaps

_BATCH_LETTERS = "ABCDEFGHLMNOPQRSTUVWXYZ"


@functools.lru_cache(maxsize=64)
def batch_letters(ndim: int) -> str:
    """Einsum letters for the ``ndim - 2`` batch axes of a stack of matrices (upper case,
    so they never meet the matrix letters)."""
    return _BATCH_LETTERS[:ndim - 2]


@functools.lru_cache(maxsize=64)
def _swap_last(ndim: int) -> tuple:
    return tuple(range(ndim - 2)) + (ndim - 1, ndim - 2)


def matrix_transpose(x):
    """Transpose of the last two axes (no conjugation)."""
    if type(x) is np.ndarray:
        return x.T if x.ndim == 2 else np.swapaxes(x, -1, -2)
    return st.transpose(x, _swap_last(len(shape_of(x))))


def adjoint(x):
    """Conjugate transpose of (each) matrix."""
    if type(x) is np.ndarray:
        x = x.T if x.ndim == 2 else np.swapaxes(x, -1, -2)     # .T: the cheap common case
        return x.conj() if x.dtype.kind == "c" else x
    if type(x) is TracedTensor and x.ndim == 2:                # what transpose binds
        x = bind1(st.transpose_p, (1, 0), x)
        return _conj_if_complex(x)
    return ew.conj(st.transpose(x, _swap_last(len(shape_of(x)))))


def adjoint_mm(a, b):
    """``a^H @ b``; of two traced matrices one einsum (no transpose node)."""
    if (type(a) is TracedTensor and type(b) is TracedTensor and a.ndim == 2 and b.ndim == 2
            and a.dtype_code == b.dtype_code):
        return bind(einsum_p, "ji,jk->ik", _conj_if_complex(a), b)
    return mm(adjoint(a), b)


def mm_adjoint(a, b):
    """``a @ b^H``; of two traced matrices one einsum (no transpose node)."""
    if (type(a) is TracedTensor and type(b) is TracedTensor and a.ndim == 2 and b.ndim == 2
            and a.dtype_code == b.dtype_code):
        return bind(einsum_p, "ij,kj->ik", a, _conj_if_complex(b))
    return mm(a, adjoint(b))


def _conj_if_complex(x):
    return ew.conj(x) if x.dtype_code > dtypes.FLOAT64 else x


def mm(a, b):
    """Matrix product (of stacks of one batch shape, or with NumPy's ``@`` broadcasting)."""
    ta, tb = type(a), type(b)
    if ta is np.ndarray and tb is np.ndarray:
        return blas_matmul(a, b)            # with the BLAS threads its size calls for
    if ta is TracedTensor and tb is TracedTensor and a.dtype_code == b.dtype_code:
        if a.ndim == 2 and b.ndim == 2:                # the primitive: nothing to promote
            return bind(einsum_p, "ij,jk->ik", a, b)
        if a.ndim == b.ndim and a.shape[:-2] == b.shape[:-2]:
            z = batch_letters(a.ndim)
            return einsum_strict(f"{z}ij,{z}jk->{z}ik", a, b)
    return a @ b


def row(v):
    """A (stack of) vector(s) as 1 x k matrices."""
    if type(v) is np.ndarray:
        return v[None, :] if v.ndim == 1 else v[..., None, :]
    shape = shape_of(v)
    return st.reshape(v, shape[:-1] + (1, shape[-1]))


def col(v):
    """A (stack of) vector(s) as k x 1 matrices."""
    if type(v) is np.ndarray:
        return v[:, None] if v.ndim == 1 else v[..., :, None]
    shape = shape_of(v)
    return st.reshape(v, shape + (1,))


@functools.lru_cache(maxsize=256)
def frozen(kind: str, n: int, code: int = dtypes.FLOAT64) -> np.ndarray:
    """Read-only rule constants (so traced mode hashes each one once): the identity
    (``eye``), the strictly lower (``tril``) or upper (``triu``) masks of ones, and the
    weights ``W`` of :func:`hermitian_from_triangle` (``lower_half``, ``upper_half``)."""
    array = {"eye": np.eye,
             "tril": lambda n: np.tril(np.ones((n, n)), -1),
             "triu": lambda n: np.triu(np.ones((n, n)), 1),
             "lower_half": lambda n: np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n),
             "upper_half": lambda n: np.triu(np.ones((n, n)), 1) + 0.5 * np.eye(n)}[kind](n)
    array = array.astype(dtypes.DTYPES[code])
    array.flags.writeable = False
    return array


def diag(x):
    """The diagonal of (each) square matrix."""
    if type(x) is np.ndarray:
        return np.diagonal(x) if x.ndim == 2 else np.diagonal(x, axis1=-2, axis2=-1)
    shape = shape_of(x)
    eye = frozen("eye", shape[-1], code_of_value(x))
    if len(shape) == 2:
        return einsum_strict("ij,ij->i", x, eye)
    z = batch_letters(len(shape))
    return einsum_strict(f"{z}ij,ij->{z}i", x, eye)


def diag_embed(v):
    """The square matrix (or stack) with diagonal ``v``."""
    if type(v) is np.ndarray:
        if v.ndim == 1:
            return np.diag(v)
        out = np.zeros(v.shape + v.shape[-1:], dtype=v.dtype)
        np.einsum("...ii->...i", out)[...] = v
        return out
    shape = shape_of(v)
    eye = frozen("eye", shape[-1], code_of_value(v))
    if len(shape) == 1:
        return einsum_strict("i,ij->ij", v, eye)
    z = batch_letters(len(shape) + 1)
    return einsum_strict(f"{z}i,ij->{z}ij", v, eye)


def mask(kind: str, x) -> np.ndarray:
    """The :func:`frozen` constant ``kind`` for the matrices of ``x``, in ``x``'s dtype
    (a float64 constant would promote float32 operands)."""
    return frozen(kind, shape_of(x)[-1], code_of_value(x))


def strictly_lower(x):
    return x * mask("tril", x)


def strictly_upper(x):
    return x * mask("triu", x)


def hermitian_from_triangle(x, lower: bool):
    """The Hermitian matrix LAPACK sees when it reads only one triangle of ``x``: that
    triangle, its conjugate mirror, and the real part of the diagonal.  It is ``M + M^H``
    with ``M = x o W`` (``W``: ones strictly inside the triangle, 1/2 on the diagonal)."""
    half = x * mask("lower_half" if lower else "upper_half", x)
    return half + adjoint(half)


def hermitian_from_triangle_transpose(g, lower: bool):
    """The adjoint (for Re<a, b>) of :func:`hermitian_from_triangle`: ``(g + g^H) o W``."""
    return (g + adjoint(g)) * mask("lower_half" if lower else "upper_half", g)


def lorentz(x, eps, pin=None):
    """``x / (x^2 + eps)``, the broadened ``1/x``; adding ``pin`` (ones where x is 0 by
    construction) to the denominator keeps those entries 0 even for eps = 0."""
    denominator = x * x + eps if pin is None else x * x + eps + pin
    return x / denominator


def lorentz_complex(x, eps, pin=None, conjugate: bool = False):
    """The broadened ``1/x`` of a complex ``x``: ``conj(x) / (|x|^2 + eps)`` (``pin`` as
    for :func:`lorentz`); with ``conjugate`` its complex conjugate."""
    size = ew.real(x * ew.conj(x)) + eps
    if pin is not None:
        size = size + pin
    return (x if conjugate else ew.conj(x)) / ew.convert(size, code_of_value(x))


def largest_abs(x):
    """The largest ``|x|`` over all entries (the scale a gauge check compares with)."""
    return st.reduce_max(ew.abs(x), tuple(range(len(shape_of(x)))))


def add_optional(a, b):
    """``a + b`` where ``None`` stands for zero."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def place_block(block, shape: tuple, offset: tuple):
    """``block`` placed at ``offset`` in a zero matrix of ``shape`` (the last two axes;
    batch axes are kept) with ``scatter_slice``, whose transpose is the slice, so the
    result stays differentiable."""
    full = shape_of(block)
    r, c = full[-2:]
    if (r, c) == tuple(shape):
        return block
    spec = tuple((0, d, 1) for d in full[:-2]) + (
        (offset[0], offset[0] + r, 1), (offset[1], offset[1] + c, 1))
    return bind(st.scatter_slice_p, (full[:-2] + tuple(shape), spec), block)


# ---------------------------------------------------- spectral gaps (svd, eigh, partial)

def gap_factors(s_rows, s_cols, eps, same_indices: bool):
    """``(Fm + Fp, Fm - Fp)`` of the broadened ``Fm = 1/(2(s_j - s_i))`` and ``Fp =
    1/(2(s_j + s_i))`` for ``s_i`` in ``s_rows``, ``s_j`` in ``s_cols``.

    ``s_j / (s_j^2 - s_i^2)`` and ``s_i / (s_j^2 - s_i^2)`` are split into these partial
    fractions before broadening: at a degenerate pair the difference term vanishes while
    the sum term stays, which is the derivative of losses invariant under joint rotations
    of the degenerate singular vectors whose difference-term numerator vanishes near the
    pair too (``u vh``, projectors, TRG's ``u sqrt(s)`` halves of the Ising model); for
    ``u f(s) vh`` it misses ``f'(s)`` (:mod:`.degenerate_guard`).
    With ``same_indices`` (row i and column i are the same triplet) the entries i == j are
    pinned to 0, also for eps = 0 (that diagonal belongs to the ``ds`` and phase terms).
    One primitive (:mod:`.gaps`).
    """
    return spectral_gaps(s_rows, s_cols, eps, same_indices)


def combine_gaps(f_sum, f_difference, a, b):
    """``Fm o (A + B) + Fp o (A - B) = (Fm + Fp) o A + (Fm - Fp) o B`` from
    :func:`gap_factors`' pair, with None for zero blocks."""
    if a is None and b is None:
        return None
    if b is None:
        return f_sum * a
    if a is None:
        return f_difference * b
    return f_sum * a + f_difference * b


def broadened_inverse_gaps(w, eps):
    """``1/(w_j - w_i)`` off the diagonal, broadened; 0 on it."""
    rows, cols = outer_operands(w, w)
    return lorentz(cols - rows, eps, frozen("eye", shape_of(w)[-1], code_of_value(w)))

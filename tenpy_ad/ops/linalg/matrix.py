"""Matrix building blocks of the decomposition rules.

Every helper acts on the last two axes and carries any leading (batch) axes along, so one
rule serves a matrix and a stack of matrices alike; a 2-d operand takes exactly the path it
always took (the same nodes).  Each binds primitives on any operand -- TracedTensors,
eager Tensors and ndarrays alike: on ndarrays (the eager backward pass) ``bind`` folds
the transposes, reshapes, products and diagonals into NumPy's own calls
(``_core/dispatch.pxi``).
"""
from __future__ import annotations

import functools

import numpy as np

from ... import dtypes
from ..._compiled import _core
from ...primitive import bind1, bind2, code_of_value, shape_of
from .. import elementwise as ew
from .. import structural as st
from ..contraction import einsum_p
from ..piecewise import maximum
from .gaps import outer_operands, spectral_gaps

_BATCH_LETTERS = "ABCDEFGHLMNOPQRSTUVWXYZ"


@functools.lru_cache(maxsize=64)
def batch_letters(ndim: int) -> str:
    """Einsum letters for the ``ndim - 2`` batch axes of a stack of matrices (upper case,
    so they never meet the matrix letters)."""
    return _BATCH_LETTERS[:ndim - 2]


def _by_rank(form) -> tuple:
    """``form(letters)`` for every rank of a matrix or stack (index: its ndim)."""
    return (None, None) + tuple(form(_BATCH_LETTERS[:n]) for n in
                                range(len(_BATCH_LETTERS) + 1))


# per ndim: the permutation swapping the last two axes, and the einsums of the products
_SWAP_LAST = (None, None) + tuple(tuple(range(n)) + (n + 1, n) for n in
                                  range(len(_BATCH_LETTERS) + 1))
_MM = _by_rank(lambda z: f"{z}ij,{z}jk->{z}ik")
_ADJOINT_MM = _by_rank(lambda z: f"{z}ji,{z}jk->{z}ik")
_MM_ADJOINT = _by_rank(lambda z: f"{z}ij,{z}kj->{z}ik")
_DIAG = _by_rank(lambda z: f"{z}ij,ij->{z}i")
_DIAG_EMBED = (None,) + _by_rank(lambda z: f"{z}i,ij->{z}ij")[2:]     # by the vector's


def matrix_transpose(x):
    """Transpose of the last two axes (no conjugation)."""
    return bind1(st.transpose_p, _SWAP_LAST[x.ndim], x)


def adjoint(x):
    """Conjugate transpose of (each) matrix."""
    return ew.conj(bind1(st.transpose_p, _SWAP_LAST[x.ndim], x))


def _one_stack(a, b) -> bool:
    """Whether ``a`` and ``b`` are matrices, or stacks of one batch shape, of one dtype."""
    n = a.ndim
    return n == b.ndim and a.dtype == b.dtype and (n == 2 or a.shape[:-2] == b.shape[:-2])


def adjoint_mm(a, b):
    """``a^H @ b``, one einsum (no transpose)."""
    if a.ndim == 2 == b.ndim and a.dtype is b.dtype or _one_stack(a, b):
        return bind2(einsum_p, _ADJOINT_MM[a.ndim], ew.conj(a), b)
    return mm(adjoint(a), b)


def mm_adjoint(a, b):
    """``a @ b^H``, one einsum (no transpose)."""
    if a.ndim == 2 == b.ndim and a.dtype is b.dtype or _one_stack(a, b):
        return bind2(einsum_p, _MM_ADJOINT[a.ndim], a, ew.conj(b))
    return mm(a, adjoint(b))


def mm(a, b):
    """Matrix product (of stacks of one batch shape, or with NumPy's ``@`` broadcasting and
    promotion)."""
    if a.dtype is b.dtype and a.ndim == 2 == b.ndim:       # the common case, at a glance
        return bind2(einsum_p, "ij,jk->ik", a, b)
    if _one_stack(a, b):
        return bind2(einsum_p, _MM[a.ndim], a, b)
    return a @ b


def row(v):
    """A (stack of) vector(s) as 1 x k matrices."""
    shape = shape_of(v)
    return bind1(st.reshape_p, shape[:-1] + (1, shape[-1]), v)


def col(v):
    """A (stack of) vector(s) as k x 1 matrices."""
    return bind1(st.reshape_p, shape_of(v) + (1,), v)


@functools.lru_cache(maxsize=256)
def frozen(kind: str, n: int, code: int = dtypes.FLOAT64) -> np.ndarray:
    """Read-only rule constants (so traced mode hashes each one once): the identity
    (``eye``, the core's, which ``bind`` recognises), the strictly lower (``tril``) or
    upper (``triu``) masks of ones, and the weights ``W`` of
    :func:`hermitian_from_triangle` (``lower_half``, ``upper_half``)."""
    if kind == "eye":
        return _core.identity_matrix(n, code)
    array = {"tril": lambda n: np.tril(np.ones((n, n)), -1),
             "triu": lambda n: np.triu(np.ones((n, n)), 1),
             "lower_half": lambda n: np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n),
             "upper_half": lambda n: np.triu(np.ones((n, n)), 1) + 0.5 * np.eye(n)}[kind](n)
    array = array.astype(dtypes.DTYPES[code])
    array.flags.writeable = False
    return array


def diag(x):
    """The diagonal of (each) square matrix."""
    shape = shape_of(x)
    return bind2(einsum_p, _DIAG[len(shape)], x, frozen("eye", shape[-1], code_of_value(x)))


def diag_embed(v):
    """The square matrix (or stack) with diagonal ``v``."""
    shape = shape_of(v)
    return bind2(einsum_p, _DIAG_EMBED[len(shape)], v,
                 frozen("eye", shape[-1], code_of_value(v)))


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


def block_frechet(f, a, e):
    """``L_f(a, e)``, the derivative of the matrix function ``f`` at ``a`` along ``e``:
    the upper right block of ``f([[a, e], [0, a]])``.  ``e`` is first scaled, per matrix,
    to a's largest entry (at least 1) and the block scaled back: L is linear in ``e``, so
    this is exact, while an ``e`` far larger than ``a`` (a cotangent that an ``exp``
    downstream made huge) would set the block's scaling -- expm's squarings, logm's
    square roots -- and swamp ``a``'s part in rounding.  The scale is a constant
    (``stop_gradient``): by the same linearity the derivatives of any order are exact."""
    n = shape_of(a)[-1]
    size = (2 * n, 2 * n)
    largest = _largest_entry(a)
    scale = _largest_entry(e) / maximum(largest, st.full_like(largest, 1.0))
    tiny = 4.0 * float(np.finfo(dtypes.DTYPES[code_of_value(e)]).tiny)   # (e = 0)
    scale = ew.stop_gradient(maximum(scale, st.full_like(scale, tiny)))
    block = (place_block(a, size, (0, 0)) + place_block(e / scale, size, (0, n))
             + place_block(a, size, (n, n)))
    return f(block)[..., :n, n:] * scale


def _largest_entry(x):
    """Per matrix, the largest magnitude, shaped to broadcast against the matrices."""
    largest = st.reduce_max(ew.abs(x), (x.ndim - 2, x.ndim - 1))
    return largest.reshape(tuple(shape_of(x)[:-2]) + (1, 1))


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
    return bind1(st.scatter_slice_p, (full[:-2] + tuple(shape), spec), block)


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

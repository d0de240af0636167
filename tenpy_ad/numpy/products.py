"""Products and contractions: ``matmul`` (``@``), ``tensordot``, ``einsum``."""
from __future__ import annotations

import builtins
import numbers
from functools import lru_cache

import numpy as np

from .. import dtypes
from ..errors import ShapeError
from ..ops import contraction as ct_ops
from ..ops import structural as st
from ..primitive import TracedTensor, describe, shape_of
from ._dispatch import implements
from ._operands import broadcast_shapes, is_tensor, operand, result_code
from .shaping import broadcast_to


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def matmul(a, b):
    """Matrix product with NumPy's ``@`` rules (1-d operands, broadcast batch axes)."""
    if not (is_tensor(a) or is_tensor(b)):
        return np.matmul(a, b)
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) == 0 or len(sb) == 0:
        raise ShapeError("matmul: operands must have at least one axis, got "
                         f"{describe(a)} and {describe(b)}")
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if k_a != k_b:
        raise ShapeError(f"matmul: contracted axes differ: {describe(a)} @ {describe(b)}")
    traced = type(a) is TracedTensor or type(b) is TracedTensor
    code = result_code("matmul", a, b)
    a, b = operand(a, code, traced), operand(b, code, traced)
    if len(sa) == 1 and len(sb) == 1:
        return ct_ops.einsum_strict("i,i->", a, b)
    if len(sa) == 1:
        batch = sb[:-2]
        letters = _LETTERS[:len(batch)]
        return ct_ops.einsum_strict(f"y,{letters}yz->{letters}z", a, b)
    if len(sb) == 1:
        batch = sa[:-2]
        letters = _LETTERS[:len(batch)]
        return ct_ops.einsum_strict(f"{letters}xy,y->{letters}x", a, b)
    batch = broadcast_shapes("matmul", sa[:-2], sb[:-2])
    a = broadcast_to(a, batch + sa[-2:])
    b = broadcast_to(b, batch + sb[-2:])
    letters = _LETTERS[:len(batch)]
    return ct_ops.einsum_strict(f"{letters}xy,{letters}yz->{letters}xz", a, b)


def tensordot(a, b, axes=2):
    """``np.tensordot``: contract ``axes`` of ``a`` with ``axes`` of ``b``."""
    if not (is_tensor(a) or is_tensor(b)):
        return np.tensordot(a, b, axes)
    na, nb = len(shape_of(a)), len(shape_of(b))
    if isinstance(axes, numbers.Integral):
        axes_a, axes_b = list(range(na - axes, na)), list(range(axes))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, numbers.Integral) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, numbers.Integral) else list(axes_b)
    if len(axes_a) != len(axes_b):
        raise ShapeError(f"tensordot: {len(axes_a)} axes of a against {len(axes_b)} of b")
    axes_a = [x % na for x in axes_a]
    axes_b = [x % nb for x in axes_b]
    letters_a = list(_LETTERS[:na])
    letters_b = list(_LETTERS[na:na + nb])
    for i, j in zip(axes_a, axes_b):
        letters_b[j] = letters_a[i]
    out = [c for i, c in enumerate(letters_a) if i not in axes_a]
    out += [c for j, c in enumerate(letters_b) if j not in axes_b]
    return einsum(f"{''.join(letters_a)},{''.join(letters_b)}->{''.join(out)}", a, b)


def _expand_ellipsis(name, subscripts, shapes):
    if "->" in subscripts:
        lhs, out = subscripts.split("->")
    else:
        lhs, out = subscripts, None
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ShapeError(f"einsum '{subscripts}': {len(terms)} terms for {len(shapes)} "
                         "operands")
    used = set(subscripts)
    spare = [c for c in _LETTERS if c not in used]
    ell_rank = 0
    for term, shape in zip(terms, shapes):
        if "..." in term:
            ell_rank = builtins.max(ell_rank, len(shape) - (len(term) - 3))
    ell = "".join(spare[:ell_rank])
    expanded = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            k = len(shape) - (len(term) - 3)
            term = term.replace("...", ell[ell_rank - k:] if k else "")
        expanded.append(term)
    if out is None:
        counts = {}
        for c in "".join(expanded):
            counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    else:
        if ell and "..." not in out:
            raise ShapeError(f"einsum '{subscripts}': the output must keep the '...' axes "
                             "(write '...' in it)")
        out = out.replace("...", ell)
    return expanded, out, ell


@lru_cache(maxsize=1024)
def _contraction_path(terms: tuple, out: str, shapes: tuple):
    dummies = [np.broadcast_to(np.empty((), dtype=np.float64), s) for s in shapes]
    path, _ = np.einsum_path(",".join(terms) + "->" + out, *dummies, optimize="greedy")
    return tuple(tuple(step) for step in path[1:])


def _take_diagonal(x, term: str):
    """``x`` with the first repeated letter of ``term`` reduced to its diagonal."""
    letter = next(c for c in term if term.count(c) > 1)
    p = term.index(letter)
    q = term.index(letter, p + 1)
    rest = [a for a in range(len(term)) if a not in (p, q)]
    x = st.transpose(x, tuple(rest + [p, q]))
    shape = shape_of(x)
    n = shape[-1]
    x = st.reshape(x, shape[:-2] + (n * n,))
    spec = tuple((0, d, 1) for d in shape[:-2]) + (((0, n * n, n + 1),) if n else ((0, 0, 1),))
    return st.slice_axes(x, spec), "".join(term[a] for a in rest) + letter


def einsum(subscripts: str, *operands):
    """``np.einsum`` over tensors, lowered onto binary contractions.

    Supports implicit output, ``...``, repeated letters inside an operand (traces and
    diagonals) and any number of operands (contracted pairwise along ``np.einsum_path``).
    """
    if not any(is_tensor(x) for x in operands):
        if len(operands) == 1:
            return np.einsum(subscripts, operands[0])
        operands = [np.asarray(x) for x in operands]     # contracted pairwise below (BLAS)
    subscripts = subscripts.replace(" ", "")
    shapes = [tuple(shape_of(x)) for x in operands]
    terms, out, ellipsis_letters = _expand_ellipsis("einsum", subscripts, shapes)
    sizes = ct_ops.letter_sizes(subscripts, terms, shapes, ellipsis_letters)
    if len(set(out)) != len(out) or any(c not in sizes for c in out):
        raise ShapeError(f"einsum '{subscripts}': invalid output '{out}'")
    traced = any(type(x) is TracedTensor for x in operands)
    code = result_code("einsum", *operands)
    if any(is_tensor(x) for x in operands):
        operands = [operand(x, code, traced) for x in operands]
    else:
        operands = [x.astype(dtypes.DTYPES[code], copy=False) for x in operands]
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        target = tuple(sizes[c] for c in term)
        if target != shape:
            operands[k] = st.broadcast_to(operands[k], target)
    # a letter repeated inside one operand selects a diagonal: take it exactly (a strided
    # slice of the merged axes, so no inf * 0 appears) before contracting
    terms = list(terms)
    for i in range(len(terms)):
        while len(set(terms[i])) != len(terms[i]):
            operands[i], terms[i] = _take_diagonal(operands[i], terms[i])
    if len(operands) <= 2:
        return ct_ops.einsum_strict(",".join(terms) + "->" + out, *operands)
    shapes = tuple(tuple(shape_of(x)) for x in operands)
    for step in _contraction_path(tuple(terms), out, shapes):
        picked = sorted(step, reverse=True)
        group_terms = [terms.pop(k) for k in picked][::-1]
        group_ops = [operands.pop(k) for k in picked][::-1]
        # a step may join more than two operands: contract them left to right
        acc_term, acc = group_terms[0], group_ops[0]
        for i in range(1, len(group_terms)):
            rest = "".join(terms) + out + "".join(group_terms[i + 1:])
            keep = "".join(dict.fromkeys(c for c in acc_term + group_terms[i] if c in rest))
            acc = ct_ops.einsum_strict(f"{acc_term},{group_terms[i]}->{keep}", acc,
                                       group_ops[i])
            acc_term = keep
        terms.append(acc_term)
        operands.append(acc)
    return ct_ops.einsum_strict(f"{terms[0]}->{out}", operands[0])


implements(np.matmul)(matmul)
implements(np.tensordot)(tensordot)
implements(np.einsum)(einsum)

__all__ = ['matmul', 'tensordot', 'einsum']

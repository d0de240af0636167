"""Products and contractions: ``matmul`` (``@``), ``dot``, ``vdot``, ``inner``, ``outer``,
``kron``, ``cross``, ``tensordot``, ``einsum`` (subscripts or sublists), ``einsum_path``,
``vecdot``, ``matvec``, ``vecmat``, ``multi_dot``.

They apply NumPy's shape rules and promotion, then lower onto the ``einsum`` primitive (one
batched BLAS matmul per pair of operands) and so share its derivative; products with a
scalar multiply, ``cross`` combines products of components."""
from __future__ import annotations

import builtins
import numbers
from functools import lru_cache

import numpy as np

from ..errors import ArgumentError, ArgumentValueError, ShapeError
from ..ops import contraction as ct_ops
from ..ops import elementwise as ew
from ..ops import structural as st
from ..primitive import as_array_result, describe, is_eager, shape_of
from ._arrays import as_array, tensor_or_array
from ._dispatch import implements, written_out
from ._operands import broadcast_shapes, common, is_tensor, normalize_axis, tensor_among
from .arithmetic import multiply, subtract
from .indexing import getitem
from .joining import stack
from .shaping import reshape, transpose
from ._ufuncs import new_result
from ._views import in_layout, selected


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SUMMED = _LETTERS[-1]          # the summed letter of dot/inner (operands have < 51 axes)


@implements("numpy.matmul", "numpy.linalg.matmul")
def matmul(a, b):
    """Matrix product with NumPy's ``@`` rules (1-d operands, broadcast batch axes)."""
    a, b = as_array(a), as_array(b)
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) == 0 or len(sb) == 0:
        raise ShapeError("matmul: operands must have at least one axis, got "
                         f"{describe(a)} and {describe(b)}")
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if k_a != k_b:
        raise ShapeError(f"matmul: contracted axes differ: {describe(a)} @ {describe(b)}")
    a, b = common("matmul", a, b)
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
    a = st.broadcast_to(a, batch + sa[-2:])
    b = st.broadcast_to(b, batch + sb[-2:])
    letters = _LETTERS[:len(batch)]
    return ct_ops.einsum_strict(f"{letters}xy,{letters}yz->{letters}xz", a, b)


@implements("numpy.tensordot", "numpy.linalg.tensordot")
def tensordot(a, b, axes=2):
    """``np.tensordot``: contract ``axes`` of ``a`` with ``axes`` of ``b``."""
    a, b = as_array(a), as_array(b)
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
    return as_array_result(       # NumPy's tensordot reshapes: a 0-d result is an array
        einsum(f"{''.join(letters_a)},{''.join(letters_b)}->{''.join(out)}", a, b))


def _no_out(name: str, out) -> None:
    if out is not None:
        raise ArgumentError(f"{name}: out= is taken by keyword (out=t writes the result into t)")


@implements("numpy.dot")
def dot(a, b, out=None):
    """``np.dot``: a product for every ndim, by NumPy's rules — scalars multiply, 1-d
    with 1-d is the inner product, 2-d with 2-d the matrix product, N-d with 1-d sums over
    the last axes, N-d with M-d sums the last axis of ``a`` with the second-to-last of
    ``b`` (no broadcasting: the result has ``a``'s other axes, then ``b``'s)."""
    _no_out("dot", out)
    a, b = as_array(a), as_array(b)
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        return multiply(a, b)
    k_b = 0 if len(sb) == 1 else len(sb) - 2
    if sa[-1] != sb[k_b]:
        raise ShapeError(f"dot: shapes {list(sa)} and {list(sb)} not aligned: {sa[-1]} (dim "
                         f"{len(sa) - 1}) != {sb[k_b]} (dim {k_b})")
    term_a = _LETTERS[:len(sa) - 1] + _SUMMED
    term_b = _LETTERS[len(sa) - 1:len(sa) + len(sb) - 2]
    out_term = term_a[:-1] + term_b
    term_b = term_b[:k_b] + _SUMMED + term_b[k_b:]
    return einsum(f"{term_a},{term_b}->{out_term}", a, b)


@implements("numpy.vdot")
def vdot(a, b):
    """``np.vdot``: the dot product of the flattened arrays, conjugating the first."""
    a, b = tensor_or_array(a, "vdot"), tensor_or_array(b, "vdot")
    size_a, size_b = _size(a), _size(b)
    if size_a != size_b:
        raise ShapeError(f"vdot: operands {describe(a)} and {describe(b)} differ in size")
    return einsum("i,i->", _flat(ew.conj(a)), _flat(b))


def _size(x) -> int:
    return int(np.prod(shape_of(x), dtype=np.int64))


def _flat(x):
    return st.reshape(x, (_size(x),))


@implements("numpy.inner")
def inner(a, b):
    """``np.inner``: sums over the last axes (no conjugation); scalars multiply.  The
    result has ``a``'s other axes, then ``b``'s."""
    a, b = as_array(a), as_array(b)
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        return multiply(a, b)
    if sa[-1] != sb[-1]:
        raise ShapeError(f"inner: the last axes of {describe(a)} and {describe(b)} differ")
    term_a = _LETTERS[:len(sa) - 1]
    term_b = _LETTERS[len(sa) - 1:len(sa) + len(sb) - 2]
    return einsum(f"{term_a}{_SUMMED},{term_b}{_SUMMED}->{term_a}{term_b}", a, b)


@implements("numpy.outer")
def outer(a, b, out=None):
    """``np.outer``: ``a.ravel()[:, None] * b.ravel()[None, :]``."""
    _no_out("outer", out)
    a, b = tensor_or_array(a, "outer"), tensor_or_array(b, "outer")
    return einsum("i,j->ij", _flat(a), _flat(b))


@implements("numpy.kron")
def kron(a, b):
    """``np.kron``: the Kronecker product; the operand with fewer axes gets leading axes
    of length 1 first."""
    a, b = tensor_or_array(a, "kron"), tensor_or_array(b, "kron")
    ndim = max(len(shape_of(a)), len(shape_of(b)))
    if ndim == 0:
        return multiply(a, b)
    sa = (1,) * (ndim - len(shape_of(a))) + shape_of(a)
    sb = (1,) * (ndim - len(shape_of(b))) + shape_of(b)
    a, b = st.reshape(a, sa), st.reshape(b, sb)
    term_a, term_b = _LETTERS[:ndim], _LETTERS[ndim:2 * ndim]
    interleaved = "".join(i + j for i, j in zip(term_a, term_b))
    product = einsum(f"{term_a},{term_b}->{interleaved}", a, b)
    return st.reshape(product, tuple(i * j for i, j in zip(sa, sb)))


@implements("numpy.cross")
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``np.cross`` of 2- or 3-vectors along ``axisa``/``axisb`` (``axis`` sets all three);
    the other axes broadcast.  Two 2-vectors give the scalar z component."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _vectors_last(a, axisa), _vectors_last(b, axisb)
    da, db = shape_of(a)[-1], shape_of(b)[-1]
    if da not in (2, 3) or db not in (2, 3):
        raise ShapeError("cross: incompatible dimensions for cross product (dimension must "
                         f"be 2 or 3), got {describe(a)} and {describe(b)} along the axis")
    u = [getitem(a, (Ellipsis, i)) for i in range(da)]
    v = [getitem(b, (Ellipsis, i)) for i in range(db)]
    z = subtract(multiply(u[0], v[1]), multiply(u[1], v[0]))
    if da == 2 and db == 2:
        return z
    x = _minor(u, v, 1, 2)
    y = _minor(u, v, 2, 0)
    result = stack([x, y, z], axis=-1)
    ndim = len(shape_of(result))
    return transpose(result, _moved(ndim - 1, normalize_axis("cross", axisc, ndim), ndim))


def _vectors_last(x, axis: int):
    x = tensor_or_array(x, "cross")
    ndim = len(shape_of(x))
    return transpose(x, _moved(normalize_axis("cross", axis, ndim), ndim - 1, ndim))


def _moved(source: int, destination: int, ndim: int) -> tuple:
    """The permutation that moves axis ``source`` to ``destination``."""
    order = [k for k in range(ndim) if k != source]
    order.insert(destination, source)
    return tuple(order)


def _minor(u, v, i: int, j: int):
    """``u_i v_j - u_j v_i``, where a missing third component is 0."""
    first = multiply(u[i], v[j]) if i < len(u) and j < len(v) else None
    second = multiply(u[j], v[i]) if j < len(u) and i < len(v) else None
    if second is None:
        return first
    return ew.neg(second) if first is None else subtract(first, second)


def _moved_to_end(x, axis: int):
    x = tensor_or_array(x, "vecdot")
    ndim = len(shape_of(x))
    return transpose(x, _moved(normalize_axis("vecdot", axis, ndim), ndim - 1, ndim))


@implements("numpy.vecdot", "numpy.linalg.vecdot")
def vecdot(x1, x2, /, *, axis=-1):
    """``np.vecdot``: the dot product along ``axis`` conjugating ``x1``, the other axes
    broadcast."""
    a, b = _moved_to_end(x1, axis), _moved_to_end(x2, axis)
    return einsum("...i,...i->...", ew.conj(a), b)


@implements("numpy.matvec")
def matvec(x1, x2, /):
    """``np.matvec``: matrices ``(..., m, n)`` times vectors ``(..., n)``, broadcast."""
    return einsum("...ij,...j->...i", x1, x2)


@implements("numpy.vecmat")
def vecmat(x1, x2, /):
    """``np.vecmat``: conjugated vectors ``(..., n)`` times matrices ``(..., n, m)``."""
    return einsum("...j,...jk->...k", ew.conj(tensor_or_array(x1, "vecmat")), x2)


@implements("numpy.einsum_path")
def einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    """``np.einsum_path`` of tensors: the contraction order depends on shapes only.  In
    the sublist form the first operand comes as ``subscripts``."""
    def stand_in(x):
        return np.broadcast_to(np.zeros((), dtype=x.dtype), shape_of(x)) if is_tensor(x) else x
    return np.einsum_path(stand_in(subscripts), *map(stand_in, operands), optimize=optimize,
                          einsum_call=einsum_call)


@implements("numpy.linalg.multi_dot")
def multi_dot(arrays, *, out=None):
    """The product of several matrices in the cheapest order (NumPy's ``multi_dot``: the
    first may be a row vector, the last a column vector)."""
    if out is not None:
        raise ArgumentError("multi_dot: out= is taken by keyword (out=t writes the result into t)")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ArgumentValueError("multi_dot: expecting at least two arrays")
    if len(arrays) == 2:
        return matmul(arrays[0], arrays[1])
    first_vector = len(shape_of(arrays[0])) == 1
    last_vector = len(shape_of(arrays[-1])) == 1
    if first_vector:
        arrays[0] = reshape(arrays[0], (1, -1))
    if last_vector:
        arrays[-1] = reshape(arrays[-1], (-1, 1))
    for k, x in enumerate(arrays):
        if len(shape_of(x)) != 2:
            raise ShapeError(f"multi_dot: array {k} has shape {list(shape_of(x))}; all but "
                             "the first and last must be 2-d")
    result = _chain_product(arrays, _chain_order([shape_of(x) for x in arrays]))
    if first_vector and last_vector:
        return reshape(result, ())
    if first_vector or last_vector:
        return reshape(result, (-1,))
    return result


def _chain_order(shapes) -> list:
    """``split[i][j]``: where the cheapest product of matrices ``i..j`` splits (the classic
    dynamic programme over the chain's dimensions)."""
    dims = [shapes[0][0]] + [s[1] for s in shapes]
    n = len(shapes)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain_product(arrays, split):
    """The product along ``split``, with an explicit stack (no recursion)."""
    results = {}
    stack = [(0, len(arrays) - 1)]
    while stack:
        i, j = stack[-1]
        if i == j:
            results[i, j] = arrays[i]
            stack.pop()
            continue
        k = split[i][j]
        pending = [part for part in ((i, k), (k + 1, j)) if part not in results]
        if pending:
            stack.extend(pending)
            continue
        results[i, j] = matmul(results.pop((i, k)), results.pop((k + 1, j)))
        stack.pop()
    return results[0, len(arrays) - 1]


@lru_cache(maxsize=4096)
def _check_subscripts(subscripts: str) -> None:
    """Letters, commas, one ``->`` and ``...`` only (NumPy refuses anything else); a
    passing string is remembered (errors are raised again)."""
    if subscripts.count("->") > 1:
        raise ArgumentValueError(f"einsum '{subscripts}': more than one '->'")
    body = subscripts.replace("...", "").replace("->", "").replace(",", "")
    for c in body:
        if c not in _LETTERS:
            raise ArgumentValueError(f"einsum '{subscripts}': invalid subscript {c!r} "
                                     "(subscripts are letters, as in NumPy)")


def _expand_ellipsis(name, subscripts, shapes):
    _check_subscripts(subscripts)
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


@implements("numpy.einsum", fallback=False)      # arrays are contracted as tensors are
def einsum(*operands, out=None, optimize=False, dtype=None, order="K", casting="safe"):
    """``np.einsum`` over tensors, lowered onto binary contractions.

    ``einsum("ij,jk->ik", a, b)`` or the sublist form ``einsum(a, [0, 1], b, [1, 2],
    [0, 2])``.  Supports implicit output, ``...``, repeated letters inside an operand
    (traces and diagonals) and any number of operands, contracted pairwise along the
    greedy ``np.einsum_path`` (``optimize`` is accepted; the path is always optimised).
    ``dtype`` converts the operands first; ``order`` and ``casting`` are accepted.
    """
    if out is not None:                  # (fallback=False: no dispatch wrapper writes it)
        return written_out(einsum, operands, dict(out=out, optimize=optimize, dtype=dtype,
                                                  order=order, casting=casting))
    if not operands:
        raise ArgumentValueError("einsum: no subscripts given")
    if isinstance(operands[0], str):
        subscripts, operands = operands[0], [as_array(x) for x in operands[1:]]
    else:
        subscripts, operands = _from_sublists(operands)
    if dtype is not None:
        operands = [tensor_or_array(x, "einsum").astype(dtype) for x in operands]
    result = _einsum(subscripts, operands)
    if len(operands) == 1 and dtype is None and _relabels(subscripts) and shape_of(result):
        # NumPy's one-operand einsum without a sum is a view (a transpose, a diagonal);
        # of a 0-d operand, a scalar
        return selected(result, operands[0], "einsum", lambda p: _einsum(subscripts, [p]))
    if len(operands) == 1 and (result is operands[0] or not shape_of(result)):
        return new_result(result, operands)   # NumPy's: a new array (a 0-d: a scalar)
    return _c_ordered_if_operands_are(result, operands)


def _c_ordered_if_operands_are(result, operands):
    """``result`` laid out in C order when its C-ordered operands would give NumPy's
    einsum a C-ordered one (as they do): a contraction's transposed product is copied, so
    its reshapes are views where NumPy's are (operands in other layouts: as computed)."""
    if is_eager(result) and not result.data.flags.c_contiguous and all(
            not is_eager(x) or x.data.flags.c_contiguous for x in operands):
        in_layout(result, "C")
    return result


def _relabels(subscripts: str) -> bool:
    """Whether a one-operand einsum only relabels axes (a transpose, diagonals): every
    letter, and ``...``, of the operand stands in the output."""
    left, arrow, right = subscripts.replace(" ", "").partition("->")
    letters = left.replace("...", "")
    if not arrow:                        # implicit output: the letters that appear once
        return len(set(letters)) == len(letters)
    return ("..." in right or "..." not in left) and set(letters) <= set(right)


def _sublist_letters(sublist) -> str:
    letters = []
    for label in sublist:
        if label is Ellipsis:
            letters.append("...")
        elif isinstance(label, numbers.Integral) and 0 <= label < 52:
            # NumPy's order: 0-25 are 'A'-'Z', 26-51 'a'-'z' (implicit outputs sort so)
            letters.append(chr(ord("A") + label) if label < 26 else chr(ord("a") + label - 26))
        else:
            raise ArgumentValueError(f"einsum: sublist labels must be integers in [0, 52) "
                                     f"or Ellipsis, got {label!r}")
    return "".join(letters)


def _from_sublists(args) -> tuple:
    """``(a, [0, 1], b, [1, 2], [0, 2])`` as subscripts and operands."""
    args = list(args)
    operands, terms = [], []
    while len(args) >= 2:
        operands.append(as_array(args.pop(0)))
        terms.append(_sublist_letters(args.pop(0)))
    subscripts = ",".join(terms)
    if args:
        subscripts += "->" + _sublist_letters(args[0])
    return subscripts, operands


def _einsum(subscripts: str, operands: list):
    if not tensor_among(operands):
        if len(operands) == 1:
            return np.einsum(subscripts, operands[0])
        operands = [np.asarray(x) for x in operands]     # contracted pairwise below (BLAS)
    subscripts = subscripts.replace(" ", "")
    shapes = [tuple(shape_of(x)) for x in operands]
    terms, out, ellipsis_letters = _expand_ellipsis("einsum", subscripts, shapes)
    sizes = ct_ops.letter_sizes(subscripts, terms, shapes, ellipsis_letters)
    if len(set(out)) != len(out) or any(c not in sizes for c in out):
        raise ShapeError(f"einsum '{subscripts}': invalid output '{out}'")
    operands = common("einsum", *operands)
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
            if not terms and i == len(group_terms) - 1:
                keep = out              # the last contraction: in the output's order
            else:
                keep = "".join(dict.fromkeys(c for c in acc_term + group_terms[i]
                                             if c in rest))
            acc = ct_ops.einsum_strict(f"{acc_term},{group_terms[i]}->{keep}", acc,
                                       group_ops[i])
            acc_term = keep
        terms.append(acc_term)
        operands.append(acc)
    if terms[0] == out:
        return operands[0]
    return ct_ops.einsum_strict(f"{terms[0]}->{out}", operands[0])


__all__ = ["matmul", "tensordot", "einsum", "einsum_path", "dot", "vdot", "inner", "outer",
           "kron", "cross", "vecdot", "matvec", "vecmat", "multi_dot"]

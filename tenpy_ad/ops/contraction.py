"""The einsum primitive: one or two operands, each with distinct letters.

``tp.einsum`` (the surface) lowers everything else onto it: ellipses are spelled out,
repeated letters inside an operand become contractions with identity matrices, and three
or more operands are contracted pairwise in the order ``np.einsum_path`` picks.

The implementation turns each binary contraction into transpose + reshape + one batched
``matmul`` (BLAS), planned once per (subscripts, shapes) and cached; its BLAS threads
follow the size of that matmul (:mod:`tenpy_ad.blas`), and a compiled program's step
writes the product into its planned array (:mod:`tenpy_ad.compiler.memory_plan`).
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable

import numpy as np

from .. import dtypes
from .._compiled import _core
from ..blas import TINY, threaded
from ..errors import ShapeError
from ..param_schema import Text
from ..primitive import bind, bind2, code_of_value, primitive, shape_of
from ..rules import defjvp, defvjp
from ..step_facts import PlannedWrite, declare_steps
from . import elementwise as ew
from . import structural as st


def parse(subscripts: str) -> tuple[list[str], str]:
    inputs, output = subscripts.split("->")
    return inputs.split(","), output


def _valid_subscripts(subscripts: str) -> bool:
    """One or two terms, each with distinct letters; output letters distinct, each from
    a term."""
    terms, out = parse(subscripts)
    letters = set("".join(terms))
    return (all(len(set(t)) == len(t) for t in terms) and len(set(out)) == len(out)
            and set(out) <= letters)


#: the primitive's subscripts (``tp.einsum`` lowers every other form onto these)
SUBSCRIPTS = Text("einsum subscripts 'ab,bc->ac' (one or two terms of distinct letters)",
                  r"[A-Za-z]*(,[A-Za-z]*)?->[A-Za-z]*", max_length=512,
                  valid=_valid_subscripts, example="ij,jk->ik")


def _einsum_rule(subscripts, *xs):
    if len(parse(subscripts)[0]) != len(xs):
        raise ShapeError(f"einsum '{subscripts}': {len(xs)} operands for "
                         f"{len(parse(subscripts)[0])} terms")
    code = code_of_value(xs[0])
    if len(xs) == 1:
        return code, _einsum_shape(subscripts, (xs[0].shape,))
    if code_of_value(xs[1]) != code:
        raise ShapeError(f"einsum '{subscripts}': operand dtypes differ")
    return code, _einsum_shape(subscripts, (xs[0].shape, xs[1].shape))


@lru_cache(maxsize=8192)
def _einsum_shape(subscripts: str, shapes: tuple) -> tuple:
    ins, out = parse(subscripts)
    sizes = letter_sizes(subscripts, ins, shapes)
    return tuple(sizes[letter] for letter in out)


def letter_sizes(subscripts: str, terms, shapes, broadcast: str = "") -> dict:
    """The size of every letter of ``terms`` (one term per operand shape).  Letters in
    ``broadcast`` (the axes of a ``...``) may also have size 1, as NumPy broadcasts them.
    A ShapeError names ``subscripts`` and the shapes on any mismatch."""
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, shapes):
        if len(term) != len(shape):
            raise ShapeError(f"einsum '{subscripts}': term '{term}' has {len(term)} letters "
                             f"for an operand of shape {list(shape)}")
        for letter, d in zip(term, shape):
            known = sizes.setdefault(letter, d)
            if known == d:
                continue
            if letter in broadcast and 1 in (known, d):
                sizes[letter] = max(known, d)
            else:
                raise ShapeError(f"einsum '{subscripts}': letter '{letter}' has sizes {known} "
                                 f"and {d} (operand shapes "
                                 f"{', '.join(str(list(s)) for s in shapes)})")
    return sizes


class _Contraction:
    """A binary contraction as transposes + reshapes + one (batched) ``matmul``, planned
    once per (subscripts, shapes): ``flops`` of one matrix product (for the BLAS threads),
    ``mid_shape`` of the product (batch, free of a, free of b), and the output's order."""

    def __init__(self, subscripts: str, shape_a: tuple, shape_b: tuple):
        (sa, sb), out = parse(subscripts)
        size = dict(zip(sa, shape_a)) | dict(zip(sb, shape_b))
        batch = [c for c in sa if c in sb and c in out]
        contract = [c for c in sa if c in sb and c not in out]
        free_a = [c for c in sa if c not in sb and c in out]
        free_b = [c for c in sb if c not in sa and c in out]
        only_a = "".join(c for c in sa if c not in sb and c not in out)
        only_b = "".join(c for c in sb if c not in sa and c not in out)
        drop = lambda term, letters: term.translate({ord(c): None for c in letters})
        self.pre_a = f"{sa}->{drop(sa, only_a)}" if only_a else None
        self.pre_b = f"{sb}->{drop(sb, only_b)}" if only_b else None
        ra = "".join(c for c in sa if c not in only_a)
        rb = "".join(c for c in sb if c not in only_b)
        perm_a = tuple(ra.index(c) for c in batch + free_a + contract)
        perm_b = tuple(rb.index(c) for c in batch + contract + free_b)
        self.perm_a = None if perm_a == tuple(range(len(perm_a))) else perm_a
        self.perm_b = None if perm_b == tuple(range(len(perm_b))) else perm_b
        prod = lambda letters: int(np.prod([size[c] for c in letters], dtype=np.int64))
        nb, m, k, n = prod(batch), prod(free_a), prod(contract), prod(free_b)
        self.m, self.k, self.n = m, k, n
        self.operand_shapes = (tuple(shape_a), tuple(shape_b))
        self.shape_a, self.shape_b = ((m, k), (k, n)) if nb == 1 else ((nb, m, k), (nb, k, n))
        self.product_shape = (m, n) if nb == 1 else (nb, m, n)
        self.flops = 2 * m * k * n
        mid = batch + free_a + free_b
        self.mid_shape = tuple(size[c] for c in mid)
        perm_out = tuple(mid.index(c) for c in out)
        self.perm_out = None if perm_out == tuple(range(len(perm_out))) else perm_out
        la = len(free_a)      # the output as the product's transpose: free_b, then free_a
        swapped = tuple(range(la, len(mid))) + tuple(range(la))
        self.transposed_out = not batch and perm_out == swapped and la < len(mid)
        # no summed letter: an outer product, each entry one multiplication (the bits of
        # the matmul it replaces), written straight in the output's order
        self.outer = None if contract else (_broadcast_view(ra, out, size),
                                            _broadcast_view(rb, out, size))
        self.out_shape = tuple(size[c] for c in out)

    def __call__(self, a, b):
        if self.outer is not None:
            return self._outer_product(a, b)
        a = _matrices(a, self.pre_a, self.perm_a, self.shape_a)
        b = _matrices(b, self.pre_b, self.perm_b, self.shape_b)
        c = np.matmul(a, b).reshape(self.mid_shape)
        return c if self.perm_out is None else c.transpose(self.perm_out)

    def into(self, out, a, b):
        """The same with planned arrays: ``out`` is ``(product, scratch_a, scratch_b)``, the
        product C-contiguous of ``mid_shape``, a scratch flat, of its operand's size, for
        the copy its layout may need.  Returns the result, a view of the product (for small
        operands an output that is the product transposed is a copy in its own order, as
        :meth:`small_kernel` gives it)."""
        product, scratch_a, scratch_b = out
        if self.outer is not None:
            return self._outer_product(a, b, product.reshape(self.out_shape))
        a = _matrices(a, self.pre_a, self.perm_a, self.shape_a, scratch_a)
        b = _matrices(b, self.pre_b, self.perm_b, self.shape_b, scratch_b)
        np.matmul(a, b, out=product.reshape(self.product_shape))
        if self.perm_out is None:
            return product
        if self.transposed_out and max(self.operand_sizes) <= _SMALL_OPERANDS:
            return np.ascontiguousarray(product.transpose(self.perm_out))  # as small_kernel
        return product.transpose(self.perm_out)

    def small_kernel(self) -> Callable:
        """A program's kernel for operands this small: the same operations inline.  Like
        :meth:`__call__` it hands ``np.matmul`` only BLAS-able matrices (its own loop for
        other layouts rounds differently: a planned step, which copies such operands, would
        not give the same bits).  An output that is the product transposed is copied into
        its own order, as the C kernel (:meth:`gemm_kernel`) stores it: a later sum over
        it then adds in the same order with and without a memory plan."""
        pre_a, pre_b, perm_a, perm_b = self.pre_a, self.pre_b, self.perm_a, self.perm_b
        shape_a, shape_b, mid, perm_out = (self.shape_a, self.shape_b, self.mid_shape,
                                           self.perm_out)
        einsum, matmul, contiguous = np.einsum, np.matmul, np.ascontiguousarray
        transposed = self.transposed_out
        if self.outer is not None:
            return lambda params, a, b: self._outer_product(a, b)

        def run(params, a, b):
            if pre_a is not None:
                a = einsum(pre_a, a)
            if perm_a is not None:
                a = a.transpose(perm_a)
            if pre_b is not None:
                b = einsum(pre_b, b)
            if perm_b is not None:
                b = b.transpose(perm_b)
            c = matmul(_blasable(a.reshape(shape_a)),
                       _blasable(b.reshape(shape_b))).reshape(mid)
            if perm_out is None:
                return c
            return contiguous(c.transpose(perm_out)) if transposed else c.transpose(perm_out)
        return run

    def gemm_kernel(self, is_complex: bool = False):
        """The core's kernel calling NumPy's CBLAS ``dgemm`` (``zgemm`` for complex128) as
        its ``matmul`` would, writing the product into a planned array, and the element
        counts of its scratch arrays (the product, when the output is its transpose,
        which is copied into the output's order; any other order of the output is a
        view of the product, as :meth:`small_kernel` returns it).  An operand whose
        matrix is no view of it is NumPy's C-ordered copy.  None where NumPy's ``matmul``
        would not call ``gemm`` either (a batch, vectors, outer products with k = 1,
        letters summed within an operand), or from BLAS's threaded sizes on
        (``blas.TINY``)."""
        if len(self.shape_a) != 2 or self.pre_a or self.pre_b or \
                min(self.m, self.n, self.k) < 2 or \
                self.flops * (4 if is_complex else 1) >= TINY["matmul"] or \
                not _core.has_gemm():
            return None
        if max(map(len, self.operand_shapes)) > 32:      # (the kernel gathers up to 32 axes)
            return None
        layouts_a = _matrix_layouts(self.operand_shapes[0], self.perm_a, self.shape_a)
        layouts_b = _matrix_layouts(self.operand_shapes[1], self.perm_b, self.shape_b)
        transposed = self.transposed_out
        # any other order of the output: a view of the product (stored in its own shape)
        view = None if transposed or self.perm_out is None else \
            (self.mid_shape, self.perm_out)

        def numpy_way(out, params, a, b):        # for the arrays the kernel declines
            result = out[0] if transposed else out
            if view is not None:
                result = result.reshape(view[0]).transpose(view[1])
            np.copyto(result, self(a, b))
            return result
        axes_a, axes_b = (tuple(range(len(shape))) if perm is None else perm
                          for perm, shape in ((self.perm_a, self.operand_shapes[0]),
                                              (self.perm_b, self.operand_shapes[1])))
        kernel = _core.GemmKernel(self.m, self.n, self.k, layouts_a, layouts_b, transposed,
                                  is_complex, numpy_way, axes_a, axes_b, view)
        return kernel, (self.m * self.n,) if transposed else ()

    def _outer_product(self, a, b, out=None):
        (perm_a, shape_a), (perm_b, shape_b) = self.outer
        if self.pre_a is not None:
            a = np.einsum(self.pre_a, a)
        if self.pre_b is not None:
            b = np.einsum(self.pre_b, b)
        return np.multiply(a.transpose(perm_a).reshape(shape_a),
                           b.transpose(perm_b).reshape(shape_b), out=out, order="C")

    @property
    def operand_sizes(self) -> tuple:
        """Elements of each operand as matrices (after the summed-out letters)."""
        return math.prod(self.shape_a), math.prod(self.shape_b)


_plan = lru_cache(maxsize=4096)(_Contraction)


def _broadcast_view(letters: str, out: str, size: dict) -> tuple:
    """``(perm, shape)`` that turn an operand with ``letters`` (all in ``out``) into a
    view broadcasting against the output ``out``: its axes in the output's order, size-1
    axes for the letters it lacks."""
    perm = tuple(letters.index(c) for c in out if c in letters)
    return perm, tuple(size[c] if c in letters else 1 for c in out)


def _matrices(x, pre, perm, shape, scratch=None):
    """``x`` as the (stack of) matrices ``shape`` that ``np.matmul`` hands to BLAS: letters
    only it has summed out (``pre``), axes permuted, reshaped — a view where its layout
    allows, else a C-ordered copy (into ``scratch`` when given): on other layouts
    ``np.matmul`` falls back to a naive loop that is many times slower."""
    if pre:
        x = np.einsum(pre, x)
    if perm:
        x = x.transpose(perm)
    if scratch is None:
        return _blasable(x.reshape(shape))
    try:
        matrices = x.reshape(shape, copy=False)   # (the method: no dispatch)
    except (ValueError, TypeError):     # no view (TypeError: NumPy < 2.1 cannot tell)
        matrices = None
    if matrices is not None and _is_blasable(matrices):
        return matrices
    copy = scratch.reshape(x.shape)
    np.copyto(copy, x)                  # what reshape / ascontiguousarray would allocate
    return copy.reshape(shape)


@lru_cache(maxsize=4096)
def _matrix_layouts(shape: tuple, perm, matrix_shape: tuple) -> tuple:
    """For an operand of ``shape`` stored C-contiguous, then F-contiguous (the second
    only for 2-d operands: LAPACK's results), whether, permuted by ``perm`` and reshaped
    to the 2-d ``matrix_shape``, it is a row-major (1) or column-major (0) view, or
    neither (-1)."""
    return tuple(_matrix_layout(shape, perm, matrix_shape, order)
                 if order == "C" or len(shape) == 2 else -1 for order in "CF")


def _matrix_layout(shape: tuple, perm, matrix_shape: tuple, order: str) -> int:
    x = np.empty(shape, np.float64, order=order)   # small: at most _SMALL_OPERANDS
    if perm:
        x = x.transpose(perm)
    try:
        matrix = np.reshape(x, matrix_shape, copy=False)
    except (ValueError, TypeError):     # no view (TypeError: NumPy < 2.1 cannot tell)
        return -1
    if matrix.flags.c_contiguous:
        return 1
    return 0 if matrix.flags.f_contiguous else -1


def _is_blasable(x) -> bool:
    """Whether ``np.matmul`` hands ``x``'s matrices to BLAS as they are: each has a unit
    stride along one axis and a leading dimension at least its extent along the other
    (contiguous matrices, their transposes, and slices such as ``u[:, :k]``: NumPy's own
    test, so no copy is made where NumPy would make none)."""
    flags = x.flags          # the common cases at once (a whole F-ordered stack is not one)
    if flags.c_contiguous or flags.f_contiguous and x.ndim == 2:
        return True
    if x.ndim == 2:
        return _blasable_matrix(x.strides, x.shape, x.itemsize)
    return x.shape[0] == 0 or _blasable_matrix(x.strides[-2:], x.shape[-2:], x.itemsize)


def _blasable_matrix(strides, shape, itemsize: int) -> bool:
    (s0, s1), (m, n) = strides, shape
    if s1 == itemsize and s0 % itemsize == 0 and s0 // itemsize >= max(n, 1):
        return True                                         # rows, leading dimension s0
    return s0 == itemsize and s1 % itemsize == 0 and s1 // itemsize >= max(m, 1)


def _blasable(x):
    """``x`` itself when :func:`_is_blasable`, else a contiguous copy."""
    return x if _is_blasable(x) else np.ascontiguousarray(x)


def _einsum_impl(subscripts, *xs):
    if len(xs) == 1:
        return np.einsum(subscripts, xs[0])
    a, b = xs
    return _plan(subscripts, a.shape, b.shape)(a, b)


#: operands up to this many elements skip the layout checks in a program's kernel
_SMALL_OPERANDS = 4096


def _einsum_kernel(subscripts, *shapes):
    """A program's kernel for a binary contraction: its plan, looked up once."""
    if len(shapes) != 2:
        return None
    plan = _plan(subscripts, tuple(shapes[0]), tuple(shapes[1]))
    if max(plan.operand_sizes) <= _SMALL_OPERANDS:
        return plan.small_kernel()
    return lambda params, a, b: plan(a, b)


def _einsum_gemm(subscripts, shapes, out_shape, code):
    """A program step's C kernel and scratch counts: one BLAS product of small float64 or
    complex128 operands (or None)."""
    if len(shapes) != 2 or code not in (dtypes.FLOAT64, dtypes.COMPLEX128):
        return None
    plan = _plan(subscripts, tuple(shapes[0]), tuple(shapes[1]))
    if max(plan.operand_sizes) > _SMALL_OPERANDS:
        return None
    return plan.gemm_kernel(code == dtypes.COMPLEX128)


def _einsum_work(subscripts, *shapes):
    """BLAS work of one einsum: the matmul of a binary contraction (one operand: none)."""
    if len(shapes) != 2:
        return None
    return "matmul", _plan(subscripts, shapes[0], shapes[1]).flops


def _einsum_storage(subscripts, shapes, out_shape):
    """A program step's planned array: the matmul's product, before the output's order."""
    return _plan(subscripts, shapes[0], shapes[1]).mid_shape if len(shapes) == 2 else None


def _einsum_scratch(subscripts, shapes):
    """Scratch for the copies of the two operands a program step may need."""
    return _plan(subscripts, shapes[0], shapes[1]).operand_sizes


def _einsum_into(out, subscripts, a, b):
    return _plan(subscripts, a.shape, b.shape).into(out, a, b)


def _operand_cotangent(ct, out_letters, others, other_letters, target_letters, target_shape):
    """Cotangent of one operand: contract ``ct`` with the conjugated other operand, then
    broadcast along letters that only that operand had."""
    present = "".join(c for c in target_letters if c in out_letters or c in other_letters)
    if others is None:
        g = einsum_strict(f"{out_letters}->{present}", ct)
    else:
        g = einsum_strict(f"{out_letters},{other_letters}->{present}", ct, ew.conj(others))
    if present == target_letters:
        return g
    dims = tuple(target_letters.index(c) for c in present)
    return st.broadcast_in_dim(g, tuple(target_shape), dims)


def _first_operand_cotangent(subscripts, ct, out, *xs):
    ins, o = parse(subscripts)
    if len(xs) == 1:
        return _operand_cotangent(ct, o, None, "", ins[0], shape_of(xs[0]))
    return _operand_cotangent(ct, o, xs[1], ins[1], ins[0], shape_of(xs[0]))


def _second_operand_cotangent(subscripts, ct, out, a, b):
    ins, o = parse(subscripts)
    return _operand_cotangent(ct, o, a, ins[0], ins[1], shape_of(b))


einsum_p = primitive("einsum", _einsum_impl, _einsum_rule, format_params=repr,
                     static_shapes=True, params=SUBSCRIPTS)
# linear in each operand (one or two): the tangent contracts in the operand's place
defjvp(einsum_p, lambda subscripts, t, out, *xs: einsum_strict(subscripts, t, *xs[1:]),
       lambda subscripts, t, out, a, b: einsum_strict(subscripts, a, t))
defvjp(einsum_p, _first_operand_cotangent, _second_operand_cotangent)
threaded(einsum_p, _einsum_work, _einsum_kernel)
declare_steps(einsum_p, fresh_outputs=True, c_kernel=_einsum_gemm,
              writes_into=PlannedWrite(_einsum_storage, _einsum_into, _einsum_scratch))


def einsum_strict(subscripts: str, *xs):
    """The einsum primitive itself: 1 or 2 operands of one dtype, distinct letters."""
    if len(xs) == 2:
        return bind2(einsum_p, subscripts, xs[0], xs[1])
    perm = _permutation(subscripts)
    if perm is None:
        return bind(einsum_p, subscripts, *xs)
    return st.transpose(xs[0], perm)       # the identity returns the operand itself


@lru_cache(maxsize=4096)
def _permutation(subscripts: str):
    """The axis permutation a one-operand einsum is (None: it sums or is not one)."""
    ins, out = parse(subscripts)
    if len(ins) != 1 or sorted(ins[0]) != sorted(out):
        return None
    return tuple(ins[0].index(c) for c in out)

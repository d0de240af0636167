"""The numpy-like surface: implicit broadcasting, dtype promotion, scalars, ``@``, ``.T``,
slicing and ``einsum``, lowered onto the explicit primitives of :mod:`tenpy_ad.ops`.

Every function accepts TracedTensors, eager Tensors, ndarrays and Python scalars, and
returns the kind its operands call for (see :mod:`tenpy_ad.primitive`).
"""
from __future__ import annotations

import builtins
import math
import numbers
from functools import lru_cache

import numpy as np

from . import dtypes
from .errors import ArgumentError, ConcretizationError, DTypeError, ShapeError
from .ops import contraction as ct_ops
from .ops import elementwise as ew
from .ops import structural as st
from .primitive import (Tensor, TracedTensor, bind2, code_of_value, constant, describe,
                        elementwise_ready, shape_of)

_PY_SCALARS = (float, int, complex, bool)
_TENSORS = (TracedTensor, Tensor)


def _is_tensor(x) -> bool:
    t = type(x)
    return t is TracedTensor or t is Tensor


def is_traced(x) -> bool:
    return type(x) is TracedTensor


def _dtype_key(x):
    """A tensor's/array's dtype, or the Python type for a weak scalar."""
    t = type(x)
    if t is TracedTensor:
        return x.dtype
    if t is Tensor:
        return x.data.dtype
    if t in _PY_SCALARS:
        return t
    return np.asarray(x).dtype


def _operand(x, code: int, traced: bool):
    """``x`` in dtype ``code``, as a node (traced mode) or a Tensor/ndarray (eager mode)."""
    if _is_tensor(x):
        if type(x) is Tensor and traced:
            return constant(x.data, code)
        return ew.convert(x, code)
    if traced:
        return constant(x, code)
    return np.asarray(x, dtype=dtypes.DTYPES[code])


_result_codes: dict = {}


def result_code(name: str, *operands) -> int:
    """The dtype code an operation on ``operands`` computes in (NumPy 2 promotion)."""
    keys = tuple(_dtype_key(x) for x in operands)
    code = _result_codes.get(keys)
    if code is None:
        key = keys[0]
        for other in keys[1:]:
            key = dtypes.promote(key, other)
        try:
            code = dtypes.value_code(np.dtype(key))
        except DTypeError as error:
            raise DTypeError(f"{name}: {error}") from None
        _result_codes[keys] = code
    return code


def broadcast_shapes(name: str, *shapes) -> tuple:
    """NumPy's broadcast of ``shapes``; a ShapeError naming ``name`` if impossible."""
    result = shapes[0]
    for shape in shapes[1:]:
        if shape == result:
            continue
        if len(shape) > len(result):
            result, shape = shape, result
        merged = list(result)
        offset = len(result) - len(shape)
        for i, d in enumerate(shape):
            r = merged[offset + i]
            if r == 1:
                merged[offset + i] = d
            elif d != 1 and d != r:
                raise ShapeError(f"{name}: shapes "
                                 f"{', '.join(str(list(s)) for s in shapes)} cannot be "
                                 "broadcast together")
        result = tuple(merged)
    return result


def _binary(name, prim, a, b):
    """Apply an elementwise binary primitive with NumPy's broadcasting and promotion
    (``name``, NumPy's name of the operation, is the one error messages use)."""
    if elementwise_ready(a, b):
        return bind2(prim, None, a, b)
    traced = is_traced(a) or is_traced(b)
    code = result_code(name, a, b)
    a, b = _operand(a, code, traced), _operand(b, code, traced)
    shape = broadcast_shapes(name, shape_of(a), shape_of(b))
    return bind2(prim, None, st.broadcast_to(a, shape), st.broadcast_to(b, shape))


def add(a, b):
    """Elementwise ``a + b`` with NumPy broadcasting and promotion."""
    return _binary("add", ew.add_p, a, b)


def subtract(a, b):
    """Elementwise ``a - b``."""
    return _binary("subtract", ew.sub_p, a, b)


def _is_static_scalar(x) -> bool:
    return type(x) in _PY_SCALARS


def multiply(a, b):
    """Elementwise ``a * b``; a Python scalar factor becomes a static ``scale``."""
    if _is_static_scalar(b) and _is_tensor(a):
        return scale(a, b)
    if _is_static_scalar(a) and _is_tensor(b):
        return scale(b, a)
    return _binary("multiply", ew.mul_p, a, b)


def divide(a, b):
    """Elementwise ``a / b``."""
    return _binary("divide", ew.div_p, a, b)


def scale(x, factor):
    """``x * factor`` for a scalar factor stored in the graph as a static parameter."""
    if type(factor) is float:                   # the common case, kept short
        t = type(x)
        if t is TracedTensor or t is Tensor:
            return ew.scale(x, factor)
    if not _is_tensor(x):
        return np.multiply(x, factor)
    if isinstance(factor, (np.generic, np.ndarray)) and np.ndim(factor) == 0:
        factor = factor.item()
    if not isinstance(factor, numbers.Number):
        raise ArgumentError(f"scale: the factor must be a scalar, got {type(factor).__name__}")
    code = x.dtype_code if type(x) is TracedTensor else code_of_value(x)
    if isinstance(factor, complex) and not dtypes.is_complex(code):
        x = ew.convert(x, dtypes.complex_code(code))
    return ew.scale(x, factor)


def scale_real(x, factor):
    """``x * factor`` for a real scalar ``factor`` kept as a static parameter of the graph
    (the ``.scale_real`` method); a complex factor is refused: write ``x * factor``."""
    if isinstance(factor, complex) or np.iscomplexobj(factor):
        raise ArgumentError(f"scale_real: the factor must be real, got {factor!r}; "
                            "multiply by a complex number with x * factor")
    return scale(x, factor)


def power(x, exponent):
    """``x ** exponent`` for a scalar exponent."""
    if not _is_tensor(x):
        if _is_tensor(exponent):
            raise ArgumentError("power: the exponent must be a scalar, not a tensor")
        return np.power(x, exponent)
    if isinstance(exponent, (np.generic, np.ndarray)) and np.ndim(exponent) == 0:
        exponent = exponent.item()
    if not isinstance(exponent, numbers.Real):
        raise ArgumentError("power: only a real scalar exponent is supported; write "
                        "tp.exp(y * tp.log(x)) for a tensor exponent")
    return ew.power(x, exponent)


# elementwise functions: the primitives' own binders apply NumPy semantics to plain values
exp, log, sqrt, sin, cos, tanh = ew.exp, ew.log, ew.sqrt, ew.sin, ew.cos, ew.tanh
abs, conj, real, imag, sign = ew.abs, ew.conj, ew.real, ew.imag, ew.sign  # noqa: A001
negative = ew.neg


def astype(x, dtype):
    """Convert to ``dtype`` (complex to real is refused: take ``.real`` explicitly)."""
    if not _is_tensor(x):
        return np.asarray(x).astype(dtype)
    return ew.convert(x, dtypes.code_of(dtype))


# ------------------------------------------------------------------ shapes and reductions

def _normalize_axes(name, axis, ndim) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    normalized = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ShapeError(f"{name}: axis {a} is out of range for a {ndim}-d tensor")
        normalized.append(int(a) % ndim if ndim else 0)
    if len(set(normalized)) != len(normalized):
        raise ShapeError(f"{name}: repeated axis in {axes}")
    return tuple(sorted(normalized))


def _reduction(name, strict, numpy_fn, x, axis, keepdims):
    if not _is_tensor(x):
        return numpy_fn(x, axis=axis, keepdims=keepdims)
    shape = shape_of(x)
    axes = _normalize_axes(name, axis, len(shape))
    result = strict(x, axes)
    if keepdims:
        result = st.reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape)))
    return result


def sum(x, axis=None, keepdims=False):  # noqa: A001 - NumPy's name
    """Sum over ``axis`` (all axes by default), like ``np.sum``."""
    return _reduction("sum", st.reduce_sum, np.sum, x, axis, keepdims)


def amax(x, axis=None, keepdims=False):
    """Maximum over ``axis``; the derivative goes to the arg-max, split evenly on ties."""
    if _is_tensor(x):
        shape = shape_of(x)
        if any(shape[a] == 0 for a in _normalize_axes("amax", axis, len(shape))):
            raise ShapeError(f"amax: zero-size reduction over {describe(x)} (no maximum)")
    return _reduction("amax", st.reduce_max, np.max, x, axis, keepdims)


max = amax  # noqa: A001


def reshape(x, shape):
    """Reshape like ``np.reshape`` (one ``-1`` allowed)."""
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    shape = tuple(int(d) for d in shape)
    if -1 in shape:
        shape = _infer_minus_one(x, shape)
    return st.reshape(x, shape)


def _infer_minus_one(x, shape: tuple) -> tuple:
    size = math.prod(shape_of(x))
    known = math.prod(d for d in shape if d != -1)
    if shape.count(-1) > 1 or known == 0 or size % known:
        raise ShapeError(f"reshape: cannot reshape {describe(x)} into {list(shape)}")
    return tuple(size // known if d == -1 else d for d in shape)


def transpose(x, axes=None):
    """Permute axes like ``np.transpose`` (reversed by default)."""
    ndim = len(shape_of(x))
    if axes is None:
        axes = tuple(range(ndim - 1, -1, -1))
    if any(not -ndim <= int(a) < ndim for a in axes):
        raise ShapeError(f"transpose: axes {list(axes)} out of range for {describe(x)}")
    return st.transpose(x, tuple(int(a) % ndim for a in axes))


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """Broadcast ``x`` to ``shape``; operand axis ``i`` becomes ``broadcast_dimensions[i]``."""
    if not _is_tensor(x):
        x = np.asarray(x)
    return st.broadcast_in_dim(x, tuple(int(d) for d in shape),
                               tuple(int(d) for d in broadcast_dimensions))


def broadcast_to(x, shape):
    """NumPy-style ``broadcast_to``."""
    shape = tuple(int(d) for d in shape)
    if broadcast_shapes("broadcast_to", shape_of(x), shape) != shape:
        raise ShapeError(f"broadcast_to: cannot broadcast {describe(x)} to {list(shape)}")
    if not _is_tensor(x):
        return np.broadcast_to(x, shape)
    return st.broadcast_to(x, shape)


def getitem(x, index):
    """Basic indexing: integers, slices (any step), ``...`` and ``None``."""
    if not _is_tensor(x):
        return np.asarray(x)[index]
    if not isinstance(index, tuple):
        index = (index,)
    shape = shape_of(x)
    n_axes = 0
    for item in index:
        if item is None or item is Ellipsis:
            continue
        if isinstance(item, (slice, numbers.Integral)) and not isinstance(item, bool):
            n_axes += 1
        elif _is_tensor(item):
            raise ConcretizationError("indexing with a tensor is not supported; use "
                                      "integers and slices")
        else:
            raise ArgumentError(f"index {item!r}: only integers, slices, ... and None are "
                            "supported (no advanced indexing)")
    if n_axes > len(shape):
        raise ShapeError(f"index {index}: too many indices for {describe(x)}")
    if builtins.sum(1 for item in index if item is Ellipsis) > 1:
        raise ShapeError("an index can only have a single ellipsis")
    spec, final_shape, axis = [], [], 0
    for item in index:
        if item is Ellipsis:
            for _ in range(len(shape) - n_axes):
                spec.append((0, shape[axis], 1))
                final_shape.append(shape[axis])
                axis += 1
        elif item is None:
            final_shape.append(1)
        elif isinstance(item, slice):
            if item.step == 0:
                raise ShapeError(f"index {index}: slice step cannot be zero")
            start, stop, step = item.indices(shape[axis])
            length = len(range(start, stop, step))
            spec.append((start, stop, step) if length else (0, 0, 1))   # empty: canonical
            final_shape.append(length)
            axis += 1
        else:
            i = int(item)
            if not -shape[axis] <= i < shape[axis]:
                raise ShapeError(f"index {i} is out of bounds for axis {axis} of "
                                 f"{describe(x)}")
            i %= shape[axis]
            spec.append((i, i + 1, 1))
            axis += 1
    for d in shape[axis:]:
        spec.append((0, d, 1))
        final_shape.append(d)
    return st.reshape(st.slice_axes(x, tuple(spec)), tuple(final_shape))


# ------------------------------------------------------------------ contractions

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def matmul(a, b):
    """Matrix product with NumPy's ``@`` rules (1-d operands, broadcast batch axes)."""
    if not (_is_tensor(a) or _is_tensor(b)):
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
    a, b = _operand(a, code, traced), _operand(b, code, traced)
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
    if not (_is_tensor(a) or _is_tensor(b)):
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
    if not any(_is_tensor(x) for x in operands):
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
    if any(_is_tensor(x) for x in operands):
        operands = [_operand(x, code, traced) for x in operands]
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


# ------------------------------------------------------------------ constructors

def ones(shape, dtype="float64") -> np.ndarray:
    """An array of ones (a plain ndarray: constants mix into any mode)."""
    return np.ones(shape, dtype=dtypes.DTYPES[dtypes.code_of(dtype)])


def zeros(shape, dtype="float64") -> np.ndarray:
    """An array of zeros (a plain ndarray: constants mix into any mode)."""
    return np.zeros(shape, dtype=dtypes.DTYPES[dtypes.code_of(dtype)])


SURFACE = {
    "add": add, "subtract": subtract, "multiply": multiply, "divide": divide,
    "matmul": matmul, "power": power, "negative": negative, "abs": abs, "getitem": getitem,
    "sum": sum, "amax": amax, "reshape": reshape, "transpose": transpose, "scale": scale_real,
    "conj": conj, "real": real, "imag": imag, "astype": astype,
    "broadcast_in_dim": broadcast_in_dim,
}

"""Shape-changing primitives: reshape, transpose, broadcast_in_dim, reductions, slicing."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import dtypes
from .._compiled import _core
from ..errors import DTypeError, ShapeError
from ..param_schema import (AXES, AXIS, MAX_NDIM, PERMUTATION, SHAPE, SIZE, SLICE, Int,
                            Struct, TupleOf, slice_fits)
from ..primitive import (bind, bind1, code_of_value, describe, full_like, primitive,  # noqa: F401
                         shape_of)         # full_like: the rules' st.full_like
from ..rules import deflinear, defrules, linear_jvp
from ..step_facts import FULL_SUM, declare_steps
from . import elementwise as ew


# ------------------------------------------------------------------ reshape

_MAX_RANK = 64                    # NumPy's limit on the dimensions of an array


def _check_rank(name: str, shape: tuple) -> None:
    if len(shape) > _MAX_RANK:
        raise ShapeError(f"{name}: a result of {len(shape)} dimensions, more than NumPy's "
                         f"maximum of {_MAX_RANK}")


def _reshape_rule(new_shape, x):
    _check_rank("reshape", new_shape)
    size = 1
    for d in new_shape:
        size *= d
    if size != x.size:
        raise ShapeError(f"reshape: cannot reshape {describe(x)} into {list(new_shape)}")
    return code_of_value(x), new_shape


reshape_p = primitive("reshape", lambda shape, x: _reshaped(x, shape), _reshape_rule,
                      format_params=lambda shape: f"shape={list(shape)}", static_shapes=True,
                      params=SHAPE)
deflinear(reshape_p, lambda shape, ct, out, x: reshape(ct, shape_of(x)))


def _reshaped(x, shape: tuple):
    """NumPy's reshape (by the method: np.reshape's dispatch costs ~0.5 µs more)."""
    return np.asarray(x).reshape(shape)


def reshape(x, shape: tuple):
    """Strict reshape to a fully specified shape (no ``-1``)."""
    shape = tuple(shape)
    if shape_of(x) == shape:
        return x
    return bind1(reshape_p, shape, x)


# ------------------------------------------------------------------ transpose

def _transpose_rule(perm, x):
    shape = x.shape
    if not _is_permutation(perm, len(shape)):
        raise ShapeError(f"transpose: axes {list(perm)} are not a permutation for "
                         f"{describe(x)}")
    return code_of_value(x), tuple([shape[p] for p in perm])


@lru_cache(maxsize=1024)
def _is_permutation(perm: tuple, ndim: int) -> bool:
    return sorted(perm) == list(range(ndim))


transpose_p = primitive("transpose", lambda perm, x: np.asarray(x).transpose(perm),
                        _transpose_rule,
                        format_params=lambda perm: f"perm={list(perm)}", static_shapes=True,
                        params=PERMUTATION)
deflinear(transpose_p, lambda perm, ct, out, x: transpose(ct, _inverse(perm)))


def _inverse(perm: tuple) -> tuple:
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return tuple(inverse)


def transpose(x, perm: tuple):
    ints = _int_perms.get(perm) if type(perm) is tuple else None
    perm = _int_perm(perm) if ints is None else ints
    if perm == _identity_perm(len(shape_of(x))):
        return x
    return bind1(transpose_p, perm, x)


_int_perms: dict = {}     # permutation -> the same as a tuple of Python ints (the params)


def _int_perm(perm) -> tuple:
    """``perm`` as a tuple of Python ints (NumPy integers would make distinct params)."""
    ints = tuple([int(p) for p in perm])
    if len(_int_perms) > 4096:
        _int_perms.clear()
    _int_perms[ints] = ints
    return ints


@lru_cache(maxsize=64)
def _identity_perm(n: int) -> tuple:
    return tuple(range(n))


# ------------------------------------------------------------------ broadcast_in_dim

def _broadcast_rule(params, x):
    shape, dims = params
    _check_rank("broadcast_in_dim", shape)
    if not _broadcast_ok(x.shape, shape, dims):
        raise ShapeError(f"broadcast_in_dim: cannot broadcast {describe(x)} to "
                         f"{list(shape)} along dimensions {list(dims)}")
    return code_of_value(x), shape


@lru_cache(maxsize=8192)
def _broadcast_ok(xshape: tuple, shape: tuple, dims: tuple) -> bool:
    if len(dims) != len(xshape) or not all(0 <= d < len(shape) for d in dims):
        return False
    if not all(a < b for a, b in zip(dims, dims[1:])):
        return False
    return all(xshape[i] == 1 or xshape[i] == shape[d] for i, d in enumerate(dims))


def _broadcast_transpose(params, ct, out, x):
    """Sum ``ct`` over the axes the broadcast created or stretched."""
    xshape = tuple(shape_of(x))
    return reshape(reduce_sum(ct, _summed_axes(params, xshape)), xshape)


@lru_cache(maxsize=4096)
def _summed_axes(params, xshape: tuple) -> tuple:
    """The axes a broadcast of ``xshape`` with ``params`` created or stretched."""
    shape, dims = params
    summed = [d for d in range(len(shape)) if d not in dims]
    summed += [d for i, d in enumerate(dims) if xshape[i] == 1 and shape[d] != 1]
    return tuple(sorted(summed))


broadcast_in_dim_p = primitive(
    "broadcast_in_dim", _core.broadcast_array, _broadcast_rule,
    format_params=lambda p: f"shape={list(p[0])} dims={list(p[1])}",
    static_shapes=True, params=Struct(SHAPE, AXES))
deflinear(broadcast_in_dim_p, _broadcast_transpose)
declare_steps(broadcast_in_dim_p, broadcasts_scalar=True)   # programs skip it before ufuncs


def broadcast_in_dim(x, shape: tuple, dims: tuple):
    """Broadcast ``x`` to ``shape``; operand axis ``i`` becomes output axis ``dims[i]``."""
    shape, dims = tuple(shape), tuple(dims)
    if shape_of(x) == shape and dims == tuple(range(len(shape))):
        return x
    return bind1(broadcast_in_dim_p, (shape, dims), x)


def broadcast_to(x, shape: tuple):
    """NumPy-style broadcast (trailing axes aligned)."""
    xshape = shape_of(x)
    if xshape == shape:
        return x
    offset = len(shape) - len(xshape)
    if offset < 0:
        raise ShapeError(f"broadcast: cannot broadcast {list(xshape)} to {list(shape)}")
    return bind1(broadcast_in_dim_p, (tuple(shape), _trailing_dims(offset, len(shape))), x)


@lru_cache(maxsize=256)
def _trailing_dims(offset: int, ndim: int) -> tuple:
    return tuple(range(offset, ndim))


# ------------------------------------------------------------------ reductions

def _reduce_rule(name):
    """The shape rule of a reduction over ``axes``: the operand's dtype."""
    def rule(axes, x):
        ndim = x.ndim
        if any(not 0 <= a < ndim for a in axes) or len(set(axes)) != len(axes):
            raise ShapeError(f"{name}: axes {list(axes)} out of range for {describe(x)}")
        shape = x.shape
        return code_of_value(x), tuple(d for i, d in enumerate(shape) if i not in axes)
    return rule


def _kept_dims(axes, ndim):
    return tuple(i for i in range(ndim) if i not in axes)


def _sum_impl(axes, x):
    """np.add.reduce (what np.sum calls, without its Python wrapper: half the time on small
    arrays) in the operand's own dtype, as the rule says: NumPy would widen narrow integers
    and bools, which ``np.sum`` (tenpy_ad.numpy) asks for by converting first."""
    if x.dtype.kind in "fc":
        return np.add.reduce(x, axis=axes)
    return np.add.reduce(x, axis=axes, dtype=x.dtype)


reduce_sum_p = primitive("reduce_sum", _sum_impl, _reduce_rule("reduce_sum"),
                         format_params=lambda axes: f"axes={list(axes)}", static_shapes=True,
                         params=AXES)
deflinear(reduce_sum_p, lambda axes, ct, out, x: broadcast_in_dim(
    ct, shape_of(x), _kept_dims(axes, len(shape_of(x)))))
declare_steps(reduce_sum_p, c_kernel=FULL_SUM)   # programs: small full sums in C, NumPy's order


def reduce_sum(x, axes: tuple):
    """Sum over ``axes`` (a tuple of non-negative ints, possibly empty)."""
    if not axes:
        return x
    return bind1(reduce_sum_p, tuple(sorted(axes)), x)


def _max_rule(axes, x):
    if dtypes.is_complex(code_of_value(x)):
        raise DTypeError(f"reduce_max: complex input {describe(x)} has no ordering")
    return _reduce_rule("reduce_max")(axes, x)


def _max_mask(axes, out, x):
    """The arg-max indicator of ``x`` and how many entries tie for each maximum."""
    xshape = shape_of(x)
    kept = _kept_dims(axes, len(xshape))
    mask = ew.eq_mask(x, broadcast_in_dim(out, xshape, kept))
    return mask, reduce_sum(mask, axes), kept


def _max_jvp(axes, t, out, xs):
    mask, count, _ = _max_mask(axes, out, xs[0])
    return ew.div(reduce_sum(ew.mul(t[0], mask), axes), count)


def _max_vjp(axes, ct, out, xs, active):
    mask, count, kept = _max_mask(axes, out, xs[0])
    share = broadcast_in_dim(ew.div(ct, count), shape_of(xs[0]), kept)
    return (ew.mul(share, mask),)


reduce_max_p = primitive("reduce_max", lambda axes, x: np.max(x, axis=axes), _max_rule,
                         format_params=lambda axes: f"axes={list(axes)}", params=AXES)
defrules(reduce_max_p, _max_jvp, _max_vjp)


def reduce_max(x, axes: tuple):
    """Maximum over ``axes``; its derivative is split evenly among tied maxima."""
    if not axes:
        return x
    return bind1(reduce_max_p, tuple(sorted(axes)), x)


# ------------------------------------------------------------------ slicing

def slices_of(spec):
    # ``slice.indices`` gives stop = -1 for a reversed slice that runs through index 0,
    # which NumPy would read as "the last element": spell it as None.
    return tuple(slice(a, b if b >= 0 else None, c) for a, b, c in spec)


def _check_spec(name: str, spec, shape: tuple, what) -> None:
    """One normalised slice per axis of ``shape``, each as ``slice.indices`` gives it."""
    if len(spec) != len(shape):
        raise ShapeError(f"{name}: {len(spec)} slices for {what}")
    for axis, (s, d) in enumerate(zip(spec, shape)):
        if not slice_fits(s, d):
            raise ShapeError(f"{name}: slice {s} is not normalised for axis {axis} of size "
                             f"{d} ({what})")


def _slice_rule(spec, x):
    _check_spec("slice", spec, tuple(x.shape), describe(x))
    return code_of_value(x), tuple(len(range(*s)) for s in spec)


SPEC = TupleOf(SLICE, max_length=MAX_NDIM)


slice_p = primitive("slice", lambda spec, x: x[slices_of(spec)], _slice_rule,
                    format_params=lambda spec: "[" + ", ".join(
                        ":".join("" if v is None else str(v) for v in s) for s in spec) + "]",
                    static_shapes=True, params=SPEC)
# the transpose is the zero padding of ``ct``, as a block cotangent: dense (a scatter_slice)
# only for a rule that needs it, so a decomposition reads which triplets a loss uses
deflinear(slice_p, lambda spec, ct, out, x: _core.block_cotangent(ct, shape_of(x), spec))


def _scatter_impl(params, x):
    shape, spec = params
    result = np.zeros(shape, dtype=x.dtype)
    result[slices_of(spec)] = x
    return result


def _scatter_rule(params, x):
    shape, spec = params
    _check_spec("scatter_slice", spec, shape, f"shape {list(shape)}")
    expected = tuple(len(range(*s)) for s in spec)
    if x.shape != expected:
        raise ShapeError(f"scatter_slice: got {describe(x)}, expected {list(expected)}")
    return code_of_value(x), shape


scatter_slice_p = primitive("scatter_slice", _scatter_impl, _scatter_rule,
                            format_params=lambda p: f"shape={list(p[0])} at {p[1]}",
                            static_shapes=True, params=Struct(SHAPE, SPEC))
deflinear(scatter_slice_p, lambda params, ct, out, x: bind1(slice_p, params[1], ct))


def slice_axes(x, spec: tuple):
    """Basic slicing; ``spec`` holds one normalised ``(start, stop, step)`` per axis."""
    if all(s == (0, d, 1) for s, d in zip(spec, shape_of(x))):
        return x
    return bind1(slice_p, tuple(spec), x)


def scatter_slice(x, shape: tuple, spec: tuple):
    """A zero tensor of ``shape`` holding ``x`` at the basic slice ``spec`` (one
    normalised ``(start, stop, step)`` per axis): zero padding, diagonal embedding."""
    if tuple(shape) == shape_of(x) and all(s == (0, d, 1) for s, d in zip(spec, shape)):
        return x
    return bind1(scatter_slice_p, (tuple(shape), tuple(spec)), x)


# ------------------------------------------------------------------ concatenate

def _concatenate_rule(axis, *xs):
    first = xs[0]
    code, shape = code_of_value(first), tuple(first.shape)
    if not 0 <= axis < len(shape):
        raise ShapeError(f"concatenate: axis {axis} is out of range for {describe(first)}")
    total = 0
    for x in xs:
        other = tuple(x.shape)
        if (code_of_value(x) != code or len(other) != len(shape)
                or other[:axis] + other[axis + 1:] != shape[:axis] + shape[axis + 1:]):
            raise ShapeError(f"concatenate: operands {', '.join(describe(y) for y in xs)} "
                             f"do not match outside axis {axis}")
        total += other[axis]
    return code, shape[:axis] + (total,) + shape[axis + 1:]


def _concatenate_vjp(axis, ct, out, xs, active):
    """The cotangent of each operand is its slice of ``ct``."""
    cts, start = [], 0
    for x, needed in zip(xs, active):
        shape = shape_of(x)
        stop = start + shape[axis]
        if needed:
            spec = tuple((start, stop, 1) if i == axis else (0, d, 1)
                         for i, d in enumerate(shape_of(ct)))
            cts.append(slice_axes(ct, spec))
        else:
            cts.append(None)
        start = stop
    return tuple(cts)


concatenate_p = primitive("concatenate", lambda axis, *xs: np.concatenate(xs, axis),
                          _concatenate_rule, format_params=lambda axis: f"axis={axis}",
                          static_shapes=True, params=AXIS)
defrules(concatenate_p, linear_jvp(concatenate_p), _concatenate_vjp)


def concatenate(xs, axis: int):
    """Join operands of one dtype along ``axis`` (non-negative)."""
    if len(xs) == 1:
        return xs[0]
    return bind(concatenate_p, axis, *xs)


# ------------------------------------------------------------------ static gathers

def _runs(indices: np.ndarray) -> list:
    """``indices`` cut into maximal runs of one step, greedily from the left, as
    ``(first, step, length)`` triples (step 0: one index repeated)."""
    n = len(indices)
    steps = np.diff(indices)
    changes = np.flatnonzero(steps[1:] != steps[:-1]) + 1     # where a step differs
    runs, i = [], 0
    while i < n:
        if i == n - 1:
            runs.append((int(indices[i]), 1, 1))
            break
        k = np.searchsorted(changes, i, side="right")
        last = int(changes[k]) if k < len(changes) else n - 1
        runs.append((int(indices[i]), int(steps[i]), last - i + 1))
        i = last + 1
    return runs


def take_static(x, indices, axis: int):
    """``x``'s entries at the static ``indices`` (in range, non-negative) along ``axis``:
    a strided slice per run of one step (a broadcast for a repeated index), joined by one
    concatenate, so padding and rolling cost a few slices instead of a gather."""
    shape = shape_of(x)
    indices = np.asarray(indices, dtype=np.int64).reshape(-1)

    def spec(start, stop, step):
        return tuple((start, stop, step) if a == axis else (0, d, 1)
                     for a, d in enumerate(shape))

    if len(indices) == 0:
        return slice_axes(x, spec(0, 0, 1))
    pieces = []
    for first, step, length in _runs(indices):
        if step == 0:
            piece = slice_axes(x, spec(first, first + 1, 1))
            stretched = shape[:axis] + (length,) + shape[axis + 1:]
            piece = broadcast_in_dim(piece, stretched, _identity_perm(len(shape)))
        else:
            stop = first + step * (length - 1) + (1 if step > 0 else -1)
            piece = slice_axes(x, spec(first, stop, step))
        pieces.append(piece)
    return concatenate(pieces, axis)


# ------------------------------------------------------------------ tril / triu

def _triangle_rule(name):
    def rule(k, x):
        if x.ndim < 2:
            raise ShapeError(f"{name}: needs a matrix or a stack of matrices, got "
                             f"{describe(x)}")
        return x
    return rule


def _triangle(name, fn):
    """A primitive keeping one triangle of the last two axes and zeroing the rest (the
    others are zeros, not ``x * 0``, so infinities there do not become NaN).  A
    projection: linear and its own transpose."""
    prim = primitive(name, lambda k, x: fn(x, k), _triangle_rule(name),
                     format_params=lambda k: f"k={k}", params=Int())
    deflinear(prim, lambda k, ct, out, x: bind1(prim, k, ct))
    return prim


tril_p = _triangle("tril", np.tril)
triu_p = _triangle("triu", np.triu)


def tril(x, k: int = 0):
    """Zero the entries above the ``k``-th diagonal of the last two axes."""
    return bind1(tril_p, int(k), x)


def triu(x, k: int = 0):
    """Zero the entries below the ``k``-th diagonal of the last two axes."""
    return bind1(triu_p, int(k), x)


# ------------------------------------------------------------------ repeat with counts

def _repeat_rule(params, x):
    counts, axis = params
    shape = x.shape
    if not 0 <= axis < len(shape) or len(counts) != shape[axis]:
        raise ShapeError(f"repeat: {len(counts)} counts for axis {axis} of {describe(x)}")
    return code_of_value(x), shape[:axis] + (sum(counts),) + shape[axis + 1:]


def _segment_sum_rule(params, x):
    counts, axis = params
    shape = x.shape
    if not 0 <= axis < len(shape) or sum(counts) != shape[axis]:
        raise ShapeError(f"segment_sum: segments of {sum(counts)} entries for axis {axis} "
                         f"of {describe(x)}")
    return code_of_value(x), shape[:axis] + (len(counts),) + shape[axis + 1:]


def _segment_sum_impl(params, x):
    """The sums of consecutive segments of ``counts[i]`` entries along ``axis`` (an empty
    segment sums to 0; ``np.add.reduceat`` would return the next entry for it)."""
    counts, axis = params
    x = np.asarray(x)
    counts = np.asarray(counts, dtype=np.int64)
    shape = list(x.shape)
    shape[axis] = len(counts)
    result = np.zeros(shape, dtype=x.dtype)
    filled = np.flatnonzero(counts)
    if len(filled) and x.shape[axis]:
        starts = (np.cumsum(counts) - counts)[filled]
        index = (slice(None),) * axis + (filled,)
        result[index] = np.add.reduceat(x, starts, axis=axis)
    return result


def _format_counts(params):
    return f"counts={list(params[0])} axis={params[1]}"


_COUNTS = Struct(TupleOf(SIZE), AXIS)
repeat_p = primitive("repeat", lambda p, x: np.repeat(x, p[0], axis=p[1]), _repeat_rule,
                     format_params=_format_counts, params=_COUNTS)
segment_sum_p = primitive("segment_sum", _segment_sum_impl, _segment_sum_rule,
                          format_params=_format_counts, params=_COUNTS)
# mutual transposes: entry i copied counts[i] times <-> the sum of its copies
deflinear(repeat_p, lambda params, ct, out, x: bind1(segment_sum_p, params, ct))
deflinear(segment_sum_p, lambda params, ct, out, x: bind1(repeat_p, params, ct))


def repeat(x, counts: tuple, axis: int):
    """Entry ``i`` along ``axis`` repeated ``counts[i]`` times (non-negative counts)."""
    return bind1(repeat_p, (tuple(int(c) for c in counts), int(axis)), x)

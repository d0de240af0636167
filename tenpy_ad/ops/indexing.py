"""Gather and scatter: NumPy's advanced indexing as primitives.

``x[index]`` with integer arrays or boolean masks among the items, ``np.take``,
``np.take_along_axis`` and the functional updates ``x.at[index].set/add/multiply/min/max``
lower onto these primitives.  The integer arrays of an index are *operands* (after the
indexed array and, for scatters, the values), so they may be constants or values computed
in the graph (``argsort``); the rest of the index is static, a *template* with one entry
per item of NumPy's index tuple:

    None                  a new axis of length 1
    "..."                 the ellipsis (kept: even an empty one separates advanced items)
    int                   an integer, in bounds and non-negative
    (start, stop, step)   a slice, normalised for its axis by ``slice.indices``
    ("index", k)          the k-th index operand (int64, any shape: they broadcast)
    ("bool", b)           a 0-d boolean (a new axis of length 1, or 0 when False)

Params are ``(template, mode)``: ``mode`` is ``"raise"`` (NumPy's indexing: an index
operand out of bounds raises IndexError when the primitive runs) or ``np.take``'s
``"wrap"`` / ``"clip"``, applied to every index operand along its axis.

Derivatives: ``gather`` and ``scatter_add`` are linear and each other's transpose.
``scatter_set`` with duplicate indices keeps NumPy's last write, and its derivative follows
the write that was kept.  ``scatter_min``/``scatter_max`` split the derivative evenly among
the tied candidates (the original entry and every value written to it).  The derivative of
``scatter_mul`` with respect to its values is implemented for indices that hit each element
at most once (checked when the derivative runs); with respect to the array it is exact.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .. import dtypes
from ..errors import DTypeError, IndexingError, NotDifferentiableError, ShapeError
from ..param_schema import (BOOL, SHAPE, SLICE, AnyOf, Exactly, Int, Struct, TupleOf,
                            slice_fits)
# concrete_value(x): the value of ``x`` if it has one now (an array, an eager Tensor's
# data, a constant node's array), else None (a traced value)
from ..primitive import (bind, code_of_value, concrete_value, constant, describe, primitive,
                         shape_of)
from ..rules import defrules
from . import elementwise as ew
from . import structural as st

MODES = ("raise", "wrap", "clip")

#: one entry of a template (see the module docstring)
ITEM = AnyOf(Exactly(None, "..."), Int(0), SLICE, Struct(Exactly("index"), Int(0)),
             Struct(Exactly("bool"), BOOL),
             description="None, '...', an int >= 0, a slice (start, stop, step), "
                         "('index', k) or ('bool', b)")
TEMPLATE = TupleOf(ITEM, max_length=1 << 10, valid=lambda t: t.count("...") <= 1,
                   rule="an index with at most one '...'", example=(("index", 0),))
#: the params of gather and the scatters: (template, mode)
INDEX = Struct(TEMPLATE, Exactly(*MODES))


# ------------------------------------------------------------------ templates

def is_advanced(item) -> bool:
    """Integers, index operands and 0-d booleans: NumPy's advanced items (integers count
    as advanced when an index also has arrays)."""
    return type(item) is int or (type(item) is tuple and item[0] in ("index", "bool"))


def axes_read(item):
    """How many axes of the indexed array ``item`` reads (None: the ellipsis, the rest)."""
    if item is None or (type(item) is tuple and item[0] == "bool"):
        return 0
    if item == "...":
        return None
    return 1


@lru_cache(maxsize=4096)
def layout(template: tuple, ndim: int) -> tuple:
    """The first axis each template entry reads and the number of axes read in all."""
    reads = [axes_read(item) for item in template]
    fixed = sum(r for r in reads if r is not None)
    if fixed > ndim:
        raise IndexingError(f"too many indices for array: array is {ndim}-dimensional, but "
                            f"{fixed} were indexed")
    starts, axis = [], 0
    for r in reads:
        starts.append(axis)
        axis += ndim - fixed if r is None else r
    return tuple(starts), axis


@lru_cache(maxsize=4096)
def indexed_shape(template: tuple, shape: tuple, index_shapes: tuple) -> tuple:
    """The shape of ``x[index]`` by NumPy's rules: the broadcast shape of the advanced items
    stands where they stand if they are adjacent in the index, else first."""
    starts, read = layout(template, len(shape))
    parts, advanced, positions = [], [], []
    for pos, (item, axis) in enumerate(zip(template, starts)):
        if is_advanced(item):
            advanced.append(_advanced_shape(item, shape, axis, index_shapes))
            positions.append(pos)
            parts.append(())
        elif item is None:
            parts.append((1,))
        elif item == "...":
            end = starts[pos + 1] if pos + 1 < len(template) else read
            parts.append(shape[axis:end])
        else:
            if not slice_fits(item, shape[axis]):
                raise IndexingError(f"slice {item} is not normalised for axis {axis} of size "
                                    f"{shape[axis]} (array shape {list(shape)})")
            parts.append((len(range(*item)),))
    if not positions:
        return sum(parts, ()) + shape[read:]
    try:
        broadcast = np.broadcast_shapes(*advanced)
    except ValueError:
        shapes = " ".join(str(list(s)) for s in advanced)
        raise IndexingError("shape mismatch: indexing arrays could not be broadcast together "
                            f"with shapes {shapes}") from None
    first = positions[0]
    if positions == list(range(first, first + len(positions))):
        parts[first] = broadcast
        return sum(parts, ()) + shape[read:]
    return broadcast + sum(parts, ()) + shape[read:]


def _advanced_shape(item, shape, axis, index_shapes) -> tuple:
    if type(item) is int:
        if not 0 <= item < shape[axis]:
            raise IndexingError(f"index {item} is out of bounds for axis {axis} with size "
                                f"{shape[axis]} (array shape {list(shape)})")
        return ()
    if item[0] == "bool":
        return (1,) if item[1] else (0,)
    if item[1] >= len(index_shapes):
        raise IndexingError(f"index operand {item[1]} of {len(index_shapes)} does not exist")
    return index_shapes[item[1]]


def numpy_index(params, shape: tuple, arrays) -> tuple:
    """The NumPy index tuple a template stands for, with its index arrays filled in."""
    template, mode = params
    starts = layout(template, len(shape))[0] if mode != "raise" else None
    items = []
    for pos, item in enumerate(template):
        if item is None or type(item) is int:
            items.append(item)
        elif item == "...":
            items.append(Ellipsis)
        elif item[0] == "index":
            array = arrays[item[1]]
            items.append(array if mode == "raise" else bounded(array, mode,
                                                                shape[starts[pos]]))
        elif item[0] == "bool":
            items.append(item[1])
        else:
            start, stop, step = item     # slice.indices gives stop -1 for "through 0"
            items.append(slice(start, stop if stop >= 0 else None, step))
    return tuple(items)


def bounded(array, mode: str, size: int):
    """``np.take``'s ``"wrap"``/``"clip"`` modes: ``array`` brought into ``[0, size)``."""
    if size == 0:
        if np.size(array):
            raise IndexingError("cannot take from an axis of length 0")
        return array
    return np.mod(array, size) if mode == "wrap" else np.clip(array, 0, size - 1)


def format_template(params) -> str:
    """``[:, i0, 3, None]``-style text of an index (program listings)."""
    template, mode = params
    text = []
    for item in template:
        if item is None or item == "...":
            text.append("None" if item is None else "...")
        elif type(item) is int:
            text.append(str(item))
        elif item[0] == "index":
            text.append(f"i{item[1]}")
        elif item[0] == "bool":
            text.append(str(item[1]))
        else:
            text.append(":".join(str(v) for v in item))
    return "[" + ", ".join(text) + "]" + ("" if mode == "raise" else f" mode={mode}")


# ------------------------------------------------------------------ shape rules

def _check_indices(name: str, arrays) -> tuple:
    for a in arrays:
        if not dtypes.is_integer(code_of_value(a)):
            raise DTypeError(f"{name}: index arrays must be integers, got {describe(a)}")
    return tuple(tuple(a.shape) for a in arrays)


def _gather_rule(params, x, *arrays):
    shapes = _check_indices("gather", arrays)
    return code_of_value(x), indexed_shape(params[0], tuple(x.shape), shapes)


def _scatter_rule(name: str, ordered: bool):
    def rule(params, x, v, *arrays):
        shapes = _check_indices(name, arrays)
        code = code_of_value(x)
        if code_of_value(v) != code:
            raise DTypeError(f"{name}: values {describe(v)} differ in dtype from the array "
                             f"{describe(x)}")
        if ordered and dtypes.is_complex(code):
            raise DTypeError(f"{name}: complex values {describe(x)} have no ordering")
        expected = indexed_shape(params[0], tuple(x.shape), shapes)
        if tuple(v.shape) != expected:
            raise ShapeError(f"{name}: values {describe(v)} do not have the indexed shape "
                             f"{list(expected)} of {describe(x)}")
        return code, tuple(x.shape)
    return rule


# ------------------------------------------------------------------ primitives

def _gather_impl(params, x, *arrays):
    return np.asarray(x[numpy_index(params, x.shape, arrays)])


def _scatter_impl(ufunc):
    """``x`` updated at the index by ``ufunc`` (None: assignment).

    A basic index (slices, integers) reaches each element once, so an ordinary update is
    exact.  An advanced one may repeat elements: the update goes through the flat positions
    it reaches, where NumPy's ``ufunc.at`` has a fast path (and assignment keeps the last
    write), instead of ``ufunc.at`` with a multi-axis index (many times slower)."""
    def impl(params, x, v, *arrays):
        out = np.array(x, copy=True, order="C")     # reshape(-1) below must be a view
        index = _basic_index(params, x.shape) if not arrays else None
        if index is not None:
            out[index] = v if ufunc is None else ufunc(out[index], v)
            return out
        index = numpy_index(params, x.shape, arrays)
        positions = _flat_positions(out.shape, index)
        v = np.reshape(v, -1)
        if ufunc is None:
            out.reshape(-1)[positions] = v
        else:
            ufunc.at(out.reshape(-1), positions, v)
        return out
    return impl


@lru_cache(maxsize=4096)
def _basic_index(params, shape: tuple):
    """The NumPy index of a template of slices and integers (None for an advanced one,
    which may reach an element twice)."""
    if any(is_advanced(item) and type(item) is not int for item in params[0]):
        return None
    return numpy_index(params, shape, ())


def _flat_positions(shape: tuple, index) -> np.ndarray:
    """The flat positions in an array of ``shape`` that ``index`` reaches, in order."""
    return np.arange(math.prod(shape), dtype=np.intp).reshape(shape)[index].reshape(-1)


gather_p = primitive("gather", _gather_impl, _gather_rule, format_params=format_template,
                     static_shapes=True, params=INDEX)
scatter_add_p = primitive("scatter_add", _scatter_impl(np.add),
                          _scatter_rule("scatter_add", False), format_params=format_template,
                          static_shapes=True, params=INDEX)
scatter_set_p = primitive("scatter_set", _scatter_impl(None),
                          _scatter_rule("scatter_set", False), format_params=format_template,
                          static_shapes=True, params=INDEX)
scatter_mul_p = primitive("scatter_mul", _scatter_impl(np.multiply),
                          _scatter_rule("scatter_mul", False), format_params=format_template,
                          static_shapes=True, params=INDEX)
scatter_min_p = primitive("scatter_min", _scatter_impl(np.minimum),
                          _scatter_rule("scatter_min", True), format_params=format_template,
                          static_shapes=True, params=INDEX)
scatter_max_p = primitive("scatter_max", _scatter_impl(np.maximum),
                          _scatter_rule("scatter_max", True), format_params=format_template,
                          static_shapes=True, params=INDEX)


def gather(params, x, *arrays):
    """``x[index]`` for the index ``params = (template, mode)`` with its arrays."""
    return bind(gather_p, params, x, *arrays)


def scatter(prim, params, x, v, *arrays):
    """``x`` updated at ``index`` with ``v`` (of the indexed shape) by ``prim``."""
    return bind(prim, params, x, v, *arrays)


def _zeros_like(x):
    return st.full_like(x, 0)


# ------------------------------------------------------------------ gather, scatter_add

def _gather_jvp(params, tangents, out, xs):
    return None if tangents[0] is None else gather(params, tangents[0], *xs[1:])


def _gather_vjp(params, ct, out, xs, active):
    x, arrays = xs[0], xs[1:]
    ct_x = scatter(scatter_add_p, params, _zeros_like(x), ct, *arrays) if active[0] else None
    return (ct_x,) + (None,) * len(arrays)


def _scatter_add_jvp(params, tangents, out, xs):
    tx, tv = tangents[0], tangents[1]
    if tv is None:
        return tx
    base = _zeros_like(xs[0]) if tx is None else tx
    return scatter(scatter_add_p, params, base, tv, *xs[2:])


def _scatter_add_vjp(params, ct, out, xs, active):
    arrays = xs[2:]
    ct_v = gather(params, ct, *arrays) if active[1] else None
    return (ct if active[0] else None, ct_v) + (None,) * len(arrays)


defrules(gather_p, _gather_jvp, _gather_vjp)
defrules(scatter_add_p, _scatter_add_jvp, _scatter_add_vjp)


# ------------------------------------------------------------------ scatter_set

def _set_jvp(params, tangents, out, xs):
    tx, tv = tangents[0], tangents[1]
    if tx is None and tv is None:
        return None
    x, v, arrays = xs[0], xs[1], xs[2:]
    return scatter(scatter_set_p, params, _zeros_like(x) if tx is None else tx,
                   _zeros_like(v) if tv is None else tv, *arrays)


def _set_vjp(params, ct, out, xs, active):
    x, v, arrays = xs[0], xs[1], xs[2:]
    ct_x = ct_v = None
    if active[0]:                       # the written entries of x no longer matter
        ct_x = scatter(scatter_set_p, params, ct, _zeros_like(v), *arrays)
    if active[1]:
        ct_v = gather(params, ct, *arrays)
        kept = _kept_writes(params, shape_of(x), shape_of(v), arrays)
        if kept is not None:
            ct_v = ew.mul(ct_v, ew.convert(kept, code_of_value(ct)))
    return (ct_x, ct_v) + (None,) * len(arrays)


def _kept_writes(params, x_shape: tuple, v_shape: tuple, arrays):
    """Which entries of the values a ``scatter_set`` keeps (bool, the values' shape), found
    by running the same assignment on entry numbers: with duplicate indices NumPy keeps the
    last write.  None when every entry is kept, which is known when the indices are."""
    numbers = np.arange(math.prod(v_shape), dtype=np.int64).reshape(v_shape)
    concrete = [concrete_value(a) for a in arrays]
    if all(c is not None for c in concrete):
        board = np.full(x_shape, -1, dtype=np.int64)
        written = scatter_set_p.impl(params, board, numbers, *concrete)
        kept = _gather_impl(params, written, *concrete) == numbers
        return None if kept.all() else kept
    board = st.broadcast_in_dim(constant(-1, dtypes.INT64), x_shape, ())
    written = scatter(scatter_set_p, params, board, numbers, *arrays)
    return bind(ew.equal_p, None, gather(params, written, *arrays), numbers)


defrules(scatter_set_p, _set_jvp, _set_vjp)


# ------------------------------------------------------------------ scatter_mul

def _unique_rule(params, y, *arrays):
    shapes = _check_indices("unique_indices", arrays)
    indexed_shape(params[0][0], params[1], shapes)      # the index fits the array's shape
    return y


def _check_unique(params, arrays) -> None:
    gather_params, x_shape = params
    positions = _flat_positions(x_shape, numpy_index(gather_params, x_shape, arrays))
    counts = np.bincount(positions, minlength=math.prod(x_shape))
    if counts.size and counts.max() > 1:
        where = tuple(int(i) for i in np.unravel_index(int(np.argmax(counts)), x_shape))
        raise NotDifferentiableError(
            f"x.at[index].multiply(values): the derivative with respect to the values is "
            f"implemented for indices that reach each element once, but element {list(where)} "
            f"is reached {int(counts.max())} times (the index is "
            f"{format_template(gather_params)})")


def _unique_impl(params, y, *arrays):
    _check_unique(params, arrays)
    return y


#: the identity on its first operand, raising when the index reaches an element twice
unique_indices_p = primitive("unique_indices", _unique_impl, _unique_rule,
                             format_params=lambda p: format_template(p[0]),
                             params=Struct(INDEX, SHAPE))


def _checked_unique(params, x_shape: tuple, y, arrays):
    """``y``, once the index ``params`` is known to reach each element of an array of
    ``x_shape`` at most once (checked now if the indices are known, else when run)."""
    concrete = [concrete_value(a) for a in arrays]
    if all(c is not None for c in concrete):
        _check_unique((params, x_shape), concrete)
        return y
    return bind(unique_indices_p, (params, x_shape), y, *arrays)


def _unique_jvp(params, tangents, out, xs):
    t = tangents[0]
    return None if t is None else bind(unique_indices_p, params, t, *xs[1:])


def _unique_vjp(params, ct, out, xs, active):
    return (bind(unique_indices_p, params, ct, *xs[1:]),) + (None,) * (len(xs) - 1)


defrules(unique_indices_p, _unique_jvp, _unique_vjp)


def _mul_jvp(params, tangents, out, xs):
    tx, tv = tangents[0], tangents[1]
    x, v, arrays = xs[0], xs[1], xs[2:]
    result = None if tx is None else scatter(scatter_mul_p, params, tx, v, *arrays)
    if tv is not None:            # each element reached once: d out = x dv there
        x_at = _checked_unique(params, shape_of(x), gather(params, x, *arrays), arrays)
        part = scatter(scatter_add_p, params, _zeros_like(x), ew.mul(x_at, tv), *arrays)
        result = part if result is None else ew.add(result, part)
    return result


def _mul_vjp(params, ct, out, xs, active):
    x, v, arrays = xs[0], xs[1], xs[2:]
    ct_x = ct_v = None
    if active[0]:
        ct_x = scatter(scatter_mul_p, params, ct, ew.conj(v), *arrays)
    if active[1]:
        ct_v = _checked_unique(params, shape_of(x), gather(params, ew.mul(ct, ew.conj(x)),
                                                            *arrays), arrays)
    return (ct_x, ct_v) + (None,) * len(arrays)


defrules(scatter_mul_p, _mul_jvp, _mul_vjp)


# ------------------------------------------------------------------ scatter_min, scatter_max

def _extremum_masks(params, out, x, v, arrays):
    """Which candidates attain each output (the original entry, the values written to it)
    and how many tie: the derivative is split evenly among them."""
    at_x = ew.eq_mask(x, out)
    at_v = ew.eq_mask(v, gather(params, out, *arrays))
    return at_x, at_v, scatter(scatter_add_p, params, at_x, at_v, *arrays)


def _extremum_jvp(params, tangents, out, xs):
    tx, tv = tangents[0], tangents[1]
    if tx is None and tv is None:
        return None
    x, v, arrays = xs[0], xs[1], xs[2:]
    at_x, at_v, count = _extremum_masks(params, out, x, v, arrays)
    total = _zeros_like(x) if tx is None else ew.mul(tx, at_x)
    if tv is not None:
        total = scatter(scatter_add_p, params, total, ew.mul(tv, at_v), *arrays)
    return ew.div(total, count)


def _extremum_vjp(params, ct, out, xs, active):
    x, v, arrays = xs[0], xs[1], xs[2:]
    at_x, at_v, count = _extremum_masks(params, out, x, v, arrays)
    share = ew.div(ct, count)
    ct_x = ew.mul(share, at_x) if active[0] else None
    ct_v = ew.mul(gather(params, share, *arrays), at_v) if active[1] else None
    return (ct_x, ct_v) + (None,) * len(arrays)


defrules(scatter_min_p, _extremum_jvp, _extremum_vjp)
defrules(scatter_max_p, _extremum_jvp, _extremum_vjp)

"""In-place writes with NumPy's semantics: ``t[idx] = v``, ``t += v`` (and the other
augmented assignments, whole or indexed), ``out=``, ``np.copyto``, ``t.fill``, ``np.put``,
``np.place``.

An eager :class:`~tenpy_ad.Tensor` is a handle.  A write computes the functional update
(``t.at[idx].set(v)``, ``t + v``, ...) and *rebinds* the handle to the result: its value,
tape entry and slot.  Tape entries keep the arrays they saved (no array is ever written),
so gradients with respect to the written values and the kept ones stay right, at every
order.  A view (numpy/_views.py) writes into its base, after which every live view of the
base is recomputed, as NumPy's views see each other's writes.

A traced tensor is a graph node, which a write cannot change (the nodes built from it need
its old value): the write *forwards* it to the node of the functional update, which later
operations take instead (_core/traced_writes.pxi).  Equal traced expressions are one node,
so a node that is also another expression's value (``is_shared``) refuses writes into it;
the arrays code writes into -- copies, ``zeros_like``, ``empty_like``, ... -- are unique.
"""
from __future__ import annotations

import operator
from typing import Callable

import numpy as np

from ..errors import (ArgumentValueError, DTypeError, NotDifferentiableError, ShapeError,
                      TapeError, UnsupportedError)
from ..primitive import (WRITE_HINT, Tensor, as_node, check_writes_allowed, describe,
                         forward_write, is_aliased, is_complex_value, is_eager,
                         is_grad_enabled, is_scalar, is_shared, is_tensor, is_traced,
                         rebind, rebind_base_and_views, rebind_plain, shape_of)
from . import _dispatch, _views
from ._arrays import tensor_or_array
from ._operands import broadcasts_to
from ._dispatch import implements
from ._views import copy_tensor
from .arithmetic import astype, negative
from .complex_numbers import conj
from .creation import full_like
from ..ops.indexing import scatter, scatter_add_p, scatter_mul_p
from .indexing import BASIC_INDEX, index_key, index_update, parsed_index, set_at, take
from .logic import where as select
from .shaping import broadcast_to, reshape

_AT_HINT = "write x = x.at[index].set(value) (or .add(value)), which returns the new tensor"


# ------------------------------------------------------------------ checks

def _refuse_target(what: str, target):
    raise UnsupportedError(f"{what}: the target {describe(target)} is not a tensor that "
                           f"can be written in place; {_AT_HINT}")


def _check_writable(target, link) -> None:
    """Read-only views, grad-requiring leaves (PyTorch's rule) and shared traced nodes
    refuse writes."""
    if is_traced(target):
        check_writes_allowed()
    if link is not None and link.readonly:
        raise ArgumentValueError(
            f"assignment destination is read-only: this tensor is a view made by "
            f"{link.readonly} (as in NumPy); write into a copy: x = x.copy()")
    base = target if link is None else link.base
    if is_traced(base):
        for node in [base, target, *_views.live_views(base)]:
            if is_shared(node):
                raise UnsupportedError(
                    f"in-place write into the traced tensor {describe(base)}, which (or "
                    "a view of which) is also the value of another expression (equal "
                    "traced expressions are one node, so the write would change both); "
                    f"write into a copy: x = x.copy(), or {_AT_HINT}")
        return
    if base.is_leaf and base.requires_grad and is_grad_enabled():
        what = "a view of a leaf tensor" if link is not None else "a leaf tensor"
        raise TapeError(
            f"{what} that requires grad is used in an in-place operation (its gradient "
            "would be lost); write into a copy: x = x.copy(), or write under "
            "tp.no_grad()")


# ------------------------------------------------------------------ the write

def assign(target, value, what: str) -> None:
    """``target`` takes ``value`` (a tensor or array of its shape and dtype), through its
    base if it is a view; the views of that base are recomputed."""
    if not is_tensor(target):
        _refuse_target(what, target)
    if tuple(shape_of(value)) != tuple(target.shape) or value.dtype != target.dtype:
        raise DTypeError(f"{what}: the written value {describe(value)} does not have the "
                         f"shape and dtype of the target {describe(target)}")  # (a bug)
    if is_traced(target) and is_eager(value) and value.requires_grad:
        raise NotDifferentiableError(
            f"{what}: writing a tensor that requires grad into the traced tensor "
            f"{describe(target)} would drop its gradient (a traced graph holds it as a "
            "constant); trace the computation of the value too")
    link = target._view
    _check_writable(target, link)
    with _views.suspended():
        if link is None:
            _rebind_base(target, value)
        else:
            _rebind_base(link.base, _through_chain(link.base, link.steps, value),
                         target, value)


def _through_chain(base, steps: tuple, value):
    """The base whose view along ``steps`` is ``value`` and which keeps its other
    entries: each step's parent with its view replaced, from the view back to the base."""
    parents = [base]
    for step in steps[:-1]:
        parents.append(_views.forward(step, parents[-1]))
    for step, parent in zip(reversed(steps), reversed(parents)):
        value = _update(step, parent, value)
    return value


def _update(step: tuple, parent, child):
    """``parent`` with the view ``step`` makes of it replaced by ``child``."""
    kind, arg = step
    if kind.update is None:
        return _by_positions(lambda p: kind.forward(p, arg), parent, child)
    return kind.update(parent, child, arg)


def _by_positions(forward: Callable, parent, child):
    """``parent`` with the entries ``forward`` selects replaced by ``child``: ``forward``
    run on the positions ``arange(size)`` tells which entry each of the view's is."""
    shape = tuple(parent.shape)
    positions = np.asarray(forward(np.arange(int(np.prod(shape))).reshape(shape)))
    flat = index_update(reshape(parent, (-1,)))[positions.reshape(-1)].set(
        reshape(child, (-1,)))
    return reshape(flat, shape)


def _rebind_base(base, value, written=None, written_value=None) -> None:
    """``base`` takes ``value``; its live views are recomputed, but for the view
    ``written`` whose write it is, which takes ``written_value`` (its new entries) --
    unless that is the base or one of its views itself (``np.copyto(np.flip(a), a)``),
    whose handle the write changes: that view is recomputed too (NumPy reads the source
    before it writes)."""
    views = _views.live_views(base)
    if written_value is base or any(written_value is view for view in views):
        written = None
    if is_traced(base):
        forward_write(base, as_node(value))
        for view in views:
            forward_write(view, as_node(written_value if view is written else
                                        _views.recompute(base, view._view.steps)))
        return
    value = _own_value(value)
    if not all(is_eager(view) for view in views):     # (_core's _HeldValues)
        raise UnsupportedError(
            "in-place write into a tensor whose values NumPy still holds as an array "
            "(np.asarray(t), np.array(t, copy=False), np.lib.stride_tricks.as_strided(t), "
            "...): the write cannot reach that array, as NumPy's would; convert a copy "
            "instead (np.array(t) or t.numpy().copy()), or drop the array before writing")
    rebind(base, value, base.is_leaf and base.requires_grad)
    for view in views:
        rebind(view, _own_value(written_value) if view is written else
               _as_tensor(_views.recompute(base, view._view.steps)))


def _own_value(value):
    """``value`` as an eager tensor a handle may take: a leaf that requires grad is copied
    through the tape (``np.copyto(t, x)`` of a leaf ``x``: the handle ``t`` would become a
    second leaf, and the gradient of t's later uses would stop at ``t``, not reach ``x``)."""
    value = _as_tensor(value)
    if value.is_leaf and value.requires_grad and is_grad_enabled():
        return copy_tensor(value)
    return value


def _as_tensor(value):
    return value if is_eager(value) else Tensor(np.asarray(value))


def _fitted(target, value, what: str, casting: str = "same_kind"):
    """``value`` in ``target``'s shape and dtype, as NumPy casts and broadcasts a result
    written into an existing array."""
    shape, value_shape = tuple(target.shape), tuple(shape_of(value))
    if value_shape != shape:
        if not broadcasts_to(value_shape, shape):
            raise ShapeError(f"{what}: non-broadcastable output operand with shape "
                             f"{shape} doesn't match the broadcast shape {value_shape}")
        value = broadcast_to(value, shape)
    if value.dtype != target.dtype:
        if not np.can_cast(value.dtype, target.dtype, casting):
            raise DTypeError(f"{what}: cannot cast the result from {value.dtype} to the "
                             f"target's dtype {target.dtype} with casting rule '{casting}'")
        if value.dtype.kind == "c" and target.dtype.kind != "c":
            raise DTypeError(f"{what}: complex values into the real tensor "
                             f"{describe(target)} would drop the imaginary part")
        value = astype(value, target.dtype)
    return value


# ------------------------------------------------------------------ the surface's forms

def setitem(target, index, value) -> None:
    """``target[index] = value`` (NumPy's basic, integer-array and boolean indices,
    ``value`` broadcast; repeated indices keep the last value).  An eager tensor without
    views is written by the core's short path first (``__setitem__``: the update rebound)."""
    if not is_tensor(target):
        _refuse_target("x[index] = value", target)
    if is_tensor(value) and value._view is not None and _unchanged_view(target, index,
                                                                                value):
        return                         # a[i] += v: the view already wrote into a
    value = _in_dtype(target, tensor_or_array(value, "setitem"), "x[index] = value")
    assign(target, set_at(target, index, value), "x[index] = value")


def _in_dtype(target, value, what: str):
    """``value`` cast to ``target``'s dtype, as NumPy's assignment casts (unsafely: 2.7
    into an integer tensor is 2); complex values into a real tensor are refused."""
    dtype = np.dtype(value.dtype) if hasattr(value, "dtype") else np.asarray(value).dtype
    if dtype == target.dtype:
        return value
    if dtype.kind == "c" and target.dtype.kind != "c":
        raise DTypeError(f"{what}: complex values into the real tensor {describe(target)} "
                         "would drop the imaginary part; write their .real explicitly")
    return astype(value, target.dtype)


def _unchanged_view(target, index, value) -> bool:
    """Whether ``value`` is ``target[index]`` itself, a live basic view (``a[i] += v``:
    Python writes ``a[i]`` back after the view's own write reached ``a``)."""
    link, own = value._view, target._view
    base, prefix = (target, ()) if own is None else (own.base, own.steps)
    if link.base is not base or link.steps[:-1] != prefix:
        return False                   # (steps compare by identity: the same chain)
    kind, items = link.steps[-1]
    if kind is not BASIC_INDEX:
        return False
    if items is index:                 # (Python hands both calls the same index)
        return True
    return items is not None and index_key(items) == index_key(
        index if type(index) is tuple else (index,))


_SYMBOLS = {"add": "+=", "subtract": "-=", "multiply": "*=", "divide": "/=",
            "floor_divide": "//=", "remainder": "%=", "power": "**=", "matmul": "@=",
            "bitwise_and": "&=", "bitwise_or": "|=", "bitwise_xor": "^="}


_OPERATORS = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
              "divide": operator.truediv, "floor_divide": operator.floordiv,
              "remainder": operator.mod, "power": operator.pow, "matmul": operator.matmul,
              "bitwise_and": operator.and_, "bitwise_or": operator.or_,
              "bitwise_xor": operator.xor}


def inplace_op(name: str, target, other, result=None):
    """``target <op>= other`` (``result``: ``target <op> other`` if already computed),
    written in place; ``target`` is returned.  A shared traced node without views gives
    the new node instead (Python binds the name to it)."""
    if result is None:
        if _written_through_base(name, target, other):
            return target
        result = _OPERATORS[name](target, other)     # ``x + v``: NumPy's result
    if rebind_plain(target, result):                 # no views, same shape and dtype
        return target
    if is_scalar(target):     # NumPy's scalars are immutable: Python binds the new one
        return result         # (item assignment, which NumPy's scalars refuse, writes)
    what = f"x {_SYMBOLS[name]} value"
    result = _fitted(target, result, what)
    if is_shared(target) and not is_aliased(target):
        return result                   # Python binds the name to the new node
    assign(target, result, what)
    return target


def _written_through_base(name: str, view, other) -> bool:
    """``a[idx] op= v`` written as its base's functional update ``a.at[idx].add(v)``
    (``.mul``) where that is the same arithmetic: a basic-index view of a base, ``v`` of
    the view's dtype (or a Python number).  The base's tape then has one entry, as the
    functional form's, not a scatter of the view's new value (its slice and update); the
    view is recomputed from the new base.  False, with nothing done: the general path."""
    prim, link = _SCATTER_OF.get(name), view._view
    if prim is None or link is None or len(link.steps) != 1:
        return False
    kind, items = link.steps[0]
    if kind is not BASIC_INDEX:
        return False
    same_shape = _fits_in_place(view, other)
    if same_shape is None:
        return False                       # (the errors, NumPy's: the general path)
    _check_writable(view, link)
    if name == "subtract":
        other = negative(other)            # a - b is a + (-b), exactly
    base = link.base
    if same_shape:
        new_base = scatter(prim, (parsed_index(base, items)[0], "raise"), base, other)
    else:                                  # ``.at`` converts and broadcasts ``other``
        at = index_update(base)[items]
        new_base = at.multiply(other) if prim is scatter_mul_p else at.add(other)
    if is_eager(base):                     # (its ops register no views: no suspension)
        if not rebind_base_and_views(base, new_base, _views.recompute):
            _rebind_base(base, new_base)   # (raises: NumPy holds its values)
    else:
        with _views.suspended():
            _rebind_base(base, new_base)
    return True


_SCATTER_OF = {"add": scatter_add_p, "subtract": scatter_add_p, "multiply": scatter_mul_p}


def _fits_in_place(view, other):
    """Whether ``view <op> other`` computes in the view's dtype and shape: True for a
    tensor of both (of the view's kind), False for a value that broadcasts to them
    (an array of the dtype, a Python number into floats), None otherwise (NumPy would
    compute in a wider dtype and round the result, not the operand; or refuse)."""
    if is_tensor(other):
        if other.dtype != view.dtype or is_traced(other) != is_traced(view):
            return None
        if other.shape == view.shape:
            return True
    elif isinstance(other, np.ndarray):
        if other.dtype != view.dtype:
            return None
    elif type(other) not in (int, float) or view.dtype.kind not in "fc":
        return None
    return False if broadcasts_to(tuple(shape_of(other)), tuple(view.shape)) else None


def fill(target, value) -> None:
    """``target.fill(value)``: every entry set to the scalar ``value``."""
    if not is_tensor(target):
        _refuse_target("x.fill(value)", target)
    value = tensor_or_array(value, "fill")
    if shape_of(value) != ():
        raise ShapeError(f"fill: the value must be a scalar, got {describe(value)}")
    assign(target, _fitted(target, value, "fill", "unsafe") if is_tensor(value)
           else full_like(target.data if is_eager(target) else target, value),
           "x.fill(value)")


def conj_method(x):
    """``x.conj()``: of a real tensor, ``x`` itself, as ``ndarray.conj`` (writes into the
    result reach ``x``); of a complex one, a new tensor."""
    return x if not is_complex_value(x) else conj(x)


# ------------------------------------------------------------------ out=, copyto, put

def write_out(out, result, what: str, operands=()):
    """``result`` written into ``out`` (a tensor, an ndarray, or a tuple of them, one per
    result); returns ``out`` as NumPy does."""
    outs = out if type(out) is tuple else (out,)
    results = result if type(result) is tuple else (result,)
    if len(outs) != len(results):
        raise ArgumentValueError(f"{what}: out= needs {len(results)} arrays, got {len(outs)}")
    for target, value in zip(outs, results):
        if target is None:
            continue
        if is_tensor(target):
            assign(target, _fitted(target, value, what), what)
        elif isinstance(target, np.ndarray):
            _write_array(target, value, what)
        else:
            _refuse_target(what, target)
    return out if type(out) is not tuple or len(out) != 1 else out[0]


def _write_array(target: np.ndarray, value, what: str) -> None:
    """A result written into an ndarray: a tensor that requires grad would lose its
    gradient, so it is refused with the way to write it."""
    if is_traced(value) or (is_eager(value) and value.requires_grad):
        raise NotDifferentiableError(array_target_message(what))
    np.copyto(target, value.data if is_eager(value) else value, casting="same_kind")


def array_target_message(what: str) -> str:
    """Why a tensor that requires grad cannot be written into an ndarray, and how to."""
    return (f"{what}: writing a tensor that requires grad into a NumPy array would drop "
            f"its gradient; {WRITE_HINT}, or build the result functionally "
            "(tnp.stack, z.at[i].set(t))")


@implements("numpy.copyto")
def copyto(dst, src, casting="same_kind", where=True):
    """Copy ``src`` into the tensor ``dst`` (broadcast, cast with ``casting``; only where
    ``where`` is true)."""
    if not is_tensor(dst):
        if isinstance(dst, np.ndarray):
            _write_array(dst, tensor_or_array(src, "copyto"), "np.copyto")
            return None
        _refuse_target("np.copyto", dst)
    value = _fitted(dst, tensor_or_array(src, "copyto"), "np.copyto", casting)
    if where is not True:
        value = select(where, value, dst)
    assign(dst, value, "np.copyto")
    return None


@implements("numpy.put")
def put(a, ind, v, mode="raise"):
    """``a.flat[ind] = v`` (``v`` repeated to the length of ``ind``)."""
    if mode != "raise":
        raise ArgumentValueError(f"put: only mode='raise' is supported on tensors, got "
                                 f"{mode!r}")
    _put_flat(a, np.asarray(ind, dtype=np.int64).reshape(-1), v, "np.put")


@implements("numpy.place")
def place(arr, mask, vals):
    """``arr[mask] = vals``, ``vals`` repeated to the number of true entries."""
    mask = np.asarray(mask.data if is_eager(mask) else mask, dtype=bool)
    _put_flat(arr, np.flatnonzero(mask), vals, "np.place")


def _put_flat(a, positions: np.ndarray, values, what: str) -> None:
    if not is_tensor(a):
        _refuse_target(what, a)
    values = reshape(tensor_or_array(values, what), (-1,))
    n = int(values.shape[0])
    if n != len(positions):
        if n == 0:
            if len(positions):
                raise ArgumentValueError(f"{what}: cannot write from an empty array")
            return
        values = take(values, np.arange(len(positions)) % n)
    flat = index_update(reshape(a, (-1,)))[positions].set(values)
    assign(a, reshape(flat, tuple(a.shape)), what)


__all__ = ["copyto", "put", "place"]


_dispatch.install_writer(write_out)      # out= of the dispatch and the ufuncs writes here

"""Function-level transforms with JAX's names and semantics: ``grad``, ``value_and_grad``,
``vjp``, ``jvp`` and ``jit``.  Arguments and results may be pytrees (tuples, lists, dicts).

They work in every mode:

* called with concrete values (arrays, scalars) they run the function eagerly on a tape and
  return ndarrays — any Python control flow is allowed;
* called with TracedTensors (inside a traced computation, or under another transform) they
  build graph nodes, so they compose (``tp.grad(tp.grad(f))``);
* called with eager Tensors that require grad (inside another eager transform) they record
  their own backward, so they compose in eager mode too.

Complex inputs: the gradient of a real function is ``dL/dx + i dL/dy`` (the steepest-ascent
direction, PyTorch's convention; ``jax.grad`` returns its complex conjugate).
"""
from __future__ import annotations

import functools
import numbers
from typing import Callable, Sequence

import numpy as np

from . import ad, dtypes
from .eager import gradients, tensor
from ._compiled import _core
from ._sequences import array_of
from .errors import ArgumentError, ArgumentValueError, DTypeError, GraphError, ShapeError
from .primitive import (Tensor, any_forwarded, any_requires_grad, any_traced, array_value,
                        as_node, current, enter_trace, is_eager, is_traced, is_value,
                        leave_trace, needs_grad, plain_value)
from .compiler import compile as compile_program
from .traced import input as placeholder
from .numpy._views import record_layout
from .tree import tree_flatten, tree_map, tree_unflatten


def _int_tuple(api: str, what: str, value) -> tuple:
    """An int or a list/tuple of ints (``argnums``, ``static_argnums``) as a tuple."""
    items = (value,) if isinstance(value, numbers.Integral) else value
    if not isinstance(items, (list, tuple)) or any(
            isinstance(i, bool) or not isinstance(i, numbers.Integral) for i in items):
        raise ArgumentError(f"{api}: {what} must be an int or a tuple of ints, got "
                            f"{value!r}")
    return tuple(int(i) for i in items)


def _argnums_tuple(argnums, n_args: int) -> tuple:
    nums = _int_tuple("grad", "argnums", argnums)
    for i in nums:
        if not -n_args <= i < n_args:
            raise ArgumentError(f"grad: argnums {argnums!r} out of range for {n_args} "
                                "arguments")
    return tuple(i % n_args for i in nums)


def _replace_args(args: tuple, nums: tuple, new_trees: Sequence) -> tuple:
    args = list(args)
    for i, tree in zip(nums, new_trees):
        args[i] = tree
    return tuple(args)


#: eager transforms running their function now: an inner transform's result may then
#: depend on an outer one's variables through closures even when its own arguments are
#: plain numbers (``tp.grad(lambda s: tp.grad(lambda t: s*t*t)(1.7))``)
_running = [0]


def _run(fn: Callable, *args, **kwargs):
    """``fn(*args, **kwargs)``, counted as an eager transform's function (see above); a
    traced output written in place is taken at its value (numpy/inplace.py)."""
    _running[0] += 1
    enter_trace()
    try:
        return _values_of(fn(*args, **kwargs))
    finally:
        leave_trace()
        _running[0] -= 1


def _values_of(out):
    """``out`` with each traced tensor that a write forwarded replaced by its value's node
    (before the run ends and such tensors are released: _core/traced_writes.pxi)."""
    return tree_map(current, out) if any_forwarded() else out


def _nested(kept: bool, xs, outputs) -> bool:
    """Whether an eager transform keeps its tape: a differentiated argument requires grad
    (``kept``: the arguments were kept as they are), or (inside another transform) its
    outputs depend on another tensor that does."""
    return kept or (_running[0] > 0 and
                    _core.reaches_other_leaves(list(outputs), list(xs)))


def _eager_leaves(leaves, nested: bool) -> list:
    """Tensors to differentiate with respect to: the given grad-requiring tensors (nested
    transforms keep their tape), fresh leaves otherwise."""
    result = []
    for x in leaves:
        if nested and needs_grad(x):
            result.append(x)
        else:
            result.append(tensor(plain_value(x), requires_grad=True))
    return result


def _concrete(x, nested: bool):
    """What a transform returns for an eager result: ndarrays at top level."""
    return x if nested else array_value(x)


def _split_aux(out, has_aux: bool):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise ArgumentError("has_aux=True needs the function to return (value, aux)")
    return out


def value_and_grad(fn: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """``fn``'s value and its gradient w.r.t. ``args[argnums]`` (a real scalar ``fn``)."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args))
        leaves, treedef = tree_flatten(tuple(args[i] for i in nums))
        if any_traced(leaves):
            if not all([is_traced(x) for x in leaves]):
                raise ArgumentError("grad: inside a trace, every differentiated argument "
                                    "must be a traced tensor")
            value, aux = _split_aux(fn(*args, **kwargs), has_aux)
            grads = ad.grad(as_node(value), leaves)
            result = tree_unflatten(treedef, grads)
        else:
            kept = any_requires_grad(leaves)
            xs = _eager_leaves(leaves, kept)
            new_args = _replace_args(args, nums, tree_unflatten(treedef, xs))
            value, aux = _split_aux(_run(fn, *new_args, **kwargs), has_aux)
            nested = _nested(kept, xs, [value])
            _check_scalar_loss(value)
            grads = gradients("grad", [value], xs, None, nested, nested)
            result = tree_unflatten(treedef, [_concrete(g, nested) for g in grads])
            value = _concrete(value, nested)
            if has_aux:
                aux = tree_map(lambda a: _concrete(a, nested) if is_eager(a) else a, aux)
        result = result[0] if isinstance(argnums, numbers.Integral) else result
        return ((value, aux), result) if has_aux else (value, result)

    return wrapped


def _check_scalar_loss(value):
    if not is_value(value):
        raise ArgumentError(f"grad: the function must return a scalar tensor or number, "
                            f"got {type(value).__name__}")
    array = array_value(value)
    if array.shape != ():
        raise GraphError(f"grad: the function must return a scalar, got shape "
                         f"{list(array.shape)}")
    if array.dtype.kind == "c":
        raise DTypeError("grad: the function returns a complex value; differentiate its real "
                         "part or use tp.vjp")


def grad(fn: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """The gradient of a real scalar ``fn`` w.r.t. ``args[argnums]`` (JAX's ``grad``)."""
    vg = value_and_grad(fn, argnums, has_aux)

    @functools.wraps(fn)
    def grad_only(*args, **kwargs):
        out = vg(*args, **kwargs)
        if has_aux:
            (_, aux), g = out
            return g, aux
        return out[1]

    return grad_only


def vjp(fn: Callable, *primals, has_aux: bool = False):
    """``(fn(*primals), vjp_fn)``; ``vjp_fn(cotangent)`` returns one cotangent per primal.

    In eager mode the tape is kept for ``vjp_fn`` (call it as often as needed); it is freed
    when ``vjp_fn`` is.
    """
    leaves, treedef = tree_flatten(primals)
    if any_traced(leaves):
        out, aux = _split_aux(fn(*primals), has_aux)
        out_leaves, out_def = tree_flatten(out)

        def vjp_fn(cotangent):
            ct_leaves = _matching_leaves(cotangent, out_def, "cotangent")
            return tree_unflatten(treedef, ad.vjp(out_leaves, leaves, ct_leaves))
        result = out
    else:
        kept = any_requires_grad(leaves)
        xs = _eager_leaves(leaves, kept)
        out, aux = _split_aux(_run(fn, *tree_unflatten(treedef, xs)), has_aux)
        out_leaves, out_def = tree_flatten(out)
        nested = _nested(kept, xs, out_leaves)

        def vjp_fn(cotangent):
            ct_leaves = _matching_leaves(cotangent, out_def, "cotangent")
            grads = gradients("vjp", out_leaves, xs, ct_leaves, True, nested)
            return tree_unflatten(treedef, [_concrete(g, nested) for g in grads])
        result = tree_unflatten(out_def, [_concrete(o, nested) for o in out_leaves])
    return (result, vjp_fn, aux) if has_aux else (result, vjp_fn)


def _matching_leaves(tree, expected_def, what: str) -> list:
    leaves, treedef = tree_flatten(tree)
    if treedef != expected_def:
        raise ArgumentError(f"{what} has structure {treedef}, expected {expected_def}")
    return leaves


def jvp(fn: Callable, primals: Sequence, tangents: Sequence):
    """``(fn(*primals), J tangents)`` — forward-mode derivative (JAX's ``jvp``).

    Traced primals use the JVP rules to build graph nodes.  Concrete primals run ``fn``
    eagerly (any control flow) on a tape, then sweep the tape forward with the same JVP
    rules on the saved values.  Inside another eager transform the sweep is recorded too,
    so forward and reverse mode compose.
    """
    for what, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, (tuple, list)):      # an array would become its rows
            raise ArgumentError(f"jvp: {what} must be a tuple or list of the function's "
                                f"arguments (as in JAX), got {type(value).__name__}")
    primals, tangents = tuple(primals), tuple(tangents)
    leaves, treedef = tree_flatten(primals)
    t_leaves = _matching_leaves(tangents, treedef, "tangents")
    if any_traced(leaves):
        out = fn(*primals)
        out_leaves, out_def = tree_flatten(out)
        return out, tree_unflatten(out_def, ad.jvp(out_leaves, leaves, t_leaves))
    kept = any_requires_grad(leaves)
    xs = _eager_leaves(leaves, kept)
    seeds = [_tangent_for(x, t) for x, t in zip(xs, t_leaves)]
    out = _run(fn, *tree_unflatten(treedef, xs))
    out_leaves, out_def = tree_flatten(out)
    nested = _nested(kept, xs, out_leaves) or any_requires_grad(t_leaves)
    t_out = _core.eager_tangents(out_leaves, xs, seeds, nested)
    t_out = [np.zeros_like(array_value(o)) if t is None else t
             for o, t in zip(out_leaves, t_out)]
    return (tree_unflatten(out_def, [_concrete(o, nested) for o in out_leaves]),
            tree_unflatten(out_def, [_concrete(t, nested) for t in t_out]))


def _tangent_for(x: Tensor, t):
    """The tangent ``t`` of input ``x``: its shape, in its dtype (a Tensor stays one)."""
    if t is None:
        return None
    value = array_value(t)
    if value.shape != x.shape:
        raise ShapeError(f"jvp: a tangent of shape {list(value.shape)} for an input of "
                         f"shape {list(x.shape)}")
    if value.dtype.kind == "c" and x.dtype.kind != "c":
        raise DTypeError(f"jvp: a complex tangent for a {x.dtype.name} input")
    if is_eager(t):
        return t if t.dtype == x.dtype else t.astype(x.dtype)
    return value.astype(x.dtype, copy=False)


def _layout_key(array: np.ndarray):
    """None for a C-ordered array, else its strides in items (a traced function that
    writes in place sees NumPy's views of it, so each layout is traced on its own)."""
    if array.flags.c_contiguous:
        return None
    size = array.itemsize
    return tuple(s // size for s in array.strides) if all(
        s % size == 0 for s in array.strides) else None


class jit:
    """Compile ``fn`` once per input signature and run the cached Program.

    The signature is the pytree structure plus each leaf's shape and dtype (and the values
    of ``static_argnums``); a new signature traces again.  Called with TracedTensors (inside
    another trace) it simply inlines ``fn``.  The compiled program does not record an eager
    tape: differentiate inside ``fn`` (``tp.grad``) rather than through it.
    """

    def __init__(self, fn: Callable, static_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.static_argnums = _int_tuple("jit", "static_argnums", static_argnums)
        if any(i < 0 for i in self.static_argnums):
            raise ArgumentValueError(f"jit: static_argnums must be non-negative, got "
                                     f"{static_argnums!r}")
        self._cache: dict = {}
        self.trace_count = 0

    def _split(self, args):
        for i in self.static_argnums:
            if i >= len(args):
                raise ArgumentError(f"jit: static_argnums {self.static_argnums} out of range "
                                    f"for {len(args)} arguments")
        static = tuple(args[i] for i in self.static_argnums)
        dynamic = tuple(a for i, a in enumerate(args) if i not in self.static_argnums)
        return static, dynamic

    def _merge(self, static, dynamic):
        args, s, d = [], iter(static), iter(dynamic)
        for i in range(len(static) + len(dynamic)):
            args.append(next(s) if i in self.static_argnums else next(d))
        return args

    def _entry(self, args, kwargs):
        static, dynamic = self._split(args)
        leaves, treedef = tree_flatten((dynamic, kwargs))
        if any_traced(leaves):
            return None, leaves
        arrays = []
        for x in leaves:
            if is_eager(x):
                if x.requires_grad:
                    raise ArgumentError("tp.jit does not record an eager tape; pass arrays "
                                        "(x.detach()) or differentiate inside the function")
                x = x.data
            array = array_of(x, "jit", copy=False)
            code = dtypes.value_code(array.dtype)
            arrays.append(array.astype(dtypes.DTYPES[code], copy=False))
        signature = (treedef, static, tuple((a.shape, a.dtype.str) for a in arrays))
        entry = self._cache.get(signature)
        if entry is None or type(entry) is dict:
            entry = self._by_layout(signature, entry, static, treedef, arrays)
        return entry, arrays

    def _by_layout(self, signature, by_layout, static, treedef, arrays):
        """The entry of a signature not traced yet, or of one whose trace wrote in place:
        then NumPy's views of the inputs depend on their layouts, and each layout is
        traced on its own (``by_layout``: layout keys -> entries)."""
        layouts = tuple(_layout_key(a) for a in arrays)
        entry = None if by_layout is None else by_layout.get(layouts)
        if entry is None:
            writes = _core.writes_forwarded()
            entry = self._trace(static, treedef, arrays, layouts)
            if by_layout is None and _core.writes_forwarded() == writes:
                self._cache[signature] = entry      # (no write: a layout cannot show)
            else:
                self._cache.setdefault(signature, {})[layouts] = entry
        return entry

    def _trace(self, static, treedef, arrays, layouts):
        self.trace_count += 1
        placeholders = [placeholder(a.shape, a.dtype) for a in arrays]
        for node, strides in zip(placeholders, layouts):
            if strides is not None:        # NumPy's views of it follow its layout
                record_layout(node, strides)
        dynamic, kwargs = tree_unflatten(treedef, placeholders)
        enter_trace()
        try:
            out = _values_of(self.fn(*self._merge(static, dynamic), **kwargs))
            out_leaves, out_def = tree_flatten(out)
            out_nodes = [as_node(o) for o in out_leaves]
            return compile_program(out_nodes, placeholders), out_def
        finally:
            leave_trace()

    def __call__(self, *args, **kwargs):
        entry, arrays = self._entry(args, kwargs)
        if entry is None:
            return self.fn(*args, **kwargs)
        program, out_def = entry
        return tree_unflatten(out_def, program(*arrays))

    def lower(self, *args, **kwargs):
        """The compiled Program for these arguments (traced now if not cached)."""
        entry, _ = self._entry(args, kwargs)
        if entry is None:
            raise ArgumentError("lower() needs concrete arguments")
        return entry[0]

    @property
    def cache_size(self) -> int:
        """How many compiled programs the cache holds (one per distinct argument
        structure, shapes and dtypes seen)."""
        return len(self._cache)


__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jit"]

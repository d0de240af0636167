"""Primitives, and how applying one dispatches on the kind of its operands.

One call site serves three modes:

* any operand is a :class:`TracedTensor` -> a graph node is interned (no computation);
  plain arrays and scalars among the operands become constant nodes;
* any operand is an eager :class:`Tensor` -> computed now, recorded on the tape if a
  gradient is needed;
* otherwise (ndarrays, scalars)             -> computed now with NumPy, ndarray returned.

That is what lets every JVP/VJP rule be written once with the library's own operations: the
same rule emits graph nodes in a traced transform and computes arrays in ``.backward()``.
"""
from __future__ import annotations

import threading
from typing import Callable

import numpy as np

from . import dtypes
from ._compiled import _core
from ._sequences import array_of
from .errors import ArgumentError, ArgumentValueError
from .param_schema import NO_PARAMS, Instance, ParamCheck, ScalarOf, Schema

Primitive = _core.Primitive
TracedTensor = _core.TracedTensor
Tensor = _core.Tensor

_intern = _core.intern

PRIMITIVES: dict[str, Primitive] = {}


def primitive(name: str, impl: Callable, shape_rule: Callable, n_outputs: int = 1,
              format_params: Callable | None = None, array_fn: Callable | None = None,
              elementwise: bool = False, static_shapes: bool = False,
              params: Schema = NO_PARAMS) -> Primitive:
    """Create and register a primitive; attach ``jvp``/``vjp`` right after its definition.

    ``params`` is the schema of its static params (:mod:`tenpy_ad.param_schema`; default:
    it takes none), checked wherever the shape rule runs and when a saved program is
    loaded; ``array_fn`` (optional) computes the primitive on arrays when it has no params;
    ``elementwise`` declares that the output has the dtype and shape of input 0;
    ``static_shapes`` keeps the traced shape rule's results per (params, dtypes, shapes),
    for primitives bound often with small hashable params (the cache holds the params:
    never for params that reference graphs or big arrays).
    """
    if name in PRIMITIVES:
        raise ArgumentValueError(f"primitive {name!r} is defined twice")
    if not isinstance(params, Schema):
        raise ArgumentError(f"primitive {name!r}: params must be a param_schema.Schema")
    prim = Primitive(name, n_outputs)
    prim.check_params = None if params is NO_PARAMS else ParamCheck(name, params)
    prim.scalar_kinds = params.kinds_mask if isinstance(params, ScalarOf) else 0
    prim.impl = impl
    prim.shape_rule = shape_rule
    prim.format_params = format_params
    prim.array_fn = array_fn
    prim.elementwise = elementwise
    prim.shape_cache = {} if static_shapes else None
    PRIMITIVES[name] = prim
    return prim


# ------------------------------------------------------------------ binding

# bind / bind1 / bind2 live in the compiled core: they are on every hot path.
# bind_traced(prim, params, args) interns prim(params)(*args) after its shape rule;
# non-traced operands become constants (``constant``, handed over by tenpy_ad/__init__.py).
bind_traced = _core.bind_traced
bind = _core.bind
bind1 = _core.bind1
bind2 = _core.bind2
#: full_like(x, value): x's kind, shape and dtype filled with value (the rules' zeros)
full_like = _core.full_like


# ------------------------------------------------------------------ operand facts
# Shape rules receive the operands themselves (TracedTensor, eager Tensor or ndarray), so
# they use only what all three share: ``.shape``, ``.ndim`` and these helpers.

shape_of = _core.shape_of
code_of_value = _core.code_of_value
is_complex_value = _core.is_complex_value
elementwise_ready = _core.elementwise_ready
concrete_value = _core.concrete_value

# The kind of an operand is decided in the core (operands.pxi), once: the layers above ask
# these rather than testing types themselves.
is_traced = _core.is_traced              # a TracedTensor
is_eager = _core.is_eager                # an eager Tensor
is_tensor = _core.is_tensor              # either
is_value = _core.is_value                # one concrete value: eager Tensor, array, scalar
any_traced = _core.any_traced            # then an operation builds graph nodes
needs_grad = _core.needs_grad            # an eager Tensor that requires grad
any_requires_grad = _core.any_requires_grad   # any of them does
plain_value = _core.plain_value          # an eager Tensor's data, anything else as it is
array_value = _core.array_value          # the ndarray of a concrete value
as_node = _core.as_node                  # a traced tensor, or the constant node of a value
value_like = _core.value_like            # an array as a value of another operand's kind
#: in-place writes (numpy/inplace.py): an eager handle takes another's value and tape place
rebind = _core.rebind
rebind_base_and_views = _core.rebind_base_and_views   # a base written, its views recomputed
rebind_plain = _core.rebind_plain         # its short path: no views, same shape and dtype
register_view = _core.register_view       # views of eager tensors (numpy/_views.py)
eager_basic_index = _core.eager_basic_index   # x[basic index] of an eager tensor
register_shared_view = _core.register_shared_view
suspend_views = _core.suspend_views
is_aliased = _core.is_aliased              # a registered view, or a base with views
is_scalar = _core.is_scalar                # a 0-d result NumPy holds as a scalar
as_array_result = _core.as_array_result    # ... made a 0-d array (copies, the Array API)
as_scalar_result = _core.as_scalar_result  # a new 0-d result marked as NumPy's scalar
relaid = _core.relaid                     # a fresh handle's values in NumPy's layout
WRITE_HINT = _core.WRITE_HINT             # how to write a grad tensor: into a tensor
#: traced writes (traced_writes.pxi): a written node forwards to the node of its value
forward_write = _core.forward_write
check_writes_allowed = _core.check_writes_allowed   # not inside a derivative rule
current = _core.current                   # the node holding a traced tensor's value now
is_shared = _core.is_shared               # also another expression's value: unwritable
graph_mode = _core.graph_mode             # a pass over graph structure: no forwarding
enter_trace, leave_trace = _core.enter_trace, _core.leave_trace   # a traced function runs
any_forwarded = _core.any_forwarded       # any written traced tensor alive
mark_other_layout = _core.mark_other_layout   # a traced copy laid out in another order
is_grad_enabled = _core.is_grad_enabled
# for the NumPy surface: whether a call holds a tensor, what NumPy's promotion sees of an
# operand, whether a ufunc's strict primitive takes its operands as they are
holds_tensor, tensor_among, dtype_key = _core.holds_tensor, _core.tensor_among, _core.dtype_key
native_tensor, native_pair = _core.native_tensor, _core.native_pair


def same_meta(x, y) -> bool:
    """Whether two operands have the same shape and dtype."""
    if is_traced(x) and is_traced(y):
        return x.same_meta(y)
    return shape_of(x) == shape_of(y) and code_of_value(x) == code_of_value(y)


def describe(x) -> str:
    """``float64[3, 4]`` for tensors and arrays, the repr for Python scalars (messages)."""
    if type(x) in (float, int, complex, bool):
        return repr(x)
    try:
        name = dtypes.DTYPES[code_of_value(x)].name
    except Exception:          # an unsupported dtype: describe it anyway
        name = np.asarray(x).dtype.name
    return f"{name}{list(shape_of(x))}"


# ------------------------------------------------------------------ constants

ConstValue = _core.ConstValue


def _constant_rule(params):
    array = params.array
    return dtypes.code_of(array.dtype), array.shape


# a constant has no inputs, so the sweeps never ask it for a derivative rule
constant_p = primitive("constant", lambda params: params.array, _constant_rule,
                       format_params=repr,
                       params=Instance(ConstValue, lambda: ConstValue(np.zeros(2)),
                                       valid=lambda c: c.array.dtype in dtypes.DTYPES,
                                       description="a ConstValue of a supported dtype"))

_scalar_constants: dict = {}
_constant_params = _core.constant_params     # arrays: cached by identity + byte snapshot


def constant(value, code: int | None = None) -> TracedTensor:
    """A constant node holding ``value`` (an array, scalar or eager Tensor); while
    :class:`lifting` is on, an eager tensor that requires grad is its placeholder."""
    if _lifts and needs_grad(value):
        node = lifted(value, code)
        if node is not None:
            return node
    value = plain_value(value)
    if type(value) in (float, int, complex, bool) and code is not None:
        cache_key = (code, type(value), _core.scalar_bits(value))
        params = _scalar_constants.get(cache_key)
        if params is None:
            params = ConstValue(np.asarray(value, dtype=dtypes.DTYPES[code]))
            if len(_scalar_constants) > 4096:
                _scalar_constants.clear()
            _scalar_constants[cache_key] = params
    else:
        params = _constant_params(value, -1 if code is None else code)
        if params is None:
            array = array_of(value, "constant", copy=False)
            target = dtypes.value_code(array.dtype) if code is None else code
            if array.dtype != dtypes.DTYPES[target]:
                array = array.astype(dtypes.DTYPES[target])
            params = ConstValue(array)
    return _intern(constant_p, params, (), (dtypes.code_of(params.array.dtype),
                                            params.array.shape))


# ------------------------------------------------------------------ lifting eager tensors

#: the open :class:`lifting` contexts of all threads, innermost last (a list: its emptiness
#: is checked on every constant)
_lifts: list = []


class lifting:
    """Context manager: while a function is traced on placeholders, each eager tensor that
    requires grad entering the trace becomes a placeholder of its own (one per tensor
    object) instead of raising, and ``tensors``/``placeholders`` list them in order of
    first use.  ``tp.scipy.sparse.linalg`` traces a matvec that closes over eager
    tensors so: its graph is then a function of those tensors, which the eager
    derivative rules evaluate at any values (every order)."""

    def __init__(self):
        self.thread = threading.get_ident()       # (it lifts in its own thread only)
        self._by_id: dict = {}
        self.tensors: list = []
        self.placeholders: list = []

    def __enter__(self):
        _lifts.append(self)
        return self

    def __exit__(self, *exc):
        _lifts.remove(self)
        return False

    def placeholder(self, x) -> TracedTensor:
        found = self._by_id.get(id(x))
        if found is None:
            from .traced import input as placeholder
            found = placeholder(tuple(shape_of(x)), x.dtype)
            self._by_id[id(x)] = found
            self.tensors.append(x)           # (held: the id stays unique while lifting)
            self.placeholders.append(found)
        return found


def _lifting_here():
    """This thread's innermost open :class:`lifting`, or None."""
    thread = threading.get_ident()
    return next((c for c in reversed(_lifts) if c.thread == thread), None)


def is_lifting() -> bool:
    """Whether a :class:`lifting` is open in this thread."""
    return bool(_lifts) and _lifting_here() is not None


def lifted(x, code: int | None = None):
    """The placeholder of the eager tensor ``x`` in this thread's innermost
    :class:`lifting`, in dtype ``code`` if given; None when no lifting is on here."""
    context = _lifting_here()
    if context is None:
        return None
    node = context.placeholder(x)
    if code is None or code == node.dtype_code:
        return node
    from .ops.elementwise import convert
    return convert(node, code)

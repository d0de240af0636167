"""Which tensors are views of which, so in-place writes keep NumPy's view semantics.

An eager :class:`~tenpy_ad.Tensor` is a handle; a write (``t[i] = v``, ``t += v``, ``out=``)
computes the functional update and rebinds the handle (numpy/inplace.py).  A result that
NumPy would return as a view (basic indexing, transposes, reshapes that need no copy,
``.real``/``.imag`` of complex, ``squeeze``, ``expand_dims``, ``flip``, ``split``'s pieces;
``diagonal`` and ``broadcast_to`` read-only) is *registered* by the core
(``register_view``): it keeps a ``ViewLink`` to its root base (strongly, as
``ndarray.base`` does) and the steps ``(kind, arg)`` that recompute it from the base; the
base keeps weak references to its live views.  A write into a view becomes a write into
the base, after which every live view of the base is recomputed.  Only the NumPy-level
functions register (never the primitives that rules call).  Traced tensors register too
(a traced write forwards the base and its live views to their new nodes): a traced view
is its interned node unless that node is also another expression's value or another
view's (then a unique clone), and a traced reshape is a view where NumPy's reshape of a
C-ordered base (or of a copy's recorded layout) along the same chain of views is one.

A step's *kind* says how to make the view from its parent (``forward(parent, arg)``) and
how to put a changed view back (``update(parent, child, arg)``; None: by positions).
"""
from __future__ import annotations

import weakref
from typing import Callable, NamedTuple

import numpy as np

from ..ops.elementwise import fresh_array, fresh_handle
from ..primitive import (as_array_result, is_eager, is_traced, mark_other_layout,
                         register_shared_view, register_view, relaid, shape_of,
                         suspend_views)


class ViewKind(NamedTuple):
    """How one kind of view is made from its parent and written back into it."""
    name: str
    forward: Callable                      # (parent, arg) -> the view
    update: Callable | None                # (parent, child, arg) -> the parent; None:
    #                                        by positions (numpy/inplace.py)


def forward(step: tuple, parent):
    """The view ``step`` makes of ``parent``."""
    return step[0].forward(parent, step[1])


def is_view_of(result, x) -> bool:
    """Whether the eager tensor ``result`` is a registered view of ``x``'s base."""
    link = getattr(result, "_view", None)
    if link is None or getattr(x, "_view", False) is False:
        return False
    return link.base is (x if x._view is None else x._view.base)


def live_views(base) -> list:
    """The views of ``base`` still alive (dead references are dropped)."""
    refs = base._views
    if not refs:
        return []
    pairs = [(ref, ref()) for ref in refs]
    base._views = [ref for ref, view in pairs if view is not None] or None
    return [view for _, view in pairs if view is not None]


def recompute(base, steps: tuple):
    """The view ``steps`` make of ``base`` (no registration: a temporary)."""
    value = base
    for step in steps:
        value = forward(step, value)
    return value


class suspended:
    """``with suspended():`` the write machinery's own ops register no views."""

    def __enter__(self):
        suspend_views(True)

    def __exit__(self, *exc):
        suspend_views(False)


# ------------------------------------------------------------------ copies in NumPy's layout

def copy_tensor(x, order: str = "K"):
    """A new handle of ``x``'s value: writes to either leave the other alone.  A leaf that
    requires grad is copied through the tape (the copy is not a leaf).  Its values are
    laid out as NumPy's copy with ``order`` lays them out (``ndarray.copy``: "C",
    ``np.copy``: "K"), so its reshapes are views where NumPy's are."""
    if not is_eager(x):                # (arrays were copied by tensor_or_array)
        return laid_out_as(fresh_array(x), x, order)
    copy = as_array_result(fresh_handle(x))      # a copy of a scalar is a 0-d array
    in_layout(copy, order)
    return copy


def in_layout(t, order: str) -> None:
    """Lay out the values of the fresh eager handle ``t`` as NumPy's copy of them with
    ``order`` would be."""
    flags = t.data.flags
    if (flags.c_contiguous and order != "F") or (flags.f_contiguous and order != "C"):
        return                         # already NumPy's layout (most tensors: no work)
    relaid(t, np.copy(t.data, order=order))


# ------------------------------------------------------------------ the view kinds

def _st():
    from ..ops import structural
    return structural


def _inverse(perm: tuple) -> tuple:
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return tuple(inverse)


#: a reshape (``reshape``, ``ravel``, ``squeeze``, ``expand_dims``, ``atleast_*d``); arg:
#: the view's shape
RESHAPE = ViewKind("reshape", lambda p, shape: _st().reshape(p, shape),
                   lambda p, c, shape: _st().reshape(c, tuple(p.shape)))
#: a permutation of axes (``transpose``, ``.T``, ``swapaxes``, ``moveaxis``); arg: perm
TRANSPOSE = ViewKind("transpose", lambda p, perm: _st().transpose(p, perm),
                     lambda p, c, perm: _st().transpose(c, _inverse(perm)))
#: entries picked by a function (``flip``, ``rot90``, a ``split`` piece, ``diagonal``,
#: ``broadcast_to``); arg: the function, written back by positions
SELECTED = ViewKind("selected", lambda p, fn: fn(p), None)


def reshaped(result, parent, name: str):
    """A reshape: a view when NumPy's reshape of the same array needs no copy (the data
    share memory)."""
    return register_shared_view(result, parent, RESHAPE)


def reshape_needs_no_copy(parent, shape: tuple) -> bool:
    """Whether NumPy reshapes the traced ``parent`` (a view, or a root laid out in another
    order than C's) to ``shape`` without a copy (always when it only adds or drops axes of
    length one: ``squeeze``, ``expand_dims``)."""
    if [d for d in parent.shape if d != 1] == [d for d in shape if d != 1]:
        return True
    probe = layout_probe(parent)
    if probe is None:
        return False
    try:
        probe.reshape(shape, copy=False)
    except ValueError:
        return False
    return True


# A traced tensor has no memory, but NumPy's view semantics depend on its array's layout.
# A root's layout is recorded where NumPy's is not C's: a copy or ``*_like`` made in
# another layout, an input of tp.jit given in one (``record_layout``); an elementwise
# operation's result is laid out as NumPy's ufuncs lay out theirs (order "K": as their
# operands), found when a reshape asks (``root_strides``); any other result is taken to be
# C-ordered, as NumPy lays out what it computes from C-ordered arrays.  A view's layout is
# its root's through its chain of views, replayed on a *probe*: an array of one byte with
# the root's strides, which is never read.

_ROOT_STRIDES: dict = {}              # id(node) -> strides in items, while the node lives
_DERIVED: dict = {}                   # id(node) -> (weak reference, strides or None)
_PROBE_LIMIT = 1 << 24                # items: a larger root's layout is taken as C


def record_layout(node, strides: tuple) -> None:
    """NumPy's array of the fresh traced root ``node`` has ``strides`` (in items)."""
    if strides != _c_strides(tuple(node.shape)):
        key = id(node)
        _ROOT_STRIDES[key] = strides
        weakref.finalize(node, _ROOT_STRIDES.pop, key, None)
        mark_other_layout(node)


def root_strides(node):
    """The strides (in items) of NumPy's array of the traced ``node`` taken as a root (not
    through its view link), or None for C order.  Elementwise results are laid out from
    their operands, found without recursion and kept while the node lives."""
    found = _known_strides(node)
    if found is not _UNKNOWN:
        return found
    stack = [node]
    while stack:
        top = stack[-1]
        missing = [d for d in _layout_operands(top) if _known_strides(d) is _UNKNOWN]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        if _known_strides(top) is _UNKNOWN:
            _DERIVED[id(top)] = (weakref.ref(top), _derived_strides(top))
    return _known_strides(node)


_UNKNOWN = object()


def _known_strides(node):
    """``root_strides`` of ``node`` if already known, else ``_UNKNOWN``."""
    strides = _ROOT_STRIDES.get(id(node))
    if strides is not None:
        return strides
    if node.prim.name == "copy" or not node.prim.elementwise or node.inputs is None:
        return None                   # (copies: recorded when not C-ordered)
    known = _DERIVED.get(id(node))
    if known is not None and known[0]() is node:
        return known[1]
    if len(_DERIVED) > 65536:         # (dead nodes' entries)
        _DERIVED.clear()
    return _UNKNOWN


def _layout_operands(node) -> list:
    """The nodes whose layouts ``node``'s follows: an elementwise node's operands, and
    for an operand that is a view, the base it replays."""
    found = []
    for x in node.inputs:
        link = x._view
        found.append(x if link is None else link.base)
    return found


def _derived_strides(node):
    """NumPy's layout of an elementwise result: its iterator's order "K" allocation
    over the operands' probes (as a ufunc allocates its output)."""
    if int(np.prod(node.shape)) > _PROBE_LIMIT:
        return None
    probes = [layout_probe(x) for x in node.inputs]
    if any(p is None for p in probes):
        return None
    try:
        iterator = np.nditer(probes + [None], flags=["zerosize_ok", "refs_ok"],
                             op_flags=[["readonly"]] * len(probes) + [["writeonly",
                                                                      "allocate"]],
                             op_dtypes=[None] * len(probes) + [np.uint8], order="K")
    except ValueError:                # (operands a rule broadcast otherwise)
        return None
    out = iterator.operands[-1]
    if out.shape != tuple(node.shape):
        return None
    strides = out.strides
    return None if strides == _c_strides(tuple(node.shape)) else strides


def layout_probe(x):
    """A probe with the strides NumPy's array of the traced ``x`` would have (None when a
    view on the way, a flip or a diagonal, is not replayed)."""
    link = x._view
    base, steps = (x, ()) if link is None else (link.base, link.steps)
    dims = tuple(base.shape)
    strides = root_strides(base) or _c_strides(dims)
    probe = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), dims, strides)
    for kind, arg in steps:
        if kind.name == "indexing":
            probe = probe[arg]
        elif kind is TRANSPOSE:
            probe = probe.transpose(arg)
        elif kind is RESHAPE:
            probe = probe.reshape(arg, copy=False)
        else:
            return None
    return probe


def _c_strides(dims: tuple) -> tuple:
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(dims[i + 1], 1)
    return tuple(strides)


def laid_out_as(fresh, prototype, order: str):
    """Record the layout NumPy gives a new array of ``prototype``'s shape with ``order``
    (``np.copy``, ``*_like``: "K" keeps the prototype's) for the fresh traced ``fresh``."""
    if (not is_traced(fresh) or order == "C" or prototype is None
            or tuple(fresh.shape) != tuple(shape_of(prototype))):
        return fresh
    if order == "F":
        strides = _c_strides(tuple(fresh.shape)[::-1])[::-1]
    else:
        probe = layout_probe(prototype) if is_traced(prototype) else None
        if probe is None or probe.flags.c_contiguous or probe.size > _PROBE_LIMIT:
            return fresh
        strides = np.empty_like(probe).strides
    record_layout(fresh, strides)
    return fresh


def transposed(result, parent, name: str, perm: tuple):
    """A permutation of axes."""
    return register_view(result, parent, TRANSPOSE, perm)


def selected(result, parent, name: str, forward: Callable, readonly: bool = False):
    """A view that selects entries, written back by positions (read-only: ``diagonal``,
    ``broadcast_to``, named in the error of a write)."""
    return register_view(result, parent, SELECTED, forward, name if readonly else None)

"""Which eager tensors are views of which, so in-place writes keep NumPy's view semantics.

An eager :class:`~tenpy_ad.Tensor` is a handle; a write (``t[i] = v``, ``t += v``, ``out=``)
computes the functional update and rebinds the handle (numpy/inplace.py).  A result that
NumPy would return as a view (basic indexing, transposes, reshapes that need no copy,
``.real``/``.imag`` of complex, ``squeeze``, ``expand_dims``, ``flip``, ``split``'s pieces;
``diagonal`` and ``broadcast_to`` read-only) is *registered* by the core
(``register_view``): it keeps a ``ViewLink`` to its root base (strongly, as
``ndarray.base`` does) and the steps ``(kind, arg)`` that recompute it from the base; the
base keeps weak references to its live views.  A write into a view becomes a write into
the base, after which every live view of the base is recomputed.  Only the NumPy-level
functions register (never the primitives that rules call), and only eager tensors.

A step's *kind* says how to make the view from its parent (``forward(parent, arg)``) and
how to put a changed view back (``update(parent, child, arg)``; None: by positions).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from ..primitive import register_shared_view, register_view, suspend_views


class ViewKind(NamedTuple):
    """How one kind of view is made from its parent and written back into it."""
    name: str
    forward: Callable                      # (parent, arg) -> the view
    update: Callable | None                # (parent, child, arg) -> the parent; None:
    #                                        by positions (update_by_positions)


def forward(step: tuple, parent):
    """The view ``step`` makes of ``parent``."""
    return step[0].forward(parent, step[1])


def update(step: tuple, parent, child):
    """``parent`` with the view ``step`` makes of it replaced by ``child``."""
    kind, arg = step
    if kind.update is None:
        return update_by_positions(lambda p: kind.forward(p, arg), parent, child)
    return kind.update(parent, child, arg)


def is_view_of(result, x) -> bool:
    """Whether the eager tensor ``result`` is a registered view of ``x``'s base."""
    link = getattr(result, "_view", None)
    if link is None or getattr(x, "_view", False) is False:
        return False
    return link.base is (x if x._view is None else x._view.base)


def live_views(base) -> list:
    """The views of ``base`` still alive (dead references are dropped)."""
    views = base._views
    if not views:
        return []
    alive = [v for v in (ref() for ref in views) if v is not None]
    base._views = [weakref_to(v) for v in alive] or None
    return alive


def weakref_to(value):
    import weakref
    return weakref.ref(value)


def recompute(base, steps: tuple):
    """The view ``steps`` make of ``base`` (no registration: a temporary)."""
    value = base
    for step in steps:
        value = forward(step, value)
    return value


def update_by_positions(forward: Callable, parent, child):
    """``parent`` with the entries ``forward`` selects replaced by ``child``: ``forward``
    run on the positions ``arange(size)`` tells which entry each of the view's is."""
    from . import indexing, shaping
    shape = tuple(parent.shape)
    positions = np.asarray(forward(np.arange(int(np.prod(shape))).reshape(shape)))
    flat = shaping.reshape(parent, (-1,))
    flat = indexing.index_update(flat)[positions.reshape(-1)].set(
        shaping.reshape(child, (-1,)))
    return shaping.reshape(flat, shape)


class suspended:
    """``with suspended():`` the write machinery's own ops register no views."""

    def __enter__(self):
        suspend_views(True)

    def __exit__(self, *exc):
        suspend_views(False)


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


def transposed(result, parent, name: str, perm: tuple):
    """A permutation of axes."""
    return register_view(result, parent, TRANSPOSE, perm)


def selected(result, parent, name: str, forward: Callable, readonly: bool = False):
    """A view that selects entries, written back by positions (read-only: ``diagonal``,
    ``broadcast_to``, named in the error of a write)."""
    return register_view(result, parent, SELECTED, forward, name if readonly else None)

"""Which eager tensors are views of which, so in-place writes keep NumPy's view semantics.

An eager :class:`~tenpy_ad.Tensor` is a handle; a write (``t[i] = v``, ``t += v``, ``out=``)
computes the functional update and rebinds the handle (numpy/inplace.py).  A result that
NumPy would return as a view (basic indexing, transposes, reshapes that need no copy,
``.real``/``.imag`` of complex, ``squeeze``, ``expand_dims``, ``flip``, ``split``'s pieces;
``diagonal`` and ``broadcast_to`` read-only) is *registered* here: it keeps a
:class:`ViewLink` to its root base (strongly, as ``ndarray.base`` does) and the chain of
steps that recompute it from the base; the base keeps weak references to its live views.
A write into a view becomes a write into the base, after which every live view of the
base is recomputed.  Only the NumPy-level functions register (never the primitives that
rules call), and only for eager tensors.
"""
from __future__ import annotations

import weakref
from typing import Callable

import numpy as np

from ..primitive import is_eager


#: One op of a view chain is the tuple ``(forward, update, key, name)`` (a tuple: one is
#: made on every slice and reshape): ``forward(parent)`` is the view; ``update(parent,
#: child)`` the parent with its view replaced by ``child`` (None: by positions, see
#: :func:`update_by_positions`); ``key``: the basic index of an indexing step, else None.
FORWARD, UPDATE, KEY, NAME = 0, 1, 2, 3


class ViewLink:
    """A view's root base, the steps from the base to the view, and, for a read-only
    view, the op that made it so."""

    __slots__ = ("base", "steps", "readonly")

    def __init__(self, base, steps: tuple, readonly: str | None):
        self.base, self.steps, self.readonly = base, steps, readonly


_suspended = [0]     # > 0 while writes recompute views: their temporaries are no views
_PRUNE_AT = 16       # dead weak references are dropped when a base has this many


def register(result, parent, name: str, forward: Callable, update: Callable | None = None,
             readonly: str | None = None, key=None):
    """Record ``result`` (an eager tensor just computed from ``parent`` by ``forward``) as
    a view of ``parent``'s base; returns ``result``.  Kept to the link on the view and a
    weak reference on the base: it runs on every slice and reshape of an eager tensor."""
    if (_suspended[0] or result is parent or not is_eager(result) or not is_eager(parent)
            or result._view is not None):                    # (a nested call registered it)
        return result
    link = parent._view
    if link is None:
        base = parent
        result._view = ViewLink(parent, ((forward, update, key, name),), readonly)
    else:
        base = link.base
        result._view = ViewLink(base, link.steps + ((forward, update, key, name),),
                                readonly or link.readonly)
    views = base._views
    if views is None:
        base._views = [ref(result)]
    else:
        if len(views) >= _PRUNE_AT:
            views[:] = [r for r in views if r() is not None]
        views.append(ref(result))
    return result


ref = weakref.ref


def is_view_of(result, x) -> bool:
    """Whether the eager tensor ``result`` is a registered view of ``x``'s base."""
    link = getattr(result, "_view", None)
    if link is None or not is_eager(x):
        return False
    return link.base is (x if x._view is None else x._view.base)


def live_views(base) -> list:
    """The views of ``base`` still alive (dead references are dropped)."""
    views = base._views
    if not views:
        return []
    alive = [v for v in (ref() for ref in views) if v is not None]
    base._views = [weakref.ref(v) for v in alive] or None
    return alive


def recompute(base, steps: tuple):
    """The view ``steps`` make of ``base`` (no registration: a temporary)."""
    value = base
    for step in steps:
        value = step[FORWARD](value)
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
        _suspended[0] += 1

    def __exit__(self, *exc):
        _suspended[0] -= 1


# ------------------------------------------------------------------ the view ops
# each returns ``result``, registered as a view of ``parent`` when both are eager tensors

def reshaped(result, parent, name: str):
    """A reshape (``reshape``, ``ravel``, ``squeeze``, ``expand_dims``, ``atleast_*d``):
    a view when NumPy's reshape of the same array needs no copy (the data share memory)."""
    if _suspended[0] or not is_eager(result) or not is_eager(parent):
        return result
    if _owner(result.data) is not _owner(parent.data):
        return result                     # NumPy copied here too: no view
    shape = result.data.shape
    return register(result, parent, name, lambda p: _st().reshape(p, shape), _reshape_back)


def _owner(array):
    """The array that owns ``array``'s memory (NumPy collapses chains of views)."""
    base = array.base
    return array if base is None else base


def _reshape_back(parent, child):
    return _st().reshape(child, tuple(parent.shape))


def transposed(result, parent, name: str, perm: tuple):
    """A permutation of axes (``transpose``, ``.T``, ``swapaxes``, ``moveaxis``, ...)."""
    if _suspended[0] or not is_eager(result) or not is_eager(parent):
        return result
    return register(result, parent, name, lambda p: _st().transpose(p, perm),
                    lambda p, c: _st().transpose(c, _inverse(perm)))


def _inverse(perm: tuple) -> tuple:
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return tuple(inverse)


def _st():
    from ..ops import structural
    return structural


def selected(result, parent, name: str, forward: Callable, readonly: bool = False):
    """A view that selects entries (``flip``, ``rot90``, a ``split`` piece; read-only:
    ``diagonal``, ``broadcast_to``): written back by positions."""
    if not is_eager(result) or not is_eager(parent):
        return result
    update = None if readonly else (lambda p, c: update_by_positions(forward, p, c))
    return register(result, parent, name, forward, update, name if readonly else None)

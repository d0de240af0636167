"""Minimal pytrees: nested tuples (named ones too), lists and dicts (and None) with
array/tensor leaves.

Used by the function-level transforms (``tp.grad``, ``tp.jit``, ...) to accept and return
structured arguments.  Containers are user data, a few levels deep, so plain recursion is
fine here (graphs are never walked recursively).
"""
from __future__ import annotations

from typing import Any


class TreeDef:
    """The structure of a pytree with its leaves taken out (hashable, comparable)."""

    __slots__ = ("kind", "meta", "children")

    def __init__(self, kind: str, meta, children: tuple):
        self.kind, self.meta, self.children = kind, meta, children

    def _key(self):
        return (self.kind, self.meta, self.children)

    def __eq__(self, other):
        return isinstance(other, TreeDef) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind == "dict":
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.meta, self.children))
            return "{" + inner + "}"
        if self.kind == "namedtuple":
            return f"{self.meta.__name__}({inner})"
        return ("[" + inner + "]") if self.kind == "list" else ("(" + inner + ",)")

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)


LEAF = TreeDef("leaf", None, ())


def tree_flatten(tree: Any) -> tuple[list, TreeDef]:
    """Leaves in order (dicts by sorted key) and the structure to rebuild the tree."""
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves) -> TreeDef:
    if tree is None:
        return TreeDef("none", None, ())
    if type(tree) in (tuple, list):
        children = tuple(_flatten(item, leaves) for item in tree)
        return TreeDef("tuple" if type(tree) is tuple else "list", None, children)
    if isinstance(tree, tuple) and hasattr(type(tree), "_fields"):     # a namedtuple
        return TreeDef("namedtuple", type(tree),
                       tuple(_flatten(item, leaves) for item in tree))
    if type(tree) is dict:
        keys = tuple(sorted(tree))
        return TreeDef("dict", keys, tuple(_flatten(tree[k], leaves) for k in keys))
    leaves.append(tree)
    return LEAF


def tree_unflatten(treedef: TreeDef, leaves) -> Any:
    """Inverse of :func:`tree_flatten`."""
    iterator = iter(leaves)
    result = _unflatten(treedef, iterator)
    return result


def _unflatten(treedef: TreeDef, iterator):
    kind = treedef.kind
    if kind == "leaf":
        return next(iterator)
    if kind == "none":
        return None
    children = [_unflatten(c, iterator) for c in treedef.children]
    if kind == "tuple":
        return tuple(children)
    if kind == "list":
        return children
    if kind == "namedtuple":
        return treedef.meta(*children)
    return dict(zip(treedef.meta, children))


def tree_map(fn, tree: Any) -> Any:
    """``tree`` with every leaf ``x`` replaced by ``fn(x)``, its structure (tuples,
    named tuples, lists, dicts; None holds no leaf) kept: ``tree_map(lambda g: -g, {"a": ga, "b": (gb, gc)})``."""
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [fn(x) for x in leaves])


__all__ = ["TreeDef", "tree_flatten", "tree_unflatten", "tree_map"]

"""The benchmark chains of DESIGN.md §5 (each a layer ``y <- layer(y)`` on a 3x3 matrix).

The same layer functions run traced (graph building), eager and on plain ndarrays.
"""
from __future__ import annotations

import tenpy_ad as tp


def mul_layer(y):
    """``y <- (y y) 0.5``: every value used twice, 2^n paths through n layers."""
    return (y * y) * 0.5


def cube_layer(y):
    """``y <- (y y y) 0.5``: 3^n paths."""
    return (y * y * y) * 0.5


def ladder_layer(y):
    """``y <- tanh(y y)``: a bounded ladder ``f(y, y)`` for very deep tests."""
    return tp.tanh(y * y)


LAYERS = {"mul": mul_layer, "cube": cube_layer, "ladder": ladder_layer}


def chain(kind: str, y, depth: int):
    """Apply ``depth`` layers of ``kind`` to ``y`` (a tensor of any mode)."""
    layer = LAYERS[kind]
    for _ in range(depth):
        y = layer(y)
    return y


def build_chain(kind: str, depth: int, shape=(3, 3)):
    """A placeholder ``x`` and the traced scalar ``chain(x).sum()``."""
    x = tp.input(shape, name="x")
    return x, chain(kind, x, depth).sum()

"""The benchmark chains (each a layer ``y <- layer(y)`` on a 3x3 matrix, repeated n times).

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


def svd1_layer(y):
    """``u, s, vt = svd(y); y <- u + y``."""
    u, s, vt = tp.linalg.svd(y)
    return u + y


def svd2_layer(y):
    """``y <- u s + y`` (``u s`` scales the columns of ``u``)."""
    u, s, vt = tp.linalg.svd(y)
    return u * s + y


def svd3_layer(y):
    """``y <- u s + vt``: all three outputs used, 3^n paths through n layers."""
    u, s, vt = tp.linalg.svd(y)
    return u * s + vt


def qr2_layer(y):
    """``q, r = qr(y); y <- q + r``."""
    q, r = tp.linalg.qr(y)
    return q + r


LAYERS = {"mul": mul_layer, "cube": cube_layer, "ladder": ladder_layer, "svd1": svd1_layer,
          "svd2": svd2_layer, "svd3": svd3_layer, "qr2": qr2_layer}

# A start value on which every chain stays finite and well separated (no exactly equal
# singular values) for thousands of layers.
START = {"mul": 0.9, "cube": 0.9, "ladder": 0.9}


def start_value(kind: str, shape=(3, 3)):
    """The input the benchmarks and tests feed to chain ``kind``."""
    import numpy as np
    if kind in START:
        return np.full(shape, START[kind])
    rng = np.random.default_rng(7)
    return rng.standard_normal(shape)


def repeat(layer, y, depth: int):
    """``layer`` applied ``depth`` times to ``y`` (any engine's tensor: peers reuse it)."""
    for _ in range(depth):
        y = layer(y)
    return y


def chain(kind: str, y, depth: int):
    """Apply ``depth`` layers of ``kind`` to ``y`` (a tensor of any mode)."""
    return repeat(LAYERS[kind], y, depth)


def build_chain(kind: str, depth: int, shape=(3, 3)):
    """A placeholder ``x`` and the traced scalar ``chain(x).sum()``."""
    x = tp.input(shape, name="x")
    return x, chain(kind, x, depth).sum()

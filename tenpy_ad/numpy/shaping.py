"""Shape functions: ``reshape``, ``transpose``, broadcasting."""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import ShapeError
from ..ops import structural as st
from ..primitive import describe, shape_of
from ._dispatch import implements
from ._operands import broadcast_shapes, is_tensor


def reshape(x, shape):
    """Reshape like ``np.reshape`` (one ``-1`` allowed)."""
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    shape = tuple(int(d) for d in shape)
    if -1 in shape:
        shape = _infer_minus_one(x, shape)
    return st.reshape(x, shape)


def _infer_minus_one(x, shape: tuple) -> tuple:
    size = math.prod(shape_of(x))
    known = math.prod(d for d in shape if d != -1)
    if shape.count(-1) > 1 or known == 0 or size % known:
        raise ShapeError(f"reshape: cannot reshape {describe(x)} into {list(shape)}")
    return tuple(size // known if d == -1 else d for d in shape)


def transpose(x, axes=None):
    """Permute axes like ``np.transpose`` (reversed by default)."""
    ndim = len(shape_of(x))
    if axes is None:
        axes = tuple(range(ndim - 1, -1, -1))
    if any(not -ndim <= int(a) < ndim for a in axes):
        raise ShapeError(f"transpose: axes {list(axes)} out of range for {describe(x)}")
    return st.transpose(x, tuple(int(a) % ndim for a in axes))


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """Broadcast ``x`` to ``shape``; operand axis ``i`` becomes ``broadcast_dimensions[i]``."""
    if not is_tensor(x):
        x = np.asarray(x)
    return st.broadcast_in_dim(x, tuple(int(d) for d in shape),
                               tuple(int(d) for d in broadcast_dimensions))


def broadcast_to(x, shape):
    """NumPy-style ``broadcast_to``."""
    shape = tuple(int(d) for d in shape)
    if broadcast_shapes("broadcast_to", shape_of(x), shape) != shape:
        raise ShapeError(f"broadcast_to: cannot broadcast {describe(x)} to {list(shape)}")
    if not is_tensor(x):
        return np.broadcast_to(x, shape)
    return st.broadcast_to(x, shape)


implements(np.reshape)(reshape)
implements(np.transpose)(transpose)
implements(np.broadcast_to)(broadcast_to)

__all__ = ['reshape', 'transpose', 'broadcast_in_dim', 'broadcast_to']

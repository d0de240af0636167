"""``r_`` and ``c_``: NumPy's index-trick objects, for tensors.

``tnp.r_[x, 0.0, y]`` joins its items along the first axis, ``tnp.c_[x, y]`` stacks 1-d
items as columns, differentiably in every tensor item.  As with NumPy's, an item may be a
tensor, an array, a (nested) list, a scalar, or a slice (``a:b:step`` is
``arange(a, b, step)``, ``a:b:nj`` is ``linspace(a, b, n)``), and a leading string
directive ``"axis,ndmin,trans1d"`` sets the axis, the minimum number of axes and where the
axes of short items go.  Without a tensor among the items NumPy's own object answers.
"""
from __future__ import annotations

import numpy as np

from ..errors import ArgumentError, ArgumentValueError
from ..ops import structural as st
from ..primitive import shape_of
from ._arrays import tensor_or_array
from ._operands import common, normalize_axis, result_code, tensor_among


def _directive(text: str) -> tuple:
    """``(axis, ndmin, trans1d)`` overrides of a string directive (None: unchanged)."""
    if text in ("r", "c"):
        raise ArgumentError(f"r_/c_: the matrix directive {text!r} is not supported for "
                            "tensors")
    parts = text.split(",")
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        raise ArgumentValueError(f"r_/c_: unknown special directive {text!r}") from None
    if len(numbers) > 3:
        raise ArgumentValueError(f"r_/c_: unknown special directive {text!r}")
    return tuple(numbers) + (None,) * (3 - len(numbers))


def _with_ndmin(x, ndmin: int, trans1d: int):
    """``x`` with at least ``ndmin`` axes; its own axes start at position ``trans1d``
    (counted from the end if negative) among the new ones, as NumPy places them."""
    shape = shape_of(x)
    missing = ndmin - len(shape)
    if missing <= 0:
        return x
    x = st.reshape(x, (1,) * missing + shape)
    if trans1d == -1:
        return x
    first = trans1d + missing + 1 if trans1d < 0 else trans1d
    order = list(range(first)) + list(range(missing, ndmin)) + list(range(first, missing))
    return st.transpose(x, tuple(order))


def _range(item: slice) -> np.ndarray:
    start = 0 if item.start is None else item.start
    step = 1 if item.step is None else item.step
    if isinstance(step, (complex, np.complexfloating)):
        return np.linspace(start, item.stop, num=int(abs(step)))
    return np.arange(start, item.stop, step)


class AxisConcatenator:
    """Join the items of ``[...]`` along ``axis`` (see the module docstring)."""

    def __init__(self, numpy_object, axis: int, ndmin: int, trans1d: int):
        self._numpy = numpy_object
        self._defaults = (axis, ndmin, trans1d)

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        if not tensor_among(items):
            return self._numpy[key]
        axis, ndmin, trans1d = self._defaults
        pieces, keys = [], []
        for k, item in enumerate(items):
            if isinstance(item, str):
                if k != 0:
                    raise ArgumentValueError("r_/c_: special directives must be the first entry")
                new = _directive(item)
                axis, ndmin, trans1d = (d if n is None else n
                                        for d, n in zip((axis, ndmin, trans1d), new))
                continue
            if isinstance(item, slice):
                piece = np.array(_range(item), ndmin=ndmin)
                if ndmin > 1 and trans1d != -1:
                    piece = np.swapaxes(piece, -1, trans1d)
                keys.append(piece)
            elif type(item) in (int, float, complex, bool) or isinstance(item, np.generic):
                piece = np.array(item, ndmin=ndmin)
                keys.append(item)                       # a weak scalar in the promotion
            else:
                piece = _with_ndmin(tensor_or_array(item, "r_"), ndmin, trans1d)
                keys.append(piece)
            pieces.append(piece)
        pieces = common("r_", *pieces, code=result_code("r_", *keys))
        return st.concatenate(pieces, normalize_axis("r_", axis, len(shape_of(pieces[0]))))

    def __len__(self) -> int:
        return 0


r_ = AxisConcatenator(np.r_, axis=0, ndmin=1, trans1d=-1)
c_ = AxisConcatenator(np.c_, axis=-1, ndmin=2, trans1d=0)

__all__ = ["r_", "c_"]

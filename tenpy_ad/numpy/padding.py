"""``pad`` in the modes ``constant`` (``constant_values`` may be tensors: differentiable),
``edge``, ``reflect``, ``symmetric`` (``reflect_type`` ``even`` or ``odd``), ``wrap`` and
``empty`` (zeros).

Axes are padded one after the other, as NumPy does, so corners take the values of the
later axes.  Zero constants are one ``scatter_slice`` (its cotangent is a slice); the
other modes gather along each axis with the index map NumPy itself gives for
``np.pad(np.arange(n), ...)``, cut into a few strided slices; ``reflect_type='odd'``
(``2 * edge - reflection``) applies the padding matrix of that axis.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import ArgumentError, ArgumentValueError, ShapeError
from ..ops import contraction
from ..ops import structural as st
from ..primitive import code_of_value, shape_of
from ._arrays import as_array, tensor_or_array
from ._dispatch import implements
from ._operands import is_tensor, operand, traced_among

#: the modes supported for tensors and the keyword arguments each takes
_MODES = {"constant": {"constant_values"}, "empty": set(), "edge": set(), "wrap": set(),
          "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}}
_LETTERS = "abcdefghijklmnopqrstuvwxy"


def _pairs(values, ndim: int) -> np.ndarray:
    """``values`` broadcast to one ``(before, after)`` pair per axis, as NumPy reads
    ``pad_width`` and ``constant_values`` (a scalar, one pair, or one pair per axis)."""
    values = np.asarray(values)
    if values.size == 1 or (values.size == 2 and values.shape != (2, 1)):
        values = values.reshape(-1)
    return np.broadcast_to(values, (ndim, 2))


def _widths(pad_width, shape: tuple) -> list:
    """``pad_width`` as a list of ``(before, after)`` non-negative ints, one per axis."""
    if isinstance(pad_width, dict):
        pairs = [(0, 0)] * len(shape)
        for axis, width in pad_width.items():
            pairs[axis] = (width, width) if np.ndim(width) == 0 else tuple(width)
        pad_width = pairs
    widths = np.asarray(pad_width)
    if widths.dtype.kind not in "iu":
        raise ArgumentError("pad: `pad_width` must be of integral type.")
    widths = _pairs(widths, len(shape))
    if (widths < 0).any():
        raise ArgumentValueError("pad: `pad_width` can't contain negative values")
    return [(int(b), int(a)) for b, a in widths]


@implements("numpy.pad")
def pad(array, pad_width, mode="constant", **kwargs):
    """Pad ``array`` by ``pad_width`` entries before and after along each axis."""
    array = tensor_or_array(array, "pad")
    values = as_array(kwargs.get("constant_values", 0)) if mode == "constant" else 0
    if not isinstance(mode, str) or mode not in _MODES:
        raise ArgumentError(f"pad: mode {mode!r} is not supported for tensors; use one of "
                            f"{', '.join(_MODES)}")
    unsupported = set(kwargs) - _MODES[mode]
    if unsupported:
        raise ArgumentValueError(f"pad: unsupported keyword arguments for mode '{mode}': "
                                 f"{sorted(unsupported)}")
    traced = traced_among((array, values))
    code = code_of_value(array)
    x = operand(array, code, traced)
    widths = _widths(pad_width, shape_of(x))
    if mode in ("constant", "empty"):
        return _pad_constant(x, widths, values, code, traced)
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise ArgumentValueError(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    for axis, (before, after) in enumerate(widths):
        if not (before or after):
            continue
        n = shape_of(x)[axis]
        if n == 0:
            raise ShapeError(f"pad: can't extend empty axis {axis} using modes other than "
                             "'constant' or 'empty'")
        if reflect_type == "odd" and mode in ("reflect", "symmetric"):
            x = _apply_along(x, _odd_matrix(n, before, after, mode, code), axis, traced)
        else:
            x = st.take_static(x, np.pad(np.arange(n), (before, after), mode=mode), axis)
    return x


def _pad_constant(x, widths: list, values, code: int, traced: bool):
    shape = shape_of(x)
    if is_tensor(values):
        pairs = _tensor_pairs(operand(values, code, traced), len(shape))
    elif np.any(values):
        pairs = _pairs(values, len(shape)).tolist()
    else:                                 # zeros: the input written into a zero array
        padded = tuple(d + b + a for d, (b, a) in zip(shape, widths))
        spec = tuple((b, b + d, 1) for d, (b, _) in zip(shape, widths))
        return st.scatter_slice(x, padded, spec)
    for axis, (before, after) in enumerate(widths):
        if not (before or after):
            continue
        shape = shape_of(x)
        blocks = [x]
        if before:
            blocks.insert(0, _block(pairs[axis][0], shape[:axis] + (before,)
                                    + shape[axis + 1:], code, traced))
        if after:
            blocks.append(_block(pairs[axis][1], shape[:axis] + (after,) + shape[axis + 1:],
                                 code, traced))
        x = st.concatenate(blocks, axis)
    return x


def _tensor_pairs(values, ndim: int) -> list:
    """A tensor ``constant_values`` as ``ndim`` pairs of 0-d tensors (slices of it, so the
    padding is differentiable in them)."""
    shape = shape_of(values)
    size = int(np.prod(shape))
    if size == 1 or (size == 2 and shape != (2, 1)):
        values = st.reshape(values, (size,))
        shape = (size,)
    grid = np.broadcast_to(np.arange(size).reshape(shape), (ndim, 2))
    flat = st.reshape(values, (size,))
    return [[st.reshape(st.slice_axes(flat, ((int(k), int(k) + 1, 1),)), ())
             for k in row] for row in grid]


def _block(value, shape: tuple, code: int, traced: bool):
    """A block of ``shape`` filled with ``value`` (a Python number or a 0-d tensor)."""
    return st.broadcast_in_dim(operand(value, code, traced), shape, ())


def _odd_matrix(n: int, before: int, after: int, mode: str, code: int) -> np.ndarray:
    """The matrix that pads a vector of length ``n`` with odd reflections (each padded
    entry is a combination of entries: ``2 * edge - reflection``, repeatedly)."""
    eye = np.eye(n, dtype=dtypes.DTYPES[code])
    return np.pad(eye, ((before, after), (0, 0)), mode=mode, reflect_type="odd")


def _apply_along(x, matrix: np.ndarray, axis: int, traced: bool):
    """``matrix`` applied to ``x`` along ``axis``."""
    letters = _LETTERS[:len(shape_of(x))]
    out = letters[:axis] + "z" + letters[axis + 1:]
    return contraction.einsum_strict(f"z{letters[axis]},{letters}->{out}",
                                     operand(matrix, code_of_value(x), traced), x)


__all__ = ["pad"]

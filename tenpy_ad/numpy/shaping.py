"""Shapes and axes: ``reshape``, ``ravel``, ``squeeze``, ``expand_dims``, ``transpose`` and
its relatives, ``atleast_1d/2d/3d``, broadcasting, and the queries ``shape``, ``ndim``,
``size``.  All of them are reshapes, transposes or broadcasts of their operand, so their
derivatives are those primitives' own."""
from __future__ import annotations

import math

import numpy as np

from ..errors import ArgumentError, ArgumentValueError, ShapeError
from ..ops import structural as st
from ..primitive import describe, is_eager, is_traced, shape_of
from ._arrays import tensor_or_array
from ._dispatch import implements
from ._operands import broadcast_shapes, int_tuple, normalize_axes, normalize_axis
from ._views import copy_tensor, layout_probe, reshaped, selected, transposed


def axis_list(name: str, axes, ndim: int) -> list:
    """``axes`` (an int or a sequence) as non-negative axes, in the given order; a
    repeated axis is an error."""
    axes = list(int_tuple(name, "axis", axes))
    normalized = [normalize_axis(name, a, ndim) for a in axes]
    if len(set(normalized)) != len(normalized):
        raise ShapeError(f"{name}: repeated axis in {axes}")
    return normalized


# ------------------------------------------------------------------ reshape, ravel

@implements("numpy.reshape")
def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    """Reshape like ``np.reshape`` (one ``-1`` allowed; ``newshape`` is NumPy's older
    name of ``shape``); only ``order='C'``."""
    if shape is None:
        if newshape is None:
            raise ArgumentError("reshape: missing the shape")
        shape = newshape
    a = tensor_or_array(a, "reshape")
    if order != "C":
        raise ArgumentError(f"reshape: order={order!r} is not supported for tensors (only "
                            "'C'); transpose explicitly for another order")
    shape = int_tuple("reshape", "shape", shape)
    if any(d < -1 for d in shape):
        raise ShapeError(f"reshape: negative dimension in {list(shape)} (only one -1 may "
                         "stand for the inferred size)")
    if -1 in shape:
        shape = _infer_minus_one(a, shape)
    return reshaped(st.reshape(a, shape), a, "reshape")


def _infer_minus_one(x, shape: tuple) -> tuple:
    size = math.prod(shape_of(x))
    known = math.prod(d for d in shape if d != -1)
    if shape.count(-1) > 1 or known == 0 or size % known:
        raise ShapeError(f"reshape: cannot reshape {describe(x)} into {list(shape)}")
    return tuple(size // known if d == -1 else d for d in shape)


@implements("numpy.ravel")
def ravel(a, order="C"):
    """The entries as a 1-d tensor, in row-major order (``order='F'``: column-major; a
    tensor has no memory layout, so ``'A'`` and ``'K'`` mean ``'C'``)."""
    a = tensor_or_array(a, "ravel")
    if order not in ("C", "F", "A", "K"):
        raise ArgumentValueError(f"ravel: order must be one of 'C', 'F', 'A', 'K', got {order!r}")
    if order == "F":
        flat = st.reshape(transpose(a), (math.prod(shape_of(a)),))
        return selected(flat, a, "ravel", lambda p: ravel(p, "F")) if _shares(flat, a) else flat
    return reshaped(st.reshape(a, (math.prod(shape_of(a)),)), a, "ravel")


def _shares(result, a) -> bool:
    """Whether NumPy's column-major ravel of ``a`` is a view: eager tensors whose data
    share memory, or a traced ``a`` whose layout is column-major (numpy/_views.py)."""
    if is_traced(a):
        probe = layout_probe(a)
        if probe is None:
            return False
        try:
            probe.T.reshape(-1, copy=False)    # (a probe's values are never read)
        except ValueError:
            return False
        return True
    return is_eager(result) and is_eager(a) and np.may_share_memory(result.data, a.data)


# ------------------------------------------------------------------ axes of size one

@implements("numpy.squeeze")
def squeeze(a, axis=None):
    """Remove axes of size one (all of them, or those in ``axis``)."""
    a = tensor_or_array(a, "squeeze")
    shape = shape_of(a)
    if axis is None:
        axes = [i for i, d in enumerate(shape) if d == 1]
    else:
        axes = normalize_axes("squeeze", axis, len(shape))
        if any(shape[i] != 1 for i in axes):
            raise ShapeError(f"squeeze: cannot squeeze axis {axis} of {describe(a)}: its "
                             "size is not one")
    return reshaped(st.reshape(a, tuple(d for i, d in enumerate(shape) if i not in axes)), a,
                    "squeeze")


@implements("numpy.expand_dims")
def expand_dims(a, axis):
    """Insert axes of size one at the positions ``axis`` (an int or a tuple) of the
    result."""
    a = tensor_or_array(a, "expand_dims")
    shape = shape_of(a)
    n_new = len(int_tuple("expand_dims", "axis", axis))
    new_axes = set(axis_list("expand_dims", axis, len(shape) + n_new))
    rest = iter(shape)
    return reshaped(st.reshape(a, tuple(1 if i in new_axes else next(rest)
                                        for i in range(len(shape) + n_new))), a, "expand_dims")


def _atleast(name: str, place, arys):
    """Each of ``arys`` (tensors, or NumPy's arrays of the others) reshaped to
    ``place(shape)``."""
    results = [tensor_or_array(a, name) for a in arys]
    results = [reshaped(st.reshape(a, place(shape_of(a))), a, name) for a in results]
    return results[0] if len(results) == 1 else tuple(results)


@implements("numpy.atleast_1d")
def atleast_1d(*arys):
    """Each argument with at least one axis (a 0-d one becomes shape ``(1,)``)."""
    return _atleast("atleast_1d", lambda s: s if s else (1,), arys)


@implements("numpy.atleast_2d")
def atleast_2d(*arys):
    """Each argument with at least two axes: ``(N,)`` becomes ``(1, N)``."""
    return _atleast("atleast_2d",
                    lambda s: s if len(s) >= 2 else (1,) * (2 - len(s)) + s, arys)


def _to_3d(shape: tuple) -> tuple:
    if len(shape) >= 3:
        return shape
    return {0: (1, 1, 1), 1: (1,) + shape + (1,), 2: shape + (1,)}[len(shape)]


@implements("numpy.atleast_3d")
def atleast_3d(*arys):
    """Each argument with at least three axes: ``(N,)`` becomes ``(1, N, 1)`` and
    ``(M, N)`` becomes ``(M, N, 1)``."""
    return _atleast("atleast_3d", _to_3d, arys)


# ------------------------------------------------------------------ permuting axes

@implements("numpy.transpose")
def transpose(a, axes=None):
    """Permute axes like ``np.transpose`` (reversed by default)."""
    a = tensor_or_array(a, "transpose")
    ndim = len(shape_of(a))
    if axes is None:
        perm = tuple(range(ndim - 1, -1, -1))
        return transposed(st.transpose(a, perm), a, "transpose", perm)
    perm = list(int_tuple("transpose", "axes", axes))
    if sorted(p % ndim if -ndim <= p < ndim else -1 for p in perm) != list(range(ndim)):
        raise ShapeError(f"transpose: axes {perm} are not a permutation of the axes of "
                         f"{describe(a)}")
    perm = tuple(p % ndim for p in perm)
    return transposed(st.transpose(a, perm), a, "transpose", perm)


@implements("numpy.swapaxes")
def swapaxes(a, axis1, axis2):
    """Exchange two axes."""
    a = tensor_or_array(a, "swapaxes")
    ndim = len(shape_of(a))
    i, j = normalize_axis("swapaxes", axis1, ndim), normalize_axis("swapaxes", axis2, ndim)
    perm = list(range(ndim))
    perm[i], perm[j] = j, i
    return transposed(st.transpose(a, tuple(perm)), a, "swapaxes", tuple(perm))


@implements("numpy.matrix_transpose", "numpy.linalg.matrix_transpose")
def matrix_transpose(x, /):
    """Transpose the last two axes (of a matrix or a stack of matrices)."""
    x = tensor_or_array(x, "matrix_transpose")
    if len(shape_of(x)) < 2:
        raise ShapeError(f"matrix_transpose: needs at least two axes, got {describe(x)}")
    return swapaxes(x, -1, -2)


@implements("numpy.moveaxis")
def moveaxis(a, source, destination):
    """Move the axes ``source`` to the positions ``destination``; the others keep their
    order."""
    a = tensor_or_array(a, "moveaxis")
    ndim = len(shape_of(a))
    source = axis_list("moveaxis", source, ndim)
    destination = axis_list("moveaxis", destination, ndim)
    if len(source) != len(destination):
        raise ShapeError("moveaxis: source and destination need the same number of axes")
    order = [i for i in range(ndim) if i not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return transposed(st.transpose(a, tuple(order)), a, "moveaxis", tuple(order))


@implements("numpy.rollaxis")
def rollaxis(a, axis, start=0):
    """Move ``axis`` to come just before position ``start`` (NumPy's older
    ``moveaxis``)."""
    a = tensor_or_array(a, "rollaxis")
    ndim = len(shape_of(a))
    axis = normalize_axis("rollaxis", axis, ndim)
    if not -ndim <= start <= ndim:
        raise ShapeError(f"rollaxis: start {start} is out of range for {describe(a)}")
    start = start + ndim if start < 0 else start
    if axis < start:
        start -= 1
    order = [i for i in range(ndim) if i != axis]
    order.insert(start, axis)
    return transposed(st.transpose(a, tuple(order)), a, "rollaxis", tuple(order))


# ------------------------------------------------------------------ broadcasting

def broadcast_in_dim(x, shape, broadcast_dimensions):
    """Broadcast ``x`` to ``shape``; operand axis ``i`` becomes ``broadcast_dimensions[i]``."""
    return st.broadcast_in_dim(tensor_or_array(x, "broadcast_in_dim"),
                               int_tuple("broadcast_in_dim", "shape", shape),
                               int_tuple("broadcast_in_dim", "broadcast_dimensions",
                                         broadcast_dimensions))


@implements("numpy.broadcast_to")
def broadcast_to(array, shape, subok=False):
    """NumPy-style ``broadcast_to``."""
    array = tensor_or_array(array, "broadcast_to")
    shape = int_tuple("broadcast_to", "shape", shape)
    if broadcast_shapes("broadcast_to", shape_of(array), shape) != shape:
        raise ShapeError(f"broadcast_to: cannot broadcast {describe(array)} to "
                         f"{list(shape)}")
    return selected(st.broadcast_to(array, shape), array, "broadcast_to",
                    lambda p: st.broadcast_to(p, shape), readonly=True)


@implements("numpy.broadcast_arrays")
def broadcast_arrays(*args, subok=False):
    """The arguments broadcast to their common shape, as a tuple (each tensor stays a
    tensor of its kind, each array an array)."""
    args = [tensor_or_array(a, "broadcast_arrays") for a in args]
    shape = broadcast_shapes("broadcast_arrays", *[shape_of(a) for a in args])
    return tuple(selected(st.broadcast_to(a, shape), a, "broadcast_arrays",
                          lambda p: st.broadcast_to(p, shape), readonly=True) for a in args)


# ------------------------------------------------------------------ queries

@implements("numpy.shape")
def shape(a) -> tuple:
    """The shape, a tuple of Python ints."""
    return tuple(shape_of(tensor_or_array(a, "shape")))


@implements("numpy.ndim")
def ndim(a) -> int:
    """The number of axes, a Python int."""
    return len(shape_of(tensor_or_array(a, "ndim")))


@implements("numpy.size")
def size(a, axis=None) -> int:
    """The number of entries (along ``axis``, an int or a tuple, if given), a Python
    int."""
    a = tensor_or_array(a, "size")
    dims = shape_of(a)
    if axis is None:
        return math.prod(dims)
    return math.prod(dims[i] for i in axis_list("size", axis, len(dims)))


@implements("numpy.copy")
def copy(a, order="K", subok=False):
    """A copy: a new tensor of the same value (no array is copied: a write makes a new
    array), which later writes to either leave the other alone."""
    return copy_tensor(tensor_or_array(a, "copy"), order)


__all__ = ["reshape", "ravel", "squeeze", "expand_dims", "atleast_1d", "atleast_2d",
           "atleast_3d", "transpose", "swapaxes", "matrix_transpose", "moveaxis",
           "rollaxis", "broadcast_in_dim", "broadcast_to", "broadcast_arrays", "shape",
           "ndim", "size", "copy"]

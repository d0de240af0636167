"""The standard's creation functions: each returns an eager Tensor (or, given traced
operands, a traced one) so that the result takes part in tenpy_ad."""
from __future__ import annotations

import numpy as np

from .. import numpy as tnp
from ..errors import ArgumentValueError
from ..numpy.inplace import copy_tensor
from ..primitive import Tensor, TracedTensor
from ._convert import check_device, tensors

_TENSORS = (Tensor, TracedTensor)


def _has_tensor(obj) -> bool:
    """Whether a nested list/tuple holds a tensor (it is then stacked, differentiably)."""
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, _TENSORS):
            return True
        if isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """``obj`` (a tensor, an array, a nested sequence, a Python scalar, a buffer) as a
    tensor of ``dtype``.  ``copy=False`` refuses a conversion that needs a copy; tensors
    ``copy=True`` of an eager tensor is a new handle (on the tape: a leaf's copy is not a
    leaf), so writes into either leave the other alone; ``copy=None`` and ``copy=False``
    hand the tensor itself back."""
    check_device("asarray", device)
    if isinstance(obj, _TENSORS):
        if dtype is None or np.dtype(dtype) == obj.dtype:
            return copy_tensor(obj) if copy else obj
        if copy is False:
            raise ArgumentValueError(f"asarray: casting a {obj.dtype.name} tensor to "
                             f"{np.dtype(dtype).name} needs a copy, but copy=False was given")
        return tnp.astype(obj, dtype)
    if isinstance(obj, (list, tuple)) and _has_tensor(obj):
        if copy is False:
            raise ArgumentValueError("asarray: stacking a sequence needs a copy, but copy=False "
                             "was given")
        return tensors(tnp.asarray(obj, dtype=dtype))
    return Tensor(np.array(obj, dtype=dtype, copy=copy))


def _make(fn, *args, device=None, **kwargs):
    check_device(fn.__name__, device)
    return Tensor(fn(*args, **kwargs))


def zeros(shape, *, dtype=None, device=None):
    """A tensor of zeros (float64 by default)."""
    return _make(np.zeros, shape, dtype=dtype, device=device)


def ones(shape, *, dtype=None, device=None):
    """A tensor of ones (float64 by default)."""
    return _make(np.ones, shape, dtype=dtype, device=device)


def empty(shape, *, dtype=None, device=None):
    """An uninitialised tensor (float64 by default)."""
    return _make(np.empty, shape, dtype=dtype, device=device)


def _fill_dtype(fill_value, dtype):
    """The standard's default dtype for a fill value: bool, int64, float64 or complex128."""
    if dtype is not None:
        return dtype
    if isinstance(fill_value, (bool, np.bool_)):
        return np.bool_
    if isinstance(fill_value, int):
        return np.int64
    if isinstance(fill_value, float):
        return np.float64
    if isinstance(fill_value, complex):
        return np.complex128
    return None


def full(shape, fill_value, *, dtype=None, device=None):
    """A tensor of ``fill_value`` (a Python scalar, or a 0-d tensor: differentiable)."""
    check_device("full", device)
    if isinstance(fill_value, _TENSORS):
        value = fill_value if dtype is None else tnp.astype(fill_value, dtype)
        return tnp.broadcast_to(value, (shape,) if isinstance(shape, int) else shape)
    return Tensor(np.full(shape, fill_value, dtype=_fill_dtype(fill_value, dtype)))


def _like(name: str, x, dtype, device):
    check_device(name, device)
    return np.dtype(x.dtype if dtype is None else dtype), tuple(x.shape)


def zeros_like(x, /, *, dtype=None, device=None):
    """Zeros of ``x``'s shape and (by default) dtype."""
    dtype, shape = _like("zeros_like", x, dtype, device)
    return Tensor(np.zeros(shape, dtype))


def ones_like(x, /, *, dtype=None, device=None):
    """Ones of ``x``'s shape and (by default) dtype."""
    dtype, shape = _like("ones_like", x, dtype, device)
    return Tensor(np.ones(shape, dtype))


def empty_like(x, /, *, dtype=None, device=None):
    """An uninitialised tensor of ``x``'s shape and (by default) dtype."""
    dtype, shape = _like("empty_like", x, dtype, device)
    return Tensor(np.empty(shape, dtype))


def full_like(x, /, fill_value, *, dtype=None, device=None):
    """``fill_value`` in ``x``'s shape and (by default) dtype."""
    dtype, shape = _like("full_like", x, dtype, device)
    return Tensor(np.full(shape, fill_value, dtype))


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    """Evenly spaced values in ``[start, stop)`` (int64 for integer arguments, else
    float64)."""
    check_device("arange", device)
    if stop is None:
        start, stop = 0, start
    if dtype is None and all(isinstance(v, int) for v in (start, stop, step)):
        dtype = np.int64
    return Tensor(np.arange(start, stop, step, dtype=dtype))


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """``num`` evenly spaced values from ``start`` to ``stop`` (float64, or complex128 for
    complex bounds, by default)."""
    check_device("linspace", device)
    if dtype is None:
        is_complex = isinstance(start, complex) or isinstance(stop, complex)
        dtype = np.complex128 if is_complex else np.float64
    return Tensor(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """The ``n_rows x n_cols`` matrix with ones on diagonal ``k``."""
    return _make(np.eye, n_rows, n_cols, k=k, dtype=dtype, device=device)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate tensors of 1-d tensors (``indexing`` "xy" or "ij"), differentiable."""
    if indexing not in ("xy", "ij"):
        raise ArgumentValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    n = len(arrays)
    vectors = [tnp.reshape(a, (-1,)) for a in arrays]
    if indexing == "xy" and n > 1:
        vectors[0], vectors[1] = vectors[1], vectors[0]
    shape = tuple(v.shape[0] for v in vectors)
    grids = [tnp.broadcast_to(tnp.reshape(v, (1,) * i + (-1,) + (1,) * (n - i - 1)), shape)
             for i, v in enumerate(vectors)]
    if indexing == "xy" and n > 1:
        grids[0], grids[1] = grids[1], grids[0]
    return [tensors(g) for g in grids]


def tril(x, /, *, k=0):
    """The lower triangle (from diagonal ``k``) of the last two axes."""
    return tensors(tnp.tril(x, k))


def triu(x, /, *, k=0):
    """The upper triangle (from diagonal ``k``) of the last two axes."""
    return tensors(tnp.triu(x, k))


def from_dlpack(x, /, *, device=None, copy=None):
    """A tensor sharing (or, with ``copy=True``, copying) the data of a DLPack producer."""
    check_device("from_dlpack", device)
    if isinstance(x, _TENSORS):
        return x
    array = np.from_dlpack(x, copy=copy)
    return Tensor(array)

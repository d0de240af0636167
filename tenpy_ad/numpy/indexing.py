"""Indexing: ``x[index]`` with NumPy's basic and advanced rules, ``take``,
``take_along_axis``, the functional updates ``x.at[index].set(v)`` (JAX's spelling), and
``nonzero`` / ``argwhere`` / ``flatnonzero``.

Integer index arrays may be lists, ndarrays or int64 tensors, traced ones included (the
gather then reads positions computed in the graph, e.g. by ``argsort``).  A boolean mask
selects by value, so the result's shape depends on it: it must be concrete (an array, an
eager tensor, a constant), never a traced value.  Out-of-bounds indices raise IndexError
(:class:`~tenpy_ad.errors.IndexingError`) when the index is built if its values are known,
else when the graph runs.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes
from ..errors import (ArgumentError, ArgumentValueError, ConcretizationError, DTypeError,
                      IndexingError, ShapeError)
from ..ops import indexing as ix
from ..ops import structural as st
from ..primitive import (bind1, code_of_value, describe, eager_basic_index, is_eager,
                         register_view, shape_of)
from ._arrays import tensor_or_array
from ._dispatch import implements
from ._views import ViewKind
from ._operands import (broadcasts_to, is_tensor, is_traced, normalize_axis, operand,
                        tensor_among, traced_among, value_like)


# ------------------------------------------------------------------ parsing an index

def _entry(item, operands: list):
    """One item of an index as a template entry (masks as ("mask", array) for now)."""
    if item is None:
        return None
    if item is Ellipsis:
        return "..."
    if isinstance(item, slice):
        return item
    if isinstance(item, (bool, np.bool_)):
        return ("bool", bool(item))
    if isinstance(item, numbers.Integral):
        return int(item)
    if isinstance(item, (list, tuple)):
        item = tensor_or_array(item, "index")
        if isinstance(item, np.ndarray) and item.size == 0:
            item = item.astype(np.int64)              # NumPy reads [] as an integer index
    if is_tensor(item):
        if item.dtype.kind in "iu":
            operands.append(item)
            return ("index", len(operands) - 1)
        if item.dtype.kind == "b":
            item = _concrete_mask(item)
        else:
            raise _invalid_index(describe(item), ' (an integer tensor: tp.tensor(values, '
                                 'dtype="int64"))')
    if isinstance(item, np.ndarray):
        if item.dtype.kind == "b":
            return ("bool", bool(item)) if item.ndim == 0 else ("mask", item)
        if item.dtype.kind in "iu":
            if item.ndim == 0:
                return int(item)
            operands.append(item.astype(np.int64, copy=False))
            return ("index", len(operands) - 1)
        raise _invalid_index(describe(item), ' (an integer tensor: tp.tensor(values, '
                             'dtype="int64"))')
    raise _invalid_index(repr(item), "")


def _invalid_index(text: str, hint: str) -> ArgumentError:
    return ArgumentError(f"index {text}: only integers, slices (:), ellipsis (...), None and "
                         f"integer or boolean arrays are valid indices{hint}")


def _concrete_mask(mask) -> np.ndarray:
    value = ix.concrete_value(mask)
    if value is None:
        raise ConcretizationError(
            f"indexing with the traced boolean mask {mask!r}: the result's shape depends on "
            "the mask's values, which a traced placeholder does not have. Use "
            "tnp.where(mask, x, 0), or a mask computed outside the trace.")
    return value


def parse_index(x, index) -> tuple:
    """NumPy's ``index`` into ``x`` as ``(template, operands)`` (see ops/indexing.py):
    slices normalised, integers checked and made non-negative, masks turned into the
    integer arrays of their ``True`` positions."""
    items = index if isinstance(index, tuple) else (index,)
    operands: list = []
    entries = [_entry(item, operands) for item in items]
    if sum(1 for e in entries if e == "...") > 1:
        raise IndexingError("an index can only have a single ellipsis ('...')")
    shape = shape_of(x)
    reads = [e[1].ndim if type(e) is tuple and e[0] == "mask" else ix.axes_read(e)
             for e in entries]
    fixed = sum(r for r in reads if r is not None)
    if fixed > len(shape):
        raise IndexingError(f"too many indices for array {describe(x)}: it is "
                            f"{len(shape)}-dimensional, but {fixed} were indexed")
    template, axis = [], 0
    for entry, read in zip(entries, reads):
        if read is None:
            read = len(shape) - fixed
        template.extend(_normalized(entry, shape, axis, operands))
        axis += read
    return tuple(template), operands


def _normalized(entry, shape: tuple, axis: int, operands: list) -> list:
    """The template entries of one parsed item, which reads axes from ``axis`` on."""
    if isinstance(entry, slice):
        if entry.step == 0:
            raise ShapeError("slice step cannot be zero")
        start, stop, step = entry.indices(shape[axis])
        return [(start, stop, step) if len(range(start, stop, step)) else (0, 0, 1)]
    if type(entry) is int:
        n = shape[axis]
        if not -n <= entry < n:
            raise IndexingError(f"index {entry} is out of bounds for axis {axis} with size "
                                f"{n} (array shape {list(shape)})")
        return [entry % n]
    if type(entry) is tuple and entry[0] == "mask":
        return _mask_entries(entry[1], shape, axis, operands)
    if type(entry) is tuple and entry[0] == "index":
        check_bounds(operands[entry[1]], shape, axis)
    return [entry]


def _mask_entries(mask: np.ndarray, shape: tuple, axis: int, operands: list) -> list:
    covered = shape[axis:axis + mask.ndim]
    for k, (m, n) in enumerate(zip(mask.shape, covered)):
        if m != n:
            raise IndexingError(f"boolean index did not match indexed array along axis "
                                f"{axis + k}; size of axis is {n} but size of corresponding "
                                f"boolean axis is {m}")
    entries = []
    for positions in np.nonzero(mask):
        operands.append(positions.astype(np.int64, copy=False))
        entries.append(("index", len(operands) - 1))
    return entries


def check_bounds(index, shape: tuple, axis: int) -> None:
    """An IndexingError now if the index's values along ``axis`` of an array of ``shape``
    are known and out of bounds."""
    size = shape[axis]
    value = ix.concrete_value(index)
    if value is None or not value.size:
        return
    low, high = int(value.min()), int(value.max())
    if low < -size or high >= size:
        bad = high if high >= size else low
        raise IndexingError(f"index {bad} is out of bounds for axis {axis} with size {size} "
                            f"(array shape {list(shape)})")


# ------------------------------------------------------------------ x[index]

def getitem(x, index):
    """``x[index]`` with NumPy's rules: integers, slices (any step), ``...``, ``None``,
    integer arrays (lists, ndarrays, int64 tensors) and boolean masks, mixed.

    Basic items give a strided slice; integer arrays and masks give a ``gather``, whose
    derivative scatters back (adding up at repeated indices)."""
    if not tensor_among((x, index)):
        return np.asarray(x)[index]
    x = tensor_or_array(x, "getitem")
    items = index if type(index) is tuple else (index,)
    if all(type(item) in _BASIC for item in items):      # the common case, kept short
        if is_eager(x):
            return _eager_basic(x, items, True)
        return _basic_view(_basic(x, items), x, items)
    template, operands = parse_index(x, items)
    if not any(ix.is_advanced(e) and type(e) is not int for e in template):
        items = ix.numpy_index((template, "raise"), shape_of(x), ())
        return _basic_view(_basic(x, items), x, items)
    return gathered(x, (template, "raise"), operands)      # a copy, as NumPy's


def _basic_view(result, x, items: tuple):
    """Basic indexing gives a view (of an eager tensor: registered for writes); an
    integer for every axis gives NumPy's scalar, a copy."""
    if len(items) == len(shape_of(x)) and all(type(item) is int for item in items):
        return result
    return register_view(result, x, BASIC_INDEX, items)


#: a view by a basic index (arg: its items); written back by a scatter
BASIC_INDEX = ViewKind("indexing", lambda p, items: _basic_value(p, items),
                       lambda p, c, items: _update(ix.scatter_set_p, p, items, c))


def _basic_value(x, items: tuple):
    """``x[items]`` for a basic index, not registered as a view (a view's recomputation)."""
    return _eager_basic(x, items, False) if is_eager(x) else _basic(x, items)


def _eager_basic(x, items: tuple, register: bool):
    """An eager ``x[items]`` by its plan, in the core (as a view if ``register``; a
    scalar never is)."""
    spec, slices, final_shape, scalar, _ = _plan(x, items)
    kind = BASIC_INDEX if register and not scalar else None
    return eager_basic_index(x, spec, slices, final_shape, kind, items)


def index_key(items: tuple):
    """A comparable form of a basic index (None for any other)."""
    key = []
    for item in items:
        kind = type(item)
        if kind is slice:
            key.append((item.start, item.stop, item.step))
        elif kind is int or item is None or item is Ellipsis:
            key.append(item)
        else:
            return None
    return tuple(key)


_BASIC = frozenset([slice, int, type(None), type(Ellipsis)])


def _basic(x, items: tuple):
    """Integers, slices, None and ``...``: a strided slice and a reshape."""
    spec, _, final_shape, _, _ = _plan(x, items)   # (None where a step is the identity)
    if spec is not None:
        x = bind1(st.slice_p, spec, x)
    return x if final_shape is None else bind1(st.reshape_p, final_shape, x)


def _plan(x, items: tuple) -> tuple:
    """``(spec, slices, final_shape, scalar, template)`` of a basic index, kept per shape
    and index: ``_basic``'s slice spec and its NumPy slices, its final shape, whether
    every axis has an integer (NumPy's scalar, not a view), and the scatters' template."""
    shape = shape_of(x)
    last = _LAST_PLAN
    if items is last[0] and shape == last[1]:     # ``t[:, j] += v`` asks three times
        return last[2]
    key = (shape, index_key(items))
    plan = _BASIC_PLANS.get(key)
    if plan is None:
        spec, final_shape = _basic_plan(x, shape, items)
        if spec is not None:                      # the rules, as binding them would run
            st.slice_p.shape_rule(spec, x)
        scalar = len(items) == len(shape) and all(type(item) is int for item in items)
        plan = (spec, None if spec is None else st.slices_of(spec), final_shape, scalar,
                parse_index(x, items)[0])
        if len(_BASIC_PLANS) >= 4096:             # (errors raise above: never kept)
            _BASIC_PLANS.clear()
        _BASIC_PLANS[key] = plan
    _LAST_PLAN[:] = (items, shape, plan)          # (holds ``items``: its id stays its own)
    return plan


#: (shape, index_key) -> ``_plan``'s plan; the last index asked for, its shape and plan
_BASIC_PLANS: dict = {}
_LAST_PLAN: list = [None, None, None]
#: handed to the core, whose ``x[index]`` of an eager tensor takes a known plan directly
BASIC_PLANS = (_BASIC_PLANS, _LAST_PLAN, BASIC_INDEX)


def _basic_plan(x, shape: tuple, items: tuple) -> tuple:
    """``_basic``'s slice spec and final shape (None where that step is the identity)."""
    n_axes = sum(1 for item in items if item is not None and item is not Ellipsis)
    if n_axes > len(shape):
        raise IndexingError(f"too many indices for array {describe(x)}: it is "
                            f"{len(shape)}-dimensional, but {n_axes} were indexed")
    if sum(1 for item in items if item is Ellipsis) > 1:
        raise IndexingError("an index can only have a single ellipsis ('...')")
    spec, final_shape, axis = [], [], 0
    for item in items:
        if item is Ellipsis:
            for _ in range(len(shape) - n_axes):
                spec.append((0, shape[axis], 1))
                final_shape.append(shape[axis])
                axis += 1
        elif item is None:
            final_shape.append(1)
        elif type(item) is slice:
            if item.step == 0:
                raise ShapeError("slice step cannot be zero")
            start, stop, step = item.indices(shape[axis])
            length = len(range(start, stop, step))
            spec.append((start, stop, step) if length else (0, 0, 1))   # empty: canonical
            final_shape.append(length)
            axis += 1
        else:
            i = _normalized(item, shape, axis, [])[0]
            spec.append((i, i + 1, 1))
            axis += 1
    for d in shape[axis:]:
        spec.append((0, d, 1))
        final_shape.append(d)
    spec = tuple(spec)
    sliced = tuple(len(range(*s)) for s in spec)
    return (None if all(s == (0, d, 1) for s, d in zip(spec, shape)) else spec,
            None if tuple(final_shape) == sliced else tuple(final_shape))


def gathered(x, params, operands: list):
    """Bind the gather of ``x`` in the mode its operands call for (an eager tensor that
    requires grad is refused in a trace instead of becoming a constant)."""
    if is_traced(x) or not traced_among(operands):
        return ix.gather(params, x, *operands)
    return ix.gather(params, operand(x, code_of_value(x), True), *operands)


# ------------------------------------------------------------------ take, take_along_axis

def _index_array(name: str, indices):
    """An integer index operand: an int64 tensor, or an int64 ndarray."""
    indices = tensor_or_array(indices, name)
    if not isinstance(indices, np.ndarray):
        if indices.dtype.kind not in "iu":
            raise ArgumentError(f"{name}: indices must be integers, got {describe(indices)}")
        return indices
    if indices.dtype.kind not in "iu" and indices.size:
        raise ArgumentError(f"{name}: indices must be integers, got {indices.dtype.name}")
    return indices.astype(np.int64, copy=False)


def _ravel(x):
    return st.reshape(x, (int(np.prod(shape_of(x))),))


@implements("numpy.take")
def take(a, indices, axis=None, out=None, mode="raise"):
    """``np.take``: entries of ``a`` at ``indices`` along ``axis`` (of the flattened array
    by default); ``mode`` ``"raise"`` (negative indices count from the end), ``"wrap"`` or
    ``"clip"``.  Differentiable in ``a``: the derivative adds up at repeated indices."""
    if out is not None:
        raise ArgumentError("take: out= is taken by keyword (out=t writes the result into t)")
    if mode not in ix.MODES:
        raise ArgumentValueError(f"take: mode must be one of {ix.MODES}, got {mode!r}")
    a = tensor_or_array(a, "take")
    if axis is None:
        a, axis = _ravel(a), 0
    shape = shape_of(a)
    axis = normalize_axis("take", axis, len(shape))
    indices = _index_array("take", indices)
    if type(indices) is np.ndarray and mode != "raise":
        indices, mode = ix.bounded(indices, mode, shape[axis]), "raise"
    if mode == "raise":
        check_bounds(indices, shape, axis)
    template = tuple((0, d, 1) for d in shape[:axis]) + (("index", 0),)
    return gathered(a, (template, mode), [indices])


@implements("numpy.take_along_axis")
def take_along_axis(arr, indices, axis=-1):
    """``np.take_along_axis``: ``arr`` gathered along ``axis`` at ``indices`` (which has
    ``arr``'s number of dimensions and broadcasts against it elsewhere)."""
    arr = tensor_or_array(arr, "take_along_axis")
    indices = _index_array("take_along_axis", indices)
    if axis is None:
        if len(shape_of(indices)) != 1:
            raise ShapeError("take_along_axis: with axis=None the indices must be 1-d, got "
                             f"{describe(indices)}")
        arr, axis = _ravel(arr), 0
    shape = shape_of(arr)
    if len(shape_of(indices)) != len(shape):
        raise ShapeError(f"take_along_axis: indices {describe(indices)} and array "
                         f"{describe(arr)} must have the same number of dimensions")
    axis = normalize_axis("take_along_axis", axis, len(shape))
    check_bounds(indices, shape, axis)
    operands = [indices if k == axis else _arange_along(k, shape) for k in range(len(shape))]
    template = tuple(("index", k) for k in range(len(shape)))
    return gathered(arr, (template, "raise"), operands)


def _arange_along(axis: int, shape: tuple) -> np.ndarray:
    """``0 .. shape[axis]-1`` laid along ``axis`` of a ``len(shape)``-d array."""
    view = [1] * len(shape)
    view[axis] = shape[axis]
    return np.arange(shape[axis], dtype=np.int64).reshape(view)


# ------------------------------------------------------------------ x.at[index]

class _IndexUpdateHelper:
    """``x.at``: ``x.at[index]`` names the entries a functional update changes."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """``x.at[index]``: each method returns a new array, ``x`` with the entries at
    ``index`` updated (tensors are immutable), as JAX's ``.at`` does.

    Values are converted to ``x``'s dtype and broadcast to the indexed shape.  Repeated
    indices: ``add`` and ``multiply`` accumulate every value, ``min``/``max`` take the
    extremum of all, and ``set`` keeps the last value written (NumPy's assignment order);
    derivatives follow the same choices (for ``multiply``'s values they need indices that
    reach each element once).  Out-of-bounds indices raise IndexError, as in NumPy (JAX
    clamps or drops them instead)."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def get(self):
        """``x[index]``."""
        return getitem(self.array, self.index)

    def set(self, values):
        """``x`` with ``values`` written at ``index``."""
        return _update(ix.scatter_set_p, self.array, self.index, values)

    def add(self, values):
        """``x`` with ``values`` added at ``index`` (accumulating at repeated indices)."""
        return _update(ix.scatter_add_p, self.array, self.index, values)

    def multiply(self, values):
        """``x`` with the entries at ``index`` multiplied by ``values``."""
        return _update(ix.scatter_mul_p, self.array, self.index, values)

    mul = multiply

    def min(self, values):  # noqa: A003 - JAX's name
        """``x`` with the entries at ``index`` replaced by their minimum with ``values``
        (the derivative is split evenly among tied candidates)."""
        return _update(ix.scatter_min_p, self.array, self.index, values)

    def max(self, values):  # noqa: A003 - JAX's name
        """``x`` with the entries at ``index`` replaced by their maximum with ``values``
        (the derivative is split evenly among tied candidates)."""
        return _update(ix.scatter_max_p, self.array, self.index, values)


def set_at(x, index, values):
    """``x.at[index].set(values)``, without the helper objects (in-place writes)."""
    return _update(ix.scatter_set_p, x, index, values)


def index_update(x) -> _IndexUpdateHelper:
    """``x.at``: ``index_update(x)[index].set(v)`` is ``x.at[index].set(v)``."""
    return _IndexUpdateHelper(x)


def _update(prim, x, index, values):
    x, values = tensor_or_array(x, "x.at[...]"), tensor_or_array(values, "x.at[...]")
    if values.dtype.kind not in "biufc":
        raise DTypeError(f"x.at[...]: values must be numbers, got an array of dtype "
                         f"{values.dtype}")
    template, operands = parsed_index(x, index)
    code = code_of_value(x)
    if values.dtype.kind == "c" and not dtypes.is_complex(code):
        raise DTypeError(f"x.at[...]: complex values into the real array {describe(x)} would "
                         "drop the imaginary part; write their .real explicitly")
    traced = traced_among([x, values, *operands])
    x, values = operand(x, code, traced), operand(values, code, traced)
    target = ix.indexed_shape(template, shape_of(x),
                              tuple(tuple(shape_of(i)) for i in operands))
    values = _fit(values, target)
    return ix.scatter(prim, (template, "raise"), x, values, *operands)


def parsed_index(x, index) -> tuple:
    """``parse_index(x, index)``, kept per shape for basic indices (no operands)."""
    items = index if type(index) is tuple else (index,)
    if items is not _LAST_PLAN[0] and index_key(items) is None:
        return parse_index(x, index)
    return _plan(x, items)[4], ()


def _fit(values, target: tuple):
    """``values`` broadcast to the indexed shape (leading axes of length 1 may go)."""
    shape = shape_of(values)
    if shape == target:
        return values
    while len(shape) > len(target) and shape[0] == 1:
        shape = shape[1:]
        values = st.reshape(values, shape)
    if not broadcasts_to(shape, target):
        raise ShapeError(f"x.at[...]: values {describe(values)} cannot be broadcast to the "
                         f"indexed shape {list(target)}")
    return st.broadcast_to(values, target)


# ------------------------------------------------------------------ nonzero & co

def concrete_values(name: str, a) -> np.ndarray:
    """The values of ``a`` (an eager tensor, a constant), or a ConcretizationError naming
    ``name`` for a traced placeholder, which has none yet."""
    value = ix.concrete_value(a)
    if value is None:
        raise ConcretizationError(
            f"{name}: the result's shape depends on the values of {a!r}, which a traced "
            "placeholder does not have; compute it outside the trace (eager mode or "
            "tp.evaluate), or use tnp.where")
    return value


@implements("numpy.nonzero")
def nonzero(a):
    """``np.nonzero``: the indices of the non-zero entries, one int64 array per axis
    (needs concrete values: not available for traced placeholders)."""
    a = tensor_or_array(a, "nonzero")
    return tuple(value_like(a, i) for i in np.nonzero(concrete_values("nonzero", a)))


@implements("numpy.argwhere")
def argwhere(a):
    """``np.argwhere``: the indices of the non-zero entries as rows (concrete values)."""
    a = tensor_or_array(a, "argwhere")
    return value_like(a, np.argwhere(concrete_values("argwhere", a)))


@implements("numpy.flatnonzero")
def flatnonzero(a):
    """``np.flatnonzero``: the indices of the non-zero entries of the flattened array
    (concrete values)."""
    a = tensor_or_array(a, "flatnonzero")
    return value_like(a, np.flatnonzero(concrete_values("flatnonzero", a)))


def _condition(name: str, condition) -> np.ndarray:
    """A condition's concrete values as booleans (it selects by value)."""
    return concrete_values(name, tensor_or_array(condition, name)).astype(bool)


@implements("numpy.compress")
def compress(condition, a, axis=None, out=None):
    """``np.compress``: the slices of ``a`` along ``axis`` (of the flattened array by
    default) where the 1-d ``condition`` is true; differentiable in ``a``, while
    ``condition`` must be concrete."""
    if out is not None:
        raise ArgumentError("compress: out= is taken by keyword (out=t writes the result into t)")
    condition = _condition("compress", condition)
    if condition.ndim != 1:
        raise ShapeError("compress: condition must be a 1-d array")
    return take(a, np.flatnonzero(condition), axis=axis)


@implements("numpy.extract")
def extract(condition, arr):
    """``np.extract``: the entries of ``arr.ravel()`` where ``condition.ravel()`` is
    non-zero (``condition`` concrete)."""
    return take(arr, np.flatnonzero(_condition("extract", condition)))


@implements("numpy.diag_indices_from")
def diag_indices_from(arr):
    """``np.diag_indices_from``: index arrays of the main diagonal (from the shape)."""
    shape = shape_of(tensor_or_array(arr))
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ShapeError(f"diag_indices_from: all dimensions of {describe(arr)} must be "
                         "equal, and at least 2")
    return np.diag_indices(shape[0], len(shape))


@implements("numpy.tril_indices_from")
def tril_indices_from(arr, k=0):
    """``np.tril_indices_from``: index arrays of the lower triangle (from the shape)."""
    shape = _matrix_shape("tril_indices_from", arr)
    return np.tril_indices(shape[0], k=k, m=shape[1])


@implements("numpy.triu_indices_from")
def triu_indices_from(arr, k=0):
    """``np.triu_indices_from``: index arrays of the upper triangle (from the shape)."""
    shape = _matrix_shape("triu_indices_from", arr)
    return np.triu_indices(shape[0], k=k, m=shape[1])


def _matrix_shape(name: str, arr) -> tuple:
    shape = shape_of(tensor_or_array(arr))
    if len(shape) != 2:
        raise ShapeError(f"{name}: input array must be 2-d, got {describe(arr)}")
    return shape


__all__ = ["getitem", "take", "take_along_axis", "index_update", "nonzero", "argwhere",
           "flatnonzero", "compress", "extract", "diag_indices_from", "tril_indices_from",
           "triu_indices_from"]

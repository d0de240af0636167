# The numpy-like operator surface shared by TracedTensor and the eager Tensor.
#
# Operators and methods forward to the functions of tenpy_ad.numpy, handed over at import
# through ``install(surface=...)``, so one implementation serves both tensor kinds.  NumPy
# functions and ufuncs called on tensors reach tenpy_ad through ``__array_function__`` and
# ``__array_ufunc__`` (tenpy_ad/numpy/_dispatch.py).

cdef inline object _fn(str name):
    return _surface[name]


cdef str conversion_hint(str before, str after):
    """Which SciPy function converts a tensor with ``np.asarray`` and the tenpy_ad version
    to call instead (``before + "by scipy.linalg.svd, ..." + after``), or ``""``; for the
    error path of ``__array__`` only (it looks at the calling frames)."""
    hint = _surface.get("array_conversion_hint")
    found = "" if hint is None else hint()
    return before + found + after if found else ""


def _slices_along_first_axis(tensor, Py_ssize_t n):
    """``tensor[0], ..., tensor[n - 1]``, one at a time."""
    cdef Py_ssize_t i
    for i in range(n):
        yield tensor[i]


cdef object _written_back(object target, object result, str name, object other):
    """``target <op>= other`` given ``result = target <op> other``: an eager tensor
    without views takes a result of its shape and dtype at once (eager.pxi)."""
    if rebind_plain(target, result):
        return target
    return _fn("inplace_op")(name, target, other, result)


cdef object _planned_basic_index(Tensor x, object index, bint register=True):
    """``x[index]`` for a basic index whose plan numpy/indexing.py has made (``_plan``:
    its dict, keyed as there), registered as a view unless ``register`` is false, or
    None: the index goes through numpy/indexing.py."""
    cdef tuple items = index if type(index) is tuple else (index,)
    cdef list key = []
    for item in items:
        kind = type(item)
        if kind is slice:
            key.append(((<slice>item).start, (<slice>item).stop, (<slice>item).step))
        elif kind is int or item is None or item is Ellipsis:
            key.append(item)
        else:
            return None
    shape = x.data.shape
    plan = _basic_plans.get((shape, tuple(key)))
    if plan is None:
        return None
    _last_basic_plan[0], _last_basic_plan[1], _last_basic_plan[2] = items, shape, plan
    return eager_basic_index(x, plan[0], plan[1], plan[2],
                             None if plan[3] or not register else _basic_kind, items)


cdef class ArraySurface:
    """Operators and methods common to traced and eager tensors (NumPy's semantics)."""

    # ---------------------------------------------------------------- NumPy's protocols

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _fn("__array_ufunc__")(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _fn("__array_function__")(func, types, args, kwargs)

    # ---------------------------------------------------------------- arithmetic
    # + - * / try the fast paths of arithmetic.pxi first (same nodes, no Python frames)

    def __add__(self, other):
        result = _arithmetic(OP_ADD, self, other, False)
        return _fn("add")(self, other) if result is None else result

    def __radd__(self, other):
        result = _arithmetic(OP_ADD, self, other, True)
        return _fn("add")(other, self) if result is None else result

    def __sub__(self, other):
        result = _arithmetic(OP_SUB, self, other, False)
        return _fn("subtract")(self, other) if result is None else result

    def __rsub__(self, other):
        result = _arithmetic(OP_SUB, self, other, True)
        return _fn("subtract")(other, self) if result is None else result

    def __mul__(self, other):
        result = _arithmetic(OP_MUL, self, other, False)
        return _fn("multiply")(self, other) if result is None else result

    def __rmul__(self, other):
        result = _arithmetic(OP_MUL, self, other, True)
        return _fn("multiply")(other, self) if result is None else result

    def __truediv__(self, other):
        result = _arithmetic(OP_DIV, self, other, False)
        return _fn("divide")(self, other) if result is None else result

    def __rtruediv__(self, other):
        result = _arithmetic(OP_DIV, self, other, True)
        return _fn("divide")(other, self) if result is None else result

    def __floordiv__(self, other):
        return _fn("floor_divide")(self, other)

    def __rfloordiv__(self, other):
        return _fn("floor_divide")(other, self)

    def __mod__(self, other):
        return _fn("remainder")(self, other)

    def __rmod__(self, other):
        return _fn("remainder")(other, self)

    def __matmul__(self, other):
        return _fn("matmul")(self, other)

    def __rmatmul__(self, other):
        return _fn("matmul")(other, self)

    def __pow__(self, other, mod=None):
        if mod is not None:
            return NotImplemented
        return _fn("power")(self, other)

    def __rpow__(self, other, mod=None):
        if mod is not None:
            return NotImplemented
        return _fn("power")(other, self)

    def __neg__(self):
        if _floating_code(self) >= 0:
            return bind1(_neg_p, None, self)       # what tnp.negative binds
        return _fn("negative")(self)

    def __pos__(self):
        return _fn("positive")(self)

    def __abs__(self):
        return _fn("abs")(self)

    # ---------------------------------------------------------------- comparisons, logic
    # elementwise, as NumPy's (boolean tensors, not differentiated); tensors hash by
    # identity, so they still serve as dict keys (``tp.evaluate(y, {x: value})``)

    def __eq__(self, other):
        return _fn("equal")(self, other)

    def __ne__(self, other):
        return _fn("not_equal")(self, other)

    def __lt__(self, other):
        return _fn("less")(self, other)

    def __le__(self, other):
        return _fn("less_equal")(self, other)

    def __gt__(self, other):
        return _fn("greater")(self, other)

    def __ge__(self, other):
        return _fn("greater_equal")(self, other)

    def __hash__(self):
        return object.__hash__(self)

    def __and__(self, other):
        return _fn("bitwise_and")(self, other)

    def __rand__(self, other):
        return _fn("bitwise_and")(other, self)

    def __or__(self, other):
        return _fn("bitwise_or")(self, other)

    def __ror__(self, other):
        return _fn("bitwise_or")(other, self)

    def __xor__(self, other):
        return _fn("bitwise_xor")(self, other)

    def __rxor__(self, other):
        return _fn("bitwise_xor")(other, self)

    def __invert__(self):
        return _fn("invert")(self)

    # ---------------------------------------------------------------- indexing, shape

    def __getitem__(self, index):
        if type(self) is Tensor and _basic_plans is not None:
            view = _planned_basic_index(<Tensor>self, index)
            if view is not None:
                return view
        return _fn("getitem")(self, index)

    def __setitem__(self, index, value):
        cdef object alias
        if type(self) is Tensor:                 # no views: the functional update rebound
            alias = (<Tensor>self)._alias
            if (alias is None or alias is _SCALAR) and rebind_plain(
                    self, _fn("set_at")(self, index, value)):
                return
        _fn("setitem")(self, index, value)       # numpy/inplace.py: eager writes rebind

    # augmented assignment: eager tensors are written in place (the short path here,
    # the others in numpy/inplace.py); traced ones return a new node, bound to the name
    def __iadd__(self, other):
        if _link_of(self) is not None:        # a view: perhaps its base's own update
            return _fn("inplace_op")("add", self, other)
        return _written_back(self, self + other, "add", other)

    def __isub__(self, other):
        if _link_of(self) is not None:        # a view: perhaps its base's own update
            return _fn("inplace_op")("subtract", self, other)
        return _written_back(self, self - other, "subtract", other)

    def __imul__(self, other):
        if _link_of(self) is not None:        # a view: perhaps its base's own update
            return _fn("inplace_op")("multiply", self, other)
        return _written_back(self, self * other, "multiply", other)

    def __itruediv__(self, other):
        return _written_back(self, self / other, "divide", other)

    def __ifloordiv__(self, other):
        return _written_back(self, self // other, "floor_divide", other)

    def __imod__(self, other):
        return _written_back(self, self % other, "remainder", other)

    def __ipow__(self, other):
        return _written_back(self, self ** other, "power", other)

    def __imatmul__(self, other):
        return _written_back(self, self @ other, "matmul", other)

    def __iand__(self, other):
        return _written_back(self, self & other, "bitwise_and", other)

    def __ior__(self, other):
        return _written_back(self, self | other, "bitwise_or", other)

    def __ixor__(self, other):
        return _written_back(self, self ^ other, "bitwise_xor", other)

    def fill(self, value):
        """Set every entry to ``value`` (in place, as ``ndarray.fill``)."""
        _fn("fill")(self, value)

    def __len__(self):
        shape = self.shape
        if not shape:
            raise _errors["ArgumentError"]("len() of unsized object: a 0-d tensor (shape ()) "
                                           "has no length, as for a 0-d NumPy array")
        return shape[0]

    def __iter__(self):
        """The slices along the first axis, as iterating an ndarray gives them (the shape is
        known also while tracing).  Without this, Python would iterate through
        ``__getitem__`` until an IndexError, and a 0-d tensor would look empty."""
        shape = self.shape
        if not shape:
            raise _errors["ArgumentError"](
                "iteration over a 0-d array: a 0-d tensor (shape ()) has no elements to "
                "iterate over; use .item() for its value or index it with [()]")
        return _slices_along_first_axis(self, shape[0])

    def __reversed__(self):
        shape = self.shape
        if not shape:
            raise _errors["ArgumentError"]("reversed() of a 0-d tensor (shape ()): it has no "
                                           "elements to iterate over")
        return (self[i] for i in range(shape[0] - 1, -1, -1))

    # ---------------------------------------------------------------- views (eager.pxi)

    property _view:
        """Its ViewLink if it is a registered view (numpy/_views.py), else None."""
        def __get__(self):
            return _link_of(self)

    property _views:
        """A base's weak references to its live views (and, eager, exported arrays), or
        None."""
        def __get__(self):
            alias = _alias_of(self)
            return alias if type(alias) is list else None

        def __set__(self, list value):
            if _link_of(self) is not None:
                raise _errors["ArgumentError"]("_views: a view keeps no views of its own")
            _set_alias(self, value)

    @property
    def at(self):
        """Functional updates, as JAX spells them: ``x.at[idx].set(v)``, ``.add(v)``."""
        return _fn("index_update")(self)

    @property
    def size(self):
        """The number of elements (the product of ``shape``)."""
        cdef Py_ssize_t n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def T(self):
        """The axes reversed, as ``ndarray.T``."""
        return _fn("transpose")(self, None)

    @property
    def mT(self):
        """The transpose of the last two axes."""
        return _fn("swapaxes")(self, -1, -2)

    @property
    def real(self):
        """The real part (the tensor itself for real dtypes), as ``ndarray.real``."""
        return _fn("real")(self)

    @property
    def imag(self):
        """The imaginary part (zeros for real dtypes), as ``ndarray.imag``."""
        return _fn("imag")(self)

    def reshape(self, *shape):
        """Reshape (one ``-1`` allowed), like ``ndarray.reshape``."""
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        return _fn("reshape")(self, shape)

    def transpose(self, *axes):
        """Permute axes (reverse them by default), like ``ndarray.transpose``."""
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = axes[0]
        return _fn("transpose")(self, axes if axes else None)

    def scale_real(self, factor):
        """Multiply by a real Python/NumPy scalar held as a static parameter of the graph."""
        return _fn("scale")(self, factor)

    def broadcast_in_dim(self, shape, broadcast_dimensions):
        """Broadcast with an explicit map of operand axes to output axes (XLA semantics)."""
        return _fn("broadcast_in_dim")(self, shape, broadcast_dimensions)

    # ---------------------------------------------------------------- ndarray methods
    # each is the tenpy_ad.numpy function of the same name applied to the tensor

    def sum(self, *args, **kwargs):
        return _fn("sum")(self, *args, **kwargs)

    def max(self, *args, **kwargs):
        return _fn("max")(self, *args, **kwargs)

    amax = max

    def min(self, *args, **kwargs):
        return _fn("min")(self, *args, **kwargs)

    def mean(self, *args, **kwargs):
        return _fn("mean")(self, *args, **kwargs)

    def prod(self, *args, **kwargs):
        return _fn("prod")(self, *args, **kwargs)

    def var(self, *args, **kwargs):
        return _fn("var")(self, *args, **kwargs)

    def std(self, *args, **kwargs):
        return _fn("std")(self, *args, **kwargs)

    def cumsum(self, *args, **kwargs):
        return _fn("cumsum")(self, *args, **kwargs)

    def cumprod(self, *args, **kwargs):
        return _fn("cumprod")(self, *args, **kwargs)

    def all(self, *args, **kwargs):
        return _fn("all")(self, *args, **kwargs)

    def any(self, *args, **kwargs):
        return _fn("any")(self, *args, **kwargs)

    def argmax(self, *args, **kwargs):
        return _fn("argmax")(self, *args, **kwargs)

    def argmin(self, *args, **kwargs):
        return _fn("argmin")(self, *args, **kwargs)

    def argsort(self, *args, **kwargs):
        return _fn("argsort")(self, *args, **kwargs)

    def ravel(self, *args, **kwargs):
        return _fn("ravel")(self, *args, **kwargs)

    def flatten(self, *args, **kwargs):
        return _fn("copy")(_fn("ravel")(self, *args, **kwargs))     # a copy, never a view

    def squeeze(self, *args, **kwargs):
        return _fn("squeeze")(self, *args, **kwargs)

    def swapaxes(self, *args, **kwargs):
        return _fn("swapaxes")(self, *args, **kwargs)

    def repeat(self, *args, **kwargs):
        return _fn("repeat")(self, *args, **kwargs)

    def take(self, *args, **kwargs):
        return _fn("take")(self, *args, **kwargs)

    def clip(self, *args, **kwargs):
        return _fn("clip")(self, *args, **kwargs)

    def round(self, *args, **kwargs):
        return _fn("round")(self, *args, **kwargs)

    def trace(self, *args, **kwargs):
        return _fn("trace")(self, *args, **kwargs)

    def diagonal(self, *args, **kwargs):
        return _fn("diagonal")(self, *args, **kwargs)

    def dot(self, other):
        return _fn("dot")(self, other)

    def conj(self):
        return _fn("conj")(self)

    conjugate = conj

    def astype(self, dtype):
        return _fn("astype")(self, dtype)

    def copy(self, order="C"):
        """A copy: a new tensor of the same value, which later writes to either leave
        the other alone (laid out in ``order``, as ``ndarray.copy``)."""
        return _fn("copy")(self, order)

    # ---------------------------------------------------------------- the Array API standard
    # (tenpy_ad/array_api/_tensor_protocols.py: one Python call each)

    def __array_namespace__(self, *, api_version=None):
        """The Array API namespace for tensors, ``tenpy_ad.array_api``."""
        return _fn("__array_namespace__")(api_version)

    @property
    def device(self):
        """The device the value lives on: the CPU."""
        return _fn("device")(self)

    def to_device(self, device, /, *, stream=None):
        """The tensor on ``device`` (the CPU: itself)."""
        return _fn("to_device")(self, device, stream)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The DLPack capsule of an eager tensor's data (a traced one has none)."""
        return _fn("__dlpack__")(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        """The DLPack device of an eager tensor's data: the CPU."""
        return _fn("__dlpack_device__")(self)

    def __lshift__(self, other):
        return _fn("bitwise_left_shift")(self, other)

    def __rlshift__(self, other):
        return _fn("bitwise_left_shift")(other, self)

    def __rshift__(self, other):
        return _fn("bitwise_right_shift")(self, other)

    def __rrshift__(self, other):
        return _fn("bitwise_right_shift")(other, self)


# NumPy's float64 setitem (``array[i] = t``) turns an error from ``float(t)`` into its own
# "setting an array element with a sequence" whenever the value passes PySequence_Check,
# i.e. has the sequence slot sq_item, which Cython fills from __getitem__.  Tensors index
# through the mapping slot alone, so NumPy hands on tenpy_ad's error, which says how to
# write a tensor (also len(), iteration and ``reversed`` keep working: __len__, __iter__,
# __reversed__).
cdef extern from *:
    """
    static void tenpy_ad_index_as_mapping_only(PyObject* type) {
        PyTypeObject* t = (PyTypeObject*)type;
        if (t->tp_as_sequence != NULL) t->tp_as_sequence->sq_item = NULL;
        PyType_Modified(t);
    }
    """
    void tenpy_ad_index_as_mapping_only(object type)

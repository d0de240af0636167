# Facts about an operand of any kind -- TracedTensor, eager Tensor, ndarray or Python
# scalar (and the BlockCotangents of the sweeps) -- for shape rules and derivative rules,
# which run on all of them; and the kind of an operand, decided here once for the layers
# above (the transforms, the NumPy surface, the models), which ask rather than test types.

cdef inline int _array_code(object dtype) except -1:
    code = _code_of_dtype.get(dtype)
    if code is None:
        return _value_code(dtype)
    return code


cpdef tuple shape_of(object x):
    """The shape of a tensor, array or scalar."""
    cdef type t = type(x)
    if t is TracedTensor:
        return _meta_shape((<TracedTensor>x).id)
    if t is Tensor:
        return (<Tensor>x).data.shape
    if t is _ndarray:
        return x.shape
    if t is BlockCotangent:
        return (<BlockCotangent>x).shape
    return _np.shape(x)


cpdef int code_of_value(object x) except -1:
    """The dtype code a value is carried in (integers of any width as int64)."""
    cdef type t = type(x)
    if t is TracedTensor:
        return _dtype_codes[(<TracedTensor>x).id]
    if t is Tensor:
        return _array_code((<Tensor>x).data.dtype)
    if t is _ndarray:
        return _array_code(x.dtype)
    if t is BlockCotangent:
        return (<BlockCotangent>x).dtype_code
    return _array_code(_asarray(x).dtype)


cpdef bint is_complex_value(object x) except -1:
    """Whether a value is complex."""
    cdef type t = type(x)
    if t is TracedTensor:
        code = _dtype_codes[(<TracedTensor>x).id]
        return code == 2 or code == 3                         # complex64, complex128
    if t is Tensor:
        return (<Tensor>x).data.dtype.kind == "c"
    if t is _ndarray:
        return x.dtype.kind == "c"
    return t is complex or _np.iscomplexobj(x)


cpdef bint elementwise_ready(object a, object b) except -1:
    """Whether an elementwise binary primitive takes ``a`` and ``b`` as they are: tensors
    of one kind, shape and dtype, or no tensor at all (NumPy's own semantics apply)."""
    cdef type ta = type(a), tb = type(b)
    if ta is TracedTensor:
        return tb is TracedTensor and _meta_same((<TracedTensor>a).id, (<TracedTensor>b).id)
    if ta is Tensor:
        if tb is not Tensor:
            return False
        da, db = (<Tensor>a).data, (<Tensor>b).data
        return da.dtype == db.dtype and da.shape == db.shape
    return tb is not TracedTensor and tb is not Tensor


cpdef bint recorded(object x) except -1:
    """Whether computing with ``x`` is recorded -- a traced or an eager tensor, or a block
    cotangent holding one -- so that a result computed from it may be differentiated
    again; plain arrays and scalars (the first-order eager backward pass) are not."""
    cdef type t = type(x)
    if t is TracedTensor or t is Tensor:
        return True
    if t is BlockCotangent:
        inner = (<BlockCotangent>x).block
        return recorded((<BlockCotangent>x).dense if inner is None else inner)
    return False


cpdef object concrete_value(object x):
    """The value of ``x`` if it has one now (an array, an eager Tensor's data, a constant
    node's array), else None (a traced value that only exists when its graph runs)."""
    cdef type t = type(x)
    if t is _ndarray:
        return x
    if t is Tensor:
        return (<Tensor>x).data
    if t is TracedTensor:
        x = current(x)
        if (<TracedTensor>x).prim is _constant_p:
            return (<ConstValue>(<TracedTensor>x).params).array
    return None


# ------------------------------------------------------------------ the kind of an operand

cpdef bint is_traced(object x):
    """Whether ``x`` is a TracedTensor: a value that exists only when its graph runs."""
    return type(x) is TracedTensor


cpdef bint is_eager(object x):
    """Whether ``x`` is an eager Tensor."""
    return type(x) is Tensor


cpdef bint is_tensor(object x):
    """Whether ``x`` is a traced or an eager tensor."""
    cdef type t = type(x)
    return t is TracedTensor or t is Tensor


cpdef bint is_value(object x):
    """Whether ``x`` is one concrete value: an eager Tensor, an ndarray or a scalar
    (Python's or NumPy's) -- not a traced tensor, not a list of values."""
    cdef type t = type(x)
    return t is Tensor or isinstance(x, (_ndarray, _np_generic, _Number))


cpdef bint any_traced(object xs) except -1:
    """Whether any of ``xs`` is traced: then an operation on them builds graph nodes."""
    for x in xs:
        if type(x) is TracedTensor:
            return True
    return False


cpdef bint needs_grad(object x):
    """Whether ``x`` is an eager Tensor that requires grad (a tape to extend)."""
    return type(x) is Tensor and (<Tensor>x)._requires_grad


cpdef bint any_requires_grad(object xs) except -1:
    """Whether any of ``xs`` is an eager Tensor that requires grad (a tape to extend)."""
    for x in xs:
        if type(x) is Tensor and (<Tensor>x)._requires_grad:
            return True
    return False


cpdef bint holds_tensor(object x) except -1:
    """Whether ``x`` is a tensor or a (nested) list or tuple with a tensor inside."""
    cdef type t = type(x)
    if t is TracedTensor or t is Tensor:
        return True
    if not isinstance(x, (list, tuple)):
        return False
    cdef list pending = list(x)
    while pending:                       # an explicit stack: nesting can be deep
        item = pending.pop()
        t = type(item)
        if t is TracedTensor or t is Tensor:
            return True
        if isinstance(item, (list, tuple)):
            pending.extend(item)
    return False


cpdef bint tensor_among(object args, dict kwargs=None) except -1:
    """Whether a tensor is among the arguments of a call (a sequence ``args``, a dict
    ``kwargs``), looking where NumPy's dispatch looks: every positional and keyword
    argument, and inside (nested) lists and tuples.  ``like=`` is left to NumPy, which
    hands the call back without it."""
    cdef type t
    for x in args:
        t = type(x)
        if t is TracedTensor or t is Tensor:
            return True
        if (t is list or t is tuple or isinstance(x, (list, tuple))) and holds_tensor(x):
            return True
    if kwargs is None:
        return False
    for key, x in kwargs.items():
        if key != "like" and holds_tensor(x):
            return True
    return False


cpdef object plain_value(object x):
    """An eager Tensor's data, anything else as it is (its value without the tape)."""
    if type(x) is Tensor:
        return (<Tensor>x).data
    return x


cpdef object array_value(object x):
    """The ndarray of a concrete value (an eager Tensor's data, shared; an array; a scalar
    or a nested list); a traced tensor has none (its error, as ``np.asarray``'s)."""
    cdef type t = type(x)
    if t is Tensor:
        return (<Tensor>x).data
    if t is _ndarray:
        return x
    return _asarray(x)


cpdef object as_node(object x):
    """``x`` if it is traced, else the constant node of its value."""
    if type(x) is TracedTensor:
        return x
    return _constant_fn(x)


cpdef object value_like(object like, object array):
    """``array`` (computed from concrete values) as a value of ``like``'s kind: a constant
    node if ``like`` is traced, an eager Tensor if it is eager, else the array."""
    cdef type t = type(like)
    if t is TracedTensor:
        return _constant_fn(array)
    if t is Tensor:
        return Tensor(array)
    return array


cpdef object dtype_key(object x):
    """What NumPy's type resolution sees of an operand: its dtype, or the Python type of a
    weak scalar (a Python bool is NumPy's bool)."""
    cdef type t = type(x)
    if t is TracedTensor:
        return _dtype_objects[_dtype_codes[(<TracedTensor>x).id]]
    if t is Tensor:
        return (<Tensor>x).data.dtype
    if t is float or t is int or t is complex:
        return t
    if t is bool:
        return _bool_dtype
    if t is _ndarray or isinstance(x, _np_generic):
        return x.dtype
    return _asarray(x).dtype


cpdef bint native_tensor(object x, tuple native) except -1:
    """Whether ``x`` is a tensor of a dtype code a ufunc's loop takes as it is
    (``native[code]``): then its strict primitive applies to ``x`` directly."""
    cdef type t = type(x)
    if t is TracedTensor:
        return native[_dtype_codes[(<TracedTensor>x).id]]
    if t is Tensor:
        return native[_array_code((<Tensor>x).data.dtype)]
    return False


cpdef bint native_pair(object x1, object x2, tuple native) except -1:
    """:func:`native_tensor` for two operands: tensors of one kind, shape and dtype."""
    return native_tensor(x1, native) and elementwise_ready(x1, x2)

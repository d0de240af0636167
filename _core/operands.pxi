# Facts about an operand of any kind -- TracedTensor, eager Tensor, ndarray or Python
# scalar (and the BlockCotangents of the sweeps) -- for shape rules and derivative rules,
# which run on all of them.

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
    if t is TracedTensor and (<TracedTensor>x).prim is _constant_p:
        return (<ConstValue>(<TracedTensor>x).params).array
    return None

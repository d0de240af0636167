# Fast paths of the operators + - * / for the operand pairs deep programs and derivative
# rules build most, without a trip through the Python surface (tenpy_ad.numpy):
#
#   tensor op tensor   one kind, shape and floating dtype      -> the primitive itself
#   tensor op scalar   a Python float or int, or a NumPy float scalar or 0-d array of the
#                      tensor's precision (+, -, * only)       -> one static shift/scale node
#   tensor op array    an ndarray of the tensor's shape and dtype -> the primitive on the
#                      cached constant (traced) or the array itself (eager)
#
# Each builds exactly the nodes (or tape entries) the tenpy_ad.numpy function builds for
# those operands; anything else returns None and the operator calls that function.

cdef enum ArithmeticOp:
    OP_ADD = 0
    OP_SUB = 1
    OP_MUL = 2
    OP_DIV = 3

cdef object _np_float64 = _np.float64
cdef object _np_float32 = _np.float32
cdef double _EXACT_INT = 9007199254740992.0      # 2**53: Python ints converted exactly


cdef inline int _floating_code(object x):
    """The dtype code of a tensor of a floating or complex dtype (codes 0-3: float32,
    float64, complex64, complex128); -1 for anything else."""
    cdef type t = type(x)
    cdef int code
    if t is TracedTensor:
        code = _dtype_codes[(<TracedTensor>x).id]
    elif t is Tensor:
        found = _code_of_dtype.get((<Tensor>x).data.dtype)
        if found is None:
            return -1
        code = found
    else:
        return -1
    return code if code <= 3 else -1


cdef object _static_value(object s, int code):
    """The Python float for scalar ``s`` when ``tensor op s`` keeps the tensor's dtype
    ``code`` (NumPy's promotion: Python scalars are weak, a NumPy float scalar or 0-d
    array of the tensor's precision changes nothing); None otherwise."""
    cdef type t = type(s)
    cdef int scalar_code
    if t is float:
        return s
    if t is int:
        return float(s) if -_EXACT_INT <= s <= _EXACT_INT else None
    if t is _np_float64:
        scalar_code = 1
    elif t is _np_float32:
        scalar_code = 0
    elif t is _ndarray and (<object>s).ndim == 0:
        found = _code_of_dtype.get((<object>s).dtype)
        if found is None or found > 1:
            return None
        scalar_code = found
    else:
        return None
    if scalar_code == code or scalar_code + 2 == code:     # the real or complex kind
        return float(s)
    return None


cdef object _scalar_op(int op, object x, double value, bint scalar_first, int code):
    """``x op value`` (``value op x`` when ``scalar_first``) as static-scalar nodes, as
    the surface's ``scale``/``shift`` make them; None for division."""
    if op == OP_MUL:
        if value == 1.0 and code <= 1:
            return new_array(x)      # exact for real x (complex x*1: 0+inf j -> nan+inf j)
        return bind1(_scale_p, Scalar(value), x)
    if op == OP_ADD:
        return bind1(_shift_p, Scalar(value), x)
    if op == OP_SUB:
        if scalar_first:       # c - x is (-x) + c exactly
            return bind1(_shift_p, Scalar(value), bind1(_neg_p, None, x))
        return bind1(_shift_p, Scalar(-value), x)
    return None


cdef object _array_op(Primitive prim, object x, object a, bint array_first, int code):
    """``x op a`` (``a op x`` when ``array_first``) for an ndarray ``a`` of the tensor's
    shape and dtype; None for any other ``a``."""
    if type(a) is not _ndarray or (<object>a).dtype is not _dtype_objects[code]:
        return None
    if type(x) is TracedTensor:
        if (<object>a).shape != _meta_shape((<TracedTensor>x).id):
            return None
        params = constant_params(a, code)
        if params is None:
            return None
        a = _constant_node(<ConstValue>params)
    elif (<object>a).shape != (<Tensor>x).data.shape:
        return None
    return bind2(prim, None, a, x) if array_first else bind2(prim, None, x, a)


cdef object _arithmetic(int op, object tensor, object other, bint reflected):
    """``tensor op other`` (``other op tensor`` when ``reflected``) by a fast path, or
    None when the surface function must decide."""
    cdef int code = _floating_code(tensor)
    cdef Primitive prim
    if code < 0:
        return None
    prim = _add_p if op == OP_ADD else _sub_p if op == OP_SUB else \
        _mul_p if op == OP_MUL else _div_p
    if type(other) is type(tensor):
        if not elementwise_ready(tensor, other):
            return None
        return bind2(prim, None, other, tensor) if reflected else \
            bind2(prim, None, tensor, other)
    value = _static_value(other, code)
    if value is not None:
        return _scalar_op(op, tensor, <double>value, reflected, code)
    return _array_op(prim, tensor, other, reflected, code)

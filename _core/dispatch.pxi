# Applying a primitive: one entry point per arity that picks the mode from the operands.
#
#   TracedTensor among the operands -> intern a node (elementwise primitives copy the
#                                      metadata of their first operand, others run their
#                                      shape rule through ``bind_traced``)
#   eager Tensor among the operands -> compute now and record the tape (``eager_apply``)
#   otherwise                        -> compute with NumPy and return the array

cdef inline int _check_plain(Primitive prim, object params, tuple args) except -1:
    """Run the shape rule on plain (array or scalar) operands.  Elementwise primitives are
    exempt: on plain values they have NumPy's semantics (broadcasting, promotion)."""
    if not prim.elementwise:
        prim.shape_rule(params, *[a if type(a) is _ndarray else _asarray(a) for a in args])
    return 0


cpdef object bind1(Primitive prim, object params, object x):
    """Apply a one-operand primitive in the mode its operand calls for."""
    cdef type t = type(x)
    if t is TracedTensor:
        if prim.elementwise:
            return intern_like(prim, params, (x,), <TracedTensor>x)
        return _bind_traced(prim, params, (x,))
    if t is Tensor:
        return eager_apply(prim, params, (x,))
    if not prim.elementwise:
        _check_plain(prim, params, (x,))
    if t is _ndarray and params is None and prim.array_fn is not None:
        return prim.array_fn(x)
    return prim.impl(params, x)


cpdef object bind2(Primitive prim, object params, object x, object y):
    """Apply a two-operand primitive in the mode its operands call for."""
    cdef type tx = type(x), ty = type(y)
    if tx is _ndarray and ty is _ndarray and prim.elementwise:
        if params is None and prim.array_fn is not None:
            return prim.array_fn(x, y)
        return prim.impl(params, x, y)
    if tx is TracedTensor or ty is TracedTensor:
        if (prim.elementwise and tx is TracedTensor and ty is TracedTensor
                and _meta_same((<TracedTensor>x).id, (<TracedTensor>y).id)):
            return intern_like(prim, params, (x, y), <TracedTensor>x)
        return _bind_traced(prim, params, (x, y))
    if tx is Tensor or ty is Tensor:
        return eager_apply(prim, params, (x, y))
    _check_plain(prim, params, (x, y))
    return prim.impl(params, x, y)


def bind(Primitive prim, object params, *args):
    """Apply a primitive with any number of operands."""
    for a in args:
        if type(a) is TracedTensor:
            return _bind_traced(prim, params, args)
    for a in args:
        if type(a) is Tensor:
            return eager_apply(prim, params, args)
    _check_plain(prim, params, args)
    return prim.impl(params, *args)

# Applying a primitive: one entry point per arity that picks the mode from the operands.
#
#   TracedTensor among the operands -> intern a node (elementwise primitives copy the
#                                      metadata of their first operand, others run their
#                                      shape rule through ``bind_traced``, which
#                                      makes constants of the other operands)
#   eager Tensor among the operands -> compute now and record the tape (``eager_apply``)
#   otherwise                        -> compute with NumPy and return the array

cdef inline int _check_params(Primitive prim, object params) except -1:
    """Raise ParamError unless ``params`` fit the primitive's schema: run wherever its shape
    rule runs (and on the elementwise fast paths, which skip the rule), so a malformed
    param fails in every mode.  Costs nothing for the many primitives without params."""
    if prim.check_params is None:
        if params is None:
            return 0
        text = repr(params)
        raise _errors["ParamError"](f"{prim.name}: takes no params, got "
                                    f"{text if len(text) <= 80 else text[:77] + '...'}")
    if type(params) is Scalar and (prim.scalar_kinds >> (<Scalar>params).kind) & 1:
        return 0                # the static scalar of scale/shift/pow: no Python call
    prim.check_params(params)
    return 0


cdef inline int _check_plain(Primitive prim, object params, tuple args) except -1:
    """Run the shape rule on plain (array or scalar) operands.  Elementwise primitives are
    exempt: on plain values they have NumPy's semantics (broadcasting, promotion)."""
    if not prim.elementwise:
        _check_arrays(prim, params, tuple([a if type(a) is _ndarray else _asarray(a)
                                           for a in args]))
    else:
        _check_params(prim, params)
    return 0


cdef inline TracedTensor _as_node(object x):
    """A graph operand: ``x`` itself if traced, else its (interned) constant node."""
    if type(x) is TracedTensor:
        return <TracedTensor>x
    if type(x) is _ndarray:
        params = constant_params(x, -1)           # cached for rule constants
        if params is not None:
            return _constant_node(<ConstValue>params)
    return _constant_fn(x)


# A shape rule reads only params, dtypes and shapes, so a primitive bound often with small
# hashable params keeps its results per (params, dtype codes, shapes): ``prim.shape_cache``
# (None: no cache).  Errors are never kept: they raise again.  The params check runs with
# the rule: a cache hit means params equal to ones already checked.

cdef object _shape_rule_of(Primitive prim, object params, tuple nodes):
    """``prim.shape_rule(params, *nodes)`` for graph nodes, through the cache."""
    cdef dict cache = prim.shape_cache
    if cache is None:
        _check_params(prim, params)
        return prim.shape_rule(params, *nodes)
    key = _node_key(params, nodes)
    try:
        aval = cache.get(key)
    except TypeError:                   # unhashable params: malformed, name them
        _check_params(prim, params)
        raise
    if aval is None:
        _check_params(prim, params)
        aval = prim.shape_rule(params, *nodes)
        _keep(cache, key, aval, nodes)
    elif type(aval) is int:
        return nodes[<Py_ssize_t>aval]
    return aval


cdef int _check_arrays(Primitive prim, object params, tuple arrays) except -1:
    """Run the shape rule on ndarrays (to raise on bad operands), unless the cache shows it
    has passed on these params, dtypes and shapes."""
    cdef dict cache = prim.shape_cache
    if cache is None:
        _check_params(prim, params)
        prim.shape_rule(params, *arrays)
        return 0
    for a in arrays:
        if type(a) is not _ndarray:
            _check_params(prim, params)
            prim.shape_rule(params, *arrays)
            return 0
    key = _array_key(params, arrays)
    try:
        known = key in cache
    except TypeError:                   # unhashable params: malformed, name them
        _check_params(prim, params)
        raise
    if not known:
        _check_params(prim, params)
        _keep(cache, key, prim.shape_rule(params, *arrays), arrays)
    return 0


cdef Py_ssize_t _SHAPE_CACHE_SIZE = 4096     # entries per primitive, then start afresh


cdef int _keep(dict cache, tuple key, object aval, tuple operands) except -1:
    """Enter a rule's result: ``(code, shape)``, a list of them, or "as operand k" (kept
    as the int k)."""
    cdef Py_ssize_t k
    if type(aval) is list:
        aval = tuple(aval)
    elif type(aval) is not tuple:
        for k in range(len(operands)):
            if operands[k] is aval:
                aval = k
                break
        else:
            return 0                    # an answer of another kind: not kept
    if len(cache) >= _SHAPE_CACHE_SIZE:
        cache.clear()
    cache[key] = aval
    return 0


cdef inline tuple _node_key(object params, tuple nodes):
    cdef TracedTensor a, b
    cdef Py_ssize_t n = len(nodes)
    if n == 1:
        a = <TracedTensor>nodes[0]
        return (params, _dtype_codes[a.id], _meta_shape(a.id))
    if n == 2:
        a, b = <TracedTensor>nodes[0], <TracedTensor>nodes[1]
        return (params, _dtype_codes[a.id], _meta_shape(a.id), _dtype_codes[b.id],
                _meta_shape(b.id))
    parts = [params]
    for a in nodes:
        parts.append(_dtype_codes[a.id])
        parts.append(_meta_shape(a.id))
    return tuple(parts)


cdef inline tuple _array_key(object params, tuple arrays):
    """The key of ``_node_key`` for ndarrays (the same codes: int widths as int64)."""
    parts = [params]
    for a in arrays:
        parts.append(_array_code(a.dtype))
        parts.append(a.shape)
    return tuple(parts)


cpdef object bind_traced(Primitive prim, object params, tuple args):
    """Intern ``prim(params)(*args)`` after its shape rule; non-traced operands become
    constants."""
    cdef Py_ssize_t i, n = len(args)
    for i in range(n):
        if type(args[i]) is not TracedTensor:
            args = tuple([_as_node(a) for a in args])
            break
    aval = _shape_rule_of(prim, params, args)
    if prim.n_outputs != 1:
        return intern_multi(prim, params, args, list(aval))
    return intern(prim, params, args, aval)


cpdef object bind1(Primitive prim, object params, object x):
    """Apply a one-operand primitive in the mode its operand calls for."""
    cdef type t = type(x)
    if t is TracedTensor:
        if prim.elementwise:
            _check_params(prim, params)
            return intern(prim, params, (x,), x)
        return bind_traced(prim, params, (x,))
    if t is Tensor:
        return eager_apply(prim, params, (x,))
    _check_plain(prim, params, (x,))
    if t is _ndarray and params is None and prim.array_fn is not None:
        return prim.array_fn(x)
    return prim.impl(params, x)


cpdef object bind2(Primitive prim, object params, object x, object y):
    """Apply a two-operand primitive in the mode its operands call for."""
    cdef type tx = type(x), ty = type(y)
    if tx is _ndarray and ty is _ndarray and prim.elementwise:
        _check_params(prim, params)
        if params is None and prim.array_fn is not None:
            return prim.array_fn(x, y)
        return prim.impl(params, x, y)
    if tx is TracedTensor or ty is TracedTensor:
        if (prim.elementwise and tx is TracedTensor and ty is TracedTensor
                and _meta_same((<TracedTensor>x).id, (<TracedTensor>y).id)):
            _check_params(prim, params)
            return intern(prim, params, (x, y), x)
        return bind_traced(prim, params, (x, y))
    if tx is Tensor or ty is Tensor:
        return eager_apply(prim, params, (x, y))
    _check_plain(prim, params, (x, y))
    return prim.impl(params, x, y)


def bind(Primitive prim, object params, *args):
    """Apply a primitive with any number of operands."""
    for a in args:
        if type(a) is TracedTensor:
            return bind_traced(prim, params, args)
    for a in args:
        if type(a) is Tensor:
            return eager_apply(prim, params, args)
    _check_plain(prim, params, args)
    return prim.impl(params, *args)


cpdef object full_like(object x, object value):
    """A value of ``x``'s kind, shape and dtype filled with ``value`` (rules make their
    zeros and ones with it): the broadcast of a constant node (traced), a Tensor off the
    tape (eager), a read-only broadcast array (arrays and scalars)."""
    cdef type t = type(x)
    cdef TracedTensor node
    if t is TracedTensor:
        node = <TracedTensor>x
        filled = _constant_fn(value, _dtype_codes[node.id])
        shape = _meta_shape(node.id)
        return bind1(_broadcast_p, (shape, ()), filled) if shape else filled
    if t is Tensor:
        data = (<Tensor>x).data
        return _wrap(_np.full(data.shape, value, dtype=data.dtype), None, 0)
    array = x if t is _ndarray else _asarray(x)
    return _np.broadcast_to(_asarray(value, dtype=array.dtype), array.shape)

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
    if t is _ndarray:
        folded = _fold1(prim, params, x)
        if folded is not None:
            return folded
    _check_plain(prim, params, (x,))
    if t is _ndarray and params is None and prim.array_fn is not None:
        return prim.array_fn(x)
    return prim.impl(params, x)


cpdef object bind2(Primitive prim, object params, object x, object y):
    """Apply a two-operand primitive in the mode its operands call for."""
    cdef type tx = type(x), ty = type(y)
    if tx is _ndarray and ty is _ndarray:
        if prim.elementwise:
            _check_params(prim, params)
            if params is None and prim.array_fn is not None:
                return prim.array_fn(x, y)
            return prim.impl(params, x, y)
        if prim is _einsum_p and type(params) is str:
            folded = _fold_einsum(<str>params, x, y)
            if folded is not None:
                return folded
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
    if len(args) == 2:
        return bind2(prim, params, args[0], args[1])
    _check_plain(prim, params, args)
    return prim.impl(params, *args)


cpdef object full_like(object x, object value):
    """A value of ``x``'s kind, shape and dtype filled with ``value`` (rules make their
    zeros and ones with it): the broadcast of a constant node (traced), a Tensor off the
    tape (eager), an array (arrays and scalars)."""
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
    if value == 0:
        return _np.zeros(array.shape, dtype=array.dtype)
    return _np.full(array.shape, value, dtype=array.dtype)


# ---------------------------------------------------------------- folds on plain arrays
# On ndarrays ``bind`` computes at once.  The calls the derivative rules make at every step
# of an eager backward pass -- a matrix transpose, a reshape, a slice, a broadcast, a small
# matrix product, the diagonal of a matrix and a diagonal matrix (einsums with an identity)
# -- are folded here into NumPy's own method, once for every caller, after checking in C
# what the shape rule would check; anything else, or any doubt, takes the general path
# (which raises the rule's error).  A traced operand gets the same primitive's node.

cdef enum EinsumFold:
    FOLD_NONE = 0
    FOLD_PRODUCT = 1          # (stacks of) matrix products, either operand transposed
    FOLD_DIAGONAL = 2         # "...pq,pq->...p" with an identity: the diagonal
    FOLD_EMBED = 3            # "...p,pq->...pq" with an identity: the diagonal matrix

#: the work (2 m k n, complex 4x) from which a product takes the primitive's impl, which
#: decides BLAS threads: ``tenpy_ad.blas.TINY["matmul"]`` (tests/test_array_folds.py)
TINY_MATMUL_WORK = 2 * 64 ** 3
cdef Py_ssize_t _TINY_MATMUL_WORK = TINY_MATMUL_WORK


cpdef object identity_matrix(Py_ssize_t n, int code):
    """The n x n identity of dtype ``code``, read-only and made once: the rules' identity,
    which the einsum folds recognise."""
    key = (n, code)
    eye = _identities.get(key)
    if eye is None:
        eye = _np.eye(n, dtype=_dtype_objects[code])
        eye.flags.writeable = False
        _identities[key] = eye
        _identity_at[<size_t><PyObject*>eye] = eye
    return eye


cdef object _fold1(Primitive prim, object params, object x):
    """``prim(params)(x)`` for an ndarray ``x`` by NumPy's method, or None."""
    if prim is _transpose_p:
        return _fold_transpose(params, x)
    if prim is _reshape_p:
        return _fold_reshape(params, x)
    if prim is _slice_p:
        return _fold_slice(params, x)
    if prim is _broadcast_p:
        return _fold_broadcast(params, x)
    return None


cdef object _fold_transpose(object perm, object x):
    cdef Py_ssize_t n, i, p
    cdef uint64_t seen = 0
    if type(perm) is not tuple:
        return None
    n = len(<tuple>perm)
    if n != x.ndim or n > 64:
        return None
    for i in range(n):
        item = (<tuple>perm)[i]
        if type(item) is not int:
            return None
        p = item
        if p < 0 or p >= n or seen >> p & 1:
            return None
        seen |= (<uint64_t>1) << p
    if n == 2 and (<tuple>perm)[0] == 1:
        return x.T
    return x.transpose(perm)


cdef object _fold_reshape(object shape, object x):
    if type(shape) is not tuple or len(<tuple>shape) > 64:
        return None
    size = 1
    for d in <tuple>shape:
        if type(d) is not int or d < 0:
            return None
        size *= d
    if size != x.size:
        return None
    return x.reshape(shape)


cdef object _fold_slice(object spec, object x):
    """Unit-step slices of an array (those the rules take of cotangents and factors)."""
    if type(spec) is not tuple:
        return None
    shape = x.shape
    cdef Py_ssize_t i, n = len(<tuple>spec)
    if n != len(shape):
        return None
    cdef list index = []
    for i in range(n):
        item = (<tuple>spec)[i]
        if type(item) is not tuple or len(<tuple>item) != 3:
            return None
        start, stop, step = item
        if type(start) is not int or type(stop) is not int or step != 1 \
                or not 0 <= start <= stop <= shape[i]:
            return None
        index.append(slice(start, stop))
    return x[tuple(index)]


cdef object _fold_broadcast(object params, object x):
    """The checks of broadcast_in_dim's shape rule, then its impl."""
    cdef Py_ssize_t i, previous = -1
    if type(params) is not tuple or len(<tuple>params) != 2:
        return None
    shape, dims = params
    if type(shape) is not tuple or type(dims) is not tuple or len(<tuple>shape) > 64:
        return None
    xshape = x.shape
    if len(<tuple>dims) != len(xshape):
        return None
    for d in <tuple>shape:
        if type(d) is not int or d < 0:
            return None
    for i in range(len(xshape)):
        d = (<tuple>dims)[i]
        if type(d) is not int or not previous < d < len(<tuple>shape):
            return None
        previous = d
        if xshape[i] != 1 and xshape[i] != (<tuple>shape)[d]:
            return None
    return broadcast_array(params, x)


cdef Py_ssize_t _BROADCAST_VIEW_SIZE = 4096


cpdef object broadcast_array(object params, object x):
    """broadcast_in_dim's impl: ``x`` with its axis i as axis ``dims[i]`` of ``shape``
    (``params = (shape, dims)``), a fresh array when small (cheaper to make than NumPy's
    broadcast view, and cheaper to read), a read-only view when large (no memory)."""
    cdef Py_ssize_t i, size = 1
    shape, dims = params
    if type(x) is not _ndarray:
        x = _asarray(x)
    xshape = x.shape
    cdef list expanded = [1] * len(shape)
    for i in range(len(dims)):
        expanded[dims[i]] = xshape[i]
    x = x.reshape(tuple(expanded))
    for d in shape:
        size *= <Py_ssize_t>d
    if size < _BROADCAST_VIEW_SIZE:
        result = _np.empty(shape, dtype=x.dtype)
        _np.copyto(result, x)
        return result
    return _np.broadcast_to(x, shape)


cdef object _fold_einsum(str subscripts, object a, object b):
    """A two-operand einsum of ndarrays by NumPy's method, or None."""
    form = _einsum_folds.get(subscripts)
    if form is None:
        form = _einsum_form(subscripts)
        if len(_einsum_folds) > 4096:
            _einsum_folds.clear()
        _einsum_folds[subscripts] = form
    kind = (<tuple>form)[0]
    if kind == FOLD_PRODUCT:
        return _fold_product(<tuple>form, a, b)
    if kind == FOLD_NONE or b.ndim != 2 or a.dtype is not b.dtype:
        return None
    if _identity_at.get(<size_t><PyObject*>b) is not b:
        return None
    n = b.shape[0]
    shape = a.shape
    cdef Py_ssize_t ndim = len(shape)
    if kind == FOLD_DIAGONAL:
        if ndim < 2 or shape[ndim - 2] != n or shape[ndim - 1] != n:
            return None
        return a.diagonal(0, ndim - 2, ndim - 1)
    if ndim < 1 or shape[ndim - 1] != n:
        return None
    return _diagonal_matrix(a, n)


cdef object _diagonal_matrix(object v, Py_ssize_t n):
    """The matrix (stack) with diagonal ``v``, zero elsewhere (NumPy's ``diag``)."""
    if v.ndim == 1:
        out = _np.zeros((n, n), v.dtype)
        out.ravel()[slice(None, None, n + 1)] = v       # a view: out is C-contiguous
        return out
    out = _np.zeros(v.shape + (n,), v.dtype)
    _np.einsum("...ii->...i", out)[...] = v
    return out


cdef object _fold_product(tuple form, object a, object b):
    """``a @ b`` with the operands transposed as the subscripts say (from the work at
    which BLAS threads are decided, with those threads)."""
    cdef Py_ssize_t n = form[1], m, k, kb, p
    cdef bint trans_a = form[2], trans_b = form[3]
    sa, sb = a.shape, b.shape
    if len(sa) != n or len(sb) != n:
        return None
    dtype = a.dtype
    if b.dtype is not dtype or n > 2 and sa[:n - 2] != sb[:n - 2]:
        return None
    m, k = (sa[n - 1], sa[n - 2]) if trans_a else (sa[n - 2], sa[n - 1])
    kb, p = (sb[n - 1], sb[n - 2]) if trans_b else (sb[n - 2], sb[n - 1])
    if k != kb:
        return None
    if trans_a:
        a = a.T if n == 2 else a.swapaxes(n - 1, n - 2)
    if trans_b:
        b = b.T if n == 2 else b.swapaxes(n - 1, n - 2)
    if 2 * m * k * p * (4 if _is_complex_dtype(dtype) else 1) < _TINY_MATMUL_WORK:
        return a @ b
    # NumPy's matmul with the BLAS threads its work calls for (tenpy_ad.blas.matmul), not
    # the einsum impl: measured on TRG (chi 16), the impl's path made the allocator hand
    # back and fault in again ~3.4 MB per forward pass after an eager backward
    return _fn("blas_matmul")(a, b)


cdef inline bint _is_complex_dtype(object dtype):
    if dtype is _float64_dtype:                                 # the common case at once
        return False
    code = _code_of_dtype.get(dtype)
    return code is not None and (code == 2 or code == 3)        # complex64, complex128


cdef tuple _einsum_form(str subscripts):
    """What a two-term einsum is, for the folds: ``(FOLD_PRODUCT, ndim, transpose a,
    transpose b)``, ``(FOLD_DIAGONAL,)``, ``(FOLD_EMBED,)`` or ``(FOLD_NONE,)``.  (No
    negative indices: the core is built without wraparound.)"""
    terms, out = subscripts.split("->")
    parts = terms.split(",")
    if len(parts) != 2:
        return (FOLD_NONE,)
    a, b = parts
    cdef Py_ssize_t n = len(a)
    if len(b) == 2 and n >= 1:
        p, q = b[0], b[1]
        if n >= 2 and a == a[:n - 2] + p + q and out in (a[:n - 2] + p, a[:n - 2] + q) \
                and p not in a[:n - 2] and q not in a[:n - 2]:
            return (FOLD_DIAGONAL,)
        if a[n - 1] == p and q not in a and out in (a + q, a[:n - 1] + q + p):
            return (FOLD_EMBED,)
    if n < 2 or len(b) != n or len(out) != n:
        return (FOLD_NONE,)
    z = out[:n - 2]
    i, k = out[n - 2], out[n - 1]
    ta, tb = a[n - 2:], b[n - 2:]
    j = ta[0] if ta[1] == i else ta[1]
    if a[:n - 2] != z or b[:n - 2] != z or len({i, j, k}) != 3 or {i, j, k} & set(z) \
            or set(ta) != {i, j} or set(tb) != {j, k}:
        return (FOLD_NONE,)
    return (FOLD_PRODUCT, n, ta == j + i, tb == k + j)

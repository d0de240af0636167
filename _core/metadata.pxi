# The metadata table: dtype and shape of every live node, in typed arrays indexed by the
# node id.  Ids are dense and recycled through a free list, so lookups are O(1) array reads
# and a released node gives its row back at once.

cdef int _grow_table() except -1:
    global _capacity, _dtype_codes, _ndims, _dims, _node_at, _free_ids
    cdef Py_ssize_t new_cap = 1024 if _capacity == 0 else 2 * _capacity
    cdef void* p
    p = realloc(_dtype_codes, new_cap * sizeof(dtype_code_t))
    if p == NULL: raise MemoryError()
    _dtype_codes = <dtype_code_t*>p
    p = realloc(_ndims, new_cap * sizeof(int8_t))
    if p == NULL: raise MemoryError()
    _ndims = <int8_t*>p
    p = realloc(_dims, new_cap * MAX_INLINE_RANK * sizeof(int64_t))
    if p == NULL: raise MemoryError()
    _dims = <int64_t*>p
    p = realloc(_node_at, new_cap * sizeof(PyObject*))
    if p == NULL: raise MemoryError()
    _node_at = <PyObject**>p
    p = realloc(_free_ids, new_cap * sizeof(node_id_t))
    if p == NULL: raise MemoryError()
    _free_ids = <node_id_t*>p
    _capacity = new_cap
    return 0


cdef node_id_t _meta_alloc() except -1:
    global _high_water, _live, _n_free
    cdef node_id_t nid
    if _n_free:
        _n_free -= 1
        nid = _free_ids[_n_free]
    else:
        if _high_water == _capacity:
            _grow_table()
        nid = _high_water
        _high_water += 1
    _live += 1
    _node_at[nid] = NULL
    return nid


cdef void _meta_release(node_id_t nid) noexcept:
    global _live, _n_free
    if _ndims[nid] > MAX_INLINE_RANK:
        _wide_shapes.pop(nid, None)
    _node_at[nid] = NULL
    _ndims[nid] = -1
    _free_ids[_n_free] = nid
    _n_free += 1
    _live -= 1


cdef int _meta_set(node_id_t nid, int dtype_code, tuple shape, Primitive prim) except -1:
    """Store the dtype and shape of node ``nid``, an output of ``prim`` (named in errors)."""
    cdef Py_ssize_t ndim = len(shape), k
    cdef int64_t d
    if dtype_code < 0 or dtype_code >= len(_dtype_objects):
        raise _errors["InternalError"](f"{prim.name}: unknown dtype code {dtype_code}")
    _dtype_codes[nid] = <dtype_code_t>dtype_code
    if ndim > MAX_INLINE_RANK:
        if ndim > 64:
            raise _errors["ShapeError"](
                f"{prim.name}: a result of rank {ndim} (shape {list(shape)}) exceeds "
                "NumPy's maximum of 64 dimensions")
        for item in shape:
            if item < 0 or item > _MAX_DIMENSION:
                _bad_dimension(shape, prim)
        _wide_shapes[nid] = shape
    else:
        try:
            for k in range(ndim):
                d = shape[k]
                if d < 0:
                    _bad_dimension(shape, prim)
                _dims[nid * MAX_INLINE_RANK + k] = d
        except OverflowError:            # a dimension beyond int64
            _bad_dimension(shape, prim)
    _ndims[nid] = <int8_t>ndim
    return 0


cdef int _bad_dimension(tuple shape, Primitive prim) except -1:
    """A negative dimension is a shape rule's bug; one beyond int64 is the caller's shape."""
    if any([item < 0 for item in shape]):
        raise _errors["InternalError"](
            f"{prim.name}: its shape rule gave a negative dimension in {list(shape)}")
    raise _errors["ShapeError"](
        f"{prim.name}: shape {list(shape)} has a dimension beyond NumPy's maximum "
        f"(2**63 - 1)")


cdef inline void _meta_copy(node_id_t dst, node_id_t src) noexcept:
    cdef int ndim = _ndims[src]
    _dtype_codes[dst] = _dtype_codes[src]
    _ndims[dst] = <int8_t>ndim
    if ndim > MAX_INLINE_RANK:
        _wide_shapes[dst] = _wide_shapes[src]
    else:
        memcpy(&_dims[dst * MAX_INLINE_RANK], &_dims[src * MAX_INLINE_RANK],
               ndim * sizeof(int64_t))


cdef inline bint _meta_same(node_id_t a, node_id_t b) noexcept:
    """Same dtype and shape."""
    cdef int ndim = _ndims[a]
    cdef int k
    if _dtype_codes[a] != _dtype_codes[b] or ndim != _ndims[b]:
        return False
    if ndim > MAX_INLINE_RANK:
        return _wide_shapes[a] == _wide_shapes[b]
    for k in range(ndim):
        if _dims[a * MAX_INLINE_RANK + k] != _dims[b * MAX_INLINE_RANK + k]:
            return False
    return True


cdef tuple _meta_shape(node_id_t nid):
    cdef int ndim = _ndims[nid]
    cdef int k
    if ndim > MAX_INLINE_RANK:
        return _wide_shapes[nid]
    if ndim == 0:
        return ()
    if ndim == 1:
        return (_dims[nid * MAX_INLINE_RANK],)
    if ndim == 2:
        return (_dims[nid * MAX_INLINE_RANK], _dims[nid * MAX_INLINE_RANK + 1])
    return tuple([_dims[nid * MAX_INLINE_RANK + k] for k in range(ndim)])


cdef hash_t _meta_fingerprint(node_id_t nid) noexcept:
    cdef int ndim = _ndims[nid]
    cdef int k
    cdef hash_t h = _mix(0x6d657461, <uint64_t>_dtype_codes[nid])
    h = _mix(h, <uint64_t>ndim)
    if ndim > MAX_INLINE_RANK:
        for item in _wide_shapes[nid]:
            h = _mix(h, <uint64_t>item)
    else:
        for k in range(ndim):
            h = _mix(h, <uint64_t>_dims[nid * MAX_INLINE_RANK + k])
    return h


def table_size() -> int:
    """Number of live rows in the metadata table (one per live traced node)."""
    return _live


def metadata_arrays() -> tuple:
    """Copies ``(dtype_codes, ndims, dims)`` of the table's typed arrays (for inspection
    and tests).  Rows ``[0, high_water)`` are valid; a released row has ``ndim == -1``."""
    if _high_water == 0:
        return (memoryview(b"").cast("b"), memoryview(b"").cast("b"), memoryview(b"").cast("q"))
    cdef dtype_code_t[::1] codes = <dtype_code_t[:_high_water]>_dtype_codes
    cdef int8_t[::1] ndims = <int8_t[:_high_water]>_ndims
    cdef int64_t[:, ::1] dims = <int64_t[:_high_water, :MAX_INLINE_RANK]>_dims
    return codes.copy(), ndims.copy(), dims.copy()

# Cotangents as the sweeps carry them.  ``None`` is a symbolic zero; a BlockCotangent is a
# cotangent that is zero outside one block, the other typed value: the transpose of a slice
# (``u[:, :k]`` leaves the columns from k on without a cotangent) gives one, the sweeps
# add them (graph_sweep.pxi, eager_backward.pxi), carry their block through elementwise
# rules, and make one dense only for a rule that needs a dense value.  The decompositions
# take them as they are (``Primitive.block_cotangents``) and read which triplets the loss
# uses from the block (tenpy_ad/ops/linalg/truncation.py), as no walk over the cotangents'
# producers could tell them in every mode.

cdef enum:
    BLOCKS_DENSE = 0      # the VJP gets dense cotangents (the default)
    BLOCKS_TAKEN = 1      # the VJP takes BlockCotangents (svd, eigh: they read the block)
    BLOCKS_LOCAL = 2      # each input cotangent is zero where the output's is (entrywise
                          # primitives; the ``elementwise`` ones are so by definition)

#: values of ``Primitive.block_cotangents`` (tenpy_ad.rules sets them)
BLOCK_COTANGENTS_TAKEN = BLOCKS_TAKEN
BLOCK_COTANGENTS_LOCAL = BLOCKS_LOCAL

cdef Py_ssize_t _MAX_BOXED_CONSTANT = 1 << 16   # constants whose zeros are looked for


@cython.final
cdef class BlockCotangent:
    """A cotangent of ``shape`` whose entries outside ``box`` (per axis ``(lo, hi)``; an
    empty axis is ``(size, 0)``) are zero: a typed value of the sweeps, as ``None`` is for
    zero.  It holds the entries of a block (``block`` at the slice ``spec``, the form a
    slice's transpose gives), or a dense value with a declared box, or both."""

    def __repr__(self):
        return (f"BlockCotangent({_dtype_objects[self.dtype_code].name}{list(self.shape)}, "
                f"box={list(self.box)})")


cdef BlockCotangent _new_block(tuple shape, tuple box, int code, object block, tuple spec,
                               object dense):
    cdef BlockCotangent g = BlockCotangent.__new__(BlockCotangent)
    g.shape, g.box, g.dtype_code = shape, box, code
    g.block, g.spec, g.dense = block, spec, dense
    return g


cdef inline bint _whole(tuple box, tuple shape):
    cdef Py_ssize_t i
    for i in range(len(shape)):
        if box[i] != (0, shape[i]):
            return False
    return True


cdef tuple _spec_box(tuple spec, tuple shape):
    """Per axis, the hull of the indices a normalised basic slice ``spec`` selects."""
    cdef list box = []
    cdef Py_ssize_t i, n, start, stop, step
    for i in range(len(shape)):
        start, stop, step = spec[i]
        n = len(range(start, stop, step))
        if n == 0:
            box.append((shape[i], 0))
        elif step > 0:
            box.append((start, start + step * (n - 1) + 1))
        else:
            box.append((start + step * (n - 1), start + 1))
    return tuple(box)


cdef tuple _hull(tuple a, tuple b):
    return tuple([(min(x[0], y[0]), max(x[1], y[1])) for x, y in zip(a, b)])


cdef tuple _meet(tuple a, tuple b, tuple shape):
    cdef list box = []
    cdef Py_ssize_t i, lo, hi
    for i in range(len(shape)):
        lo, hi = max(a[i][0], b[i][0]), min(a[i][1], b[i][1])
        box.append((lo, hi) if lo < hi else (shape[i], 0))
    return tuple(box)


cpdef object block_cotangent(object block, tuple shape, tuple spec):
    """The cotangent of ``shape`` that holds ``block`` at the basic slice ``spec`` (one
    normalised ``(start, stop, step)`` per axis, slice's params) and zeros elsewhere: the
    transpose of that slice, made dense (a ``scatter_slice``) only when a rule asks."""
    box = _spec_box(spec, shape)
    if _whole(box, shape) and all([s[2] == 1 for s in spec]):
        return block
    return _new_block(shape, box, code_of_value(block), block, spec, None)


cdef object _declared(object dense, tuple box):
    """``dense`` declared zero outside ``box`` (intersected with its own box, if typed)."""
    cdef BlockCotangent g
    if type(dense) is BlockCotangent:
        g = <BlockCotangent>dense
        box = _meet(g.box, box, g.shape)
        if box == g.box:
            return g
        return _new_block(g.shape, box, g.dtype_code, None, None, _dense_of(g))
    shape = shape_of(dense)
    if _whole(box, shape):
        return dense
    return _new_block(shape, box, code_of_value(dense), None, None, dense)


cdef object _dense_of(object g):
    """The dense value of a cotangent (a BlockCotangent's block scattered, once)."""
    cdef BlockCotangent b
    if type(g) is not BlockCotangent:
        return g
    b = <BlockCotangent>g
    if b.dense is None:
        b.dense = bind1(_scatter_slice_p, (b.shape, b.spec), b.block)
    return b.dense


cpdef object dense_cotangent(object g):
    """``g`` as a dense value (a BlockCotangent made dense; anything else as it is)."""
    return _dense_of(g)


cpdef object add_cotangents(object a, object b):
    """``a + b`` of two cotangents of one shape and dtype: blocks at one place add as
    blocks, other blocks as dense values declared zero outside the hull of their boxes."""
    cdef BlockCotangent x, y
    if type(a) is _ndarray and type(b) is _ndarray:
        return _np_add(a, b)            # the first-order eager backward: add's array_fn
    if type(a) is not BlockCotangent and type(b) is not BlockCotangent:
        return bind2(_add_p, None, a, b)
    if type(a) is not BlockCotangent or type(b) is not BlockCotangent:
        return bind2(_add_p, None, _dense_of(a), _dense_of(b))
    x, y = <BlockCotangent>a, <BlockCotangent>b
    if x.block is not None and y.block is not None and x.spec == y.spec:
        return _new_block(x.shape, x.box, x.dtype_code, bind2(_add_p, None, x.block, y.block),
                          x.spec, None)
    return _declared(bind2(_add_p, None, _dense_of(x), _dense_of(y)), _hull(x.box, y.box))


cpdef tuple nonzero_range(object g, Py_ssize_t axis, Py_ssize_t full):
    """``(lo, hi)``: the entries of cotangent ``g`` along ``axis`` outside ``lo:hi`` are
    zero, as its type shows (a BlockCotangent's box; ``(0, full)`` for a dense value,
    ``(full, 0)`` for None, the empty range, so that ranges combine by min/max)."""
    if g is None:
        return full, 0
    if type(g) is BlockCotangent:
        return (<BlockCotangent>g).box[axis]
    return 0, full


cpdef object cotangent_block(object g, Py_ssize_t axis, Py_ssize_t lo, Py_ssize_t hi,
                             Py_ssize_t full):
    """The dense entries ``lo:hi`` of cotangent ``g`` along ``axis`` (all of ``g`` for
    ``0:full``): a BlockCotangent's block itself when it is exactly that block."""
    cdef BlockCotangent b
    if g is None:
        return None
    if lo == 0 and hi == full:
        return _dense_of(g)
    shape = shape_of(g)
    spec = tuple([(lo, hi, 1) if i == axis else (0, shape[i], 1) for i in range(len(shape))])
    if type(g) is BlockCotangent:
        b = <BlockCotangent>g
        if b.block is not None and b.spec == spec:
            return b.block
    return bind1(_slice_p, spec, _dense_of(g))


cpdef object zero_where_constant(object value, object factor):
    """``value`` (a product with ``factor``), declared zero where ``factor`` is a traced
    constant whose entries are all zero: ``(u * mask)``'s cotangent of ``u`` shows the
    columns a constant mask leaves out, as a slice's transpose does.  Other factors (the
    values of eager tensors say nothing about their derivatives) leave it as it is."""
    if type(factor) is not TracedTensor or (<TracedTensor>factor).prim is not _constant_p:
        return value
    box = _constant_box(<ConstValue>(<TracedTensor>factor).params)
    return value if box is None else _declared(value, box)


cdef object _constant_box(ConstValue c):
    """The hull of the non-zero entries of a constant, per axis (None: it is not zero
    outside one; big constants are not looked at).  Kept on the constant."""
    if c._nonzero_box is None:
        c._nonzero_box = _nonzero_box(c.array)
    return c._nonzero_box or None


cdef object _nonzero_box(object array):
    cdef Py_ssize_t axis, ndim = array.ndim
    if ndim == 0 or array.size > _MAX_BOXED_CONSTANT:
        return ()
    nonzero = array != 0
    box = []
    for axis in range(ndim):
        others = tuple([i for i in range(ndim) if i != axis])
        found = _np.flatnonzero(nonzero.any(axis=others) if others else nonzero)
        box.append((int(found[0]), int(found[found.size - 1]) + 1) if found.size
                   else (array.shape[axis], 0))
    box = tuple(box)
    return () if _whole(box, array.shape) else box


cdef int _check_block(object c, TracedTensor primal, TracedTensor node) except -1:
    """A rule's BlockCotangent for ``primal``: of its dtype and shape, holding nodes."""
    cdef BlockCotangent b = <BlockCotangent>c
    inner = b.block if b.block is not None else b.dense
    if (type(inner) is not TracedTensor or b.dtype_code != _dtype_codes[primal.id]
            or b.shape != _meta_shape(primal.id)):
        raise _errors["InternalError"](
            f"the VJP rule of '{node.prim.name}' returned {c!r} holding {inner!r} for an "
            f"input of {primal.dtype.name}{list(primal.shape)}")
    return 0


# ------------------------------------------------ at a rule of the sweeps

cdef object _for_rule(Primitive prim, object ct):
    """The cotangent(s) as ``prim``'s VJP takes them: dense, unless it takes blocks."""
    if prim.block_cotangents == BLOCKS_TAKEN:
        return ct
    if type(ct) is BlockCotangent:
        return _dense_of(ct)
    if type(ct) is tuple:
        for c in <tuple>ct:
            if type(c) is BlockCotangent:
                return tuple([_dense_of(c) for c in <tuple>ct])
    return ct


cdef inline object _kept_box(Primitive prim, object ct):
    """The box the input cotangents of an entrywise primitive inherit from ``ct`` (None:
    ``ct`` is dense or ``prim`` mixes entries)."""
    if type(ct) is BlockCotangent and (prim.elementwise or
                                       prim.block_cotangents == BLOCKS_LOCAL):
        return (<BlockCotangent>ct).box
    return None


cdef object _boxed(object input_cts, tuple box):
    """The rule's input cotangents declared zero outside ``box``."""
    return tuple([None if c is None else _declared(c, box) for c in input_cts])

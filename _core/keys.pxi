# Primitives and interned graph nodes.
#
# A node is identified by (primitive, static params, output slot, identities of its inputs).
# The inputs are interned before the node, so this key is shallow: hashing and comparing it
# is O(arity), never a walk of the graph.  Building the same structure twice returns the
# same node object, so key equality is identity.
#
# The intern table is an open-addressing hash table in C (linear probing, backward-shift
# deletion) of borrowed node pointers: it holds nodes weakly, stores no key objects, and a
# node removes its own entry when it is freed.

cdef struct TableEntry:
    uint64_t hash
    PyObject* node          # NULL marks an empty entry

cdef extern from *:
    void __builtin_prefetch(const void* address) noexcept nogil

cdef TableEntry* _entries = NULL
cdef Py_ssize_t _entries_mask = -1      # capacity - 1 (capacity is a power of two)
cdef Py_ssize_t _entries_used = 0
cdef dict _errors = {}


def install_errors(dict classes) -> None:
    """Register the exception classes of tenpy_ad.errors (called once at import)."""
    _errors.update(classes)


# ---------------------------------------------------------------- fingerprints

cdef inline uint64_t _splitmix(uint64_t x) noexcept:
    x += 0x9E3779B97F4A7C15ULL
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL
    return x ^ (x >> 31)


cdef inline uint64_t _mix(uint64_t h, uint64_t v) noexcept:
    return _splitmix((h * 0x100000001B3ULL) ^ v)


cdef uint64_t _fp_bytes(const unsigned char[:] data) noexcept:
    """FNV-1a over the bytes, finished with splitmix (process-independent)."""
    cdef uint64_t h = 0xCBF29CE484222325ULL
    cdef Py_ssize_t i
    for i in range(data.shape[0]):
        h = (h ^ data[i]) * 0x100000001B3ULL
    return _splitmix(h)


cdef uint64_t _fp_double(double x) noexcept:
    cdef uint64_t bits
    memcpy(&bits, &x, sizeof(double))
    return _mix(0x666C6F6174, bits)


cdef uint64_t _fp_object(object obj) except? 0:
    """Deterministic 64-bit hash of a static parameter (not Python's salted ``hash``)."""
    cdef uint64_t h
    if obj is None:
        return 0x4E6F6E65
    if isinstance(obj, bool):
        return _mix(0x626F6F6C, <uint64_t>(1 if obj else 0))
    if isinstance(obj, int):
        if -(1 << 62) < obj < (1 << 62):
            return _mix(0x696E74, <uint64_t>(<int64_t>obj))
        return _mix(0x626967, _fp_bytes(str(obj).encode()))
    if isinstance(obj, float):
        return _fp_double(obj)
    if isinstance(obj, complex):
        return _mix(_fp_double(obj.real), _fp_double(obj.imag))
    if isinstance(obj, str):
        return _mix(0x737472, _fp_bytes((<str>obj).encode("utf-8")))
    if isinstance(obj, bytes):
        return _mix(0x6279746573, _fp_bytes(obj))
    if isinstance(obj, (tuple, list)):
        h = _mix(0x7475706C65, <uint64_t>len(obj))
        for item in obj:                # params nest a few levels at most
            h = _mix(h, _fp_object(item))
        return h
    fingerprint = getattr(obj, "fingerprint", None)
    if fingerprint is not None:
        return <uint64_t>fingerprint
    return _mix(0x72657072, _fp_bytes(repr(obj).encode("utf-8")))


def scalar_bits(x) -> tuple:
    """Bit patterns of a Python scalar, so that keys tell 0.0 from -0.0 and NaNs apart."""
    cdef double re, im
    cdef int64_t a, b
    if isinstance(x, complex):
        re, im = x.real, x.imag
        memcpy(&a, &re, sizeof(double))
        memcpy(&b, &im, sizeof(double))
        return (a, b)
    re = x
    memcpy(&a, &re, sizeof(double))
    return (a,)


# ---------------------------------------------------------------- primitives

@cython.no_gc    # primitives live for the whole process; keys holding them can then be
@cython.final    # untracked by Python's cycle collector, which keeps big graphs cheap for it
cdef class Primitive:
    """An operation of the graph, with its rules side by side.

    ``impl(params, *arrays)``            -> ndarray (or tuple for multi-output primitives)
    ``shape_rule(params, *inputs)``      -> ``(dtype_code, shape)`` (or a list of them)
    ``jvp(params, tangents, out, xs)``   -> output tangent (tuple for multi-output); tangents
                                            hold ``None`` for symbolic zeros
    ``vjp(params, ct, out, xs, active)`` -> tuple of input cotangents (``None`` = zero); only
                                            entries with ``active[i]`` true are used
    ``format_params(params)``            -> short text for program listings
    ``array_fn(*arrays)``                -> optional NumPy function used when params is None
    ``elementwise``                      -> output has the dtype and shape of input 0 (lets
                                            the traced fast path skip the shape rule)
    """
    cdef readonly str name
    cdef readonly int n_outputs
    cdef public object impl
    cdef public object shape_rule
    cdef public object jvp
    cdef public object vjp
    cdef public object format_params
    cdef public object params_fingerprint
    cdef public object array_fn
    cdef public bint elementwise
    cdef readonly uint64_t fingerprint

    def __init__(self, str name, int n_outputs=1):
        self.name = name
        self.n_outputs = n_outputs
        self.fingerprint = _mix(0x7072696D, _fp_bytes(name.encode("utf-8")))

    def __repr__(self):
        return f"Primitive({self.name!r})"


@cython.final
cdef class ConstValue:
    """A constant array as a static parameter, hashed and compared by dtype, shape and
    exact bytes: NaN payloads merge, ``0.0`` and ``-0.0`` stay apart, ``float32(1)``
    differs from ``float64(1)``.  Hash and equality run in C, so interning never executes
    Python code between looking a key up and inserting it (thread safety)."""
    cdef readonly object array
    cdef readonly uint64_t fingerprint
    cdef Py_hash_t _hash
    cdef bytes _bytes

    def __init__(self, array):
        array = _asarray(array).copy(order="C")
        array.flags.writeable = False
        self.array = array
        self._bytes = array.tobytes()
        cdef uint64_t header = _fp_object((array.dtype.str, array.shape))
        self.fingerprint = _mix(header, _fp_bytes(self._bytes))
        self._hash = <Py_hash_t>(self.fingerprint >> 2)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        if type(other) is not ConstValue:
            return NotImplemented
        cdef ConstValue o = <ConstValue>other
        return (self.fingerprint == o.fingerprint and self.array.dtype == o.array.dtype
                and self.array.shape == o.array.shape and self._bytes == o._bytes)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __reduce__(self):
        return (ConstValue, (self.array,))

    def __repr__(self):
        a = self.array
        if a.size <= 4:
            return _array2string(a, separator=",", precision=6).replace("\n", "")
        return f"<{a.dtype.name}{list(a.shape)} constant>"


@cython.final
cdef class Scalar:
    """A Python scalar as a static parameter, hashed and compared by its bit pattern:
    NaNs with one payload merge, ``0.0`` and ``-0.0`` stay apart (C-level hash/eq)."""
    cdef readonly object value
    cdef readonly tuple bits

    def __init__(self, value):
        self.value = value
        self.bits = scalar_bits(value)

    def __hash__(self):
        return hash(self.bits)

    def __eq__(self, other):
        if type(other) is not Scalar:
            return NotImplemented
        return type(self.value) is type((<Scalar>other).value) and \
            self.bits == (<Scalar>other).bits

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    @property
    def fingerprint(self):
        return _mix(_fp_object(type(self.value).__name__), _fp_object(self.bits))

    def __reduce__(self):
        return (Scalar, (self.value,))

    def __repr__(self):
        return repr(self.value)


# ---------------------------------------------------------------- nodes

@cython.no_gc
@cython.final
cdef class TracedTensor(ArraySurface):
    """A value in a traced graph: an interned node (primitive, params, inputs, slot).

    Created by ``tp.input`` and by every operation on traced values; it holds no data.
    Two TracedTensors built from the same structure are the same object.  ``shape`` and
    ``dtype`` live in the engine's metadata table, indexed by ``id``.
    """
    cdef readonly Primitive prim
    cdef readonly object params
    cdef readonly tuple inputs
    cdef readonly Py_ssize_t id
    cdef readonly int slot
    cdef readonly uint64_t fingerprint
    cdef uint64_t _hash            # hash of the key, locates the node's table entry
    cdef bint _interned
    cdef object __weakref__

    def __cinit__(self):
        self.id = -1

    def __init__(self, *args, **kwargs):
        raise TypeError("TracedTensor is not constructed directly; use tp.input(shape, dtype)")

    def __dealloc__(self):
        cdef TracedTensor item
        if self.id >= 0:
            if self._interned:
                _table_remove(self)
            _meta_release(self.id)
            _counters.nodes_released += 1
        if self.inputs is not None and len(self.inputs):
            # the inputs are often freed right after this node: start loading their table
            # entries now, so that the cache misses overlap with the rest of this work
            for item in self.inputs:
                if item._interned:
                    __builtin_prefetch(&_entries[item._hash & <uint64_t>_entries_mask])
            item = None        # hold no input past this point, or its free would nest
            _release_queue.append(self.inputs)
            self.inputs = None
            _drain_release_queue()

    @property
    def shape(self) -> tuple:
        return _meta_shape(self.id)

    @property
    def dtype(self):
        return _dtype_objects[_dtype_codes[self.id]]

    @property
    def dtype_code(self) -> int:
        return _dtype_codes[self.id]

    @property
    def ndim(self) -> int:
        return _ndims[self.id]

    @property
    def name(self):
        """The name given to ``tp.input`` (None for other nodes)."""
        if self.prim.name == "input":
            return self.params
        return None

    def same_meta(self, TracedTensor other) -> bool:
        """True when ``other`` has the same dtype and shape (a C comparison)."""
        return _meta_same(self.id, other.id)

    def same_shape(self, TracedTensor other) -> bool:
        return _meta_same_shape(self.id, other.id)

    def __repr__(self):
        dims = ",".join(str(d) for d in self.shape)
        label = self.prim.name if self.prim.name != "input" else f"input {self.params!r}"
        return f"TracedTensor({label}, {self.dtype.name}[{dims}])"

    def _concrete(self, what):
        raise _errors["ConcretizationError"](
            f"{what} needs a value, but {self!r} is a traced placeholder: it has no value "
            "until the graph runs. Use tp.evaluate / tp.compile, or eager mode (tp.tensor)."
        )

    def __bool__(self):
        self._concrete("bool()")

    def __float__(self):
        self._concrete("float()")

    def __int__(self):
        self._concrete("int()")

    def __index__(self):
        self._concrete("using a tensor as an index")

    def __array__(self, dtype=None, copy=None):
        self._concrete("conversion to a NumPy array")

    def __iter__(self):
        self._concrete("iteration")

    def __reduce__(self):
        raise TypeError("TracedTensor cannot be pickled; save a compiled Program instead")


cdef inline uint64_t _key_hash(Primitive prim, object params, int slot, tuple inputs) except? 0:
    cdef uint64_t h = _mix(<uint64_t><size_t><PyObject*>prim, <uint64_t>hash(params))
    h = _mix(h, <uint64_t>slot)
    for item in inputs:
        h = _mix(h, <uint64_t>(<TracedTensor?>item).id)
    return h


cdef inline bint _same_inputs(tuple a, tuple b) noexcept:
    cdef Py_ssize_t n = len(a), i
    if n != len(b):
        return False
    for i in range(n):
        if <PyObject*>a[i] != <PyObject*>b[i]:
            return False
    return True


cdef TracedTensor _lookup(Primitive prim, object params, int slot, tuple inputs,
                          uint64_t h):
    cdef Py_ssize_t i
    cdef TracedTensor node
    _counters.table_probes += 1
    if _entries == NULL:
        return None
    i = <Py_ssize_t>(h & <uint64_t>_entries_mask)
    while _entries[i].node != NULL:
        if _entries[i].hash == h:
            node = <TracedTensor>_entries[i].node
            if (node.prim is prim and node.slot == slot and _same_inputs(node.inputs, inputs)
                    and (node.params is params or node.params == params)):
                _counters.table_hits += 1
                return node
        i = (i + 1) & _entries_mask
    return None


cdef int _table_grow() except -1:
    global _entries, _entries_mask
    cdef Py_ssize_t old_capacity = _entries_mask + 1, capacity, i, j
    cdef TableEntry* old = _entries
    capacity = 1024 if old_capacity == 0 else 2 * old_capacity
    _entries = <TableEntry*>calloc(capacity, sizeof(TableEntry))
    if _entries == NULL:
        _entries = old
        raise MemoryError()
    _entries_mask = capacity - 1
    for i in range(old_capacity):
        if old[i].node != NULL:
            j = <Py_ssize_t>(old[i].hash & <uint64_t>_entries_mask)
            while _entries[j].node != NULL:
                j = (j + 1) & _entries_mask
            _entries[j] = old[i]
    free(old)
    return 0


cdef int _table_insert(TracedTensor node, uint64_t h) except -1:
    global _entries_used
    cdef Py_ssize_t i
    if 2 * (_entries_used + 1) > _entries_mask + 1:
        _table_grow()
    i = <Py_ssize_t>(h & <uint64_t>_entries_mask)
    while _entries[i].node != NULL:
        i = (i + 1) & _entries_mask
    _entries[i].hash = h
    _entries[i].node = <PyObject*>node
    _entries_used += 1
    node._hash = h
    node._interned = True
    return 0


cdef void _table_remove(TracedTensor node) noexcept:
    """Delete the node's entry, shifting later entries of the probe run back (no
    tombstones, so lookups stay short however many nodes come and go)."""
    global _entries_used
    cdef Py_ssize_t i = <Py_ssize_t>(node._hash & <uint64_t>_entries_mask), j, k
    while _entries[i].node != <PyObject*>node:
        if _entries[i].node == NULL:
            return                       # not present (cannot happen)
        i = (i + 1) & _entries_mask
    j = i
    while True:
        j = (j + 1) & _entries_mask
        if _entries[j].node == NULL:
            break
        k = <Py_ssize_t>(_entries[j].hash & <uint64_t>_entries_mask)
        # keep entry j where it is when its home k lies cyclically in (i, j]
        if (i < j and i < k <= j) or (i > j and (k > i or k <= j)):
            continue
        _entries[i] = _entries[j]
        i = j
    _entries[i].node = NULL
    _entries_used -= 1
    node._interned = False


cdef TracedTensor _new_node(Primitive prim, object params, tuple inputs, int slot):
    cdef TracedTensor node = TracedTensor.__new__(TracedTensor)
    node.prim = prim
    node.params = params
    node.inputs = inputs
    node.slot = slot
    node.id = _meta_alloc()
    _node_at[node.id] = <PyObject*>node
    return node


cdef int _set_fingerprint(TracedTensor node) except -1:
    cdef uint64_t fp = node.prim.fingerprint
    hook = node.prim.params_fingerprint
    fp = _mix(fp, _fp_object(node.params) if hook is None else <uint64_t>hook(node.params))
    fp = _mix(fp, <uint64_t>node.slot)
    fp = _mix(fp, _meta_fingerprint(node.id))
    for item in node.inputs:
        fp = _mix(fp, (<TracedTensor>item).fingerprint)
    node.fingerprint = fp
    return 0


cdef TracedTensor _finish_interned(TracedTensor node, uint64_t h):
    """Fingerprint ``node`` and enter it in the table, unless another thread entered the
    same key while this one ran Python code (fingerprint hooks): then that node wins.
    The final lookup and the insert run no Python code, so they are atomic under the GIL."""
    _set_fingerprint(node)
    cdef TracedTensor existing = _lookup(node.prim, node.params, node.slot, node.inputs, h)
    if existing is not None:
        return existing
    _table_insert(node, h)
    _counters.nodes_interned += 1
    return node


cpdef TracedTensor intern(Primitive prim, object params, tuple inputs, int dtype_code,
                          tuple shape):
    """The node for ``prim(params)(*inputs)`` with the given output dtype code and shape."""
    cdef uint64_t h = _key_hash(prim, params, 0, inputs)
    cdef TracedTensor node = _lookup(prim, params, 0, inputs, h)
    if node is not None:
        return node
    node = _new_node(prim, params, inputs, 0)
    _meta_set(node.id, dtype_code, shape)
    return _finish_interned(node, h)


cpdef TracedTensor intern_like(Primitive prim, object params, tuple inputs,
                               TracedTensor like):
    """Like ``intern``, with the output dtype and shape copied from ``like``."""
    cdef uint64_t h = _key_hash(prim, params, 0, inputs)
    cdef TracedTensor node = _lookup(prim, params, 0, inputs, h)
    if node is not None:
        return node
    node = _new_node(prim, params, inputs, 0)
    _meta_copy(node.id, like.id)
    return _finish_interned(node, h)


cpdef tuple intern_multi(Primitive prim, object params, tuple inputs, list avals):
    """All output nodes of a multi-output primitive; ``avals[k] = (dtype_code, shape)``."""
    cdef Py_ssize_t slot
    cdef uint64_t h
    cdef TracedTensor node
    outputs = []
    for slot in range(len(avals)):
        h = _key_hash(prim, params, slot, inputs)
        node = _lookup(prim, params, slot, inputs, h)
        if node is None:
            node = _new_node(prim, params, inputs, slot)
            code, shape = avals[slot]
            _meta_set(node.id, code, shape)
            node = _finish_interned(node, h)
        outputs.append(node)
    return tuple(outputs)


cpdef TracedTensor unique_node(Primitive prim, object params, int dtype_code, tuple shape):
    """A node that never merges with another (inputs; anything non-deterministic)."""
    cdef TracedTensor node = _new_node(prim, params, (), 0)
    _meta_set(node.id, dtype_code, shape)
    _set_fingerprint(node)
    _counters.unique_nodes += 1
    return node


def intern_table_size() -> int:
    """Number of nodes in the intern table."""
    return _entries_used


cdef tuple _group_key(TracedTensor node):
    """Identifies the operation behind a node, whatever its output slot."""
    return (node.prim, node.params) + tuple([id(x) for x in node.inputs])


# ---------------------------------------------------------------- structural equality

cdef bint _shallow_equal(TracedTensor x, TracedTensor y) except -1:
    if x.fingerprint != y.fingerprint or x.slot != y.slot:
        return False
    if x.prim is not y.prim and x.prim.name != y.prim.name:
        return False
    if len(x.inputs) != len(y.inputs) or not _meta_same(x.id, y.id):
        return False
    return bool(x.params == y.params)


def structurally_equal(TracedTensor a, TracedTensor b) -> bool:
    """Whether two graphs have the same structure, for nodes of different origins.

    Nodes built in this process are interned, so for them ``a is b`` already answers the
    question.  This comparison is for graphs that were not built against each other (a
    program loaded from disk, inputs created separately): inputs match by name, dtype and
    shape; other nodes by primitive, params, slot, metadata and inputs.  Each pair of nodes
    is compared at most once (memoised) with an explicit stack, so the cost is linear in
    the size of the graphs even when they share subgraphs heavily.
    """
    cdef dict memo = {}
    cdef list stack = [(a, b, False)]
    cdef TracedTensor x, y
    cdef Py_ssize_t i
    while stack:
        x, y, ready = stack.pop()
        pair = (x.id, y.id)
        if pair in memo:
            continue
        if not ready:
            _counters.equality_calls += 1
            if x is y:
                memo[pair] = True
                continue
            if not _shallow_equal(x, y):
                return False       # every pair on the stack is needed for a == b
            stack.append((x, y, True))
            for i in range(len(x.inputs)):
                stack.append((x.inputs[i], y.inputs[i], False))
        else:
            memo[pair] = True      # all input pairs were found equal (else we returned)
    return True


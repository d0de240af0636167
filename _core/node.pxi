# Graph nodes.  A TracedTensor *is* the interned node (primitive, static params, output slot,
# inputs): building the same structure twice returns the same object, so key equality is
# identity (intern_table.pxi).  Its dtype and shape live in the metadata table, its
# fingerprint hashes the whole subgraph (fingerprints.pxi).

cdef extern from *:
    void __builtin_prefetch(const void* address) noexcept nogil


@cython.no_gc
@cython.final
cdef class TracedTensor(ArraySurface):
    """A value in a traced graph: an interned node (primitive, params, inputs, slot).

    Created by ``tp.input`` and by every operation on traced values; it holds no data.
    Two TracedTensors built from the same structure are the same object.  ``shape`` and
    ``dtype`` live in the engine's metadata table, indexed by ``id``.
    """

    def __cinit__(self):
        self.id = -1

    def __init__(self, *args, **kwargs):
        raise _errors["ArgumentError"](
            "TracedTensor is not constructed directly; use tp.input(shape, dtype)")

    def __dealloc__(self):
        global _forwarding
        cdef TracedTensor item
        if self._current is not None:
            _forwarding -= 1                 # (traced_writes.pxi)
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
                    __builtin_prefetch(&_entries[item._hash & <hash_t>_entries_mask])
            item = None        # hold no input past this point, or its free would nest
            _release_queue.append(self.inputs)
            self.inputs = None
            _drain_release_queue()

    @property
    def prim(self) -> Primitive:
        """The primitive that computes this node."""
        return self.prim

    @property
    def params(self):
        """The primitive's static parameters (axes, shapes, subscripts, ...)."""
        return self.params

    @property
    def inputs(self):
        """The operand nodes (a tuple of TracedTensors; None once the node is released)."""
        return self.inputs

    @property
    def id(self) -> int:
        """The node's row in the metadata table (dtype and shape): unique among live nodes."""
        return self.id

    @property
    def slot(self) -> int:
        """Which output of a multi-output primitive this node is (0 otherwise)."""
        return self.slot

    @property
    def fingerprint(self) -> int:
        """A structural hash of the whole subgraph, stable across processes (the key of
        compiled programs and of ``tp.jit``'s cache)."""
        return self.fingerprint

    @property
    def shape(self) -> tuple:
        """The shape, as a tuple of ints (known when the node is built)."""
        return _meta_shape(self.id)

    @property
    def dtype(self):
        """The NumPy dtype (known when the node is built)."""
        return _dtype_objects[_dtype_codes[self.id]]

    @property
    def dtype_code(self) -> int:
        """The engine's code of ``dtype`` (``tenpy_ad.dtypes``)."""
        return _dtype_codes[self.id]

    @property
    def ndim(self) -> int:
        """The number of axes."""
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

    def __repr__(self):
        dims = ",".join(str(d) for d in self.shape)
        label = self.prim.name
        if label == "input" and self.params is not None:
            label = f"input {self.params!r}"          # an unnamed input is just "input"
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

    def __complex__(self):
        self._concrete("complex()")

    def __index__(self):
        self._concrete("using a tensor as an index")

    def __array__(self, dtype=None, copy=None):
        self._concrete("conversion to a NumPy array" + conversion_hint(" (", ")"))

    def __format__(self, spec):
        if spec:
            self._concrete("formatting with a format spec")
        return repr(self)

    def __reduce__(self):
        raise _errors["ArgumentError"](
            "pickle: a TracedTensor cannot be pickled; save a compiled Program instead")


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
    cdef hash_t fp = node.prim.fingerprint
    fp = _mix(fp, _fp_object(node.params))
    fp = _mix(fp, <hash_t>node.slot)
    fp = _mix(fp, _meta_fingerprint(node.id))
    for item in node.inputs:
        fp = _mix(fp, (<TracedTensor>item).fingerprint)
    node.fingerprint = fp
    return 0

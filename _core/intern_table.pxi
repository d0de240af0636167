# The intern table: nodes keyed by (primitive, params, slot, identities of the inputs).
#
# The inputs are interned before the node, so this key is shallow: hashing and comparing it
# is O(arity), never a walk of the graph.  Building the same structure twice returns the
# same node object, so key equality is identity.
#
# The table is open addressing in C (linear probing, backward-shift deletion) over borrowed
# node pointers (``TableEntry`` in _core.pxd): it holds nodes weakly, stores no key objects,
# and a node removes its own entry when it is freed.

# Operands that in-place writes forwarded are taken at their current value when user code
# builds a node (traced_writes.pxi).

cdef tuple _resolved(tuple inputs):
    """``inputs`` with each forwarded node replaced by the node of its current value."""
    cdef Py_ssize_t i, n = len(inputs)
    cdef list items = None
    cdef TracedTensor item
    for i in range(n):
        item = <TracedTensor?>inputs[i]
        if item._current is not None:
            if items is None:
                items = list(inputs)
            items[i] = _value_node(item)
    return inputs if items is None else tuple(items)


cdef object _EXPIRED = object()     # the value of a node written inside a finished trace


cdef object _value_node(TracedTensor node):
    """The node holding the value of the forwarded ``node``."""
    if node._current is _EXPIRED:
        raise _errors["UnsupportedError"](
            f"{node!r} was written in place inside a traced function (tp.jit, tp.grad, "
            "...) that has returned: its value is that trace's, and it cannot be used "
            "after it (return it from the function instead)")
    return node._current


cdef inline tuple _user_inputs(tuple inputs):
    """The operands of a node user code builds (resolved), or of one the engine builds."""
    if _forwarding == 0 or _graph_mode:
        return inputs
    return _resolved(inputs)


cdef inline void _count_hit(TracedTensor node) noexcept:
    """An intern hit: ``node`` is also another expression's value now (the write
    machinery's own recomputations of views do not count)."""
    if not _views_suspended:
        node._hits += 1


cdef inline hash_t _key_hash(Primitive prim, object params, int slot, tuple inputs) except? 0:
    cdef hash_t h = _mix(<hash_t><size_t><PyObject*>prim, <hash_t>hash(params))
    h = _mix(h, <hash_t>slot)
    for item in inputs:
        h = _mix(h, <hash_t>(<TracedTensor?>item).id)
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
                          hash_t h):
    cdef Py_ssize_t i
    cdef TracedTensor node
    _counters.table_probes += 1
    if _entries == NULL:
        return None
    i = <Py_ssize_t>(h & <hash_t>_entries_mask)
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
            j = <Py_ssize_t>(old[i].hash & <hash_t>_entries_mask)
            while _entries[j].node != NULL:
                j = (j + 1) & _entries_mask
            _entries[j] = old[i]
    free(old)
    return 0


cdef int _table_insert(TracedTensor node, hash_t h) except -1:
    global _entries_used
    cdef Py_ssize_t i
    if 2 * (_entries_used + 1) > _entries_mask + 1:
        _table_grow()
    i = <Py_ssize_t>(h & <hash_t>_entries_mask)
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
    cdef Py_ssize_t i = <Py_ssize_t>(node._hash & <hash_t>_entries_mask), j, k
    while _entries[i].node != <PyObject*>node:
        if _entries[i].node == NULL:
            return                       # not present (cannot happen)
        i = (i + 1) & _entries_mask
    j = i
    while True:
        j = (j + 1) & _entries_mask
        if _entries[j].node == NULL:
            break
        k = <Py_ssize_t>(_entries[j].hash & <hash_t>_entries_mask)
        # keep entry j where it is when its home k lies cyclically in (i, j]
        if (i < j and i < k <= j) or (i > j and (k > i or k <= j)):
            continue
        _entries[i] = _entries[j]
        i = j
    _entries[i].node = NULL
    _entries_used -= 1
    node._interned = False


cdef TracedTensor _finish_interned(TracedTensor node, hash_t h):
    """Fingerprint ``node`` and enter it in the table, unless another thread entered the
    same key while this one ran Python code (fingerprinting params such as a checkpoint
    region): then that node wins.
    The final lookup and the insert run no Python code, so they are atomic under the GIL."""
    _set_fingerprint(node)
    cdef TracedTensor existing = _lookup(node.prim, node.params, node.slot, node.inputs, h)
    if existing is not None:
        _count_hit(existing)
        return existing
    _table_insert(node, h)
    _counters.nodes_interned += 1
    return node


cpdef TracedTensor intern(Primitive prim, object params, tuple inputs, object aval):
    """The node for ``prim(params)(*inputs)``.  ``aval`` gives its dtype and shape: a
    TracedTensor whose metadata row is copied (elementwise primitives: their first
    operand), or ``(dtype_code, shape)``."""
    inputs = _user_inputs(inputs)
    cdef hash_t h = _key_hash(prim, params, 0, inputs)
    cdef TracedTensor node = _lookup(prim, params, 0, inputs, h)
    if node is not None:
        _count_hit(node)
        return node
    node = _new_node(prim, params, inputs, 0)
    if type(aval) is TracedTensor:
        _meta_copy(node.id, (<TracedTensor>aval).id)
    else:
        code, shape = aval
        _meta_set(node.id, code, shape, prim)
    return _finish_interned(node, h)


cpdef tuple intern_multi(Primitive prim, object params, tuple inputs, list avals):
    """All output nodes of a multi-output primitive; ``avals[k] = (dtype_code, shape)``."""
    cdef Py_ssize_t slot
    cdef hash_t h
    cdef TracedTensor node
    outputs = []
    inputs = _user_inputs(inputs)
    for slot in range(len(avals)):
        h = _key_hash(prim, params, slot, inputs)
        node = _lookup(prim, params, slot, inputs, h)
        if node is not None:
            _count_hit(node)
            if node._current is not None and not _graph_mode:
                raise _errors["UnsupportedError"](
                    f"{prim.name} of these operands was computed before and its output "
                    f"{slot} written in place since: the outputs are one operation's, so "
                    "this one cannot be made again; copy the first result before writing "
                    "into it (r = r.copy())")
        else:
            node = _new_node(prim, params, inputs, slot)
            code, shape = avals[slot]
            _meta_set(node.id, code, shape, prim)
            node = _finish_interned(node, h)
        outputs.append(node)
    return tuple(outputs)


cpdef tuple siblings(TracedTensor node):
    """All outputs of ``node``'s multi-output operation, as ``intern_multi`` gives them; the
    shape rule runs only when a sibling was dropped and has to be made again."""
    cdef Primitive prim = node.prim
    cdef Py_ssize_t slot
    cdef hash_t h
    cdef TracedTensor found
    params, inputs, avals = node.params, node.inputs, None
    outputs = []
    for slot in range(prim.n_outputs):
        h = _key_hash(prim, params, slot, inputs)
        found = _lookup(prim, params, slot, inputs, h)
        if found is None:
            if avals is None:
                avals = _shape_rule_of(prim, params, inputs)
            found = _new_node(prim, params, inputs, slot)
            code, shape = avals[slot]
            _meta_set(found.id, code, shape, prim)
            found = _finish_interned(found, h)
        outputs.append(found)
    return tuple(outputs)


cdef TracedTensor _unique(Primitive prim, object params, tuple inputs, int slot,
                          TracedTensor like):
    """A node ``prim(params)(*inputs)`` (output ``slot``) of ``like``'s dtype and shape
    that never merges with another (not in the table)."""
    cdef TracedTensor node = _new_node(prim, params, inputs, slot)
    _meta_copy(node.id, like.id)
    _set_fingerprint(node)
    _counters.unique_nodes += 1
    return node


cdef inline TracedTensor _unique_clone(TracedTensor node):
    """A unique node computing what ``node`` computes: a traced view whose interned node
    is also another expression's value, or another view's (eager.pxi's
    ``register_view``)."""
    return _unique(node.prim, node.params, node.inputs, node.slot, node)


cpdef TracedTensor unique_node(Primitive prim, object params, int dtype_code, tuple shape):
    """A node that never merges with another (inputs; anything non-deterministic)."""
    cdef TracedTensor node = _new_node(prim, params, (), 0)
    _meta_set(node.id, dtype_code, shape, prim)
    _set_fingerprint(node)
    _counters.unique_nodes += 1
    return node


def intern_table_size() -> int:
    """Number of nodes in the intern table."""
    return _entries_used

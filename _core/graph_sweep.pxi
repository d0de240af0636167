# Traversals of traced graphs: topological order, and the forward (JVP) and reverse (VJP)
# sweeps.  All loops are iterative; per-call scratch arrays are indexed by node id (ids are
# dense), so the sweeps are thread-safe and O(nodes + edges).

cdef list _toposort(list outputs, uint8_t* state):
    """Nodes reachable from ``outputs``, inputs before users.  ``state[id]`` ends at 2 for
    every node in the order (the caller allocates ``state`` zeroed, sized to the table)."""
    cdef list order = []
    cdef list stack = []
    cdef TracedTensor node, item
    cdef Py_ssize_t k
    for k in range(len(outputs) - 1, -1, -1):
        stack.append(<TracedTensor?>outputs[k])
    while stack:
        node = <TracedTensor>stack[len(stack) - 1]
        if state[node.id] == 0:
            state[node.id] = 1
            for k in range(len(node.inputs) - 1, -1, -1):
                item = <TracedTensor>node.inputs[k]
                if state[item.id] == 0:
                    stack.append(item)
        else:
            stack.pop()
            if state[node.id] == 1:
                state[node.id] = 2
                order.append(node)
    _counters.nodes_visited += len(order)
    return order


cdef uint8_t* _scratch_state() except NULL:
    cdef uint8_t* state = <uint8_t*>calloc(_high_water + 1, sizeof(uint8_t))
    if state == NULL:
        raise MemoryError()
    return state


def toposort(outputs) -> list:
    """All nodes that ``outputs`` depend on, in an order where inputs precede users."""
    cdef uint8_t* state = _scratch_state()
    try:
        return _toposort(list(outputs), state)
    finally:
        free(state)


cdef Py_ssize_t* _local_index(list order) except NULL:
    """Map node id -> position in ``order`` (entries for other ids are garbage)."""
    cdef Py_ssize_t* index = <Py_ssize_t*>malloc((_high_water + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t i
    if index == NULL:
        raise MemoryError()
    for i in range(len(order)):
        index[(<TracedTensor>order[i]).id] = i
    return index


# precomputed ``active`` masks for rules with up to three inputs
cdef tuple _ACTIVE_MASKS = tuple(
    tuple(bool(mask >> j & 1) for j in range(n)) for n in range(4) for mask in range(1 << n)
)
cdef int[4] _MASK_OFFSET = [0, 1, 3, 7]


cdef inline tuple _active_mask(uint8_t* active, Py_ssize_t* index, tuple inputs):
    cdef Py_ssize_t n = len(inputs), j
    cdef int mask = 0
    if n <= 3:
        for j in range(n):
            if active[index[(<TracedTensor>inputs[j]).id]]:
                mask |= 1 << j
        return <tuple>_ACTIVE_MASKS[_MASK_OFFSET[n] + mask]
    return tuple([bool(active[index[(<TracedTensor>x).id]]) for x in inputs])


cdef _check_cotangent(object ct, TracedTensor primal, TracedTensor node, str what):
    if type(ct) is not TracedTensor or not _meta_same((<TracedTensor>ct).id, primal.id):
        raise _errors["InternalError"](
            f"the {what} rule of '{node.prim.name}' returned {ct!r} for an input of "
            f"{primal.dtype.name}{list(primal.shape)}")


def vjp_sweep(list outputs, list cotangents, list wrt, object accumulate, object siblings):
    """Reverse sweep over the graph of ``outputs``.

    Returns the cotangent node of each ``wrt`` node (``None`` where it is a symbolic zero).
    ``accumulate(a, b)`` adds two cotangents; ``siblings(node)`` returns all outputs of a
    multi-output node.  Only nodes that depend on some ``wrt`` node are visited by rules.
    """
    cdef uint8_t* state = _scratch_state()
    cdef Py_ssize_t* index = NULL
    cdef uint8_t* active = NULL
    cdef uint8_t* is_wrt = NULL
    cdef list order, cts
    cdef Py_ssize_t n, i, j, k
    cdef TracedTensor node, item
    cdef dict groups = None
    try:
        order = _toposort(outputs, state)
        n = len(order)
        index = _local_index(order)
        active = <uint8_t*>calloc(n + 1, sizeof(uint8_t))
        is_wrt = <uint8_t*>calloc(n + 1, sizeof(uint8_t))
        if active == NULL or is_wrt == NULL:
            raise MemoryError()
        for item in wrt:
            if state[item.id] == 2:
                is_wrt[index[item.id]] = 1
        # forward: which nodes depend on a wrt node
        for i in range(n):
            if is_wrt[i]:
                active[i] = 1
                continue
            node = <TracedTensor>order[i]
            for item in node.inputs:
                if active[index[item.id]]:
                    active[i] = 1
                    break
            if active[i] and node.prim.n_outputs > 1:
                if groups is None:
                    groups = {}
                groups.setdefault(_group_key(node), []).append(i)
        cts = [None] * n
        for k in range(len(outputs)):
            if cotangents[k] is None:
                continue
            i = index[(<TracedTensor>outputs[k]).id]
            cts[i] = cotangents[k] if cts[i] is None else accumulate(cts[i], cotangents[k])
        # reverse
        for i in range(n - 1, -1, -1):
            if not active[i]:
                continue
            node = <TracedTensor>order[i]
            if not node.inputs:
                continue
            if node.prim.n_outputs > 1:
                members = groups[_group_key(node)]
                if members[0] != i:
                    continue          # the group's rule runs at its earliest member
                ct = [None] * node.prim.n_outputs
                any_ct = False
                for j in members:
                    if cts[j] is not None:
                        ct[(<TracedTensor>order[j]).slot] = cts[j]
                        any_ct = True
                        if not is_wrt[j]:
                            cts[j] = None
                if not any_ct:
                    continue
                ct = tuple(ct)
                out = tuple(siblings(node))
            else:
                ct = cts[i]
                if ct is None:
                    continue
                if not is_wrt[i]:
                    cts[i] = None     # released as the sweep passes
                out = node
            mask = _active_mask(active, index, node.inputs)
            _counters.rules_applied += 1
            _counters.nodes_visited += 1
            input_cts = node.prim.vjp(node.params, ct, out, node.inputs, mask)
            for j in range(len(node.inputs)):
                if not mask[j]:
                    continue
                c = input_cts[j]
                if c is None:
                    continue
                item = <TracedTensor>node.inputs[j]
                _check_cotangent(c, item, node, "VJP")
                k = index[item.id]
                cts[k] = c if cts[k] is None else accumulate(cts[k], c)
        return [cts[index[item.id]] if state[item.id] == 2 else None for item in wrt]
    finally:
        free(state)
        free(index)
        free(active)
        free(is_wrt)


def jvp_sweep(list outputs, list wrt, list tangents, object siblings):
    """Forward sweep: the tangent node of each output (``None`` = symbolic zero)."""
    cdef uint8_t* state = _scratch_state()
    cdef Py_ssize_t* index = NULL
    cdef list order, tans
    cdef Py_ssize_t n, i, j, k
    cdef TracedTensor node, item
    cdef dict group_results = None
    try:
        order = _toposort(outputs, state)
        n = len(order)
        index = _local_index(order)
        tans = [None] * n
        seeded = set()
        for k in range(len(wrt)):
            item = <TracedTensor?>wrt[k]
            if state[item.id] == 2 and tangents[k] is not None:
                i = index[item.id]
                tans[i] = tangents[k]
                seeded.add(i)
        for i in range(n):
            node = <TracedTensor>order[i]
            if not node.inputs or i in seeded:
                continue
            in_tans = tuple([tans[index[(<TracedTensor>x).id]] for x in node.inputs])
            for t in in_tans:
                if t is not None:
                    break
            else:
                continue
            if node.prim.n_outputs > 1:
                gkey = _group_key(node)
                if group_results is None:
                    group_results = {}
                result = group_results.get(gkey)
                if result is None:
                    _counters.rules_applied += 1
                    outs = tuple(siblings(node))
                    result = tuple(node.prim.jvp(node.params, in_tans, outs, node.inputs))
                    group_results[gkey] = result
                tans[i] = result[node.slot]
            else:
                _counters.rules_applied += 1
                tans[i] = node.prim.jvp(node.params, in_tans, node, node.inputs)
            _counters.nodes_visited += 1
            if tans[i] is not None:
                _check_cotangent(tans[i], node, node, "JVP")
        return [tans[index[(<TracedTensor>o).id]] for o in outputs]
    finally:
        free(state)
        free(index)


cdef list _as_late_as_possible(list order):
    """Reorder a topological ``order`` by "as late as possible" levels: a node's level is
    one less than the lowest level among its users (outputs are at the top level), and
    nodes are stably sorted by level.  Values then live only as long as their uses need;
    in particular the recomputation of a checkpointed region, whose users all belong to
    the backward pass of its step, is scheduled right before that step's backward pass
    instead of ahead of time."""
    cdef Py_ssize_t n = len(order), i, k, lowest
    cdef Py_ssize_t* index = _local_index(order)
    cdef Py_ssize_t* level = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t* count = NULL
    cdef Py_ssize_t* start = NULL
    cdef TracedTensor node, item
    cdef list result
    try:
        if level == NULL:
            raise MemoryError()
        for i in range(n):
            level[i] = n                      # unused values sit at the top level
        lowest = n
        for i in range(n - 1, -1, -1):        # users come later in a topological order
            node = <TracedTensor>order[i]
            for item in node.inputs:
                k = index[item.id]
                if level[i] - 1 < level[k]:
                    level[k] = level[i] - 1
                    if level[k] < lowest:
                        lowest = level[k]
        count = <Py_ssize_t*>calloc(n - lowest + 2, sizeof(Py_ssize_t))
        start = <Py_ssize_t*>calloc(n - lowest + 2, sizeof(Py_ssize_t))
        if count == NULL or start == NULL:
            raise MemoryError()
        for i in range(n):                     # counting sort, stable
            count[level[i] - lowest] += 1
        for k in range(1, n - lowest + 1):
            start[k] = start[k - 1] + count[k - 1]
        result = [None] * n
        for i in range(n):
            k = level[i] - lowest
            result[start[k]] = order[i]
            start[k] += 1
        return result
    finally:
        free(index)
        free(level)
        free(count)
        free(start)


def schedule(list outputs, list inputs, Primitive input_prim, Primitive constant_prim):
    """The compiler's pass over a graph (see tenpy_ad.program.Program).

    Returns a dict: per buffer (one per node, in topological order) its ``metadata``
    ``(dtype code, shape)`` and the constant ``template``; per instruction the ``prims``,
    ``params``, ``in_slots`` and ``out_slots`` (a buffer index, or ``(slot, buffer)``
    pairs for multi-output primitives, whose siblings share one instruction); the
    ``listing`` rows; the buffers of ``inputs`` (-1 if unused) and ``outputs``; and
    ``unbound``, the first input placeholder that is not in ``inputs`` (or None).
    """
    cdef uint8_t* state = _scratch_state()
    cdef Py_ssize_t* index = NULL
    cdef list order, metadata, template, prims, params, in_slots, out_slots, listing
    cdef Py_ssize_t n, k, j, m
    cdef TracedTensor node, item
    cdef tuple ins
    cdef object value
    cdef dict groups = {}
    try:
        order = _as_late_as_possible(_toposort(outputs, state))
        n = len(order)
        index = _local_index(order)
        for item in inputs:
            if state[item.id] == 2:
                state[item.id] = 3                 # a bound input
        metadata, template = [None] * n, [None] * n
        prims, params, in_slots, out_slots, listing = [], [], [], [], []
        unbound = None
        for k in range(n):
            node = <TracedTensor>order[k]
            metadata[k] = (_dtype_codes[node.id], _meta_shape(node.id))
            if node.prim is input_prim:
                if state[node.id] != 3 and unbound is None:
                    unbound = node
                listing.append(([k], input_prim, node.params, ()))
                continue
            if node.prim is constant_prim:
                template[k] = node.params.array
                listing.append(([k], constant_prim, node.params, ()))
                continue
            m = len(node.inputs)
            ins = PyTuple_New(m)
            for j in range(m):
                value = index[(<TracedTensor>node.inputs[j]).id]
                Py_INCREF(value)
                PyTuple_SET_ITEM(ins, j, value)
            if node.prim.n_outputs > 1:
                key = (node.prim, node.params) + ins
                members = groups.get(key)
                if members is not None:
                    (<list>members).append((node.slot, k))
                    continue
                members = groups[key] = [(node.slot, k)]     # later siblings join it
                target = members
            else:
                target = k
                members = [(0, k)]
            prims.append(node.prim)
            params.append(node.params)
            in_slots.append(ins)
            out_slots.append(target)
            listing.append((members, node.prim, node.params, ins))
        return {"metadata": metadata, "template": template, "prims": prims,
                "params": params, "in_slots": in_slots,
                "out_slots": [o if type(o) is int else tuple(o) for o in out_slots],
                "listing": listing, "unbound": unbound,
                "inputs": [index[(<TracedTensor>x).id] if state[(<TracedTensor>x).id] == 3
                           else -1 for x in inputs],
                "outputs": [index[(<TracedTensor>x).id] for x in outputs]}
    finally:
        free(state)
        free(index)

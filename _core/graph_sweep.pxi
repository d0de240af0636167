# The derivative sweeps over traced graphs: reverse (VJP) and forward (JVP).  Both start
# from a GraphWalk (graph_walk.pxi), apply each rule once per node (once per sibling group
# for multi-output primitives) and treat ``None`` as a symbolic zero, so nodes that no
# derivative reaches cost no rule call.  The reverse sweep carries BlockCotangents
# (cotangents.pxi) as it carries zeros.

cdef inline tuple _active_mask(uint8_t* marks, Py_ssize_t* index, tuple inputs):
    """Which inputs depend on a wrt node (shared tuples for up to three inputs)."""
    cdef Py_ssize_t n = len(inputs), j
    cdef int mask = 0
    if n <= 3:
        for j in range(n):
            if marks[index[(<TracedTensor>inputs[j]).id]] & DEPENDS_ON_WRT:
                mask |= 1 << j
        return <tuple>_ACTIVE_MASKS[_MASK_OFFSET[n] + mask]
    return tuple([bool(marks[index[(<TracedTensor>x).id]] & DEPENDS_ON_WRT) for x in inputs])


cdef int _check_cotangent(object ct, TracedTensor primal, TracedTensor node,
                          str what) except -1:
    if type(ct) is not TracedTensor or not _meta_same((<TracedTensor>ct).id, primal.id):
        raise _errors["InternalError"](
            f"the {what} rule of '{node.prim.name}' returned {ct!r} for an input of "
            f"{primal.dtype.name}{list(primal.shape)}")
    return 0


cdef uint8_t* _new_marks(GraphWalk walk) except NULL:
    """Zeroed NodeMark flags, one per position, owned by ``walk``."""
    walk.marks = <uint8_t*>calloc(walk.n + 1, sizeof(uint8_t))
    if walk.marks == NULL:
        raise MemoryError()
    return walk.marks


# ---------------------------------------------------------------- reverse (VJP)

def vjp_sweep(list outputs, list cotangents, list wrt):
    """Reverse sweep over the graph of ``outputs``.

    Returns the cotangent node of each ``wrt`` node (``None`` where it is a symbolic zero).
    Cotangents are added with ``add_cotangents`` and a multi-output node's rule gets all
    its outputs from ``siblings``.  Only nodes that depend on some ``wrt`` node are visited
    by rules.
    """
    outputs, cotangents = current_list(outputs), current_list(cotangents)
    cdef GraphWalk walk = _walk(outputs)
    cdef SiblingGroups groups = _mark_dependents(walk, wrt)
    cdef list cts = _seed_cotangents(walk, outputs, cotangents)
    with graph_mode():                  # rules see nodes as they are (traced_writes.pxi)
        _reverse(walk, groups, cts)
    return [_dense_of(cts[walk.position(x)]) if walk.reached(x) else None for x in wrt]


cdef SiblingGroups _mark_dependents(GraphWalk walk, list wrt):
    """Mark the wrt nodes (IS_WRT) and every node with a path from one (DEPENDS_ON_WRT) in
    one pass, inputs first; group the siblings of the marked multi-output nodes.  Nothing
    depends on a wrt node through a primitive that blocks derivatives (stop_gradient)."""
    cdef uint8_t* marks = _new_marks(walk)
    cdef SiblingGroups groups = SiblingGroups.__new__(SiblingGroups)
    cdef TracedTensor node, item
    cdef Py_ssize_t i
    for item in wrt:
        if walk.reached(item):
            marks[walk.position(item)] = IS_WRT | DEPENDS_ON_WRT
    for i in range(walk.n):
        node = <TracedTensor>walk.order[i]
        if not marks[i] and not node.prim.blocks_derivatives:
            for item in node.inputs:
                if marks[walk.index[item.id]] & DEPENDS_ON_WRT:
                    marks[i] = DEPENDS_ON_WRT
                    break
        if marks[i] and node.prim.n_outputs > 1:
            groups.join(node, i)
    return groups


cdef list _seed_cotangents(GraphWalk walk, list outputs, list cotangents):
    """Per position, the cotangent given for that output (summed over repeats), or None."""
    cdef list cts = [None] * walk.n
    cdef Py_ssize_t k, i
    for k in range(len(outputs)):
        if cotangents[k] is None:
            continue
        i = walk.position(<TracedTensor>outputs[k])
        cts[i] = cotangents[k] if cts[i] is None else add_cotangents(cts[i], cotangents[k])
    return cts


cdef int _reverse(GraphWalk walk, SiblingGroups groups, list cts) except -1:
    """Users before inputs: run the rule of each marked node that holds a cotangent and
    add what it returns into its inputs' cotangents."""
    cdef TracedTensor node
    cdef Py_ssize_t i
    cdef list members
    for i in range(walk.n - 1, -1, -1):
        if not walk.marks[i] & DEPENDS_ON_WRT:
            continue
        node = <TracedTensor>walk.order[i]
        if not node.inputs:
            continue
        if node.prim.n_outputs > 1:
            members = groups.members(i)
            if members[0] != i:
                continue          # the group's rule runs at its earliest member, the last
            ct = _take_group_cotangent(walk, members, cts, node.prim.n_outputs)
            if ct is None:
                continue
            out = siblings(node)
        else:
            ct = cts[i]
            if ct is None:
                continue
            if not walk.marks[i] & IS_WRT:
                cts[i] = None     # released as the sweep passes
            out = node
        _apply_vjp(walk, node, ct, out, cts)
    return 0


cdef object _take_group_cotangent(GraphWalk walk, list members, list cts, int n_outputs):
    """The cotangents of a sibling group as a tuple by slot (None if all are zero), taken
    out of ``cts`` except for wrt nodes."""
    cdef list ct = [None] * n_outputs
    cdef bint any_ct = False
    cdef Py_ssize_t j
    for j in members:
        if cts[j] is not None:
            ct[(<TracedTensor>walk.order[j]).slot] = cts[j]
            any_ct = True
            if not walk.marks[j] & IS_WRT:
                cts[j] = None
    return tuple(ct) if any_ct else None


cdef int _apply_vjp(GraphWalk walk, TracedTensor node, object ct, object out,
                    list cts) except -1:
    """Run ``node``'s VJP rule on ``ct`` and accumulate the cotangents of its inputs (an
    entrywise rule's keep the block of a BlockCotangent ``ct``)."""
    cdef TracedTensor item
    cdef Py_ssize_t j, k
    mask = _active_mask(walk.marks, walk.index, node.inputs)
    _counters.rules_applied += 1
    _counters.nodes_visited += 1
    box = _kept_box(node.prim, ct)
    input_cts = node.prim.vjp(node.params, _for_rule(node.prim, ct), out, node.inputs, mask)
    if box is not None:
        input_cts = _boxed(input_cts, box)
    for j in range(len(node.inputs)):
        if not mask[j]:
            continue
        c = input_cts[j]
        if c is None:
            continue
        item = <TracedTensor>node.inputs[j]
        if type(c) is BlockCotangent:
            _check_block(c, item, node)
        else:
            _check_cotangent(c, item, node, "VJP")
        k = walk.index[item.id]
        cts[k] = c if cts[k] is None else add_cotangents(cts[k], c)
    return 0


# ---------------------------------------------------------------- forward (JVP)

def jvp_sweep(list outputs, list wrt, list tangents):
    """Forward sweep: the tangent node of each output (``None`` = symbolic zero)."""
    outputs, tangents = current_list(outputs), current_list(tangents)
    cdef GraphWalk walk = _walk(outputs)
    cdef list tans = _seed_tangents(walk, wrt, tangents)
    with graph_mode():                  # rules see nodes as they are (traced_writes.pxi)
        _forward(walk, tans)
    return [tans[walk.position(<TracedTensor>o)] for o in outputs]


cdef list _seed_tangents(GraphWalk walk, list wrt, list tangents):
    """Per position, the tangent given for that wrt node, or None; given ones are SEEDED
    (no rule recomputes them)."""
    cdef uint8_t* marks = _new_marks(walk)
    cdef list tans = [None] * walk.n
    cdef TracedTensor item
    cdef Py_ssize_t k, i
    for k in range(len(wrt)):
        item = <TracedTensor?>wrt[k]
        if walk.reached(item) and tangents[k] is not None:
            i = walk.position(item)
            tans[i] = tangents[k]
            marks[i] = SEEDED
    return tans


cdef int _forward(GraphWalk walk, list tans) except -1:
    """Inputs before users: run the JVP rule of each node with a nonzero input tangent."""
    cdef SiblingGroups groups = SiblingGroups.__new__(SiblingGroups)
    cdef dict group_tangents = {}       # leader position -> tangents of all its siblings
    cdef TracedTensor node
    cdef Py_ssize_t i, leader
    for i in range(walk.n):
        node = <TracedTensor>walk.order[i]
        if not node.inputs or walk.marks[i] & SEEDED:
            continue
        in_tans = tuple([tans[walk.index[(<TracedTensor>x).id]] for x in node.inputs])
        for t in in_tans:
            if t is not None:
                break
        else:
            continue
        if node.prim.n_outputs > 1:
            leader = groups.join(node, i)[0]
            result = group_tangents.get(leader)
            if result is None:
                _counters.rules_applied += 1
                outs = siblings(node)
                result = tuple(node.prim.jvp(node.params, in_tans, outs, node.inputs))
                group_tangents[leader] = result
            tans[i] = result[node.slot]
        else:
            _counters.rules_applied += 1
            tans[i] = node.prim.jvp(node.params, in_tans, node, node.inputs)
        _counters.nodes_visited += 1
        if tans[i] is not None:
            _check_cotangent(tans[i], node, node, "JVP")
    return 0

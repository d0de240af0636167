# The eager forward sweep behind ``tp.jvp`` on concrete values.  The function runs once and
# records a tape; then each entry's JVP rule runs in recording order, from the tangents of
# the inputs to the tangents of the outputs.  These are the JVP rules of the traced
# transform, on the saved values: no rule ever sees a made-up cotangent.

def eager_tangents(list outputs, list inputs, list tangents, bint create_graph) -> list:
    """The tangent of each of ``outputs`` (None where no input reaches it), given the
    tangent of each of ``inputs`` (Tensors on the tape; a tangent may be None).  With
    ``create_graph`` the rules run on Tensors connected to the tape, so that the sweep is
    itself recorded and can be differentiated."""
    cdef dict seeds = {}              # _tensor_key of an input -> its tangent
    cdef dict index = {}
    cdef list order, tans, roots = []
    cdef TapeNode node
    cdef Py_ssize_t i, k
    for k in range(len(inputs)):
        if tangents[k] is not None:
            seeds[_tensor_key(<Tensor?>inputs[k])] = tangents[k]
    for out in outputs:
        if type(out) is Tensor and (<Tensor>out)._node is not None:
            roots.append((<Tensor>out)._node)
    order = _eager_toposort(roots, index)
    tans = [None] * len(order)
    for i in range(len(order)):
        node = <TapeNode>order[i]
        in_tans = tuple([_parent_tangent(node, j, seeds, tans, index)
                         for j in range(len(node.parents))])
        for t in in_tans:
            if t is not None:
                tans[i] = _run_tape_jvp(node, in_tans, create_graph)
                break
        _override_seeded_slots(node, i, seeds, tans)
    return [_output_tangent(out, seeds, tans, index) for out in outputs]


cdef object _parent_tangent(TapeNode node, Py_ssize_t j, dict seeds, list tans, dict index):
    parent = node.parents[j]
    if parent is None:
        return None
    if type(parent) is Tensor:
        return seeds.get(_address(parent))
    t = tans[index[_address(parent)]]
    if t is None or (<TapeNode>parent).prim.n_outputs == 1:
        return t
    return t[node.parent_slots[j]]


cdef int _override_seeded_slots(TapeNode node, Py_ssize_t i, dict seeds, list tans) except -1:
    """An input that is an intermediate tensor of the tape takes its given tangent."""
    cdef int j, n_out = node.prim.n_outputs
    if not seeds:
        return 0
    for j in range(n_out):
        seed = seeds.get((_address(node), j), _NO_SEED)
        if seed is _NO_SEED:
            continue
        if n_out == 1:
            tans[i] = seed
        else:
            slots = list(tans[i]) if tans[i] is not None else [None] * n_out
            slots[j] = seed
            tans[i] = tuple(slots)
    return 0


cdef object _NO_SEED = object()


cdef object _run_tape_jvp(TapeNode node, tuple in_tans, bint create_graph):
    cdef Py_ssize_t n_out = node.prim.n_outputs
    if node.released:
        raise _freed_tape_error(node, "jvp")
    xs, out = _rule_operands(node, create_graph)
    _counters.eager_swept += 1
    result = node.prim.jvp(node.params, in_tans, out, xs)
    if _check_finite:
        _nonfinite_hook(f"the JVP of '{node.prim.name}' (eager jvp)",
                        result if n_out > 1 else (result,), in_tans)
    return tuple(result) if n_out > 1 else result


cdef object _output_tangent(object out, dict seeds, list tans, dict index):
    if type(out) is not Tensor:
        return None
    cdef Tensor t = <Tensor>out
    if t._node is None:
        return seeds.get(_address(t))
    tangent = tans[index[_address(t._node)]]
    if tangent is None or (<TapeNode>t._node).prim.n_outputs == 1:
        return tangent
    return tangent[t._slot]

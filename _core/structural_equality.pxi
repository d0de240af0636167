# Structural equality of graphs of different origins (within one process, interning already
# makes ``a is b`` the answer): iterative, memoised on node pairs, fingerprints first.

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

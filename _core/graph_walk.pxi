# Walking traced graphs: the topological order every sweep and the scheduler start from,
# its scratch arrays, and the grouping of a multi-output operation's sibling nodes.
#
# All loops are iterative (explicit stacks).  Scratch arrays are allocated per call and
# indexed by node id (ids are dense), so walks are thread-safe and O(nodes + edges).

cdef list _toposort(list outputs, walk_state_t* state):
    """Nodes reachable from ``outputs``, inputs before users.  ``state[id]`` ends ORDERED
    for every node in the order (the caller allocates ``state`` zeroed, sized to the table)."""
    cdef list order = []
    cdef list stack = []
    cdef TracedTensor node, item
    cdef Py_ssize_t k
    for k in range(len(outputs) - 1, -1, -1):
        stack.append(<TracedTensor?>outputs[k])
    while stack:
        node = <TracedTensor>stack[len(stack) - 1]
        if state[node.id] == UNSEEN:
            state[node.id] = EXPANDING
            for k in range(len(node.inputs) - 1, -1, -1):
                item = <TracedTensor>node.inputs[k]
                if state[item.id] == UNSEEN:
                    stack.append(item)
        else:
            stack.pop()
            if state[node.id] == EXPANDING:
                state[node.id] = ORDERED
                order.append(node)
    _counters.nodes_visited += len(order)
    return order


cdef walk_state_t* _scratch_state() except NULL:
    cdef walk_state_t* state = <walk_state_t*>calloc(_high_water + 1, sizeof(walk_state_t))
    if state == NULL:
        raise MemoryError()
    return state


def toposort(outputs) -> list:
    """All nodes that ``outputs`` depend on, in an order where inputs precede users."""
    cdef walk_state_t* state = _scratch_state()
    try:
        return _toposort(current_list(outputs), state)
    finally:
        free(state)


cdef Py_ssize_t* _local_index(list order) except NULL:
    """Map node id -> position in ``order`` (entries for other ids are garbage)."""
    cdef Py_ssize_t* index = <Py_ssize_t*>malloc((_high_water + 1) * sizeof(Py_ssize_t))
    if index == NULL:
        raise MemoryError()
    _fill_index(index, order)
    return index


cdef inline void _fill_index(Py_ssize_t* index, list order) noexcept:
    cdef Py_ssize_t i
    for i in range(len(order)):
        index[(<TracedTensor>order[i]).id] = i


@cython.final
cdef class GraphWalk:
    """The topological order of a graph with its scratch arrays, freed with the walk."""

    def __dealloc__(self):
        free(self.state)
        free(self.index)
        free(self.marks)

    cdef bint reached(self, TracedTensor node) noexcept:
        """Whether ``node`` is in the order."""
        return self.state[node.id] >= ORDERED       # BOUND_INPUT refines ORDERED

    cdef Py_ssize_t position(self, TracedTensor node) noexcept:
        """The position of an ordered ``node``."""
        return self.index[node.id]


cdef GraphWalk _walk(list outputs):
    """The walk of everything ``outputs`` depend on."""
    cdef GraphWalk walk = GraphWalk.__new__(GraphWalk)
    walk.state = _scratch_state()
    walk.order = _toposort(outputs, walk.state)
    walk.n = len(walk.order)
    walk.index = _local_index(walk.order)
    return walk


cdef inline tuple _group_key(TracedTensor node):
    """Identifies the operation behind a node, whatever its output slot."""
    return (node.prim, node.params) + tuple([id(x) for x in node.inputs])


@cython.final
cdef class SiblingGroups:
    """The nodes of each multi-output operation met in a walk, grouped.

    Siblings share primitive, params and inputs and differ in slot; their rule runs once
    per group.  Members are entered in increasing position, so a group's first member (its
    leader) is the earliest in the order.
    """

    def __cinit__(self):
        self._by_key = {}
        self._by_position = {}

    cdef list join(self, TracedTensor node, Py_ssize_t position):
        """Enter ``node`` at ``position``; returns its group's member positions."""
        key = _group_key(node)
        members = self._by_key.get(key)
        if members is None:
            members = self._by_key[key] = []
        (<list>members).append(position)
        self._by_position[position] = members
        return <list>members

    cdef list members(self, Py_ssize_t position):
        """The member positions of the group of the node entered at ``position``."""
        return <list>self._by_position[position]

# In-place writes into traced tensors (numpy/inplace.py), without mutating the graph.
#
# A TracedTensor is an interned graph node *and* the object a user's name holds.  A write
# ``a[i] = v`` cannot change ``a``'s node (the nodes built from it need its old value), so
# it *forwards* ``a``: ``a._current`` is a node of the written value that nothing else
# holds, and every later operation on ``a`` in user code takes it (``_resolved`` in
# ``intern``; ``current`` where user values become graph roots: toposort, schedule, the
# sweeps).  The engine's own passes over graph structure -- the derivative sweeps, which
# apply rules to the nodes they find -- run in *graph mode*, where nodes stand for
# themselves.
#
# A written node leaves the intern table (an equal expression built later is a new node),
# and a node an intern hit returned again is *shared* (two expressions' values): a write
# into it, or into a base whose live view it is, would change both, so numpy/inplace.py
# refuses it.  A NumPy-level view's node is registered as that view (eager.pxi); an equal
# view made again claims its hit back, any other expression's hit counts.  The fresh
# arrays users write into (copies, ``zeros_like``, ...) are unique nodes (``unique_apply``).

cpdef object current(object x):
    """The node holding ``x``'s value now: ``x`` unless an in-place write forwarded it."""
    if type(x) is TracedTensor and (<TracedTensor>x)._current is not None and not _graph_mode:
        return _value_node(<TracedTensor>x)
    return x


def current_list(xs) -> list:
    """:func:`current` of each of ``xs``."""
    if _forwarding == 0 or _graph_mode:
        return list(xs)
    return [current(x) for x in xs]


def check_writes_allowed() -> None:
    """Raise inside the engine's passes over graph structure (a derivative rule), where
    nodes stand for themselves and a write could not be seen."""
    if _graph_mode:
        raise _errors["UnsupportedError"](
            "an in-place write into a traced tensor inside a derivative rule (the engine "
            "is applying rules to graph nodes); build the value functionally: "
            "x.at[index].set(value)")


def forward_write(TracedTensor target, TracedTensor value) -> None:
    """``target`` holds ``value``'s value from now on (an in-place write)."""
    global _forwarding, _writes_forwarded
    check_writes_allowed()
    _writes_forwarded += 1
    # the written value's own node, which nothing else holds: a node a user holds may be
    # written in turn (np.copyto(a, b); b[0] = 1), and ``a`` must keep b's old value
    node = new_array(current(value))
    if target._interned and target.prim.n_outputs == 1:
        _table_remove(target)               # a later equal expression is a new node
        # (an output of a multi-output operation stays: the sweeps find its siblings in
        # the table; making the operation again in user code raises, intern_table.pxi)
    if target._current is None:
        _forwarding += 1
        if _trace_depth:
            _scope_writes.append(PyWeakref_NewRef(target, None))
        else:
            _manual_writes.append(PyWeakref_NewRef(target, None))
    target._current = node
    if not _trace_depth and len(_manual_writes) >= _manual_sweep_at:
        release_unreachable_writes()


# A write forwards ``a`` to a node built from ``a`` itself (``a[i] = a[i - 1] * 2``): a
# reference cycle, which the garbage collector cannot see (nodes are not tracked).  The
# nodes written inside a traced function's run are released when the outermost such run
# returns: their forwarding ends (a later use raises, naming why); the outputs were taken
# at their values before.  A node written outside any (a graph built by hand) is released
# once nothing but its own written values holds it: ``release_unreachable_writes`` finds
# those by their reference counts, as Python's collector finds cycles, over the nodes
# reachable from the written value (below the node itself: nothing there can hold it),
# when the written nodes have doubled since the last look and after each full collection.

cdef int _trace_depth = 0
cdef list _scope_writes = []


def enter_trace() -> None:
    """A traced function starts running (tp.jit's trace, a transform's function)."""
    global _trace_depth
    _trace_depth += 1


def leave_trace() -> None:
    """It returned: when no other is running, the nodes written meanwhile are released."""
    global _trace_depth
    cdef TracedTensor node
    _trace_depth -= 1
    if _trace_depth or not _scope_writes:
        return
    for ref in _scope_writes:
        found = PyWeakref_GetObject(ref)
        if found != <PyObject*>None:
            node = <TracedTensor>found
            if node._current is not None:
                node._current = _EXPIRED
    _scope_writes.clear()


cdef list _manual_writes = []         # weak references: nodes written outside any trace
cdef Py_ssize_t _manual_sweep_at = 256
cdef Py_ssize_t _CYCLE_BUDGET = 200000   # objects looked at per written node, then: held


def release_unreachable_writes() -> int:
    """End the forwarding of the nodes written outside any traced run that nothing but
    their own written values still holds; returns how many (their graphs are then freed)."""
    global _manual_writes, _manual_sweep_at
    cdef list alive = []
    cdef PyObject* found
    cdef Py_ssize_t released = 0
    for ref in _manual_writes:
        found = PyWeakref_GetObject(ref)
        if found == <PyObject*>None:
            continue
        if _held_only_by_its_writes(found):
            _expire(<object>found)
            released += 1
        else:
            alive.append(ref)
    _manual_writes = alive
    _manual_sweep_at = max(256, 2 * len(alive))
    return released


cdef int _expire(TracedTensor node) except -1:
    node._current = _EXPIRED               # (frees the written values, then the node)
    return 0


cdef list _held_references(PyObject* item, bint is_target):
    """The objects ``item`` holds that the look at a written node follows: a node's
    operands tuple, forwarded value and view link (the target: only its value), a tuple's
    nodes, a view link's base.  Anything else an object holds is not followed, which only
    makes more objects look held from outside."""
    cdef object obj = <object>item
    cdef TracedTensor node
    cdef list found = []
    if type(obj) is TracedTensor:
        node = <TracedTensor>obj
        if type(node._current) is TracedTensor:
            found.append(node._current)
        if not is_target:
            if node.inputs is not None:
                found.append(node.inputs)
            if type(node._alias) is ViewLink:
                found.append(node._alias)
    elif type(obj) is tuple:
        found = [x for x in <tuple>obj if type(x) is TracedTensor]
    elif type(obj) is ViewLink and type((<ViewLink>obj).base) is TracedTensor:
        found.append((<ViewLink>obj).base)
    return found


cdef bint _held_only_by_its_writes(PyObject* target) except -1:
    """Whether every reference to the written node ``target`` comes from the objects its
    written value reaches: each object's count minus the references among them, as
    Python's collector counts, leaves the ones held from outside, and ``target`` is not
    reached from those.  Iterative; a look that grows past its budget says held."""
    cdef dict position = {<Py_ssize_t>target: 0}
    cdef list address = [<Py_ssize_t>target], internal = [0], edges = [None], todo = [0]
    cdef Py_ssize_t p, q, i
    while todo:
        p = todo.pop()
        edges[p] = []
        for held in _held_references(<PyObject*><Py_ssize_t>address[p], p == 0):
            key = <Py_ssize_t><PyObject*>held
            q = position.get(key, -1)
            if q < 0:
                if len(address) >= _CYCLE_BUDGET:
                    return False
                q = len(address)
                position[key] = q
                address.append(key)
                internal.append(0)
                edges.append(None)
                todo.append(q)
            internal[q] += 1
            edges[p].append(q)
        held = None
    reached = [False] * len(address)
    todo = []
    for i in range(len(address)):
        outside = _Py_REFCNT(<PyObject*><Py_ssize_t>address[i]) - <Py_ssize_t>internal[i]
        if outside < 0:
            return False                   # (a reference counted twice: say held)
        if outside > 0:
            reached[i] = True
            todo.append(i)
    while todo:
        for q in edges[todo.pop()]:
            if not reached[q]:
                reached[q] = True
                todo.append(q)
    return not reached[0]


def mark_other_layout(TracedTensor node) -> None:
    """NumPy's array of the fresh ``node`` is not C-ordered (a copy or ``*_like`` of a
    transposed array): its reshapes follow its recorded strides (numpy/_views.py)."""
    node._other_layout = True


cdef Py_ssize_t _writes_forwarded = 0


def writes_forwarded() -> int:
    """How many in-place writes have forwarded a traced tensor so far (tp.jit: whether a
    trace wrote, so that NumPy's layout-dependent views of its inputs could matter)."""
    return _writes_forwarded


def any_forwarded() -> bool:
    """Whether an in-place write forwarded a traced tensor that is still alive."""
    return _forwarding > 0


def is_shared(object x) -> bool:
    """Whether the traced tensor ``x`` is also the value of another expression: an intern
    hit returned it again (equal expressions are one node), other than an equal view's."""
    return type(x) is TracedTensor and (<TracedTensor>x)._hits > 0


cpdef TracedTensor unique_apply(Primitive prim, object params, tuple inputs,
                                TracedTensor like):
    """A node ``prim(params)(*inputs)`` of ``like``'s dtype and shape that never merges
    with another: a fresh array a write may go into (``x.copy()``, ``zeros_like``)."""
    return _unique(prim, params, _user_inputs(inputs), 0, like)


cpdef object new_array(object x):
    """What NumPy's copy of ``x`` is to in-place writes: a traced ``x`` taken as a unique
    ``copy`` node (in user code; the engine's own passes keep ``x``), anything else as
    :func:`fresh_handle` makes it.  For the identity shortcuts of user-facing operations
    (``x * 1``, ``+x``, ``x.astype(x.dtype)``), whose results NumPy gives as new arrays."""
    if type(x) is TracedTensor and not _graph_mode:
        return unique_apply(_copy_p, None, (x,), <TracedTensor>x)
    return fresh_handle(x)


class graph_mode:
    """``with graph_mode():`` nodes stand for themselves (a pass over graph structure that
    rebuilds nodes from the ones it finds: no forwarding of written nodes)."""

    def __enter__(self):
        global _graph_mode
        _graph_mode += 1

    def __exit__(self, *exc):
        global _graph_mode
        _graph_mode -= 1

# The compiler's pass over a graph: order the nodes "as late as possible", give each a
# buffer, and describe the work as a Plan of Instruction rows (one per node, one per
# sibling group of a multi-output primitive).  tenpy_ad/compiler/program.py builds a Program from it.
#
# A plan of a 10^6-node graph holds millions of rows and small tuples of buffer numbers:
# none can be part of a reference cycle, so they are kept out of the cycle collector
# (whose first pass after a compile would otherwise visit every one of them).

cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void* op)


cdef inline tuple _untracked(tuple t):
    """``t``, which holds only numbers and other untracked tuples, out of the cycle
    collector's way (as CPython's collector itself does with such tuples, lazily)."""
    PyObject_GC_UnTrack(<void*>t)
    return t


@cython.no_gc    # holds a primitive, its params and tuples of buffer numbers: no cycles
@cython.final
cdef class Instruction:
    """``outputs <- prim(params)(*inputs)`` over buffer indices: ``inputs`` holds the
    operands' buffers, ``outputs`` the ``(slot, buffer)`` pairs by slot.  Input placeholders
    and constants are rows without inputs (their buffers are filled before a run)."""

    def __repr__(self):
        return f"<Instruction {self.outputs} = {self.prim.name} {self.inputs}>"


@cython.final
cdef class Plan:
    """A scheduled graph: what ``schedule`` returns.

    ``rows``: every Instruction in order, inputs and constants included (the listing);
    ``steps``: the rows that compute; ``metadata``/``template``: per buffer its
    ``(dtype code, shape)`` and the constant's array (or None); ``inputs``: the buffer of
    each requested input (-1 if the graph does not use it); ``outputs``: the buffer of each
    output; ``unbound``: the first input placeholder not among the inputs (or None).
    """


cdef list _as_late_as_possible(list order, Py_ssize_t* index):
    """Reorder a topological ``order`` (``index`` maps node id to position in it) by "as
    late as possible" levels: a node's level is one less than the lowest level among its
    users (outputs are at the top level), and nodes are stably sorted by level.  Values
    then live only as long as their uses need; in particular the recomputation of a
    checkpointed region, whose users all belong to the backward pass of its step, is
    scheduled right before that step's backward pass instead of ahead of time."""
    cdef Py_ssize_t n = len(order), i, k, lowest
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
        free(level)
        free(count)
        free(start)


def schedule(list outputs, list inputs, Primitive input_prim, Primitive constant_prim) -> Plan:
    """The Plan of the graph of ``outputs`` as a function of ``inputs`` (placeholders);
    buffers are numbered by position in the schedule, one per node."""
    cdef GraphWalk walk = _walk(outputs)
    cdef Plan plan = Plan.__new__(Plan)
    cdef TracedTensor item
    walk.order = _as_late_as_possible(walk.order, walk.index)
    _fill_index(walk.index, walk.order)
    for item in inputs:
        if walk.reached(item):
            walk.state[item.id] = BOUND_INPUT
    _fill_plan(plan, walk, input_prim, constant_prim)
    plan.inputs = [walk.position(item) if walk.state[item.id] == BOUND_INPUT else -1
                   for item in inputs]
    plan.outputs = [walk.position(<TracedTensor>x) for x in outputs]
    return plan


cdef int _fill_plan(Plan plan, GraphWalk walk, Primitive input_prim,
                    Primitive constant_prim) except -1:
    """One row per node in schedule order; siblings of a multi-output primitive share the
    row of the first of them, which gets all their outputs once the order is done."""
    cdef SiblingGroups groups = SiblingGroups.__new__(SiblingGroups)
    cdef list rows = [], steps = [], multi = []
    cdef list metadata = [None] * walk.n, template = [None] * walk.n
    cdef TracedTensor node, previous = None
    cdef Instruction row
    cdef Py_ssize_t k, j
    cdef tuple meta = None
    cdef dict metas = {}                      # one object per dtype and shape
    plan.unbound = None
    for k in range(walk.n):
        node = <TracedTensor>walk.order[k]
        if previous is None or not _meta_same(node.id, previous.id):
            meta = (_dtype_codes[node.id], _untracked(_meta_shape(node.id)))
            meta = metas.setdefault(meta, meta)
            _untracked(meta)
        metadata[k] = meta                    # shared by every buffer of its dtype and shape
        previous = node
        if node.prim is input_prim or node.prim is constant_prim:
            if node.prim is constant_prim:
                template[k] = node.params.array
            elif walk.state[node.id] != BOUND_INPUT and plan.unbound is None:
                plan.unbound = node
            rows.append(_instruction(node, (), k))
            continue
        if node.prim.n_outputs > 1:
            members = groups.join(node, k)
            if len(members) > 1:
                continue                                 # a later sibling: row exists
        row = _instruction(node, _input_buffers(node, walk.index), k)
        if row.single_output < 0:
            multi.append((row, members))
        rows.append(row)
        steps.append(row)
    for row, members in multi:
        row.outputs = tuple(sorted([((<TracedTensor>walk.order[j]).slot, j) for j in members]))
    plan.rows, plan.steps, plan.metadata, plan.template = rows, steps, metadata, template
    return 0


cdef inline Instruction _instruction(TracedTensor node, tuple inputs, Py_ssize_t buffer):
    """The row of ``node`` writing ``buffer`` (the outputs of a multi-output row are set
    once all its siblings are known)."""
    cdef Instruction row = Instruction.__new__(Instruction)
    row.prim = node.prim
    row.params = node.params
    row.inputs = inputs
    if node.prim.n_outputs == 1:
        row.outputs = _untracked((_untracked((0, buffer)),))
        row.single_output = buffer
    else:
        row.single_output = -1
    return row


cdef tuple _input_buffers(TracedTensor node, Py_ssize_t* index):
    """The buffers of ``node``'s inputs (their positions in the schedule)."""
    cdef Py_ssize_t j, m = len(node.inputs)
    cdef tuple buffers = PyTuple_New(m)
    cdef object value
    for j in range(m):
        value = index[(<TracedTensor>node.inputs[j]).id]
        Py_INCREF(value)
        PyTuple_SET_ITEM(buffers, j, value)
    return _untracked(buffers)


def last_uses(Plan plan) -> list:
    """Per step, the tuple of buffers whose last read it is (program outputs excluded):
    what the interpreter releases right after the step."""
    cdef Py_ssize_t n = len(plan.steps), n_buffers = len(plan.metadata), k, b
    cdef Py_ssize_t* last = <Py_ssize_t*>malloc((n_buffers + 1) * sizeof(Py_ssize_t))
    cdef list frees = [()] * n
    try:
        if last == NULL:
            raise MemoryError()
        for b in range(n_buffers):
            last[b] = -1
        for k in range(n):
            for b in (<Instruction>plan.steps[k]).inputs:
                last[b] = k
        for b in plan.outputs:
            last[<Py_ssize_t>b] = -1                     # handed to the caller
        for b in range(n_buffers):                       # ascending, as the buffers go
            k = last[b]
            if k >= 0:
                frees[k] = frees[k] + (b,) if len(<tuple>frees[k]) else _untracked((b,))
        for k in range(n):
            if len(<tuple>frees[k]) > 1:
                _untracked(<tuple>frees[k])
        return frees
    finally:
        free(last)


# ---------------------------------------------------------------- memory plan
# tenpy_ad/memory_plan.py describes the plan; here are its linear passes over the steps.

def steps_using(list steps, object prims, list metadata=None) -> list:
    """The indices of the steps whose primitive is in ``prims`` (a dict or set); with the
    plan's ``metadata``, only those whose one result is 0-d."""
    cdef Py_ssize_t k
    cdef Instruction step
    found = []
    for k in range(len(steps)):
        step = <Instruction>steps[k]
        if step.prim in prims and (metadata is None or step.single_output >= 0 and
                                   not (<tuple>metadata[step.single_output])[1]):
            found.append(k)
    return found


cdef inline Py_ssize_t _root(Py_ssize_t* parent, Py_ssize_t b) noexcept:
    """The representative of ``b``'s alias class (union-find, with path halving)."""
    while parent[b] != b:
        parent[b] = parent[parent[b]]
        b = parent[b]
    return b


def plan_memory(Plan plan, object writer, object is_fresh, Py_ssize_t min_bytes) -> tuple:
    """``(kernels, views, storage, sizes)``: per step the kernel of ``writer``'s answer if
    it writes into a planned array (else None), ``(dtype, shape)`` of that array as the
    kernel sees it, and the indices of its arrays (None: none) — the result's, then one per
    scratch array (-1 for a size 0); per array its bytes.

    ``writer(k)`` -> ``(kernel, shape, scratch bytes)`` or None says whether step ``k``
    (one output of at least ``min_bytes``) can write into a planned array (such a step's
    result is new memory); it is asked once per step signature (primitive, params, dtypes
    and shapes).  ``is_fresh(prim, params)`` says whether a step's results never share
    memory with its operands.  The other steps' results join their operands' alias class;
    an array is reserved until the last read of any value of its class, and never planned
    for a class holding a program output."""
    cdef Py_ssize_t n = len(plan.steps), n_buffers = len(plan.metadata)
    cdef Py_ssize_t* parent = <Py_ssize_t*>malloc((n_buffers + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t* last = <Py_ssize_t*>malloc((n_buffers + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t k, b
    cdef list candidates = [None] * n
    try:
        if parent == NULL or last == NULL:
            raise MemoryError()
        for b in range(n_buffers):
            parent[b] = b
            last[b] = -1
        _alias_classes(plan, writer, is_fresh, min_bytes, candidates, parent, last)
        for b in plan.outputs:
            last[<Py_ssize_t>b] = n                      # handed to the caller
        for b in range(n_buffers):                       # per class: its last read
            k = _root(parent, b)
            if last[b] > last[k]:
                last[k] = last[b]
        return _assign_arrays(plan, candidates, parent, last)
    finally:
        free(parent)
        free(last)


cdef int _alias_classes(Plan plan, object writer, object is_fresh, Py_ssize_t min_bytes,
                        list candidates, Py_ssize_t* parent, Py_ssize_t* last) except -1:
    """Last reads per buffer, the candidates (``writer``'s answers) and the alias classes:
    a result that may be a view joins its operands' class."""
    cdef list itemsizes = [d.itemsize for d in _dtype_objects], metadata = plan.metadata
    cdef dict fresh = {}, answers = {}
    cdef Py_ssize_t k, b, a, ra, rb
    cdef Instruction step
    cdef object meta, big_meta = None, small_meta = None    # the last seen of each size
    cdef Primitive last_prim = None
    cdef bint last_none = False, known = False
    for k in range(len(plan.steps)):
        step = <Instruction>plan.steps[k]
        for b in step.inputs:
            last[b] = k
        for _, b in step.outputs:
            last[b] = k                                  # defined here
        if step.single_output >= 0:
            meta = metadata[step.single_output]          # shared by one dtype and shape
            if meta is not small_meta and (meta is big_meta or _big_enough(
                    <tuple>meta, itemsizes, min_bytes)):
                big_meta = meta
                candidates[k] = _writer_answer(writer, k, step, meta, metadata, answers)
                if candidates[k] is not None:
                    continue
            else:
                small_meta = meta
        if step.prim is not last_prim or (step.params is None) != last_none:
            last_prim, last_none = step.prim, step.params is None
            key = (last_prim, last_none)
            found = fresh.get(key)
            if found is None:
                found = fresh[key] = bool(is_fresh(step.prim, step.params))
            known = found
        if known:
            continue
        for _, b in step.outputs:                        # may be a view of any operand
            for a in step.inputs:
                ra, rb = _root(parent, a), _root(parent, b)
                if ra != rb:
                    parent[rb] = ra
    return 0


cdef object _writer_answer(object writer, Py_ssize_t k, Instruction step, object meta,
                           list metadata, dict answers):
    """``writer(k)``, once per signature: the primitive, params and the metadata of the
    result and operands."""
    cdef Py_ssize_t b
    cdef tuple ins = step.inputs
    if len(ins) == 1:
        key = (step.prim, step.params, meta, metadata[<Py_ssize_t>ins[0]])
    elif len(ins) == 2:
        key = (step.prim, step.params, meta, metadata[<Py_ssize_t>ins[0]],
               metadata[<Py_ssize_t>ins[1]])
    else:
        key = tuple([step.prim, step.params, meta] + [metadata[b] for b in ins])
    try:
        found = answers.get(key, _NO_ANSWER)
    except TypeError:                   # unhashable params
        return writer(k)
    if found is _NO_ANSWER:
        found = answers[key] = writer(k)
    return found


cdef object _NO_ANSWER = object()


cdef inline bint _big_enough(tuple meta, list itemsizes, Py_ssize_t min_bytes) except -1:
    """Whether a value of ``meta = (dtype code, shape)`` is large enough to be planned."""
    code, shape = meta
    return bool(shape) and <Py_ssize_t>itemsizes[code] * _product(shape) >= min_bytes


cdef inline Py_ssize_t _product(tuple shape):
    cdef Py_ssize_t p = 1
    for d in shape:
        p *= <Py_ssize_t>d
    return p


cdef tuple _assign_arrays(Plan plan, list candidates, Py_ssize_t* parent, Py_ssize_t* last):
    """Visit the steps in order: a candidate whose class ends before the program does takes
    an idle array of its size (or a new one), which is idle again after that end; its
    scratch arrays (``writer``'s third item: bytes of each) are idle again right after the
    step.  Steps of one answer and dtype share their view tuple (a deep chain has
    millions of steps and a few answers); the releases wait in C lists per step."""
    cdef Py_ssize_t n = len(plan.steps), k, b, end, array, e, n_events = 0
    cdef list kernels = [None] * n, views = [None] * n, storage = [None] * n, sizes = []
    cdef list itemsizes = [d.itemsize for d in _dtype_objects], arrays
    cdef dict idle = {}, shared_views = {}
    cdef tuple answer, meta
    for answer in candidates:
        if answer is not None:
            n_events += 1 + len(<tuple>answer[2])
    cdef Py_ssize_t* head = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t* event = <Py_ssize_t*>malloc((2 * n_events + 1) * sizeof(Py_ssize_t))
    try:
        if head == NULL or event == NULL:
            raise MemoryError()
        for k in range(n):
            head[k] = -1
        n_events = 0                    # event e: array event[2e], next event[2e + 1]
        for k in range(n):
            if candidates[k] is not None:
                answer = <tuple>candidates[k]
                b = (<Instruction>plan.steps[k]).single_output
                end = last[_root(parent, b)]
                if end < n:
                    meta = <tuple>plan.metadata[b]
                    array = _take_array(
                        itemsizes[<Py_ssize_t>meta[0]] * _product(<tuple>meta[1]), idle, sizes)
                    n_events = _release_after(head, event, n_events, end, array)
                    if answer[2]:
                        arrays = [array]
                        for size in answer[2]:
                            scratch = _take_array(size, idle, sizes) if size else -1
                            arrays.append(scratch)
                            if size:
                                n_events = _release_after(head, event, n_events, k, scratch)
                        storage[k] = _untracked(tuple(arrays))
                    else:
                        storage[k] = _untracked((array,))   # ints: no work for the collector
                    kernels[k] = answer[0]
                    view = shared_views.get((id(answer), meta[0]))
                    if view is None:
                        # a dtype and a shape: no cycle can pass through it
                        view = shared_views[(id(answer), meta[0])] = _untracked((
                            _dtype_objects[meta[0]], answer[1]))
                    views[k] = view
            e = head[k]
            while e >= 0:
                array = event[2 * e]
                pool = idle.get(sizes[array])
                if pool is None:
                    idle[sizes[array]] = [array]
                else:
                    (<list>pool).append(array)
                e = event[2 * e + 1]
    finally:
        free(head)
        free(event)
    return kernels, views, storage, sizes


cdef inline Py_ssize_t _release_after(Py_ssize_t* head, Py_ssize_t* event,
                                      Py_ssize_t n_events, Py_ssize_t k,
                                      Py_ssize_t array) noexcept:
    """Make ``array`` idle again once step ``k`` has run; returns the new event count."""
    event[2 * n_events] = array
    event[2 * n_events + 1] = head[k]
    head[k] = n_events
    return n_events + 1


cdef Py_ssize_t _take_array(object size, dict idle, list sizes) except -1:
    """An idle array of ``size`` bytes, or a new one."""
    pool = idle.get(size)
    if pool:
        return (<list>pool).pop()
    sizes.append(size)
    return len(sizes) - 1

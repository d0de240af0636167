# The compiler's passes over a graph, in the core: ``schedule`` orders the nodes "as late
# as possible", gives each a buffer and describes the work as a Plan of Instruction rows
# (one per node, one per sibling group of a multi-output primitive), with the distinct
# signatures of its steps; tenpy_ad/compiler/step_choice.py answers each signature once
# (a StepChoice) from the facts its primitive declares; ``plan_steps`` then fills in each
# step's record for the interpreter (execute.pxi): what it calls, its planned array, its
# BLAS threads, the buffers dead after it.  tenpy_ad/compiler/program.py drives the two.
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


cdef tuple _NO_BUFFERS = ()


# holds a primitive, its params, tuples of buffer numbers and its kernel (a NumPy function,
# an impl, a StepKernel or a contraction's closure), none of which refers back to a step
@cython.no_gc
@cython.final
cdef class Instruction:
    """``outputs <- prim(params)(*inputs)`` over buffer indices: ``inputs`` holds the
    operands' buffers, ``outputs`` the ``(slot, buffer)`` pairs by slot.  Input placeholders
    and constants are rows without inputs (their buffers are filled before a run).

    A step of a compiled program is also the interpreter's record of how to run it:
    ``kernel`` (called as ``call`` says: a StepCall), ``planned`` (the index of its
    planned array in a call's set, -1: none), ``threads`` (the BLAS threads it sets, -1:
    as they are), ``frees`` (the buffers dead after it) and ``signature`` (its index in
    the Plan's ``signatures``, -1: none asked)."""

    def __repr__(self):
        return f"<Instruction {self.outputs} = {self.prim.name} {self.inputs}>"


cdef Instruction _with_threads(Instruction step, int threads):
    """A copy of ``step`` that sets ``threads`` BLAS threads."""
    cdef Instruction copy = Instruction.__new__(Instruction)
    copy.prim, copy.params, copy.inputs, copy.outputs = (step.prim, step.params,
                                                         step.inputs, step.outputs)
    copy.single_output, copy.signature = step.single_output, step.signature
    copy.kernel, copy.call, copy.planned = step.kernel, step.call, step.planned
    copy.frees, copy.threads = step.frees, threads
    return copy


@cython.final
cdef class Plan:
    """A scheduled graph: what ``schedule`` returns.

    ``rows``: every Instruction in order, inputs and constants included (the listing);
    ``steps``: the rows that compute; ``metadata``/``template``: per buffer its
    ``(dtype code, shape)`` and the constant's array (or None); ``inputs``: the buffer of
    each requested input (-1 if the graph does not use it); ``outputs``: the buffer of each
    output; ``unbound``: the first input placeholder not among the inputs (or None);
    ``signatures``: ``(prim, params, operand metadata, result metadata)`` of each distinct
    kind of step that may be planned, get a kernel or set BLAS threads (a primitive with
    ``step_facts``, or a ufunc without params); the result's is None for several outputs.
    """


@cython.final
cdef class StepChoice:
    """How the steps of one signature run (tenpy_ad/compiler/step_choice.py decides).

    ``kernel``: what computes them without a planned array (a StepKernel or
    ``kernel(params, *arrays)``; None: the impl, or the ufunc of a ufunc primitive without
    params); ``into``: what computes them into a planned array (a StepKernel, a ufunc, or
    ``into(out, params, *arrays)``; None: they cannot write into one), whose shape as
    ``into`` sees it is ``shape``, with scratch arrays of ``scratch`` bytes each;
    ``threads``: the BLAS threads they set (-1: as they are); ``fresh``: their results
    never share memory with their operands; ``passes_scalar``: a broadcast of a 0-d value
    that may pass it through when only ufuncs read its result."""

    def __init__(self, object kernel=None, object into=None, tuple shape=None,
                 tuple scratch=(), int threads=-1, bint fresh=False,
                 bint passes_scalar=False):
        self.kernel, self.into, self.shape, self.scratch = kernel, into, shape, scratch
        self.threads, self.fresh, self.passes_scalar = threads, fresh, passes_scalar

    def __repr__(self):
        return (f"<StepChoice kernel={self.kernel!r} into={self.into!r} shape={self.shape} "
                f"threads={self.threads} fresh={self.fresh}>")


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
    outputs = current_list(outputs)     # written outputs: their values (traced_writes.pxi)
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
    cdef Signatures signatures = Signatures()
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
        if row.prim.step_facts is not None or \
                (row.params is None and type(row.prim.array_fn) is _ufunc):
            row.signature = signatures.index(row, metadata)
        rows.append(row)
        steps.append(row)
    for row, members in multi:
        row.outputs = tuple(sorted([((<TracedTensor>walk.order[j]).slot, j) for j in members]))
    plan.rows, plan.steps, plan.metadata, plan.template = rows, steps, metadata, template
    plan.signatures = signatures.found
    return 0


cdef inline Instruction _instruction(TracedTensor node, tuple inputs, Py_ssize_t buffer):
    """The row of ``node`` writing ``buffer`` (the outputs of a multi-output row are set
    once all its siblings are known); how it runs is filled in by ``plan_steps``."""
    cdef Instruction row = Instruction.__new__(Instruction)
    row.prim = node.prim
    row.params = node.params
    row.inputs = inputs
    if node.prim.n_outputs == 1:
        row.outputs = _untracked((_untracked((0, buffer)),))
        row.single_output = buffer
    else:
        row.single_output = -1
    row.signature = row.planned = row.threads = row.call = -1
    row.frees = _NO_BUFFERS
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


@cython.final
cdef class Signatures:
    """The distinct signatures of a plan's steps: primitive, params, the operands' and the
    result's metadata (one object per dtype and shape, so a step repeating its primitive's
    last signature is told by identity)."""

    def __init__(self):
        self.found, self.index_of, self.last_of = [], {}, {}

    cdef Py_ssize_t index(self, Instruction row, list metadata) except -1:
        """The position of ``row``'s signature, added when new."""
        cdef tuple ins = row.inputs, operands
        cdef object result = metadata[row.single_output] if row.single_output >= 0 else None
        cdef Py_ssize_t m = len(ins), j
        last = self.last_of.get(row.prim)
        if last is not None and _same_params((<tuple>last)[0], row.params) and \
                (<tuple>last)[1] is result and _same_operands(<tuple>(<tuple>last)[2], ins,
                                                              metadata):
            return <Py_ssize_t>(<tuple>last)[3]          # a chain repeating its steps
        if m == 1:
            operands = (metadata[<Py_ssize_t>ins[0]],)
        elif m == 2:
            operands = (metadata[<Py_ssize_t>ins[0]], metadata[<Py_ssize_t>ins[1]])
        else:
            operands = tuple([metadata[<Py_ssize_t>j] for j in ins])
        key = (row.prim, row.params, result, operands)
        try:
            found = self.index_of.get(key)
        except TypeError:             # unhashable params: a signature of its own
            key, found = None, None
        if found is None:
            found = len(self.found)
            self.found.append((row.prim, row.params, operands, result))
            if key is not None:
                self.index_of[key] = found
        self.last_of[row.prim] = (row.params, result, operands, found)
        return <Py_ssize_t>found


cdef inline bint _same_params(object a, object b):
    """Whether params ``a`` and ``b`` are one object, or equal Scalars (told in C: a chain
    of ``scale`` steps has a Scalar per step)."""
    cdef Scalar x, y
    if a is b:
        return True
    if type(a) is not Scalar or type(b) is not Scalar:
        return False
    x, y = <Scalar>a, <Scalar>b
    return x.kind == y.kind and x.re_bits == y.re_bits and x.im_bits == y.im_bits and \
        (x.kind != SCALAR_INT or x.value == y.value)


cdef inline bint _same_operands(tuple operands, tuple ins, list metadata):
    """Whether the buffers ``ins`` have the metadata objects ``operands``."""
    cdef Py_ssize_t j
    if len(operands) != len(ins):
        return False
    for j in range(len(ins)):
        if operands[j] is not metadata[<Py_ssize_t>ins[j]]:
            return False
    return True


# ---------------------------------------------------------------- the steps' records
# tenpy_ad/compiler/memory_plan.py describes the memory plan, step_choice.py the choices;
# here are the linear passes over the steps that apply them.

def plan_steps(Plan plan, list choices, bint reuse_buffers, double min_share) -> tuple:
    """Fill in each step's record (once per plan) from ``choices`` (the StepChoice of each
    of the plan's signatures) and return the memory plan and whether any step sets BLAS
    threads: ``(slots, sizes, n_planned, threaded)``.

    * ``frees``: the buffers whose last read the step is (program outputs excluded);
    * skipped broadcasts: when at least ``min_share`` of the steps are broadcasts of a 0-d
      value (``passes_scalar``), those whose every reader is a ufunc step with another
      operand of the full shape, and that are no program output, pass the value through;
    * with ``reuse_buffers``, planned arrays: a step whose choice has ``into`` writes into
      an array of its result's bytes (its result is new memory), taken from the arrays idle
      at that step; the other steps' results join their operands' alias class unless they
      are ``fresh``; an array stays reserved until the last read of any value of its class,
      and no class holding a program output gets one; scratch arrays are idle again right
      after their step;
    * then each step's kernel (planned, passed through, its choice's, or its impl or
      ufunc), how it is called, and its BLAS threads.

    ``slots[s]``: ``(array indices, dtype, shape)`` of planned array ``s`` as its steps see
    it (the result's array, then one per scratch array, -1 for a size 0); ``sizes[a]``:
    bytes of array ``a``; ``n_planned``: the steps with a planned array."""
    cdef list steps = plan.steps
    cdef Py_ssize_t n = len(steps), k
    cdef Instruction step
    cdef StepChoice choice
    cdef bint threaded = False
    _fill_frees(plan)
    _skip_broadcasts(plan, choices, min_share)
    slots, sizes, n_planned = _plan_arrays(plan, choices) if reuse_buffers else ([], [], 0)
    for k in range(n):
        step = <Instruction>steps[k]
        choice = None if step.signature < 0 else <StepChoice>choices[step.signature]
        if choice is not None:
            step.threads = choice.threads
            threaded = threaded or choice.threads >= 0
        if step.call >= 0:
            continue                                     # planned, or passed through
        if step.prim is _copy_p:                         # a traced copy: its operand
            step.kernel, step.call = _PASS_THROUGH, CALL_C
        elif choice is not None and choice.kernel is not None:
            step.kernel = choice.kernel
            step.call = CALL_C if isinstance(choice.kernel, StepKernel) else CALL_IMPL
        elif step.params is None and type(step.prim.array_fn) is _ufunc:
            step.kernel, step.call = step.prim.array_fn, CALL_UFUNC   # no impl's frame
        else:
            step.kernel, step.call = step.prim.impl, CALL_IMPL
    return slots, sizes, n_planned, threaded


def rethreaded(list steps, list threads) -> list:
    """``steps`` with each step of signature ``s`` setting ``threads[s]`` BLAS threads
    (None: the signature's steps keep theirs); the steps that change are copies."""
    cdef list result = list(steps)
    cdef Py_ssize_t k
    cdef Instruction step
    for k in range(len(result)):
        step = <Instruction>result[k]
        if step.signature >= 0 and threads[step.signature] is not None and \
                <int>threads[step.signature] != step.threads:
            result[k] = _with_threads(step, <int>threads[step.signature])
    return result


def threaded_steps(list steps) -> list:
    """The indices of the steps that set BLAS threads."""
    cdef Py_ssize_t k
    return [k for k in range(len(steps)) if (<Instruction>steps[k]).threads >= 0]


cdef int _fill_frees(Plan plan) except -1:
    """Per step, the tuple of buffers whose last read it is (program outputs excluded):
    what the interpreter releases right after the step."""
    cdef list steps = plan.steps
    cdef Py_ssize_t n = len(steps), n_buffers = len(plan.metadata), k, b
    cdef Py_ssize_t* last = <Py_ssize_t*>malloc((n_buffers + 1) * sizeof(Py_ssize_t))
    cdef Instruction step
    try:
        if last == NULL:
            raise MemoryError()
        for b in range(n_buffers):
            last[b] = -1
        for k in range(n):
            for b in (<Instruction>steps[k]).inputs:
                last[b] = k
        for b in plan.outputs:
            last[<Py_ssize_t>b] = -1                     # handed to the caller
        for b in range(n_buffers):                       # ascending, as the buffers go
            k = last[b]
            if k >= 0:
                step = <Instruction>steps[k]
                step.frees = step.frees + (b,) if len(step.frees) else _untracked((b,))
        for k in range(n):
            step = <Instruction>steps[k]
            if len(step.frees) > 1:
                _untracked(step.frees)
        return 0
    finally:
        free(last)


cdef int _skip_broadcasts(Plan plan, list choices, double min_share) except -1:
    """Let the broadcasts of 0-d values whose every reader broadcasts the value itself pass
    it through (tenpy_ad/compiler/step_choice.py tells why)."""
    cdef list steps = plan.steps, metadata = plan.metadata
    cdef Py_ssize_t n = len(steps), n_buffers = len(metadata), k, b, count = 0
    cdef Py_ssize_t* candidate = NULL                    # by buffer: its broadcast's step
    cdef Instruction step
    for k in range(n):
        step = <Instruction>steps[k]
        if step.signature >= 0 and (<StepChoice>choices[step.signature]).passes_scalar:
            count += 1
    if count == 0 or count < min_share * n:
        return 0                     # the search would cost more than the steps it saves
    candidate = <Py_ssize_t*>malloc((n_buffers + 1) * sizeof(Py_ssize_t))
    cdef uint8_t* ruled_out = <uint8_t*>calloc(n_buffers + 1, 1)
    try:
        if candidate == NULL or ruled_out == NULL:
            raise MemoryError()
        for b in range(n_buffers):
            candidate[b] = -1
        for k in range(n):
            step = <Instruction>steps[k]
            if step.signature >= 0 and (<StepChoice>choices[step.signature]).passes_scalar:
                candidate[step.single_output] = k
        for b in plan.outputs:
            ruled_out[<Py_ssize_t>b] = 1
        for k in range(n):
            step = <Instruction>steps[k]
            for b in step.inputs:
                if candidate[b] >= 0 and not ruled_out[b] and \
                        not _broadcasts_itself(step, b, metadata, candidate):
                    ruled_out[b] = 1
        for b in range(n_buffers):
            if candidate[b] >= 0 and not ruled_out[b]:
                step = <Instruction>steps[candidate[b]]
                step.kernel, step.call = _PASS_THROUGH, CALL_C
        return 0
    finally:
        free(candidate)
        free(ruled_out)


cdef bint _broadcasts_itself(Instruction step, Py_ssize_t buffer, list metadata,
                             Py_ssize_t* candidate) except -1:
    """Whether ``step`` is a ufunc step with another operand of the full result shape that
    is not itself a broadcast that may be skipped (two skipped operands would make the
    result 0-d)."""
    cdef Py_ssize_t b
    if step.params is not None or type(step.prim.array_fn) is not _ufunc:
        return False
    shape = (<tuple>metadata[<Py_ssize_t>(<tuple>step.outputs[0])[1]])[1]
    for b in step.inputs:
        if b != buffer and candidate[b] < 0 and (<tuple>metadata[b])[1] == shape:
            return True
    return False


cdef inline Py_ssize_t _root(Py_ssize_t* parent, Py_ssize_t b) noexcept:
    """The representative of ``b``'s alias class (union-find, with path halving)."""
    while parent[b] != b:
        parent[b] = parent[parent[b]]
        b = parent[b]
    return b


cdef tuple _plan_arrays(Plan plan, list choices):
    """The planned arrays: alias classes, each class's last read, then the arrays."""
    cdef Py_ssize_t n = len(plan.steps), n_buffers = len(plan.metadata), k, b
    cdef Py_ssize_t* parent = <Py_ssize_t*>malloc((n_buffers + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t* last = <Py_ssize_t*>malloc((n_buffers + 1) * sizeof(Py_ssize_t))
    cdef uint8_t* writes = <uint8_t*>calloc(n + 1, 1)    # by step: a candidate
    try:
        if parent == NULL or last == NULL or writes == NULL:
            raise MemoryError()
        for b in range(n_buffers):
            parent[b] = b
            last[b] = -1
        _alias_classes(plan, choices, writes, parent, last)
        for b in plan.outputs:
            last[<Py_ssize_t>b] = n                      # handed to the caller
        for b in range(n_buffers):                       # per class: its last read
            k = _root(parent, b)
            if last[b] > last[k]:
                last[k] = last[b]
        return _assign_arrays(plan, choices, writes, parent, last)
    finally:
        free(parent)
        free(last)
        free(writes)


cdef int _alias_classes(Plan plan, list choices, uint8_t* writes, Py_ssize_t* parent,
                        Py_ssize_t* last) except -1:
    """Last reads per buffer, the candidates (steps whose choice writes into a planned
    array, not passed through) and the alias classes: a result that may be a view joins
    its operands' class."""
    cdef Py_ssize_t k, b, a, ra, rb
    cdef Instruction step
    cdef StepChoice choice
    for k in range(len(plan.steps)):
        step = <Instruction>plan.steps[k]
        for b in step.inputs:
            last[b] = k
        for _, b in step.outputs:
            last[b] = k                                  # defined here
        choice = None if step.signature < 0 else <StepChoice>choices[step.signature]
        if choice is not None:
            if step.single_output >= 0 and choice.into is not None and step.call < 0:
                writes[k] = 1
                continue                                 # new memory
            if choice.fresh:
                continue
        for _, b in step.outputs:                        # may be a view of any operand
            for a in step.inputs:
                ra, rb = _root(parent, a), _root(parent, b)
                if ra != rb:
                    parent[rb] = ra
    return 0


cdef inline Py_ssize_t _product(tuple shape):
    cdef Py_ssize_t p = 1
    for d in shape:
        p *= <Py_ssize_t>d
    return p


cdef tuple _assign_arrays(Plan plan, list choices, uint8_t* writes, Py_ssize_t* parent,
                          Py_ssize_t* last):
    """Visit the steps in order: a candidate whose class ends before the program does takes
    an idle array of its size (or a new one), which is idle again after that end; its
    scratch arrays (its choice's ``scratch``: bytes of each) are idle again right after the
    step.  Steps of one array, dtype and shape share a slot (a deep chain has millions of
    steps and a few slots); the releases wait in C lists per step."""
    cdef Py_ssize_t n = len(plan.steps), k, b, end, array, e, n_events = 0, n_planned = 0
    cdef list sizes = [], slots = []
    cdef list itemsizes = [d.itemsize for d in _dtype_objects]
    cdef dict idle = {}, slot_of = {}
    cdef tuple meta, indices
    cdef Instruction step
    cdef StepChoice choice
    for k in range(n):
        if writes[k]:
            step = <Instruction>plan.steps[k]
            n_events += 1 + len((<StepChoice>choices[step.signature]).scratch)
    cdef Py_ssize_t* head = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t* event = <Py_ssize_t*>malloc((2 * n_events + 1) * sizeof(Py_ssize_t))
    try:
        if head == NULL or event == NULL:
            raise MemoryError()
        for k in range(n):
            head[k] = -1
        n_events = 0                    # event e: array event[2e], next event[2e + 1]
        for k in range(n):
            step = <Instruction>plan.steps[k]
            if writes[k]:
                b = step.single_output
                end = last[_root(parent, b)]
                if end < n:
                    choice = <StepChoice>choices[step.signature]
                    meta = <tuple>plan.metadata[b]
                    array = _take_array(
                        itemsizes[<Py_ssize_t>meta[0]] * _product(<tuple>meta[1]), idle, sizes)
                    n_events = _release_after(head, event, n_events, end, array)
                    if choice.scratch:
                        arrays = [array]
                        for size in choice.scratch:
                            scratch = _take_array(size, idle, sizes) if size else -1
                            arrays.append(scratch)
                            if size:
                                n_events = _release_after(head, event, n_events, k, scratch)
                        indices = tuple(arrays)
                    else:
                        indices = (array,)
                    step.planned = _slot(slot_of, slots, indices, meta[0], choice.shape)
                    step.kernel = choice.into
                    step.call = CALL_C if isinstance(choice.into, StepKernel) else \
                        CALL_UFUNC_INTO if type(choice.into) is _ufunc else CALL_INTO
                    n_planned += 1
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
    return slots, sizes, n_planned


cdef Py_ssize_t _slot(dict slot_of, list slots, tuple indices, object code, tuple shape) \
        except -1:
    """The slot of arrays ``indices`` seen as ``shape`` of dtype ``code``, added when new."""
    key = (indices, code, shape)
    found = slot_of.get(key)
    if found is None:
        found = slot_of[key] = len(slots)
        # numbers, a dtype and a shape: no cycle can pass through it
        slots.append(_untracked((_untracked(indices), _dtype_objects[<Py_ssize_t>code],
                                 shape)))
    return <Py_ssize_t>found


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

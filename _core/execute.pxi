# The Program interpreter: it reads each step's record (an Instruction as plan_steps in
# schedule.pxi filled it in: what to call and how, its planned array, its BLAS threads,
# the buffers dead after it) and runs it on a buffer list, as an evaluator reads a list
# of equations.


def set_nonfinite_check(object hook) -> None:
    """Install ``hook(where, outputs, inputs)`` to vet every computed value: Program
    instructions, eager operations and eager VJP rules (None disables)."""
    global _check_finite, _nonfinite_hook
    _nonfinite_hook = hook
    _check_finite = hook is not None


@cython.final
cdef class StepTable:
    """A Plan's steps (Instructions whose records ``plan_steps`` filled in) packed for the
    interpreter: per step one 64-byte StepRecord in one C array, its buffer numbers in
    another.  A 16k-step program then reads two sequential arrays instead of an object,
    two tuples and their ints per step (which a call after other work finds out of the
    cache).  The table holds the steps, which own what the records point to."""

    def __cinit__(self, list steps):
        cdef Py_ssize_t k, j, total = 0, n = len(steps)
        cdef Instruction step
        cdef StepRecord* record
        cdef Py_ssize_t* slot
        for k in range(n):
            step = <Instruction>steps[k]
            total += len(step.inputs) + len(step.frees)
        self.steps = list(steps)
        self.n_steps = n
        self.records = <StepRecord*>calloc(max(n, 1), sizeof(StepRecord))
        self.slots = <Py_ssize_t*>malloc(max(total, 1) * sizeof(Py_ssize_t))
        if self.records == NULL or self.slots == NULL:
            raise MemoryError()
        slot = self.slots
        for k in range(n):
            step = <Instruction>self.steps[k]
            record = &self.records[k]
            record.kernel = <PyObject*>step.kernel
            record.params = <PyObject*>step.params
            record.outputs = <PyObject*>step.outputs
            record.slots = slot
            record.single_output = step.single_output
            record.n_inputs = len(step.inputs)
            record.n_frees = len(step.frees)
            record.call, record.planned, record.threads = step.call, step.planned, step.threads
            for j in range(record.n_inputs):
                slot[j] = step.inputs[j]
            for j in range(record.n_frees):
                slot[record.n_inputs + j] = step.frees[j]
            slot += record.n_inputs + record.n_frees

    def __dealloc__(self):
        free(self.records)
        free(self.slots)


def execute(StepTable table, list buffers, list arrays=None, BlasThreads blas=None) -> None:
    """Run each step of ``table`` in turn on ``buffers``: its ``kernel`` called as its
    ``call`` says, into its planned array ``arrays[step.planned]`` (``arrays``: a set of
    the program's planned arrays, as ``MemoryPlan.new_arrays`` makes it) if it has one;
    then the buffers it ``frees`` are released.  With ``blas`` (entered by the caller)
    each step that sets BLAS threads switches them first."""
    cdef Py_ssize_t k, j, n = table.n_steps
    cdef StepRecord* step
    cdef object out, result
    for k in range(n):
        step = &table.records[k]
        if blas is not None and step.threads >= 0:
            blas.switch(step.threads)
        out = None if step.planned < 0 else arrays[step.planned]
        try:
            result = _run_step(step, out, buffers)
        except Exception as error:
            if hasattr(error, "add_note"):
                error.add_note(f"tenpy_ad: raised by instruction {k} "
                               f"({(<Instruction>table.steps[k]).prim.name})")
            raise
        if step.single_output >= 0:
            buffers[step.single_output] = result
        else:
            for pair in <tuple>step.outputs:
                buffers[<Py_ssize_t>pair[1]] = result[<Py_ssize_t>pair[0]]
        if _check_finite:
            _nonfinite_hook(f"'{(<Instruction>table.steps[k]).prim.name}' (program "
                            f"instruction {k})", result,
                            _operands(step.slots, step.n_inputs, buffers))
        for j in range(step.n_inputs, step.n_inputs + step.n_frees):
            buffers[step.slots[j]] = None
    _counters.instructions_run += n


cdef inline object _run_step(StepRecord* step, object out, list buffers):
    """The result of ``step`` (see StepCall in tenpy_ad/_core.pxd)."""
    cdef int call = step.call
    cdef object kernel = <object>step.kernel, params = <object>step.params
    cdef Py_ssize_t m = step.n_inputs
    if call == CALL_C:
        return (<StepKernel>kernel).run(out, params, step.slots, m, buffers)
    if call == CALL_UFUNC:
        return _call_ufunc(kernel, step.slots, m, buffers)
    if call == CALL_IMPL:
        return _call(kernel, params, step.slots, m, buffers)
    if call == CALL_UFUNC_INTO:
        return _call_ufunc_into(kernel, out, step.slots, m, buffers)
    return kernel(out, params, *_operands(step.slots, m, buffers))


cdef inline list _operands(const Py_ssize_t* ins, Py_ssize_t m, list buffers):
    return [buffers[ins[j]] for j in range(m)]


cdef inline object _call(object kernel, object params, const Py_ssize_t* ins, Py_ssize_t m,
                         list buffers):
    if m == 1:
        return kernel(params, buffers[ins[0]])
    if m == 2:
        return kernel(params, buffers[ins[0]], buffers[ins[1]])
    return kernel(params, *_operands(ins, m, buffers))


cdef inline object _call_ufunc(object ufunc, const Py_ssize_t* ins, Py_ssize_t m,
                               list buffers):
    if m == 1:
        return ufunc(buffers[ins[0]])
    if m == 2:
        return ufunc(buffers[ins[0]], buffers[ins[1]])
    return ufunc(*_operands(ins, m, buffers))


cdef inline object _call_ufunc_into(object ufunc, object out, const Py_ssize_t* ins,
                                    Py_ssize_t m, list buffers):
    if not _numpy_allocates_c_order(ins, m, buffers):
        return _call_ufunc(ufunc, ins, m, buffers)       # NumPy's layout, as without a plan
    if m == 1:
        return ufunc(buffers[ins[0]], out=out)
    if m == 2:
        return ufunc(buffers[ins[0]], buffers[ins[1]], out=out)
    return ufunc(*_operands(ins, m, buffers), out=out)

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


def execute(list steps, list buffers, list arrays=None, BlasThreads blas=None) -> None:
    """Run each step of ``steps`` (Instructions whose records ``plan_steps`` filled in) in
    turn on ``buffers``: its ``kernel`` called as its ``call`` says, into its planned array
    ``arrays[step.planned]`` (``arrays``: a set of the program's planned arrays, as
    ``MemoryPlan.new_arrays`` makes it) if it has one; then the buffers it ``frees`` are
    released.  With ``blas`` (entered by the caller) each step that sets BLAS threads
    switches them first."""
    cdef Py_ssize_t k, n = len(steps)
    cdef Instruction step
    cdef object out, result
    for k in range(n):
        step = <Instruction>steps[k]
        if blas is not None and step.threads >= 0:
            blas.switch(step.threads)
        out = None if step.planned < 0 else arrays[step.planned]
        try:
            result = _run_step(step, out, buffers)
        except Exception as error:
            if hasattr(error, "add_note"):
                error.add_note(f"tenpy_ad: raised by instruction {k} ({step.prim.name})")
            raise
        if step.single_output >= 0:
            buffers[step.single_output] = result
        else:
            for pair in step.outputs:
                buffers[<Py_ssize_t>pair[1]] = result[<Py_ssize_t>pair[0]]
        if _check_finite:
            _nonfinite_hook(f"'{step.prim.name}' (program instruction {k})", result,
                            [buffers[<Py_ssize_t>s] for s in step.inputs])
        for s in step.frees:
            buffers[<Py_ssize_t>s] = None
    _counters.instructions_run += n


cdef inline object _run_step(Instruction step, object out, list buffers):
    """The result of ``step`` (see StepCall in tenpy_ad/_core.pxd)."""
    cdef int call = step.call
    if call == CALL_C:
        return (<StepKernel>step.kernel).run(out, step.params, step.inputs, buffers)
    if call == CALL_UFUNC:
        return _call_ufunc(step.kernel, step.inputs, buffers)
    if call == CALL_IMPL:
        return _call(step.kernel, step.params, step.inputs, buffers)
    if call == CALL_UFUNC_INTO:
        return _call_ufunc_into(step.kernel, out, step.inputs, buffers)
    return step.kernel(out, step.params, *[buffers[<Py_ssize_t>s] for s in step.inputs])


cdef inline object _call(object kernel, object params, tuple ins, list buffers):
    cdef Py_ssize_t m = len(ins)
    if m == 1:
        return kernel(params, buffers[<Py_ssize_t>ins[0]])
    if m == 2:
        return kernel(params, buffers[<Py_ssize_t>ins[0]], buffers[<Py_ssize_t>ins[1]])
    return kernel(params, *[buffers[<Py_ssize_t>s] for s in ins])


cdef inline object _call_ufunc(object ufunc, tuple ins, list buffers):
    cdef Py_ssize_t m = len(ins)
    if m == 1:
        return ufunc(buffers[<Py_ssize_t>ins[0]])
    if m == 2:
        return ufunc(buffers[<Py_ssize_t>ins[0]], buffers[<Py_ssize_t>ins[1]])
    return ufunc(*[buffers[<Py_ssize_t>s] for s in ins])


cdef inline object _call_ufunc_into(object ufunc, object out, tuple ins, list buffers):
    cdef Py_ssize_t m = len(ins)
    if not _numpy_allocates_c_order(ins, buffers):
        return _call_ufunc(ufunc, ins, buffers)          # NumPy's layout, as without a plan
    if m == 1:
        return ufunc(buffers[<Py_ssize_t>ins[0]], out=out)
    if m == 2:
        return ufunc(buffers[<Py_ssize_t>ins[0]], buffers[<Py_ssize_t>ins[1]], out=out)
    return ufunc(*[buffers[<Py_ssize_t>s] for s in ins], out=out)

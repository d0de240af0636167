# The Program interpreter: the steps of a Plan (schedule.pxi) over a buffer list.  Buffers
# are released right after their last use (the compiler computes ``frees``); planned
# arrays, BLAS thread counts and the functions to call per step come from
# tenpy_ad/program.py.


def set_nonfinite_check(object hook) -> None:
    """Install ``hook(where, outputs, inputs)`` to vet every computed value: Program
    instructions, eager operations and eager VJP rules (None disables)."""
    global _check_finite, _nonfinite_hook
    _nonfinite_hook = hook
    _check_finite = hook is not None


def execute(list steps, list frees, list buffers, list kernels=None, list outs=None,
            list threads=None, BlasThreads blas=None) -> None:
    """Run each Instruction of ``steps`` in turn on ``buffers``; ``frees[k]`` lists the
    buffers dead after step ``k``.  Optional per-step lists (None: plain impl calls):

    * ``kernels[k]``: what computes step k instead of ``prim.impl`` (None: the impl, or
      for a ufunc primitive without params its ufunc), called as the impl is,
      ``kernel(params, *inputs)``, or a StepKernel (small_kernels.pxi), run in C;
    * ``outs[k]``: an array step k writes its result into, or None; the kernel is then a
      ufunc, called as ``kernel(*inputs, out=out)``, or ``kernel(out, params, *inputs)``;
    * ``threads[k]``: the BLAS threads of step k (None: as they are), switched through
      ``blas``, which the caller has entered.
    """
    cdef Py_ssize_t k, n = len(steps)
    cdef Instruction step
    cdef object kernel, out, count
    cdef bint plain_ufunc
    for k in range(n):
        step = <Instruction>steps[k]
        kernel = None if kernels is None else kernels[k]
        plain_ufunc = False
        if kernel is None:
            # a ufunc primitive without params: its array_fn is its impl (as bind takes
            # it for arrays), called without the impl's Python frame
            plain_ufunc = step.params is None and type(step.prim.array_fn) is _ufunc
            kernel = step.prim.array_fn if plain_ufunc else step.prim.impl
        out = None if outs is None else outs[k]
        if threads is not None:
            count = threads[k]
            if count is not None:
                blas.switch(<int>count)
        try:
            if isinstance(kernel, StepKernel):
                result = (<StepKernel>kernel).run(out, step.params, step.inputs, buffers)
            elif plain_ufunc:
                result = _call_ufunc(kernel, step.inputs, buffers)
            elif out is None:
                result = _call(kernel, step.params, step.inputs, buffers)
            else:
                result = _call_into(kernel, out, step.params, step.inputs, buffers)
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
        for s in <tuple>frees[k]:
            buffers[<Py_ssize_t>s] = None
    _counters.instructions_run += n


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


cdef inline object _call_into(object kernel, object out, object params, tuple ins,
                              list buffers):
    cdef Py_ssize_t m = len(ins)
    if isinstance(kernel, _np.ufunc):
        if not _numpy_allocates_c_order(ins, buffers):
            return _call_ufunc(kernel, ins, buffers)     # NumPy's layout, as without a plan
        if m == 1:
            return kernel(buffers[<Py_ssize_t>ins[0]], out=out)
        if m == 2:
            return kernel(buffers[<Py_ssize_t>ins[0]], buffers[<Py_ssize_t>ins[1]], out=out)
        return kernel(*[buffers[<Py_ssize_t>s] for s in ins], out=out)
    return kernel(out, params, *[buffers[<Py_ssize_t>s] for s in ins])

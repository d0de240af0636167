# The Program interpreter: the steps of a Plan (schedule.pxi) over a buffer list.  Buffers
# are released right after their last use (the compiler computes ``frees``).


def set_nonfinite_check(object hook) -> None:
    """Install ``hook(where, outputs, inputs)`` to vet every computed value: Program
    instructions, eager operations and eager VJP rules (None disables)."""
    global _check_finite, _nonfinite_hook
    _nonfinite_hook = hook
    _check_finite = hook is not None


def execute(list steps, list frees, list buffers) -> None:
    """Run each Instruction of ``steps`` in turn on ``buffers``; ``frees[k]`` lists the
    buffers dead after step ``k``."""
    cdef Py_ssize_t k, m, s, n = len(steps)
    cdef Instruction step
    cdef tuple ins
    for k in range(n):
        step = <Instruction>steps[k]
        ins = step.inputs
        m = len(ins)
        try:
            if m == 1:
                result = step.prim.impl(step.params, buffers[<Py_ssize_t>ins[0]])
            elif m == 2:
                result = step.prim.impl(step.params, buffers[<Py_ssize_t>ins[0]],
                                        buffers[<Py_ssize_t>ins[1]])
            else:
                result = step.prim.impl(step.params, *[buffers[<Py_ssize_t>s] for s in ins])
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
                            [buffers[<Py_ssize_t>s] for s in ins])
        for s in <tuple>frees[k]:
            buffers[s] = None
    _counters.instructions_run += n

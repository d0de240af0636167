# The Program interpreter: a flat instruction list over a buffer list.  Buffers are
# released right after their last use (the compiler computes ``frees``).

cdef bint _check_finite = False
cdef object _nonfinite_hook = None


def set_nonfinite_check(object hook) -> None:
    """Install ``hook(where, outputs, inputs)`` to vet every computed value: Program
    instructions, eager operations and eager VJP rules (None disables)."""
    global _check_finite, _nonfinite_hook
    _nonfinite_hook = hook
    _check_finite = hook is not None


def execute(list impls, list params, list in_slots, list out_slots, list frees,
            list buffers, list names) -> None:
    """Run instructions ``k = 0..n-1``: ``out_slots[k] <- impls[k](params[k], *in_slots[k])``.

    ``out_slots[k]`` is a buffer index, or for multi-output instructions a tuple of
    ``(output slot, buffer index)`` pairs.  ``frees[k]`` lists buffers dead after ``k``.
    """
    cdef Py_ssize_t k, m, s, n = len(impls)
    cdef tuple ins, outs
    for k in range(n):
        ins = <tuple>in_slots[k]
        m = len(ins)
        try:
            if m == 1:
                result = impls[k](params[k], buffers[<Py_ssize_t>ins[0]])
            elif m == 2:
                result = impls[k](params[k], buffers[<Py_ssize_t>ins[0]],
                                  buffers[<Py_ssize_t>ins[1]])
            else:
                result = impls[k](params[k], *[buffers[<Py_ssize_t>s] for s in ins])
        except Exception as error:
            if hasattr(error, "add_note"):
                error.add_note(f"tenpy_ad: raised by instruction {k} ({names[k]})")
            raise
        target = out_slots[k]
        if type(target) is int:
            buffers[<Py_ssize_t>target] = result
        else:
            outs = <tuple>target
            for pair in outs:
                buffers[<Py_ssize_t>pair[1]] = result[<Py_ssize_t>pair[0]]
        if _check_finite:
            _nonfinite_hook(f"'{names[k]}' (program instruction {k})", result,
                            [buffers[<Py_ssize_t>s] for s in ins])
        for s in <tuple>frees[k]:
            buffers[s] = None
    _counters.instructions_run += n

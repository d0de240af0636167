# Primitives: an operation of the graph with its rules side by side.  A primitive starts
# with rule stubs that raise, so a missing JVP or VJP names itself in every mode (traced
# transforms, eager backward, grad_of) instead of failing as a call of None.

@cython.no_gc    # primitives live for the whole process; keys holding them can then be
@cython.final    # untracked by Python's cycle collector, which keeps big graphs cheap for it
cdef class Primitive:
    """An operation of the graph, with its rules side by side.

    ``impl(params, *arrays)``            -> ndarray (or tuple for multi-output primitives)
    ``shape_rule(params, *inputs)``      -> ``(dtype_code, shape)`` (or a list of them)
    ``jvp(params, tangents, out, xs)``   -> output tangent (tuple for multi-output); tangents
                                            hold ``None`` for symbolic zeros
    ``vjp(params, ct, out, xs, active)`` -> tuple of input cotangents (``None`` = zero); only
                                            entries with ``active[i]`` true are used
    ``format_params(params)``            -> short text for program listings
    ``array_fn(*arrays)``                -> optional NumPy function used when params is None
    ``elementwise``                      -> output has the dtype and shape of input 0 (lets
                                            the traced fast path skip the shape rule)
    ``check_params(params)``             -> raises ParamError unless params fit the
                                            primitive's schema (tenpy_ad.param_schema);
                                            None: the primitive takes no params
    ``scalar_kinds``                     -> bit k set: a Scalar of kind k is valid params,
                                            accepted in C (scale, shift, pow: hot paths)
    ``step_facts``                       -> what compiling its program steps needs (fresh
                                            results, planned writes, C kernels, BLAS work:
                                            tenpy_ad.step_facts), or None
    ``blocks_derivatives``               -> its derivative is zero by definition
                                            (stop_gradient): the reverse sweeps do not count
                                            what lies past it as depending on the inputs, so
                                            no rule there is asked for a cotangent

    ``jvp`` and ``vjp`` start as :class:`MissingRule` stubs that raise MissingRuleError
    (a NotImplementedError).
    """

    def __init__(self, str name, int n_outputs=1):
        self.name = name
        self.n_outputs = n_outputs
        self.jvp = MissingRule(name, "JVP")
        self.vjp = MissingRule(name, "VJP")
        self.check_params = None
        self.scalar_kinds = 0
        self.step_facts = None
        self.blocks_derivatives = False
        self.fingerprint = _mix(0x7072696D, _fp_bytes(name.encode("utf-8")))

    def __repr__(self):
        return f"Primitive({self.name!r})"


@cython.final
cdef class MissingRule:
    """The JVP or VJP of a primitive that has none: calling it raises MissingRuleError (a
    NotImplementedError)."""

    def __init__(self, str primitive_name, str kind):
        self.primitive_name = primitive_name
        self.kind = kind

    def __call__(self, *args):
        raise _errors["MissingRuleError"](f"no {self.kind} rule for '{self.primitive_name}'")

    def __repr__(self):
        return f"<no {self.kind} rule for {self.primitive_name!r}>"

# Derivative rules assembled from per-input pieces (see tenpy_ad/rules.py).  The engine
# calls ``prim.jvp(params, tangents, out, xs)`` and ``prim.vjp(params, ct, out, xs,
# active)``; these callables build both from one rule per input and are the one place
# that skips symbolic zeros (None tangents) and inputs that need no cotangent.

@cython.final
cdef class PerInputJVP:
    """``sum_i rules[i](params, t_i, out, *xs)`` over the inputs with a tangent."""
    cdef readonly tuple rules

    def __init__(self, tuple rules):
        self.rules = rules

    def __call__(self, params, tuple tangents, out, tuple xs):
        cdef Py_ssize_t i, n = len(tangents)
        total = None
        for i in range(n):
            t = tangents[i]
            if t is None:
                continue
            if n == 1:
                part = self.rules[0](params, t, out, xs[0])
            elif n == 2:
                part = self.rules[i](params, t, out, xs[0], xs[1])
            else:
                part = self.rules[i](params, t, out, *xs)
            if part is not None:
                total = part if total is None else total + part
        return total


@cython.final
cdef class PerInputVJP:
    """``(rules[i](params, ct, out, *xs) if active[i] else None for each input i)``."""
    cdef readonly tuple rules

    def __init__(self, tuple rules):
        self.rules = rules

    def __call__(self, params, ct, out, tuple xs, tuple active):
        cdef Py_ssize_t i, n = len(xs)
        if n == 1:
            return (self.rules[0](params, ct, out, xs[0]),)
        if n == 2:
            return (self.rules[0](params, ct, out, xs[0], xs[1]) if active[0] else None,
                    self.rules[1](params, ct, out, xs[0], xs[1]) if active[1] else None)
        return tuple([self.rules[i](params, ct, out, *xs) if active[i] else None
                      for i in range(n)])

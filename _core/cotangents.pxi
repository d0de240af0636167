# Cotangents as the sweeps carry them: ``None`` is a symbolic zero, anything else a value
# of the sweep's kind (TracedTensor, ndarray, or Tensor with ``create_graph``).  All three
# sweeps (graph_sweep.pxi, eager_backward.pxi) add cotangents here.

cpdef object add_cotangents(object a, object b):
    """``a + b`` of two cotangents of one shape and dtype."""
    return bind2(_add_p, None, a, b)

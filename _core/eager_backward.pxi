# The eager reverse sweep behind ``Tensor.backward()`` and ``tp.grad_of``: one sweep over the
# tape (``_sweep_tape``) and its entry points.  The VJP rules are the same functions the
# traced transform uses; here they receive ndarrays (or Tensors, with ``create_graph=True``,
# so that the backward pass is itself recorded).

cpdef object backward(Tensor t, object gradient=None, object retain_graph=None,
                      bint create_graph=False):
    """``t.backward(...)`` (PyTorch's ``backward``): add the cotangents that reach the
    grad-requiring leaves from ``t``, seeded with ``gradient`` (None: ``t`` has one
    element), into their ``.grad``."""
    if not t._requires_grad:
        raise _errors["GraphError"]("backward(): this tensor does not require grad and has "
                                    "no tape; create the inputs with requires_grad=True")
    try:
        seed = eager_seed(t, gradient, create_graph)
    except (_errors["GraphError"], _errors["ShapeError"], _errors["DTypeError"]) as error:
        raise type(error)(f"backward(): {error}") from None
    eager_backward(t, seed, create_graph if retain_graph is None else bool(retain_graph),
                   create_graph)


cpdef object eager_seed(Tensor t, object gradient, bint create_graph):
    """The cotangent that seeds a sweep from ``t``: ones for a one-element ``t`` without
    ``gradient``, else ``gradient`` checked against ``t`` and cast to its dtype; a Tensor
    with ``create_graph``."""
    cdef object data = t.data
    if gradient is None:
        if data.size != 1:
            raise _errors["GraphError"](
                f"the output has shape {list(data.shape)}; pass a gradient (cotangent) of "
                "that shape for non-scalar outputs")
        seed = _np.ones_like(data)
    else:
        seed = (<Tensor>gradient).data if type(gradient) is Tensor else _array_of(gradient)
        if seed.shape != data.shape:
            raise _errors["ShapeError"](f"the cotangent has shape {list(seed.shape)}, the "
                                        f"output {list(data.shape)}")
        _check_seed_dtype(seed.dtype, data.dtype)
        seed = seed.astype(data.dtype, copy=False)
    if create_graph:
        return gradient if type(gradient) is Tensor else _wrap(seed, None, 0)
    return seed


cdef object _array_of(object value):
    """``np.asarray(value)``, a ragged nested sequence reported as a ShapeError."""
    if type(value) is _ndarray:
        return value
    try:
        return _asarray(value)
    except ValueError as error:
        if "inhomogeneous" not in str(error):
            raise
        raise _errors["ShapeError"](
            f"gradient: the nested sequence is ragged (its lists differ in length), so it "
            f"is not an array; NumPy says: {error}") from None


cdef int _check_seed_dtype(object seed, object output) except -1:
    """A cotangent is numeric, and complex only for a complex output (no silent drop of
    its imaginary part)."""
    if seed.kind not in "biufc":
        raise _errors["DTypeError"](f"the cotangent has dtype {seed}, not a number")
    if seed.kind == "c" and output.kind != "c":
        raise _errors["DTypeError"](f"the cotangent is complex ({seed}) but the output is "
                                    f"{output}")
    return 0


def eager_backward(Tensor root, object seed, bint retain_graph, bint create_graph) -> None:
    """Add the cotangents that reach grad-requiring leaves from ``root`` (seeded with
    ``seed``) into their ``.grad``."""
    cdef list entry
    for entry in _sweep_tape(root, seed, retain_graph, create_graph, None, None,
                             "backward").values():
        _accumulate_leaf(<Tensor>entry[0], entry[1], create_graph)


def eager_cotangents(Tensor root, object seed, list tensors, bint retain_graph,
                     bint create_graph) -> list:
    """The cotangent of each of ``tensors`` (None where it has no path to ``root``); no
    ``.grad`` is written (PyTorch's ``autograd.grad``)."""
    cdef dict wanted = {}             # _tensor_key -> positions in ``tensors``
    cdef list captured = [None] * len(tensors)
    cdef Py_ssize_t k
    for k in range(len(tensors)):
        wanted.setdefault(_tensor_key(<Tensor?>tensors[k]), []).append(k)
    leaves = _sweep_tape(root, seed, retain_graph, create_graph, wanted, captured,
                         "grad_of")
    for key, entry in leaves.items():
        for k in wanted.get(key, ()):
            captured[k] = _dense_of(entry[1])
    return captured


cdef inline object _tensor_key(Tensor t):
    """A leaf by its address, an intermediate tensor by (address of its entry, slot)."""
    return _address(t) if t._node is None else (_address(t._node), t._slot)


cdef dict _sweep_tape(Tensor root, object seed, bint retain_graph, bint create_graph,
                      dict wanted, list captured, str api):
    """The reverse sweep over the tape of ``root`` with cotangent ``seed``.

    Returns the cotangents that reach grad-requiring leaves, ``{id(leaf): [leaf, ct]}``.
    If ``wanted`` maps keys of tensors to positions in ``captured``, their cotangents are
    stored there as the sweep passes, and only the entries that depend on a wanted tensor
    run their rule.  Cotangents are ndarrays, or Tensors when ``create_graph``.  Saved
    values are released as the sweep passes each entry unless ``retain_graph``.  ``api``
    names the caller in errors.
    """
    cdef dict leaves = {}
    cdef dict index = {}
    cdef list order, cts
    cdef bytearray relevant = None
    cdef TapeNode node
    cdef Py_ssize_t i
    if root._node is None:
        if root._requires_grad:
            leaves[_address(root)] = [root, seed]
        return leaves
    order = _eager_toposort([root._node], index)
    cts = _seed_tape(order, root, seed)
    if wanted is not None:
        relevant = _depends_on_wanted(order, index, wanted)
    for i in range(len(order) - 1, -1, -1):
        node = <TapeNode>order[i]
        ct = cts[i]
        cts[i] = None
        if ct is None:
            continue
        if wanted is not None:
            _capture(node, ct, wanted, captured)
            if not relevant[i]:
                continue               # no wanted tensor lies behind this entry
        elif node.cut_off:
            continue                   # a stop_gradient lies between it and every leaf
        if node.prim.n_outputs > 1:
            ct = _nonzero_tuple(<list>ct)
            if ct is None:
                continue
        mask = (_parent_mask(node.parents) if wanted is None
                else _wanted_mask(node, relevant, index, wanted))
        input_cts = _run_tape_vjp(node, ct, create_graph, api, mask)
        _send_cotangents(node, input_cts, cts, index, leaves)
        if not retain_graph:
            node.saved_inputs = None
            node.saved_outputs = None
            node.released = True
    return leaves


cdef bint _leads_to_wanted(TapeNode node, Py_ssize_t j, bytearray relevant, dict index,
                           dict wanted):
    """Whether input ``j`` of ``node`` is a wanted tensor or depends on one (``relevant``
    filled for the entries before ``node``)."""
    parent = node.parents[j]
    if parent is None:
        return False
    if type(parent) is Tensor:
        return _address(parent) in wanted
    return bool(relevant[<Py_ssize_t>index[_address(parent)]]
                or (_address(parent), node.parent_slots[j]) in wanted)


cdef bytearray _depends_on_wanted(list order, dict index, dict wanted):
    """Per tape position, whether the entry has a wanted tensor among its inputs or their
    producers: only those entries' rules carry cotangents towards a wanted tensor."""
    cdef bytearray relevant = bytearray(len(order))
    cdef TapeNode node
    cdef Py_ssize_t i, j
    for i in range(len(order)):
        node = <TapeNode>order[i]
        if node.prim.blocks_derivatives:
            continue                   # stop_gradient: nothing behind it gets a cotangent
        for j in range(len(node.parents)):
            if _leads_to_wanted(node, j, relevant, index, wanted):
                relevant[i] = 1
                break
    return relevant


cdef tuple _wanted_mask(TapeNode node, bytearray relevant, dict index, dict wanted):
    """The inputs of ``node`` whose cotangents reach a wanted tensor: the only ones its
    rule is asked for (as PyTorch's ``autograd.grad``; a rule that cannot differentiate an
    input, ``gammainc``'s ``a``, is then not asked about an input nobody wants)."""
    return tuple([_leads_to_wanted(node, j, relevant, index, wanted)
                  for j in range(len(node.parents))])


cdef list _seed_tape(list order, Tensor root, object seed):
    """Per tape position, the cotangent (a list by slot for multi-output entries): ``seed``
    at the root, which is last in the order."""
    cdef list cts = [None] * len(order)
    cdef Py_ssize_t k = len(order) - 1
    cdef int n_out = (<TapeNode>order[k]).prim.n_outputs
    if n_out > 1:
        cts[k] = [None] * n_out
        cts[k][root._slot] = seed
    else:
        cts[k] = seed
    return cts


cdef int _capture(TapeNode node, object ct, dict wanted, list captured) except -1:
    """Store the cotangents of ``node``'s outputs that ``wanted`` asks for."""
    cdef int j, n_out = node.prim.n_outputs
    for j in range(n_out):
        positions = wanted.get((_address(node), j))
        if positions is not None:
            for k in positions:
                captured[k] = _dense_of((<list>ct)[j] if n_out > 1 else ct)
    return 0


cdef object _nonzero_tuple(list ct):
    """The cotangents of a multi-output entry as a tuple, or None if all are zero."""
    for c in ct:
        if c is not None:
            return tuple(ct)
    return None


cdef tuple _rule_operands(TapeNode node, bint create_graph):
    """The inputs and outputs a tape node's rule sees: the saved arrays, or (to record the
    rule itself, ``create_graph``) Tensors connected to the tape."""
    cdef Py_ssize_t j, n_out = node.prim.n_outputs
    xs = node.saved_inputs
    out = node.saved_outputs
    if create_graph:
        xs = tuple([_as_tensor_input(xs[j], node.parents[j], node.parent_slots[j])
                    for j in range(len(xs))])
        if n_out > 1:
            out = tuple([_wrap(out[j], node, <int>j) for j in range(n_out)])
        else:
            out = _wrap(out, node, 0)
    return xs, out


cdef object _run_tape_vjp(TapeNode node, object ct, bint create_graph, str api,
                          tuple mask):
    """The input cotangents from ``node``'s VJP rule (on Tensors if ``create_graph``) for
    the inputs ``mask`` marks; an entrywise rule's keep the block of a BlockCotangent
    ``ct``."""
    cdef Py_ssize_t n_out = node.prim.n_outputs
    if node.released:
        raise _freed_tape_error(node, api)
    xs, out = _rule_operands(node, create_graph)
    _counters.eager_swept += 1
    box = _kept_box(node.prim, ct)
    ct = _for_rule(node.prim, ct)
    input_cts = node.prim.vjp(node.params, ct, out, xs, mask)
    if _check_finite:
        _nonfinite_hook(f"the VJP of '{node.prim.name}' (eager backward)",
                        tuple([_dense_of(c) for c in input_cts if c is not None]),
                        (_dense_of(ct),) if n_out == 1 else
                        tuple([_dense_of(c) for c in ct]))
    return input_cts if box is None else _boxed(input_cts, box)


cdef object _freed_tape_error(TapeNode node, str api):
    """A sweep reached an entry whose saved values a backward without retain_graph freed."""
    return _errors["TapeError"](
        f"{api}: the graph has been freed by a previous backward() or grad_of() (the "
        f"values saved by '{node.prim.name}' were released); call backward("
        f"retain_graph=True) the first time (grad_of takes retain_graph=True too)")


cdef int _send_cotangents(TapeNode node, object input_cts, list cts, dict index,
                          dict leaves) except -1:
    """Accumulate ``input_cts`` into the parents of ``node``: tape entries in ``cts`` (by
    slot for multi-output ones), leaves in ``leaves``."""
    cdef Py_ssize_t j, k
    cdef int slot
    for j in range(len(node.parents)):
        parent = node.parents[j]
        if parent is None:
            continue
        c = input_cts[j]
        if c is None:
            continue
        if type(parent) is Tensor:
            key = _address(parent)
            entry = leaves.get(key)
            if entry is None:
                leaves[key] = [parent, c]
            else:
                (<list>entry)[1] = add_cotangents((<list>entry)[1], c)
            continue
        k = index[_address(parent)]
        if (<TapeNode>parent).prim.n_outputs > 1:
            if cts[k] is None:
                cts[k] = [None] * (<TapeNode>parent).prim.n_outputs
            slot = node.parent_slots[j]
            cts[k][slot] = c if cts[k][slot] is None else add_cotangents(cts[k][slot], c)
        else:
            cts[k] = c if cts[k] is None else add_cotangents(cts[k], c)
    return 0


cdef _accumulate_leaf(Tensor leaf, object ct, bint create_graph):
    """``leaf.grad += ct`` (PyTorch's accumulation); a Tensor result, on the tape only
    when ``create_graph``."""
    ct = _dense_of(ct)
    if create_graph:
        if type(ct) is not Tensor:
            ct = _wrap(ct, None, 0)
        leaf.grad = ct if leaf.grad is None else add_cotangents(leaf.grad, ct)
        return
    if type(ct) is Tensor:
        ct = (<Tensor>ct).data
    if leaf.grad is not None:
        ct = add_cotangents(_data_of(leaf.grad), ct)
    leaf.grad = _wrap(ct if type(ct) is _ndarray else _asarray(ct), None, 0)


cdef inline object _address(object obj):
    """``id(obj)`` without the call."""
    return <size_t><PyObject*>obj


cdef list _eager_toposort(list roots, dict index):
    """TapeNodes reachable from ``roots``, parents before children.  ``index`` maps
    ``id(node)`` to its position (-1 while the node is still being expanded)."""
    cdef list order = []
    cdef list stack = list(reversed(roots))
    cdef TapeNode node
    while stack:
        node = <TapeNode>stack[len(stack) - 1]
        key = _address(node)
        position = index.get(key)
        if position is None:
            index[key] = -1
            if node.parents is None:
                continue
            for parent in node.parents:
                if type(parent) is TapeNode and _address(parent) not in index:
                    stack.append(parent)
        else:
            stack.pop()
            if position == -1:
                index[key] = len(order)
                order.append(node)
    return order


cdef inline bint _reaches_a_leaf(object parent):
    """Whether a cotangent sent to ``parent`` can reach a leaf (not past a stop_gradient)."""
    return parent is not None and (type(parent) is Tensor
                                   or not (<TapeNode>parent).cut_off)


cdef inline tuple _parent_mask(tuple parents):
    cdef Py_ssize_t n = len(parents), j
    cdef int mask = 0
    if n <= 3:
        for j in range(n):
            if _reaches_a_leaf(parents[j]):
                mask |= 1 << j
        return <tuple>_ACTIVE_MASKS[_MASK_OFFSET[n] + mask]
    return tuple([_reaches_a_leaf(p) for p in parents])


cdef object _as_tensor_input(object array, object parent, int slot):
    """An input value for a ``create_graph`` rule call: connected to the tape."""
    if parent is None:
        return _wrap(array, None, 0)
    if type(parent) is Tensor:
        return parent
    return _wrap(array, <TapeNode>parent, slot)

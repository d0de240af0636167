# Eager mode: tensors that compute at once and record a tape, and the reverse sweep behind
# ``Tensor.backward()``.  The VJP rules are the same functions the traced transform uses;
# here they receive ndarrays (or Tensors, with ``create_graph=True``).

cdef object _ndarray = _np.ndarray
cdef Py_ssize_t _no_grad_threads = 0     # threads currently inside ``no_grad``
cdef object _grad_mode_local = None      # threading.local, installed by tenpy_ad.eager


def install_grad_mode(object thread_local) -> None:
    global _grad_mode_local
    _grad_mode_local = thread_local


def _enter_no_grad() -> None:
    global _no_grad_threads
    depth = getattr(_grad_mode_local, "depth", 0)
    if depth == 0:
        _no_grad_threads += 1
    _grad_mode_local.depth = depth + 1


def _exit_no_grad() -> None:
    global _no_grad_threads
    depth = _grad_mode_local.depth - 1
    _grad_mode_local.depth = depth
    if depth == 0:
        _no_grad_threads -= 1


cdef inline bint _grad_enabled():
    if _no_grad_threads == 0:           # the common case costs one integer test
        return True
    return getattr(_grad_mode_local, "depth", 0) == 0


def is_grad_enabled() -> bool:
    """Whether eager operations in this thread record a tape."""
    return _grad_enabled()


@cython.no_gc
@cython.final
cdef class TapeNode:
    """One recorded eager operation: its rule, its parents and the values the rule needs."""
    cdef readonly Primitive prim
    cdef readonly object params
    cdef readonly tuple parents        # per input: TapeNode, leaf Tensor, or None
    cdef tuple parent_slots            # per input: output slot of the parent
    cdef tuple saved_inputs            # input arrays; None once released
    cdef object saved_outputs          # output array (tuple if multi-output)
    cdef readonly bint released

    def __dealloc__(self):
        if self.parents is not None and len(self.parents):
            _release_queue.append(self.parents)
            self.parents = None
            _drain_release_queue()

    def __repr__(self):
        return f"<TapeNode {self.prim.name}{' (released)' if self.released else ''}>"


@cython.no_gc
@cython.final
cdef class Tensor(ArraySurface):
    """An eager tensor: an ndarray plus, when it requires grad, its place on the tape."""
    cdef readonly object data
    cdef public object grad
    cdef bint _requires_grad
    cdef object _node          # TapeNode that produced it (None for leaves)
    cdef int _slot
    cdef object __weakref__

    def __init__(self, data, requires_grad=False):
        self.data = data if type(data) is _ndarray else _asarray(data)
        self._requires_grad = bool(requires_grad)

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if self._node is not None and not value:
            raise RuntimeError("requires_grad can only be turned off on leaf tensors; "
                               "use .detach()")
        self._requires_grad = bool(value)

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def grad_fn(self):
        """The tape entry that produced this tensor (None for leaves)."""
        return self._node

    @property
    def shape(self) -> tuple:
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    def backward(self, gradient=None, retain_graph=None, create_graph=False):
        """Accumulate d(self)/d(leaf) into every grad-requiring leaf's ``.grad``.

        ``gradient`` is the cotangent (needed unless ``self`` has one element);
        ``retain_graph`` keeps the saved values for another backward (default: same as
        ``create_graph``); ``create_graph`` records the backward so it can be differentiated.
        """
        return _surface["backward"](self, gradient, retain_graph, create_graph)

    def detach(self):
        """The same data, cut from the tape."""
        return Tensor(self.data)

    def numpy(self):
        """The underlying ndarray (shared, not copied)."""
        return self.data

    def item(self):
        return self.data.item()

    def __array__(self, dtype=None, copy=None):
        if copy:
            return self.data.astype(dtype if dtype is not None else self.data.dtype, copy=True)
        if dtype is not None and dtype != self.data.dtype:
            if copy is False:
                raise ValueError("a dtype conversion needs a copy")
            return self.data.astype(dtype)
        return self.data

    def __float__(self):
        return float(self.data)

    def __int__(self):
        return int(self.data)

    def __complex__(self):
        return complex(self.data)

    def __bool__(self):
        return bool(self.data)

    def __repr__(self):
        body = repr(self.data)
        if body.startswith("array("):
            body = body[6:len(body) - 1]
        suffix = ""
        if self._node is not None:
            suffix = f", grad_fn={self._node.prim.name}"
        elif self._requires_grad:
            suffix = ", requires_grad=True"
        return f"tensor({body}{suffix})"

    def __reduce__(self):
        return (Tensor, (self.data, self._requires_grad))


cdef inline Tensor _wrap(object array, TapeNode node, int slot):
    cdef Tensor t = Tensor.__new__(Tensor)
    t.data = array
    if node is not None:
        t._node = node
        t._slot = slot
        t._requires_grad = True
    return t


cdef inline object _parent_of(object x, int* slot):
    """The tape parent of an input (its TapeNode, itself if a grad-requiring leaf, or
    None) and, through ``slot``, which output of the parent it is."""
    cdef Tensor t
    if type(x) is not Tensor:
        return None
    t = <Tensor>x
    if t._node is not None:
        slot[0] = t._slot
        return t._node
    if t._requires_grad:
        return t
    return None


cdef inline object _data_of(object x):
    return (<Tensor>x).data if type(x) is Tensor else x


cdef tuple _ZERO_SLOTS = ((), (0,), (0, 0), (0, 0, 0))


cpdef object eager_apply(Primitive prim, object params, tuple args):
    """Compute ``prim`` on tensors/arrays now; record a tape entry when a grad is needed."""
    cdef Py_ssize_t n = len(args), j
    cdef int s0 = 0, s1 = 0
    cdef bint record
    cdef tuple arrays, parents, slots
    cdef list parent_list, slot_list
    cdef TapeNode node
    if n == 1:
        arrays = (_data_of(args[0]),)
        p0 = _parent_of(args[0], &s0)
        record = p0 is not None
        parents = (p0,)
        slots = _ZERO_SLOTS[1] if s0 == 0 else (s0,)
    elif n == 2:
        arrays = (_data_of(args[0]), _data_of(args[1]))
        p0 = _parent_of(args[0], &s0)
        p1 = _parent_of(args[1], &s1)
        record = p0 is not None or p1 is not None
        parents = (p0, p1)
        slots = _ZERO_SLOTS[2] if s0 == 0 and s1 == 0 else (s0, s1)
    else:
        parent_list, slot_list = [], []
        for x in args:
            s0 = 0
            parent_list.append(_parent_of(x, &s0))
            slot_list.append(s0)
        arrays = tuple([_data_of(x) for x in args])
        parents = tuple(parent_list)
        slots = tuple(slot_list)
        record = False
        for p0 in parent_list:
            if p0 is not None:
                record = True
    if not prim.elementwise:       # elementwise primitives have NumPy's semantics here
        prim.shape_rule(params, *arrays)
    if params is None and prim.array_fn is not None:
        result = prim.array_fn(*arrays)
    else:
        result = prim.impl(params, *arrays)
    if prim.n_outputs == 1:
        if type(result) is not _ndarray:       # NumPy reductions return scalars
            result = _asarray(result)
    else:
        result = tuple([r if type(r) is _ndarray else _asarray(r) for r in result])
    if _check_finite:
        _nonfinite_hook(f"'{prim.name}' (eager)", result, arrays)
    if record and not _grad_enabled():
        record = False
    if not record:
        if prim.n_outputs > 1:
            return tuple([_wrap(r, None, 0) for r in result])
        return _wrap(result, None, 0)
    node = TapeNode.__new__(TapeNode)
    node.prim = prim
    node.params = params
    node.parents = parents
    node.parent_slots = slots
    node.saved_inputs = arrays
    node.saved_outputs = result
    _counters.eager_recorded += 1
    if prim.n_outputs > 1:
        return tuple([_wrap(result[j], node, <int>j) for j in range(prim.n_outputs)])
    return _wrap(result, node, 0)


cdef inline object _address(object obj):
    """``id(obj)`` without the call."""
    return <size_t><PyObject*>obj


def record_tape(Primitive prim, object params, tuple args, tuple outputs) -> tuple:
    """Record one tape entry for outputs computed elsewhere (``tp.checkpoint`` runs its
    function without a tape, then records the call as a single entry).  Returns the output
    Tensors."""
    cdef Py_ssize_t j, n = len(args)
    cdef int slot
    cdef TapeNode node = TapeNode.__new__(TapeNode)
    parents, slots = [], []
    for j in range(n):
        slot = 0
        parents.append(_parent_of(args[j], &slot))
        slots.append(slot)
    node.prim = prim
    node.params = params
    node.parents = tuple(parents)
    node.parent_slots = tuple(slots)
    node.saved_inputs = tuple([_data_of(x) for x in args])
    node.saved_outputs = outputs if prim.n_outputs > 1 else outputs[0]
    _counters.eager_recorded += 1
    return tuple([_wrap(outputs[j], node, <int>j) for j in range(len(outputs))])


cdef list _eager_toposort(TapeNode root, dict index):
    """TapeNodes reachable from ``root``, parents before children.  ``index`` maps
    ``id(node)`` to its position (-1 while the node is still being expanded)."""
    cdef list order = []
    cdef list stack = [root]
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


cdef inline tuple _parent_mask(tuple parents):
    cdef Py_ssize_t n = len(parents), j
    cdef int mask = 0
    if n <= 3:
        for j in range(n):
            if parents[j] is not None:
                mask |= 1 << j
        return <tuple>_ACTIVE_MASKS[_MASK_OFFSET[n] + mask]
    return tuple([p is not None for p in parents])


cdef object _as_tensor_input(object array, object parent, int slot):
    """An input value for a ``create_graph`` rule call: connected to the tape."""
    if parent is None:
        return _wrap(array, None, 0)
    if type(parent) is Tensor:
        return parent
    return _wrap(array, <TapeNode>parent, slot)


def eager_backward(Tensor root, object seed, bint retain_graph, bint create_graph,
                   object accumulate, list capture=None):
    """Reverse sweep from ``root`` with cotangent ``seed``.

    Without ``capture`` the cotangents reaching grad-requiring leaves are added into their
    ``.grad``.  With ``capture`` (a list of tensors) nothing is written anywhere: the
    cotangent of each captured tensor is returned (None where it has no path to ``root``).
    Cotangents are ndarrays, or Tensors when ``create_graph`` records the backward itself.
    Saved values are released as the sweep passes each entry unless ``retain_graph``.
    """
    cdef dict index = {}
    cdef list order, cts
    cdef dict leaf_cts = {}
    cdef dict leaves = {}
    cdef dict wanted = None
    cdef list captured = None
    cdef TapeNode node
    cdef Tensor t
    cdef Py_ssize_t i, j, k, n, n_out
    if capture is not None:
        wanted = {}
        captured = [None] * len(capture)
        for k in range(len(capture)):
            t = <Tensor?>capture[k]
            wanted[_address(t) if t._node is None else (_address(t._node), t._slot)] = k
    if root._node is None:
        if root._requires_grad:
            if wanted is not None:
                if _address(root) in wanted:
                    captured[wanted[_address(root)]] = seed
            else:
                _accumulate_leaf(root, seed, accumulate, create_graph)
        return captured
    order = _eager_toposort(<TapeNode>root._node, index)
    n = len(order)
    cts = [None] * n
    k = n - 1   # the root is last in the order
    if (<TapeNode>order[k]).prim.n_outputs > 1:
        cts[k] = [None] * (<TapeNode>order[k]).prim.n_outputs
        cts[k][root._slot] = seed
    else:
        cts[k] = seed
    for i in range(n - 1, -1, -1):
        node = <TapeNode>order[i]
        ct = cts[i]
        cts[i] = None
        if ct is None:
            continue
        n_out = node.prim.n_outputs
        if wanted is not None:
            for j in range(n_out):
                key = (_address(node), <int>j)
                if key in wanted:
                    captured[wanted[key]] = ct[j] if n_out > 1 else ct
        if n_out > 1:
            for c in <list>ct:
                if c is not None:
                    break
            else:
                continue
            ct = tuple(<list>ct)
        if node.released:
            raise RuntimeError(
                f"Trying to backward through the graph a second time: the values saved by "
                f"'{node.prim.name}' were freed by the previous backward(). Pass "
                f"retain_graph=True to the first backward() to keep them.")
        xs = node.saved_inputs
        out = node.saved_outputs
        if create_graph:
            xs = tuple([_as_tensor_input(xs[j], node.parents[j], node.parent_slots[j])
                        for j in range(len(xs))])
            if n_out > 1:
                out = tuple([_wrap(out[j], node, <int>j) for j in range(n_out)])
            else:
                out = _wrap(out, node, 0)
        mask = _parent_mask(node.parents)
        _counters.eager_swept += 1
        input_cts = node.prim.vjp(node.params, ct, out, xs, mask)
        if _check_finite:
            _nonfinite_hook(f"the VJP of '{node.prim.name}' (eager backward)",
                            tuple([c for c in input_cts if c is not None]),
                            (ct,) if n_out == 1 else ct)
        for j in range(len(node.parents)):
            parent = node.parents[j]
            if parent is None:
                continue
            c = input_cts[j]
            if c is None:
                continue
            if type(parent) is Tensor:
                key = _address(parent)
                leaves[key] = parent
                leaf_cts[key] = c if key not in leaf_cts else accumulate(leaf_cts[key], c)
                continue
            k = index[_address(parent)]
            if (<TapeNode>parent).prim.n_outputs > 1:
                if cts[k] is None:
                    cts[k] = [None] * (<TapeNode>parent).prim.n_outputs
                slot = node.parent_slots[j]
                cts[k][slot] = c if cts[k][slot] is None else accumulate(cts[k][slot], c)
            else:
                cts[k] = c if cts[k] is None else accumulate(cts[k], c)
        if not retain_graph:
            node.saved_inputs = None
            node.saved_outputs = None
            node.released = True
    if wanted is not None:
        for key, leaf in leaves.items():
            if key in wanted:
                captured[wanted[key]] = leaf_cts[key]
        return captured
    for key, leaf in leaves.items():
        _accumulate_leaf(<Tensor>leaf, leaf_cts[key], accumulate, create_graph)
    return None


cdef _accumulate_leaf(Tensor leaf, object ct, object accumulate, bint create_graph):
    """``leaf.grad += ct`` (PyTorch's accumulation); a Tensor result, on the tape only
    when ``create_graph``."""
    if create_graph:
        if type(ct) is not Tensor:
            ct = _wrap(ct, None, 0)
        leaf.grad = ct if leaf.grad is None else accumulate(leaf.grad, ct)
        return
    if type(ct) is Tensor:
        ct = (<Tensor>ct).data
    if leaf.grad is not None:
        ct = accumulate(_data_of(leaf.grad), ct)
    leaf.grad = _wrap(ct if type(ct) is _ndarray else _asarray(ct), None, 0)

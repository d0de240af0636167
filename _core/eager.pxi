# Eager mode: tensors that compute at once and record a tape (the reverse sweep over it is in
# eager_backward.pxi), and the per-thread switch of ``no_grad``.

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

    def __dealloc__(self):
        if self.parents is not None and len(self.parents):
            _release_queue.append(self.parents)
            self.parents = None
            _drain_release_queue()

    def __repr__(self):
        return f"<TapeNode {self.prim.name}{' (released)' if self.released else ''}>"


#: how to write a tensor that requires grad somewhere (the refusals of a NumPy target)
cdef str _WRITE_HINT = ("make the target a tensor and write into it, z = np.zeros_like(t, "
                        "shape=...) or z = tp.tensor(np.zeros(shape)); z[idx] = t")
WRITE_HINT = _WRITE_HINT                # (numpy/inplace.py's refusals say the same)


@cython.no_gc
@cython.final
cdef class Tensor(ArraySurface):
    """An eager tensor: an ndarray plus, when it requires grad, its place on the tape."""

    def __init__(self, data, requires_grad=False):
        self.data = data if type(data) is _ndarray else _asarray(data)
        self._requires_grad = bool(requires_grad)

    @property
    def data(self):
        """The value, an ndarray (shared, not copied: write to it only off the tape)."""
        return self.data

    @property
    def requires_grad(self) -> bool:
        """Whether operations on this tensor are recorded for ``backward``."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if self._node is not None and not value:
            raise _errors["TapeError"]("requires_grad: it can only be turned off on leaf "
                                       "tensors; use .detach()")
        self._requires_grad = bool(value)

    @property
    def is_leaf(self) -> bool:
        """Whether no recorded operation produced this tensor (``.grad`` is kept on leaves)."""
        return self._node is None

    @property
    def grad_fn(self):
        """The tape entry that produced this tensor (None for leaves)."""
        return self._node

    @property
    def shape(self) -> tuple:
        """The shape, as a tuple of ints."""
        return self.data.shape

    @property
    def dtype(self):
        """The NumPy dtype."""
        return self.data.dtype

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return self.data.ndim

    def backward(self, gradient=None, retain_graph=None, create_graph=False):
        """Accumulate d(self)/d(leaf) into every grad-requiring leaf's ``.grad``.

        ``gradient`` is the cotangent (needed unless ``self`` has one element);
        ``retain_graph`` keeps the saved values for another backward (default: same as
        ``create_graph``); ``create_graph`` records the backward so it can be differentiated.
        """
        backward(self, gradient, retain_graph, create_graph)

    def detach(self):
        """The same data, cut from the tape."""
        return Tensor(self.data)

    def numpy(self):
        """The underlying ndarray (shared, not copied)."""
        return self.data

    def item(self):
        """The one value as a Python scalar (leaving the tape explicitly)."""
        if self.data.size != 1:
            raise _errors["ShapeError"](
                f"item: can only convert a tensor of one element to a Python scalar, got "
                f"shape {list(self.data.shape)}")
        return self.data.item()

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad:
            self._refuse_if_differentiated("conversion to a NumPy array (np.asarray, np.array, "
                                           "a NumPy function without a tenpy_ad version"
                                           + conversion_hint("; here ", "") + "; also what "
                                           "writing it into a NumPy array, a[idx] = t, calls: "
                                           + _WRITE_HINT + ")")
        if copy:
            return self.data.astype(dtype if dtype is not None else self.data.dtype, copy=True)
        if dtype is not None and dtype != self.data.dtype:
            if copy is False:
                raise _errors["ArgumentValueError"](
                    f"__array__: a conversion of a {self.data.dtype.name} tensor to {dtype} "
                    "needs a copy, but copy=False was given")
            return self.data.astype(dtype)
        return _exported(self)

    def _refuse_if_differentiated(self, what):
        """Values leave the tape only explicitly: ``.detach()``, ``.numpy()``, ``.item()``."""
        if self._requires_grad:
            raise _errors["NotDifferentiableError"](
                f"{what} of a tensor that requires grad would silently drop its gradient; "
                "call .detach() (or .numpy() / .item()) to leave the computation "
                "explicitly, or use the function of that name in tenpy_ad.numpy or "
                "tenpy_ad.scipy (tp.scipy.linalg.svd for scipy.linalg.svd)")

    def __float__(self):
        self._refuse_if_differentiated(
            "float() (also what writing it into a NumPy array, a[i] = t, calls: "
            + _WRITE_HINT + ")")
        return float(self.data)

    def __complex__(self):
        self._refuse_if_differentiated("complex()")
        return complex(self.data)

    def __int__(self):
        return int(self.data)          # integers are not differentiated: no gradient lost

    def __index__(self):
        if self.data.dtype.kind not in "iub":
            raise _errors["ArgumentError"](f"__index__: only integer tensors can be used as "
                                           f"an index, not {self.data.dtype.name}")
        return self.data.__index__()

    def __bool__(self):
        return bool(self.data)         # control flow, not a value that flows on

    def __format__(self, spec):
        return self.data.__format__(spec) if spec else repr(self)

    def tolist(self):
        """The values as (nested) Python scalars, leaving the tape explicitly."""
        return self.data.tolist()

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


# ------------------------------------------------------------------ views (numpy/_views.py)
# Registered by the NumPy-level functions that return views, so a write into a view or its
# base reaches the other (numpy/inplace.py); kept in C: it runs on every eager slice,
# transpose and reshape.

@cython.final
cdef class ViewLink:
    """A view's root base, the steps ``(kind, arg)`` that make the view from the base
    (``kind.forward(parent, arg)``; numpy/_views.py), and, for a read-only view, the op
    that made it so."""

    def __cinit__(self, object base, tuple steps, object readonly):
        self.base, self.steps, self.readonly = base, steps, readonly


@cython.final
cdef class _ScalarMark:
    """The ``_alias`` of an eager 0-d result of an operation: what NumPy returns there is a
    scalar (``np.sum(x)``, ``x[i, j]``, ``x @ y`` of vectors), immutable."""


cdef object _SCALAR = _ScalarMark()


cpdef bint is_scalar(object x) except -1:
    """Whether ``x`` is a 0-d tensor NumPy would hold as a scalar, not as a 0-d array: the
    result of an operation, not a tensor made as an array (``tp.tensor``, a copy,
    ``*_like``, a placeholder) nor a view of one.  ``s += v`` makes a new scalar: other
    names of ``s`` keep its value, as NumPy's (``s[...] = v``, which NumPy's scalars
    refuse, writes it as a 0-d array: the Array API's code does).  Its views are copies."""
    cdef TracedTensor node
    if type(x) is Tensor:
        return (<Tensor>x)._alias is _SCALAR
    if type(x) is TracedTensor:
        node = <TracedTensor>x
        if _ndims[node.id] != 0:
            return False
        return node._alias is _SCALAR or (node.prim is not _copy_p and node.inputs
                                          and type(node._alias) is not ViewLink)
    return False


cpdef object as_array_result(object x):
    """``x``, a 0-d array rather than a scalar (see :func:`is_scalar`): what a copy and
    the Array API's functions return (the standard has 0-d arrays, no scalars).  An eager
    result is unmarked in place (it is new); a traced one gets a unique ``copy`` node."""
    if type(x) is Tensor:
        if (<Tensor>x)._alias is _SCALAR:
            (<Tensor>x)._alias = None
        return x
    return new_array(x) if is_scalar(x) else x


cpdef object as_scalar_result(object x):
    """``x``, a new 0-d result marked as NumPy's scalar (see :func:`is_scalar`): what the
    identity shortcut of a ufunc or a reduction returns (``np.sum`` of a 0-d array, ``np.conj``
    of a real one), which NumPy gives as a scalar.  ``x`` must be new: a fresh handle
    (:func:`fresh_handle`) or a traced ``copy`` node (:func:`new_array`); anything else,
    and any result of more dimensions, is returned as it is."""
    cdef TracedTensor node
    if type(x) is Tensor:
        array = (<Tensor>x).data
        if ((<Tensor>x)._alias is None and type(array) is _ndarray
                and (<tenpy_ad_ndarray*><PyObject*>array).nd == 0):
            (<Tensor>x)._alias = _SCALAR
    elif type(x) is TracedTensor:
        node = <TracedTensor>x
        if _ndims[node.id] == 0 and node.prim is _copy_p and node._alias is None:
            node._alias = _SCALAR
    return x


cdef inline object _alias_of(object t):
    """The ``_alias`` field of a tensor of either kind (None for anything else)."""
    if type(t) is Tensor:
        return (<Tensor>t)._alias
    if type(t) is TracedTensor:
        return (<TracedTensor>t)._alias
    return None


cdef inline void _set_alias(object t, object value):
    if type(t) is Tensor:
        (<Tensor>t)._alias = value
    else:
        (<TracedTensor>t)._alias = value


cdef inline ViewLink _link_of(object t):
    """``t``'s link to its base if it is a view, else None."""
    alias = _alias_of(t)
    return <ViewLink>alias if type(alias) is ViewLink else None


cdef int _remember(object base, object reference) except -1:
    """Keep the weak ``reference`` to a view (or an exported array) on the root ``base``
    (dead ones pruned at 16)."""
    cdef list views
    alias = _alias_of(base)
    if alias is None or alias is _SCALAR:
        _set_alias(base, [reference])
        return 0
    views = <list>alias
    if len(views) >= 16:
        views = [r for r in views if PyWeakref_GetObject(r) != <PyObject*>None]
        _set_alias(base, views)
    views.append(reference)
    return 0


def suspend_views(bint on) -> None:
    """Enter (``on``) or leave a stretch whose results are not registered as views."""
    global _views_suspended
    _views_suspended += 1 if on else -1


cpdef object register_view(object result, object parent, object kind, object arg,
                  object readonly=None):
    """``result`` (just computed from ``parent``), recorded as the view ``(kind, arg)``
    of ``parent``'s base when both are tensors of one kind: the link on the view, a weak
    reference on the base (dead ones pruned at 16).  A traced view is an interned node,
    registered once: equal views of one base are one node, and one view (the NumPy-level
    functions that copy return a unique node, never a view's: ``a.flatten()``)."""
    cdef type t = type(result)
    cdef ViewLink link
    if _views_suspended or result is parent or type(parent) is not t or (
            t is not Tensor and t is not TracedTensor) or _graph_mode:
        return result                 # (derivative rules write nothing: no views)
    if is_scalar(parent):
        return result                 # NumPy's views of a scalar are new arrays
    link = _link_of(parent)
    if link is None:
        base, steps = parent, ((kind, arg),)
    else:
        base, steps = link.base, link.steps + ((kind, arg),)
        readonly = readonly if readonly is not None else link.readonly
        if result is base:                      # a.T.T: the base itself, not a view
            return result
    existing = _alias_of(result)
    if existing is _SCALAR:
        existing = None               # a 0-d view of an array is an array
    if existing is not None:
        if t is Tensor:
            return result                       # a nested call registered it
        if _same_link(existing, base, steps, readonly):
            if (<TracedTensor>result)._hits > 0:
                (<TracedTensor>result)._hits -= 1   # an equal view's hit: the same view
            return result
        result = _unique_clone(<TracedTensor>result)    # another view's node: apart
    elif t is TracedTensor and (<TracedTensor>result)._hits:
        result = _unique_clone(<TracedTensor>result)    # made before: another's value
    _set_alias(result, ViewLink(base, steps, readonly))
    _remember(base, PyWeakref_NewRef(result, None))
    return result


cdef bint _same_link(object alias, object base, tuple steps, object readonly):
    """Whether ``alias`` is the link ``(base, steps, readonly)``."""
    if type(alias) is not ViewLink:
        return False
    link = <ViewLink>alias
    return link.base is base and link.readonly == readonly and link.steps == steps


def is_aliased(object x) -> bool:
    """Whether the tensor ``x`` is a registered view, or has had one taken of it."""
    alias = _alias_of(x)
    return alias is not None and alias is not _SCALAR


def register_shared_view(object result, object parent, object kind, object arg=None):
    """:func:`register_view` where NumPy's op returns a view only when it needs no copy
    (a reshape): when ``result``'s data shares ``parent``'s memory owner (``arg`` None:
    the result's shape)."""
    if type(result) is TracedTensor:
        if type(parent) is TracedTensor and (_link_of(parent) is not None or
                                             (<TracedTensor>parent)._other_layout or
                                             (<TracedTensor>parent).prim.elementwise):
            if not _fn("traced_reshape_is_view")(parent, result.shape):
                return result     # a view's or another layout's reshape: NumPy's rule
        return register_view(result, parent, kind, result.shape if arg is None else arg)
    if type(result) is not Tensor or type(parent) is not Tensor or \
            _owner((<Tensor>result).data) != _owner((<Tensor>parent).data):
        return result
    return register_view(result, parent, kind,
                         (<Tensor>result).data.shape if arg is None else arg)


cdef inline PyObject* _owner(object array) noexcept:
    """The array owning ``array``'s memory (NumPy collapses chains of views)."""
    cdef PyObject* base = NULL
    if type(array) is _ndarray:
        base = (<tenpy_ad_ndarray*><PyObject*>array).base
    return <PyObject*>array if base == NULL else base


cdef object _exported(Tensor t):
    """``np.asarray(t)``: a read-only NumPy view of ``t``'s values (tape entries may have
    saved that array), remembered weakly on the root base: a later in-place write into the
    tensor cannot reach it, so numpy/inplace.py refuses the write while it lives."""
    import weakref
    holder = _HeldValues(t.data)
    _remember(t if _link_of(t) is None else _link_of(t).base, weakref.ref(holder))
    return _np.asarray(holder)


class _HeldValues:
    """The owner NumPy records for ``np.asarray(t)`` and every view made of it (NumPy
    collapses chains of views to the first non-array base): alive while any of them is."""

    def __init__(self, data):
        self.data = data
        interface = dict(data.__array_interface__)
        interface["data"] = (interface["data"][0], True)       # read-only
        self.__array_interface__ = interface


cdef object _in_layout_of(object old, object new):
    """``new`` (the values a write gives a tensor) laid out as ``old``, as NumPy's write
    into the same memory keeps it: later reshapes are views exactly where NumPy's are.
    A copy only when the layouts differ (a write through a transposed view); a
    broadcast ``old`` (zero strides) takes ``new`` as it is."""
    cdef tenpy_ad_ndarray* a
    cdef tenpy_ad_ndarray* b
    cdef int i
    if type(old) is not _ndarray or type(new) is not _ndarray:
        return new
    a, b = <tenpy_ad_ndarray*><PyObject*>old, <tenpy_ad_ndarray*><PyObject*>new
    if a.nd != b.nd:
        return new
    for i in range(a.nd):
        if a.dimensions[i] != b.dimensions[i] or a.strides[i] == 0:
            return new
    for i in range(a.nd):
        if a.dimensions[i] > 1 and a.strides[i] != b.strides[i]:
            copy = _np.empty_like(old)
            copy[...] = new
            return copy
    return new


def rebind(Tensor target, Tensor source, bint keep_leaf=False) -> None:
    """Make ``target`` hold ``source``'s value and tape place (an in-place write: the
    handle takes the functional update's result; saved arrays are never written).
    ``keep_leaf``: only the value changes (a write into a leaf under ``no_grad``)."""
    _rebind(target, source, keep_leaf)


cdef inline int _rebind(Tensor target, Tensor source, bint keep_leaf) except -1:
    target.data = _in_layout_of(target.data, source.data)
    if keep_leaf:
        return 0
    target._node = source._node
    target._slot = source._slot
    target._requires_grad = source._requires_grad
    return 0


def rebind_base_and_views(Tensor base, Tensor value, object recompute) -> bint:
    """``base`` takes the new tape value ``value``, and each live view of it its
    recomputed value: a basic index by its plan, another view by ``recompute(base,
    steps)``.  False, with nothing done, while NumPy holds an array of ``base``'s values
    (numpy/inplace.py raises)."""
    cdef list views = [], refs = []
    cdef PyObject* found
    alias = base._alias
    if type(alias) is list:
        for ref in <list>alias:
            found = PyWeakref_GetObject(ref)
            if found == <PyObject*>None:
                continue
            if type(<object>found) is not Tensor:
                return False
            views.append(<object>found)
            refs.append(ref)
        base._alias = refs or None
    _rebind(base, value, base._node is None and base._requires_grad)
    for view in views:
        steps = (<ViewLink>(<Tensor>view)._alias).steps
        new = None
        if len(steps) == 1 and (<tuple>steps[0])[0] is _basic_kind:
            new = _planned_basic_index(base, (<tuple>steps[0])[1], False)
        _rebind(<Tensor>view, <Tensor>(recompute(base, steps) if new is None else new), False)
    return True


cpdef bint rebind_plain(object target_obj, object result):
    """The short path of an in-place write: ``target`` (no views, not a leaf that
    requires grad) takes ``result`` (an eager tensor of its shape and dtype); False, with
    nothing done, for every other case (numpy/inplace.py's general path)."""
    cdef Tensor r, target
    if type(target_obj) is not Tensor or type(result) is not Tensor:
        return False
    target = <Tensor>target_obj
    if target._alias is not None:
        return False
    if target._node is None and target._requires_grad:
        return False
    r = <Tensor>result
    old_dtype, new_dtype = target.data.dtype, r.data.dtype
    if (new_dtype is not old_dtype and new_dtype != old_dtype) or \
            r.data.shape != target.data.shape:
        return False
    target.data = _in_layout_of(target.data, r.data)
    target._node = r._node
    target._slot = r._slot
    target._requires_grad = r._requires_grad
    return True


def reaches_other_leaves(list outputs, list leaves) -> bool:
    """Whether the tape of ``outputs`` reaches a tensor that requires grad other than
    ``leaves`` (an inner transform whose function closes over an outer one's variables).
    Iterative: tapes are deep."""
    cdef set own = {id(x) for x in leaves}, seen = set()
    cdef list stack = []
    cdef object parent
    cdef Tensor t
    for x in outputs:
        if type(x) is Tensor:
            t = <Tensor>x
            if t._node is not None:
                stack.append(t._node)
            elif t._requires_grad and id(t) not in own:
                return True
    while stack:
        node = <TapeNode>stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for parent in node.parents:
            if type(parent) is TapeNode:
                if id(parent) not in seen:
                    stack.append(parent)
            elif parent is not None and id(parent) not in own:
                return True                       # a grad-requiring leaf of another kind
    return False


def relaid(Tensor t, object array) -> None:
    """Give the fresh handle ``t`` the values ``array`` (equal to its own: the same
    shape, dtype and values, in another memory layout), so that later views and reshapes
    of it share memory where NumPy's would (copies in C order, ``*_like`` in the
    prototype's)."""
    if array.shape != t.data.shape or array.dtype != t.data.dtype:
        raise _errors["ShapeError"](f"relaid: {array.shape} {array.dtype} is not the "
                                    f"layout of {t.data.shape} {t.data.dtype}")
    t.data = array


cpdef object eager_basic_index(Tensor x, object spec, tuple slices, object final_shape,
                               object kind, object items):
    """``x[items]`` for a basic index, by numpy/indexing.py's plan: the ``slice`` of
    ``spec`` (NumPy's ``slices``; None: all of ``x``), then the ``reshape`` to
    ``final_shape`` (None: the sliced shape).  The tape entries are those the two
    primitives record, without their dispatch (their rules ran when the plan was made);
    the result is registered as the view ``(kind, items)`` (``kind`` None: a scalar)."""
    cdef int slot = 0
    cdef object result = x
    parent = _parent_of(x, &slot)
    cdef bint record = parent is not None and _grad_enabled() and _inexact(x.data)
    array = x.data
    if spec is not None:
        result = _recorded_unary(_slice_p, spec, parent, slot, array, array[slices], record)
        parent, slot, array = (<Tensor>result)._node, 0, (<Tensor>result).data
    if final_shape is not None:
        result = _recorded_unary(_reshape_p, final_shape, parent, slot, array,
                                 array.reshape(final_shape), record)
    if kind is None:
        return result
    return register_view(result, x, kind, items)


cdef Tensor _recorded_unary(Primitive prim, object params, object parent, int slot,
                            object array, object out, bint record):
    """The tensor of ``out = prim(params)(array)``, with its tape entry if ``record``."""
    cdef TapeNode node
    if not record:
        return _wrap(out, None, 0)
    node = TapeNode.__new__(TapeNode)
    node.prim = prim
    node.params = params
    node.parents = (parent,)
    node.cut_off = _cut_off(prim, node.parents)
    node.parent_slots = _ZERO_SLOTS[1] if slot == 0 else (slot,)
    node.saved_inputs = (array,)
    node.saved_outputs = out
    _counters.eager_recorded += 1
    return _wrap(out, node, 0)


cpdef object fresh_handle(object x):
    """``x`` itself, or for an eager tensor a new handle of its value and tape place: what
    an identity shortcut (``x * 1``, ``x.astype(x.dtype)``) returns, so that a later
    in-place write into the result leaves ``x`` alone, as NumPy's new array would.  Of a
    leaf that requires grad, a taped ``x - 0`` (exact: signed zeros, infinities and NaN
    stay, real or complex): a second handle of the leaf would be a second leaf, whose
    gradient would not reach ``x``; under no_grad a handle that does not require grad."""
    cdef Tensor t, copy
    if type(x) is not Tensor:
        return x
    t = <Tensor>x
    if t._node is None and t._requires_grad:
        if _grad_enabled():
            return bind2(_sub_p, None, x, _np.zeros((), t.data.dtype))
        copy = Tensor.__new__(Tensor)
        copy.data = t.data
        return copy
    copy = Tensor.__new__(Tensor)
    copy.data = t.data
    copy._node = t._node
    copy._slot = t._slot
    copy._requires_grad = t._requires_grad
    if t._alias is _SCALAR:
        copy._alias = _SCALAR          # NumPy's x * 1 of a scalar is a scalar
    return copy


cdef inline Tensor _wrap(object array, TapeNode node, int slot):
    cdef Tensor t = Tensor.__new__(Tensor)
    t.data = array
    if type(array) is _ndarray and (<tenpy_ad_ndarray*><PyObject*>array).nd == 0:
        t._alias = _SCALAR             # a 0-d result: NumPy's scalar (see is_scalar)
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
        _check_arrays(prim, params, arrays)
    else:
        _check_params(prim, params)
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
    if record and prim.n_outputs == 1 and not _inexact(result):
        record = False                 # a mask or an index: nothing to differentiate
    if not record:
        if prim.n_outputs > 1:
            return tuple([_wrap(r, None, 0) for r in result])
        return _wrap(result, None, 0)
    node = TapeNode.__new__(TapeNode)
    node.prim = prim
    node.params = params
    node.parents = parents
    node.cut_off = _cut_off(prim, parents)
    node.parent_slots = slots
    node.saved_inputs = arrays
    node.saved_outputs = result
    _counters.eager_recorded += 1
    if prim.n_outputs > 1:
        return tuple([_wrap(result[j], node if _inexact(result[j]) else None, <int>j)
                      for j in range(prim.n_outputs)])
    return _wrap(result, node, 0)


cdef inline bint _cut_off(Primitive prim, tuple parents):
    """Whether an entry of ``prim`` with these parents has no grad-requiring leaf behind
    it along a path through no primitive that blocks derivatives (``stop_gradient``): the
    reverse sweep then asks no rule at it or past it for a cotangent."""
    if prim.blocks_derivatives:
        return True
    for parent in parents:
        if parent is not None and (type(parent) is Tensor
                                   or not (<TapeNode>parent).cut_off):
            return False
    return True


cdef inline bint _inexact(object array):
    """Whether values of this array are differentiated (floating or complex)."""
    kind = array.dtype.kind
    return kind == "f" or kind == "c"


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
    node.cut_off = _cut_off(prim, node.parents)
    node.parent_slots = tuple(slots)
    node.saved_inputs = tuple([_data_of(x) for x in args])
    node.saved_outputs = outputs if prim.n_outputs > 1 else outputs[0]
    _counters.eager_recorded += 1
    return tuple([_wrap(outputs[j], node, <int>j) for j in range(len(outputs))])

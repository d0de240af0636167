# Constant arrays as static params, cached by the array's identity: the bytes of a small
# writeable array are compared with a snapshot (memcmp), a read-only one (rule constants
# such as identity matrices) is trusted, so an array used again and again is copied and
# hashed once, not at every use.

from cpython.buffer cimport PyBUF_C_CONTIGUOUS, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.string cimport memcmp

cdef enum:
    SNAPSHOT_SIZE = 256            # writeable arrays up to this many entries are cached
    MAX_CACHED_ARRAYS = 4096       # the cache is emptied when it outgrows this


cdef inline bint _snapshot_holds(tuple entry, object value, Py_buffer* view):
    """Whether a writeable ``value`` still has the bytes, shape and dtype ``entry`` saw."""
    snapshot = entry[1]
    if snapshot is None or PyBytes_GET_SIZE(snapshot) != view.len:
        return False
    if memcmp(PyBytes_AS_STRING(snapshot), view.buf, view.len) != 0:
        return False
    return (<ConstValue>entry[2]).array.shape == value.shape and entry[3] is value.dtype


cpdef object constant_params(object value, int code):
    """The ConstValue of ndarray ``value`` in dtype ``code`` (-1: the dtype it is carried
    in), from the cache when ``value`` is the same array with the same bytes; None when
    ``value`` is not a C-contiguous ndarray that is read-only or small (the caller makes
    an uncached ConstValue)."""
    cdef Py_buffer view
    if type(value) is not _ndarray:
        return None
    try:
        PyObject_GetBuffer(value, &view, PyBUF_C_CONTIGUOUS)
    except (BufferError, ValueError):       # not C-contiguous
        return None
    try:
        frozen = view.readonly
        if not frozen and view.len > SNAPSHOT_SIZE * view.itemsize:
            return None
        key = <size_t><PyObject*>value << 3 | <size_t>(code & 7)
        entry = _array_constants.get(key)
        if entry is not None and (<tuple>entry)[0] is value and (
                frozen or _snapshot_holds(<tuple>entry, value, &view)):
            return (<tuple>entry)[2]
        target = _array_code(value.dtype) if code < 0 else code
        params = ConstValue(value.astype(_dtype_objects[target], copy=False))
        if len(_array_constants) > MAX_CACHED_ARRAYS:
            _array_constants.clear()
        # holding ``value`` keeps its id valid; the snapshot tells a mutated array apart
        _array_constants[key] = (value, None if frozen else value.tobytes(), params,
                                 value.dtype)
        return params
    finally:
        PyBuffer_Release(&view)


cdef TracedTensor _constant_node(ConstValue params):
    """The (interned) constant node holding ``params``."""
    array = params.array
    return intern(_constant_p, params, (), (_array_code(array.dtype), array.shape))

# Fingerprints: deterministic 64-bit hashes (splitmix finalised), the same in every process,
# unlike Python's salted ``hash``.  Nodes carry a fingerprint of their whole subgraph, which
# lets ``structurally_equal`` reject unequal graphs without walking them.

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE

cdef inline hash_t _splitmix(hash_t x) noexcept:
    x += 0x9E3779B97F4A7C15ULL
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL
    return x ^ (x >> 31)


cdef inline hash_t _mix(hash_t h, hash_t v) noexcept:
    return _splitmix((h * 0x100000001B3ULL) ^ v)


cdef hash_t _fp_bytes(bytes data) noexcept:
    """FNV-1a over the bytes, finished with splitmix (process-independent)."""
    cdef hash_t h = 0xCBF29CE484222325ULL
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t i
    for i in range(PyBytes_GET_SIZE(data)):
        h = (h ^ p[i]) * 0x100000001B3ULL
    return _splitmix(h)


cdef hash_t _fp_str(str text) except? 0:
    """The fingerprint of a string param (einsum subscripts, names), cached: the same few
    strings recur on every node of their primitive."""
    found = _fp_strings.get(text)
    if found is not None:
        return <hash_t>found
    cdef hash_t h = _mix(0x737472, _fp_bytes(text.encode("utf-8")))
    if len(_fp_strings) > 4096:
        _fp_strings.clear()
    _fp_strings[text] = h
    return h


cdef hash_t _fp_double(double x) noexcept:
    cdef hash_t bits
    memcpy(&bits, &x, sizeof(double))
    return _mix(0x666C6F6174, bits)


cdef hash_t _fp_object(object obj) except? 0:
    """Deterministic 64-bit hash of a static parameter (not Python's salted ``hash``)."""
    cdef hash_t h
    cdef type t = type(obj)
    if obj is None:
        return 0x4E6F6E65
    if t is tuple:                      # the common params, tested first by exact type
        h = _mix(0x7475706C65, <hash_t>len(<tuple>obj))
        for item in <tuple>obj:         # params nest a few levels at most
            h = _mix(h, _fp_object(item))
        return h
    if t is str:
        return _fp_str(<str>obj)
    if isinstance(obj, bool):
        return _mix(0x626F6F6C, <hash_t>(1 if obj else 0))
    if isinstance(obj, int):
        if -(1 << 62) < obj < (1 << 62):
            return _mix(0x696E74, <hash_t>(<int64_t>obj))
        return _mix(0x626967, _fp_bytes(str(obj).encode()))
    if isinstance(obj, float):
        return _fp_double(obj)
    if isinstance(obj, complex):
        return _mix(_fp_double(obj.real), _fp_double(obj.imag))
    if type(obj) is str:
        return _fp_str(<str>obj)
    if isinstance(obj, str):
        return _mix(0x737472, _fp_bytes((<str>obj).encode("utf-8")))
    if isinstance(obj, bytes):
        return _mix(0x6279746573, _fp_bytes(bytes(obj)))
    if isinstance(obj, (tuple, list)):
        h = _mix(0x7475706C65, <hash_t>len(obj))
        for item in obj:                # params nest a few levels at most
            h = _mix(h, _fp_object(item))
        return h
    fingerprint = getattr(obj, "fingerprint", None)
    if fingerprint is not None:
        return <hash_t>fingerprint
    return _mix(0x72657072, _fp_bytes(repr(obj).encode("utf-8")))

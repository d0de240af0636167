# Static parameters that need exact keys: a constant array (ConstValue) and a Python scalar
# (Scalar) are hashed and compared by their bits, so 0.0 and -0.0 never merge and equality
# runs in C (no Python code between an intern-table lookup and the insert).

def scalar_bits(x) -> tuple:
    """Bit patterns of a Python scalar, so that keys tell 0.0 from -0.0 and NaNs apart."""
    cdef double re, im
    cdef int64_t a, b
    if isinstance(x, complex):
        re, im = x.real, x.imag
        memcpy(&a, &re, sizeof(double))
        memcpy(&b, &im, sizeof(double))
        return (a, b)
    re = x
    memcpy(&a, &re, sizeof(double))
    return (a,)


@cython.final
cdef class ConstValue:
    """A constant array as a static parameter, hashed and compared by dtype, shape and
    exact bytes: NaN payloads merge, ``0.0`` and ``-0.0`` stay apart, ``float32(1)``
    differs from ``float64(1)``.  Hash and equality run in C, so interning never executes
    Python code between looking a key up and inserting it (thread safety)."""

    def __init__(self, array):
        array = _asarray(array).copy(order="C")
        array.flags.writeable = False
        self.array = array
        self._bytes = array.tobytes()
        cdef hash_t header = _fp_object((array.dtype.str, array.shape))
        self.fingerprint = _mix(header, _fp_bytes(self._bytes))
        self._hash = <Py_hash_t>(self.fingerprint >> 2)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        if type(other) is not ConstValue:
            return NotImplemented
        cdef ConstValue o = <ConstValue>other
        return (self.fingerprint == o.fingerprint and self.array.dtype == o.array.dtype
                and self.array.shape == o.array.shape and self._bytes == o._bytes)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __reduce__(self):
        return (ConstValue, (self.array,))

    def __repr__(self):
        a = self.array
        if a.size <= 4:
            return _array2string(a, separator=",", precision=6).replace("\n", "")
        return f"<{a.dtype.name}{list(a.shape)} constant>"


@cython.final
cdef class Scalar:
    """A Python scalar as a static parameter, hashed and compared by its bit pattern:
    NaNs with one payload merge, ``0.0`` and ``-0.0`` stay apart (C-level hash/eq)."""

    def __init__(self, value):
        self.value = value
        self.bits = scalar_bits(value)

    def __hash__(self):
        return hash(self.bits)

    def __eq__(self, other):
        if type(other) is not Scalar:
            return NotImplemented
        return type(self.value) is type((<Scalar>other).value) and \
            self.bits == (<Scalar>other).bits

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    @property
    def fingerprint(self):
        return _mix(_fp_object(type(self.value).__name__), _fp_object(self.bits))

    def __reduce__(self):
        return (Scalar, (self.value,))

    def __repr__(self):
        return repr(self.value)

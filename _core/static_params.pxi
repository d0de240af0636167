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


@cython.no_gc    # holds an array and bytes only (no cycles): out of the cycle collector's way
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


cdef enum ScalarKind:
    SCALAR_FLOAT = 0
    SCALAR_INT = 1
    SCALAR_COMPLEX = 2
    SCALAR_BOOL = 3


@cython.no_gc    # holds a Python scalar only (no cycles): millions of nodes keep one each
@cython.final
cdef class Scalar:
    """A Python scalar as a static parameter, hashed and compared in C by its kind and bit
    pattern: NaNs with one payload merge, ``0.0`` and ``-0.0`` stay apart, ``1`` and
    ``1.0`` differ; integers compare by value (exactly, however large)."""

    def __init__(self, value):
        cdef double re, im
        self.value = value
        if type(value) is float:
            self.kind = SCALAR_FLOAT
            re = <double>value
            memcpy(&self.re_bits, &re, sizeof(double))
        elif type(value) is bool:
            self.kind = SCALAR_BOOL
            self.re_bits = 1 if value else 0
        elif type(value) is int:
            self.kind = SCALAR_INT
            self.re_bits = <uint64_t>(<int64_t>value) if -(1 << 62) < value < (1 << 62) \
                else _fp_bytes(str(value).encode())
        elif type(value) is complex:
            self.kind = SCALAR_COMPLEX
            re, im = value.real, value.imag
            memcpy(&self.re_bits, &re, sizeof(double))
            memcpy(&self.im_bits, &im, sizeof(double))
        else:
            raise _errors["ArgumentError"](f"Scalar: a Python float, int, complex or bool, "
                                           f"not {type(value).__name__}")
        self._hash = <Py_hash_t>(_mix(_mix(<uint64_t>self.kind, self.re_bits),
                                      self.im_bits) >> 2)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        if type(other) is not Scalar:
            return NotImplemented
        cdef Scalar o = <Scalar>other
        if self.kind != o.kind or self.re_bits != o.re_bits or self.im_bits != o.im_bits:
            return False
        return self.kind != SCALAR_INT or self.value == o.value

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    @property
    def bits(self) -> tuple:
        """The bit patterns the scalar is keyed by."""
        if self.kind == SCALAR_COMPLEX:
            return (self.re_bits, self.im_bits)
        return (self.re_bits,)

    @property
    def fingerprint(self):
        return _mix(_mix(0x7363616C6172, <uint64_t>self.kind), _mix(self.re_bits, self.im_bits))

    def conjugate(self):
        """The static parameter of the complex conjugate (itself when real)."""
        return Scalar(self.value.conjugate()) if self.kind == SCALAR_COMPLEX else self

    def __reduce__(self):
        return (Scalar, (self.value,))

    def __repr__(self):
        return repr(self.value)

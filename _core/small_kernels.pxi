# Program steps computed in C: the exactly rounded elementwise operations and full sums of
# float64 operands, and small float64/complex128 matrix products, for which NumPy's
# per-call machinery (argument parsing, dtype resolution, iterator setup: ~0.25-1 us)
# costs more than the arithmetic.  Which step gets which kernel is decided when a program
# is compiled (tenpy_ad/small_kernels.py); here each run checks the facts only the actual
# arrays can tell (type, dtype, layout, size) and otherwise computes the step as before
# (``fallback``).  A result with a non-finite value is computed again by the fallback too,
# so NumPy's floating-point warnings and errors (np.errstate) behave as without these
# kernels.

from cpython.float cimport PyFloat_AS_DOUBLE

cdef extern from *:
    """
    /* The leading fields of NumPy's array object (PyArrayObject_fields in
       numpy/ndarraytypes.h), unchanged in every NumPy ABI: read directly so that the
       build needs no NumPy headers. */
    typedef struct {
        PyObject_HEAD
        char *data;
        int nd;
        Py_ssize_t *dimensions;
        Py_ssize_t *strides;
        PyObject *base;
        PyObject *descr;
        int flags;
    } tenpy_ad_ndarray;

    /* The elementwise loops, one per operator and operand pattern (array-array,
       array-scalar, scalar-array) so that each is a single operation on non-aliasing
       arrays that GCC vectorises (NumPy's own loops are vectorised too: a scalar loop
       would lose to them from a few hundred elements on; SSE2 ones from ~1000).
       Vectorising keeps each value one IEEE operation: the results are the same bits. */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
    /* and an AVX2 clone chosen at load time where the CPU has it (as NumPy's loops) */
    #define TENPY_AD_VECTORISE \
        __attribute__((optimize("tree-vectorize"), target_clones("avx2", "default")))
    #elif defined(__GNUC__) && !defined(__clang__)
    #define TENPY_AD_VECTORISE __attribute__((optimize("tree-vectorize")))
    #else
    #define TENPY_AD_VECTORISE
    #endif
    /* Each loop also tells whether every result is finite: adding 1 to an exponent of
       all ones (infinity, NaN) carries into the sign bit (an OR of integers, which
       vectorises along). */
    #define TENPY_AD_FINITE_BIT(value) \
        ((tenpy_ad_bits(value) & 0x7ff0000000000000ULL) + 0x0010000000000000ULL)
    static inline uint64_t tenpy_ad_bits(double value) {
        uint64_t bits;
        memcpy(&bits, &value, sizeof bits);
        return bits;
    }
    #define TENPY_AD_LOOP(expr)                                                        \
        for (i = 0; i < n; i++) { z[i] = expr; seen |= TENPY_AD_FINITE_BIT(z[i]); }
    #define TENPY_AD_LOOPS(name, expr_aa, expr_as, expr_sa)                              \
    static TENPY_AD_VECTORISE int tenpy_ad_##name(                                      \
            int pattern, const double* restrict x, double u, const double* restrict y,   \
            double v, double* restrict z, Py_ssize_t n) {                               \
        Py_ssize_t i;                                                                    \
        uint64_t seen = 0;                                                               \
        if (pattern == 0) TENPY_AD_LOOP(expr_aa)                                        \
        else if (pattern == 1) TENPY_AD_LOOP(expr_as)                                   \
        else TENPY_AD_LOOP(expr_sa)                                                     \
        return (seen >> 63) == 0;                                                        \
    }
    TENPY_AD_LOOPS(add, x[i] + y[i], x[i] + v, u + y[i])
    TENPY_AD_LOOPS(sub, x[i] - y[i], x[i] - v, u - y[i])
    TENPY_AD_LOOPS(mul, x[i] * y[i], x[i] * v, u * y[i])
    TENPY_AD_LOOPS(div, x[i] / y[i], x[i] / v, u / y[i])
    TENPY_AD_LOOPS(neg, -x[i], -x[i], -y[i])

    typedef int (*tenpy_ad_loop)(int, const double*, double, const double*, double,
                                 double*, Py_ssize_t);
    /* by op: add, sub, mul, div, neg, scale (mul by a scalar), shift (add a scalar) */
    static const tenpy_ad_loop tenpy_ad_loops[7] = {
        tenpy_ad_add, tenpy_ad_sub, tenpy_ad_mul, tenpy_ad_div, tenpy_ad_neg, tenpy_ad_mul,
        tenpy_ad_add};

    /* NumPy's pairwise summation of contiguous float64 values (its
       DOUBLE_pairwise_sum, which np.add.reduce runs over a contiguous array from the
       identity 0.0): eight running sums per block of up to 128 values, halves above. */
    static double tenpy_ad_pairwise_sum(const double* a, Py_ssize_t n) {
        Py_ssize_t i, half;
        double r[8], res;
        if (n < 8) {
            res = 0.;
            for (i = 0; i < n; i++) res += a[i];
            return res;
        }
        if (n <= 128) {
            for (i = 0; i < 8; i++) r[i] = a[i];
            for (i = 8; i < n - (n % 8); i += 8) {
                r[0] += a[i + 0]; r[1] += a[i + 1]; r[2] += a[i + 2]; r[3] += a[i + 3];
                r[4] += a[i + 4]; r[5] += a[i + 5]; r[6] += a[i + 6]; r[7] += a[i + 7];
            }
            res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
            for (; i < n; i++) res += a[i];
            return res;
        }
        half = n / 2;
        half -= half % 8;
        return tenpy_ad_pairwise_sum(a, half) + tenpy_ad_pairwise_sum(a + half, n - half);
    }

    /* z (n, m) = the transpose of x (m, n), both row-major, of elements of `width`
       doubles (1: float64, 2: complex128, each its own loop); whether all values are
       finite. */
    #define TENPY_AD_TRANSPOSE(width)                                                  \
    static int tenpy_ad_transpose_##width(const double* restrict x, double* restrict z, \
                                          Py_ssize_t m, Py_ssize_t n) {                 \
        Py_ssize_t i, j, w;                                                             \
        uint64_t seen = 0;                                                              \
        for (i = 0; i < m; i++)                                                         \
            for (j = 0; j < n; j++)                                                     \
                for (w = 0; w < width; w++) {                                           \
                    z[(j * m + i) * width + w] = x[(i * n + j) * width + w];            \
                    seen |= TENPY_AD_FINITE_BIT(x[(i * n + j) * width + w]);            \
                }                                                                       \
        return (seen >> 63) == 0;                                                       \
    }
    TENPY_AD_TRANSPOSE(2)
    #ifdef __SSE2__
    /* float64 in 2x2 blocks: two loads, two stores of two values (the strided stores
       bound the scalar loop; 16x32: 184 -> 114 ns) */
    #include <emmintrin.h>
    static int tenpy_ad_transpose_1(const double* restrict x, double* restrict z,
                                    Py_ssize_t m, Py_ssize_t n) {
        const __m128i exponent = _mm_set1_epi64x(0x7ff0000000000000LL);
        const __m128i carry = _mm_set1_epi64x(0x0010000000000000LL);
        __m128i seen2 = _mm_setzero_si128();
        uint64_t halves[2], seen = 0;
        Py_ssize_t i, j;
        for (i = 0; i + 1 < m; i += 2) {
            for (j = 0; j + 1 < n; j += 2) {
                __m128d a = _mm_loadu_pd(x + i * n + j);
                __m128d b = _mm_loadu_pd(x + (i + 1) * n + j);
                _mm_storeu_pd(z + j * m + i, _mm_unpacklo_pd(a, b));
                _mm_storeu_pd(z + (j + 1) * m + i, _mm_unpackhi_pd(a, b));
                seen2 = _mm_or_si128(seen2, _mm_add_epi64(
                    _mm_and_si128(_mm_castpd_si128(a), exponent), carry));
                seen2 = _mm_or_si128(seen2, _mm_add_epi64(
                    _mm_and_si128(_mm_castpd_si128(b), exponent), carry));
            }
            for (; j < n; j++) {
                z[j * m + i] = x[i * n + j];
                z[j * m + i + 1] = x[(i + 1) * n + j];
                seen |= TENPY_AD_FINITE_BIT(x[i * n + j]);
                seen |= TENPY_AD_FINITE_BIT(x[(i + 1) * n + j]);
            }
        }
        for (; i < m; i++)
            for (j = 0; j < n; j++) {
                z[j * m + i] = x[i * n + j];
                seen |= TENPY_AD_FINITE_BIT(x[i * n + j]);
            }
        _mm_storeu_si128((__m128i*)halves, seen2);
        return ((seen | halves[0] | halves[1]) >> 63) == 0;
    }
    #else
    TENPY_AD_TRANSPOSE(1)
    #endif
    static int tenpy_ad_transpose(const double* x, double* z, Py_ssize_t m, Py_ssize_t n,
                                  Py_ssize_t width) {
        return width == 1 ? tenpy_ad_transpose_1(x, z, m, n)
                          : tenpy_ad_transpose_2(x, z, m, n);
    }

    /* The C-ordered copy of an nd-array's view with its axes in the order perm (the
       copy NumPy makes of an operand whose matrix is no view of it): element by element
       (width doubles each), an odometer over the permuted axes; nd <= 32. */
    static void tenpy_ad_gather(const char* data, int nd, const Py_ssize_t* dims,
                                const Py_ssize_t* strides, const int* perm,
                                double* restrict z, Py_ssize_t width) {
        Py_ssize_t index[32], extent[32], step[32], last, i, total = 1;
        const char* at = data;
        int d;
        for (d = 0; d < nd; d++) {
            extent[d] = dims[perm[d]];
            step[d] = strides[perm[d]];
            index[d] = 0;
            total *= extent[d];
        }
        if (total == 0)
            return;
        last = nd > 0 ? extent[nd - 1] : 1;
        for (;;) {
            if (width == 1) {
                for (i = 0; i < last; i++)
                    z[i] = *(const double*)(at + i * (nd > 0 ? step[nd - 1] : 0));
            } else {
                for (i = 0; i < last; i++)
                    memcpy(z + i * width, at + i * (nd > 0 ? step[nd - 1] : 0),
                           width * sizeof(double));
            }
            z += last * width;
            for (d = nd - 2; d >= 0; d--) {           /* the next row: carry */
                at += step[d];
                if (++index[d] < extent[d])
                    break;
                at -= step[d] * extent[d];
                index[d] = 0;
            }
            if (d < 0)
                return;
        }
    }

    /* Whether no value of x is an infinity or a NaN. */
    static TENPY_AD_VECTORISE int tenpy_ad_all_finite(const double* x, Py_ssize_t n) {
        uint64_t seen = 0;
        Py_ssize_t i;
        for (i = 0; i < n; i++)
            seen |= TENPY_AD_FINITE_BIT(x[i]);
        return (seen >> 63) == 0;
    }
    """
    ctypedef bint (*loop_t)(int pattern, const double* x, double u, const double* y,
                            double v, double* z, Py_ssize_t n) noexcept nogil
    loop_t* tenpy_ad_loops
    bint _all_finite "tenpy_ad_all_finite"(const double* x, Py_ssize_t n) noexcept nogil
    double _pairwise_sum "tenpy_ad_pairwise_sum"(const double* a, Py_ssize_t n) noexcept nogil
    bint _transpose "tenpy_ad_transpose"(const double* x, double* z, Py_ssize_t m,
                                         Py_ssize_t n, Py_ssize_t width) noexcept nogil
    void _gather "tenpy_ad_gather"(const char* data, int nd, const Py_ssize_t* dims,
                                   const Py_ssize_t* strides, const int* perm, double* z,
                                   Py_ssize_t width) noexcept nogil

    ctypedef struct tenpy_ad_ndarray:
        char* data
        int nd
        Py_ssize_t* dimensions
        Py_ssize_t* strides
        PyObject* base
        PyObject* descr
        int flags

cdef enum:
    _NPY_C_CONTIGUOUS = 0x0001
    _NPY_F_CONTIGUOUS = 0x0002
    _NPY_ALIGNED = 0x0100
    _NPY_WRITEABLE = 0x0400

cdef enum OperandKind:            # what a run found an operand to be
    UNUSABLE = 0                  # anything else: the step falls back to NumPy
    ARRAY = 1                     # a C-contiguous aligned float64 ndarray of the step's size
    SCALAR = 2                    # a float64 0-d value (NumPy scalar, float, 0-d array)

# NumPy's own CBLAS products (the functions its ``matmul`` calls, found in its BLAS by
# tenpy_ad/small_kernels.py), so that a kernel's product is NumPy's to the bit on every
# BLAS build; ``blasint`` is 32- or 64-bit as that BLAS was built.
ctypedef void (*dgemm32_t)(int order, int ta, int tb, int32_t m, int32_t n, int32_t k,
                           double alpha, const double* a, int32_t lda, const double* b,
                           int32_t ldb, double beta, double* c, int32_t ldc) noexcept nogil
ctypedef void (*dgemm64_t)(int order, int ta, int tb, int64_t m, int64_t n, int64_t k,
                           double alpha, const double* a, int64_t lda, const double* b,
                           int64_t ldb, double beta, double* c, int64_t ldc) noexcept nogil
# complex128 values as pairs of doubles; alpha and beta by pointer
ctypedef void (*zgemm32_t)(int order, int ta, int tb, int32_t m, int32_t n, int32_t k,
                           const double* alpha, const double* a, int32_t lda,
                           const double* b, int32_t ldb, const double* beta, double* c,
                           int32_t ldc) noexcept nogil
ctypedef void (*zgemm64_t)(int order, int ta, int tb, int64_t m, int64_t n, int64_t k,
                           const double* alpha, const double* a, int64_t lda,
                           const double* b, int64_t ldb, const double* beta, double* c,
                           int64_t ldc) noexcept nogil

cdef enum:                        # CBLAS's constants
    _CBLAS_ROW_MAJOR = 101
    _CBLAS_NO_TRANS = 111
    _CBLAS_TRANS = 112

cdef void* _dgemm = NULL
cdef void* _zgemm = NULL
cdef bint _blasint64 = False
cdef object _float64_descr = _np.dtype(_np.float64)
cdef object _complex128_descr = _np.dtype(_np.complex128)
cdef object _float64_type = _np.float64
cdef tuple _ELEMENTWISE_OPS = ("add", "sub", "mul", "div", "neg", "scale", "shift")


def install_gemm(size_t dgemm, size_t zgemm, bint blasint64) -> None:
    """Take the addresses of NumPy's ``cblas_dgemm`` and ``cblas_zgemm`` (0: none, the
    contractions keep NumPy's matmul); ``blasint64``: their integers are 64-bit."""
    global _dgemm, _zgemm, _blasint64
    _dgemm, _zgemm, _blasint64 = <void*>dgemm, <void*>zgemm, blasint64


def has_gemm() -> bool:
    """Whether :func:`install_gemm` has given the kernels their BLAS products."""
    return _dgemm != NULL and _zgemm != NULL


cdef inline void _gemm(bint is_complex, bint a_rows, bint b_rows, int m, int n, int k,
                       const double* a, int lda, const double* b, int ldb,
                       double* c) noexcept nogil:
    """``c (m, n) = a (m, k) @ b (k, n)``, row-major ``c``, with the CBLAS call NumPy's
    matmul makes: row-major order, a column-major operand as its transpose, each with its
    leading dimension."""
    cdef double[2] one = [1.0, 0.0]
    cdef double[2] zero = [0.0, 0.0]
    cdef int ta = _CBLAS_NO_TRANS if a_rows else _CBLAS_TRANS
    cdef int tb = _CBLAS_NO_TRANS if b_rows else _CBLAS_TRANS
    if is_complex and _blasint64:
        (<zgemm64_t>_zgemm)(_CBLAS_ROW_MAJOR, ta, tb, m, n, k, one, a, lda, b, ldb, zero,
                            c, n)
    elif is_complex:
        (<zgemm32_t>_zgemm)(_CBLAS_ROW_MAJOR, ta, tb, m, n, k, one, a, lda, b, ldb, zero,
                            c, n)
    elif _blasint64:
        (<dgemm64_t>_dgemm)(_CBLAS_ROW_MAJOR, ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0,
                            c, n)
    else:
        (<dgemm32_t>_dgemm)(_CBLAS_ROW_MAJOR, ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0,
                            c, n)


cdef inline tenpy_ad_ndarray* _contiguous(object x, object descr):
    """``x`` if it is an ndarray (exactly) of dtype ``descr``, C-contiguous and aligned,
    else NULL."""
    cdef tenpy_ad_ndarray* a
    if type(x) is not _ndarray:
        return NULL
    a = <tenpy_ad_ndarray*><PyObject*>x
    if a.descr != <PyObject*>descr or (a.flags & (_NPY_C_CONTIGUOUS | _NPY_ALIGNED)) != \
            (_NPY_C_CONTIGUOUS | _NPY_ALIGNED):
        return NULL
    return a


cdef inline double* _fortran_matrix(object x, object descr, Py_ssize_t size):
    """The data of ``x`` if it is an ndarray (exactly) of dtype ``descr``: a column-major
    aligned matrix of ``size`` elements (LAPACK's results are), else NULL."""
    cdef tenpy_ad_ndarray* a
    if type(x) is not _ndarray:
        return NULL
    a = <tenpy_ad_ndarray*><PyObject*>x
    if a.descr != <PyObject*>descr or a.nd != 2 or _count(a) != size or \
            (a.flags & (_NPY_F_CONTIGUOUS | _NPY_ALIGNED)) != (_NPY_F_CONTIGUOUS | _NPY_ALIGNED):
        return NULL
    return <double*>a.data


cdef inline Py_ssize_t _count(tenpy_ad_ndarray* a) noexcept:
    cdef Py_ssize_t i, count = 1
    for i in range(a.nd):
        count *= a.dimensions[i]
    return count


cdef inline OperandKind _operand(object x, Py_ssize_t size, double** data, double* value):
    """Classify ``x`` for a float64 kernel of ``size`` elements; set ``data`` or
    ``value``."""
    cdef tenpy_ad_ndarray* a = _contiguous(x, _float64_descr)
    if a != NULL:
        if a.nd == 0:
            value[0] = (<double*>a.data)[0]
            return SCALAR
        if _count(a) != size:
            return UNUSABLE
        data[0] = <double*>a.data
        return ARRAY
    if type(x) is _float64_type or type(x) is float:
        value[0] = PyFloat_AS_DOUBLE(x)
        return SCALAR
    return UNUSABLE


cdef inline double* _array_data(object x, object descr, Py_ssize_t size, bint write):
    """The data of ``x``, an array of ``descr`` and ``size`` elements (at least 1-d), as
    the kernels take it (writeable if ``write``), or NULL."""
    cdef tenpy_ad_ndarray* a = NULL if x is None else _contiguous(x, descr)
    if a == NULL or a.nd == 0 or _count(a) != size or \
            (write and not a.flags & _NPY_WRITEABLE):
        return NULL
    return <double*>a.data


cdef inline double* _destination(object out, Py_ssize_t size):
    """The data of a planned float64 array ``out`` of ``size`` elements, or NULL."""
    return _array_data(out, _float64_descr, size, True)


cdef bint _numpy_allocates_c_order(const Py_ssize_t* ins, Py_ssize_t m,
                                   list buffers) noexcept:
    """Whether a ufunc on the arrays of ``ins`` allocates a C-ordered result, so that
    writing it into a planned (C-ordered) array keeps the layout of a run without the plan
    (a later reduction or product then adds in the same order).  NumPy orders the result's
    axes by the operands' strides (order "K"), C order winning ties and conflicts; only
    axes of length > 1 and nonzero stride vote.  So: C order when every operand's voting
    strides are non-increasing (a sufficient test, checked against NumPy's choice)."""
    cdef tenpy_ad_ndarray* a
    cdef Py_ssize_t j, i, stride, previous
    for j in range(m):
        x = buffers[ins[j]]
        if type(x) is not _ndarray:
            continue                    # scalars do not vote
        a = <tenpy_ad_ndarray*><PyObject*>x
        if a.flags & _NPY_C_CONTIGUOUS:
            continue
        previous = -1
        for i in range(a.nd):
            if a.dimensions[i] > 1 and a.strides[i] != 0:
                stride = a.strides[i] if a.strides[i] > 0 else -a.strides[i]
                if 0 <= previous < stride:
                    return False
                previous = stride
    return True


cdef class StepKernel:
    """A program step computed in C, or, when the arrays of a run do not suit it, NumPy's
    way: ``ufunc(*arrays[, constant_operand], out=out)`` called from here when the step has
    a planned array and a ufunc (the elementwise kernels: LAPACK's column-major results
    decline every time), else ``fallback`` called as the step's kernel would be:
    ``fallback(out, params, *arrays)``, or ``fallback(params, *arrays)`` without a planned
    array."""

    def __init__(self, str kind, object fallback, object ufunc=None,
                 object constant_operand=None):
        self.kind = kind
        self.fallback = fallback
        self.ufunc = ufunc
        self.constant_operand = constant_operand

    cdef object run(self, object out, object params, const Py_ssize_t* ins, Py_ssize_t m,
                    list buffers):
        raise NotImplementedError

    cdef object fall_back(self, object out, object params, const Py_ssize_t* ins,
                          Py_ssize_t m, list buffers):
        _counters.small_kernels_declined += 1
        if out is None:
            return _call(self.fallback, params, ins, m, buffers)
        if self.ufunc is None:
            return self.fallback(out, params, *_operands(ins, m, buffers))
        if not _numpy_allocates_c_order(ins, m, buffers):
            out = None                  # NumPy's own layout, as without the plan
        x = buffers[ins[0]]
        if self.constant_operand is not None:
            return self.ufunc(x, self.constant_operand, out=out)
        if m == 1:
            return self.ufunc(x, out=out)
        return self.ufunc(x, buffers[ins[1]], out=out)

    def __repr__(self):
        return f"<StepKernel {self.kind}>"


@cython.final
cdef class PassThrough(StepKernel):
    """A step whose result is its operand (a skipped broadcast of a 0-d value:
    tenpy_ad/compiler/step_choice.py)."""

    def __init__(self):
        StepKernel.__init__(self, "pass", None)

    cdef object run(self, object out, object params, const Py_ssize_t* ins, Py_ssize_t m,
                    list buffers):
        return buffers[ins[0]]


cdef PassThrough _PASS_THROUGH = PassThrough()   # the kernel of every skipped broadcast


@cython.final
cdef class ElementwiseKernel(StepKernel):
    """``op`` (one of add, sub, mul, div, neg, scale, shift) over ``size`` float64 values
    into the step's planned array; ``size = 0``: a 0-d result, returned as a NumPy float64
    (no planned array).  Operands are arrays of the step's size or 0-d values (skipped
    broadcasts pass their 0-d operand through); ``constant`` is scale's factor or shift's
    term.  Each value is one IEEE operation, as NumPy computes it."""

    def __init__(self, str op, Py_ssize_t size, object fallback, double constant=0.0,
                 object ufunc=None, object constant_operand=None):
        StepKernel.__init__(self, op, fallback, ufunc, constant_operand)
        self.op = _ELEMENTWISE_OPS.index(op)
        self.size = size
        self.constant = constant

    cdef object run(self, object out, object params, const Py_ssize_t* ins, Py_ssize_t m,
                    list buffers):
        cdef double* x = NULL
        cdef double* y = NULL
        cdef double* z
        cdef double u = 0.0, v = self.constant, w
        cdef Py_ssize_t n = self.size if self.size > 0 else 1
        cdef OperandKind kx, ky = SCALAR
        kx = _operand(buffers[ins[0]], n, &x, &u)
        if m == 2:
            ky = _operand(buffers[ins[1]], n, &y, &v)
        if kx == UNUSABLE or ky == UNUSABLE:
            return self.fall_back(out, params, ins, m, buffers)
        if self.size == 0:
            if kx != SCALAR or ky != SCALAR:
                return self.fall_back(out, params, ins, m, buffers)
            w = _apply(self.op, u, v)
            if not _all_finite(&w, 1):
                return self.fall_back(out, params, ins, m, buffers)
            _counters.small_kernels_run += 1
            return _float64_type(w)
        z = _destination(out, n)
        if z == NULL:
            return self.fall_back(out, params, ins, m, buffers)
        if kx == SCALAR and ky == SCALAR:
            return self.fall_back(out, params, ins, m, buffers)   # both 0-d: NumPy's result
        if not tenpy_ad_loops[self.op](0 if kx == ky else 1 if kx == ARRAY else 2,
                                       x, u, y, v, z, n):
            return self.fall_back(out, params, ins, m, buffers)    # inf or NaN: NumPy's way
        _counters.small_kernels_run += 1
        return out


@cython.final
cdef class ComplexElementwiseKernel(StepKernel):
    """add, sub or neg of complex128 arrays of ``size`` values (both operands arrays of
    that size) into the step's planned array: as NumPy computes them, one IEEE operation
    per real and imaginary part, so a loop over the arrays as float64 pairs."""

    def __init__(self, str op, Py_ssize_t size, object ufunc):
        StepKernel.__init__(self, op, None, ufunc)
        if op not in ("add", "sub", "neg"):
            raise _errors["InternalError"](f"ComplexElementwiseKernel: no complex {op!r}")
        self.op = _ELEMENTWISE_OPS.index(op)
        self.size = size

    cdef object run(self, object out, object params, const Py_ssize_t* ins, Py_ssize_t m,
                    list buffers):
        cdef double* x = _array_data(buffers[ins[0]], _complex128_descr,
                                     self.size, False)
        cdef double* y = x
        cdef double* z = _array_data(out, _complex128_descr, self.size, True)
        if m == 2:
            y = _array_data(buffers[ins[1]], _complex128_descr, self.size,
                            False)
        if x == NULL or y == NULL or z == NULL or \
                not tenpy_ad_loops[self.op](0, x, 0.0, y, 0.0, z, 2 * self.size):
            return self.fall_back(out, params, ins, m, buffers)
        _counters.small_kernels_run += 1
        return out


@cython.final
cdef class SumKernel(StepKernel):
    """The sum of all ``size`` values of a float64 array as a NumPy float64, added in
    NumPy's order (pairwise, from 0.0), so the same bits as ``np.add.reduce``."""

    def __init__(self, Py_ssize_t size, object fallback):
        StepKernel.__init__(self, "sum", fallback)
        self.size = size

    cdef object run(self, object out, object params, const Py_ssize_t* ins, Py_ssize_t m,
                    list buffers):
        cdef double* x = NULL
        cdef double unused, total
        if _operand(buffers[ins[0]], self.size, &x, &unused) != ARRAY:
            return self.fall_back(out, params, ins, m, buffers)
        total = 0.0 + _pairwise_sum(x, self.size)
        if not _all_finite(&total, 1):
            return self.fall_back(out, params, ins, m, buffers)
        _counters.small_kernels_run += 1
        return _float64_type(total)


cdef inline double _apply(int op, double x, double y) noexcept nogil:
    if op == 0 or op == 6:
        return x + y
    if op == 1:
        return x - y
    if op == 2 or op == 5:
        return x * y
    if op == 3:
        return x / y
    return -x


@cython.final
cdef class GemmKernel(StepKernel):
    """A contraction whose operands are (m, k) and (k, n) matrices, m, n, k >= 2, as one
    NumPy CBLAS ``gemm`` into the step's planned array, called as NumPy's ``matmul`` calls
    it, so the values are NumPy's.  Each operand is taken C-contiguous or, when 2-d,
    F-contiguous (LAPACK's results); ``*_layouts`` give, for each, whether its matrix is
    then row-major (1), column-major (0) or not a view (-1: the kernel gathers the
    C-ordered copy NumPy's ``matmul`` makes, ``*_axes`` giving the operand's axes in the
    matrix's order).  An operand in another layout (a reversed or permuted view) is
    taken as NumPy's ``matmul`` takes it (:func:`_strided_matrix`): as it is, with its
    leading dimension, where its matrix is a view with a unit stride, else gathered.
    With ``transposed_out`` (the output's order puts the second operand's free
    axes first) the product goes to a scratch array (``out`` is ``(array, scratch)``) and
    is transposed into the output: computing the transpose directly would change the
    rounding of some shapes (another kernel order).
    With ``view = (shape, axes)`` the output is the product, stored in the planned array
    (of the output's size) with the product's ``shape``, viewed with its axes in the order
    ``axes`` (as NumPy's way returns it)."""

    def __init__(self, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k, tuple a_layouts,
                 tuple b_layouts, bint transposed_out, bint is_complex, object fallback,
                 tuple a_axes, tuple b_axes, object view=None):
        StepKernel.__init__(self, "gemm", fallback)
        self.m, self.n, self.k = m, n, k
        self.a_layouts = (a_layouts[0], a_layouts[1])
        self.b_layouts = (b_layouts[0], b_layouts[1])
        self.transposed_out, self.is_complex = transposed_out, is_complex
        self.a_nd, self.b_nd = min(len(a_axes), 32), min(len(b_axes), 32)   # (<= 32 given)
        for d in range(self.a_nd):
            self.a_axes[d] = a_axes[d]
        for d in range(self.b_nd):
            self.b_axes[d] = b_axes[d]
        self.view = view

    cdef object run(self, object out, object params, const Py_ssize_t* ins, Py_ssize_t m,
                    list buffers):
        cdef object descr = _complex128_descr if self.is_complex else _float64_descr
        cdef double* c
        cdef double* product
        cdef double* copies = NULL      # the gathered operands (freed after gemm)
        cdef int a_rows = -1, b_rows = -1, lda = 0, ldb = 0
        cdef Py_ssize_t width = 2 if self.is_complex else 1     # doubles per element
        cdef Py_ssize_t a_size = self.m * self.k, b_size = self.k * self.n
        cdef object x = buffers[ins[0]], y = buffers[ins[1]]
        cdef const double* a = _matrix_data(x, descr, self.m, self.k, self.a_layouts,
                                            self.a_nd, self.a_axes, width, &a_rows, &lda)
        cdef const double* b = _matrix_data(y, descr, self.k, self.n, self.b_layouts,
                                            self.b_nd, self.b_axes, width, &b_rows, &ldb)
        if a_rows == -2 or b_rows == -2 or _dgemm == NULL:    # (not arrays it takes)
            return self.fall_back(out, params, ins, m, buffers)
        if a_rows == -1 or b_rows == -1:
            copies = <double*>malloc((a_size + b_size) * width * sizeof(double))
            if copies == NULL:                  # (no memory: NumPy's way says so)
                return self.fall_back(out, params, ins, m, buffers)
        try:
            if a_rows == -1:
                _gather_array(x, self.a_nd, self.a_axes, copies, width)
                a, a_rows, lda = copies, 1, self.k
            if b_rows == -1:
                _gather_array(y, self.b_nd, self.b_axes, copies + a_size * width, width)
                b, b_rows, ldb = copies + a_size * width, 1, self.n
            if a == b:          # a @ a.T: NumPy calls syrk, whose rounding may differ
                return self.fall_back(out, params, ins, m, buffers)
            result = out[0] if self.transposed_out else out
            c = _array_data(result, descr, self.m * self.n, True)
            product = _array_data(out[1], descr, self.m * self.n, True) \
                if self.transposed_out else c
            if c == NULL or product == NULL:
                return self.fall_back(out, params, ins, m, buffers)
            _gemm(self.is_complex, a_rows, b_rows, self.m, self.n, self.k, a, lda, b, ldb,
                  product)
        finally:
            free(copies)
        if not (_transpose(product, c, self.m, self.n, width) if self.transposed_out else
                _all_finite(c, self.m * self.n * width)):   # inf, NaN: NumPy's way, warnings
            return self.fall_back(out, params, ins, m, buffers)
        _counters.small_kernels_run += 1
        if self.view is None:
            return result
        return result.reshape(self.view[0]).transpose(self.view[1])


cdef inline void _gather_array(object x, int nd, const int* axes, double* z,
                               Py_ssize_t width) noexcept:
    """Copy ``x`` -- an aligned ndarray of the kernel's dtype with ``nd`` axes, which
    :func:`_matrix_data` checked -- into ``z`` in C order, its axes in the order ``axes``."""
    cdef tenpy_ad_ndarray* a = <tenpy_ad_ndarray*><PyObject*>x
    _gather(a.data, nd, a.dimensions, a.strides, axes, z, width)


cdef inline const double* _matrix_data(object x, object descr, int m, int k,
                                       (int, int) layouts, int nd, const int* axes,
                                       Py_ssize_t width, int* rows, int* lead):
    """The data of operand ``x`` of a GemmKernel as an (m, k) matrix, whether it is
    row-major (``rows``) and its leading dimension (``lead``): by ``layouts`` for a C- or
    F-contiguous ``x``, else by its strides (:func:`_strided_matrix`).  NULL with ``rows``
    -1 where the kernel gathers NumPy's copy, -2 where ``x`` is no aligned ndarray of
    ``descr`` with ``nd`` axes."""
    cdef const double* data = _array_data(x, descr, <Py_ssize_t>m * k, False)
    if data == NULL:
        data = _fortran_matrix(x, descr, <Py_ssize_t>m * k)
        if data == NULL:
            return _strided_matrix(x, descr, m, k, nd, axes, width, rows, lead)
        rows[0] = layouts[1]
    else:
        rows[0] = layouts[0]
    if rows[0] == -1 and (<tenpy_ad_ndarray*><PyObject*>x).nd != nd:
        rows[0] = -2
    lead[0] = k if rows[0] == 1 else m
    return NULL if rows[0] < 0 else data


cdef inline const double* _strided_matrix(object x, object descr, int m, int k, int nd,
                                          const int* axes, Py_ssize_t width, int* rows,
                                          int* lead):
    """For ``x`` in another layout (a permuted, sliced or reversed view): its data where,
    its axes in the order ``axes`` and reshaped to (m, k), it is a view with a unit stride
    along one axis and a leading dimension at least the other's extent -- what NumPy's
    ``matmul`` hands to BLAS as it is (``rows``, ``lead`` set as there) -- else NULL:
    ``rows`` -1 (NumPy copies it: the kernel gathers), -2 (no aligned ndarray of
    ``descr`` with ``nd`` axes and m k elements)."""
    cdef tenpy_ad_ndarray* a
    cdef Py_ssize_t extent, stride, itemsize = width * sizeof(double)
    cdef Py_ssize_t total[2]                 # per matrix axis: its extent,
    cdef Py_ssize_t inner[2]                 # and its innermost stride
    cdef bint merged = True
    cdef int d, axis = 0
    rows[0] = -2
    if type(x) is not _ndarray:
        return NULL
    a = <tenpy_ad_ndarray*><PyObject*>x
    if a.descr != <PyObject*>descr or a.nd != nd or not (a.flags & _NPY_ALIGNED):
        return NULL
    total[0], total[1], inner[0], inner[1] = 1, 1, 0, 0
    for d in range(nd):          # the operand's axes, in order, make rows then columns
        extent, stride = a.dimensions[axes[d]], a.strides[axes[d]]
        if axis == 0 and total[0] == m:
            axis = 1
        if extent == 1:
            continue
        if total[axis] > 1 and inner[axis] != stride * extent:
            merged = False       # (reshape would copy)
        total[axis] *= extent
        inner[axis] = stride
    if total[0] != m or total[1] != k:
        return NULL
    rows[0] = -1
    if not merged:
        return NULL
    if inner[1] == itemsize and inner[0] % itemsize == 0 and inner[0] // itemsize >= k \
            and inner[0] // itemsize <= INT_MAX:
        rows[0], lead[0] = 1, <int>(inner[0] // itemsize)
    elif inner[0] == itemsize and inner[1] % itemsize == 0 and \
            inner[1] // itemsize >= m and inner[1] // itemsize <= INT_MAX:
        rows[0], lead[0] = 0, <int>(inner[1] // itemsize)
    else:
        return NULL
    return <const double*>a.data

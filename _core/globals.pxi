# Module-level state of the core, all in one place, and ``install``: the one hook through
# which tenpy_ad hands the core its Python-side pieces at import.
#
# Every mutable global is process-wide and touched only with the GIL held.

import numbers as _numbers
import threading

# ------------------------------------------------ NumPy shortcuts

cdef object _ndarray = _np.ndarray
cdef object _ufunc = _np.ufunc
cdef object _asarray = _np.asarray
cdef object _array2string = _np.array2string
cdef object _float64_dtype = _np.dtype("float64")
cdef object _np_add = _np.add
cdef object _np_generic = _np.generic
cdef object _bool_dtype = _np.dtype(_np.bool_)

# ------------------------------------------------ installed by tenpy_ad

cdef dict _surface = {}              # operator name -> tenpy_ad.numpy_api function
cdef dict _basic_plans = None        # numpy/indexing.py's plans of basic indices, its last
cdef list _last_basic_plan = None    # one, and the view kind they make (surface.pxi)
cdef object _basic_kind = None
cdef object _constant_fn = None      # tenpy_ad.primitive.constant (a non-array operand's node)
cdef dict _errors = {}               # class name -> exception class of tenpy_ad.errors
cdef list _dtype_objects = []        # dtype code -> numpy dtype
cdef dict _code_of_dtype = {}        # numpy dtype -> dtype code (the supported ones)
cdef object _value_code = None       # tenpy_ad.dtypes.value_code, for the other dtypes
# the primitives the operators' fast paths bind (arithmetic.pxi, constants.pxi)
cdef Primitive _add_p = None, _sub_p = None, _mul_p = None, _div_p = None, _neg_p = None
cdef Primitive _scale_p = None, _shift_p = None, _constant_p = None, _copy_p = None
# the primitives ``bind`` folds on plain arrays and ``full_like`` builds (dispatch.pxi)
cdef Primitive _transpose_p = None, _reshape_p = None, _broadcast_p = None
cdef Primitive _einsum_p = None, _slice_p = None, _scatter_slice_p = None
cdef dict _einsum_folds = {}         # einsum subscripts -> what the folds make of them
cdef dict _identities = {}           # (n, dtype code) -> the rules' read-only identity
cdef dict _identity_at = {}          # its address -> the same identity (the folds' test)

# ------------------------------------------------ constant arrays (constants.pxi)

cdef dict _array_constants = {}      # id(array) << 3 | code -> (array, bytes|None, ConstValue, dtype)

# ------------------------------------------------ counters (counters.pxi)

cdef Counters _counters

# ------------------------------------------------ release queue (release.pxi)

cdef Py_ssize_t _release_depth = 0   # 1 while the outermost deallocation drains the queue
cdef list _release_queue = []        # references waiting to be dropped, iteratively

# ------------------------------------------------ fingerprints (fingerprints.pxi)

cdef dict _fp_strings = {}           # str param -> its fingerprint

# ------------------------------------------------ metadata table (metadata.pxi)

cdef Py_ssize_t _capacity = 0        # rows allocated
cdef Py_ssize_t _high_water = 0      # ids in [0, _high_water) have been handed out
cdef Py_ssize_t _live = 0            # rows owned by a live node
cdef dtype_code_t* _dtype_codes = NULL
cdef int8_t* _ndims = NULL           # -1 for a released row
cdef int64_t* _dims = NULL           # _capacity x MAX_INLINE_RANK
cdef PyObject** _node_at = NULL      # borrowed pointer to the live node owning each id
cdef node_id_t* _free_ids = NULL     # released ids, reused last-in first-out
cdef Py_ssize_t _n_free = 0
cdef dict _wide_shapes = {}          # id -> shape, for ranks above MAX_INLINE_RANK

# ------------------------------------------------ intern table (intern_table.pxi)

cdef TableEntry* _entries = NULL
cdef Py_ssize_t _entries_mask = -1   # capacity - 1 (capacity is a power of two)
cdef Py_ssize_t _entries_used = 0

# ------------------------------------------------ checks (execute.pxi)

cdef bint _check_finite = False      # whether ``_nonfinite_hook`` vets computed values
cdef object _nonfinite_hook = None   # set by tenpy_ad.debug.debug_nans

# ------------------------------------------------ grad mode (eager.pxi)

cdef Py_ssize_t _no_grad_threads = 0         # threads currently inside ``no_grad``
cdef object _grad_mode_local = threading.local()   # per thread: ``depth`` of no_grad

# ------------------------------------------------ constant tables

# ``active`` masks of rules with up to three inputs, one tuple per bit pattern:
# the mask of n inputs with bits b is _ACTIVE_MASKS[_MASK_OFFSET[n] + b]
cdef tuple _ACTIVE_MASKS = tuple(
    tuple(bool(mask >> j & 1) for j in range(n)) for n in range(4) for mask in range(1 << n)
)
cdef int[4] _MASK_OFFSET = [0, 1, 3, 7]
cdef tuple _ZERO_SLOTS = ((), (0,), (0, 0), (0, 0, 0))   # parent slots of 0..3 inputs
cdef object _Number = _numbers.Number       # a Python or NumPy scalar
cdef object _MAX_DIMENSION = 2**63 - 1     # the largest dimension NumPy (int64) holds


def install(*, dict surface, object constant, dict errors, list dtypes,
            object value_code, dict primitives) -> None:
    """Hand the core its Python-side pieces (tenpy_ad calls this once, at import).

    ``surface``: the functions the tensor operators forward to (tenpy_ad.numpy, plus
    ``backward``), and ``blas_matmul``, the threaded product the folds hand large matrix
    products to (tenpy_ad.blas.matmul); ``constant(value)``: the constant node of a value; ``errors``:
    the exception classes by name; ``dtypes``: the numpy dtype of each dtype code;
    ``value_code(dtype)``: the code values of any other dtype compute in; ``primitives``:
    by name, those the operators' fast paths bind (add, sub, mul, div, neg, scale, shift,
    constant) and those the dispatch folds (transpose, reshape, broadcast_in_dim, einsum,
    slice, scatter_slice).
    """
    global _constant_fn, _dtype_objects, _value_code
    global _add_p, _sub_p, _mul_p, _div_p, _neg_p, _scale_p, _shift_p, _constant_p, _copy_p
    global _transpose_p, _reshape_p, _broadcast_p, _einsum_p, _slice_p, _scatter_slice_p
    global _basic_plans, _last_basic_plan, _basic_kind
    _surface.update(surface)
    if "basic_index_plans" in surface:
        _basic_plans, _last_basic_plan, _basic_kind = surface["basic_index_plans"]
    _constant_fn = constant
    _errors.update(errors)
    _dtype_objects = list(dtypes)
    _value_code = value_code
    _add_p, _sub_p, _mul_p, _div_p = (primitives["add"], primitives["sub"], primitives["mul"],
                                      primitives["div"])
    _neg_p, _scale_p, _shift_p = primitives["neg"], primitives["scale"], primitives["shift"]
    _constant_p, _copy_p = primitives["constant"], primitives["copy"]
    _transpose_p, _reshape_p = primitives["transpose"], primitives["reshape"]
    _broadcast_p, _einsum_p = primitives["broadcast_in_dim"], primitives["einsum"]
    _slice_p, _scatter_slice_p = primitives["slice"], primitives["scatter_slice"]
    _code_of_dtype.clear()
    for code, dtype in enumerate(_dtype_objects):
        _code_of_dtype[dtype] = code


cdef int _views_suspended = 0       # > 0 while a write recomputes views (eager.pxi)
cdef Py_ssize_t _forwarding = 0     # live traced nodes an in-place write forwarded
cdef int _graph_mode = 0            # > 0 while the engine walks graph structure
                                    # (both: traced_writes.pxi)

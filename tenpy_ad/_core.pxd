# The types of tenpy_ad._core: typedefs, enums, struct layouts and the attribute layout of
# every extension class.  Cython reads this file before ``_core/_core.pyx`` because it is
# the .pxd of the module's qualified name (package layout: tenpy_ad/_core.pxd); the code
# lives in the ``_core/*.pxi`` files listed in that file's docstring.  Class decorators
# (``final``, ``no_gc``) sit on the definitions, next to the reason for them.

from cpython.ref cimport PyObject
from libc.stdint cimport int8_t, int32_t, uint8_t, uint64_t

# ---------------------------------------------------------------- typedefs

ctypedef uint64_t hash_t          # 64-bit hashes: intern-table keys and graph fingerprints
ctypedef Py_ssize_t node_id_t     # a row of the metadata table (dense, recycled on release)
ctypedef int8_t dtype_code_t      # index into the dtype list installed by tenpy_ad.dtypes
ctypedef uint8_t walk_state_t     # storage of one WalkState per node id during a traversal
ctypedef void (*set_threads_t)(int) noexcept nogil    # a BLAS library's thread setter
ctypedef int (*get_threads_t)() noexcept nogil        # ... and getter (blas_threads.pxi)

# ---------------------------------------------------------------- enums

cdef enum:
    MAX_INLINE_RANK = 8           # shapes of higher rank live in ``_wide_shapes``

cdef enum WalkState:              # a node's progress through a topological walk
    UNSEEN = 0                    # not reached yet
    EXPANDING = 1                 # on the stack, its inputs pushed above it
    ORDERED = 2                   # emitted: all its inputs precede it in the order
    BOUND_INPUT = 3               # (schedule) ORDERED, and a placeholder listed in ``inputs``

cdef enum NodeMark:               # per-position flags of the derivative sweeps (bits)
    DEPENDS_ON_WRT = 1            # (reverse) a wrt node, or a node with a path from one
    IS_WRT = 2                    # (reverse) a wrt node: its cotangent is kept, not released
    SEEDED = 4                    # (forward) a wrt node given a tangent: no rule replaces it

# ---------------------------------------------------------------- structs

cdef struct Counters:             # deterministic counters; tests assert on them, never on time
    uint64_t nodes_interned       # new nodes entered into the intern table
    uint64_t unique_nodes         # nodes that never merge (inputs, nonce ops)
    uint64_t table_probes         # lookups in the intern table
    uint64_t table_hits           # lookups that found an existing node
    uint64_t nodes_released       # traced nodes freed
    uint64_t equality_calls       # pair comparisons made by structurally_equal
    uint64_t nodes_visited        # nodes visited by traversals (toposort, sweeps)
    uint64_t rules_applied        # JVP/VJP rule invocations by the traced sweeps
    uint64_t instructions_run     # Program instructions executed
    uint64_t eager_recorded       # eager tape entries recorded
    uint64_t eager_swept          # eager tape entries processed by backward()
    uint64_t small_kernels_run    # program steps computed by a C kernel (small_kernels.pxi)
    uint64_t small_kernels_declined   # ... handed to NumPy by the kernel at run time

cdef struct TableEntry:           # one slot of the open-addressing intern table
    hash_t hash                   # the key hash of ``node``
    PyObject* node                # borrowed TracedTensor; NULL marks an empty slot

# ---------------------------------------------------------------- primitives and params

cdef class Primitive:             # an operation with its rules (primitive.pxi)
    cdef readonly str name
    cdef readonly int n_outputs
    cdef public object impl           # impl(params, *arrays) -> array (tuple if multi-output)
    cdef public object shape_rule     # shape_rule(params, *inputs) -> (dtype code, shape)
    cdef public object jvp            # MissingRule until a rule is attached
    cdef public object vjp            # MissingRule until a rule is attached
    cdef public object format_params  # params -> short text for listings (or None)
    cdef public object array_fn       # optional NumPy function for params None
    cdef public bint elementwise      # output has the dtype and shape of input 0
    cdef public dict shape_cache      # (params, dtypes, shapes) -> shape rule result, or None
    cdef public object check_params   # check_params(params) raises ParamError; None: no params
    cdef public int scalar_kinds      # bit k: a Scalar of kind k fits (checked in C: scale...)
    cdef public int block_cotangents  # how its VJP meets a BlockCotangent (cotangents.pxi)
    cdef public object step_facts     # what compiling its steps needs (tenpy_ad.step_facts)
    cdef public bint blocks_derivatives  # nothing past it depends differentiably on its input
    cdef readonly hash_t fingerprint  # of the name: stable across processes

cdef class MissingRule:           # a JVP/VJP stand-in raising NotImplementedError (ditto)
    cdef readonly str primitive_name
    cdef readonly str kind            # "JVP" or "VJP"

cdef class ConstValue:            # a constant array as a static param (static_params.pxi)
    cdef readonly object array        # read-only C-contiguous copy
    cdef readonly hash_t fingerprint  # of dtype, shape and bytes
    cdef Py_hash_t _hash
    cdef bytes _bytes
    cdef object _nonzero_box          # per axis the hull of the non-zero entries (cotangents.pxi)

cdef class Scalar:                # a Python scalar as a static param, by its bits (ditto)
    cdef readonly object value
    cdef readonly int kind        # ScalarKind: float, int, complex or bool
    cdef uint64_t re_bits         # the bits of the (real part of the) value
    cdef uint64_t im_bits         # the bits of the imaginary part (0 unless complex)
    cdef Py_hash_t _hash

# ---------------------------------------------------------------- tensors

cdef class ArraySurface:          # operators shared by both tensor kinds (surface.pxi)
    pass

cdef class TracedTensor(ArraySurface):   # an interned graph node (node.pxi; documented
    cdef Primitive prim                      # read-only properties there)
    cdef object params
    cdef tuple inputs                 # TracedTensors; None once the node is released
    cdef node_id_t id                 # metadata row (dtype, shape)
    cdef int slot                     # which output of ``prim`` this node is
    cdef hash_t fingerprint           # structural hash of the whole subgraph
    cdef hash_t _hash                 # key hash: locates the node's intern-table entry
    cdef bint _interned
    cdef bint _other_layout           # NumPy's array of it is not C-ordered (numpy/_views.py)
    cdef int _hits                    # intern hits that returned it to another expression
                                      # (not counting an equal view's: traced_writes.pxi)
    cdef object _current              # after an in-place write: the node holding its value
    cdef object _alias                # a view's ViewLink, or a base's weak references to
                                      # its live views (as Tensor's; traced_writes.pxi)
    cdef object __weakref__

cdef class TapeNode:              # one recorded eager operation (eager.pxi)
    cdef readonly Primitive prim
    cdef readonly object params
    cdef readonly tuple parents       # per input: TapeNode, leaf Tensor, or None
    cdef tuple parent_slots           # per input: output slot of the parent
    cdef tuple saved_inputs           # input arrays; None once released
    cdef object saved_outputs         # output array (tuple if multi-output)
    cdef readonly bint released
    cdef readonly bint cut_off        # a stop_gradient lies between it and every leaf

cdef class Tensor(ArraySurface):  # an eager tensor (eager.pxi)
    cdef object data                  # the ndarray (a read-only property, eager.pxi)
    cdef public object grad
    cdef bint _requires_grad
    cdef int _slot                    # which output of ``_node`` (beside the flag: packed)
    cdef object _node                 # TapeNode that produced it (None for leaves)
    cdef object _alias                # a view's ViewLink to its base, or a base's weak
                                      # references to its live views (a list), or None
    cdef object __weakref__

cdef class ViewLink:              # a view's way back to its base (eager.pxi)
    cdef readonly object base         # the root base, a Tensor or TracedTensor (held
                                      # strongly, as ndarray.base)
    cdef readonly tuple steps         # ((kind, arg), ...): from the base to the view
    cdef readonly object readonly     # the op that made it read-only, or None

cdef class BlockCotangent:        # a cotangent zero outside one block (cotangents.pxi)
    cdef readonly tuple shape         # of the whole cotangent
    cdef readonly tuple box           # per axis (lo, hi); an empty axis is (size, 0)
    cdef readonly int dtype_code
    cdef object block                 # the entries at ``spec`` (None: only ``dense`` known)
    cdef tuple spec                   # slice params: where ``block`` lies
    cdef object dense                 # the whole value, once made (or given)

# ---------------------------------------------------------------- traversals

cdef class GraphWalk:             # a topological order, its scratch arrays (graph_walk.pxi)
    cdef list order                   # TracedTensors, inputs before users
    cdef Py_ssize_t n                 # len(order)
    cdef walk_state_t* state          # by node id: a WalkState
    cdef Py_ssize_t* index            # by node id: position in ``order`` (ordered ids only)
    cdef uint8_t* marks               # by position: NodeMark bits (derivative sweeps)
    cdef bint reached(self, TracedTensor node) noexcept
    cdef Py_ssize_t position(self, TracedTensor node) noexcept

cdef class SiblingGroups:         # the nodes of each multi-output operation, grouped
    cdef dict _by_key                 # (prim, params, input ids) -> member positions
    cdef dict _by_position            # position -> the same member list
    cdef list join(self, TracedTensor node, Py_ssize_t position)
    cdef list members(self, Py_ssize_t position)

# ---------------------------------------------------------------- compiled programs

cdef enum StepCall:               # how the interpreter calls a step's kernel (execute.pxi)
    CALL_IMPL = 0                 # kernel(params, *inputs): the impl, or a chosen kernel
    CALL_UFUNC = 1                # kernel(*inputs): a ufunc primitive without params
    CALL_C = 2                    # a StepKernel, run in C (with its planned array or None)
    CALL_UFUNC_INTO = 3           # kernel(*inputs, out=array), if NumPy would allocate C order
    CALL_INTO = 4                 # kernel(array, params, *inputs)

cdef class Instruction:           # one row of a Plan, and a step's record (schedule.pxi)
    cdef readonly Primitive prim
    cdef readonly object params
    cdef readonly tuple inputs        # buffer of each operand
    cdef readonly tuple outputs       # (slot, buffer) pairs, by slot
    cdef readonly object kernel       # what computes it (set by plan_steps) ...
    cdef readonly tuple frees         # the buffers dead after it
    cdef Py_ssize_t single_output     # its buffer if there is one output, else -1 (for
                                      # the interpreter: one C read, no tuple unpacking)
    cdef readonly int call            # ... called as this StepCall says (-1: not yet set)
    cdef readonly int planned         # its planned array: index in a call's set (-1: none)
    cdef readonly int threads         # the BLAS threads it sets (-1: as they are)
    cdef readonly int signature       # its index in Plan.signatures (-1: none asked)
                                      # (ints: the record of a step in 96 bytes)

cdef struct StepRecord:           # what the interpreter reads of one step (execute.pxi):
    PyObject* kernel              # borrowed from its Instruction, which the StepTable holds
    PyObject* params
    PyObject* outputs             # the (slot, buffer) pairs of a multi-output step
    Py_ssize_t* slots             # its input buffers, then the buffers dead after it
    Py_ssize_t single_output
    int32_t n_inputs
    int32_t n_frees
    int32_t call                  # the Instruction's StepCall, planned array, threads
    int32_t planned
    int32_t threads               # (packed in order: one 64-byte record per step)

cdef class StepTable:             # a Plan's steps as records in one C array (execute.pxi)
    cdef readonly list steps          # the Instructions (they own what the records borrow)
    cdef StepRecord* records
    cdef Py_ssize_t* slots            # every step's slots, in order
    cdef readonly Py_ssize_t n_steps

cdef class StepChoice:            # how the steps of one signature run (schedule.pxi)
    cdef readonly object kernel       # without a planned array (None: impl or ufunc)
    cdef readonly object into         # into a planned array (None: cannot)
    cdef readonly tuple shape         # the planned array's shape as ``into`` sees it
    cdef readonly tuple scratch       # bytes of each scratch array ``into`` uses
    cdef readonly int threads         # BLAS threads (-1: as they are)
    cdef readonly bint fresh          # results never share memory with the operands
    cdef readonly bint passes_scalar  # a broadcast of a 0-d value that may be skipped

cdef class BlasThreads:           # BLAS thread counts during engine calls (blas_threads.pxi)
    cdef set_threads_t* set_fns       # libraries called directly (pthreads OpenBLAS)
    cdef get_threads_t* get_fns
    cdef int* saved                   # their counts before the outermost engine call
    cdef Py_ssize_t n_direct
    cdef list py_setters              # libraries called through Python (threadpoolctl)
    cdef list py_getters
    cdef list saved_py
    cdef object lock                  # held by every operation when py_setters exist
    cdef readonly int depth           # engine calls in progress, all threads together
    cdef readonly int current         # the count set now; 0: the process's own
    cdef int enter(self) except -1
    cdef int switch(self, int n) except -1
    cdef int leave(self) except -1
    cdef int _restore(self) except -1

cdef class StepKernel:            # a program step computed in C (small_kernels.pxi)
    cdef readonly str kind            # "add", ..., "gemm"
    cdef object fallback              # NumPy's way, for the arrays the kernel declines
    cdef object ufunc                 # or NumPy's ufunc into ``out``, called from the core
    cdef object constant_operand      # its second operand for scale/shift (else None)
    cdef object run(self, object out, object params, const Py_ssize_t* ins, Py_ssize_t m,
                    list buffers)
    cdef object fall_back(self, object out, object params, const Py_ssize_t* ins,
                          Py_ssize_t m, list buffers)

cdef class PassThrough(StepKernel):
    pass

cdef class ElementwiseKernel(StepKernel):
    cdef int op                       # index in _ELEMENTWISE_OPS
    cdef Py_ssize_t size              # elements of the result (0: a 0-d result)
    cdef double constant              # scale's factor, shift's term

cdef class ComplexElementwiseKernel(StepKernel):
    cdef int op                       # index in _ELEMENTWISE_OPS: add, sub or neg
    cdef Py_ssize_t size              # complex values of the result

cdef class SumKernel(StepKernel):
    cdef Py_ssize_t size              # values summed

cdef class GemmKernel(StepKernel):
    cdef int m, n, k                  # (m, k) @ (k, n)
    cdef (int, int) a_layouts, b_layouts  # C-, F-contiguous operand: row-major 1, column 0, -1
    cdef bint transposed_out, is_complex
    cdef int a_nd, b_nd               # each operand's axes,
    cdef int a_axes[32]               # in the order of its matrix (to gather a copy)
    cdef int b_axes[32]
    cdef object view                  # the output as a view of the product: (shape, axes), or None

cdef class Signatures:            # the distinct kinds of a plan's steps (schedule.pxi)
    cdef list found                   # (prim, params, operand metas, result meta)
    cdef dict index_of                # that, as a key -> its position in ``found``
    cdef dict last_of                 # prim -> (params, result meta, operand metas, position)
    cdef Py_ssize_t index(self, Instruction row, list metadata) except -1

cdef class Plan:                  # what ``schedule`` returns to tenpy_ad.compiler
    cdef readonly list rows           # Instructions in schedule order (inputs, constants too)
    cdef readonly list steps          # the rows that compute (not inputs or constants)
    cdef readonly list metadata       # by buffer: (dtype code, shape)
    cdef readonly list template       # by buffer: the constant's array, or None
    cdef readonly list inputs         # buffer of each requested input (-1: unused)
    cdef readonly list outputs        # buffer of each output
    cdef readonly object unbound      # first placeholder not among the inputs, or None
    cdef readonly list signatures     # (prim, params, operand metas, result meta) per kind

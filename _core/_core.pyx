"""tenpy_ad._core: the compiled heart of the engine.

One extension module built from per-concern include files, so the hot paths inline into
each other.  ``tenpy_ad/_core.pxd`` (read first: Cython finds the .pxd of the module's
qualified name) declares the types: typedefs, enums, structs and the attribute layout of
every extension class.  Then, in include order:

* ``globals.pxi``       all module-level state, and ``install`` (the import-time hook)
* ``counters.pxi``      deterministic counters (nodes interned, probes, visits, ...)
* ``release.pxi``       iterative release of deep object chains (no C-stack recursion on drop)
* ``fingerprints.pxi``  deterministic 64-bit hashes of params and subgraphs
* ``metadata.pxi``      dtype/shape table in typed arrays, indexed by node id
* ``surface.pxi``       the numpy-like operator surface shared by traced and eager tensors
* ``primitive.pxi``     Primitive, with raising stubs for missing JVP/VJP rules
* ``static_params.pxi`` ConstValue and Scalar: params keyed by their exact bits
* ``node.pxi``          TracedTensor, the interned graph node
* ``intern_table.pxi``  the C hash table that interns nodes, and ``intern*``
* ``constants.pxi``     constant arrays as params, cached by identity and a byte snapshot
* ``traced_writes.pxi`` in-place writes into traced tensors: forwarding, graph mode
* ``structural_equality.pxi`` memoised iterative comparison of graphs of other origins
* ``graph_walk.pxi``    topological order, its scratch arrays, multi-output sibling groups
* ``graph_sweep.pxi``   the reverse (VJP) and forward (JVP) sweeps over traced graphs
* ``schedule.pxi``      the compiler's pass: a Plan of Instruction rows
* ``blas_threads.pxi``  switching BLAS thread counts around engine calls
* ``small_kernels.pxi`` program steps in C: small elementwise ops, sums, BLAS gemm
* ``execute.pxi``       the Program interpreter loop
* ``eager.pxi``         eager Tensor, its tape entries (TapeNode), ``no_grad``
* ``eager_backward.pxi`` the reverse sweep over the tape (``backward``, ``grad_of``)
* ``eager_forward.pxi`` the forward sweep over the tape (eager ``tp.jvp``)
* ``operands.pxi``      facts about operands of any kind (shape, dtype code, complexness),
                        and their kind (traced, eager, a value; a tensor among arguments)
* ``cotangents.pxi``    how the sweeps add cotangents
* ``rule_adapters.pxi`` derivative rules assembled from one rule per input
* ``dispatch.pxi``      applying a primitive in the mode its operands call for
* ``arithmetic.pxi``    the operators' fast paths (+ - * / on the common operand pairs)
"""
cimport cython
from cpython.ref cimport PyObject, Py_INCREF, _Py_REFCNT
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.weakref cimport PyWeakref_GetObject, PyWeakref_NewRef
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.limits cimport INT_MAX
from libc.string cimport memcpy, memset

cdef extern from *:
    const char* TENPY_AD_SOURCE_HASH

SOURCE_HASH = TENPY_AD_SOURCE_HASH.decode("ascii")

import numpy as _np

include "globals.pxi"
include "counters.pxi"
include "release.pxi"
include "fingerprints.pxi"
include "metadata.pxi"
include "surface.pxi"
include "primitive.pxi"
include "static_params.pxi"
include "node.pxi"
include "intern_table.pxi"
include "constants.pxi"
include "traced_writes.pxi"
include "structural_equality.pxi"
include "graph_walk.pxi"
include "graph_sweep.pxi"
include "schedule.pxi"
include "blas_threads.pxi"
include "small_kernels.pxi"
include "execute.pxi"
include "eager.pxi"
include "eager_backward.pxi"
include "eager_forward.pxi"
include "operands.pxi"
include "cotangents.pxi"
include "rule_adapters.pxi"
include "dispatch.pxi"
include "arithmetic.pxi"

for _surface_type in (ArraySurface, Tensor, TracedTensor):
    tenpy_ad_index_as_mapping_only(_surface_type)

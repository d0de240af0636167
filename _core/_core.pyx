"""tenpy_ad._core: the compiled heart of the engine.

One extension module built from per-concern include files, so the hot paths inline into
each other:

* ``counters.pxi``  deterministic counters (nodes interned, probes, visits, ...)
* ``release.pxi``   iterative release of deep object chains (no C-stack recursion on drop)
* ``metadata.pxi``  dtype/shape table in typed arrays, indexed by node id
* ``surface.pxi``   the numpy-like operator surface shared by traced and eager tensors
* ``keys.pxi``      primitives, interned graph nodes (TracedTensor), fingerprints,
                    memoised iterative structural equality
* ``graph_sweep.pxi`` topological order and the forward/reverse sweeps over traced graphs
* ``execute.pxi``   the Program interpreter loop
* ``eager.pxi``     eager Tensor, its tape and the reverse sweep behind ``.backward()``
* ``operands.pxi``  facts about operands of any kind (shape, dtype code, complexness)
* ``rule_adapters.pxi`` derivative rules assembled from one rule per input
* ``dispatch.pxi``  applying a primitive in the mode its operands call for
"""
cimport cython
from cpython.ref cimport PyObject, Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport int8_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy, memset

cdef extern from *:
    const char* TENPY_AD_SOURCE_HASH

SOURCE_HASH = TENPY_AD_SOURCE_HASH.decode("ascii")

import numpy as _np

cdef object _asarray = _np.asarray
cdef object _array2string = _np.array2string

include "counters.pxi"
include "release.pxi"
include "metadata.pxi"
include "surface.pxi"
include "keys.pxi"
include "graph_sweep.pxi"
include "execute.pxi"
include "eager.pxi"
include "operands.pxi"
include "rule_adapters.pxi"
include "dispatch.pxi"

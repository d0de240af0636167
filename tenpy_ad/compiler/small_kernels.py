"""Which program steps run in the core's C kernels (``_core/small_kernels.pxi``).

On small arrays a NumPy call costs its per-call machinery (~0.25-1 µs: argument parsing,
dtype resolution, the iterator), not its arithmetic, and a program of tiny steps pays that
per step.  So, when a program is compiled, these steps get kernels that skip it, as their
primitives declare (``c_kernel`` in :mod:`tenpy_ad.step_facts`):

* the exactly rounded elementwise operations of float64 (an ``ElementwiseLoop``: add,
  sub, mul, div, neg, scale, shift; never sqrt, exp, ... whose vectorised NumPy loops may
  round differently) on results up to :data:`SMALL_BYTES`, into the step's planned array
  or a 0-d result returned as a NumPy float64 (:func:`choose`); complex128 add, sub and
  neg of arrays;
* float64 sums of every value of an array up to :data:`SMALL_BYTES` (``FULL_SUM``),
  added in NumPy's own order (its pairwise summation from 0.0);
* small float64 and complex128 contractions as one call of NumPy's own CBLAS
  ``dgemm``/``zgemm`` (einsum's chooser in ``ops/contraction.py`` decides the layout).

The values are NumPy's to the last bit (one IEEE operation per value; NumPy's order of
additions; the gemm call NumPy's ``matmul`` makes).  A kernel checks at run time what only
the arrays can tell (type, dtype, contiguity, size) and hands any other operands, and any
result with a non-finite value, to NumPy.  ``tp.introspection.counters()`` counts both
(``small_kernels_run``, ``small_kernels_declined``); :meth:`tenpy_ad.Program.kernel_kinds`
tells which step got which kernel.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .. import dtypes
from .._compiled import _core
from ..step_facts import ElementwiseLoop, FullSum

#: whether programs compiled from now on use the C kernels (False: NumPy for every step,
#: for comparisons)
ENABLED = True

#: elementwise results and summed arrays up to this many bytes get a C kernel: beyond,
#: NumPy's loops win despite their per-call cost (measured with our AVX2 loops, programs
#: of 200 steps: add 0.83 against 1.13 µs and div 1.10 against 1.33 µs at 4096 values, add
#: 1.40 against 1.29 µs at 8192)
SMALL_BYTES = 32 << 10

FLOAT64 = dtypes.code_of(np.dtype(np.float64))
COMPLEX128 = dtypes.code_of(np.dtype(np.complex128))



#: NumPy's CBLAS products by the names its BLAS builds give them: (dgemm, zgemm, 64-bit
#: integers); the PyPI wheels' scipy-openblas (ILP64, then LP64) first
_CBLAS_NAMES = (("scipy_cblas_dgemm64_", "scipy_cblas_zgemm64_", True),
                ("cblas_dgemm64_", "cblas_zgemm64_", True),
                ("scipy_cblas_dgemm", "scipy_cblas_zgemm", False),
                ("cblas_dgemm", "cblas_zgemm", False))


def _numpy_cblas():
    """``(dgemm address, zgemm address, 64-bit integers)`` of the CBLAS functions NumPy's
    ``matmul`` calls, or None.  The kernels call exactly these, so their products are
    NumPy's on every BLAS build (another library's ``dgemm`` — SciPy's OpenBLAS, say — may
    pick other CPU kernels and round differently).  Unsuffixed names are taken only from a
    build without 64-bit integers, whose width is then known."""
    import ctypes
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:                       # NumPy 1.x
        from numpy.core import _multiarray_umath as umath
    try:
        library = ctypes.CDLL(umath.__file__)    # its symbols and its BLAS's
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except (OSError, KeyError, TypeError):
        return None
    ilp64 = "64" in str(blas.get("name", "")) + str(blas.get("openblas configuration", ""))
    for dgemm, zgemm, is64 in _CBLAS_NAMES:
        if not is64 and ilp64:
            continue
        try:
            d, z = getattr(library, dgemm), getattr(library, zgemm)
        except AttributeError:
            continue
        return (ctypes.cast(d, ctypes.c_void_p).value, ctypes.cast(z, ctypes.c_void_p).value,
                is64)
    return None


def _install_gemm() -> None:
    found = _numpy_cblas()
    if found is not None:
        _core.install_gemm(*found)   # else contractions keep NumPy's matmul


_install_gemm()
has_gemm: Callable[[], bool] = _core.has_gemm


def _c_kernel_of(prim):
    """The C kernel ``prim`` declares (:mod:`tenpy_ad.step_facts`), or None."""
    return None if prim.step_facts is None else prim.step_facts.c_kernel


def choose(signatures: list) -> tuple:
    """``(into, scalar)``: per ``(prim, params, operand metadata, result metadata)`` of
    ``signatures`` (metadata: ``(dtype code, shape)``), ``into``: ``(kernel, scratch
    counts)`` of a C kernel that computes a result with a shape into its planned array,
    and ``scalar``: the C kernel of a 0-d result (a NumPy float64, no planned array); None
    where there is none."""
    into, scalar = [None] * len(signatures), [None] * len(signatures)
    if ENABLED:
        for s, (prim, params, operands, result) in enumerate(signatures):
            if result is None or _c_kernel_of(prim) is None:
                continue
            if result[1] == ():
                scalar[s] = _scalar_kernel(prim, params, operands, result)
            elif 0 not in result[1]:
                into[s] = _planned_kernel(prim, params, operands, result)
    return into, scalar


def _planned_kernel(prim, params, operands: tuple, output: tuple):
    """``(kernel, scratch counts)`` of a step whose result, of a shape, one of the core's
    C kernels computes into its planned array, or None."""
    kernel = _elementwise(prim, params, operands, output, planned=True)
    if kernel is not None:
        return kernel, ()
    choose = _c_kernel_of(prim)
    if not ENABLED or not callable(choose) or any(code != output[0] for code, _ in operands):
        return None
    return choose(params, [shape for _, shape in operands], output[1], output[0])


def _scalar_kernel(prim, params, operands: tuple, output: tuple):
    """The C kernel of a step with a 0-d result (a NumPy float64, no planned array), or
    None."""
    return _sum_kernel(prim, params, operands, output) or \
        _elementwise(prim, params, operands, output, planned=False)


def _sum_kernel(prim, params, operands: list, output: tuple):
    """The C kernel of a step of a sum (declared ``FULL_SUM``) of all values of a float64
    operand (a 0-d result), or None."""
    if not ENABLED or not isinstance(_c_kernel_of(prim), FullSum) or \
            output != (FLOAT64, ()) or len(operands) != 1:
        return None
    code, shape = operands[0]
    size = math.prod(shape)
    if code != FLOAT64 or sorted(params) != list(range(len(shape))) or size == 0 or \
            size * 8 > SMALL_BYTES:
        return None
    return _core.SumKernel(size, prim.impl)


def _elementwise(prim, params, operands: list, output: tuple, planned: bool):
    """The C kernel of a step of ``prim`` with ``operands`` and ``output`` given as
    ``(dtype code, shape)``, or None.  ``planned``: it writes into the step's planned
    array (a result with a shape); else its result is 0-d."""
    found = _c_kernel_of(prim)
    code, shape = output
    if not ENABLED or not isinstance(found, ElementwiseLoop) or \
            any(c != code for c, _ in operands):
        return None
    op, constant_of, numpy_fn = found.op, found.constant, found.numpy_fn
    if code == COMPLEX128:
        return _complex_elementwise(op, shape, numpy_fn) if planned else None
    if code != FLOAT64:
        return None
    value = 0.0
    if constant_of is not None:
        value = constant_of(params)
        if type(value) is not float:
            return None
    size = math.prod(shape)
    if planned != bool(shape) or size * 8 > SMALL_BYTES or size == 0:
        return None
    # a declined planned step calls numpy_fn into its array; a 0-d result, the impl
    return _core.ElementwiseKernel(op, size if planned else 0, prim.impl, value, numpy_fn,
                                   None if constant_of is None else value)


def _complex_elementwise(op: str, shape: tuple, numpy_fn):
    """The C kernel of a complex128 add, sub or neg writing into a planned array (the
    other operations round their own way in NumPy: they keep its loops)."""
    size = math.prod(shape)
    if op not in ("add", "sub", "neg") or size == 0 or size * 16 > SMALL_BYTES:
        return None
    return _core.ComplexElementwiseKernel(op, size, numpy_fn)


def kind_of(kernel) -> str:
    """What computes a step with ``kernel``: a C kernel's kind ("add", "gemm", ...;
    "pass" for a skipped broadcast), or "numpy"."""
    return kernel.kind if isinstance(kernel, _core.StepKernel) else "numpy"


__all__ = ["ENABLED", "SMALL_BYTES", "choose", "kind_of", "has_gemm"]

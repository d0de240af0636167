"""How many BLAS/LAPACK threads each of the engine's calls gets: a pure function of the
work of the call (its shapes and dtypes) and ``tp.config.blas_threads``.

The work of one library call, by kind (a stack of matrices is looped over one matrix at a
time, so it threads like one of its matrices; complex work counts 4x):

* ``"matmul"``: ``2 m k n`` flops of one product (einsum, the matrix helpers of the rules,
  the block products of ``complement_solve``);
* ``"svd"``, ``"eigh"``, ``"qr"``, ``"solve"``: ``m n min(m, n)`` of one matrix ("n^3");
  eig and pinv count as svd, inv/det/slogdet/cholesky/expm as solve;
* ``"matvec"``: ``m n``, the matrix of an iterative solver's products (ARPACK in ``svds``,
  ``eigsh``).

:func:`threads_for` gives ``None`` below ``TINY[kind]`` (the libraries run such calls on
one thread by themselves; nothing is switched), else the forced count of
``tp.config.blas_threads = n``, else (``"auto"``) one thread below ``THREADED_FROM[kind]``
and the process's own setting (``runtime.PROCESS``: OpenBLAS's default is one thread per
CPU) from there on.  The thresholds were measured with ``bench/threads.py --crossover``
(bench/README.md).

An impl declares its work with :func:`threaded`: eager calls then decide per call, and a
compiled program decides per instruction when it is compiled, from the work declared on
the primitive (``prim.step_facts.blas``; :mod:`tenpy_ad.compiler.step_choice`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .config import config
from .runtime import PROCESS, blas_control
from .step_facts import BlasWork, declare_steps

#: below this work a call is left alone: the libraries run it on one thread by themselves
#: (OpenBLAS threads a gemm from 64^3, and eigh already at n = 32 on this machine class)
TINY = {"matmul": 2 * 64 ** 3, "svd": 16 ** 3, "eigh": 16 ** 3, "qr": 16 ** 3,
        "solve": 16 ** 3, "matvec": 64 * 64}
#: from this work on, "auto" gives a call the process's threads (below: one thread).
#: Measured on 2 shared vCPUs (bench/README.md).  With the machine idle, two threads
#: gained on lone calls from n = 128 (matmul 0.5x, solve 0.6-0.8x, eigh/svd 0.7-0.9x at
#: n = 256-1024); with other jobs running they lost 1.3-800x on every decomposition, solve
#: and matrix-vector product up to n = 1024-2048, while a lone matmul still broke even from
#: n = 1024.  In a program, each threaded call also leaves OpenBLAS's idle workers spinning
#: on the CPU the rest of the program needs: threading TRG chi = 32's 2 * 1024^3-flop
#: contractions made it 0.86x (idle) but 1.5x (busy).  So matmuls thread from n = 2048
#: (idle 0.6x, busy 1.0x); decompositions, solves and products with a vector from sizes
#: beyond the measured range, for machines with more cores.
THREADED_FROM = {"matmul": 2 * 2048 ** 3, "svd": 4096 ** 3, "eigh": 4096 ** 3,
                 "qr": 4096 ** 3, "solve": 4096 ** 3, "matvec": 8192 ** 2}

_COMPLEX_FACTOR = 4
_TINY_MATMUL = TINY["matmul"]


def threads_for(kind: str, work: int, setting=None):
    """The BLAS threads of one call of ``kind`` and ``work``: None (leave the libraries
    as they are), ``runtime.PROCESS`` (the process's own setting) or a count."""
    if work < TINY[kind]:
        return None
    if setting is None:
        setting = config.blas_threads
    if setting != "auto":
        return setting
    return PROCESS if work >= THREADED_FROM[kind] else 1


# ------------------------------------------------------------------ work of the primitives

def matmul_work(shape_a: tuple, shape_b: tuple) -> tuple:
    """``("matmul", 2 m k n)`` of ``(..., m, k) @ (..., k, n)`` (vectors: m or n = 1)."""
    m = shape_a[-2] if len(shape_a) > 1 else 1
    k = shape_a[-1] if shape_a else 1
    n = shape_b[-1] if len(shape_b) > 1 else 1
    return "matmul", 2 * m * k * n


def matrix_work(kind: str) -> Callable:
    """The work rule of a decomposition of ``kind`` of the first operand's matrices."""
    def work(params, shape, *others):
        m, n = shape[-2], shape[-1]
        return kind, m * n * min(m, n)
    return work


def matvec_work(params, shape, *others):
    """The work rule of an iterative solver's products with the first operand."""
    return "matvec", shape[-2] * shape[-1]


def threaded(prim, work: Callable, specialize: Callable | None = None) -> None:
    """Declare that ``prim``'s impl runs BLAS/LAPACK with ``work(params, *shapes)`` ->
    ``(kind, work)`` (or None: no BLAS call for these operands).  Its eager calls then
    decide their threads per call; programs call the impl undecorated, or
    ``specialize(params, *shapes)`` when given: a kernel for those shapes, made when the
    program is compiled (None: the impl).  The work is declared on the primitive
    (:class:`tenpy_ad.step_facts.BlasWork`)."""
    raw = prim.impl

    def impl(params, *xs):
        try:
            found = work(params, *[x.shape for x in xs])
        except AttributeError:      # not arrays (the impl converts them): as they are
            return raw(params, *xs)
        if found is None or found[1] * _COMPLEX_FACTOR < TINY[found[0]]:
            return raw(params, *xs)     # tiny whatever the dtype: no switch (the common case)
        kind, amount = found
        if xs[0].dtype.kind == "c":
            amount *= _COMPLEX_FACTOR
        return blas_control().call(threads_for(kind, amount), raw, params, *xs)

    impl.__doc__ = raw.__doc__
    prim.impl = impl
    declare_steps(prim, blas=BlasWork(work, raw, specialize))


def threads_of_work(work: Callable, params, shapes, is_complex: bool, setting=None):
    """The threads of one call whose work rule is ``work``, on operands of ``shapes``
    (complex: ``is_complex``), for ``setting``: see :func:`threads_for`."""
    found = work(params, *shapes)
    if found is None:
        return None
    kind, amount = found
    return threads_for(kind, amount * _COMPLEX_FACTOR if is_complex else amount, setting)


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` of ndarrays, with the threads its size calls for (the matrix products
    that rules compute directly on arrays in an eager backward pass)."""
    if a.size * b.shape[-1] * (2 * _COMPLEX_FACTOR) < _TINY_MATMUL:
        return a @ b        # tiny whatever the dtype (the common case; >= 2 m k n of a stack)
    kind, amount = matmul_work(a.shape, b.shape)
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        amount *= _COMPLEX_FACTOR
    threads = threads_for(kind, amount)
    if threads is None:
        return a @ b
    return blas_control().call(threads, np.matmul, a, b)


__all__ = ["TINY", "THREADED_FROM", "threads_for", "matmul_work", "matrix_work",
           "matvec_work", "threaded", "threads_of_work", "matmul"]

"""Process-level performance controls: BLAS/LAPACK threads and the allocator.

The engine switches BLAS threads around its own calls (how many each call gets is the
policy of :mod:`tenpy_ad.blas`): :func:`call_with_threads` runs one eager call, and a
compiled program's run enters the process's :func:`blas_control` once and switches between
its steps only when the count changes.  The process's setting (the user's) is read when
the outermost engine call starts and restored when it returns — also when several Python
threads call the engine at once (one process-wide count of active calls) — so code outside
the engine never sees a changed setting.

Switching costs microseconds: threadpoolctl finds the loaded BLAS libraries once, and for a
pthreads OpenBLAS (NumPy's and SciPy's builds are two libraries) the compiled core then
calls its ``openblas_get/set_num_threads`` directly (``tenpy_ad._core.BlasThreads``); other
libraries go through threadpoolctl's own controller methods.  ``bench/threads.py --switch``
measures the cost.

For scripts: :func:`limit_blas_threads` / :func:`restore_blas_threads` /
:func:`blas_threads` set every loaded BLAS library process-wide (side-by-side benchmarks
with other engines, "forced to one thread" baselines).  :func:`tune_allocator` (glibc)
keeps large freed blocks in the heap.  Nothing applies it by default (it changes the whole
process), and nothing needs it: with planned buffers and the partial SVD, a TRG value+grad
run took the same time with and without it (chi = 16: 242/248 ms without, 238/242 ms with;
chi = 32: 1317/1524 ms without, 1379/1473 ms with; bench/README.md).
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import sys
import threading

from threadpoolctl import ThreadpoolController

from ._compiled import _core

#: ``switch(PROCESS)``: the process's own setting, as it was when the engine call started
PROCESS = 0

_OPENBLAS_AFFIXES = tuple((prefix, suffix) for prefix in ("", "scipy_")
                          for suffix in ("", "64_", "_64"))


def _direct_functions(controller):
    """The addresses of ``openblas_set/get_num_threads`` of a pthreads OpenBLAS (its count
    is process-wide), or None: the library is then set through threadpoolctl."""
    if controller.internal_api != "openblas" or \
            getattr(controller, "threading_layer", None) != "pthreads":
        return None
    for prefix, suffix in _OPENBLAS_AFFIXES:
        set_ = getattr(controller.dynlib, f"{prefix}openblas_set_num_threads{suffix}", None)
        get = getattr(controller.dynlib, f"{prefix}openblas_get_num_threads{suffix}", None)
        if set_ is not None and get is not None:
            return (ctypes.cast(set_, ctypes.c_void_p).value,
                    ctypes.cast(get, ctypes.c_void_p).value)
    return None


def _find_libraries():
    """The process's BlasThreads, over every BLAS library loaded now."""
    direct, through_python = [], []
    for controller in ThreadpoolController().select(user_api="blas").lib_controllers:
        functions = _direct_functions(controller)
        if functions is None:
            through_python.append(controller)
        else:
            direct.append(functions)
    return _core.BlasThreads([s for s, _ in direct], [g for _, g in direct],
                             [c.set_num_threads for c in through_python],
                             [c.get_num_threads for c in through_python])


_lock = threading.Lock()
_blas = None


def blas_control():
    """The process's :class:`tenpy_ad._core.BlasThreads` (the libraries are looked up on
    first use: NumPy's and SciPy's are loaded by then)."""
    global _blas
    if _blas is None:
        with _lock:
            if _blas is None:
                _blas = _find_libraries()
    return _blas


def call_with_threads(threads, fn, *args):
    """``fn(*args)`` with ``threads`` BLAS threads (``None``: as they are; ``PROCESS``: the
    process's own setting; ``n``: exactly n), the process's setting restored afterwards."""
    return (_blas or blas_control()).call(threads, fn, *args)


def process_blas_threads() -> list:
    """The thread count of each loaded BLAS library, as the process has it now (outside
    engine calls: the user's setting)."""
    return blas_control().process_counts()


# ------------------------------------------------------------------ process-wide, for scripts

def limit_blas_threads(n: int = 1):
    """Set every loaded BLAS library to ``n`` threads, process-wide; returns what to pass
    to :func:`restore_blas_threads`.  Engine calls then use at most ``n`` threads under
    ``tp.config.blas_threads = "auto"`` (call it outside engine calls)."""
    return ThreadpoolController().limit(limits=n, user_api="blas")


def restore_blas_threads(previous) -> None:
    """Undo :func:`limit_blas_threads`."""
    previous.restore_original_limits()


@contextlib.contextmanager
def blas_threads(n: int = 1):
    """Context manager: every loaded BLAS library limited to ``n`` threads inside."""
    previous = limit_blas_threads(n)
    try:
        yield
    finally:
        restore_blas_threads(previous)


def tune_allocator(mmap_threshold: int = 32 << 20, trim_threshold: int = 256 << 20) -> bool:
    """Keep freed blocks below ``mmap_threshold`` in the heap (glibc ``mallopt``): the
    process holds on to up to ``trim_threshold`` bytes of free memory instead of paying
    page faults for every large temporary.  Returns whether it applied."""
    if not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    return bool(mallopt(M_MMAP_THRESHOLD, mmap_threshold)) and bool(
        mallopt(M_TRIM_THRESHOLD, trim_threshold))


__all__ = ["PROCESS", "blas_control", "call_with_threads", "process_blas_threads",
           "limit_blas_threads", "restore_blas_threads", "blas_threads", "tune_allocator"]

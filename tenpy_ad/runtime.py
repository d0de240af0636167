"""Process-level performance settings for command-line runs and benchmarks.

Neither is applied on ``import tenpy_ad``: they change the whole process, so the main job
and the benchmark scripts opt in (both engines of a side-by-side run then share them).

* :func:`limit_blas_threads` — on a small shared machine (2 vCPUs here) OpenBLAS's worker
  threads mostly wait on each other: single-threaded BLAS/LAPACK ran the TRG program 2-3x
  faster.
* :func:`tune_allocator` — large NumPy temporaries (LAPACK workspaces, 256x256 factors)
  are otherwise returned to the OS after each use and page-faulted back in on the next:
  keeping them in the heap saved ~10 % of a TRG run (glibc only; a no-op elsewhere).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import sys

_SETTERS = ("openblas_set_num_threads", "scipy_openblas_set_num_threads",
            "scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_",
            "MKL_Set_Num_Threads")


def limit_blas_threads(n: int = 1) -> list:
    """Set the thread count of every BLAS library loaded in this process (NumPy's and
    SciPy's OpenBLAS builds are separate libraries).  Returns the libraries changed."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    if threadpool_limits is not None:
        threadpool_limits(limits=n, user_api="blas")
        return ["threadpoolctl"]
    changed = []
    if not sys.platform.startswith("linux"):
        return changed
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps
                 if ("openblas" in line.lower() or "mkl_rt" in line.lower()) and ".so" in line}
    for path in sorted(paths):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SETTERS:
            setter = getattr(library, name, None)
            if setter is not None:
                setter(ctypes.c_int(n))
                changed.append(path)
                break
    return changed


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


__all__ = ["limit_blas_threads", "tune_allocator"]

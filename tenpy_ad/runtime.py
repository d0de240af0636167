"""Process-level performance settings for command-line runs and benchmarks.

Neither is applied on ``import tenpy_ad``: they change the whole process, so the main job
and the benchmark scripts opt in (both engines of a side-by-side run then share them).

* :func:`limit_blas_threads` — on a small shared machine OpenBLAS's worker threads mostly
  wait on each other: single-threaded BLAS/LAPACK runs the TRG program faster.
* :func:`tune_allocator` — large NumPy temporaries (LAPACK workspaces, 256x256 factors)
  are otherwise returned to the OS after each use and page-faulted back in on the next:
  keeping them in the heap saves page faults (glibc only; a no-op elsewhere).

What each saved on the project's machines is in ``bench/README.md``.
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import sys

_CONTROLS = (("openblas_get_num_threads", "openblas_set_num_threads"),
             ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
             ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
             ("openblas_get_num_threads64_", "openblas_set_num_threads64_"))


def _openblas_controls() -> list:
    """``(getter, setter)`` for every OpenBLAS library loaded in this process (NumPy's and
    SciPy's builds are separate libraries).  Linux only."""
    if not sys.platform.startswith("linux"):
        return []
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps
                     if "openblas" in line.lower() and ".so" in line}
    except OSError:
        return []
    controls = []
    for path in sorted(paths):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for get_name, set_name in _CONTROLS:
            getter, setter = getattr(library, get_name, None), getattr(library, set_name, None)
            if getter is not None and setter is not None:
                controls.append((getter, setter))
                break
    return controls


def limit_blas_threads(n: int = 1) -> list:
    """Set every loaded OpenBLAS to ``n`` threads; returns ``(setter, previous)`` pairs
    for :func:`restore_blas_threads`."""
    previous = []
    for getter, setter in _openblas_controls():
        previous.append((setter, getter()))
        setter(ctypes.c_int(n))
    return previous


def restore_blas_threads(previous: list) -> None:
    """Undo :func:`limit_blas_threads`."""
    for setter, n in previous:
        setter(ctypes.c_int(n))


@contextlib.contextmanager
def blas_threads(n: int = 1):
    """Context manager: BLAS limited to ``n`` threads inside, restored after."""
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


__all__ = ["limit_blas_threads", "restore_blas_threads", "blas_threads", "tune_allocator"]

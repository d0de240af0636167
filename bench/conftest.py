"""pytest-benchmark suite of tenpy_ad (``pytest bench``).

Every benchmark records, in ``extra_info``, the op counts it ran on and the source hash of
the compiled core, so saved baselines say what they measured.  The session runs with the
benchmark scripts' process settings (tenpy_ad.runtime): single-threaded BLAS and large
freed blocks kept in the heap.
"""
import pytest

import tenpy_ad as tp
from tenpy_ad.runtime import limit_blas_threads

limit_blas_threads(1)


@pytest.fixture
def core_info(benchmark):
    """Record which compiled core produced the numbers."""
    benchmark.extra_info["core_source_hash"] = tp.core_info()["source_hash"]
    return benchmark

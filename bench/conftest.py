import pytest

import tenpy_ad as tp


@pytest.fixture
def core_info(benchmark):
    """Record which compiled core produced the numbers."""
    benchmark.extra_info["core_source_hash"] = tp.core_info()["source_hash"]
    return benchmark

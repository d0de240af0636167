"""The gated benchmarks: every entry of ``workloads.WORKLOADS`` in calibrated rounds.

Their stored times are calibrated times (``calibration.py``), so the documented compare
(``bench/README.md``, "Regression gate") gates on ratios measured in one session.
"""
import pytest

from calibration import CLOCK, run_calibrated
from workloads import WORKLOADS, bench_scale


@pytest.mark.benchmark(timer=CLOCK)
@pytest.mark.parametrize("workload", WORKLOADS, ids=[w.name for w in WORKLOADS])
def test_gate(benchmark, core_info, workload):
    benchmark.group = workload.group
    timed, info = workload.prepare(workload.scaled_size())
    run_calibrated(benchmark, timed)
    benchmark.extra_info.update(info, scale=bench_scale())

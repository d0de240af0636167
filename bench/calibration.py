"""Calibrated timing for the gated benchmarks (``bench/test_gate.py``).

Every round runs the fixed calibration workload below and then the benchmark's workload,
each timed in process CPU time with the cycle collector paused, and reports their ratio:
*calibrated time* = workload CPU time / calibration CPU time x ``UNIT_S``.  The ratio is
what pytest-benchmark stores and compares: :data:`CLOCK` is the gated benchmarks' timer, a
clock that advances by the calibrated time of each round, so ``--benchmark-compare-fail``
gates on ratios measured side by side in one session.  Why CPU time, the median and this
calibration: ``bench/README.md`` ("Regression gate").

The calibration never touches tenpy_ad, so a change of the engine cannot move it.  It
mixes the two kinds of work the gated workloads do, interpreter-bound dispatch on tiny
arrays and LAPACK, so that a machine that slows either down slows the calibration down as
well; it allocates nothing that outlives a call, so its time does not depend on what the
process ran before (a pure-Python object-churn part did: +80 % late in a session).
"""
from __future__ import annotations

import contextlib
import gc
import statistics
import time
from typing import Callable

import numpy as np

#: displayed length of one calibration run: calibrated times read as the time the
#: workload would take on a machine where the calibration takes 10 ms
UNIT_S = 0.010
#: measured rounds and untimed warm-up rounds per gated benchmark
ROUNDS = 30
WARMUP_ROUNDS = 3

_RNG = np.random.default_rng(20261130)
_SMALL_A = _RNG.standard_normal((3, 3))
_SMALL_B = _RNG.standard_normal((3, 3)) * 0.3
_DENSE = _RNG.standard_normal((128, 128))


def _small_array_ops(n: int = 4000) -> np.ndarray:
    """NumPy dispatch on 3x3 arrays: interpreter-bound, like the benchmark chains."""
    a = _SMALL_A
    for _ in range(n):
        a = np.tanh(a @ _SMALL_B + _SMALL_A) * 0.5
    return a


def _lapack(n: int = 4) -> None:
    """Dense SVDs: LAPACK-bound, like the TRG run."""
    for _ in range(n):
        np.linalg.svd(_DENSE)


def calibration() -> None:
    """The fixed calibration workload (~15 ms of CPU on the project's machine class)."""
    _small_array_ops()
    _lapack()


@contextlib.contextmanager
def collector_paused():
    """Collect once, then keep the cycle collector off while timing."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def cpu_seconds(run: Callable[[], object]) -> float:
    """Process CPU seconds of one call; its result is freed after the clock stops."""
    start = time.process_time()
    result = run()
    elapsed = time.process_time() - start
    del result
    return elapsed


class CalibratedClock:
    """pytest-benchmark timer whose reading advances only by calibrated time."""

    __name__ = "calibrated_clock"          # how pytest-benchmark names the timer

    def __init__(self):
        self.seconds = 0.0

    def __call__(self) -> float:
        return self.seconds


#: the timer of every gated benchmark (``@pytest.mark.benchmark(timer=CLOCK)``)
CLOCK = CalibratedClock()


class CalibratedRounds:
    """The round function handed to ``benchmark.pedantic``: calibration, then workload,
    both in CPU time; advances :data:`CLOCK` by their ratio and keeps the raw times."""

    def __init__(self, workload: Callable[[], object]):
        self.workload = workload
        self.workload_s: list[float] = []
        self.calibration_s: list[float] = []

    def __call__(self) -> None:
        with collector_paused():
            calibration_s = cpu_seconds(calibration)
            workload_s = cpu_seconds(self.workload)
        self.calibration_s.append(calibration_s)
        self.workload_s.append(workload_s)
        CLOCK.seconds += workload_s / calibration_s * UNIT_S

    def extra_info(self) -> dict:
        """Median raw CPU times (ms) of the measured rounds, for the saved JSON."""
        measured = slice(-ROUNDS, None)
        return {"workload_cpu_ms": statistics.median(self.workload_s[measured]) * 1e3,
                "calibration_cpu_ms": statistics.median(self.calibration_s[measured]) * 1e3}


def run_calibrated(benchmark, workload: Callable[[], object]) -> None:
    """Time ``workload`` in calibrated rounds on ``benchmark`` (whose timer is
    :data:`CLOCK`); with ``--benchmark-disable`` it runs once, untimed."""
    if benchmark.disabled:
        benchmark.pedantic(workload)       # one untimed call (CI's smoke run)
        return
    rounds = CalibratedRounds(workload)
    benchmark.pedantic(rounds, rounds=ROUNDS, warmup_rounds=WARMUP_ROUNDS)
    benchmark.extra_info.update(rounds.extra_info())

"""Calibrated timing for the gated benchmarks (``bench/test_gate.py``).

The selected workloads are measured round-robin (every round visits each of them in
turn); a round of one workload runs the fixed calibration workload below and then the
workload, each timed in process CPU time with the cycle collector paused, and yields
their ratio: *calibrated time* = workload CPU time / calibration CPU time x ``UNIT_S``.
The ratios are what pytest-benchmark stores and compares: :func:`report` replays them
through :data:`CLOCK`, the gated benchmarks' timer, so ``--benchmark-compare-fail`` gates
on ratios measured side by side in one session.  Why CPU time, round-robin, the median
and this calibration: ``bench/README.md`` ("Regression gate").

The calibration never touches tenpy_ad, so a change of the engine cannot move it.  It
mixes the two kinds of work the gated workloads do, interpreter-bound dispatch on tiny
arrays and LAPACK, so that a machine that slows either down slows the calibration down as
well; it allocates nothing that outlives a call, so its time does not depend on what the
process ran before (a pure-Python object-churn part did: it nearly doubled late in a
session).
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


class Rounds:
    """CPU seconds of one workload and of the calibration run just before it, per round."""

    def __init__(self):
        self.workload_s: list[float] = []
        self.calibration_s: list[float] = []

    def measure(self, workload: Callable[[], object]) -> None:
        """One round: the calibration, then ``workload``, with the collector paused."""
        with collector_paused():
            self.calibration_s.append(cpu_seconds(calibration))
            self.workload_s.append(cpu_seconds(workload))

    def calibrated_seconds(self) -> list[float]:
        """Per round: workload / calibration x ``UNIT_S``."""
        return [w / c * UNIT_S for w, c in zip(self.workload_s, self.calibration_s)]

    def extra_info(self) -> dict:
        """Median raw CPU times (ms), for the saved JSON."""
        return {"workload_cpu_ms": statistics.median(self.workload_s) * 1e3,
                "calibration_cpu_ms": statistics.median(self.calibration_s) * 1e3}


def measure_round_robin(workloads: dict[str, Callable[[], object]]) -> dict[str, Rounds]:
    """``WARMUP_ROUNDS`` + ``ROUNDS`` rounds, each visiting every workload in turn, so a
    burst of load from a neighbour hits a few rounds of every workload instead of all
    rounds of one; the warm-up rounds are dropped."""
    warmup = {name: Rounds() for name in workloads}
    measured = {name: Rounds() for name in workloads}
    for i in range(WARMUP_ROUNDS + ROUNDS):
        rounds = warmup if i < WARMUP_ROUNDS else measured
        for name, workload in workloads.items():
            rounds[name].measure(workload)
    return measured


class CalibratedClock:
    """pytest-benchmark timer whose reading advances only by calibrated time."""

    __name__ = "calibrated_clock"          # how pytest-benchmark names the timer

    def __init__(self):
        self.seconds = 0.0

    def __call__(self) -> float:
        return self.seconds


#: the timer of every gated benchmark (``@pytest.mark.benchmark(timer=CLOCK)``)
CLOCK = CalibratedClock()


def report(benchmark, rounds: Rounds) -> None:
    """Hand measured rounds to ``benchmark`` (whose timer is :data:`CLOCK`): each of its
    rounds advances the clock by one calibrated time, so pytest-benchmark stores, shows
    and compares the calibrated times."""
    calibrated = iter(rounds.calibrated_seconds())

    def one_round():
        CLOCK.seconds += next(calibrated)

    benchmark.pedantic(one_round, rounds=len(rounds.workload_s))
    benchmark.extra_info.update(rounds.extra_info())

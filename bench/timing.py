"""The one way the benchmark scripts time things: wall-clock laps, and their medians over
repeated runs.

    laps = Laps()              # the clock starts
    build()
    laps.lap("build")          # seconds since the start
    grad()
    laps.lap("grad")           # seconds since the previous lap
    laps.ms                    # {"build": ..., "grad": ...} in milliseconds

:func:`median_laps` calls a function with fresh ``Laps`` ``repeats`` times and returns the
median of each lap: stages timed side by side in one loop are interleaved, so a noisy
shared machine slows them alike.  Laps also record the process's CPU time (all threads),
which a machine shared with other jobs inflates less than wall-clock time.
"""
from __future__ import annotations

import statistics
import time
from typing import Callable


class Laps:
    """Consecutive stages of one run, timed with ``time.perf_counter``."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.cpu_seconds: dict[str, float] = {}
        self._last = time.perf_counter()
        self._last_cpu = time.process_time()

    def lap(self, name: str) -> None:
        """Record the time since the previous lap (or the start) as ``name``."""
        now, cpu = time.perf_counter(), time.process_time()
        self.seconds[name] = now - self._last
        self.cpu_seconds[name] = cpu - self._last_cpu
        self._last, self._last_cpu = now, cpu

    def skip(self) -> None:
        """Restart the clock: what ran since the previous lap is not timed."""
        self._last, self._last_cpu = time.perf_counter(), time.process_time()

    @property
    def ms(self) -> dict[str, float]:
        return {name: seconds * 1e3 for name, seconds in self.seconds.items()}


def median_laps(run: Callable[[Laps, int], object], repeats: int,
                cpu: dict | None = None) -> dict[str, float]:
    """The median ms of each lap of ``run(laps, i)`` for ``i`` in ``range(repeats)``,
    each call with fresh ``Laps`` started just before it; a dict passed as ``cpu``
    receives the median CPU ms of each lap."""
    samples: dict[str, list] = {}
    cpu_samples: dict[str, list] = {}
    for i in range(repeats):
        laps = Laps()
        run(laps, i)
        for name, seconds in laps.seconds.items():
            samples.setdefault(name, []).append(seconds)
            cpu_samples.setdefault(name, []).append(laps.cpu_seconds[name])
    if cpu is not None:
        cpu.update({name: statistics.median(v) * 1e3 for name, v in cpu_samples.items()})
    return {name: statistics.median(values) * 1e3 for name, values in samples.items()}

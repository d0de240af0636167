"""Where the sub-commands' work runs: this process or a pool of workers, each set up the
same way (BLAS threads, allocator)."""
from __future__ import annotations

import time

from tenpy_ad.cli.arguments import BETA_MAX
from tenpy_ad.cli.output import note, progress

#: a single run's figure adds this many betas on each side, within this distance
WINDOW_EACH_SIDE, WINDOW_HALF_WIDTH = 3, 0.05


def set_blas_threads(threads) -> None:
    """The one place ``--threads`` takes effect: ``tp.config.blas_threads`` of this process
    (and, through the environment, of its worker processes); None keeps the default."""
    import os
    import tenpy_ad as tp
    from tenpy_ad.config import ENVIRONMENT_VARIABLE
    if threads is None:
        return
    tp.config.blas_threads = threads
    os.environ[ENVIRONMENT_VARIABLE] = str(threads)


def prepare_process(threads: int) -> None:
    """Process-wide settings of a command-line run (and of each of its workers)."""
    set_blas_threads(threads)


def run_points(point, betas: list, workers: int | None, threads: int) -> list:
    """``point(beta)`` for every beta, in order: here, or on ``workers`` processes; a
    progress bar on stderr for more than one beta."""
    with progress(len(betas)) as report:
        if workers is None:
            rows = []
            for beta in betas:
                rows.append(point(beta))
                report(len(rows))
            return rows
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(workers, initializer=prepare_process,
                                 initargs=(threads,)) as pool:
            futures = [pool.submit(point, beta) for beta in betas]
            rows = []
            for future in futures:
                rows.append(future.result())
                report(len(rows))
            return rows


def window(beta: float, each_side: int, half_width: float, beta_max: float) -> list:
    """``beta`` and ``each_side`` betas on either side within ``half_width`` (kept in
    ``(0, beta_max]``)."""
    low = max(beta - half_width, beta / 2.0)
    high = min(beta + half_width, beta_max)
    below = [low + (beta - low) * i / each_side for i in range(each_side)]
    above = [beta + (high - beta) * (i + 1) / each_side for i in range(each_side)]
    return sorted(set(below + [beta] + above))


def figure_rows(rows: list, neighbours) -> tuple:
    """``(rows to draw, the requested row)``: a sweep is drawn as it is (no requested row);
    a single run is drawn among the rows ``neighbours(betas)`` computes around it."""
    if len(rows) != 1:
        return rows, None
    requested = rows[0]
    betas = [b for b in window(requested["beta"], WINDOW_EACH_SIDE, WINDOW_HALF_WIDTH,
                               BETA_MAX) if b != requested["beta"]]
    note(f"plot: {len(betas)} more betas around beta = {requested['beta']:.6g} for the "
         "figure")
    return sorted(neighbours(betas) + rows, key=lambda row: row["beta"]), requested


def plot_rows(path: str, rows: list, neighbours, figure) -> None:
    """Draw ``rows`` into ``path``, a single run among the rows ``neighbours(betas)``
    computes around it (:func:`figure_rows`); ``figure(first_row)`` gives the rest of
    the arguments of :func:`tenpy_ad.plots.observables_figure`."""
    from tenpy_ad import plots           # matplotlib: only when a figure is asked for
    rows, requested = figure_rows(rows, neighbours)
    plots.observables_figure(path, rows, requested=requested, **figure(rows[0]))
    note(f"plot written to {path}")


class Stopwatch:
    """Milliseconds between laps: ``watch.lap()`` returns the time since the last one."""

    def __init__(self):
        self.last = time.perf_counter()

    def lap(self) -> float:
        now = time.perf_counter()
        elapsed, self.last = (now - self.last) * 1e3, now
        return elapsed

"""Where the sub-commands' work runs: this process or a pool of workers, each set up the
same way (BLAS threads, allocator)."""
from __future__ import annotations

import time

from tenpy_ad.cli.arguments import BETA_MAX
from tenpy_ad.cli.exits import FAILURE, one_line, report
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


def run_points(point, betas: list, workers: int | None, threads: int,
               failures: tuple = ()) -> list:
    """``point(beta)`` for every beta, in order: here, or on ``workers`` processes; a
    progress bar on stderr for more than one beta.  A point that raises one of
    ``failures`` becomes the row ``{"beta": beta, "error": its type and message on one
    line}`` and the others go on (any other exception ends the run)."""
    with progress(len(betas)) as report:
        if workers is None:
            rows = []
            for beta in betas:
                rows.append(_outcome(lambda: point(beta), beta, failures))
                report(len(rows))
            return rows
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(workers, initializer=prepare_process,
                                 initargs=(threads,)) as pool:
            futures = [pool.submit(point, beta) for beta in betas]
            rows = []
            for beta, future in zip(betas, futures):
                rows.append(_outcome(future.result, beta, failures))
                report(len(rows))
            return rows


def _outcome(compute, beta: float, failures: tuple) -> dict:
    """``compute()``, or the row of a failed point when it raises one of ``failures``."""
    try:
        return compute()
    except failures as error:
        return {"beta": beta, "error": f"{type(error).__name__}: {one_line(error)}"}


def finished(rows: list) -> list:
    """The rows of the points that did not fail."""
    return [row for row in rows if "error" not in row]


def report_failures(rows: list, hint: str = "") -> int:
    """One ``error:`` line on stderr per failed point (which beta, why, then ``hint``);
    the exit code: FAILURE if a point failed, else 0."""
    failed = [row for row in rows if "error" in row]
    for row in failed:
        report(f"beta = {row['beta']:.6g} failed: {row['error']}{hint}")
    if failed and len(rows) > 1:
        note(f"{len(failed)} of {len(rows)} points failed; the other "
             f"{len(rows) - len(failed)} are shown")
    return FAILURE if failed else 0


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

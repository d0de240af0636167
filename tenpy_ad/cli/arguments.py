"""Argument types and checks shared by the sub-commands.

Each type checks its value while the command line is parsed, so a bad value stops the
command before any work with one line, ``error: argument --chi: ...``.  Nothing here
imports the models (nor matplotlib, unless a plot is asked for).
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

from tenpy_ad.cli.exits import UsageError

#: largest accepted inverse temperature: beyond it the Ising model is frozen to double
#: precision (u = -2 to 1e-30) and the RG's singular values degenerate
BETA_MAX = 10.0
#: the critical point ln(1 + sqrt 2)/2, as written in the help texts
BETA_C_TEXT = "beta_c = ln(1 + sqrt 2)/2 = 0.440687"


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are :class:`UsageError` (one line, exit code 2)
    and whose help keeps the descriptions' line breaks."""

    def __init__(self, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(**kwargs)

    def error(self, message):
        raise UsageError(f"{message} (see {self.prog} --help)")


def integer(low: int, high: int | None = None, why: str = ""):
    """An argument type: an integer in ``[low, high]``."""
    bounds = f">= {low}" if high is None else f"in [{low}, {high}]"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be an integer {bounds}{why}, got {value}")
        return value
    return parse


def blas_threads(text: str):
    """An argument type: ``auto`` or a number of threads >= 1."""
    from tenpy_ad.config import parse_blas_threads
    from tenpy_ad.errors import ArgumentError
    try:
        return parse_blas_threads(text, "--threads")
    except ArgumentError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def beta(text: str) -> float:
    """An argument type: an inverse temperature in ``(0, BETA_MAX]``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and 0.0 < value <= BETA_MAX):
        raise argparse.ArgumentTypeError(
            f"beta must be a number in (0, {BETA_MAX:g}], got {text} (beyond {BETA_MAX:g} "
            "the model is frozen to double precision)")
    return value


def beta_range(text: str) -> list:
    """An argument type: ``START:STOP:NUM``, NUM betas from START to STOP inclusive."""
    parts = text.split(":")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(f"expected START:STOP:NUM, got {text!r}")
    start, stop = beta(parts[0]), beta(parts[1])
    num = integer(1)(parts[2])
    if num == 1:
        return [start]
    return [start + (stop - start) * i / (num - 1) for i in range(num)]


def plot_file(text: str) -> Path:
    """An argument type: an image path that matplotlib can write (it must be installed,
    the suffix must name a format it knows, the folder must exist and be writable)."""
    path = Path(text)
    folder = path.parent
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"folder {str(folder)!r} does not exist")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder, not a file")
    from tenpy_ad import plots
    try:
        formats = plots.image_formats()
    except ImportError:
        raise argparse.ArgumentTypeError(
            "plots need matplotlib: pip install matplotlib (or the [plot] extra)") from None
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in formats:
        raise argparse.ArgumentTypeError(
            f"{text!r}: the file's suffix picks the image format; use one of "
            f"{', '.join('.' + name for name in sorted(formats))}")
    _check_writable(path)
    return path


def _check_writable(path: Path) -> None:
    """Open ``path`` for appending (removing it again if it is new): permissions alone
    do not tell, e.g. for root or on a read-only file system."""
    existed = path.exists()
    try:
        with open(path, "ab"):
            pass
    except OSError as error:
        raise argparse.ArgumentTypeError(
            f"{str(path)!r} cannot be written: {error.strerror}") from None
    if not existed:
        path.unlink()


def add_output_options(parser: Parser, plot_help: str) -> None:
    """--json and --plot, as every sub-command has them."""
    parser.add_argument("--json", action="store_true",
                        help="print the results as one JSON list of objects (one per beta "
                             "or depth; null where a value is infinite or undefined)")
    parser.add_argument("--plot", metavar="FILE", type=plot_file,
                        help=f"{plot_help}; the suffix picks the format (.png, .pdf, .svg); "
                             "needs matplotlib")


def add_beta_options(parser: Parser, default_text: str) -> None:
    """--beta or --betas (one of them)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--beta", type=beta, metavar="B",
                       help=f"inverse temperature in (0, {BETA_MAX:g}] ({default_text})")
    group.add_argument("--betas", type=beta_range, metavar="START:STOP:NUM",
                       help="sweep NUM betas from START to STOP (inclusive), with a "
                            "progress bar")


def add_process_options(parser: Parser) -> None:
    """--threads and --workers."""
    parser.add_argument("--threads", type=blas_threads, default=None, metavar="N|auto",
                        help="BLAS/LAPACK threads of the engine's calls, tp.config.blas_threads "
                             "(default: $TENPY_AD_BLAS_THREADS, else 'auto': one thread for "
                             "the small and medium calls where threads only fight)")
    parser.add_argument("--workers", type=integer(1), metavar="N",
                        help="spread a sweep (--betas) over N processes (default: this one)")


def check_beta_options(args) -> None:
    """The checks of the beta and process options that involve more than one option."""
    if args.workers is not None and args.betas is None:
        raise UsageError("--workers spreads a sweep over processes: it needs --betas")

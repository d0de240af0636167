"""How a command ends when it cannot finish: one line on stderr, never a traceback.

* :class:`UsageError` — the command line is wrong (a number out of range, an output path
  that cannot be written, a missing optional package): exit code 2, before any work.
* :class:`Failure` — the work itself failed (no convergence, a write error): exit code 1.
  Any other exception is reported the same way, with its type, unless the environment
  variable ``TENPY_AD_TRACEBACK=1`` asks for the traceback.
"""
from __future__ import annotations

import os
import sys

USAGE, FAILURE, INTERRUPTED = 2, 1, 130


class UsageError(Exception):
    """A bad command line (exit code 2)."""


class Failure(Exception):
    """The command's work failed; the message is ready to show (exit code 1)."""


def one_line(error: BaseException) -> str:
    """The error's message and notes on one line."""
    parts = [" ".join(str(part).split()) for part in (error, *getattr(error, "__notes__", ()))]
    return "; ".join(part for part in parts if part) or type(error).__name__


def report(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def exit_code(error: BaseException) -> int:
    """Report ``error`` in one line and return the exit code it calls for (re-raising
    unexpected errors when ``TENPY_AD_TRACEBACK=1``)."""
    if isinstance(error, UsageError):
        report(one_line(error))
        return USAGE
    if isinstance(error, KeyboardInterrupt):
        report("interrupted")
        return INTERRUPTED
    if isinstance(error, BrokenPipeError):      # the reader left (| head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return FAILURE
    if os.environ.get("TENPY_AD_TRACEBACK") == "1":
        raise error
    from tenpy_ad.errors import TenpyAdError
    if isinstance(error, (Failure, TenpyAdError, OSError)):
        report(one_line(error))
    else:
        report(f"{type(error).__name__}: {one_line(error)} (TENPY_AD_TRACEBACK=1 shows "
               "where it was raised)")
    return FAILURE

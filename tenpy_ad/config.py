"""Engine-wide settings: ``tp.config``.

``tp.config.blas_threads`` — how many BLAS/LAPACK threads the engine's own calls use:

* ``"auto"`` (the default): chosen per call (per instruction in a compiled program) from
  the size of the work — one thread for small and medium matrices, where OpenBLAS's
  threads mostly wait on each other, the process's own setting for big ones
  (:mod:`tenpy_ad.blas` holds the measured thresholds);
* an int ``n >= 1``: ``n`` threads for every call big enough to be threaded at all.

The environment variable ``TENPY_AD_BLAS_THREADS`` (``auto`` or an int) sets the value at
import; ``python -m tenpy_ad --threads N`` sets it for the command line.  Either way the
process's own BLAS setting is restored when an engine call returns, so code outside the
engine is unaffected.
"""
from __future__ import annotations

import os

from .errors import ArgumentError

ENVIRONMENT_VARIABLE = "TENPY_AD_BLAS_THREADS"


def parse_blas_threads(value, where: str = "tp.config.blas_threads"):
    """``"auto"`` or an int >= 1 (also from text, as the environment gives it)."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "auto":
            return "auto"
        try:
            value = int(text)
        except ValueError:
            raise ArgumentError(f"{where}: expected 'auto' or an integer >= 1, got "
                                f"{value!r}") from None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ArgumentError(f"{where}: expected 'auto' or an integer >= 1, got {value!r}")
    return value


class Config:
    """Engine-wide settings (``tp.config``); see the module docstring."""

    __slots__ = ("_blas_threads",)

    def __init__(self, blas_threads="auto"):
        self._blas_threads = parse_blas_threads(blas_threads)

    @property
    def blas_threads(self):
        """``"auto"`` or the number of BLAS threads of the engine's calls."""
        return self._blas_threads

    @blas_threads.setter
    def blas_threads(self, value):
        self._blas_threads = parse_blas_threads(value)

    def __repr__(self):
        return f"Config(blas_threads={self._blas_threads!r})"


def _from_environment() -> Config:
    value = os.environ.get(ENVIRONMENT_VARIABLE)
    if value is None or not value.strip():
        return Config()
    return Config(parse_blas_threads(value, f"environment variable {ENVIRONMENT_VARIABLE}"))


config = _from_environment()

__all__ = ["Config", "config", "ENVIRONMENT_VARIABLE"]

"""Arrays built from shapes: ``ones``, ``zeros``."""
from __future__ import annotations

import numpy as np

from .. import dtypes


def ones(shape, dtype="float64") -> np.ndarray:
    """An array of ones (a plain ndarray: constants mix into any mode)."""
    return np.ones(shape, dtype=dtypes.DTYPES[dtypes.code_of(dtype)])


def zeros(shape, dtype="float64") -> np.ndarray:
    """An array of zeros (a plain ndarray: constants mix into any mode)."""
    return np.zeros(shape, dtype=dtypes.DTYPES[dtypes.code_of(dtype)])


__all__ = ['ones', 'zeros']

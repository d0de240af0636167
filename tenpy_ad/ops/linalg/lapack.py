"""Running the LAPACK-backed implementations of the primitives safely.

* Non-finite input gives NaN output: LAPACK rejects NaN/Inf (``** On entry to DLASCL
  parameter number 4 had an illegal value``), loops or returns garbage (``det`` of a NaN
  matrix is 0), so matrices holding a NaN or Inf are replaced by the identity for the call
  and their results are set to NaN afterwards.  The others of a stack are unaffected.
* LAPACK's failures are NumPy's ``LinAlgError``, reworded to name the operation and the
  operand (``inv: singular matrix (float64[3, 3])``).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

_WORDING = {
    "Singular matrix": "singular matrix",
    "Matrix is not positive definite": "the matrix is not positive definite",
}


def describe_array(a: np.ndarray) -> str:
    return f"{a.dtype.name}{list(a.shape)}"


def linalg_error(name: str, a: np.ndarray, error: Exception) -> np.linalg.LinAlgError:
    """NumPy's ``error`` reworded: ``name: what (dtype[shape])``."""
    what = _WORDING.get(str(error), str(error))
    return np.linalg.LinAlgError(f"{name}: {what} ({describe_array(a)})")


def all_finite(a: np.ndarray) -> bool:
    """Whether ``a`` holds no NaN or Inf (one reduction in the common case)."""
    return math.isfinite(abs(a.sum())) or bool(np.isfinite(a).all())


def call(name: str, compute: Callable, a: np.ndarray):
    """``compute(a)`` for a (stack of) matrices ``a``, with the guarantees of the module.

    ``compute`` returns one array or a tuple of arrays, each with ``a``'s batch axes first.
    """
    a = np.asarray(a)
    if all_finite(a):
        return _reworded(name, compute, a)
    bad = ~np.isfinite(a).all(axis=(-2, -1))
    clean = a.copy()
    clean[bad] = np.eye(a.shape[-2], a.shape[-1], dtype=a.dtype)
    result = _reworded(name, compute, clean)
    outputs = result if isinstance(result, tuple) else (result,)
    filled = []
    for out in outputs:
        out = np.array(out, dtype=np.result_type(out, np.float32))   # writable, holds NaN
        out[bad] = np.nan
        filled.append(out)
    return tuple(filled) if isinstance(result, tuple) else filled[0]


def _reworded(name, compute, a):
    try:
        return compute(a)
    except np.linalg.LinAlgError as error:
        raise linalg_error(name, a, error) from None

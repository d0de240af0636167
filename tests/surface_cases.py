"""What the surface tests share: the dtypes they run in, the binary operators, and
deterministic random data (the same in every run)."""
from __future__ import annotations

import numpy as np

from tenpy_ad.testing import random_array

DTYPES = ["float64", "float32", "complex128"]

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}


def rand(shape, dtype="float64", seed=0, positive=False) -> np.ndarray:
    """Random data of ``shape``/``dtype`` from ``seed`` (entries in [0.5, 1.5] if positive,
    with imaginary parts in [0.1, 0.5] if also complex)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if not positive:
        return random_array(rng, shape, dtype)
    value = rng.uniform(0.5, 1.5, size=shape)
    if dtype.kind == "c":
        value = value + 1j * rng.uniform(0.1, 0.5, size=shape)
    return np.asarray(value).astype(dtype)

"""What the elementwise tests share: sample data per domain and dtype, and NumPy's
result as tenpy_ad carries it (no float16, no narrow integers)."""
from __future__ import annotations

import numpy as np

from tenpy_ad.errors import TenpyAdError

from modes import ALL_MODES, TENSOR_MODES, check_modes, run

DTYPES = ["float64", "float32", "complex128", "int64", "bool"]


def sample(domain: str, dtype: str, shape=(2, 3), seed: int = 0) -> np.ndarray:
    """Data of ``dtype`` in ``domain``: any | positive | unit (|x| < 1) | above_one |
    nonzero | small (integers 0..3, as exponents)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return (rng.random(shape) < 0.5) | (domain in ("positive", "above_one", "nonzero"))
    if dtype.kind in "iu":
        low, high = {"positive": (1, 4), "above_one": (1, 5), "nonzero": (1, 4),
                     "unit": (0, 1), "small": (0, 4)}.get(domain, (-3, 4))
        return rng.integers(low, high, size=shape).astype(dtype)
    value = {"positive": lambda: rng.uniform(0.3, 2.0, shape),
             "unit": lambda: rng.uniform(-0.9, 0.9, shape),
             "above_one": lambda: rng.uniform(1.2, 3.0, shape),
             "nonzero": lambda: rng.uniform(0.5, 2.0, shape) * rng.choice([-1, 1], shape),
             "small": lambda: rng.uniform(0.0, 3.0, shape)}.get(
        domain, lambda: rng.standard_normal(shape) * 1.5)()
    if dtype.kind == "c":
        value = value + 1j * rng.uniform(0.1, 0.4, shape) * rng.choice([-1, 1], shape)
    return value.astype(dtype)


def carried(np_fn, *args):
    """``np_fn(*args)`` as tenpy_ad computes it: where NumPy's loop is float16 (bools into
    an inexact function) in float64 (every integer width is NumPy's own)."""
    with np.errstate(all="ignore"):
        result = np.asarray(np_fn(*args))
        if result.dtype == np.float16:
            widened = [a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == bool
                       else a for a in args]
            result = np.asarray(np_fn(*widened))
    return result


def numpy_refuses(np_fn, *args) -> bool:
    """Whether NumPy raises TypeError (no loop for these dtypes)."""
    try:
        with np.errstate(all="ignore"):
            np_fn(*args)
    except TypeError:
        return True
    return False


def check(fn, *arrays, ref, modes=ALL_MODES):
    """``modes.check_modes`` with NumPy's floating-point warnings silenced."""
    with np.errstate(all="ignore"):
        return check_modes(fn, *arrays, ref=ref, modes=modes)


def assert_refused_in_every_mode(fn, *arrays) -> None:
    """Every tensor mode raises a TypeError that is a tenpy_ad error (a DTypeError)."""
    for mode in TENSOR_MODES:
        try:
            run(fn, mode, *arrays)
        except TypeError as error:
            assert isinstance(error, TenpyAdError), (mode, error)
        else:
            raise AssertionError(f"{mode} mode accepted what NumPy refuses")


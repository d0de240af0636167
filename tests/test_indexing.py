"""Basic indexing (integers, slices with any step, ``...``, ``None``) computes what NumPy
computes, in every mode.
"""
from __future__ import annotations

import numpy as np
import pytest

from modes import check_modes
from surface_cases import rand


# ------------------------------------------------------------------ slicing

INDICES = [
    (slice(None), slice(None, 2)),       # a[:, :2]
    (1,),                                # a[1]
    (-1,),                               # a[-1]
    (1, -2),                             # a[1, -2]
    (-1, -1, -1),                        # a[-1, -1, -1]
    (slice(None, None, 2),),             # a[::2]
    (slice(None, None, -1),),            # a[::-1]
    (slice(3, 0, -2), slice(None), slice(None, None, -3)),
    (slice(None), slice(None, None, -2)),
    (Ellipsis, 1),                       # a[..., 1]
    (Ellipsis,),                         # a[...]
    (1, Ellipsis),                       # a[1, ...]
    (None,),                             # a[None]
    (slice(None), None, slice(None)),    # a[:, None, :]
    (1, Ellipsis, None),                 # a[1, ..., None]
    (None, Ellipsis, None, 2),           # a[None, ..., None, 2]
    (slice(-2, None), slice(1, -1)),     # a[-2:, 1:-1]
    (slice(1, 1),),                      # empty
    (slice(5, None),),                   # past the end: empty
    (slice(-100, 100),),                 # clipped
    (slice(2, None, 3), 0, slice(-1, None, -2)),
    (np.int64(-2), slice(None), np.int64(1)),   # NumPy integers
    (slice(None, None, None), slice(4, None, -1), slice(None, -7, -1)),  # a[:, 4::-1, :-7:-1]
]


@pytest.mark.parametrize("index", INDICES, ids=[repr(i) for i in INDICES])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_basic_slicing(index, dtype):
    a = rand((4, 5, 6), dtype, 55)
    check_modes(lambda x: x[index], a, ref=lambda x: np.array(x[index]))


def test_single_item_forms():
    a = rand((4, 5), seed=56)
    check_modes(lambda x: x[2], a, ref=lambda x: np.array(x[2]))
    check_modes(lambda x: x[-3:], a, ref=lambda x: np.array(x[-3:]))
    check_modes(lambda x: x[2, 3], a, ref=lambda x: np.array(x[2, 3]))


def test_slicing_then_arithmetic():
    a = rand((4, 6), seed=57)
    k = 3
    check_modes(lambda x: x[:, :k] @ x[:k, ::-1] + x[::-1, ::-2] @ x[1:, :][:k], a)

"""The "every mode" harness (``tests/modes.py``) itself: it must catch what it is for."""
import numpy as np
import pytest

from modes import check_modes
from surface_cases import rand


def test_helper_detects_wrong_values_and_dtypes():
    a = rand((3,))
    with pytest.raises(AssertionError):
        check_modes(lambda x: x + x, a, ref=lambda x: x * 3)
    with pytest.raises(AssertionError):
        check_modes(lambda x: x + x, a, ref=lambda x: (x + x).astype(np.float32))

"""What the models read off their operands: the values behind a discrete choice (how many
states are kept, a gauge), and beta as a number when it has one.  Floats, arrays and eager
Tensors have values now (a Tensor's, explicitly detached from its tape); a traced tensor
has none until its graph runs."""
from __future__ import annotations

import numpy as np

from ..primitive import array_value, is_traced


def values_of(x) -> np.ndarray:
    """The ndarray behind ``x`` (shared with an eager Tensor, never on its tape)."""
    return array_value(x)


def concrete_float(x) -> float | None:
    """``x`` as a float when it has a value (a float, an array, an eager Tensor), else None
    (traced)."""
    return None if is_traced(x) else float(array_value(x))


__all__ = ["values_of", "concrete_float", "is_traced"]

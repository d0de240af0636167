"""What the models read off their operands: the values behind a discrete choice (how many
states are kept, a gauge), and beta as a number when it has one.  Floats, arrays and eager
Tensors have values now (a Tensor's, explicitly detached from its tape); a traced tensor
has none until its graph runs."""
from __future__ import annotations

import numpy as np

from ..errors import NotDifferentiableError
from ..primitive import array_value, is_traced, needs_grad


def values_of(x) -> np.ndarray:
    """The ndarray behind ``x`` (shared with an eager Tensor, never on its tape)."""
    return array_value(x)


def observed_values(x, what: str) -> np.ndarray:
    """The ndarray behind ``x`` for an observable computed from values alone (``what``
    names it): an eager Tensor that requires grad is refused -- its gradient would be a
    silent zero -- as a traced one is (it has no value yet)."""
    if needs_grad(x):
        raise NotDifferentiableError(
            f"{what} is computed from values (an observable without a derivative), but "
            "its operand requires grad: pass arrays or detached tensors (np.asarray(t), "
            "t.detach()) to read it off an environment")
    return array_value(x)


def concrete_float(x) -> float | None:
    """``x`` as a float when it has a value (a float, an array, an eager Tensor), else None
    (traced)."""
    return None if is_traced(x) else float(array_value(x))


__all__ = ["values_of", "observed_values", "concrete_float", "is_traced"]

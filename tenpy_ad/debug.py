"""``tp.debug_nans()``: stop at the first operation that turns finite values into NaN/Inf.

Inside the context every value computed by a compiled Program, by an eager operation and
by an eager VJP rule is checked; the first non-finite result from finite inputs raises
:class:`~tenpy_ad.errors.NonFiniteError` naming the primitive (and the program instruction
or the backward rule).  A non-finite value that was already in the inputs is reported as
such.  It costs one ``isfinite`` pass per value: a debugging switch, process-wide.
"""
from __future__ import annotations

import threading

import numpy as np

from ._compiled import _core
from .errors import NonFiniteError
from .primitive import plain_value

_lock = threading.Lock()
_depth = 0


def _arrays(value):
    if isinstance(value, (tuple, list)):
        for item in value:
            yield from _arrays(item)
        return
    if value is None:
        return
    yield plain_value(value)


def _nonfinite(value) -> str | None:
    for array in _arrays(value):
        array = np.asarray(array)
        if array.dtype.kind in "fc" and not np.isfinite(array).all():
            return "NaN" if np.isnan(array).any() else "Inf"
    return None


def _check(where: str, outputs, inputs) -> None:
    kind = _nonfinite(outputs)
    if kind is None:
        return
    shapes = ", ".join(str(list(np.shape(a))) for a in _arrays(inputs))
    if _nonfinite(inputs):
        raise NonFiniteError(f"{where} received non-finite inputs ({shapes}) and produced "
                             f"{kind}: the value was already non-finite before this step")
    raise NonFiniteError(f"{where} produced {kind} from finite inputs of shapes {shapes}")


class debug_nans:
    """Context manager: raise at the first primitive that produces NaN or Inf."""

    def __enter__(self):
        global _depth
        with _lock:
            _depth += 1
            _core.set_nonfinite_check(_check)
        return self

    def __exit__(self, *exc):
        global _depth
        with _lock:
            _depth -= 1
            if _depth == 0:
                _core.set_nonfinite_check(None)
        return False


__all__ = ["debug_nans"]

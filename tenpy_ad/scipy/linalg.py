"""``tp.scipy.linalg``: ``expm`` (the same function as ``tp.linalg.expm``)."""
from ..numpy.linalg import expm

__all__ = ["expm"]

"""``tp.scipy.special``: ``logsumexp`` (the same function as ``tenpy_ad.numpy.logsumexp``)."""
from ..numpy.statistics import logsumexp

__all__ = ["logsumexp"]

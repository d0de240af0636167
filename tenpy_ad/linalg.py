"""``tp.linalg``: decompositions and solves with exact, stable derivatives.

See :mod:`tenpy_ad.ops.linalg` for the conventions (Lorentzian broadening at degenerate
spectra, complex gauge checks) and :data:`config` for the defaults.
"""
from .ops.linalg import config, eigh, norm, qr, solve, svd

__all__ = ["svd", "qr", "eigh", "solve", "norm", "config"]

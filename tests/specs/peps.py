"""The iPEPS toolkit's own primitive: the relative gauge of two environments (signs and a
layer swap), piecewise constant, so its derivative is zero; the spec reaches it through a
product with a differentiable value (which the derivative must see alone)."""
import numpy as np

from tenpy_ad.models import peps

from .table import REAL, Spec

EDGE = np.random.default_rng(7).standard_normal((3, 4, 3))


def _signed(c):
    signs, swapped = peps.relative_gauge((c, EDGE), (c, EDGE))
    return c * signs[:, None] * signs[None, :] + swapped


SPECS = [
    Spec("ipeps_relative_gauge", _signed, ((3, 3),), dtypes=REAL),
]

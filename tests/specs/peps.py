"""The iPEPS toolkit's own primitives: the relative gauge of two environments (signs and a
layer swap) and the multiplets of a spectrum, piecewise constant, so their derivatives
are zero; the specs reach them through products with a differentiable value (which the
derivative must see alone)."""
import numpy as np

from tenpy_ad.models import peps

from .table import REAL, Spec

EDGE = np.random.default_rng(7).standard_normal((3, 4, 3))


def _signed(c):
    signs, swapped = peps.relative_gauge((c, EDGE), (c, EDGE))
    return c * signs[:, None] * signs[None, :] + swapped


def _grouped(w):
    """Distinct values (a multiplet of one each, at a generic point) weighted by blocks."""
    values = w * 0.1 + np.arange(5.0, 0.0, -1.0)
    block, same = peps.multiplet_blocks(values)
    return values * block + (same @ values)


SPECS = [
    Spec("ipeps_relative_gauge", _signed, ((3, 3),), dtypes=REAL),
    Spec("ipeps_multiplets", _grouped, ((5,),), dtypes=REAL),
]

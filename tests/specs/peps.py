"""The iPEPS toolkit's own primitives: the relative gauge of two environments (signs and a
layer swap), the multiplets of a spectrum and the unit cell's pivot rows, piecewise
constant, so their derivatives are zero; and the cell's relative gauge, read off constants
(differentiated, it raises).  The specs reach them through products with a differentiable
value (which the derivative must see alone)."""
import numpy as np

import tenpy_ad as tp

from tenpy_ad.models import peps, peps_cell, peps_cell_gauge

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


def _pinned(u):
    """The pivot rows of a single state and a pair (at a generic point, away from ties)."""
    return peps_cell.pivot_rows(u, np.array([0.0, 1.0, 1.0])) @ u


def _cell_signed(c):
    """A 1 x 1 cell's environment of corners ``c`` against itself: the identities, found
    from constants (differentiated, the op raises: test_peps_cell_gauge.py)."""
    site = (tp.stop_gradient(c),) * 4 + (EDGE,) * 4
    factors = peps_cell_gauge.relative_gauge([[site]], [[site]])
    return factors[0] @ c @ factors[1].T


SPECS = [
    Spec("ipeps_relative_gauge", _signed, ((3, 3),), dtypes=REAL),
    Spec("ipeps_multiplets", _grouped, ((5,),), dtypes=REAL),
    Spec("ipeps_cell_pivot_rows", _pinned, ((6, 3),), dtypes=REAL),
    Spec("ipeps_cell_relative_gauge", _cell_signed, ((3, 3),), dtypes=REAL),
]

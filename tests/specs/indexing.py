"""Gather and scatter (advanced indexing, take, take_along_axis, x.at[...]) and the
orderings (sort, lexsort, partition, searchsorted), whose values are gathers.  Index arrays are
constants, or positions computed in the graph (argsort) so the traced-index paths of the
rules run too.  Special points: ties of sorts (the derivative follows the permutation
NumPy's argsort gives) and of scatter extrema (split evenly)."""
import numpy as np

import tenpy_ad.numpy as tnp

from .table import REAL, Spec, SpecialPoint, flat

ROWS = np.array([2, 0, 2, 3])                 # a repeated index: the VJP must add up
MASK = np.array([[True, False, True, False, True]] * 2 + [[False] * 5] * 2)


def _traced_rows(x):
    """A permutation of x's rows computed in the graph (an int64 traced value)."""
    return tnp.argsort(x[:, 0])


SPECS = [
    Spec("gather_rows", lambda x: x[ROWS], ((4, 5),)),
    Spec("gather_mixed", lambda x: x[[1, 1, 3], 1:4:2][:, [0, 1, 1]], ((4, 5, 3),)),
    Spec("gather_apart", lambda x: x[[0, 2], :, [1, 1]] * x[:, [1, 0], None, 2][:, :2, 0],
         ((4, 2, 3),)),
    Spec("gather_mask", lambda x: x[MASK] * x[..., [True, False, True, True, False]].sum(),
         ((4, 5),)),
    Spec("gather_traced_index", lambda x: x[_traced_rows(x)] * x, ((4, 5),),
         domain="distinct", dtypes=REAL),
    Spec("take_modes", lambda x: tnp.take(x, [7, -9, 3], axis=1, mode="wrap")
         * tnp.take(x, [[9, 3, -1]], mode="clip"), ((4, 5),)),
    Spec("take_along_axis", lambda x: tnp.take_along_axis(x, np.array([[0, 4, 4, 1]] * 3), 1),
         ((3, 5),)),
    Spec("at_set_repeated", lambda x: x.at[[0, 0, 2]].set(x[1:4] * 2.0), ((4, 5),)),
    Spec("at_set_traced_index",
         lambda x: x.at[tnp.concatenate([_traced_rows(x), _traced_rows(x)[:2]])].set(
             tnp.concatenate([x, x[:2]])[:, ::-1] * 3.0), ((4, 5),),
         domain="distinct", dtypes=REAL),
    Spec("at_add_repeated", lambda x: x.at[[0, 0, 2], 1:3].add(x[1:4, 2:4] * x[1:4, 2:4]),
         ((4, 5),)),
    Spec("at_multiply", lambda x: x.at[[0, 1, 3]].multiply(x[1:4] * 2.0 + 1.0), ((4, 5),)),
    Spec("at_multiply_traced_index",
         lambda x: x.at[_traced_rows(x)].multiply(x * x), ((4, 5),),
         domain="distinct", dtypes=REAL),
    Spec("at_min_repeated", lambda x: x.at[[0, 0, 2]].min(x[1:4] * 2.0), ((4, 5),),
         domain="distinct", dtypes=REAL, special=(
             SpecialPoint(([1.0], [1.0, 1.0]), (1 / 3,) * 3, flat(3),
                          "the entry and two values written to it tie: thirds",
                          fn=lambda x, v: x.at[[0, 0]].min(v)),
         )),
    Spec("at_max_columns", lambda x: x.at[:, [1, 1]].max(x[:, 3:5] * 1.5), ((4, 5),),
         domain="distinct", dtypes=REAL, special=(
             SpecialPoint(([1.0, 0.0], [1.0]), (0.5, 1.0, 0.5), flat(3),
                          "the entry and the value written tie: halves",
                          fn=lambda x, v: x.at[[0]].max(v)),
         )),
    Spec("sort_axis0", lambda x: tnp.sort(x, axis=0) * np.arange(20.0).reshape(4, 5),
         ((4, 5),), domain="distinct", dtypes=REAL, special=(
             SpecialPoint(([1.0, 1.0, 0.0],), (2.0, 3.0, 1.0), flat(3),
                          "ties: each entry's derivative is that of the place a stable "
                          "argsort gives it",
                          fn=lambda x: tnp.sort(x, kind="stable") * np.array([1.0, 2.0, 3.0])),
         )),
    Spec("sort_flat_complex", lambda x: tnp.sort(x, axis=None) * np.arange(6.0), ((2, 3),)),
    Spec("lexsort_rows", lambda x: x[tnp.lexsort((x[:, 1], x[:, 0] * 0.0))] * x, ((4, 3),),
         domain="distinct", dtypes=REAL),
    Spec("partition", lambda x: tnp.partition(x, 2, axis=1)[:, 2], ((4, 5),),
         domain="distinct", dtypes=REAL),
    Spec("searchsorted_take", lambda x: tnp.take(x, tnp.searchsorted(
        np.linspace(-4.0, 4.0, 9), x[0] * 0.1)) * x[1], ((2, 5),), dtypes=REAL),
]

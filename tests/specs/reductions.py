"""Reductions, scans and statistics (tenpy_ad.numpy.reductions, .cumulative, .statistics):
every primitive they add (reduce_prod, reduce_min, the NaN-ignoring extrema, zero_nans,
cumsum, cumprod, linear_recurrence through cumprod's rules, logsumexp, the boolean and
index reductions) and the compositions whose derivative is not another's; their ties,
zeros, NaN entries and infinities are the ``special`` points."""
import numpy as np

import tenpy_ad as tp
import tenpy_ad.numpy as tnp

from .table import INF, NAN, REAL, Spec, SpecialPoint, flat

SOFTMAX_TIE = ((0.25, -0.25), (-0.25, 0.25))        # diag(w) - w w^T for w = (1/2, 1/2)

NAN_ROW = np.full((1, 4), np.nan)


def _with_nans(x):
    """``x`` with a row of NaNs appended (a constant: the NaNs are not differentiated)."""
    return tnp.concatenate([x, NAN_ROW.astype(x.dtype)], axis=0)


def _signed_logsumexp(x, b):
    log_size, sign = tnp.logsumexp(x, axis=1, b=b, return_sign=True)
    return log_size * 0.5 + sign


SPECS = [
    # products and scans
    Spec("prod_all", lambda x: tnp.prod(x), ((3, 4),), special=(
        SpecialPoint(([0.0, 0.0, 2.0],), (0.0, 0.0, 0.0),
                     ((0.0, 2.0, 0.0), (2.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
                     "zeros: the products of the other entries, exact (no division)"),
    )),
    Spec("prod_axes_keepdims", lambda x: x.prod(axis=(0, 2), keepdims=True) * x, ((2, 3, 2),)),
    Spec("cumsum_axis", lambda x: x.cumsum(axis=1), ((3, 4),)),
    Spec("cumsum_flat", lambda x: tnp.cumsum(x), ((2, 3),)),
    Spec("cumprod_axis", lambda x: tnp.cumprod(x, axis=0), ((4, 3),)),
    Spec("cumprod_flat", lambda x: x.cumprod(), ((2, 3),), special=(
        SpecialPoint(([2.0, 0.0, 3.0],), (1.0, 8.0, 0.0),
                     ((0.0, 4.0, 0.0), (4.0, 0.0, 2.0), (0.0, 2.0, 0.0)),
                     "a zero: x0 + x0 x1 + x0 x1 x2 differentiated exactly"),
    )),
    Spec("diff_prepend", lambda x: tnp.diff(x, n=2, axis=0, prepend=0.5), ((4, 3),)),
    # extrema (ties are measure-zero for these inputs)
    Spec("min_axis", lambda x: x.min(axis=1), ((3, 4),), domain="distinct", dtypes=REAL,
         special=(SpecialPoint(([[1.0, 1.0, 2.0]],), (0.5, 0.5, 0.0), flat(3),
                               "tied minima share evenly"),)),
    Spec("ptp_keepdims", lambda x: tnp.ptp(x, axis=0, keepdims=True) * x, ((3, 4),),
         domain="distinct", dtypes=REAL, special=(
             SpecialPoint(([1.0, 1.0, 2.0],), (-0.5, -0.5, 1.0), flat(3),
                          "max - min: the tied minima share -1", fn=tnp.ptp),
         )),
    Spec("max_initial", lambda x: tnp.max(x, axis=1, initial=0.1), ((3, 4),),
         domain="distinct", dtypes=REAL, special=(
             SpecialPoint(([[0.1, -1.0]],), (0.5, 0.0), flat(2),
                          "initial ties with an entry and takes its share"),
         )),
    Spec("nanmax", lambda x: tnp.nanmax(_with_nans(x), axis=0), ((3, 4),),
         domain="distinct", dtypes=REAL, special=(
             SpecialPoint(([1.0, 1.0, NAN],), (0.5, 0.5, 0.0), flat(3),
                          "ties split, NaN entries get 0", fn=tnp.nanmax),
         )),
    Spec("nanmin", lambda x: tnp.nanmin(_with_nans(x), axis=(0, 1)), ((3, 4),),
         domain="distinct", dtypes=REAL, special=(
             SpecialPoint(([NAN, NAN],), (0.0, 0.0), flat(2),
                          "an all-NaN slice: NaN, derivative 0", fn=tnp.nanmin),
         )),
    # statistics
    Spec("mean_axes", lambda x: x.mean(axis=(0, -1)), ((2, 3, 4),)),
    Spec("average_weights", lambda x, w: tnp.average(x, axis=1, weights=w), ((3, 4), (4,)),
         domain="positive"),
    Spec("var_ddof", lambda x: x.var(axis=0, ddof=1), ((4, 3),)),
    Spec("std_axis", lambda x: tnp.std(x, axis=1), ((3, 4),), special=(
        SpecialPoint(([[1.0, 1.0]],), (0.0, 0.0), flat(2),
                     "zero spread: the subgradient 0 (sqrt has none at 0), Hessian 0"),
    )),
    Spec("median_odd", lambda x: tnp.median(x, axis=1), ((3, 5),), domain="distinct",
         dtypes=REAL, special=(
             SpecialPoint(([[1.0, 1.0, 2.0]],), (0.5, 0.5, 0.0), flat(3),
                          "the middle value tied: split among the tied entries"),
         )),
    Spec("median_even_keepdims", lambda x: tnp.median(x, axis=(0, 2), keepdims=True) * x,
         ((2, 3, 2),), domain="distinct", dtypes=REAL),
    Spec("nansum", lambda x: tnp.nansum(_with_nans(x), axis=0), ((3, 4),), special=(
        SpecialPoint(([1.0, NAN],), (1.0, 0.0), flat(2), "NaN entries: 0", fn=tnp.nansum),
    )),
    Spec("nanmean", lambda x: tnp.nanmean(_with_nans(x), axis=0), ((3, 4),)),
    Spec("logsumexp_axis", lambda x: tnp.logsumexp(x, axis=1), ((3, 4),), special=(
        SpecialPoint(([[0.3, 0.3]],), (0.5, 0.5), SOFTMAX_TIE,
                     "a tie is no special point: softmax and its derivative"),
        SpecialPoint(([[1e17, 1e17]],), (0.5, 0.5), SOFTMAX_TIE,
                     "large entries: exp(x - max) / sum, not exp(x - logsumexp)"),
        SpecialPoint(([[-INF, 0.0]],), (0.0, 1.0), flat(2), "a -inf entry: weight 0"),
        SpecialPoint(([[-INF, -INF]],), (0.5, 0.5), flat(2),
                     "all -inf: the entries share evenly, as logaddexp's"),
        SpecialPoint(([[INF, 0.0]],), (1.0, 0.0), flat(2), "a +inf entry takes all"),
    )),
    Spec("logsumexp_scipy_keepdims",
         lambda x: tp.scipy.special.logsumexp(x, axis=0, keepdims=True) * x, ((3, 4),)),
    Spec("logsumexp_weights", lambda x, b: tnp.logsumexp(x, b=b), ((3, 4), (3, 4)),
         domain="positive"),
    Spec("logsumexp_sign", _signed_logsumexp, ((3, 4), (3, 4))),
    # booleans and indices: not differentiated, they only select or scale
    Spec("all_any", lambda x: x * (x > 0).all(axis=0) + x * tnp.any(x > 1.0, axis=1,
                                                                      keepdims=True),
         ((3, 4),), dtypes=REAL),
    Spec("argmax_argmin", lambda x: x * tnp.argmax(x, axis=0) - x.argmin(), ((3, 4),),
         domain="distinct", dtypes=REAL),
]

"""The special points of the spec table (``Spec.special``: ties, kinks, jumps, bounds,
singular points, branch cuts): the gradient and the Hessian the table documents, in every
mode (eager ``backward()``, traced ``tp.ad.grad`` twice run by ``tp.evaluate`` and by
``tp.compile``, ``tp.grad`` of ``tp.grad`` with and without ``tp.jit``, ``tp.jvp`` of
``tp.grad``, ``tp.ad.jvp`` of ``tp.ad.grad``); and that every primitive with a special
point has one in the table."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp

from modes import DERIVATIVE_MODES, derivatives_in
from specs import SPECS

POINTS = [(spec, k, point) for spec in SPECS for k, point in enumerate(spec.special)]
IDS = [f"{spec.name}-{k}" for spec, k, _ in POINTS]

#: the primitives whose derivative needs a choice or care somewhere (or is infinite there)
WITH_SPECIAL_POINTS = {
    "abs", "sign", "sqrt", "safe_sqrt", "log", "log1p", "log2", "div", "reciprocal", "pow",
    "power", "cbrt", "arcsin", "arccos", "arccosh", "arctanh", "sinc", "arctan2", "hypot",
    "logaddexp", "logaddexp2", "logsumexp", "maximum", "minimum", "fmax", "fmin",
    "clip_lower", "clip_upper", "floor", "ceil", "trunc", "rint", "round", "floor_divide",
    "remainder", "fmod", "heaviside", "copysign", "nan_to_num", "select", "reduce_max",
    "reduce_min", "reduce_nanmax", "reduce_nanmin", "order_statistic", "reduce_prod",
    "cumprod", "zero_where_nan", "argsort", "scatter_max", "scatter_min",
}
#: the special functions of tp.scipy.special (poles, bounds, 0 log 0)
WITH_SPECIAL_POINTS |= {"erfinv", "erfcinv", "gamma", "gammaln", "digamma", "polygamma",
                        "logit", "xlogy", "xlog1py", "entr", "rel_entr", "kl_div",
                        "erfcx", "log_ndtr", "iv", "ive", "gammainc", "chdtr"}


def _loss(fn):
    return lambda *xs: tnp.real(fn(*xs)).sum()


def _args(point) -> list:
    return [np.asarray(a) for a in point.args]


@pytest.mark.parametrize("mode", DERIVATIVE_MODES)
@pytest.mark.parametrize("spec,k,point", POINTS, ids=IDS)
def test_special_point(spec, k, point, mode):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)   # NumPy's all-NaN slices
        grad, hess = derivatives_in(mode, _loss(point.fn or spec.fn), *_args(point))
    for got, expected, order in ((grad, point.grad, "gradient"), (hess, point.hess,
                                                                   "Hessian")):
        np.testing.assert_allclose(got, np.array(expected, dtype=float), rtol=1e-12,
                                   atol=1e-12, err_msg=f"{spec.name}: {order} at "
                                   f"{point.args} ({point.note}), {mode} mode")


def test_every_primitive_with_special_points_has_one_in_the_table():
    reached = set()
    for spec, _, point in POINTS:
        args = _args(point)
        xs = [tp.input(a.shape, a.dtype) for a in args]
        out = (point.fn or spec.fn)(*xs)
        reached |= {node.prim.name for node in tp.introspection.graph_nodes([out])}
    missing = WITH_SPECIAL_POINTS - reached
    assert not missing, f"primitives without a special point in the table: {sorted(missing)}"
    assert WITH_SPECIAL_POINTS <= set(tp.PRIMITIVES)

"""Every primitive's JVP and VJP, traced and eager, against finite differences and the
adjoint identity <u, J v> = <J^T u, v>, in float64 and complex128, at first and second
order; eager gradients must equal the traced ones to 1e-12 at both orders.
"""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.testing import check_grads, random_like

from specs import SPECS, make_args

CASES = [(s, d) for s in SPECS for d in s.dtypes]


@pytest.mark.parametrize("spec,dtype", CASES, ids=[f"{s.name}-{d}" for s, d in CASES])
def test_first_order(spec, dtype, rng):
    args = make_args(spec, dtype, rng)
    check_grads(spec.fn, args, order=1, rng=rng, eager=True, **spec.tol)


@pytest.mark.parametrize("spec,dtype", CASES, ids=[f"{s.name}-{d}" for s, d in CASES])
def test_second_order(spec, dtype, rng):
    args = make_args(spec, dtype, rng)
    check_grads(spec.fn, args, order=2, rng=rng, eager=True, **spec.tol)


def test_every_primitive_is_covered():
    """The spec table reaches every differentiable primitive registered so far."""
    reached = set()
    rng = np.random.default_rng(0)
    for spec in SPECS:
        args = make_args(spec, spec.dtypes[-1], rng)
        xs = [tp.input(a.shape, a.dtype) for a in args]
        out = spec.fn(*xs)
        reached |= {node.prim.name for node in tp.introspection.graph_nodes([out])}
        g = tp.ad.vjp([out], xs, [np.ones(out.shape, out.dtype)])
        reached |= {node.prim.name for node in tp.introspection.graph_nodes(g)}
    missing = {_family(name) for name in tp.PRIMITIVES} - {_family(name) for name in reached}
    missing -= {"input", "constant"} | LATER
    assert not missing, f"primitives without a spec entry: {sorted(missing)}"


def _family(name: str) -> str:
    """Primitives made per output count (``checkpoint/2``, ``fixed_point/5``: derivative
    solves add outputs) share their rules: reaching one member covers the family."""
    return name.split("/")[0]


LATER: set = set()


@pytest.mark.parametrize("spec,dtype", CASES, ids=[f"{s.name}-{d}" for s, d in CASES])
def test_eager_jvp_equals_traced_jvp(spec, dtype, rng):
    """Eager ``tp.jvp`` (a forward sweep of the JVP rules over the tape) equals the traced
    ``tp.ad.jvp`` (whose agreement with finite differences test_first_order checks)."""
    args = make_args(spec, dtype, rng)
    tangents = [random_like(rng, a) for a in args]
    _, eager = tp.jvp(spec.fn, tuple(args), tuple(tangents))
    xs = [tp.input(a.shape, a.dtype) for a in args]
    (traced,) = tp.ad.jvp([spec.fn(*xs)], xs, tangents)
    np.testing.assert_allclose(eager, tp.evaluate(traced, dict(zip(xs, args))),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("spec,dtype", CASES[::7], ids=[f"{s.name}-{d}" for s, d in CASES[::7]])
def test_eager_forward_over_reverse_equals_traced(spec, dtype, rng):
    """Hessian-vector products by ``tp.jvp(tp.grad(...))`` in eager mode: the tape holds the
    recorded backward pass too, and the forward sweep runs through it."""
    args = make_args(spec, dtype, rng)
    out = spec.fn(*[tp.input(a.shape, a.dtype) for a in args])
    u = random_like(rng, np.zeros(out.shape, out.dtype))
    tangent = random_like(rng, args[0])

    def gradient(x0):
        return tp.vjp(lambda x: spec.fn(x, *args[1:]), x0)[1](u)[0]

    _, eager = tp.jvp(gradient, (args[0],), (tangent,))
    x = tp.input(args[0].shape, args[0].dtype)
    (traced,) = tp.ad.jvp([gradient(x)], [x], [tangent])
    np.testing.assert_allclose(eager, tp.evaluate(traced, {x: args[0]}), rtol=1e-10,
                               atol=1e-10)

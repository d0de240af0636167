"""A primitive registered without a JVP or VJP rule fails with NotImplementedError naming the
primitive and the missing rule, in every mode that would call the rule."""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.primitive import PRIMITIVES, bind1, code_of_value, primitive


def _register(name: str, n_outputs: int = 1):
    impl = (lambda params, x: 2.0 * x) if n_outputs == 1 else \
        (lambda params, x: (2.0 * x, 3.0 * x))
    rule = (lambda params, x: x) if n_outputs == 1 else \
        (lambda params, x: [(code_of_value(x), x.shape)] * 2)
    return primitive(name, impl, rule, n_outputs=n_outputs)


@pytest.fixture(scope="module")
def prims():
    """Test primitives, taken out of the registry afterwards (the coverage test of
    test_rules.py expects every registered primitive to have a spec)."""
    made = {
        "bare": _register("missing_rules_bare"),
        "bare_multi": _register("missing_rules_bare_multi", n_outputs=2),
        "jvp_only": _register("missing_rules_jvp_only"),
        "vjp_only": _register("missing_rules_vjp_only"),
    }
    made["jvp_only"].jvp = lambda params, t, out, xs: tp.multiply(t[0], 2.0)
    made["vjp_only"].vjp = lambda params, ct, out, xs, active: (tp.multiply(ct, 2.0),)
    yield made
    for prim in made.values():
        PRIMITIVES.pop(prim.name)


def _loss(prim):
    """``x -> sum(prim(sin x))``: the rule sits inside a differentiable graph."""
    def fn(x):
        y = bind1(prim, None, tp.sin(x))
        if prim.n_outputs > 1:
            y = y[0] + y[1]
        return y.sum()
    return fn


def _traced_vjp(fn, x):
    t = tp.input(x.shape)
    return tp.ad.grad(fn(t), t)


def _traced_jvp(fn, x):
    t = tp.input(x.shape)
    return tp.ad.jvp([fn(t)], [t], [np.ones(x.shape)])


def _eager_backward(fn, x):
    t = tp.tensor(x, requires_grad=True)
    fn(t).backward()


def _eager_backward_create_graph(fn, x):
    t = tp.tensor(x, requires_grad=True)
    fn(t).backward(create_graph=True)


def _grad_of(fn, x):
    t = tp.tensor(x, requires_grad=True)
    return tp.grad_of([fn(t)], [t])


def _function_grad(fn, x):
    return tp.grad(fn)(x)


def _function_jvp(fn, x):
    return tp.jvp(fn, (x,), (np.ones(x.shape),))


def _function_jvp_traced(fn, x):
    t = tp.input(x.shape)
    return tp.jvp(fn, (t,), (np.ones(x.shape),))


VJP_MODES = [_traced_vjp, _eager_backward, _eager_backward_create_graph, _grad_of,
             _function_grad]
JVP_MODES = [_traced_jvp, _function_jvp_traced, _function_jvp]


def _ids(modes):
    return [m.__name__.lstrip("_") for m in modes]


@pytest.mark.parametrize("kind", ["bare", "bare_multi", "jvp_only"])
@pytest.mark.parametrize("mode", VJP_MODES, ids=_ids(VJP_MODES))
def test_missing_vjp_is_named(prims, kind, mode):
    prim = prims[kind]
    with pytest.raises(NotImplementedError, match=f"^no VJP rule for '{prim.name}'$"):
        mode(_loss(prim), np.linspace(0.1, 0.9, 4))


@pytest.mark.parametrize("kind", ["bare", "bare_multi", "vjp_only"])
@pytest.mark.parametrize("mode", JVP_MODES, ids=_ids(JVP_MODES))
def test_missing_jvp_is_named(prims, kind, mode):
    prim = prims[kind]
    with pytest.raises(NotImplementedError, match=f"^no JVP rule for '{prim.name}'$"):
        mode(_loss(prim), np.linspace(0.1, 0.9, 4))


def test_eager_jvp_uses_the_jvp_rule(prims):
    """Eager ``tp.jvp`` sweeps the tape with the JVP rules: a primitive with only a JVP
    rule works, one with only a VJP rule is reported (see test_missing_jvp_is_named)."""
    x = np.linspace(0.1, 0.9, 4)
    _, tangent = _function_jvp(_loss(prims["jvp_only"]), x)
    assert np.allclose(tangent, (2.0 * np.cos(x)).sum())


def test_the_rule_that_exists_still_works(prims):
    x = np.linspace(0.1, 0.9, 4)
    expected = 2.0 * np.cos(x)
    t = tp.input(x.shape)
    (tangent,) = tp.ad.jvp([_loss(prims["jvp_only"])(t)], [t], [np.ones(x.shape)])
    assert np.allclose(tp.evaluate(tangent, {t: x}), expected.sum())
    assert np.allclose(tp.grad(_loss(prims["vjp_only"]))(x), expected)


def test_values_need_no_rules(prims):
    """Computing (traced, eager, on arrays) never touches the derivative rules."""
    x = np.linspace(0.1, 0.9, 4)
    fn = _loss(prims["bare"])
    t = tp.input(x.shape)
    assert np.isclose(tp.evaluate(fn(t), {t: x}), 2.0 * np.sin(x).sum())
    assert np.isclose(fn(tp.tensor(x, requires_grad=True)).item(), 2.0 * np.sin(x).sum())
    assert np.isclose(fn(x), 2.0 * np.sin(x).sum())


def test_the_stub_says_what_is_missing(prims):
    assert repr(prims["bare"].vjp) == "<no VJP rule for 'missing_rules_bare'>"
    assert repr(prims["bare"].jvp) == "<no JVP rule for 'missing_rules_bare'>"

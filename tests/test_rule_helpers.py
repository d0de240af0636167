"""The rule-registration helpers (tenpy_ad.rules, ops.elementwise.unary/binary): primitives
defined with them get correct derivatives in every mode, symbolic zeros and inactive
inputs never reach a rule, and the inlined ndarray paths of the matrix helpers agree with
the primitives they stand in for."""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.ops import elementwise as ew
from tenpy_ad.ops.linalg import matrix
from tenpy_ad.param_schema import Int
from tenpy_ad.primitive import bind1, bind2, primitive
from tenpy_ad.rules import deflinear, defjvp, defvjp
from tenpy_ad.testing import check_grads, random_array

rng = np.random.default_rng(7)

# a holomorphic unary op and a binary op given by derivative expressions
cube_p = ew.unary("test_cube", lambda x: x ** 3, lambda x, out: ew.scale(ew.mul(x, x), 3.0))
weighted_p = ew.binary("test_weighted", lambda x, y: x * x * y,
                       lambda x, y, out: ew.scale(ew.mul(x, y), 2.0),
                       lambda x, y, out: ew.mul(x, x))


def _roll_impl(shift, x):
    return np.roll(x, shift)


# a linear primitive: JVP is the op itself, the VJP its transpose (the opposite roll)
roll_p = primitive("test_roll", _roll_impl, lambda shift, x: x, format_params=repr,
                   params=Int())
deflinear(roll_p, lambda shift, ct, out, x: bind1(roll_p, -shift, ct))

calls = []
both_p = primitive("test_both", lambda params, x, y: x * y, lambda params, x, y: x)
defjvp(both_p, lambda p, t, out, x, y: ew.mul(t, y), lambda p, t, out, x, y: ew.mul(x, t))


def _record(i):
    def rule(p, ct, out, x, y):
        calls.append(i)
        return ew.mul(ct, y if i == 0 else x)
    return rule


defvjp(both_p, _record(0), _record(1))

for _prim in (cube_p, weighted_p, roll_p, both_p):     # test-only: keep the registry (and
    tp.PRIMITIVES.pop(_prim.name)                      # its spec-coverage test) as it is


@pytest.mark.parametrize("fn", [
    lambda x: bind1(cube_p, None, x),
    lambda x: bind1(roll_p, 2, x),
    lambda x: bind2(weighted_p, None, x, ew.sin(x)),
], ids=["unary-from-derivative", "linear", "binary-from-derivatives"])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_helpers_give_correct_derivatives_in_every_mode(fn, dtype):
    check_grads(fn, [random_array(rng, 5, dtype)], order=2, eager=True)


def test_vjp_rules_run_only_for_inputs_that_need_a_cotangent():
    x = tp.input((3,), name="x")
    y = tp.input((3,), name="y")
    out = bind2(both_p, None, x, y).sum()
    calls.clear()
    tp.ad.grad(out, x)
    assert calls == [0]
    calls.clear()
    tp.ad.grad(out, [x, y])
    assert sorted(calls) == [0, 1]
    a = tp.tensor(np.ones(3), requires_grad=True)
    calls.clear()
    bind2(both_p, None, a, np.full(3, 2.0)).sum().backward()
    assert calls == [0] and np.allclose(a.grad.numpy(), 2.0)


def test_jvp_skips_symbolic_zero_tangents():
    x = tp.input((3,), name="x")
    y = tp.input((3,), name="y")
    out = bind2(both_p, None, x, y)
    (tangent,) = tp.ad.jvp([out], [x], [np.ones(3)])
    # only the x-contribution t * y is built: no addition of a zero y-contribution
    assert tangent.prim.name == "mul"
    np.testing.assert_allclose(tp.evaluate(tangent, {x: np.ones(3), y: np.arange(3.0)}),
                               np.arange(3.0))


def test_scale_real_refuses_a_complex_factor():
    x = tp.input((2,), name="x")
    with pytest.raises(tp.errors.ArgumentError, match="scale_real"):
        x.scale_real(1j)
    with pytest.raises(tp.errors.ArgumentError, match="scale_real"):
        tp.tensor(np.ones(2)).scale_real(0.5 + 1j)


@pytest.mark.parametrize("helper,shape", [
    (matrix.adjoint, (3, 4)), (matrix.diag, (4, 4)), (matrix.diag_embed, (4,)),
    (matrix.row, (4,)), (matrix.col, (4,)),
])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_matrix_helpers_ndarray_path_agrees_with_the_primitives(helper, shape, dtype):
    """These helpers compute ndarrays directly (they run on every eager backward step);
    the traced path binds the primitives.  Both must give the same values."""
    a = random_array(rng, shape, dtype)
    x = tp.input(shape, dtype=dtype)
    np.testing.assert_array_equal(helper(a), tp.evaluate(helper(x), {x: a}))


def test_matmul_helper_ndarray_path_agrees_with_the_primitive():
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    x, y = tp.input((3, 4)), tp.input((4, 2))
    np.testing.assert_allclose(matrix.mm(a, b), tp.evaluate(matrix.mm(x, y), {x: a, y: b}),
                               rtol=1e-14)


def test_elementwise_ready_semantics():
    x, y = tp.input((3,)), tp.input((3,))
    assert tp.primitive.elementwise_ready(x, y)
    assert not tp.primitive.elementwise_ready(x, tp.input((1,)))
    assert not tp.primitive.elementwise_ready(x, tp.input((3,), dtype="float32"))
    assert not tp.primitive.elementwise_ready(x, np.ones(3))        # a constant is needed
    assert tp.primitive.elementwise_ready(np.ones(3), np.ones(2))   # NumPy's semantics
    t = tp.tensor(np.ones(3))
    assert tp.primitive.elementwise_ready(t, tp.tensor(np.zeros(3)))
    assert not tp.primitive.elementwise_ready(t, np.zeros(3))

"""Block cotangents: the transpose of a slice is a typed value, zero outside the slice,
which the sweeps add and carry through entrywise rules, and which only the decompositions
see (they read which triplets a loss uses from it); every other rule, and every result of
a sweep, gets a dense value."""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad._compiled import _core
from tenpy_ad.ops import structural as st
from tenpy_ad.primitive import bind1, primitive
from tenpy_ad.rules import defjvp, defvjp
from test_svd_second_order import RANK4, _assert_hvp, _matrix

pytestmark = pytest.mark.usefixtures("restore_linalg_config")

SPEC = ((0, 4, 1), (1, 3, 1))                  # x[:, 1:3] of a 4 x 5 x


def _slice_transpose(ct, shape=(4, 5), spec=SPEC):
    x = np.zeros(shape)
    (g,) = st.slice_p.vjp(spec, ct, None, (x,), (True,))
    return g


def test_the_transpose_of_a_slice_is_a_block_of_the_slice():
    ct = np.arange(8.0).reshape(4, 2) + 1
    g = _slice_transpose(ct)
    assert type(g) is _core.BlockCotangent
    assert g.shape == (4, 5) and g.box == ((0, 4), (1, 3))
    expected = np.zeros((4, 5))
    expected[:, 1:3] = ct
    np.testing.assert_array_equal(_core.dense_cotangent(g), expected)
    assert _core.nonzero_range(g, 1, 5) == (1, 3)
    assert _core.cotangent_block(g, 1, 1, 3, 5) is ct     # the block itself, no copy


def test_a_strided_slice_declares_the_hull_of_its_entries():
    g = _slice_transpose(np.ones((4, 2)), spec=((0, 4, 1), (4, 0, -3)))  # x[:, 4:0:-3]
    assert g.box == ((0, 4), (1, 5))
    np.testing.assert_array_equal(_core.dense_cotangent(g)[0], [0, 1, 0, 0, 1])


def test_blocks_add_as_blocks_and_as_hulls():
    a, b = np.ones((4, 2)), 2 * np.ones((4, 2))
    same = _core.add_cotangents(_slice_transpose(a), _slice_transpose(b))
    assert type(same) is _core.BlockCotangent and same.box == ((0, 4), (1, 3))
    np.testing.assert_array_equal(_core.cotangent_block(same, 1, 1, 3, 5), 3 * a)
    other = _slice_transpose(np.ones((4, 1)), spec=((0, 4, 1), (4, 5, 1)))
    hull = _core.add_cotangents(_slice_transpose(a), other)
    assert hull.box == ((0, 4), (1, 5))
    np.testing.assert_array_equal(_core.dense_cotangent(hull)[0], [0, 1, 1, 0, 1])
    dense = _core.add_cotangents(_slice_transpose(a), np.ones((4, 5)))
    assert type(dense) is np.ndarray
    np.testing.assert_array_equal(dense[0], [1, 2, 2, 1, 1])


seen = []
dense_only_p = primitive("test_dense_only", lambda params, x: x * 1.0,
                         lambda params, x: x)
defjvp(dense_only_p, lambda p, t, out, x: t)
defvjp(dense_only_p, lambda p, ct, out, x: seen.append(type(ct)) or ct)
tp.PRIMITIVES.pop(dense_only_p.name)       # test-only: keep the registry as it is


@pytest.mark.parametrize("mode", ["traced", "eager", "eager create_graph"])
def test_rules_and_results_see_dense_values(mode):
    seen.clear()
    a = np.arange(12.0).reshape(3, 4)
    expected = np.zeros((3, 4))
    expected[:, :2] = 2 * a[:, :2]
    if mode == "traced":
        x = tp.input((3, 4), name="x")
        g = tp.ad.grad((bind1(dense_only_p, None, x)[:, :2] ** 2).sum(), x)
        assert type(g) is tp.TracedTensor
        got = tp.evaluate(g, {x: a})
    else:
        x = tp.tensor(a, requires_grad=True)
        loss = (bind1(dense_only_p, None, x)[:, :2] ** 2).sum()
        if mode == "eager":
            loss.backward()
            got = x.grad.numpy()
        else:
            (g,) = tp.grad_of([loss], [x], create_graph=True)
            assert type(g) is tp.Tensor
            got = g.numpy()
    np.testing.assert_array_equal(got, expected)
    assert seen and _core.BlockCotangent not in seen


@pytest.mark.parametrize("mode", ["traced", "eager"])
def test_an_entrywise_op_before_the_slice_keeps_the_truncation_visible(mode):
    """``where`` is entrywise: its VJP keeps the block, so the SVD's rule sees the kept
    triplets and the second derivative is exact at the exactly degenerate discarded
    values (it used to see every triplet used and raise GaugeError)."""
    rng = np.random.default_rng(6)
    a, w = _matrix(rng, (8, 8), RANK4), rng.standard_normal((8, 2))

    def loss(x):
        u, s, vh = tp.linalg.svd(x)
        bent = tp.where(u > 0, u, 0.5 * u)
        return (bent[:, :2] ** 2 * w).sum()
    _assert_hvp(loss, a, rng.standard_normal(a.shape), mode)

"""Rules see one operand kind: ``bind`` folds the calls they make on plain arrays (matrix
transposes, reshapes, slices, broadcasts, small matrix products, diagonals) into NumPy's
own calls, with what the shape rule checks checked first; the rules in ``tenpy_ad/ops``
test no operand's kind (tests/test_operand_kinds.py)."""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad import blas
from tenpy_ad._compiled import _core
from tenpy_ad.errors import ShapeError
from tenpy_ad.ops import structural as st
from tenpy_ad.ops.contraction import einsum_p
from tenpy_ad.ops.linalg import matrix
from tenpy_ad.primitive import bind1, bind2

rng = np.random.default_rng(3)


def test_the_tiny_product_threshold_is_blas_own():
    assert _core.TINY_MATMUL_WORK == blas.TINY["matmul"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_folded_calls_give_numpy_values(dtype):
    a = rng.standard_normal((3, 4)).astype(dtype)
    b = rng.standard_normal((4, 2)).astype(dtype)
    c = rng.standard_normal((3, 2)).astype(dtype)
    np.testing.assert_array_equal(bind1(st.transpose_p, (1, 0), a), a.T)
    np.testing.assert_array_equal(bind1(st.reshape_p, (2, 6), a), a.reshape(2, 6))
    np.testing.assert_array_equal(bind1(st.slice_p, ((1, 3, 1), (0, 2, 1)), a), a[1:3, :2])
    np.testing.assert_array_equal(bind1(st.broadcast_in_dim_p, ((2, 3, 4), (1, 2)), a),
                                  np.broadcast_to(a, (2, 3, 4)))
    np.testing.assert_array_equal(bind2(einsum_p, "ij,jk->ik", a, b), a @ b)
    np.testing.assert_array_equal(bind2(einsum_p, "ji,jk->ik", a, c), a.T @ c)
    np.testing.assert_array_equal(bind2(einsum_p, "ab,cb->ac", a, b.T), a @ b)
    square = rng.standard_normal((2, 3, 3)).astype(dtype)
    np.testing.assert_array_equal(bind2(einsum_p, "Aij,Ajk->Aik", square, square),
                                  square @ square)
    eye = matrix.frozen("eye", 3, tp.dtypes.code_of(dtype))
    np.testing.assert_array_equal(bind2(einsum_p, "Aij,ij->Ai", square, eye),
                                  np.diagonal(square, axis1=1, axis2=2))
    v = square[0, 0]
    np.testing.assert_array_equal(bind2(einsum_p, "i,ij->ij", v, eye), np.diag(v))


def test_folds_agree_with_the_traced_primitives():
    a = rng.standard_normal((2, 4, 4))
    x = tp.input(a.shape)
    for helper in (matrix.adjoint, matrix.diag, lambda m: matrix.diag_embed(m[:, 0]),
                   lambda m: matrix.mm(m, m), lambda m: matrix.adjoint_mm(m, m),
                   lambda m: matrix.mm_adjoint(m, m)):
        np.testing.assert_allclose(helper(a), tp.evaluate(helper(x), {x: a}), rtol=1e-14)


@pytest.mark.parametrize("call", [
    lambda a: bind1(st.transpose_p, (0, 1, 2), a),
    lambda a: bind1(st.reshape_p, (5, 3), a),
    lambda a: bind1(st.slice_p, ((0, 9, 1), (0, 4, 1)), a),
    lambda a: bind1(st.broadcast_in_dim_p, ((2, 3, 5), (1, 2)), a),
    lambda a: bind2(einsum_p, "ij,jk->ik", a, a),
    lambda a: bind2(einsum_p, "ij,jk->ik", a, a.T.astype(np.float32)),
    lambda a: bind2(einsum_p, "ij,ij->i", a, np.eye(3)),
], ids=["perm", "reshape", "slice", "broadcast", "product", "dtypes", "diagonal"])
def test_bad_operands_still_meet_the_shape_rule(call):
    with pytest.raises(ShapeError):
        call(rng.standard_normal((3, 4)))


def test_only_the_rules_identity_folds_a_diagonal():
    """Another matrix in the identity's place is contracted as the einsum says."""
    a, other = rng.standard_normal((3, 3)), np.eye(3)
    other[0, 1] = 2.0
    np.testing.assert_allclose(bind2(einsum_p, "ij,ij->i", a, other), (a * other).sum(1))


def test_a_product_from_the_threaded_size_on_takes_the_impl():
    a = rng.standard_normal((96, 96))
    assert 2 * 96 ** 3 >= _core.TINY_MATMUL_WORK
    np.testing.assert_allclose(bind2(einsum_p, "ij,jk->ik", a, a), a @ a, rtol=1e-12)


def test_a_large_broadcast_is_a_read_only_view():
    small = _core.broadcast_array(((3, 4), (1,)), np.arange(4.0))
    large = _core.broadcast_array(((100, 100), (1,)), np.arange(100.0))
    assert small.flags.writeable and small.shape == (3, 4)
    assert not large.flags.writeable and large.strides[0] == 0
    np.testing.assert_array_equal(large[7], np.arange(100.0))

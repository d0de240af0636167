"""The kernels a program uses for einsum steps (bound to the contraction's plan when it
is compiled; inline operations for small operands) equal NumPy's einsum."""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.ops.contraction import _einsum_kernel, _is_blasable, _plan

CASES = [
    ("ab,asc->bsc", (8, 8), (8, 2, 8)),
    ("bsd,bsc->cd", (8, 2, 8), (8, 2, 8)),
    ("bsc,ab->asc", (8, 2, 8), (8, 8)),
    ("ij,jk->ik", (3, 4), (4, 5)),
    ("ij,kj->ik", (3, 4), (5, 4)),
    ("zij,zjk->zki", (2, 3, 4), (2, 4, 5)),          # batch and an output permutation
    ("abc,cd->ad", (3, 4, 5), (5, 6)),               # a letter only one operand has
    ("i,i->", (7,), (7,)),
    ("ij,kl->ijkl", (2, 3), (4, 5)),                 # outer product
]


@pytest.mark.parametrize("subscripts,shape_a,shape_b", CASES)
def test_program_kernels_equal_numpy(subscripts, shape_a, shape_b):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    expected = np.einsum(subscripts, a, b)
    for kernel in (_einsum_kernel(subscripts, shape_a, shape_b),
                   _plan(subscripts, shape_a, shape_b).small_kernel()):
        np.testing.assert_allclose(kernel(subscripts, a, b), expected, rtol=1e-13, atol=1e-13)
        # transposed (non-contiguous) operands as programs may hand them over
        at = np.ascontiguousarray(a.T).T
        np.testing.assert_allclose(kernel(subscripts, at, b), expected, rtol=1e-13,
                                   atol=1e-13)


def test_a_compiled_einsum_equals_numpy():
    x = tp.input((8, 2, 8), name="x")
    left = tp.input((8, 8), name="left")
    program = tp.compile(tp.einsum("ab,asc,bsd->cd", left, x, x), inputs=[left, x])
    rng = np.random.default_rng(1)
    l0, x0 = rng.standard_normal((8, 8)), rng.standard_normal((8, 2, 8))
    np.testing.assert_allclose(program(l0, x0), np.einsum("ab,asc,bsd->cd", l0, x0, x0),
                               rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("name,array,expected", [
    ("C", np.ones((4, 5)), True), ("F", np.ones((4, 5), order="F"), True),
    ("column slice", np.ones((6, 6))[:, :3], True), ("row step", np.ones((6, 6))[::2], True),
    ("C stack", np.ones((2, 4, 5)), True),
    ("transposed stack", np.ones((2, 4, 5)).transpose(0, 2, 1), True),
    ("F-ordered stack", np.ones((2, 4, 5), order="F"), False),
    ("broadcast", np.broadcast_to(np.ones(5), (4, 5)), False),
    ("two strides", np.ones((6, 6))[::2, ::2], False)])
def test_blasable_is_numpys_own_test(name, array, expected):
    """Operands handed to np.matmul as they are exactly when NumPy itself would hand them
    to BLAS (else a copy: its own loop rounds differently and is slower)."""
    assert _is_blasable(array) is expected
    if array.ndim == 2:
        other = np.arange(array.shape[1] * 3, dtype=float).reshape(array.shape[1], 3)
        np.testing.assert_array_equal(tp.einsum("ij,jk->ik", array, other), array @ other)

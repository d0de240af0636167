"""``@``, ``tp.einsum`` and ``tp.tensordot`` compute what NumPy computes, in every mode.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp

from modes import check_modes
from surface_cases import DTYPES, rand


# ------------------------------------------------------------------ matmul

MATMUL_SHAPES = [
    ((3, 4), (4, 5)),          # 2-d @ 2-d
    ((4,), (4, 5)),            # 1-d @ 2-d
    ((3, 4), (4,)),            # 2-d @ 1-d
    ((4,), (4,)),              # 1-d @ 1-d -> ()
    ((2, 3, 4), (2, 4, 5)),    # batched
    ((2, 3, 4), (4, 5)),       # batched @ 2-d (broadcast)
    ((3, 4), (2, 4, 5)),       # 2-d @ batched
    ((1, 3, 4), (2, 4, 5)),    # size-1 batch broadcast
    ((2, 3, 4), (4,)),         # batched @ 1-d
    ((4,), (2, 4, 5)),         # 1-d @ batched
    ((2, 1, 3, 4), (5, 4, 2)),  # 4-d @ 3-d batch broadcast
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=[f"{a}@{b}" for a, b in MATMUL_SHAPES])
def test_matmul(sa, sb, dtype):
    check_modes(lambda a, b: a @ b, rand(sa, dtype, 8), rand(sb, dtype, 9))


def test_matmul_function_form():
    check_modes(lambda a, b: tp.matmul(a, b), rand((3, 4), seed=10), rand((4, 2), seed=11),
                ref=np.matmul)


def test_matmul_with_itself():
    check_modes(lambda a: a @ a @ a, rand((3, 3), seed=12))


# ------------------------------------------------------------------ einsum

EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),                  # implicit output
    ("ij,kj", [(3, 4), (5, 4)]),                  # implicit, alphabetical order
    ("ji,kj", [(4, 3), (5, 4)]),                  # implicit -> 'ik'
    ("ba", [(3, 4)]),                             # implicit transpose
    ("ii->", [(4, 4)]),                           # trace
    ("ii", [(4, 4)]),                             # implicit trace
    ("ii->i", [(4, 4)]),                          # diagonal
    ("ijij->", [(2, 3, 2, 3)]),
    ("ijij->ij", [(2, 3, 2, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(6, 2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]),
    ("i...->...", [(3, 4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,ki->", [(3, 4), (4, 5), (5, 3)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("xwu,yxl,yzd,wzr->uldr", [(2, 3, 4), (5, 2, 6), (5, 3, 7), (3, 3, 8)]),
    ("xwu,yxl,yzd,wzr->uldr", [(3, 3, 4), (3, 3, 4), (3, 3, 4), (3, 3, 4)]),
    ("i,ij,j->", [(3,), (3, 4), (4,)]),
    ("ij, jk -> ik", [(3, 4), (4, 5)]),            # spaces
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("subscripts,shapes", EINSUM,
                         ids=[f"{s}:{'x'.join(map(str, sh))}" for s, sh in EINSUM])
def test_einsum(subscripts, shapes, dtype):
    arrays = [rand(s, dtype, 60 + k) for k, s in enumerate(shapes)]
    check_modes(lambda *xs: tp.einsum(subscripts, *xs), *arrays,
                ref=lambda *xs: np.einsum(subscripts, *xs))


def test_einsum_ellipsis_broadcasts_size_one_axes():
    """NumPy broadcasts the axes covered by '...' (size 1 against size 2)."""
    a, b = rand((1, 3, 4), seed=70), rand((2, 4, 5), seed=71)
    check_modes(lambda x, y: tp.einsum("...ij,...jk->...ik", x, y), a, b,
                ref=lambda x, y: np.einsum("...ij,...jk->...ik", x, y))


def test_einsum_same_operand_twice():
    a = rand((3, 3), seed=72)
    check_modes(lambda x: tp.einsum("ij,jk,kl->il", x, x, x), a,
                ref=lambda x: np.einsum("ij,jk,kl->il", x, x, x))


def test_einsum_with_ndarray_operand():
    const = rand((4, 5), seed=73)
    a = rand((3, 4), seed=74)
    check_modes(lambda x: tp.einsum("ij,jk->ik", x, const), a,
                ref=lambda x: np.einsum("ij,jk->ik", x, const))
    check_modes(lambda x: tp.einsum("jk,ij->ki", const, x), a,
                ref=lambda x: np.einsum("jk,ij->ki", const, x))


def test_trg_contraction_from_svd_factors():
    """The TRG step: 4 reshaped factors contracted into the new tensor."""
    D, k = 2, 4
    s = [rand((D, D, k), seed=75 + i) for i in range(4)]
    check_modes(lambda s1, s2, s3, s4: tp.einsum("xwu,yxl,yzd,wzr->uldr", s2, s3, s4, s1),
                *s, ref=lambda s1, s2, s3, s4: np.einsum("xwu,yxl,yzd,wzr->uldr",
                                                         s2, s3, s4, s1))


# ------------------------------------------------------------------ tensordot

TENSORDOT = [
    ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3, 4), (4, 5), 1),
    ((2, 3), (4, 5), 0),
    ((3, 4), (3, 4), 2),
    ((2, 3, 4), (4, 3, 5), ([1, 2], [1, 0])),
    ((2, 3, 4), (5, 2), ([0], [1])),
    ((2, 3, 4), (4, 5), (2, 0)),
    ((2, 3, 4), (4, 5), (-1, 0)),
    ((2, 3, 4), (3, 2), ([0, 1], [1, 0])),
    ((2, 3, 4), (3, 4, 2), ((1, 2, 0), (0, 1, 2))),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sa,sb,axes", TENSORDOT,
                         ids=[f"{a}{b}{ax}" for a, b, ax in TENSORDOT])
def test_tensordot(sa, sb, axes, dtype):
    check_modes(lambda a, b: tp.tensordot(a, b, axes), rand(sa, dtype, 80), rand(sb, dtype, 81),
                ref=lambda a, b: np.tensordot(a, b, axes))


def test_tensordot_default_axes():
    check_modes(lambda a, b: tp.tensordot(a, b), rand((2, 3, 4), seed=82),
                rand((3, 4, 5), seed=83), ref=np.tensordot)

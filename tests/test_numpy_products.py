"""``dot``, ``vdot``, ``inner``, ``outer``, ``kron``, ``cross``, ``einsum`` (sublists
too), ``multi_dot``, ``matmul`` and ``tensordot`` compute what NumPy computes in every mode,
for every ndim NumPy accepts, with promotion, Python scalars and lists of tensors.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad.errors import ArgumentError, ShapeError

from modes import GRAD_MODES, assert_matches, check_modes, grad_in
from surface_cases import rand

SHAPE_PAIRS = {
    "dot": [((), (3,)), ((2, 3), ()), ((4,), (4,)), ((2, 4), (4,)), ((4,), (4, 3)),
            ((2, 4), (4, 3)), ((2, 3, 4), (4,)), ((2, 3, 4), (5, 4, 2)), ((4,), (2, 4, 3))],
    "inner": [((), (2, 3)), ((4,), (4,)), ((2, 4), (4,)), ((2, 4), (3, 4)),
              ((2, 3, 4), (5, 4))],
    "outer": [((3,), (4,)), ((2, 2), (3,)), ((), (2,))],
    "kron": [((2, 3), (2, 2)), ((3,), (2, 2)), ((2, 1, 2), (3, 2)), ((), (2,)), ((), ())],
    "vdot": [((4,), (4,)), ((2, 3), (3, 2)), ((), ())],
}
CASES = [(name, pair) for name, pairs in SHAPE_PAIRS.items() for pair in pairs]


@pytest.mark.parametrize("name,shapes", CASES, ids=[f"{n}-{s}" for n, s in CASES])
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("complex128", "float32")])
def test_products_match_numpy(name, shapes, dtypes):
    a = rand(shapes[0], dtypes[0], 91)
    b = rand(shapes[1], dtypes[1], 92)
    check_modes(getattr(tnp, name), a, b, ref=getattr(np, name))


@pytest.mark.parametrize("name", sorted(SHAPE_PAIRS))
def test_products_dispatch_and_mix_operands(name):
    a, b = rand((2, 2), seed=93), rand((2, 2), seed=94)
    numpy_fn, ours = getattr(np, name), getattr(tnp, name)
    assert_matches(numpy_fn(tp.tensor(a), b), numpy_fn(a, b), f"np.{name}")
    assert_matches(ours(a, tp.tensor(b)), numpy_fn(a, b), "ndarray first")
    assert_matches(ours([tp.tensor(a[0]), a[1]], b), numpy_fn(a, b), "list of tensors")
    if name != "vdot":
        assert_matches(ours(2.5, tp.tensor(b)), numpy_fn(2.5, b), "Python scalar")


def test_dot_method_and_gradients():
    a, b = rand((3, 4), seed=95), rand((4, 2), seed=96)
    assert_matches(tp.tensor(a).dot(b), a.dot(b), "method")
    for mode in GRAD_MODES:
        np.testing.assert_allclose(grad_in(mode, lambda x: tnp.dot(x, b).sum(), a),
                                   np.broadcast_to(b.sum(axis=1), a.shape), rtol=1e-14)


def test_vdot_conjugates_the_first_operand():
    a, b = rand((3,), "complex128", 97), rand((3,), "complex128", 98)
    assert_matches(tnp.vdot(tp.tensor(a), tp.tensor(b)), np.vdot(a, b), "vdot")
    assert not np.allclose(np.vdot(a, b), np.vdot(b, a))


@pytest.mark.parametrize("name,a,b", [
    ("dot", (2, 3), (4, 2)), ("dot", (2, 3, 4), (3, 5)), ("inner", (2, 3), (3, 2)),
    ("vdot", (2, 3), (5,))])
def test_product_shape_errors(name, a, b):
    with pytest.raises(ShapeError):
        getattr(tnp, name)(tp.tensor(np.ones(a)), np.ones(b))


def test_out_is_written_by_keyword_and_refused_by_position():
    a, b = np.arange(2.0), np.array([3.0, -1.0])
    for fn, args in ((tnp.dot, (a, b)), (tnp.outer, (a, b)), (tnp.einsum, ("i,j->ij", a, b))):
        numpy_fn = getattr(np, fn.__name__)
        expected = numpy_fn(*args)
        out = tp.tensor(np.zeros(np.shape(expected)))
        tensors = tuple(tp.tensor(x) if isinstance(x, np.ndarray) else x for x in args)
        assert fn(*tensors, out=out) is out
        np.testing.assert_allclose(out.numpy(), expected)
    for fn in (tnp.dot, tnp.outer):
        with pytest.raises(ArgumentError, match="out= is taken by keyword"):
            fn(tp.tensor(a), b, np.zeros(2))


CROSS = [
    dict(shapes=((3,), (3,))), dict(shapes=((4, 3), (3,))), dict(shapes=((2,), (2,))),
    dict(shapes=((5, 2), (5, 2))), dict(shapes=((2,), (3,))), dict(shapes=((3,), (2,))),
    dict(shapes=((3, 4), (4, 3)), axisa=0), dict(shapes=((3, 2), (3, 2)), axis=0),
    dict(shapes=((2, 3, 1), (3,)), axisa=1, axisc=0),
    dict(shapes=((4, 3), (4, 3)), axisc=0),
]


@pytest.mark.parametrize("case", CROSS, ids=[str(c) for c in CROSS])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.filterwarnings("ignore::DeprecationWarning")     # NumPy 2: 2-vectors
def test_cross(case, dtype):
    case = dict(case)
    sa, sb = case.pop("shapes")
    a, b = rand(sa, dtype, 99), rand(sb, dtype, 100)
    check_modes(lambda x, y: tnp.cross(x, y, **case), a, b,
                ref=lambda x, y: np.cross(x, y, **case))


def test_cross_errors():
    with pytest.raises(ValueError, match="2 or 3"):
        tnp.cross(tp.tensor(np.ones(4)), np.ones(3))


EINSUM_SUBLISTS = [
    ((0, 1), (1, 2), (0, 2)),
    ((0, 1), (1, 2), None),                      # implicit output
    ((0, 1), (0, 1), ()),
    ((Ellipsis, 1), (1, 2), (Ellipsis, 2)),
    ((0, 30), (30, 2), (2, 0)),                  # labels past 26
    ((0, 0), (0, 2), (2,)),                      # a repeated label: a diagonal
]


@pytest.mark.parametrize("sub", EINSUM_SUBLISTS, ids=[str(s) for s in EINSUM_SUBLISTS])
def test_einsum_sublists(sub):
    a, b = rand((3, 3), seed=101), rand((3, 3), seed=102)
    sa, sb, out = sub
    extra = [] if out is None else [list(out)]
    check_modes(lambda x, y: tnp.einsum(x, list(sa), y, list(sb), *extra), a, b,
                ref=lambda x, y: np.einsum(x, list(sa), y, list(sb), *extra))


def test_einsum_keywords():
    a, b = rand((2, 3), seed=103), rand((3, 4), seed=104)
    for optimize in (False, True, "greedy", "optimal"):
        check_modes(lambda x, y: tnp.einsum("ij,jk->ik", x, y, optimize=optimize), a, b,
                    ref=lambda x, y: np.einsum("ij,jk->ik", x, y))
    check_modes(lambda x: tnp.einsum("ij->j", x, dtype="complex128"), a,
                ref=lambda x: np.einsum("ij->j", x, dtype="complex128"))
    assert_matches(np.einsum(tp.tensor(a), [0, 1], b, [1, 2]),
                   np.einsum(a, [0, 1], b, [1, 2]), "np.einsum sublists")
    with pytest.raises(ValueError, match="sublist"):
        tnp.einsum(tp.tensor(a), [0, 60])


def test_multi_dot_and_lists():
    mats = [rand((2, 3), seed=105), rand((3, 4), seed=106), rand((4, 2), seed=107)]
    check_modes(lambda x, y, z: tnp.multi_dot([x, y, z]), *mats,
                ref=lambda x, y, z: np.linalg.multi_dot([x, y, z]))
    assert_matches(np.linalg.multi_dot([tp.tensor(mats[0]), *mats[1:]]),
                   np.linalg.multi_dot(mats), "np.linalg.multi_dot")
    rows = [tp.tensor(r) for r in mats[0]]
    assert_matches(tnp.matmul(rows, mats[1]), mats[0] @ mats[1], "matmul of a list")
    assert_matches(tnp.tensordot(rows, mats[1], 1), mats[0] @ mats[1], "tensordot of a list")


NEWER = [("vecdot", (2, 3), (3,)), ("vecdot", (1, 4), (3, 4)), ("matvec", (2, 3, 4), (4,)),
         ("vecmat", (3,), (2, 3, 4))]


@pytest.mark.parametrize("name,sa,sb", NEWER, ids=[f"{n}-{a}-{b}" for n, a, b in NEWER])
def test_vecdot_matvec_vecmat(name, sa, sb):
    if not hasattr(np, name):
        pytest.skip(f"np.{name} needs a newer NumPy")
    a, b = rand(sa, "complex128", 108), rand(sb, "float64", 109)
    check_modes(getattr(tnp, name), a, b, ref=getattr(np, name))
    assert_matches(getattr(np, name)(tp.tensor(a), b), getattr(np, name)(a, b), "dispatch")


def test_vecdot_axis():
    if not hasattr(np, "vecdot"):
        pytest.skip("np.vecdot needs NumPy 2")
    a, b = rand((3, 2), seed=110), rand((3, 1), seed=111)
    check_modes(lambda x, y: tnp.vecdot(x, y, axis=0), a, b,
                ref=lambda x, y: np.vecdot(x, y, axis=0))


def test_numpy_linalg_aliases():
    if not hasattr(np.linalg, "vecdot"):
        pytest.skip("the array-API names of np.linalg need NumPy 2")
    a, b = rand((4, 3), seed=112), rand((4, 3), seed=113)
    for name, args in [("matmul", (a, b.T)), ("tensordot", (a, b)), ("vecdot", (a, b)),
                       ("outer", (a[0], b[1])), ("cross", (a, b))]:
        fn = getattr(np.linalg, name)
        assert_matches(fn(tp.tensor(args[0]), args[1]), fn(*args), f"np.linalg.{name}")
    with pytest.raises(ShapeError, match="1-d"):
        np.linalg.outer(tp.tensor(a), b)
    with pytest.raises(ValueError, match="3 components"):
        np.linalg.cross(tp.tensor(a[:, :2]), b[:, :2])


def test_einsum_path_of_tensors():
    a, b, c = rand((2, 3), seed=114), rand((3, 4), seed=115), rand((4, 5), seed=116)
    got = np.einsum_path("ij,jk,kl->il", tp.tensor(a), tp.input((3, 4)), c)
    assert got[0] == np.einsum_path("ij,jk,kl->il", a, b, c)[0]
    sublists = (tp.tensor(a), [0, 1], b, [1, 2], tp.input((4, 5)), [2, 3], [0, 3])
    expected = np.einsum_path(a, [0, 1], b, [1, 2], c, [2, 3], [0, 3])
    assert np.einsum_path(*sublists)[0] == expected[0]       # the first operand as subscripts

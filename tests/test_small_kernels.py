"""The core's C kernels for small float64 program steps (tenpy_ad.compiler.small_kernels): which
steps get one, values equal to NumPy's (the same bits for elementwise steps, full sums and
a contraction's product; tight allclose against np.einsum), and NumPy's way for what a
kernel declines at run time (other layouts, non-finite results)."""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.compiler import small_kernels
from tenpy_ad.ops import elementwise as ew
from tenpy_ad.ops.contraction import einsum_strict
from tenpy_ad.testing import random_array

OPS = {
    "add": (ew.add, np.add), "sub": (ew.sub, np.subtract), "mul": (ew.mul, np.multiply),
    "div": (ew.div, np.divide),
    "neg": (lambda x, y: ew.neg(x), lambda x, y: np.negative(x)),
    "scale": (lambda x, y: ew.scale(x, 0.3), lambda x, y: np.multiply(x, 0.3)),
    "shift": (lambda x, y: ew.shift(x, -1.7), lambda x, y: np.add(x, -1.7)),
}


def _bits(x) -> bytes:
    x = np.asarray(x)
    return x.dtype.str.encode() + str(x.shape).encode() + x.tobytes()


def _run_counted(program, *args):
    tp.reset_counters()
    result = program(*args)
    counts = tp.counters()
    return result, counts["small_kernels_run"], counts["small_kernels_declined"]


def _awkward_values(rng, shape):
    """Normal values mixed with subnormal, tiny and huge ones and -0.0 (every
    result stays finite)."""
    x = rng.standard_normal(shape)
    flat = x.reshape(-1)
    flat[::5] *= 1e-310                 # subnormal
    flat[3::5] *= 1e-110
    flat[1::7] *= 1e100
    flat[2::11] = -0.0
    return x


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("shape", [(1,), (7,), (8, 8), (3, 5, 7)])
def test_elementwise_steps_are_c_kernels_with_numpys_bits(name, shape):
    ours, numpys = OPS[name]
    rng = np.random.default_rng(3)
    x, y = tp.input(shape), tp.input(shape)
    program = tp.compile(ew.neg(ours(x, y)), [x, y])   # the output step stays NumPy's
    assert program.kernel_kinds() == [name, "numpy"]
    a, b = _awkward_values(rng, shape), _awkward_values(rng, shape) + 0.5
    with np.errstate(all="ignore"):
        expected = np.negative(numpys(a, b))
    assert np.isfinite(expected).all()
    got, run, declined = _run_counted(program, a, b)
    assert _bits(got) == _bits(expected)
    assert (run, declined) == (1, 0)


@pytest.mark.parametrize("name", ["add", "sub", "neg"])
def test_complex_add_sub_neg_are_c_kernels_with_numpys_bits(name):
    ours, numpys = OPS[name]
    rng = np.random.default_rng(11)
    shape = (5, 6)
    x, y = tp.input(shape, np.complex128), tp.input(shape, np.complex128)
    program = tp.compile(ew.neg(ours(x, y)), [x, y])
    assert program.kernel_kinds() == [name, "numpy"]
    a = _awkward_values(rng, shape) + 1j * _awkward_values(rng, shape)
    b = _awkward_values(rng, shape) - 1j * _awkward_values(rng, shape)
    got, run, declined = _run_counted(program, a, b)
    assert _bits(got) == _bits(np.negative(numpys(a, b)))
    assert (run, declined) == (1, 0)


def test_complex_products_scalar_operands_and_0d_results_keep_numpy():
    x, s = tp.input((3, 4), np.complex128), tp.input((), np.complex128)
    program = tp.compile(ew.neg(ew.mul(tp.numpy.add(x, s), ew.scale(x, 2.0))), [x, s])
    kinds = program.kernel_kinds()
    assert kinds.count("add") == 1 and set(kinds) == {"add", "pass", "numpy"}
    a, value = np.full((3, 4), 1 + 2j), np.complex128(0.5 - 1j)
    got, run, declined = _run_counted(program, a, value)
    assert (run, declined) == (0, 1)                  # the 0-d operand: NumPy's way
    assert _bits(got) == _bits(-((a + value) * (a * 2.0)))


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_zero_d_steps_and_scalar_operands(name):
    ours, numpys = OPS[name]
    x, s = tp.input((4, 6)), tp.input(())
    total = ours(s, ew.scale(s, 3.0))                 # a 0-d result: a NumPy float64
    y = tp.numpy.divide(x, total)                     # its broadcast is skipped: 0-d operand
    program = tp.compile(ew.neg(ours(y, x)), [x, s])
    kinds = program.kernel_kinds()
    assert kinds[:2] == ["scale", name] and "div" in kinds[2:]
    a, value = np.random.default_rng(4).standard_normal((4, 6)), np.float64(0.7)
    scalar = numpys(value, value * 3.0)
    expected = np.negative(numpys(np.divide(a, scalar), a))
    got, run, declined = _run_counted(program, a, value)
    assert _bits(got) == _bits(expected)
    assert "pass" in kinds                            # the skipped broadcast
    assert (run, declined) == (sum(kind not in ("numpy", "pass") for kind in kinds), 0)


@pytest.mark.parametrize("shape", [(1,), (5,), (8,), (9,), (8, 8), (127,), (128,), (129,),
                                   (3, 7, 11), (16, 2, 16), (511,), (64, 64)])
def test_full_sums_add_in_numpys_order(shape):
    rng = np.random.default_rng(8)
    x = tp.input(shape)
    program = tp.compile(ew.neg(tp.numpy.sum(x)), [x])
    assert program.kernel_kinds() == ["sum", "neg"]     # 0-d results need no planned array
    for a in (_awkward_values(rng, shape), rng.standard_normal(shape) * 1e8 + 1.0,
              -np.zeros(shape)):                                # -0.0 sums to 0.0
        got, run, declined = _run_counted(program, a)
        assert _bits(got) == _bits(np.negative(np.add.reduce(a, axis=None)))
        assert (run, declined) == (2, 0)


def test_partial_sums_and_non_contiguous_operands_keep_numpy():
    x = tp.input((6, 4))
    assert tp.compile(ew.neg(tp.numpy.sum(x, axis=0)), [x]).kernel_kinds()[0] == "numpy"
    program = tp.compile(ew.neg(tp.numpy.sum(x)), [x])
    a = np.random.default_rng(9).standard_normal((4, 6)).T     # column-major
    got, run, declined = _run_counted(program, a)
    assert (run, declined) == (1, 1)
    assert _bits(got) == _bits(-np.add.reduce(a, axis=(0, 1)))


CONTRACTIONS = [
    ("ab,asc->bsc", (8, 8), (8, 2, 8)),               # the power iteration's
    ("bsd,bsc->cd", (8, 2, 8), (8, 2, 8)),            # output is the product's transpose
    ("cd,bsd->bsc", (8, 8), (16, 2, 8)),
    ("bsc,ab->asc", (16, 2, 8), (8, 16)),
    ("ij,jk->ik", (5, 7), (7, 3)),
    ("ji,jk->ik", (7, 5), (7, 3)),                    # a column-major operand
    ("ij,kj->ki", (5, 7), (3, 7)),
]


@pytest.mark.parametrize("subscripts,shape_a,shape_b", CONTRACTIONS)
def test_contractions_are_one_gemm(subscripts, shape_a, shape_b):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    x, y = tp.input(shape_a), tp.input(shape_b)
    program = tp.compile(ew.neg(einsum_strict(subscripts, x, y)), [x, y])
    assert program.kernel_kinds() == ["gemm", "numpy"]
    plain = tp.compile(ew.neg(einsum_strict(subscripts, x, y)), [x, y],
                       reuse_buffers=False)
    assert plain.kernel_kinds() == ["numpy", "numpy"]
    got, run, declined = _run_counted(program, a, b)
    assert (run, declined) == (1, 0)
    assert _bits(got) == _bits(plain(a, b))           # np.matmul's own dgemm call
    np.testing.assert_allclose(got, -np.einsum(subscripts, a, b), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("subscripts,shape_a,shape_b", CONTRACTIONS)
def test_complex_contractions_are_one_zgemm(subscripts, shape_a, shape_b):
    rng = np.random.default_rng(10)
    a = random_array(rng, shape_a, "complex128")
    b = np.conj(random_array(rng, shape_b, "complex128"))
    x, y = tp.input(shape_a, np.complex128), tp.input(shape_b, np.complex128)
    program = tp.compile(ew.neg(einsum_strict(subscripts, x, y)), [x, y])
    plain = tp.compile(ew.neg(einsum_strict(subscripts, x, y)), [x, y],
                       reuse_buffers=False)
    assert program.kernel_kinds() == ["gemm", "numpy"]
    got, run, declined = _run_counted(program, a, b)
    assert (run, declined) == (1, 0)
    assert _bits(got) == _bits(plain(a, b))
    np.testing.assert_allclose(got, -np.einsum(subscripts, a, b), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("m,n,where", [(4, 4, (1, 2)), (5, 3, (4, 1)), (6, 5, (2, 3))])
def test_a_product_with_non_finite_values_is_numpys(m, n, where):
    x, y = tp.input((m, 4)), tp.input((n, 4))
    program = tp.compile(ew.neg(einsum_strict("ij,kj->ki", x, y)), [x, y])
    a, b = np.ones((m, 4)), np.ones((n, 4))
    a[where] = np.inf                       # also in the odd last row / the 2x2 blocks
    with np.errstate(all="ignore"):
        got, run, declined = _run_counted(program, a, b)
        expected = -np.einsum("ij,kj->ki", a, b)
    assert program.kernel_kinds()[0] == "gemm" and (run, declined) == (0, 1)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_outer_products_keep_numpys_matmul(order, dtype):
    """k = 1 is not a gemm in NumPy's matmul (its own loop), so not one here either; the
    2-d operand of "jk,i->ijk" is flattened into one side of the product, which a
    column-major (LAPACK) operand does not allow as a view (it once gave wrong values)."""
    rng = np.random.default_rng(11)
    a = np.asarray(rng.standard_normal((2, 3)) + (0.5j if dtype is np.complex128 else 0),
                   order=order)
    b = rng.standard_normal(4).astype(dtype)
    x, y = tp.input((2, 3), dtype), tp.input((4,), dtype)
    for subscripts in ("jk,i->ijk", "ij,jk->ik"):
        operands = (x, y) if subscripts == "jk,i->ijk" else (x.reshape((6, 1)), y[None, :])
        program = tp.compile(ew.neg(einsum_strict(subscripts, *operands)), [x, y])
        plain = tp.compile(ew.neg(einsum_strict(subscripts, *operands)), [x, y],
                           reuse_buffers=False)
        assert "gemm" not in program.kernel_kinds()
        expected = -np.einsum(subscripts, *((a, b) if subscripts == "jk,i->ijk"
                                           else (a.reshape(6, 1), b[None, :])))
        np.testing.assert_allclose(program(a, b), expected, rtol=1e-15, atol=0)
        assert _bits(program(a, b)) == _bits(plain(a, b))


def test_column_major_layouts_of_operands_are_known_when_compiled():
    from tenpy_ad.ops.contraction import _matrix_layouts
    assert _matrix_layouts((5, 7), None, (5, 7)) == (1, 0)
    assert _matrix_layouts((7, 5), (1, 0), (5, 7)) == (0, 1)
    assert _matrix_layouts((2, 3), None, (6, 1)) == (1, -1)     # F order: no view
    assert _matrix_layouts((2, 3, 4), None, (6, 4)) == (1, -1)  # 3-d: only C is taken


def test_vectors_batches_and_summed_letters_keep_numpy():
    for subscripts, shape_a, shape_b in [("i,ij->j", (4,), (4, 5)),
                                         ("zij,zjk->zik", (2, 3, 4), (2, 4, 5)),
                                         ("abc,cd->ad", (3, 4, 5), (5, 6))]:
        x, y = tp.input(shape_a), tp.input(shape_b)
        program = tp.compile(ew.neg(einsum_strict(subscripts, x, y)), [x, y])
        assert program.kernel_kinds()[0] == "numpy", subscripts


def test_non_contiguous_operands_take_numpys_copy_or_fall_back():
    """An operand neither C- nor F-contiguous: the gemm kernel multiplies the C-ordered
    copy NumPy's matmul would make (reversed or permuted views: an eigh's columns in
    decreasing order); the elementwise add declines to NumPy.  The bits are NumPy's."""
    x, y = tp.input((6, 6)), tp.input((6, 6))
    program = tp.compile(ew.neg(ew.add(einsum_strict("ij,jk->ik", x, y), x)), [x, y])
    assert program.kernel_kinds() == ["gemm", "add", "numpy"]
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((6, 6)), rng.standard_normal((6, 6))
    strided = np.zeros((6, 12))
    strided[:, ::2] = a
    got, run, declined = _run_counted(program, strided[:, ::2], b)   # neither C nor F
    assert (run, declined) == (1, 1)
    np.testing.assert_allclose(got, -(a @ b + a), rtol=1e-14, atol=1e-14)
    assert _bits(program(a, b)) == _bits(got)
    reversed_b = np.ascontiguousarray(b[:, ::-1])[:, ::-1]             # negative strides
    got, run, declined = _run_counted(program, a, reversed_b)
    assert (run, declined) == (2, 0)
    np.testing.assert_allclose(got, -(a @ b + a), rtol=1e-14, atol=1e-14)
    assert _bits(program(a, b)) == _bits(got)


def _values(rng, shape, dtype):
    x = rng.standard_normal(shape)
    return x + 0.5j * rng.standard_normal(shape) if dtype is np.complex128 else x


def _views(rng, dtype) -> dict:
    """Views (5, 4, 6) in layouts neither C- nor F-contiguous: the first four are (20, 6)
    matrices ``abc -> (ab)c`` that NumPy's matmul hands to BLAS as they are (a leading
    dimension other than 6, an offset, column-major), the others it copies."""
    big = _values(rng, (5, 4, 9), dtype)
    return {"columns sliced": big[:, :, :6],
            "offset columns": _values(rng, (5, 4, 8), dtype)[:, :, 1:7],
            "column-major": _values(rng, (6, 20), dtype).T.reshape(5, 4, 6),
            "column-major, padded": _values(rng, (7, 24), dtype)[:6, :20].T.reshape(5, 4, 6),
            "reversed columns": big[:, :, ::-1][:, :, :6],
            "no view": _values(rng, (4, 5, 6), dtype).transpose(1, 0, 2)}


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_views_numpy_hands_to_blas_are_taken_as_they_are(dtype):
    """A view whose matrix has a unit stride along one axis and a leading dimension at
    least the other's extent goes to gemm as it is, with that leading dimension (NumPy's
    matmul call, so NumPy's bits); other views are gathered into NumPy's copy.  Neither
    declines to NumPy's way."""
    rng = np.random.default_rng(12)
    x, y = tp.input((5, 4, 6), dtype), tp.input((6, 3), dtype)
    outputs = ew.neg(einsum_strict("abc,cd->abd", x, y))
    program, plain = (tp.compile(outputs, [x, y], reuse_buffers=reuse)
                      for reuse in (True, False))
    assert program.kernel_kinds()[0] == "gemm"
    b = _values(rng, (6, 3), dtype)
    for name, a in _views(rng, dtype).items():
        assert not (a.flags.c_contiguous or a.flags.f_contiguous), name
        got, run, declined = _run_counted(program, a, b)
        assert (run, declined) == (1, 0), name
        assert _bits(got) == _bits(plain(a, b)), name
        np.testing.assert_allclose(got, -np.einsum("abc,cd->abd", a, b), rtol=1e-13,
                                   atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("subscripts,shape_a,shape_b", [
    ("ij,jk->ik", (5, 7), (7, 3)), ("ji,jk->ik", (7, 5), (7, 3)),
    ("ij,kj->ki", (5, 7), (3, 7)), ("ji,kj->ik", (6, 6), (6, 6))])
def test_column_major_operands_are_one_gemm_with_numpys_bits(subscripts, shape_a, shape_b,
                                                             dtype):
    """LAPACK's results are column-major: the kernel passes them with the other transpose
    flag, as NumPy's matmul does."""
    rng = np.random.default_rng(8)
    x, y = tp.input(shape_a, dtype), tp.input(shape_b, dtype)
    program = tp.compile(ew.neg(einsum_strict(subscripts, x, y)), [x, y])
    plain = tp.compile(ew.neg(einsum_strict(subscripts, x, y)), [x, y],
                       reuse_buffers=False)
    for column_major in ((True, False), (False, True), (True, True)):
        a, b = (np.asfortranarray(rng.standard_normal(s) + (0.5j if dtype is np.complex128
                                                              else 0) * rng.standard_normal(s))
                if f else rng.standard_normal(s).astype(dtype)
                for s, f in zip((shape_a, shape_b), column_major))
        got, run, declined = _run_counted(program, a, b)
        assert (run, declined) == (1, 0)
        assert _bits(got) == _bits(plain(a, b))
        np.testing.assert_allclose(got, -np.einsum(subscripts, a, b), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("subscripts,shape_a,shape_b", [
    ("xdbr,sldr->xlsb", (6, 3, 6, 3), (2, 3, 3, 3)),     # operand copies, output a view
    ("xryd,stdr->sxty", (5, 3, 5, 3), (2, 2, 3, 3)),
    ("ab,bc->ca", (5, 4), (4, 3)), ("abc,cd->dba", (3, 4, 5), (5, 2))])
def test_any_output_order_and_operand_layout_is_one_gemm_with_numpys_bits(subscripts,
                                                                          shape_a, shape_b,
                                                                          dtype):
    """An operand whose matrix is no view of it is NumPy's C-ordered copy; an output in an
    order other than the product's (or its transpose) is a view of the product, as NumPy's
    way returns it.  A consumer of the view (a sum, a second contraction) gets the bits it
    gets without a memory plan."""
    rng = np.random.default_rng(10)
    x, y = tp.input(shape_a, dtype), tp.input(shape_b, dtype)
    product = einsum_strict(subscripts, x, y)
    out_letters = subscripts.split("->")[1]
    outputs = [ew.neg(product), einsum_strict(f"{out_letters},{out_letters}->", product,
                                              product)]
    program = tp.compile(outputs, [x, y])
    plain = tp.compile(outputs, [x, y], reuse_buffers=False)
    assert program.kernel_kinds()[0] == "gemm"
    a, b = (rng.standard_normal(shape) + (0.5j if dtype is np.complex128 else 0) *
            rng.standard_normal(shape) for shape in (shape_a, shape_b))
    tp.reset_counters()
    got = program(a, b)
    assert tp.counters()["small_kernels_declined"] == 0
    assert [_bits(g) for g in got] == [_bits(p) for p in plain(a, b)]
    np.testing.assert_allclose(got[0], -np.einsum(subscripts, a, b), rtol=1e-13, atol=1e-13)
    permuted = np.ascontiguousarray(np.moveaxis(a, 0, -1))      # a view in another layout
    assert [_bits(g) for g in program(np.moveaxis(permuted, -1, 0), b)] == \
        [_bits(p) for p in plain(a, b)]


def test_other_dtypes_and_big_results_keep_numpy():
    x, y = tp.input((4, 4), np.float32), tp.input((4, 4), np.float32)
    program = tp.compile(ew.neg(ew.mul(einsum_strict("ij,jk->ik", x, y), x)), [x, y])
    assert set(program.kernel_kinds()) == {"numpy"}
    x, y = tp.input((4, 4), np.complex128), tp.input((4, 4), np.complex128)
    program = tp.compile(ew.neg(ew.mul(einsum_strict("ij,jk->ik", x, y), x)), [x, y])
    assert program.kernel_kinds() == ["gemm", "numpy", "numpy"]     # complex: products only
    n = small_kernels.SMALL_BYTES // 8 + 1
    x = tp.input((n,))
    assert tp.compile(ew.neg(ew.add(x, x)), [x]).kernel_kinds() == ["numpy", "numpy"]


def test_non_finite_results_are_computed_by_numpy_with_its_warnings():
    x, y = tp.input((3,)), tp.input((3,))
    program = tp.compile(ew.neg(ew.div(x, y)), [x, y])
    assert program.kernel_kinds() == ["div", "numpy"]
    a, b = np.array([1.0, 0.0, -2.0]), np.array([0.0, 0.0, 4.0])
    with pytest.warns(RuntimeWarning):
        got, run, declined = _run_counted(program, a, b)
    assert (run, declined) == (0, 1)
    with np.errstate(all="ignore"):
        assert _bits(got) == _bits(np.negative(np.divide(a, b)))
    with np.errstate(divide="raise", invalid="raise"), pytest.raises(FloatingPointError):
        program(a, b)


def test_kernels_can_be_switched_off(monkeypatch):
    monkeypatch.setattr(small_kernels, "ENABLED", False)
    x, y = tp.input((4, 4)), tp.input(())
    program = tp.compile(ew.neg(ew.add(einsum_strict("ij,jk->ik", x, x),
                                       tp.numpy.multiply(x, ew.scale(y, 2.0)))), [x, y])
    assert set(program.kernel_kinds()) == {"numpy", "pass"}    # "pass": a skipped broadcast


def test_a_power_iteration_gradient_matches_numpy_steps():
    """The small_ops benchmark's loss: every einsum a gemm, value and gradient equal to
    the program without C kernels up to rounding."""
    import tenpy_ad.numpy as tnp
    rng = np.random.default_rng(7)
    a0 = rng.standard_normal((6, 2, 6)) / np.sqrt(12)

    def loss(a):
        left, total = tnp.eye(6), 0.0
        for _ in range(5):
            left = tnp.einsum("ab,asc,bsd->cd", left, a, a)
            norm = tnp.sqrt(tnp.sum(left * left))
            total, left = total + tnp.log(norm), left / norm
        return -total

    x = tp.input(a0.shape)
    value = loss(x)
    outputs = [value, tp.ad.grad(value, x)]
    program = tp.compile(outputs, [x])
    kinds = program.kernel_kinds()
    assert kinds.count("gemm") >= 25 and kinds.count("div") >= 10
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(small_kernels, "ENABLED", False)
        reference = tp.compile(outputs, [x])
    for got, expected in zip(program(a0), reference(a0)):
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15)


def test_planned_arrays_of_kernels_are_not_outputs():
    """A step whose result is handed to the caller keeps NumPy's allocation (its array is
    never overwritten by the next call)."""
    x = tp.input((3, 3))
    y = ew.add(x, x)
    program = tp.compile([y, ew.mul(ew.sub(y, x), y)], [x])
    assert program.kernel_kinds() == ["numpy", "sub", "numpy"]
    a = np.arange(9.0).reshape(3, 3)
    first = program(a)
    kept = [f.copy() for f in first]
    program(-a)
    assert all(_bits(f) == _bits(k) for f, k in zip(first, kept))
    assert len(program.memory_plan.sizes) == 1       # the sub's array, below MIN_BYTES

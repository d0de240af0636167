"""Primitives with ``static_shapes`` keep their traced shape rule's results per (params,
dtypes, shapes): the nodes built, their shapes and dtypes, and every error are exactly
those of the rule itself."""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ShapeError
from tenpy_ad.ops.contraction import einsum_p
from tenpy_ad.ops.linalg.svd import svd_p
from tenpy_ad.primitive import PRIMITIVES, bind


def _without_cache(prim):
    """A context in which ``prim`` runs its shape rule every time."""
    class Off:
        def __enter__(self):
            self.saved, prim.shape_cache = prim.shape_cache, None

        def __exit__(self, *exc):
            prim.shape_cache = self.saved
    return Off()


def test_hot_primitives_keep_a_cache_and_graph_holding_ones_do_not():
    kept = {name for name, prim in PRIMITIVES.items() if prim.shape_cache is not None}
    assert {"einsum", "transpose", "reshape", "broadcast_in_dim", "reduce_sum", "svd",
            "eigh", "qr", "spectral_gaps"} <= kept
    assert not kept & {"checkpoint", "constant", "input"}


def test_cached_results_equal_the_rule_for_every_dtype_and_shape():
    for dtype in (np.float32, np.float64, np.complex128):
        for m, n in ((3, 3), (4, 2), (2, 5)):
            a = tp.input((m, n), dtype=dtype)
            cached = [(o.dtype, o.shape) for o in tp.linalg.svd(a)]
            with _without_cache(svd_p):
                b = tp.input((m, n), dtype=dtype)
                plain = [(o.dtype, o.shape) for o in tp.linalg.svd(b)]
            assert cached == plain
            assert cached[1] == (np.dtype(dtype).type(0).real.dtype, (min(m, n),))


def test_errors_are_raised_again_and_never_cached():
    a, b = tp.input((3, 4)), tp.input((5, 2))
    good = bind(einsum_p, "ij,jk->ik", a, tp.input((4, 2)))
    assert good.shape == (3, 2)
    for _ in range(2):
        with pytest.raises(ShapeError, match="letter 'j'"):
            bind(einsum_p, "ij,jk->ik", a, b)
    key_count = len(einsum_p.shape_cache)
    with pytest.raises(ShapeError):
        bind(einsum_p, "ij,jk->ik", a, b)
    assert len(einsum_p.shape_cache) == key_count


def test_dtype_is_part_of_the_key():
    x32, x64 = tp.input((2, 3), dtype=np.float32), tp.input((2, 3))
    assert tp.einsum("ij->ji", x64 * 1.0).shape == (3, 2)
    assert tp.reshape(x32, (6,)).dtype == np.float32
    assert tp.reshape(x64, (6,)).dtype == np.float64


def test_the_cache_is_bounded():
    cache = einsum_p.shape_cache
    x = tp.input((2, 2))
    for k in range(5000):
        bind(einsum_p, "ij,jk->ik", x, tp.input((2, 1 + k % 4999)))
    assert 0 < len(cache) <= 4096


@pytest.mark.parametrize("wrap", [np.asarray, tp.tensor], ids=["array", "eager"])
def test_arrays_are_checked_through_the_same_cache(wrap):
    good = bind(einsum_p, "ij,jk->ik", wrap(np.ones((3, 4))), wrap(np.ones((4, 2))))
    assert np.asarray(good.data if hasattr(good, "data") else good).shape == (3, 2)
    for _ in range(2):
        with pytest.raises(ShapeError, match="letter 'j'"):
            bind(einsum_p, "ij,jk->ik", wrap(np.ones((3, 4))), wrap(np.ones((5, 2))))


def test_a_rule_answering_as_an_operand_is_kept_as_that_operand():
    a, b = tp.input((3, 3)), tp.input((3, 2))
    first = tp.linalg.solve(a, b)
    again = tp.linalg.solve(a, tp.input((3, 2), dtype=np.float64) * 2.0)
    assert first.shape == again.shape == (3, 2)
    assert tp.linalg.solve(tp.input((3, 3), dtype=np.float32),
                           tp.input((3,), dtype=np.float32)).dtype == np.float32
    with pytest.raises(ShapeError, match="solve"):
        tp.linalg.solve(a, tp.input((4, 2)))

"""TRG with ``svd_method="partial"`` (the kept triplets only, ``tp.linalg.svds``) against
``svd_method="full"``: the same lnZ/N (1e-11) and d(lnZ/N)/d beta (1e-8 relative) at
chi = 16 (20 steps) and 32, the second derivative too at chi = 16, in compiled, eager and
sweep form (the python -m tenpy_ad defaults are chi = 16, 20 steps, auto: full there).
The temperatures span high (beta = 0.01) to low (beta = 8), where the TRG matrices have
(near-)exact degeneracies across the cut and many equal, near-zero singular values.

BLAS runs single-threaded here (see tests/test_trg.py).
"""
import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ArgumentError
from tenpy_ad.models import onsager
from tenpy_ad.models.trg import CompiledTRG, ks_rule, sweep, trg_lnz
from tenpy_ad.runtime import blas_threads

BETAS = [0.01, 0.1, 0.3, onsager.BETA_C, 0.6, 1.0, 2.0, 4.0, 8.0]
KS32 = [2, 4, 4, 16, 16, 32, 32]           # ks_rule(32, 7)


@pytest.fixture(scope="module", autouse=True)
def single_threaded_blas():
    with blas_threads(1):
        yield


@pytest.fixture(scope="module")
def chi16():
    return {method: CompiledTRG(16, 20, svd_method=method) for method in ("full", "partial")}


@pytest.fixture(scope="module")
def chi32():
    return {method: CompiledTRG(32, len(KS32), ks=KS32, second_order=False,
                                svd_method=method) for method in ("full", "partial")}


def assert_same(full: dict, partial: dict, second_order_rtol=None):
    assert abs(partial["lnz"] - full["lnz"]) <= 1e-11
    assert partial["dlnz"] == pytest.approx(full["dlnz"], rel=1e-8)
    if second_order_rtol is not None:
        assert partial["d2lnz"] == pytest.approx(full["d2lnz"], rel=second_order_rtol)


@pytest.mark.parametrize("beta", BETAS)
def test_chi16_partial_equals_full(chi16, beta):
    assert_same(chi16["full"](beta), chi16["partial"](beta), second_order_rtol=1e-7)


@pytest.mark.parametrize("beta", [0.3, onsager.BETA_C])
def test_chi32_partial_equals_full(chi32, beta):
    assert_same(chi32["full"](beta), chi32["partial"](beta))


@pytest.mark.slow
@pytest.mark.parametrize("beta", [0.01, 4.0])
def test_chi32_ten_steps_partial_equals_full(beta):
    results = [CompiledTRG(32, 10, second_order=False, svd_method=method)(beta)
               for method in ("full", "partial")]
    assert_same(*results)


def test_partial_graph_has_no_full_svd_of_the_large_matrices():
    beta = tp.input((), name="beta")
    lnz = trg_lnz(beta, 16, 6, svd_method="partial")
    shapes = [tuple(n.inputs[0].shape) for n in tp.introspection.graph_nodes([lnz])
              if n.prim.name == "svd"]
    assert all(max(shape) <= tp.linalg.PARTIAL_MIN_SIZE for shape in shapes)
    assert any(n.prim.name == "svds" for n in tp.introspection.graph_nodes([lnz]))


def test_eager_partial_equals_compiled():
    steps = 6
    b = tp.tensor(0.3, requires_grad=True)
    lnz = trg_lnz(b, 16, steps, svd_method="partial")
    lnz.backward()
    reference = CompiledTRG(16, steps, svd_method="full", second_order=False)(0.3)
    assert abs(lnz.item() - reference["lnz"]) <= 1e-11
    assert float(b.grad) == pytest.approx(reference["dlnz"], rel=1e-8)


def test_ks_rule_is_the_same_for_both_methods():
    assert ks_rule(32, 7, svd_method="partial") == KS32
    assert ks_rule(16, 8, svd_method="partial") == ks_rule(16, 8, svd_method="full")


def test_sweep_takes_the_method():
    rows = {m: sweep([0.35], chi=16, steps=6, svd_method=m, second_order=False)[0]
            for m in ("full", "partial")}
    assert abs(rows["full"]["lnz"] - rows["partial"]["lnz"]) <= 1e-11
    assert rows["partial"]["u"] == pytest.approx(rows["full"]["u"], rel=1e-8)


@pytest.mark.parametrize("call", [
    lambda: trg_lnz(0.3, 16, 4, svd_method="lanczos"),
    lambda: CompiledTRG(16, 4, svd_method="randomized"),
    lambda: ks_rule(16, 4, svd_method=None),
    lambda: sweep([0.3], chi=8, steps=2, svd_method="partial-ish"),
])
def test_bad_svd_method(call):
    with pytest.raises(ArgumentError, match="svd_method"):
        call()


def test_auto_is_the_default_and_takes_the_faster_path_for_the_size():
    """Full up to chi = 20 when second derivatives are computed, partial otherwise
    (bench/trg_partial.py --second-order)."""
    assert CompiledTRG(8, 2).svd_method == "full"
    assert CompiledTRG(20, 2).svd_method == "full"
    assert CompiledTRG(16, 2, second_order=False).svd_method == "partial"
    assert CompiledTRG(24, 2).svd_method == "partial"
    assert CompiledTRG(8, 2, svd_method="partial").svd_method == "partial"
    assert np.isfinite(CompiledTRG(8, 2)(0.4)["d2lnz"])

"""The BLAS-thread decision (tenpy_ad.blas) is a pure function of the work of a call and
``tp.config.blas_threads``; ``tp.config`` and its environment variable check their values.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad import dtypes
from tenpy_ad.blas import THREADED_FROM, TINY, matmul_work, threads_for
from tenpy_ad.compiler import step_choice
from tenpy_ad.config import Config
from tenpy_ad.errors import ArgumentError
from tenpy_ad.ops.contraction import einsum_p
from tenpy_ad.ops.linalg import complement_solve_p, eigh_p, qr_p, solve_p, svd_p, svds_p
from tenpy_ad.runtime import PROCESS

F64, C128 = dtypes.FLOAT64, dtypes.COMPLEX128


@pytest.fixture
def blas_setting():
    saved = tp.config.blas_threads
    yield tp.config
    tp.config.blas_threads = saved


@pytest.mark.parametrize("kind", sorted(TINY))
def test_threads_for_by_size(kind):
    tiny, threaded = TINY[kind], THREADED_FROM[kind]
    assert tiny < threaded
    assert threads_for(kind, tiny - 1, "auto") is None
    assert threads_for(kind, tiny, "auto") == 1
    assert threads_for(kind, threaded - 1, "auto") == 1
    assert threads_for(kind, threaded, "auto") == PROCESS
    assert threads_for(kind, 10 * threaded, "auto") == PROCESS
    assert threads_for(kind, tiny - 1, 3) is None      # too small to be threaded at all
    assert threads_for(kind, tiny, 3) == 3
    assert threads_for(kind, threaded, 1) == 1


def test_threads_for_reads_the_config(blas_setting):
    work = THREADED_FROM["svd"]
    blas_setting.blas_threads = 2
    assert threads_for("svd", TINY["svd"]) == 2
    blas_setting.blas_threads = "auto"
    assert threads_for("svd", TINY["svd"]) == 1 and threads_for("svd", work) == PROCESS


def _planned(prim, params, *operands, setting="auto"):
    return step_choice.blas_threads(prim, params, list(operands), setting)


def _side_with_work(target):
    """The smallest n whose n x n decomposition reaches ``target`` work."""
    n = 1
    while n ** 3 < target:
        n += 1
    return n


def test_planned_threads_of_the_primitives():
    n = _side_with_work(THREADED_FROM["svd"])
    assert _planned(svd_p, (False, 0.0), (F64, (n, n))) == PROCESS
    assert _planned(svd_p, (False, 0.0), (F64, (n - 1, n - 1))) == 1
    assert _planned(svd_p, (False, 0.0), (F64, (3, 3))) is None
    # a stack threads like one of its matrices
    assert _planned(svd_p, (False, 0.0), (F64, (1000, n - 1, n - 1))) == 1
    # a wide matrix: m n min(m, n)
    assert _planned(qr_p, None, (F64, (n // 2, 8 * n))) == PROCESS
    assert _planned(qr_p, None, (F64, (n // 4, 8 * n))) == 1
    # complex work counts 4x
    m = _side_with_work(THREADED_FROM["eigh"] / 4)
    assert _planned(eigh_p, None, (C128, (m, m))) == PROCESS
    assert _planned(eigh_p, None, (F64, (m, m))) == 1
    assert _planned(solve_p, None, (F64, (64, 64)), (F64, (64, 3))) == 1
    assert _planned(solve_p, None, (F64, (64, 64)), (F64, (64, 3)), setting=4) == 4


def test_planned_threads_of_einsum_follow_its_matmul():
    k = 1
    while 2 * k ** 3 < THREADED_FROM["matmul"]:
        k += 1
    assert _planned(einsum_p, "ij,jk->ik", (F64, (k, k)), (F64, (k, k))) == PROCESS
    assert _planned(einsum_p, "ij,jk->ik", (F64, (k - 1, k)), (F64, (k, k))) == 1
    # batch letters: per matrix; free/contracted letters multiply
    assert _planned(einsum_p, "bij,bjk->bik", (F64, (50, k - 1, k)), (F64, (50, k, k))) == 1
    assert _planned(einsum_p, "aij,jkc->aikc", (F64, (2, 128, 64)), (F64, (64, 4, 2))) is None
    assert _planned(einsum_p, "aij,jkc->aikc", (F64, (2, 128, 64)), (F64, (64, 32, 2))) == 1
    assert _planned(einsum_p, "ij->ji", (F64, (k, k))) is None        # no BLAS call
    assert matmul_work((3, 4), (4, 5)) == ("matmul", 120)


def test_planned_threads_of_the_partial_decompositions():
    # ARPACK's products with an n x n matrix; the dense path counts as a decomposition
    params = (8, 4, 1e-16, 1e-12, None, False)
    assert _planned(svds_p, params, (F64, (256, 256))) == 1
    assert _planned(svds_p, params[:-1] + (True,), (F64, (256, 256))) == 1
    side = int(np.ceil(np.sqrt(THREADED_FROM["matvec"])))
    assert _planned(svds_p, params, (F64, (side, side))) == PROCESS
    cs = ("gram", 1e-16, 1e-14, 1000)
    assert _planned(complement_solve_p, cs, (F64, (256, 256)), (F64, (256, 8)), (F64, (8,)),
                    (F64, (256, 8)), (F64, (256, 4))) == 1


def test_a_program_lists_its_threads(blas_setting):
    x = tp.input((96, 96), name="x")
    y = tp.linalg.eigh(x @ x.T)[0].sum() + tp.exp(x).sum()
    f = tp.compile(y, [x])
    names = {name for _, name, _ in f.blas_threads("auto")}
    assert names == {"einsum", "eigh"}
    assert {count for _, _, count in f.blas_threads("auto")} == {1}
    assert {count for _, _, count in f.blas_threads(3)} == {3}
    blas_setting.blas_threads = 2
    assert {count for _, _, count in f.blas_threads()} == {2}
    small = tp.input((3, 3))
    assert tp.compile(tp.linalg.svd(small)[1].sum(), [small]).blas_threads() == []


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "many", "", None, "2.0"])
def test_config_rejects_bad_values(bad, blas_setting):
    before = blas_setting.blas_threads
    with pytest.raises(ArgumentError, match="blas_threads"):
        blas_setting.blas_threads = bad
    assert blas_setting.blas_threads == before


def test_config_accepts_auto_and_counts(blas_setting):
    for value, expected in (("auto", "auto"), (" AUTO ", "auto"), (4, 4), ("2", 2),
                            (np.int64(3).item(), 3)):
        blas_setting.blas_threads = value
        assert blas_setting.blas_threads == expected
    assert repr(Config(2)) == "Config(blas_threads=2)"


def _import_with(value: str):
    env = dict(os.environ, TENPY_AD_BLAS_THREADS=value)
    return subprocess.run([sys.executable, "-c", "import tenpy_ad as tp; "
                           "print(repr(tp.config.blas_threads))"],
                          env=env, capture_output=True, text=True)


def test_the_environment_variable_sets_the_default():
    assert _import_with("3").stdout.strip() == "3"
    assert _import_with("auto").stdout.strip() == "'auto'"
    failed = _import_with("lots")
    assert failed.returncode != 0 and "TENPY_AD_BLAS_THREADS" in failed.stderr

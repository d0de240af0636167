"""TRG for the 2D Ising model, end to end.

* the reference derivatives (1-4 steps), reproduced traced, eager and segmented;
* an independent brute-force enumeration of the periodic lattice the steps contract;
* deep TRG against Onsager's exact solution (and Onsager's module against itself);
* ``checkpoint=True`` changes nothing but memory, to any order;
* whole-graph AD at 40-80 steps with counters that grow by exactly the same per step;
* bad input, sweeps over executors (the command line is tested in test_cli.py).

Expensive programs are built once per module (fixtures of scope "module"), and BLAS runs
single-threaded here (faster on small shared machines; see tenpy_ad.runtime), restored
afterwards.
"""
import gc
import math
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import TenpyAdError
from tenpy_ad.introspection import table_sizes
from tenpy_ad.runtime import blas_threads
from tenpy_ad.models import onsager
from tenpy_ad.models.trg import (CompiledTRG, SegmentedTRG, ks_rule, observables, sweep,
                                 trg_lnz)

BETA = 0.3
CHI = 16
DEEP = 20                       # steps of the "deep" programs (2^20 spins)

#: the reference values: d(lnZ/N)/d beta at beta = 0.3, chi = 16, after 1-4 steps
REFERENCE = {1: 1.667309214024311, 2: 1.277612005080206,
             3: 1.023802944795145, 4: 0.844054073623855}
REFERENCE_KS = {1: [2], 2: [2, 4], 3: [2, 4, 4], 4: [2, 4, 4, 16]}


# ------------------------------------------------------------------ fixtures

@pytest.fixture(scope="module", autouse=True)
def single_threaded_blas():
    """One BLAS thread (faster on small shared machines), restored afterwards."""
    with blas_threads(1):
        yield


@pytest.fixture(scope="module")
def small():
    """CompiledTRG(16, steps) (value, first and second derivative) for steps 1..4."""
    return {steps: CompiledTRG(CHI, steps) for steps in range(1, 5)}


@pytest.fixture(scope="module")
def deep16():
    return CompiledTRG(CHI, DEEP)


@pytest.fixture(scope="module")
def deep16_first():
    """First order only: half the run time, for the finite differences."""
    return CompiledTRG(CHI, DEEP, second_order=False)


@pytest.fixture(scope="module")
def deep8():
    return CompiledTRG(8, DEEP)


@pytest.fixture(scope="module")
def checkpointed():
    """(plain, checkpointed) CompiledTRG(16, 8), both with the second derivative."""
    return CompiledTRG(CHI, 8), CompiledTRG(CHI, 8, checkpoint=True)


def close(a, b, tol):
    return abs(a - b) <= tol


# ------------------------------------------------------------------ 1. reference values

def test_ks_rule():
    assert ks_rule(16, 8) == [2, 4, 4, 16, 16, 16, 16, 16]
    for steps, ks in REFERENCE_KS.items():
        assert ks_rule(CHI, steps) == ks


@pytest.mark.parametrize("steps", [1, 2, 3, 4])
def test_reference_compiled(small, steps):
    program = small[steps]
    assert program.ks == REFERENCE_KS[steps]
    result = program(BETA)
    assert close(result["dlnz"], REFERENCE[steps], 1e-12), result


@pytest.mark.parametrize("steps", [1, 2, 3, 4])
def test_reference_traced_by_hand(steps):
    beta = tp.input((), name="beta")
    lnz = trg_lnz(beta, CHI, steps)
    program = tp.compile([lnz, tp.ad.grad(lnz, beta)], inputs=[beta])
    value, derivative = program(np.float64(BETA))
    assert close(float(derivative), REFERENCE[steps], 1e-12)
    assert close(float(value), float(trg_lnz(BETA, CHI, steps)), 1e-12)


@pytest.mark.parametrize("steps", [1, 2, 3, 4])
def test_reference_eager(steps):
    b = tp.tensor(BETA, requires_grad=True)
    lnz = trg_lnz(b, CHI, steps)
    lnz.backward()
    assert close(float(b.grad), REFERENCE[steps], 1e-12)
    assert close(lnz.item(), float(trg_lnz(BETA, CHI, steps)), 1e-12)


@pytest.mark.parametrize("steps", [1, 2, 3, 4])
def test_reference_segmented(small, steps):
    segmented = SegmentedTRG(CHI, steps)
    assert segmented.ks == REFERENCE_KS[steps]
    result = segmented(BETA)
    assert close(result["dlnz"], REFERENCE[steps], 1e-12)
    assert close(result["lnz"], small[steps](BETA)["lnz"], 1e-12)


# ------------------------------------------------------------------ 2. brute force

def periodic_lattice(steps: int):
    """Sites Z^2 / L with L spanned by the columns of A = [[1, 1], [1, -1]]^steps, and the
    bonds (i, i + x), (i, i + y) of every site (repeats kept)."""
    a = np.linalg.matrix_power(np.array([[1, 1], [1, -1]], dtype=np.int64), steps)
    n = abs(int(round(np.linalg.det(a))))
    adjugate = np.array([[a[1, 1], -a[0, 1]], [-a[1, 0], a[0, 0]]])

    def key(p):              # p ~ q  <=>  A^-1 (p - q) integral  <=>  adj(A) (p - q) = 0 mod n
        return tuple(int(v) for v in np.mod(adjugate @ np.asarray(p), n))

    index, sites = {}, []
    for x in range(n):
        for y in range(n):
            k = key((x, y))
            if k not in index:
                index[k] = len(sites)
                sites.append((x, y))
    assert len(sites) == n == 2 ** steps
    bonds = []
    for i, (x, y) in enumerate(sites):
        bonds.append((i, index[key((x + 1, y))]))
        bonds.append((i, index[key((x, y + 1))]))
    return n, np.array(bonds)


def brute_force(steps: int, beta: float):
    """(lnZ/N, d(lnZ/N)/d beta) by summing all 2^N configurations."""
    n, bonds = periodic_lattice(steps)
    configs = np.arange(2 ** n, dtype=np.int64)[:, None]
    spins = 1 - 2 * ((configs >> np.arange(n)) & 1)
    bond_sum = (spins[:, bonds[:, 0]] * spins[:, bonds[:, 1]]).sum(axis=1).astype(np.float64)
    exponent = beta * bond_sum
    top = exponent.max()
    weights = np.exp(exponent - top)
    z = weights.sum()
    return (top + math.log(z)) / n, float(weights @ bond_sum) / z / n


def test_lattice_geometry():
    n, bonds = periodic_lattice(1)
    assert n == 2 and sorted(map(tuple, np.sort(bonds, axis=1))) == [(0, 1)] * 4
    n, bonds = periodic_lattice(2)                    # the 2x2 torus
    assert n == 4 and len(bonds) == 8
    assert np.all(np.bincount(bonds.ravel(), minlength=n) == 4)


@pytest.mark.parametrize("beta", [0.3, 0.44, 0.6])
def test_brute_force_one_step_is_two_tanh(beta):
    _, derivative = brute_force(1, beta)
    assert close(derivative, 2 * math.tanh(4 * beta), 1e-14)


@pytest.mark.parametrize("beta", [0.3, 0.44, 0.6])
@pytest.mark.parametrize("steps", [1, 2, 3, 4])
def test_brute_force_equals_trg(small, steps, beta):
    exact_lnz, exact_derivative = brute_force(steps, beta)
    assert close(float(trg_lnz(beta, CHI, steps)), exact_lnz, 1e-12)
    assert ks_rule(CHI, steps, beta) == REFERENCE_KS[steps]    # the program's ks fit beta
    result = small[steps](beta)
    assert close(result["lnz"], exact_lnz, 1e-12)
    assert close(result["dlnz"], exact_derivative, 1e-12)
    if beta == BETA:
        assert close(exact_derivative, REFERENCE[steps], 1e-12)


# ------------------------------------------------------------------ 3. Onsager

def test_deep_trg_matches_onsager(deep16):
    result = deep16(BETA)
    assert close(result["lnz"], onsager.lnz(BETA), 1e-6)
    assert close(result["dlnz"], -onsager.energy(BETA), 1e-6)
    c = BETA ** 2 * result["d2lnz"]
    assert close(c, onsager.specific_heat(BETA), 1e-3)
    row = observables(BETA, result)
    assert row == {"beta": BETA, "lnz": result["lnz"], "u": -result["dlnz"], "c": c}


def test_second_derivative_matches_finite_difference(deep16, deep16_first):
    h = 1e-4
    fd = (deep16_first(BETA + h)["dlnz"] - deep16_first(BETA - h)["dlnz"]) / (2 * h)
    d2 = deep16(BETA)["d2lnz"]
    assert d2 == pytest.approx(fd, rel=1e-6)
    assert deep16_first(BETA)["dlnz"] == pytest.approx(deep16(BETA)["dlnz"], abs=1e-13)


@pytest.mark.parametrize("beta", [0.3, 0.4])
def test_errors_shrink_with_chi(deep8, deep16, beta):
    assert deep8.ks == [2, 4, 4] + [8] * (DEEP - 3)
    assert ks_rule(8, DEEP, beta) == deep8.ks and ks_rule(CHI, DEEP, beta) == deep16.ks
    exact_lnz, exact_derivative = onsager.lnz(beta), -onsager.energy(beta)
    r8, r16 = deep8(beta), deep16(beta)
    assert abs(r16["lnz"] - exact_lnz) < abs(r8["lnz"] - exact_lnz)
    assert abs(r16["dlnz"] - exact_derivative) < abs(r8["dlnz"] - exact_derivative)


def test_errors_shrink_from_chi_16_to_32(deep16):
    """The issue's comparison: at beta = 0.3, 20 steps, chi = 32 beats chi = 16 on both
    lnZ/N and its derivative (a value + first-derivative program; 1024x1024 SVDs)."""
    ks32 = [2, 4, 4, 16, 16] + [32] * (DEEP - 5)        # ks_rule(32, 20), precomputed
    deep32 = CompiledTRG(32, DEEP, ks=ks32, second_order=False)
    exact_lnz, exact_derivative = onsager.lnz(BETA), -onsager.energy(BETA)
    r16, r32 = deep16(BETA), deep32(BETA)
    assert abs(r32["lnz"] - exact_lnz) < abs(r16["lnz"] - exact_lnz)
    assert abs(r32["dlnz"] - exact_derivative) < abs(r16["dlnz"] - exact_derivative)


def derivative(f, x, h=1e-3):
    """Five-point central difference (error ~ h^4)."""
    return (-f(x + 2 * h) + 8 * f(x + h) - 8 * f(x - h) + f(x - 2 * h)) / (12 * h)


@pytest.mark.parametrize("beta", [0.2, 0.35, 0.55, 0.8])
def test_onsager_is_self_consistent(beta):
    assert -onsager.energy(beta) == pytest.approx(derivative(onsager.lnz, beta), rel=1e-8)
    assert onsager.specific_heat(beta) == pytest.approx(
        -beta ** 2 * derivative(onsager.energy, beta), rel=1e-7)


def test_onsager_at_the_critical_point():
    assert onsager.BETA_C == pytest.approx(0.5 * math.log(1 + math.sqrt(2)), rel=1e-15)
    assert onsager.energy(onsager.BETA_C) == -math.sqrt(2)
    assert onsager.specific_heat(onsager.BETA_C) == math.inf


# ------------------------------------------------------------------ 4. checkpoint

def test_checkpoint_traced(checkpointed):
    plain, remat = checkpointed
    a, b = plain(BETA), remat(BETA)
    assert close(a["lnz"], b["lnz"], 1e-12)
    assert close(a["dlnz"], b["dlnz"], 1e-12)
    assert close(a["d2lnz"], b["d2lnz"], 1e-10)
    assert close(a["lnz"], float(trg_lnz(BETA, CHI, 8)), 1e-12)
    assert close(a["lnz"], float(trg_lnz(BETA, CHI, 8, checkpoint=True)), 1e-12)  # NumPy


def test_checkpoint_eager(checkpointed):
    traced = checkpointed[0](BETA)
    results = []
    for checkpoint in (False, True):
        b = tp.tensor(BETA, requires_grad=True)
        lnz = trg_lnz(b, CHI, 8, checkpoint=checkpoint)
        lnz.backward()
        results.append((lnz.item(), float(b.grad)))
    (value, grad), (value_cp, grad_cp) = results
    assert close(value, value_cp, 1e-12) and close(grad, grad_cp, 1e-12)
    assert close(grad, traced["dlnz"], 1e-12) and close(value, traced["lnz"], 1e-12)


def test_checkpoint_eager_second_order(small):
    expected = small[4](BETA)
    b = tp.tensor(BETA, requires_grad=True)
    lnz = trg_lnz(b, CHI, 4, checkpoint=True)
    (first,) = tp.grad_of([lnz], [b], [np.float64(1.0)], create_graph=True)
    (second,) = tp.grad_of([first], [b], [np.float64(1.0)])
    assert close(first.item(), expected["dlnz"], 1e-12)
    assert close(second.item(), expected["d2lnz"], 1e-10)


def test_checkpoint_graph_is_released():
    gc.collect()
    before = table_sizes()
    beta = tp.input((), name="beta")
    lnz = trg_lnz(beta, CHI, 4, checkpoint=True)
    first = tp.ad.grad(lnz, beta)
    second = tp.ad.grad(first, beta)
    program = tp.compile([lnz, first, second], inputs=[beta])
    assert table_sizes()["metadata_rows"] > before["metadata_rows"]
    values = [float(v) for v in program(np.float64(BETA))]
    assert close(values[1], REFERENCE[4], 1e-12)
    del beta, lnz, first, second, program
    gc.collect()
    assert table_sizes() == before


# ------------------------------------------------------------------ 5. deep whole-graph AD

COUNTED = ("nodes_interned", "rules_applied", "nodes_visited")


def test_deep_whole_graph_ad_is_linear():
    ks80 = ks_rule(CHI, 80)
    assert ks80 == [2, 4, 4] + [16] * 77
    gc.collect()
    start = table_sizes()

    def pipeline(steps, run=False):
        gc.collect()
        tp.reset_counters()
        beta = tp.input((), name="beta")
        lnz = trg_lnz(beta, CHI, steps, ks=ks80[:steps])
        derivative = tp.ad.grad(lnz, beta)
        program = tp.compile([lnz, derivative], inputs=[beta])
        counts = tp.counters()
        values = [float(v) for v in program(np.float64(BETA))] if run else None
        del beta, lnz, derivative, program
        return {k: counts[k] for k in COUNTED}, values

    c40, values = pipeline(40, run=True)
    c60, _ = pipeline(60)
    c80, _ = pipeline(80)
    first = {k: c60[k] - c40[k] for k in COUNTED}
    second = {k: c80[k] - c60[k] for k in COUNTED}
    assert first == second, (c40, c60, c80)
    assert all(first[k] > 0 for k in COUNTED)
    assert close(values[0], onsager.lnz(BETA), 1e-6)
    assert close(values[1], -onsager.energy(BETA), 1e-6)
    gc.collect()
    assert table_sizes() == start


# ------------------------------------------------------------------ 6. bad input

BAD_ARGUMENTS = [
    # (beta, chi, steps, the argument the message must name)
    (0, 16, 4, "beta"), (0.0, 16, 4, "beta"), (-0.1, 16, 4, "beta"),
    (0.3, 1, 4, "chi"), (0.3, 0, 4, "chi"), (0.3, 16.0, 4, "chi"), (0.3, 8.5, 4, "chi"),
    (0.3, "16", 4, "chi"),
    (0.3, 16, 0, "steps"), (0.3, 16, -1, "steps"), (0.3, 16, 4.0, "steps"),
    (0.3, 16, 2.5, "steps"),
]


@pytest.mark.parametrize("beta,chi,steps,name", BAD_ARGUMENTS)
def test_bad_arguments_trg_lnz(beta, chi, steps, name):
    with pytest.raises(TenpyAdError, match=name):
        trg_lnz(beta, chi, steps)


@pytest.mark.parametrize("beta,chi,steps,name", BAD_ARGUMENTS)
def test_bad_arguments_ks_rule(beta, chi, steps, name):
    with pytest.raises(TenpyAdError, match=name):
        ks_rule(chi, steps, beta)


@pytest.mark.parametrize("beta,chi,steps,name", [a for a in BAD_ARGUMENTS if a[3] != "beta"])
def test_bad_arguments_compiled_trg(beta, chi, steps, name):
    with pytest.raises(TenpyAdError, match=name):
        CompiledTRG(chi, steps)
    with pytest.raises(TenpyAdError, match=name):
        SegmentedTRG(chi, steps)


@pytest.mark.parametrize("beta", [0, 0.0, -0.1])
def test_bad_beta_compiled_call(small, beta):
    with pytest.raises(TenpyAdError, match="beta"):
        small[4](beta)
    with pytest.raises(TenpyAdError, match="beta"):
        trg_lnz(tp.tensor(float(beta), requires_grad=True), CHI, 4)


def test_bad_arguments_with_traced_beta():
    beta = tp.input((), name="beta")
    with pytest.raises(TenpyAdError, match="chi"):
        trg_lnz(beta, 1, 4)
    with pytest.raises(TenpyAdError, match="steps"):
        trg_lnz(beta, CHI, 0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_beta_gives_nan(small):
    assert math.isnan(float(trg_lnz(float("nan"), CHI, 4, ks=[2, 4, 4, 16])))
    result = small[4](float("nan"))
    assert all(math.isnan(v) for v in result.values()), result
    b = tp.tensor(float("nan"), requires_grad=True)
    lnz = trg_lnz(b, CHI, 4)
    lnz.backward()
    assert math.isnan(lnz.item()) and math.isnan(float(b.grad))


@pytest.mark.parametrize("kwargs,fragment", [
    (dict(beta=float("inf"), chi=16, steps=2), "beta"),
    (dict(beta=0.3, chi=16, steps=2, ks=[2, 0]), "ks[1]"),
    (dict(beta=0.3, chi=16, steps=2, ks=[2, 64]), "ks[1]"),
    (dict(beta=0.3, chi=16, steps=2, ks=[2.5, 4]), "ks[0]"),
    (dict(beta=0.3, chi=16, steps=2, ks=[2]), "2 steps"),
])
def test_bad_beta_and_ks_are_clear_errors(kwargs, fragment):
    with pytest.raises(TenpyAdError) as info:
        trg_lnz(**kwargs)
    assert fragment in str(info.value)


# ------------------------------------------------------------------ 7. sweeps

SWEEP_BETAS = [0.3, 0.35, 0.4]


@pytest.fixture(scope="module")
def sweep_reference():
    program = CompiledTRG(8, 6)
    return [observables(beta, program(beta)) for beta in SWEEP_BETAS]


def check_sweep(results, reference):
    assert len(results) == len(SWEEP_BETAS)
    for row, expected in zip(results, reference):
        assert set(row) == {"beta", "lnz", "u", "c"}
        assert row["beta"] == expected["beta"]
        for key in ("lnz", "u", "c"):
            assert close(row[key], expected[key], 1e-12), (key, row, expected)


def test_sweep_in_process_and_in_a_process_pool(sweep_reference):
    local = sweep(SWEEP_BETAS, chi=8, steps=6)
    check_sweep(local, sweep_reference)
    progress = []
    with ProcessPoolExecutor(max_workers=2) as pool:
        pooled = sweep(SWEEP_BETAS, chi=8, steps=6, executor=pool,
                       progress=lambda i, n: progress.append((i, n)))
    assert pooled == local
    assert progress == [(1, 3), (2, 3), (3, 3)]


def test_sweep_on_dask(sweep_reference):
    distributed = pytest.importorskip("distributed")
    local = sweep(SWEEP_BETAS, chi=8, steps=6)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        results = sweep(SWEEP_BETAS, chi=8, steps=6, executor=client.get_executor())
    assert results == local
    check_sweep(results, sweep_reference)

"""The differential fuzzer (``tests/differential.py``, programs from
``tests/program_fuzz.py``): seeded random programs over every public op family, each run
in every mode and differentiated by every route, must agree with each other, with NumPy
and with central differences — or the engine must raise a clear error.  Write programs
(in-place writes into targets and their views, among the other families) must agree in
the eager routes, and the traced ones must agree or refuse the write by name.  Big
programs (arrays above the memory plan's size threshold) must give the same bits compiled
with and without the plan.

The budget is deterministic: ``TENPY_AD_FUZZ_PROGRAMS`` programs (default 4000, in
chunks of 200), ``TENPY_AD_FUZZ_WRITES`` write programs (default 1000) and
``TENPY_AD_FUZZ_BIG`` big ones (default 400), from seed ``TENPY_AD_FUZZ_SEED`` (default
0).  The long mode runs thousands more, on every core:
``python tests/differential.py --programs 20000 --workers 2 [--writes]``.
"""
import os

import numpy as np
import pytest

import tenpy_ad as tp
from differential import check_big_program, check_program, check_source

PROGRAMS = int(os.environ.get("TENPY_AD_FUZZ_PROGRAMS", "4000"))
WRITES = int(os.environ.get("TENPY_AD_FUZZ_WRITES", "1000"))
BIG = int(os.environ.get("TENPY_AD_FUZZ_BIG", "400"))
SEED = int(os.environ.get("TENPY_AD_FUZZ_SEED", "0"))
CHUNK = 200


def _chunks(total: int) -> list:
    return [range(start, min(start + CHUNK, total)) for start in range(0, total, CHUNK)]


def _run(check, indices, *tag) -> None:
    failures = []
    for i in indices:
        try:
            check((SEED, i, *tag))
        except AssertionError as error:
            failures.append(str(error))
    assert not failures, f"{len(failures)} programs failed; the first:\n{failures[0]}"


@pytest.mark.parametrize("indices", _chunks(PROGRAMS), ids=lambda r: f"{r.start}-{r.stop}")
def test_fuzzed_programs_agree_in_every_mode_and_route(indices):
    _run(check_program, indices)


@pytest.mark.parametrize("indices", _chunks(WRITES), ids=lambda r: f"writes-{r.start}-{r.stop}")
def test_fuzzed_write_programs_agree_in_every_mode_and_route(indices):
    _run(check_program, indices, 1)          # seeds (s, i, 1): write programs


@pytest.mark.parametrize("indices", _chunks(BIG), ids=lambda r: f"big-{r.start}-{r.stop}")
def test_big_fuzzed_programs_are_bit_identical_with_and_without_the_plan(indices):
    _run(check_big_program, indices)


# ------------------------------------------------------------------ fixed points

_FIXED_POINT_PROGRAM = """
def program(xp, sp, lx, a, b):
    x = fx.fixed_point(a * b[0], b)
    return (x, xp.sum(x * a))
"""
_A = np.array([[0.3, -1.2, 2.0], [0.7, 0.0, -0.4]])
_B = np.array([0.5, -1.5, 0.25])


def test_a_fixed_point_program_is_checked_by_every_route_at_both_orders():
    """The fuzzer's fixed_point family: tp.fixed_point's implicit derivatives against
    NumPy's iteration, the other routes and central differences, first and second order."""
    checked = check_source(_FIXED_POINT_PROGRAM, {"a": _A, "b": _B})
    assert {"forward", "gradients", "jvp", "hvp", "fd directional derivative",
            "fd Hessian-vector product"} <= set(checked)


def test_a_detached_fixed_point_fails_the_check(monkeypatch):
    """The check can fail: a fixed point whose derivative is dropped (every AD route
    agrees on zero) disagrees with central differences."""
    original = tp.fixed_point
    monkeypatch.setattr(tp, "fixed_point",
                        lambda *args, **kwargs: tp.stop_gradient(original(*args, **kwargs)))
    with pytest.raises(AssertionError, match="central differences"):
        check_source(_FIXED_POINT_PROGRAM, {"a": _A, "b": _B})

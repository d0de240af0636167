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

import pytest

from differential import check_big_program, check_program

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

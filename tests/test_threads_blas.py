"""The engine sets the BLAS libraries' thread count only during its own calls: inside, a
call runs with the count its work calls for; afterwards (also after an error, also with
several Python threads calling at once) the process has the user's setting back.

Counts are read with threadpoolctl, independently of the engine's own getters.
"""

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import tenpy_ad as tp

from concurrency import run_threads
from tenpy_ad.runtime import blas_control


def _count():
    """The BLAS libraries' thread count (a tuple if they differ)."""
    counts = {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}
    return counts.pop() if len(counts) == 1 else tuple(sorted(counts))


@pytest.fixture
def user_threads():
    """The user's setting: every BLAS library at 2 threads (restored afterwards), and the
    default ``tp.config.blas_threads``."""
    saved = tp.config.blas_threads
    tp.config.blas_threads = "auto"
    with threadpool_limits(2, user_api="blas"):
        assert _count() == 2
        yield 2
    tp.config.blas_threads = saved


@pytest.fixture
def seen(monkeypatch):
    """The BLAS counts at each call of np.linalg.eigh / np.linalg.solve (the LAPACK calls
    of the eigh and solve impls)."""
    found = []
    for name in ("eigh", "solve"):
        original = getattr(np.linalg, name)

        def probe(*args, _original=original, **kwargs):
            found.append(_count())
            return _original(*args, **kwargs)
        monkeypatch.setattr(np.linalg, name, probe)
    return found


def _symmetric(n, seed=0):
    a = np.random.default_rng(seed).standard_normal((n, n))
    return a + a.T


def test_eager_calls_use_one_thread_and_restore(user_threads, seen):
    a = tp.tensor(_symmetric(64), requires_grad=True)
    w, v = tp.linalg.eigh(a)
    ((w * w).sum() + (v[:, :3] ** 2 * w[:3]).sum()).backward()
    assert seen and set(seen) == {1}
    assert _count() == 2


def test_a_forced_count_applies_inside_only(user_threads, seen):
    tp.config.blas_threads = 3
    tp.linalg.eigh(_symmetric(64))
    assert set(seen) == {3} and _count() == 2
    tp.config.blas_threads = "auto"
    tp.linalg.eigh(_symmetric(8))                   # too small to be switched at all
    assert seen[-1] == 2


def test_programs_switch_per_step_and_restore(user_threads, seen):
    x = tp.input((64, 64), name="x")
    w, v = tp.linalg.eigh(x @ x.T + tp.linalg.solve(x + 8.0 * np.eye(64), x))
    f = tp.compile([w.sum(), tp.ad.grad((w * w).sum(), x)], [x])
    f(np.random.default_rng(1).standard_normal((64, 64)))
    calls = len(seen)                   # eigh, solve and the solve of solve's VJP
    assert calls == 3 and set(seen) == {1}
    assert _count() == 2
    tp.config.blas_threads = 3
    f(np.random.default_rng(1).standard_normal((64, 64)))
    assert set(seen[calls:]) == {3} and _count() == 2


def test_the_users_own_limit_is_kept(user_threads, seen):
    with threadpool_limits(1, user_api="blas"):
        tp.linalg.eigh(_symmetric(64))
        assert set(seen) == {1} and _count() == 1
        tp.config.blas_threads = 2
        tp.linalg.eigh(_symmetric(64))
        assert seen[-1] == 2 and _count() == 1
    assert _count() == 2


def test_errors_restore_the_setting(user_threads):
    singular = np.zeros((64, 64))
    with pytest.raises(np.linalg.LinAlgError):
        tp.linalg.solve(tp.tensor(singular), tp.tensor(np.ones((64, 2))))
    x = tp.input((64, 64), name="x")
    f = tp.compile(tp.linalg.inv(x).sum(), [x])
    with pytest.raises(np.linalg.LinAlgError):
        f(singular)
    assert _count() == 2 and blas_control().depth == 0


def test_concurrent_engine_calls_restore_the_setting(user_threads):
    x = tp.input((64, 64), name="x")
    f = tp.compile(tp.linalg.eigh(x + x.T)[0].sum(), [x])
    a = np.random.default_rng(2).standard_normal((64, 64))
    def run(k):
        for _ in range(20):
            if k % 2:
                f(a)
            else:
                tp.linalg.svd(tp.tensor(a))

    run_threads(run)
    assert _count() == 2 and blas_control().depth == 0


def test_the_process_count_inside_a_program_run(user_threads):
    """``call(0, ...)`` (the process's own setting) switches back to the user's count
    inside a run that had set another; nothing is switched outside engine calls."""
    control = blas_control()
    assert control.call(0, _count) == 2
    control.enter_call()
    try:
        control.switch_to(1)
        assert _count() == 1
        assert control.call(0, _count) == 2
        assert control.call(1, _count) == 1
        assert control.depth == 1
    finally:
        control.leave_call()
    assert _count() == 2 and control.depth == 0
    control.switch_to(1)                                # outside engine calls: no effect
    assert _count() == 2

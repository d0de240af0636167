"""Running one function on several threads at once, as the thread-safety tests do."""
import sys
import threading


def run_threads(target, n: int = 4) -> None:
    """``target(k)`` for k = 0..n-1 on n threads released together, switching threads as
    often as Python allows; an exception in any thread fails the caller."""
    errors, barrier = [], threading.Barrier(n)

    def run(k):
        try:
            barrier.wait()
            target(k)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append((k, error))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors

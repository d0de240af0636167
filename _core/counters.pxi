# Deterministic counters (the ``Counters`` struct in _core.pxd).  Tests assert on these
# (exact growth per layer), never on time.


def counters() -> dict:
    """Snapshot of the engine's deterministic counters (a dict of ints)."""
    return _counters


def reset_counters() -> None:
    """Set every counter to zero."""
    memset(&_counters, 0, sizeof(Counters))

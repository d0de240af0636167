# Deterministic counters.  Tests assert on these (exact growth per layer), never on time.

cdef struct Counters:
    uint64_t nodes_interned     # new nodes entered into the intern table
    uint64_t unique_nodes       # nodes that never merge (inputs, nonce ops)
    uint64_t table_probes       # lookups in the intern table
    uint64_t table_hits         # lookups that found an existing node
    uint64_t nodes_released     # traced nodes freed
    uint64_t equality_calls     # pair comparisons made by structurally_equal
    uint64_t nodes_visited      # nodes visited by traversals (toposort, sweeps)
    uint64_t rules_applied      # JVP/VJP rule invocations by the traced sweeps
    uint64_t instructions_run   # Program instructions executed
    uint64_t eager_recorded     # eager tape entries recorded
    uint64_t eager_swept        # eager tape entries processed by backward()

cdef Counters _counters


def counters() -> dict:
    """Snapshot of the engine's deterministic counters (a dict of ints)."""
    return _counters


def reset_counters() -> None:
    """Set every counter to zero."""
    memset(&_counters, 0, sizeof(Counters))

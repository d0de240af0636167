# Iterative release of object chains.
#
# Dropping the last reference to the head of a 10^6-long chain would make CPython free it
# recursively (node -> inputs tuple -> node -> ...) and overflow the C stack.  A deallocator
# therefore moves the references it owns into ``_release_queue`` (append, then clear its own
# field) and calls ``_drain_release_queue``.  Only the outermost deallocation drains; nested
# ones just append, so the C stack depth stays constant whatever the chain length.

cdef void _drain_release_queue() noexcept:
    global _release_depth
    cdef object item
    if _release_depth:
        return
    _release_depth = 1
    while _release_queue:
        item = _release_queue.pop()
        item = None          # may free a whole subgraph; nested frees only append
    _release_depth = 0

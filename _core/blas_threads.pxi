# Switching the BLAS libraries' thread count around the engine's own calls.  Which count a
# call gets is the policy of tenpy_ad/blas.py; tenpy_ad/runtime.py finds the libraries
# (threadpoolctl) and holds the one BlasThreads of the process.  Here is the mechanism,
# compiled because an eager call pays it every time and a program run between steps.


@cython.final
cdef class BlasThreads:
    """The thread count of the loaded BLAS libraries during engine calls.

    The outermost :meth:`enter` (of all threads together) reads each library's count — the
    process's setting, the user's — and the matching :meth:`leave` restores it, so no code
    outside the engine sees a changed setting.  :meth:`switch` sets a count for what
    follows: ``n >= 1``, or ``0`` for the process's own setting; it does nothing when the
    count is already set.

    Libraries with a process-wide count and C entry points (pthreads OpenBLAS) are called
    directly through their addresses, with the GIL held, so calls from other threads cannot
    interleave.  Others go through Python callables (threadpoolctl's controller methods),
    which may release the GIL: then every operation holds ``lock``.
    """

    def __cinit__(self, list set_addresses, list get_addresses, list py_setters,
                  list py_getters):
        cdef Py_ssize_t i, n = len(set_addresses)
        if len(get_addresses) != n or len(py_getters) != len(py_setters):
            raise _errors["InternalError"]("BlasThreads: one getter per setter")
        self.set_fns = <set_threads_t*>calloc(n + 1, sizeof(set_threads_t))
        self.get_fns = <get_threads_t*>calloc(n + 1, sizeof(get_threads_t))
        self.saved = <int*>calloc(n + 1, sizeof(int))
        if self.set_fns == NULL or self.get_fns == NULL or self.saved == NULL:
            raise MemoryError()
        for i in range(n):
            self.set_fns[i] = <set_threads_t><size_t>set_addresses[i]
            self.get_fns[i] = <get_threads_t><size_t>get_addresses[i]
        self.n_direct = n
        self.py_setters = py_setters
        self.py_getters = py_getters
        self.saved_py = [None] * len(py_getters)
        self.lock = threading.Lock() if py_setters else None
        self.depth = 0
        self.current = 0

    def __dealloc__(self):
        free(self.set_fns)
        free(self.get_fns)
        free(self.saved)

    @property
    def n_libraries(self) -> int:
        return self.n_direct + len(self.py_setters)

    cdef int enter(self) except -1:
        cdef Py_ssize_t i
        if self.lock is not None:
            self.lock.acquire()
        try:
            if self.depth == 0:
                for i in range(self.n_direct):
                    self.saved[i] = self.get_fns[i]()
                for i in range(len(self.py_getters)):
                    self.saved_py[i] = self.py_getters[i]()
                self.current = 0
            self.depth += 1
        finally:
            if self.lock is not None:
                self.lock.release()
        return 0

    cdef int switch(self, int n) except -1:
        cdef Py_ssize_t i
        if n == self.current:
            return 0
        if self.lock is not None:
            self.lock.acquire()
        try:
            if self.depth > 0 and n != self.current:
                if n == 0:
                    self._restore()
                else:
                    for i in range(self.n_direct):
                        self.set_fns[i](n)
                    for setter in self.py_setters:
                        setter(n)
                self.current = n
        finally:
            if self.lock is not None:
                self.lock.release()
        return 0

    cdef int leave(self) except -1:
        if self.lock is not None:
            self.lock.acquire()
        try:
            self.depth -= 1
            if self.depth == 0 and self.current != 0:
                self._restore()
                self.current = 0
        finally:
            if self.lock is not None:
                self.lock.release()
        return 0

    cdef int _restore(self) except -1:
        cdef Py_ssize_t i
        for i in range(self.n_direct):
            self.set_fns[i](self.saved[i])
        for i in range(len(self.py_setters)):
            if self.saved_py[i] is not None:
                self.py_setters[i](self.saved_py[i])
        return 0

    def call(self, object threads, object fn, *args):
        """``fn(*args)`` with ``threads`` BLAS threads (None: as they are now; 0: the
        process's own setting; n: exactly n), the process's setting restored after the
        outermost engine call."""
        if threads is None or (self.depth == 0 and threads == 0):
            return fn(*args)
        self.enter()
        try:
            self.switch(threads)
            return fn(*args)
        finally:
            self.leave()

    def enter_call(self) -> None:
        """Start an engine call (a program run): see the class docstring."""
        self.enter()

    def switch_to(self, int n) -> None:
        """Set ``n`` threads (0: the process's setting) until the next switch."""
        self.switch(n)

    def leave_call(self) -> None:
        """End an engine call; the outermost restores the process's setting."""
        self.leave()

    def process_counts(self) -> list:
        """Each library's thread count now (outside engine calls: the process's setting)."""
        return ([self.get_fns[i]() for i in range(self.n_direct)]
                + [get() for get in self.py_getters])

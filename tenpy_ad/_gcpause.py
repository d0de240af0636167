"""Pause Python's cycle collector during the engine's big linear passes.

Graph nodes cannot form reference cycles and are not tracked by the collector, but the
bookkeeping lists and tuples of a pass over 10^6 nodes are: with the collector running,
compiling such a graph took 4x longer (one full collection after another).  Cycles that
user code creates meanwhile are collected as soon as the pass ends.
"""
import contextlib
import gc


@contextlib.contextmanager
def paused_gc():
    enabled = gc.isenabled()
    if enabled:
        gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

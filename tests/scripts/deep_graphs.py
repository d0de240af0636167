"""The 10^6-deep programs of ``tests/test_deep_graphs.py``, each run in its own interpreter
(``python deep_graphs.py RUN DEPTH``) so that a crash is a failure, not the end of the test
session.  They print ``stage <name>`` as they go and ``RESULT <json>`` at the end.

* ``traced``   a sin chain built, differentiated, compiled, run and freed;
* ``forward``  a chain only built and dropped while its placeholder stays alive;
* ``eager``    a sin tape: forward, backward and free (tracemalloc), then a tape of the
               same depth dropped without a backward pass.
"""
import gc
import json
import sys
import tracemalloc

import numpy as np

import tenpy_ad as tp
from tenpy_ad.introspection import table_sizes


def stage(name: str) -> None:
    print("stage", name, flush=True)


def result(**values) -> None:
    print("RESULT " + json.dumps(values), flush=True)


def layers(y, layer, depth: int):
    """``layer`` applied ``depth`` times to ``y``."""
    for _ in range(depth):
        y = layer(y)
    return y


def traced(depth: int) -> None:
    gc.collect()
    before = table_sizes()
    x = tp.input((2,), name="x")
    y = layers(x, tp.sin, depth)
    stage("built")
    loss = y.sum()
    g = tp.ad.grad(loss, x)
    stage("differentiated")
    program = tp.compile([loss, g], inputs=[x])
    n_nodes = program.n_nodes
    stage("compiled")
    value, grad = program(np.array([0.3, 1.2]))
    stage("ran")
    del program
    stage("freed the program")
    del g
    stage("freed the gradient graph")
    del loss
    stage("freed the loss")
    del y
    stage("freed the chain")
    del x
    gc.collect()
    result(value=float(value), grad=[float(v) for v in grad], n_nodes=n_nodes,
           before=before, after=table_sizes())


def forward(depth: int) -> None:
    gc.collect()
    before = table_sizes()
    x = tp.input((2,), name="x")
    y = layers(x, lambda v: v * 0.999, depth)
    stage("built")
    del y                         # only the chain goes; the placeholder stays alive
    stage("freed the chain")
    del x
    gc.collect()
    result(before=before, after=table_sizes())


def eager(depth: int) -> None:
    gc.collect()
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    b = tp.tensor(np.array([0.3, 1.2]), requires_grad=True)
    y = layers(b, tp.sin, depth)
    loss = y.sum()
    held = tracemalloc.get_traced_memory()[0] - start
    stage("forward")
    loss.backward()
    stage("backward")
    grad = [float(v) for v in np.asarray(b.grad.numpy())]
    value = float(loss.item())
    del loss, y, b
    gc.collect()
    end = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    stage("freed")
    c = tp.tensor(np.array([0.3, 1.2]), requires_grad=True)
    z = layers(c, tp.sin, depth)          # a tape dropped without a backward pass
    del z, c
    gc.collect()
    stage("freed an unused tape")
    result(value=value, grad=grad, held=held, end=end)


RUNS = {"traced": traced, "forward": forward, "eager": eager}

if __name__ == "__main__":
    RUNS[sys.argv[1]](int(sys.argv[2]))

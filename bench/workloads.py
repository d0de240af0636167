"""The gated workloads: one :class:`Workload` entry each in :data:`WORKLOADS`.

A workload's ``prepare(size)`` does the untimed setup (building the graph to transform,
compiling the program to run) and returns the callable that is timed, plus what to record
in ``extra_info`` (op counts, depth or steps).  Sizes are chosen for >= ~20 ms of CPU per
call on the project's machine class, so that a round is long against the machine's noise.

``TENPY_AD_BENCH_SCALE`` (default 1.0) multiplies every size: the gate's self-test runs
the compare with 1.5 and expects it to flag the benchmarks as regressed.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Callable

import tenpy_ad as tp
from tenpy_ad.introspection import graph_nodes, table_sizes
from tenpy_ad.models.chains import build_chain, chain, start_value
from tenpy_ad.models.trg import ks_rule, trg_lnz

SCALE_VARIABLE = "TENPY_AD_BENCH_SCALE"
TRG_CHI = 16

Prepared = tuple[Callable[[], object], dict]


@dataclass(frozen=True)
class Workload:
    """One gated benchmark: ``prepare(size)`` -> (timed callable, extra_info)."""
    name: str
    group: str
    size: int                                # depth or steps at scale 1
    prepare: Callable[[int], Prepared]

    def scaled_size(self) -> int:
        """``size`` times ``TENPY_AD_BENCH_SCALE``, at least 1."""
        return max(1, round(self.size * bench_scale()))


def bench_scale() -> float:
    """``TENPY_AD_BENCH_SCALE`` as a positive float (1.0 when unset)."""
    text = os.environ.get(SCALE_VARIABLE, "1.0")
    try:
        scale = float(text)
    except ValueError:
        scale = math.nan
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"{SCALE_VARIABLE} must be a positive number, got {text!r}")
    return scale


def traced_grad(kind: str) -> Callable[[int], Prepared]:
    """``tp.ad.grad`` of the traced chain ``kind`` of the given depth."""
    def prepare(depth: int) -> Prepared:
        x, loss = build_chain(kind, depth)
        value_ops = len(graph_nodes([loss]))
        before = table_sizes()["metadata_rows"]
        g = tp.ad.grad(loss, x)
        derivative_ops = table_sizes()["metadata_rows"] - before
        del g
        info = {"depth": depth, "value_ops": value_ops, "derivative_ops": derivative_ops}
        return (lambda: tp.ad.grad(loss, x)), info
    return prepare


def eager_forward_backward(kind: str) -> Callable[[int], Prepared]:
    """Eager forward of the chain ``kind`` and ``.backward()`` through it."""
    def prepare(depth: int) -> Prepared:
        start = start_value(kind)

        def forward_backward():
            b = tp.tensor(start, requires_grad=True)
            chain(kind, b, depth).sum().backward()
            return b.grad

        tp.reset_counters()
        forward_backward()
        counts = tp.counters()
        info = {"depth": depth, "tape_entries": counts["eager_recorded"],
                "swept": counts["eager_swept"]}
        return forward_backward, info
    return prepare


def _trg_graph(steps: int):
    beta = tp.input((), name="beta")
    lnz = trg_lnz(beta, TRG_CHI, steps, ks=ks_rule(TRG_CHI, steps))
    return beta, lnz, tp.ad.grad(lnz, beta)


def trg_build_grad_compile(steps: int) -> Prepared:
    """TRG (chi = 16): build the lnZ/N graph, ``tp.ad.grad`` it, compile both."""
    def build_grad_compile():
        beta, lnz, g = _trg_graph(steps)
        return tp.compile([lnz, g], inputs=[beta])

    beta, lnz, g = _trg_graph(steps)     # also caches the concrete ks pass, not timed
    info = {"steps": steps, "value_ops": len(graph_nodes([lnz])),
            "total_ops": len(graph_nodes([lnz, g]))}
    return build_grad_compile, info


def trg_run(steps: int) -> Prepared:
    """TRG (chi = 16): one run of the compiled value+grad program at beta = 0.3."""
    beta, lnz, g = _trg_graph(steps)
    program = tp.compile([lnz, g], inputs=[beta])
    return (lambda: program(0.3)), {"steps": steps, "instructions": program.n_instructions}


def ctmrg_implicit_grad(chi: int) -> Prepared:
    """CTMRG at beta = 0.6: the value and the implicit derivative through
    ``tp.fixed_point``, eager, from a converged boundary (the NumPy pass is setup)."""
    from tenpy_ad.models import ctmrg
    boundary = ctmrg.converge(0.6, chi)

    def value_and_grad():
        b = tp.tensor(0.6, requires_grad=True)
        ctmrg.ctmrg_lnz(b, chi, boundary=boundary).backward()
        return b.grad

    return value_and_grad, {"chi": chi, "kept": boundary.kept}


def partial_svd_grad(n: int) -> Prepared:
    """``tp.linalg.svds`` (k = 16 of an n x n matrix with a decaying spectrum): the
    leading triplets and the exact truncated derivative, eager."""
    import numpy as np
    rng = np.random.default_rng(0)
    q1, _ = np.linalg.qr(rng.standard_normal((n, n)))
    q2, _ = np.linalg.qr(rng.standard_normal((n, n)))
    a = (q1 * np.exp(-0.05 * np.arange(n))) @ q2.T
    weights = rng.standard_normal(16)

    def value_and_grad():
        x = tp.tensor(a, requires_grad=True)
        u, s, vh = tp.linalg.svds(x, 16, method="krylov")
        ((s * weights).sum() + (u[:3] ** 2).sum()).backward()
        return x.grad

    return value_and_grad, {"n": n, "k": 16}


def small_op_grad(steps: int) -> Prepared:
    """A compiled program: value + gradient of ``small_ops.py``'s power iteration (D = 8),
    thousands of instructions on tiny arrays (the engine's per-operation cost)."""
    import tenpy_ad.numpy as tnp
    from small_ops import power_iteration_loss, problem
    a0 = problem(8)
    a = tp.input(a0.shape, name="a")
    loss = power_iteration_loss(a, steps, tnp)
    program = tp.compile([loss, tp.ad.grad(loss, a)], inputs=[a])
    return (lambda: program(a0)), {"steps": steps, "instructions": program.n_instructions}


WORKLOADS = [
    Workload("grad-mul", "traced-grad", 10000, traced_grad("mul")),
    Workload("grad-cube", "traced-grad", 6000, traced_grad("cube")),
    Workload("grad-svd3", "traced-grad", 300, traced_grad("svd3")),
    Workload("grad-qr2", "traced-grad", 600, traced_grad("qr2")),
    Workload("eager-mul", "eager", 4000, eager_forward_backward("mul")),
    Workload("eager-cube", "eager", 2000, eager_forward_backward("cube")),
    Workload("eager-svd3", "eager", 500, eager_forward_backward("svd3")),
    Workload("trg-build-grad-compile", "trg", 30, trg_build_grad_compile),
    Workload("trg-run", "trg", 8, trg_run),
    Workload("ctmrg-implicit-grad", "models", 16, ctmrg_implicit_grad),
    Workload("partial-svd-grad", "models", 300, partial_svd_grad),
    Workload("small-op-grad", "models", 600, small_op_grad),
]

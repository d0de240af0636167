"""TRG (chi = 16): whole-graph build + grad + compile, and the compiled value+grad run."""
import pytest

import tenpy_ad as tp
from tenpy_ad.introspection import graph_nodes
from tenpy_ad.models.trg import ks_rule, trg_lnz


def _graph(steps):
    beta = tp.input((), name="beta")
    lnz = trg_lnz(beta, 16, steps, ks=ks_rule(16, steps))
    g = tp.ad.grad(lnz, beta)
    return beta, lnz, g


@pytest.mark.parametrize("steps", [10, 20])
def test_trg_build_grad_compile(benchmark, core_info, steps):
    benchmark.group = "trg-transform"
    ks_rule(16, steps)                     # the concrete ks pass is cached, not timed

    def build_grad_compile():
        beta, lnz, g = _graph(steps)
        return tp.compile([lnz, g], inputs=[beta])

    beta, lnz, g = _graph(steps)
    benchmark(build_grad_compile)
    benchmark.extra_info.update(steps=steps, value_ops=len(graph_nodes([lnz])),
                                total_ops=len(graph_nodes([lnz, g])))


@pytest.mark.parametrize("steps", [6, 20])
def test_trg_compiled_run(benchmark, core_info, steps):
    benchmark.group = "trg-run"
    beta, lnz, g = _graph(steps)
    program = tp.compile([lnz, g], inputs=[beta])
    benchmark(program, 0.3)
    benchmark.extra_info.update(steps=steps, instructions=program.n_instructions)

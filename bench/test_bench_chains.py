"""Traced grad transform on the benchmark chains (tenpy_ad.models.chains): one group per
chain kind."""
import pytest

import tenpy_ad as tp
from tenpy_ad.introspection import graph_nodes, table_sizes
from tenpy_ad.models.chains import build_chain

CASES = [("mul", 400), ("mul", 1600), ("cube", 400), ("cube", 1600), ("svd1", 200),
         ("svd2", 200), ("svd3", 200), ("qr2", 200)]


@pytest.mark.parametrize("kind,depth", CASES, ids=[f"{k}-{d}" for k, d in CASES])
def test_grad_transform(benchmark, core_info, kind, depth):
    benchmark.group = f"grad-{kind}"
    x, loss = build_chain(kind, depth)
    value_ops = len(graph_nodes([loss]))

    def transform():
        return tp.ad.grad(loss, x)

    before = table_sizes()["metadata_rows"]
    g = transform()
    derivative_ops = table_sizes()["metadata_rows"] - before
    del g
    benchmark(transform)
    benchmark.extra_info.update(depth=depth, value_ops=value_ops, derivative_ops=derivative_ops)

"""Traced grad transform on the DESIGN.md §5 chains: one group per chain kind."""
import pytest

import tenpy_ad as tp
from tenpy_ad._compiled import _core
from tenpy_ad.models.chains import build_chain

CASES = [("mul", 400), ("mul", 1600), ("cube", 400), ("cube", 1600), ("svd1", 200),
         ("svd2", 200), ("svd3", 200), ("qr2", 200)]


@pytest.mark.parametrize("kind,depth", CASES, ids=[f"{k}-{d}" for k, d in CASES])
def test_grad_transform(benchmark, core_info, kind, depth):
    benchmark.group = f"grad-{kind}"
    x, loss = build_chain(kind, depth)
    value_ops = len(_core.toposort([loss]))

    def transform():
        return tp.ad.grad(loss, x)

    before = _core.table_size()
    g = transform()
    derivative_ops = _core.table_size() - before
    del g
    benchmark(transform)
    benchmark.extra_info.update(depth=depth, value_ops=value_ops, derivative_ops=derivative_ops)

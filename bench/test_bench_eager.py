"""Eager forward + backward on the chains: one group per chain kind."""
import pytest

import tenpy_ad as tp
from tenpy_ad.models.chains import chain, start_value

CASES = [("mul", 400), ("cube", 400), ("svd3", 400)]


@pytest.mark.parametrize("kind,depth", CASES, ids=[f"{k}-{d}" for k, d in CASES])
def test_eager_forward_backward(benchmark, core_info, kind, depth):
    benchmark.group = f"eager-{kind}"
    start = start_value(kind)

    def forward_backward():
        b = tp.tensor(start, requires_grad=True)
        chain(kind, b, depth).sum().backward()
        return b.grad

    tp.reset_counters()
    forward_backward()
    counts = tp.counters()
    benchmark(forward_backward)
    benchmark.extra_info.update(depth=depth, tape_entries=counts["eager_recorded"],
                                swept=counts["eager_swept"])

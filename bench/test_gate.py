"""The gated benchmarks: every entry of ``workloads.WORKLOADS`` in calibrated rounds.

The selected workloads are prepared and measured together, round-robin, when the first
of them runs (``calibration.measure_round_robin``); each test then reports its own rounds
to pytest-benchmark as calibrated times, so the documented compare (``bench/README.md``,
"Regression gate") gates on ratios measured in one session.  With ``--benchmark-disable``
each test runs its workload once, untimed (CI's smoke run).
"""
import pytest

from calibration import CLOCK, measure_round_robin, report
from workloads import WORKLOADS, Workload, bench_scale


class GateSession:
    """The selected workloads, prepared and measured round-robin on first use."""

    def __init__(self, workloads: list[Workload]):
        self.workloads = workloads
        self._measured = None                  # name -> (Rounds, extra_info)

    def measured(self, workload: Workload):
        if self._measured is None:
            prepared = {w.name: w.prepare(w.scaled_size()) for w in self.workloads}
            rounds = measure_round_robin({name: timed for name, (timed, _) in
                                          prepared.items()})
            self._measured = {name: (rounds[name], info) for name, (_, info) in
                              prepared.items()}
        return self._measured[workload.name]


@pytest.fixture(scope="session")
def gate_session(request):
    selected = [item.callspec.params["workload"] for item in request.session.items
                if getattr(item, "function", None) is test_gate]
    return GateSession(selected)


@pytest.mark.benchmark(timer=CLOCK)
@pytest.mark.parametrize("workload", WORKLOADS, ids=[w.name for w in WORKLOADS])
def test_gate(benchmark, core_info, gate_session, workload):
    benchmark.group = workload.group
    if benchmark.disabled:
        timed, info = workload.prepare(workload.scaled_size())
        benchmark.pedantic(timed)              # one untimed call
    else:
        rounds, info = gate_session.measured(workload)
        report(benchmark, rounds)
    benchmark.extra_info.update(info, scale=bench_scale())

"""The gate's plumbing: the scale knob, the calibrated clock and the self-test's drift
table (values only; no timing is asserted)."""
import pytest

import calibration
import gate_selftest
from workloads import SCALE_VARIABLE, WORKLOADS, bench_scale


def test_workload_names_are_unique():
    names = [w.name for w in WORKLOADS]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("text", ["fast", "0", "-1", "nan", "inf"])
def test_scale_must_be_a_positive_number(monkeypatch, text):
    monkeypatch.setenv(SCALE_VARIABLE, text)
    with pytest.raises(ValueError, match=SCALE_VARIABLE):
        bench_scale()


def test_scale_multiplies_every_size(monkeypatch):
    monkeypatch.delenv(SCALE_VARIABLE, raising=False)
    assert [w.scaled_size() for w in WORKLOADS] == [w.size for w in WORKLOADS]
    monkeypatch.setenv(SCALE_VARIABLE, "1.5")
    assert [w.scaled_size() for w in WORKLOADS] == [round(1.5 * w.size) for w in WORKLOADS]


def test_rounds_visit_every_workload_in_turn(monkeypatch):
    seconds = {calibration.calibration: 0.004, "a": 0.010, "b": 0.002}
    order = []
    monkeypatch.setattr(calibration, "cpu_seconds",
                        lambda run: order.append(run) or seconds[run])
    measured = calibration.measure_round_robin({"a": "a", "b": "b"})
    one_round = [calibration.calibration, "a", calibration.calibration, "b"]
    assert order == one_round * (calibration.WARMUP_ROUNDS + calibration.ROUNDS)
    assert measured["a"].calibrated_seconds() == pytest.approx(
        [2.5 * calibration.UNIT_S] * calibration.ROUNDS)
    assert measured["b"].extra_info() == {"workload_cpu_ms": pytest.approx(2.0),
                                          "calibration_cpu_ms": pytest.approx(4.0)}


def test_the_report_replays_calibrated_times_through_the_clock():
    rounds = calibration.Rounds()
    rounds.workload_s, rounds.calibration_s = [0.01, 0.03], [0.02, 0.02]
    seen = []

    class FakeBenchmark:
        extra_info = {}

        def pedantic(self, target, rounds):
            for _ in range(rounds):
                start = calibration.CLOCK()
                target()
                seen.append(calibration.CLOCK() - start)

    calibration.report(FakeBenchmark(), rounds)
    assert seen == pytest.approx([0.5 * calibration.UNIT_S, 1.5 * calibration.UNIT_S])


def _session(**medians):
    return {name: {"stats": {"median": m, "min": m}, "extra_info": {"workload_cpu_ms": m}}
            for name, m in medians.items()}


def test_drift_table_reports_largest_drift_and_flagged_fraction(capsys):
    sessions = [_session(a=1.0, b=2.0), _session(a=1.1, b=1.9), _session(a=0.95, b=2.0),
                _session(a=1.6, b=2.2)]          # baseline, two compares, scaled run
    largest, flagged = gate_selftest.drift_table(sessions, threshold=20)
    assert largest == pytest.approx(10.0)
    assert flagged == 0.5                        # a: +60 % flagged, b: +10 % not
    assert "run2" in capsys.readouterr().out

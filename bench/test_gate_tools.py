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


def test_a_round_advances_the_clock_by_the_ratio(monkeypatch):
    seconds = {calibration.calibration: 0.004, "workload": 0.010}
    monkeypatch.setattr(calibration, "cpu_seconds", lambda run: seconds[run])
    rounds = calibration.CalibratedRounds("workload")
    before = calibration.CLOCK()
    rounds()
    assert calibration.CLOCK() - before == pytest.approx(2.5 * calibration.UNIT_S)
    assert rounds.extra_info() == {"workload_cpu_ms": pytest.approx(10.0),
                                   "calibration_cpu_ms": pytest.approx(4.0)}


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

"""``python -m tenpy_ad ipeps``: its JSON object (with the magnetisation and the
correlation lengths for either cell), its errors (one line, exit code 2 before
any work, absurd sizes with the memory they would need) and its plot."""
import json

import pytest

from tenpy_ad.cli import main


def test_json_holds_the_result_the_settings_and_the_references(capsys):
    assert main(["ipeps", "--chi", "8", "--maxiter", "3", "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    for key in ("energy", "iterations", "evaluations", "seconds_per_evaluation",
                "total_seconds", "settings", "references", "energies"):
        assert key in report
    assert report["iterations"] == 3 == len(report["energies"])
    assert report["settings"] == {"model": "heisenberg", "D": 2, "chi": 8, "unit_cell": "1x1",
                                  "seed": 0, "tol": 1e-10, "maxiter": 3}
    assert report["references"]["d2_c4v_optimum"] == -0.6602310934799582
    assert report["references"]["qmc"] == -0.669437
    assert -0.67 < report["energy"] < -0.5


def test_the_2x2_cell_runs_from_the_neel_start(capsys):
    """Four tensors, unrotated bonds, from the Neel cell of a random tensor: the iterations
    lower the energy.  (Two only: a longer run from a random start meets trial points whose
    environment converges slowly, a minute an iteration.)"""
    assert main(["ipeps", "--unit-cell", "2x2", "--chi", "8", "--maxiter", "2", "--json",
                 "--quiet"]) == 0
    cell = json.loads(capsys.readouterr().out)
    assert cell["settings"]["unit_cell"] == "2x2" and cell["iterations"] == 2
    assert -0.67 < cell["energy"] == cell["energies"][-1] < cell["energies"][0] < 0.0


def test_j1j2_runs_on_the_2x2_cell_and_reports_j2(capsys):
    """The next-nearest terms from the plaquettes, four random tensors: the iterations
    lower the energy, and the settings carry j2."""
    assert main(["ipeps", "--model", "j1j2", "--j2", "0.5", "--unit-cell", "2x2", "--chi", "8",
                 "--maxiter", "2", "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["settings"]["model"] == "j1j2" and report["settings"]["j2"] == 0.5
    assert "references" not in report                 # the Heisenberg values do not apply
    assert report["energy"] == report["energies"][-1] < report["energies"][0]


@pytest.mark.parametrize("cell, sites", [("1x1", (1, 1)), ("2x2", (2, 2))])
def test_json_reports_the_magnetisation_and_the_correlation_lengths(capsys, cell, sites):
    """The same keys for both cells: |<S>| per site (a list of columns; spin-1/2, so at
    most 1/2) and its average, and the two correlation lengths (one C4v length both ways
    for 1x1).  Single iterations: the state is rough, the report's shape is the point."""
    assert main(["ipeps", "--unit-cell", cell, "--chi", "8", "--maxiter", "1", "--json",
                 "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    moments = report["magnetization"]["sites"]
    assert (len(moments), len(moments[0])) == sites
    flat = [m for column in moments for m in column]
    assert all(0.0 < m <= 0.5 + 1e-12 for m in flat)
    assert report["magnetization"]["average"] == pytest.approx(sum(flat) / len(flat),
                                                               abs=1e-15)
    lengths = report["correlation_lengths"]
    assert set(lengths) == {"horizontal", "vertical"}
    assert all(value > 0.0 for value in lengths.values())
    if cell == "1x1":
        assert lengths["horizontal"] == lengths["vertical"]


@pytest.mark.parametrize("argv, message", [
    (["--D", "0"], "--D"),
    (["--unit-cell", "3x3"], "only 1x1 (a C4v-symmetric single site) and 2x2"),
    (["--chi", "3"], "below D^2"),
    (["--D", "8", "--chi", "512"], "GiB"),
    (["--model", "hubbard"], "--model"),
    (["--model", "j1j2", "--j2", "0.5"], "--model j1j2 needs --unit-cell 2x2"),
])
def test_bad_arguments_end_with_one_line_and_exit_code_2(capsys, argv, message):
    assert main(["ipeps", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error:") and message in err


def test_plot_draws_the_energy_per_iteration(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "ipeps.png"
    assert main(["ipeps", "--chi", "8", "--maxiter", "4", "--plot", str(path)]) == 0
    assert path.stat().st_size > 10_000
    out, err = capsys.readouterr()
    assert "energy per site" in out and "iteration    4" in err      # progress on stderr

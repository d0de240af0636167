"""``python -m tenpy_ad ipeps``: its JSON object (with the magnetisation and the
correlation lengths for either cell), its errors (one line, exit code 2 before
any work, absurd sizes with the memory they would need) and its plot."""
import json

import numpy as np
import pytest

from tenpy_ad.cli import ipeps, main
from tenpy_ad.models import peps, peps_cell


def test_json_holds_the_result_the_settings_and_the_references(capsys):
    assert main(["ipeps", "--chi", "8", "--maxiter", "3", "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    for key in ("energy", "iterations", "evaluations", "seconds_per_evaluation",
                "total_seconds", "settings", "references", "energies"):
        assert key in report
    assert report["iterations"] == 3 == len(report["energies"])
    assert report["settings"] == {"model": "heisenberg", "D": 2, "chi": 8, "unit_cell": "1x1",
                                  "dtype": "float64", "ansatz": "c4v", "seed": 0,
                                  "tol": 1e-10, "maxiter": 3}
    assert report["references"]["d2_c4v_optimum"] == -0.6602310934799582
    assert report["references"]["qmc"] == -0.669437
    assert -0.67 < report["energy"] < -0.5


def test_the_2x2_cell_runs_from_four_random_tensors(capsys, monkeypatch):
    """Four independent seeded tensors, unrotated bonds: the iterations lower the energy."""
    seen = _spy_on_the_cell_optimisation(monkeypatch)
    assert main(["ipeps", "--unit-cell", "2x2", "--chi", "8", "--maxiter", "2", "--json",
                 "--quiet"]) == 0
    cell = json.loads(capsys.readouterr().out)
    assert cell["settings"]["unit_cell"] == "2x2" and cell["iterations"] == 2
    assert -0.67 < cell["energy"] == cell["energies"][-1] < cell["energies"][0] < 0.0
    np.testing.assert_array_equal(np.asarray(seen["start"]),
                                  np.asarray(peps_cell.random_cell(2, 2, 2, 2, 0, float)))


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
    (["--model", "j1j2", "--dtype", "complex"], "the general complex 1x1 site too"),
    (["--dtype", "float32"], "--dtype: invalid choice: 'float32'"),
    (["--D", "8", "--chi", "512", "--dtype", "complex"], "--dtype complex128 would need"),
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


def _spy_on_the_cell_optimisation(monkeypatch) -> dict:
    """Record the start and the result of peps_cell.optimize when the command calls it
    (the JSON has no tensors)."""
    seen, original = {}, peps_cell.optimize

    def spy(h_bond, *args, tensors=None, **kwargs):
        seen["start"], seen["h_bond"] = tensors, h_bond
        seen["result"] = original(h_bond, *args, tensors=tensors, **kwargs)
        return seen["result"]
    monkeypatch.setattr(peps_cell, "optimize", spy)
    return seen


@pytest.mark.parametrize("cell, sites", [("1x1", (1, 1)), ("2x2", (2, 2))])
def test_complex_runs_optimise_a_general_complex_cell(capsys, monkeypatch, cell, sites):
    """--dtype complex (the alias): peps_cell's general cell, from genuinely complex
    tensors (a real start would stay real), with the rotated bond for 1x1 only; every
    iteration lowers the real energy from the start's, and the optimum is complex."""
    seen = _spy_on_the_cell_optimisation(monkeypatch)
    assert main(["ipeps", "--unit-cell", cell, "--dtype", "complex", "--chi", "8",
                 "--maxiter", "3", "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["settings"]["dtype"] == "complex128"
    assert report["settings"]["ansatz"] == "general"
    rotated = peps.heisenberg(rotated=cell == "1x1")
    np.testing.assert_array_equal(seen["h_bond"], rotated)
    start = seen["start"]
    assert (len(start), len(start[0])) == sites
    assert all(np.abs(a.imag).max() > 0.1 for column in start for a in column)
    start_energy = float(peps_cell.cell_energy(start, 8, rotated)[0])
    energies = [start_energy] + report["energies"]
    assert all(isinstance(e, float) for e in energies)
    assert all(b < a for a, b in zip(energies, energies[1:])), energies
    assert report["energy"] == energies[-1] < start_energy - 0.05
    tensors = [a for column in seen["result"].x for a in column]
    assert len(tensors) == sites[0] * sites[1]
    assert all(a.dtype == np.complex128 and np.abs(a.imag).max() > 0.1 for a in tensors)
    moments = report["magnetization"]["sites"]
    assert (len(moments), len(moments[0])) == sites
    assert all(0.0 < m <= 0.5 + 1e-12 for column in moments for m in column)
    assert all(value > 0.0 for value in report["correlation_lengths"].values())


def test_the_2x2_complex_start_is_the_neel_cell_of_the_1x1_start(capsys, monkeypatch):
    """The same seed starts both complex runs from the same state: the 2x2 Neel cell
    (unrotated bonds) of the 1x1 tensor (rotated bond) -- equal energies, to the
    truncation at chi = 8 (3.5e-7 measured)."""
    seen = _spy_on_the_cell_optimisation(monkeypatch)
    starts = []
    for cell in ("1x1", "2x2"):
        assert main(["ipeps", "--unit-cell", cell, "--dtype", "complex128", "--chi", "8",
                     "--maxiter", "1", "--json", "--quiet"]) == 0
        capsys.readouterr()
        starts.append((seen["start"], seen["h_bond"]))
    (single, rotated), (neel, unrotated) = starts
    np.testing.assert_array_equal(neel[0][0], single[0][0])
    assert float(peps_cell.cell_energy(neel, 8, unrotated)[0]) == pytest.approx(
        float(peps_cell.cell_energy(single, 8, rotated)[0]), abs=1e-5)


def test_the_memory_estimate_doubles_for_complex():
    for bond, chi, plaquette in [(2, 16, False), (3, 32, True)]:
        real = ipeps.planned_bytes(bond, chi, plaquette=plaquette)
        assert ipeps.planned_bytes(bond, chi, plaquette=plaquette,
                                   itemsize=ipeps.ITEMSIZE["complex128"]) == 2 * real

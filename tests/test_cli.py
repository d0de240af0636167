"""The command line ``python -m tenpy_ad [trg|ctmrg|blowup]``.

* help: the top level shows the main job's options, in plain text;
* every bad argument ends the command before any work with one line ``error: ...`` and
  exit code 2; a failure of the work with one line and exit code 1; never a traceback;
* results: one JSON style (a list of flat objects) for every sub-command, equal to the
  models' own values; compiled and eager modes, ``--svd``, workers agree;
* the text tables and cost lines, and ``--plot`` end to end.

Most runs call :func:`tenpy_ad.cli.main` in this process (with BLAS threads restored
afterwards); a few run ``python -m tenpy_ad`` to see exactly what a user sees.
"""
import importlib.util
import json
import subprocess
import sys

import pytest

from tenpy_ad.cli import main
from tenpy_ad.errors import ConvergenceError
from tenpy_ad.models import ctmrg, onsager
from tenpy_ad.models.trg import CompiledTRG, observables
from tenpy_ad.runtime import blas_threads

SMALL_TRG = ["--chi", "8", "--steps", "6"]
PNG = b"\x89PNG\r\n\x1a\n"


def run(capsys, *argv):
    """``main(argv)`` here: ``(exit code, stdout, stderr)``."""
    with blas_threads(1):                       # main() sets it; restored afterwards
        code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_python(*argv, prelude=""):
    """``python -m tenpy_ad argv`` in a fresh interpreter (after ``prelude``)."""
    code = (f"{prelude}\nimport runpy, sys\nsys.argv = ['tenpy_ad'] + {list(argv)!r}\n"
            "runpy.run_module('tenpy_ad', run_name='__main__')")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)


def strict_json(text: str):
    """Parse as strict JSON (no NaN/Infinity)."""
    def refuse(constant):
        raise AssertionError(f"not strict JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


def assert_one_error_line(err: str, fragment: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and fragment in lines[0], err
    assert "Traceback" not in err


@pytest.fixture
def no_work(monkeypatch):
    """Makes starting any work fail the test: bad arguments must stop before it."""
    import tenpy_ad.blowup
    import tenpy_ad.cli.ctmrg
    import tenpy_ad.cli.trg

    def started(*args, **kwargs):
        raise AssertionError("work started before the arguments were checked")
    for module in (tenpy_ad.cli.trg, tenpy_ad.cli.ctmrg):
        monkeypatch.setattr(module, "prepare_process", started)
    monkeypatch.setattr(tenpy_ad.blowup, "measure", started)


# ------------------------------------------------------------------ help

def test_top_level_help_shows_the_main_job_options_in_plain_text():
    done = subprocess.run([sys.executable, "-m", "tenpy_ad", "--help"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == ""
    for option in ("--beta", "--betas", "--chi", "--steps", "--svd", "--mode", "--checkpoint",
                   "--json", "--plot", "--threads", "--workers", "ctmrg", "blowup"):
        assert option in done.stdout, option
    assert "``" not in done.stdout and ":func:" not in done.stdout


@pytest.mark.parametrize("command", ["trg", "ctmrg", "blowup"])
def test_every_sub_command_has_plain_help(capsys, command):
    code, out, err = run(capsys, command, "--help")
    assert code == 0 and err == ""
    assert f"python -m tenpy_ad {command}" in out and "--json" in out and "--plot" in out
    assert "``" not in out and ":mod:" not in out and ":func:" not in out


# ------------------------------------------------------------------ bad arguments: exit 2

#: the image formats come from matplotlib: without it, --plot says it is missing first
NEEDS_MATPLOTLIB = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                                      reason="the formats of --plot come from matplotlib")

BAD = [
    (["--beta", "1e6"], "argument --beta"), (["--beta", "nan"], "argument --beta"),
    (["--beta", "inf"], "argument --beta"), (["--beta", "-1"], "argument --beta"),
    (["--beta", "0"], "argument --beta"), (["--beta", "abc"], "expected a number"),
    (["--chi", "1"], "argument --chi"), (["--chi", "2.5"], "expected an integer"),
    (["--steps", "0"], "argument --steps"), (["--steps", "1001"], "argument --steps"),
    (["--betas", "0.3:0.4"], "START:STOP:NUM"), (["--betas", "0.3:0.4:0"], "argument --betas"),
    (["--betas", "0.3:abc:3"], "argument --betas"), (["--betas", "0.3:20:3"], "(0, 10]"),
    (["--workers", "0"], "argument --workers"), (["--workers", "-1"], "argument --workers"),
    (["--workers", "2"], "needs --betas"), (["--threads", "0"], "argument --threads"),
    (["--svd", "half"], "argument --svd"), (["--mode", "lazy"], "argument --mode"),
    (["--beta", "0.3", "--betas", "0.3:0.4:2"], "not allowed with"),
    (["--plot", "/nonexistent/dir/x.png"], "does not exist"),
    pytest.param(["--plot", "{tmp}/x.xyz"], "suffix", marks=NEEDS_MATPLOTLIB),
    pytest.param(["--plot", "{tmp}/x"], "suffix", marks=NEEDS_MATPLOTLIB),
    (["--plot", "{tmp}"], "is a folder"), (["--bogus"], "unrecognized arguments"),
    (["nonsense"], "unknown sub-command"), (["trg", "--chi", "0"], "argument --chi"),
    (["ctmrg", "--chi", "1"], "argument --chi"), (["ctmrg", "--beta", "0"], "argument --beta"),
    (["ctmrg", "--beta", "11"], "argument --beta"),
    (["ctmrg", "--workers", "0"], "argument --workers"),
    (["ctmrg", "--workers", "2"], "needs --betas"),
    (["ctmrg", "--plot", "/nonexistent/dir/x.png"], "does not exist"),
    (["blowup", "--repeats", "0"], "argument --repeats"),
    (["blowup", "--max-depth", "0"], "argument --max-depth"),
    (["blowup", "--max-depth", "-5"], "argument --max-depth"),
    (["blowup", "--kind", "nope"], "argument --kind"),
    (["blowup", "--plot", "/nonexistent/dir/x.png"], "does not exist"),
]


def _case_id(case) -> str:
    return " ".join((case.values if hasattr(case, "values") else case)[0])


@pytest.mark.parametrize("argv,fragment", BAD, ids=[_case_id(case) for case in BAD])
def test_bad_arguments_stop_before_any_work(capsys, no_work, tmp_path, argv, fragment):
    code, out, err = run(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2
    assert out == ""
    assert_one_error_line(err, fragment)
    assert list(tmp_path.iterdir()) == []        # probing the plot path leaves nothing


def test_bad_argument_from_the_shell_is_one_line():
    done = run_python("--beta", "1e6")
    assert done.returncode == 2 and done.stdout == ""
    assert_one_error_line(done.stderr, "beta must be a number in (0, 10]")


def test_plot_without_matplotlib_stops_before_any_work(tmp_path):
    path = tmp_path / "trg.png"
    done = run_python("--beta", "0.3", *SMALL_TRG, "--plot", str(path),
                      prelude="import sys; sys.modules['matplotlib'] = None")
    assert done.returncode == 2 and done.stdout == ""
    assert_one_error_line(done.stderr, "matplotlib")
    assert not path.exists()


def test_unwritable_plot_path_stops_before_any_work(capsys, no_work, tmp_path):
    path = tmp_path / "missing" / "trg.png"
    code, _, err = run(capsys, "ctmrg", "--plot", str(path))
    assert code == 2
    assert_one_error_line(err, "does not exist")


# ------------------------------------------------------------------ failures: exit 1

def test_convergence_failure_is_one_line_with_a_hint(capsys, monkeypatch):
    def fails(*args, **kwargs):
        raise ConvergenceError("fixed_point: no convergence after 10 iterations",
                               residual=1e-3, iterations=10)
    monkeypatch.setattr(ctmrg, "point", fails)
    code, out, err = run(capsys, "ctmrg", "--beta", "0.44", "--chi", "4")
    assert code == 1 and out == ""
    assert_one_error_line(err, "no convergence after 10 iterations")
    assert "near beta_c" in err


def test_trg_convergence_failure_suggests_the_full_svd(capsys, monkeypatch):
    import tenpy_ad.cli.trg

    def fails(*args, **kwargs):
        raise ConvergenceError("svds: residual too large", residual=1.0, iterations=3)
    monkeypatch.setattr(tenpy_ad.cli.trg, "compiled_point", fails)
    code, _, err = run(capsys, "--beta", "0.3", *SMALL_TRG, "--svd", "partial")
    assert code == 1
    assert_one_error_line(err, "--svd full")


def test_unexpected_error_is_one_line_or_a_traceback_on_request(capsys, monkeypatch):
    import tenpy_ad.cli.trg

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(tenpy_ad.cli.trg, "compiled_point", broken)
    code, _, err = run(capsys, "--beta", "0.3", *SMALL_TRG)
    assert code == 1
    assert_one_error_line(err, "ZeroDivisionError: a bug")
    monkeypatch.setenv("TENPY_AD_TRACEBACK", "1")
    with pytest.raises(ZeroDivisionError):
        run(capsys, "--beta", "0.3", *SMALL_TRG)


def test_runtime_failure_from_the_shell_is_one_line():
    prelude = ("import tenpy_ad.cli.trg as cli_trg\n"
               "def fails(*a, **k): raise MemoryError('out of memory')\n"
               "cli_trg.compiled_point = fails")
    done = run_python("--beta", "0.3", *SMALL_TRG, prelude=prelude)
    assert done.returncode == 1
    assert_one_error_line(done.stderr, "MemoryError: out of memory")


# ------------------------------------------------------------------ trg results

@pytest.fixture(scope="module")
def small_program():
    return CompiledTRG(8, 6)


def test_trg_json_single_beta(capsys, small_program):
    code, out, _ = run(capsys, "--beta", "0.3", *SMALL_TRG, "--json")
    assert code == 0
    (row,) = strict_json(out)
    expected = observables(0.3, small_program(0.3))
    assert row["beta"] == 0.3 and row["chi"] == 8 and row["steps"] == 6
    assert row["ks"] == [2, 4, 4, 8, 8, 8] and row["svd"] == "full"   # auto at chi = 8
    assert row["mode"] == "compiled" and row["checkpoint"] is False
    for key in ("lnz", "u", "c"):
        assert row[key] == pytest.approx(expected[key], rel=1e-12, abs=1e-12)
    assert row["lnz_exact"] == pytest.approx(onsager.lnz(0.3), rel=1e-14)
    assert row["u_exact"] == pytest.approx(onsager.energy(0.3), rel=1e-14)
    assert row["c_exact"] == pytest.approx(onsager.specific_heat(0.3), rel=1e-14)
    assert {"run_ms", "build_ms", "grad_ms", "grad2_ms", "compile_ms", "value_ops",
            "total_ops"} <= set(row)


def test_trg_modes_svd_methods_and_workers_agree(capsys):
    sweeps = {}
    for extra in ([], ["--mode", "eager"], ["--svd", "full"], ["--workers", "2"],
                  ["--mode", "eager", "--checkpoint", "--workers", "2"]):
        code, out, _ = run(capsys, "--betas", "0.3:0.4:3", *SMALL_TRG, "--json", *extra)
        assert code == 0
        sweeps[" ".join(extra)] = strict_json(out)
    reference = sweeps[""]
    assert [row["beta"] for row in reference] == pytest.approx([0.3, 0.35, 0.4], abs=1e-15)
    assert sweeps["--mode eager"][0]["mode"] == "eager"
    assert {"forward_ms", "backward_ms", "second_ms"} <= set(sweeps["--mode eager"][0])
    assert sweeps["--svd full"][0]["svd"] == "full"
    for rows in sweeps.values():
        for row, expected in zip(rows, reference):
            for key in ("lnz", "u", "c"):
                assert row[key] == pytest.approx(expected[key], rel=1e-9, abs=1e-12)


def test_trg_json_is_strict_at_the_critical_point(capsys):
    code, out, _ = run(capsys, "--beta", repr(onsager.BETA_C), "--chi", "4", "--steps", "3",
                       "--json")
    assert code == 0
    (row,) = strict_json(out)
    assert row["c_exact"] is None                 # Onsager's c is infinite at beta_c


def test_trg_tables(capsys):
    code, out, _ = run(capsys, "--beta", "0.3", *SMALL_TRG)
    assert code == 0
    assert "lnZ/N" in out and "Onsager" in out and "cost: build" in out and "graph:" in out
    code, out, _ = run(capsys, "--beta", "0.3", *SMALL_TRG, "--mode", "eager")
    assert code == 0 and "cost per beta (eager)" in out and "backward" in out
    code, out, _ = run(capsys, "--betas", "0.3:0.4:2", *SMALL_TRG)
    assert code == 0
    header = next(line for line in out.splitlines() if "err u" in line)
    assert header.split()[:4] == ["beta", "lnZ/N", "u", "c"]


def test_trg_plot_of_a_single_beta_keeps_json_parseable(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "trg.png"
    code, out, err = run(capsys, "--beta", "0.3", "--chi", "4", "--steps", "4", "--json",
                         "--plot", str(path))
    assert code == 0
    assert len(strict_json(out)) == 1              # the neighbours are for the figure only
    assert path.read_bytes()[:8] == PNG
    assert "6 more betas" in err and f"plot written to {path}" in err


# ------------------------------------------------------------------ ctmrg results

def test_ctmrg_json_matches_the_exact_solution_in_both_modes(capsys):
    rows = {}
    for mode in ("compiled", "eager"):
        code, out, _ = run(capsys, "ctmrg", "--beta", "0.6", "--chi", "8", "--json",
                           "--mode", mode)
        assert code == 0
        (rows[mode],) = strict_json(out)
    compiled, eager = rows["compiled"], rows["eager"]
    assert {"beta", "lnz", "u", "m", "c", "lnz_exact", "u_exact", "m_exact", "c_exact",
            "iterations", "forward_s", "backward_s", "mode"} <= set(compiled)
    assert compiled["mode"] == "compiled" and eager["mode"] == "eager"
    assert compiled["lnz"] == pytest.approx(1.210132388288413, abs=1e-9)
    assert compiled["u"] == pytest.approx(-1.909086177684, abs=1e-7)
    assert compiled["m"] == pytest.approx(0.973608667440301, abs=1e-7)
    for key in ("lnz", "u", "m", "c"):
        assert eager[key] == pytest.approx(compiled[key], rel=1e-9, abs=1e-12)


def test_ctmrg_sweep_table_and_workers(capsys):
    code, out, _ = run(capsys, "ctmrg", "--betas", "0.3:0.6:2", "--chi", "4", "--workers", "2")
    assert code == 0
    assert "err |m|" in out and "Yang" in out and "cost per beta" in out
    code, out, _ = run(capsys, "ctmrg", "--betas", "0.3:0.6:2", "--chi", "4", "--json")
    rows = strict_json(out)
    assert [row["beta"] for row in rows] == [0.3, 0.6]
    assert rows[1]["m"] == pytest.approx(ctmrg.point(0.6, 4)["m"], rel=1e-12)


def failing_at(beta_failing: float, real):
    """``real`` (a point function), raising ConvergenceError at ``beta_failing``."""
    def point(beta, *args, **options):
        if abs(beta - beta_failing) < 1e-12:
            raise ConvergenceError("fixed_point: no convergence after 10 iterations",
                                   residual=1e-3, iterations=10)
        return real(beta, *args, **options)
    return point


def test_ctmrg_sweep_keeps_the_finished_points_when_one_fails(capsys, monkeypatch):
    monkeypatch.setattr(ctmrg, "point", failing_at(0.45, ctmrg.point))
    code, out, err = run(capsys, "ctmrg", "--betas", "0.3:0.6:3", "--chi", "4")
    assert code == 1
    lines = out.splitlines()
    assert any(line.split()[:1] == ["0.300000"] and len(line.split()) == 9 for line in lines)
    assert any(line.split()[:1] == ["0.600000"] and len(line.split()) == 9 for line in lines)
    assert any(line.startswith("  0.450000  failed") for line in lines)
    assert "cost per beta" in out
    failures = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(failures) == 1
    assert "beta = 0.45 failed: ConvergenceError: fixed_point: no convergence" in failures[0]
    assert "near beta_c" in failures[0] and "1 of 3 points failed" in err
    code, out, err = run(capsys, "ctmrg", "--betas", "0.3:0.6:3", "--chi", "4", "--json")
    assert code == 1
    rows = strict_json(out)
    assert [row["beta"] for row in rows] == pytest.approx([0.3, 0.45, 0.6], abs=1e-15)
    assert rows[1]["error"].startswith("ConvergenceError: fixed_point: no convergence")
    assert rows[1]["chi"] == 4 and "lnz" not in rows[1]
    assert rows[2]["m"] == pytest.approx(onsager.magnetization(0.6), abs=1e-6)


def test_trg_sweep_keeps_the_finished_points_when_one_fails(capsys, monkeypatch):
    import tenpy_ad.cli.trg
    monkeypatch.setattr(tenpy_ad.cli.trg, "compiled_point",
                        failing_at(0.4, tenpy_ad.cli.trg.compiled_point))
    code, out, err = run(capsys, "--betas", "0.3:0.4:2", *SMALL_TRG, "--svd", "partial",
                         "--json")
    assert code == 1
    rows = strict_json(out)
    assert "error" not in rows[0] and rows[1]["error"].startswith("ConvergenceError")
    assert "beta = 0.4 failed" in err and "--svd full" in err


def test_ctmrg_says_when_an_environment_is_accurate_only_to_its_floor(capsys, monkeypatch):
    """An environment whose entries stall above the tolerance (here 1e-15, below roundoff)
    is reported with its residual, in the table and in --json, not as a Python warning."""
    real = ctmrg.point
    monkeypatch.setattr(ctmrg, "point", lambda beta, chi, second_order=True: real(
        beta, chi, second_order=False, tol=1e-15))
    code, out, err = run(capsys, "ctmrg", "--beta", "0.38", "--chi", "32")
    assert code == 0 and "Warning" not in err
    assert "beta = 0.38: the environment is a fixed point only to" in out
    code, out, _ = run(capsys, "ctmrg", "--beta", "0.38", "--chi", "32", "--json")
    (row,) = strict_json(out)
    assert row["converged"] is False and row["residual"] > row["tol"] == 1e-15


def test_ctmrg_says_why_c_is_missing(capsys, monkeypatch):
    """c is NaN where its derivative solve did not converge; the row says why."""
    real = ctmrg.point

    def point(beta, chi, second_order=True):
        row = real(beta, chi, second_order=False)
        return dict(row, c=float("nan"), c_error="ConvergenceError: GMRES did not converge")
    monkeypatch.setattr(ctmrg, "point", point)
    code, out, _ = run(capsys, "ctmrg", "--beta", "0.6", "--chi", "8")
    assert code == 0 and "beta = 0.6: no c (ConvergenceError: GMRES did not converge)" in out
    code, out, _ = run(capsys, "ctmrg", "--beta", "0.6", "--chi", "8", "--json")
    (row,) = strict_json(out)
    assert row["c"] is None and row["c_error"].startswith("ConvergenceError")


# ------------------------------------------------------------------ blowup

def test_blowup_json_is_one_list(capsys):
    code, out, _ = run(capsys, "blowup", "--kind", "ladder", "--max-depth", "25",
                       "--repeats", "1", "--json")
    assert code == 0
    rows = strict_json(out)
    assert [row["depth"] for row in rows] == [10, 25]
    assert rows[0]["ratio"] is None and rows[1]["ratio"] > 0
    assert all(row["kind"] == "ladder" and row["derivative_ops"] > 0 for row in rows)

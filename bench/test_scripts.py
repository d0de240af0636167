"""Every benchmark script runs end to end on tiny sizes and prints its columns (no timing
is asserted; peers are left out so that this runs without them)."""
import pytest

from tenpy_ad import blowup

import ad_blowup
import build_cost
import ctmrg
import ctmrg_robustness
import eager_chains
import inplace_writes
import memory_per_node
import numpy_dispatch
import small_ops
import threads
import trg_accuracy
import trg_ad_steps
import trg_partial

BLOWUP_COLUMNS = "value ops  ad.grad ms  ratio  deriv ops  us/op  drop ms drop/grad"


def test_blowup_entry_needs_no_peer(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    plot = tmp_path / "blowup.png"
    assert blowup.main(["--kind", "svd3", "--max-depth", "25", "--repeats", "1",
                        "--plot", str(plot)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert BLOWUP_COLUMNS in lines[1] and "jax" not in lines[1]
    assert [line.split()[0] for line in lines[2:]] == ["10", "25"]
    assert all(len(line.split()) == 8 for line in lines[2:])
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_ad_blowup_prints_the_same_columns(capsys):
    assert ad_blowup.main(["--kind", "mul", "--max-depth", "10", "--repeats", "1",
                           "--jax", "off"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].endswith("drop/grad") and BLOWUP_COLUMNS in lines[1]
    assert lines[2].split()[0] == "10" and len(lines[2].split()) == 8


@pytest.mark.parametrize("script,argv", [
    (eager_chains, ["--kind", "svd3", "--depths", "5,10", "--repeats", "1", "--no-torch"]),
    (build_cost, ["--calls", "5", "--repeats", "1", "--depth", "20", "--chain-repeats", "1"]),
    (trg_ad_steps, ["--max-steps", "2", "--compare-steps", "3", "--repeats", "1",
                    "--no-jax"]),
    (trg_accuracy, ["--chis", "4", "--betas", "0.3", "--steps", "3"]),
    (memory_per_node, ["--depths", "100,200"]),
    (trg_partial, ["--chis", "4,16", "--steps", "5", "--full-max-chi", "16"]),
    (ctmrg, ["--betas", "0.6", "--chis", "4"]),
    (ctmrg_robustness, ["--betas", "0.3", "--chis", "8", "--perturbations",
                        "none,tol=1e-12,noise=1e-14,gauge", "--rules", "gap,weight"]),
    (numpy_dispatch, ["--shape", "2", "--calls", "3", "--repeats", "1"]),
    (small_ops, ["--dims", "2", "--steps", "3", "--repeats", "1", "--no-peers"]),
    (threads, ["--clients", "trg16,chain-mul,eigh-64", "--steps", "3", "--repeats", "1"]),
    (threads, ["--crossover", "--kinds", "matmul,eigh", "--sizes", "16,32", "--repeats",
               "1"]),
    (threads, ["--buffers", "4", "--steps", "3", "--repeats", "1"]),
], ids=["eager_chains", "build_cost", "trg_ad_steps", "trg_accuracy", "memory_per_node", "trg_partial",
        "ctmrg", "ctmrg_robustness", "numpy_dispatch", "small_ops", "threads",
        "threads_crossover", "threads_buffers"])
def test_script_runs(script, argv, capsys):
    assert script.main(argv) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) >= 3


def test_inplace_writes_prints_each_form_beside_its_functional_form(capsys):
    assert inplace_writes.main(["--n", "3", "--writes", "2", "--repeats", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if line.startswith("t")]
    assert len(rows) == 6 and all(len(line.split()) >= 5 for line in rows)

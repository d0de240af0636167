"""bench/ipeps.py's peers reproduce our energy and gradient (D = 2, chi = 6, from the same
converged environment), and the script's quick run prints its table (no timing asserted).
JAX's compilation makes its case take ~15 s."""
import numpy as np
import pytest

import ipeps

CHI = 6


@pytest.fixture(scope="module")
def ours():
    params, env = ipeps.test_point(2, CHI)
    run = ipeps.Runner("ours", CHI)
    return params, env, ipeps.Runner.numpy(*run.call(params, env))


@pytest.mark.parametrize("engine", ["jax", "torch"])
def test_peer_reproduces_our_energy_and_gradient(engine, ours):
    pytest.importorskip(engine)
    params, env, (value, _, grad) = ours
    run = ipeps.Runner(engine, CHI)
    peer_value, peer_env, peer_grad = ipeps.Runner.numpy(*run.call(params, env))
    assert abs(peer_value - value) < 1e-8
    assert np.max(np.abs(peer_grad - grad)) < 1e-8 * max(1.0, np.max(np.abs(grad)))
    counts = run.counts()
    assert counts["spectrum_moves"] >= 1 and counts["aligned_moves"] >= 1
    # the returned environment is a warm start: the next call needs one move of each
    run.call(params, peer_env)
    assert run.counts()["spectrum_moves"] == 1


def test_peer_grows_its_own_environment_to_the_same_energy(ours):
    pytest.importorskip("torch")
    params, _, (value, _, _) = ours
    run = ipeps.Runner("torch", CHI)
    peer_value = ipeps.Runner.numpy(*run.call(params, run.client.grown_environment(params)))[0]
    assert abs(peer_value - value) < 1e-8


def test_quick_run_prints_the_table(capsys):
    assert ipeps.main(["--quick", "--engines", "ours"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[3].split()[:3] == ["D", "chi", "engine"]
    assert lines[4].split()[:3] == ["2", str(CHI), "ours"]

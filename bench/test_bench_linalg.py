"""Forward + backward of the decompositions of ``bench/linalg.py`` (tenpy_ad eager): one
group per decomposition, a batched and a single-matrix case each; and the script itself on
tiny sizes (without peers)."""
import pytest

import linalg

CASES = [(op, shape) for op in linalg.OPS for shape in linalg.SHAPES]


@pytest.mark.parametrize("op,shape", CASES,
                         ids=[f"{op}-{'x'.join(map(str, s))}" for op, s in CASES])
def test_linalg_forward_backward(benchmark, core_info, op, shape):
    benchmark.group = f"linalg-{op}"
    run = linalg.tenpy_runners(op, linalg.problem(op, shape))["eager"]
    benchmark(run)
    benchmark.extra_info.update(op=op, shape=list(shape))


def test_linalg_script_runs(capsys):
    assert linalg.main(["--shapes", "3,4,4;5,5", "--repeats", "1", "--no-peers"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 + 2 * 2 * len(linalg.OPS)           # a wall and a cpu line each
    assert lines[1].split() == ["op", "shape", "clock", "ours", "compiled"]

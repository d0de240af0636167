"""Compiled programs skip broadcasts of a 0-d value that only NumPy ufuncs read (they
broadcast it themselves): the same values bit for bit, and the broadcasts that something
else reads, or that are outputs, still run."""
import numpy as np

import tenpy_ad as tp
from tenpy_ad.compiler import step_choice


def _normalised_chain(x, steps):
    for _ in range(steps):
        x = x / tp.sqrt((x * x).sum()) + x * 0.25
    return x


def test_skipped_broadcasts_give_the_same_values(monkeypatch):
    x = tp.input((4, 5), name="x")
    y = _normalised_chain(x, 200)
    loss = (y * y).sum()
    outputs = [y, loss, tp.ad.grad(loss, x)]
    a = np.random.default_rng(0).standard_normal((4, 5))
    program = tp.compile(outputs, inputs=[x])
    assert program.kernel_kinds().count("pass") >= 200
    monkeypatch.setattr(step_choice, "MIN_SHARE", float("inf"))   # skip none
    reference = tp.compile(outputs, inputs=[x])
    assert "pass" not in reference.kernel_kinds()
    for got, expected in zip(program(a), reference(a)):
        np.testing.assert_array_equal(got, expected)
    eager = _normalised_chain(tp.tensor(a), 200)
    np.testing.assert_array_equal(program(a)[0], eager.numpy())


def test_broadcasts_read_otherwise_or_returned_run():
    x = tp.input((3, 3), name="x")
    s = tp.sqrt((x * x).sum())
    spread = tp.broadcast_to(s, (3, 3))
    outputs = [spread, x @ spread, x / s]           # an output; read by a contraction
    program = tp.compile(outputs, inputs=[x])
    a = np.arange(9.0).reshape(3, 3)
    norm = np.sqrt((a * a).sum())
    spread_value, product, quotient = program(a)
    assert spread_value.shape == (3, 3)
    np.testing.assert_allclose(product, a @ np.full((3, 3), norm))
    np.testing.assert_allclose(quotient, a / norm)


def test_two_broadcast_scalars_into_one_ufunc_both_run():
    """``spread(s) * spread(t)``: neither operand has the full shape by itself, so the
    broadcasts run (skipping both would make the product 0-d)."""
    x = tp.input((4, 5), name="x")
    y = x
    for _ in range(50):
        s = (y * y).sum()
        spread = tp.broadcast_to(s, (4, 5)) * tp.broadcast_to(tp.sqrt(s), (4, 5))
        y = y + spread.sum(axis=0) * 1e-6
    program = tp.compile(y, inputs=[x])
    a = np.random.default_rng(0).standard_normal((4, 5))
    expected = a
    for _ in range(50):
        s = (expected * expected).sum()
        expected = expected + (np.full((4, 5), s) * np.sqrt(s)).sum(axis=0) * 1e-6
    np.testing.assert_allclose(program(a), expected, rtol=1e-14)

"""Run one function in every mode of the engine and check what each mode returns.

The same user code runs

* ``"numpy"``     on plain ndarrays       -> NumPy results (the surface falls through);
* ``"eager"``     on ``tp.tensor``s       -> ``tp.Tensor``s;
* ``"traced"``    on ``tp.input``s        -> ``TracedTensor``s, run by ``tp.evaluate``;
* ``"compiled"``  the same graph          -> run by ``tp.compile``;
* ``"jit"``       the function transform  -> ``tp.jit(fn)`` called on the ndarrays.

Tensors and placeholders have the arrays' dtypes, int64 and bool included.

:func:`run` gives back what one mode computed, as ndarrays; :func:`check_modes` compares
every mode with a NumPy reference; :func:`grad_in` differentiates a scalar loss in a mode.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

import tenpy_ad as tp

ALL_MODES = ("numpy", "eager", "traced", "compiled", "jit")
#: the modes in which the arguments are tensors (for methods plain ndarrays do not have)
TENSOR_MODES = ALL_MODES[1:]

RTOL = {np.dtype("float64"): 1e-12, np.dtype("complex128"): 1e-12,
        np.dtype("float32"): 2e-5, np.dtype("complex64"): 2e-5}


def _listed(out) -> tuple[list, bool]:
    many = isinstance(out, (tuple, list))
    return (list(out) if many else [out]), many


def _check_built(node, value: np.ndarray, mode: str) -> None:
    """A tensor's own shape and dtype (decided when it was built) are its value's."""
    assert tuple(node.shape) == value.shape and node.dtype == value.dtype, (
        f"{mode} mode: built {node.dtype}{list(node.shape)} but computed "
        f"{value.dtype}{list(value.shape)}")


def _run_numpy(fn, arrays):
    outs, many = _listed(fn(*[a.copy() for a in arrays]))
    for o in outs:
        assert isinstance(o, (np.ndarray, np.generic)), (
            f"numpy mode returned {type(o).__name__}, expected a NumPy result")
    return outs, many


def _run_eager(fn, arrays):
    tensors = [tp.tensor(a, dtype=a.dtype) for a in arrays]   # not ints made float64
    outs, many = _listed(fn(*tensors))
    values = []
    for o in outs:
        assert type(o) is tp.Tensor, f"eager mode returned {type(o).__name__}"
        values.append(np.asarray(o))
        _check_built(o, values[-1], "eager")
    for t, a in zip(tensors, arrays):                   # the inputs are left untouched
        np.testing.assert_array_equal(np.asarray(t), a)
    return values, many


def _run_graph(fn, arrays, mode):
    xs = [tp.input(a.shape, a.dtype) for a in arrays]
    outs, many = _listed(fn(*xs))
    for o in outs:
        assert type(o) is tp.TracedTensor, f"{mode} mode returned {type(o).__name__}"
    if mode == "traced":
        values = tp.evaluate(outs, dict(zip(xs, arrays)))
    else:
        values = tp.compile(outs, inputs=xs)(*arrays)
    for o, v in zip(outs, values):
        assert isinstance(v, np.ndarray), f"{mode} mode computed a {type(v).__name__}"
        _check_built(o, v, mode)
    return values, many


def _run_jit(fn, arrays):
    outs, many = _listed(tp.jit(fn)(*arrays))
    for o in outs:
        assert isinstance(o, (np.ndarray, np.generic)), f"jit returned {type(o).__name__}"
    return outs, many


def run(fn: Callable, mode: str, *arrays):
    """``fn`` applied to ``arrays`` in ``mode``; the outputs (one or a tuple) come back
    as ndarrays, after checking their kind and that each tensor was built with the shape
    and dtype of its value."""
    arrays = [np.asarray(a) for a in arrays]
    if mode == "numpy":
        outs, many = _run_numpy(fn, arrays)
    elif mode == "eager":
        outs, many = _run_eager(fn, arrays)
    elif mode in ("traced", "compiled"):
        outs, many = _run_graph(fn, arrays, mode)
    elif mode == "jit":
        outs, many = _run_jit(fn, arrays)
    else:
        raise ValueError(f"unknown mode {mode!r}; one of {ALL_MODES}")
    outs = [np.asarray(o) for o in outs]
    return tuple(outs) if many else outs[0]


def assert_matches(got, expected, what: str) -> None:
    """``got`` has ``expected``'s shape and dtype and its values (rtol by dtype)."""
    expected = np.asarray(expected)
    got = np.asarray(got)
    assert got.shape == expected.shape, (
        f"{what}: shape {got.shape}, NumPy gives {expected.shape}")
    assert got.dtype == expected.dtype, (
        f"{what}: dtype {got.dtype}, NumPy gives {expected.dtype}")
    rtol = RTOL.get(expected.dtype, 1e-12)
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * max(scale, 1.0) * 1e-2,
                               err_msg=what)


def check_modes(fn: Callable, *args, ref: Callable | None = None,
                modes: Sequence[str] = ALL_MODES) -> np.ndarray:
    """Run ``fn`` on ``args`` (ndarrays) in each of ``modes`` and compare with
    ``ref(*args)`` computed by NumPy (``ref`` defaults to ``fn`` itself, for functions
    written with operators only); returns the reference."""
    args = [np.asarray(a) for a in args]
    reference = ref if ref is not None else fn
    expected = np.asarray(reference(*[a.copy() for a in args]))
    for mode in modes:
        assert_matches(run(fn, mode, *args), expected, f"{mode} mode")
    return expected


def grad_in(mode: str, loss_fn: Callable, a) -> np.ndarray:
    """d loss / d a of a real scalar loss: eager ``backward()``, the traced ``tp.ad.grad``
    graph, or the function transform ``tp.grad``."""
    if mode == "eager":
        t = tp.tensor(a, requires_grad=True)
        loss_fn(t).backward()
        return np.asarray(t.grad)
    if mode == "transform":
        return np.asarray(tp.grad(loss_fn)(a))
    x = tp.input(a.shape, a.dtype)
    return np.asarray(tp.evaluate(tp.ad.grad(loss_fn(x), x), {x: a}))

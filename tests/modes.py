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


#: the ways :func:`grad_in` takes a gradient: eager ``backward()``, the traced
#: ``tp.ad.grad`` graph, the function transform ``tp.grad`` (the one list the test files
#: parametrize over; :data:`DERIVATIVE_MODES` adds compiled, jit and forward mode)
GRAD_MODES = ("eager", "traced", "transform")


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


# ------------------------------------------------------------------ derivatives in every mode

#: the ways of taking a first and a second derivative of one loss
DERIVATIVE_MODES = ("eager", "traced", "compiled", "jit", "transform", "forward",
                    "traced_forward")


def coordinates(args) -> list:
    """The real coordinates of ``args``: ``(k, index, unit)`` per coordinate, ``unit``
    1 or 1j (a complex entry has two)."""
    coords = []
    for k, a in enumerate(args):
        units = (1.0, 1j) if np.iscomplexobj(a) else (1.0,)
        for unit in units:
            coords += [(k, i, unit) for i in np.ndindex(a.shape)]
    return coords


def _unit(args, coord) -> list:
    k, index, unit = coord
    directions = [np.zeros_like(a) for a in args]
    directions[k][index] = unit
    return directions


def _packed(grads, args) -> np.ndarray:
    """Gradients (``dL/dx + i dL/dy`` for complex args) as one vector of coordinates."""
    grads = [np.asarray(g) for g in grads]
    return np.array([np.real(np.conj(unit) * grads[k][index])
                     for k, index, unit in coordinates(args)])


def _along(grads, directions):
    """The real inner product of tensor gradients with constant directions (an eager
    ``.grad`` left ``None``, which no derivative reached, counts as zero; so do the args a
    direction leaves out, whose zero factor would multiply infinite derivatives)."""
    total = None
    for g, d in zip(grads, directions):
        if g is None or not np.any(d):
            continue
        term = tp.numpy.real(tp.numpy.conj(g) * d).sum()
        total = term if total is None else total + term
    return total


def _eager_derivatives(loss, args):
    leaves = [tp.tensor(a, dtype=a.dtype, requires_grad=True) for a in args]
    loss(*leaves).backward()
    first = [np.asarray(t.grad) if t.grad is not None else np.zeros_like(a)
             for t, a in zip(leaves, args)]
    columns = []
    for coord in coordinates(args):
        leaves = [tp.tensor(a, dtype=a.dtype, requires_grad=True) for a in args]
        loss(*leaves).backward(create_graph=True)
        grads = [t.grad for t in leaves]
        for t in leaves:
            t.grad = None
        inner = _along(grads, _unit(args, coord))
        if inner is not None and inner.requires_grad:
            inner.backward()
        columns.append(_packed([np.zeros_like(a) if t.grad is None else t.grad
                                for t, a in zip(leaves, args)], args))
    return first, columns


def _graph_derivatives(loss, args, mode):
    xs = [tp.input(a.shape, a.dtype) for a in args]
    grads = tp.ad.grad(loss(*xs), xs)
    if mode == "traced_forward":      # along one arg: the others get no tangent at all
        seconds = [tp.ad.jvp(grads, [xs[c[0]]], [_unit(args, c)[c[0]]])
                   for c in coordinates(args)]
    else:
        seconds = [tp.ad.grad(_along(grads, _unit(args, c)), xs) for c in coordinates(args)]
    outs = list(grads) + [g for column in seconds for g in column]
    if mode == "compiled":
        values = tp.compile(outs, inputs=xs)(*args)
    else:
        values = tp.evaluate(outs, dict(zip(xs, args)))
    n = len(args)
    first = values[:n]
    return first, [_packed(values[n * (j + 1):n * (j + 2)], args)
                   for j in range(len(seconds))]


def _of_one(fn, args, k):
    """``fn`` as a function of its k-th argument, the others fixed to ``args``."""
    def of_one(z):
        return fn(*args[:k], z, *args[k + 1:])
    return of_one


def _transform_derivatives(loss, args, mode):
    argnums = tuple(range(len(args)))
    gradient = tp.grad(loss, argnums=argnums)
    first = gradient(*args)
    columns = []
    for coord in coordinates(args):
        if mode == "forward":
            _, column = tp.jvp(_of_one(gradient, args, coord[0]), (args[coord[0]],),
                               (_unit(args, coord)[coord[0]],))
        else:
            second = tp.grad(lambda *zs: _along(gradient(*zs), _unit(args, coord)),
                             argnums=argnums)
            column = (tp.jit(second) if mode == "jit" else second)(*args)
        columns.append(_packed(column, args))
    return first, columns


def derivatives_in(mode: str, loss: Callable, *args) -> tuple[np.ndarray, np.ndarray]:
    """The gradient and the Hessian of a real scalar ``loss(*args)`` in ``mode`` (one of
    :data:`DERIVATIVE_MODES`), over the real coordinates of the args (:func:`coordinates`:
    a complex entry is its real and imaginary part).  The gradient comes as one vector
    (``dL/dx + i dL/dy`` split into its parts), the Hessian as a matrix whose column ``j``
    is the gradient of ``<grad L, e_j>`` (``forward`` modes: the JVP of the gradient along
    ``e_j``).  Modes: eager ``backward()`` (``create_graph=True`` for the second order),
    ``tp.ad.grad`` twice run by ``tp.evaluate`` (``traced``) or ``tp.compile``
    (``compiled``), ``tp.grad`` of ``tp.grad`` (``transform``, and under ``tp.jit``),
    ``tp.jvp`` of ``tp.grad`` (``forward``) and ``tp.ad.jvp`` of ``tp.ad.grad``
    (``traced_forward``)."""
    args = [np.asarray(a) for a in args]
    if mode == "eager":
        first, columns = _eager_derivatives(loss, args)
    elif mode in ("traced", "compiled", "traced_forward"):
        first, columns = _graph_derivatives(loss, args, mode)
    elif mode in ("jit", "transform", "forward"):
        first, columns = _transform_derivatives(loss, args, mode)
    else:
        raise ValueError(f"unknown mode {mode!r}; one of {DERIVATIVE_MODES}")
    hessian = np.array(columns).T if columns else np.zeros((0, 0))
    return _packed(first, args), hessian

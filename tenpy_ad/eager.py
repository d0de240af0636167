"""Eager mode: :class:`Tensor` computes immediately with NumPy and records a tape;
``loss.backward()`` runs the reverse sweep in the compiled core and fills ``.grad``.

The VJP rules are the same functions the traced transform uses (they see ndarrays here).
"""
from __future__ import annotations

import functools

import numpy as np

from . import dtypes
from ._compiled import _core
from .errors import DTypeError, GraphError, ShapeError
from .ops import elementwise as ew
from .primitive import Tensor


def tensor(data, dtype=None, requires_grad: bool = False) -> Tensor:
    """An eager tensor holding a copy of ``data``.

    ``dtype`` defaults to the data's own, with ints and bools as float64 (the values one
    differentiates); float32, float64, complex64 and complex128 can require grad, and
    ``dtype="bool"``/``"int64"`` make tensors of masks and indices that cannot.
    """
    if type(data) is Tensor:
        data = data.data
    array = np.array(data)
    code = dtypes.inexact_code(array.dtype) if dtype is None else dtypes.code_of(dtype)
    if requires_grad and not dtypes.is_inexact(code):
        raise DTypeError(f"tensor: only floating and complex tensors can require grad, not "
                         f"{dtypes.DTYPES[code].name}")
    array = array.astype(dtypes.DTYPES[code], copy=False)
    return Tensor(array, requires_grad)


class no_grad:
    """Context manager (and decorator): eager operations in this thread record no tape."""

    def __enter__(self):
        _core._enter_no_grad()
        return self

    def __exit__(self, *exc):
        _core._exit_no_grad()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)
        return wrapper


is_grad_enabled = _core.is_grad_enabled


def _accumulate(a, b):
    return ew.add(a, b)


def backward(t: Tensor, gradient=None, retain_graph=None, create_graph: bool = False):
    """``t.backward(...)``: see :meth:`Tensor.backward`."""
    if not t.requires_grad:
        raise GraphError("backward(): this tensor does not require grad and has no tape; "
                         "create the inputs with requires_grad=True")
    if retain_graph is None:
        retain_graph = create_graph
    try:
        seed = _seed_for(t, gradient, create_graph)
    except (GraphError, ShapeError) as error:
        raise type(error)(f"backward(): {error}") from None
    _core.eager_backward(t, seed, bool(retain_graph), bool(create_graph),
                         _accumulate if create_graph else np.add)


def _seed_for(t: Tensor, gradient, create_graph: bool):
    if gradient is None:
        if t.data.size != 1:
            raise GraphError(f"the output has shape {list(t.shape)}; pass a gradient "
                             "(cotangent) of that shape for non-scalar outputs")
        seed = np.ones_like(t.data)
    else:
        seed = gradient.data if type(gradient) is Tensor else np.asarray(gradient)
        if seed.shape != t.data.shape:
            raise ShapeError(f"the cotangent has shape {list(seed.shape)}, the output "
                             f"{list(t.data.shape)}")
        seed = seed.astype(t.data.dtype, copy=False)
    if create_graph:
        return gradient if type(gradient) is Tensor else Tensor(seed)
    return seed


def grad_of(outputs, inputs, cotangents=None, retain_graph=None, create_graph=False) -> list:
    """Eager ``sum_k ct_k . d outputs_k / d inputs`` without touching any ``.grad``
    (PyTorch's ``torch.autograd.grad``).  Returns one Tensor per input (zeros where an
    input does not influence the outputs)."""
    outputs, inputs = list(outputs), list(inputs)
    cotangents = [None] * len(outputs) if cotangents is None else list(cotangents)
    if retain_graph is None:
        retain_graph = create_graph
    totals = [None] * len(inputs)
    for k, (out, ct) in enumerate(zip(outputs, cotangents)):
        if type(out) is not Tensor or not out.requires_grad:
            continue
        keep = retain_graph or k < len(outputs) - 1
        found = _core.eager_cotangents(out, _seed_for(out, ct, create_graph), inputs,
                                       bool(keep), bool(create_graph), _accumulate)
        for i, g in enumerate(found):
            if g is not None:
                totals[i] = g if totals[i] is None else _accumulate(totals[i], g)
    results = []
    for x, g in zip(inputs, totals):
        if g is None:
            g = np.zeros_like(x.data)
        results.append(g if type(g) is Tensor else Tensor(g))
    return results


__all__ = ["Tensor", "tensor", "no_grad", "is_grad_enabled", "backward", "grad_of"]

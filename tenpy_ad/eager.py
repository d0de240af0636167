"""Eager mode: :class:`Tensor` computes immediately with NumPy and records a tape;
``loss.backward()`` runs the reverse sweep in the compiled core and fills ``.grad``.

The VJP rules are the same functions the traced transform uses (they see ndarrays here).
"""
from __future__ import annotations

import functools

import numpy as np

from . import dtypes
from ._compiled import _core
from ._sequences import array_of, tensor_list, value_list
from .errors import ArgumentError, DTypeError, GraphError, ShapeError
from .primitive import Tensor, is_eager, needs_grad, plain_value


def tensor(data, dtype=None, requires_grad: bool = False) -> Tensor:
    """An eager tensor holding a copy of ``data``.

    ``dtype`` defaults to the data's own, with ints and bools as float64 (the values one
    differentiates); float32, float64, complex64 and complex128 can require grad, and
    ``dtype="bool"``/``"int64"`` make tensors of masks and indices that cannot.
    """
    data = plain_value(data)
    if not isinstance(requires_grad, (bool, np.bool_)):
        raise ArgumentError(f"tensor: requires_grad must be a bool, got "
                            f"{type(requires_grad).__name__}")
    array = array_of(data, "tensor")
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


#: ``t.backward(gradient=None, retain_graph=None, create_graph=False)``, in the core:
#: :meth:`Tensor.backward` calls it directly
backward = _core.backward


def grad_of(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, *,
            cotangents=None) -> tuple:
    """Eager ``sum_k ct_k . d outputs_k / d inputs`` without touching any ``.grad``
    (PyTorch's ``torch.autograd.grad``).

    ``outputs`` and ``inputs`` are each a Tensor or a list/tuple of Tensors;
    ``grad_outputs`` (also spelled ``cotangents``) is None (each output must then have one
    element), one cotangent, or one per output (None for the default).  Returns a tuple
    with one Tensor per input, also for a single input (zeros where an input does not
    influence the outputs).
    """
    if cotangents is not None:
        if grad_outputs is not None:
            raise ArgumentError("grad_of: pass grad_outputs or cotangents, not both")
        grad_outputs = cotangents
    if retain_graph is None:
        retain_graph = create_graph
    return gradients("grad_of", outputs, inputs, grad_outputs, retain_graph, create_graph)


def gradients(api: str, outputs, inputs, grad_outputs, retain_graph: bool,
              create_graph: bool) -> tuple:
    """:func:`grad_of` for the transforms built on it (``api`` names the caller in
    errors)."""
    outputs = tensor_list(outputs, api, "outputs")
    inputs = tensor_list(inputs, api, "inputs")
    for x in inputs:
        if not is_eager(x):
            raise ArgumentError(f"{api}: inputs must be eager Tensors (tp.tensor), got "
                                f"{type(x).__name__}")
    cts = value_list(grad_outputs, len(outputs), api, "grad_outputs", "outputs")
    totals = _cotangent_totals(api, outputs, inputs, cts, retain_graph, create_graph)
    return tuple(_as_tensor(g, x) for x, g in zip(inputs, totals))


def _cotangent_totals(api, outputs, inputs, cts, retain_graph, create_graph) -> list:
    """Per input the summed cotangent from every output (None where none arrives)."""
    totals = [None] * len(inputs)
    for k, (out, ct) in enumerate(zip(outputs, cts)):
        if not needs_grad(out):
            continue
        keep = retain_graph or k < len(outputs) - 1
        try:
            seed = _core.eager_seed(out, ct, create_graph)
        except (GraphError, ShapeError, DTypeError) as error:
            raise type(error)(f"{api}: output {k}: {error}") from None
        found = _core.eager_cotangents(out, seed, inputs, bool(keep), bool(create_graph))
        for i, g in enumerate(found):
            if g is not None:
                totals[i] = g if totals[i] is None else _core.add_cotangents(totals[i], g)
    return totals


def _as_tensor(g, x: Tensor) -> Tensor:
    if g is None:
        g = np.zeros_like(x.data)
    return g if is_eager(g) else Tensor(g)


__all__ = ["Tensor", "tensor", "no_grad", "is_grad_enabled", "backward", "grad_of"]

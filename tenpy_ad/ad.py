"""Graph-to-graph derivative transforms: ``grad``, ``vjp`` and ``jvp`` on TracedTensors.

Each returns new TracedTensors (which may reference the primal graph), so the results can be
compiled, evaluated, or differentiated again (any order).  The sweeps themselves run in the
compiled core over a topological order; rules are applied once per node, cotangents are
accumulated once per node, and inputs that cannot influence an output cost no work
(symbolic zeros, materialised as a broadcast zero only at the very end).
"""
from __future__ import annotations

import numpy as np

from . import dtypes
from ._compiled import _core
from ._gcpause import paused_gc
from ._sequences import array_of, is_tensor, tensor_list, value_list
from .errors import ArgumentError, DTypeError, GraphError, ShapeError
from .ops import elementwise as ew
from .ops import structural as st
from .primitive import TracedTensor, constant, is_traced, is_value, plain_value


def _traced_list(values, api: str, what: str) -> list:
    """One TracedTensor or a list/tuple of them, as a list."""
    values = tensor_list(values, api, what)
    for v in values:
        if not is_traced(v):
            raise ArgumentError(f"{api}: {what} must be TracedTensors (from tp.input or "
                                f"traced operations), got {type(v).__name__}")
    return values


def _as_seed(value, like: TracedTensor, what: str):
    """A cotangent/tangent for ``like``: a node of exactly its shape and dtype."""
    if value is None:
        return None
    if not is_traced(value):
        value = _seed_constant(value, like, what)
    if tuple(value.shape) != tuple(like.shape):
        raise ShapeError(f"{what} has shape {list(value.shape)}, expected {list(like.shape)}")
    if value.dtype_code != like.dtype_code:
        if dtypes.is_complex(value.dtype_code) and not dtypes.is_complex(like.dtype_code):
            raise DTypeError(f"{what} is complex but the value it pairs with is "
                             f"{like.dtype.name}")
        value = ew.convert(value, like.dtype_code)
    return value


def _seed_constant(value, like: TracedTensor, what: str) -> TracedTensor:
    """The constant node of a concrete cotangent/tangent (an array, a number)."""
    value = plain_value(value)
    if not is_value(value):
        value = array_of(value, what, copy=False)          # nested lists
    kind = np.asarray(value).dtype.kind
    if kind not in "biufc":
        raise DTypeError(f"{what} has dtype {np.asarray(value).dtype}, not a number")
    code = like.dtype_code if kind != "c" else dtypes.complex_code(like.dtype_code)
    return constant(value, code)


def _zeros_like(x: TracedTensor) -> TracedTensor:
    return st.full_like(x, 0)


def _arguments(api: str, outputs, inputs, values, what: str) -> tuple:
    """``outputs`` and ``inputs`` as lists of TracedTensors, and ``values`` (``what``: one
    cotangent per output for vjp, one tangent per input for jvp) as seed nodes of the
    shapes and dtypes they pair with."""
    outputs = _traced_list(outputs, api, "outputs")
    inputs = _traced_list(inputs, api, "inputs")
    paired, per = (outputs, "outputs") if what == "cotangent" else (inputs, "inputs")
    values = value_list(values, len(paired), api, what + "s", per)
    seeds = [_as_seed(v, p, f"{api}: {what} {k}") for k, (v, p) in
             enumerate(zip(values, paired))]
    return outputs, inputs, seeds


def vjp(outputs, inputs, cotangents) -> list:
    """Reverse mode: ``sum_k ct_k^* . d outputs_k / d inputs`` as new graph nodes.

    ``outputs`` and ``inputs`` are each a TracedTensor or a list/tuple of them;
    ``cotangents`` is one cotangent or a list/tuple with one per output (a TracedTensor,
    an array, or None for a zero cotangent).  Returns a list with one TracedTensor per
    input, of its shape and dtype (also for a single input).
    """
    outputs, inputs, seeds = _arguments("vjp", outputs, inputs, cotangents, "cotangent")
    with paused_gc():
        results = _core.vjp_sweep(outputs, seeds, inputs)
    return [_zeros_like(x) if r is None else r for r, x in zip(results, inputs)]


def jvp(outputs, inputs, tangents) -> list:
    """Forward mode: ``sum_i d outputs / d inputs_i . tangents_i`` as new graph nodes.

    ``outputs`` and ``inputs`` are each a TracedTensor or a list/tuple of them;
    ``tangents`` is one tangent or a list/tuple with one per input.  Returns a list with
    one TracedTensor per output (also for a single output).
    """
    outputs, inputs, seeds = _arguments("jvp", outputs, inputs, tangents, "tangent")
    with paused_gc():
        results = _core.jvp_sweep(outputs, inputs, seeds)
    return [_zeros_like(o) if r is None else r for r, o in zip(results, outputs)]


def grad(loss: TracedTensor, wrt):
    """Gradient of a real scalar ``loss`` with respect to ``wrt`` (a TracedTensor, giving
    one TracedTensor, or a list/tuple of them, giving a list).

    For complex inputs the result is ``dL/dx + i dL/dy`` (see :mod:`tenpy_ad.ops.elementwise`).
    """
    if not is_traced(loss):
        raise ArgumentError(f"grad: loss must be a TracedTensor, got {type(loss).__name__}")
    if loss.shape != ():
        raise GraphError(f"grad: the loss must be a scalar (shape ()), got shape "
                         f"{list(loss.shape)}; reduce it first (e.g. .sum()) or use "
                         "tp.ad.vjp with a cotangent")
    if dtypes.is_complex(loss.dtype_code):
        raise DTypeError("grad: the loss is complex; differentiate its real part "
                         "(loss.real) or use tp.ad.vjp")
    single = is_tensor(wrt)
    targets = _traced_list(wrt, "grad", "wrt")
    seed = constant(1.0, loss.dtype_code)
    result = vjp([loss], targets, [seed])
    return result[0] if single else result


__all__ = ["grad", "vjp", "jvp"]

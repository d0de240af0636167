"""``tp.checkpoint(fn)``: rematerialisation (JAX's ``checkpoint``/``remat``).

The values computed inside ``fn`` are not kept for the backward pass; they are recomputed
from ``fn``'s inputs when the backward pass reaches them.  Memory then holds only the
inputs and outputs of each checkpointed call, at the price of running ``fn`` twice.

* Traced: the call becomes one node whose implementation is ``fn`` compiled into a
  sub-program (its intermediates live only while it runs).  Its VJP re-traces ``fn`` on
  its inputs passed through an optimisation barrier (an identity that never merges with
  anything), so the derivative graph holds a fresh copy of ``fn`` that the compiled
  program evaluates during the backward pass, right before it is needed.
* Eager: ``fn`` runs without recording a tape; the tape gets one entry that re-runs ``fn``
  with recording on when ``backward()`` reaches it.

Both paths use the same rule, and the result can be differentiated again.
"""
from __future__ import annotations

import functools
import itertools
from typing import Callable

import numpy as np

from ._compiled import _core
from .eager import no_grad
from .errors import ArgumentError
from .functional import jvp as function_jvp, vjp as function_vjp
from .ops import structural as st
from .primitive import (any_requires_grad, any_traced, array_value, as_node, bind, bind1,
                        is_tensor, primitive, shape_of)
from .param_schema import Instance, Int
from .rules import deflinear, per_output_count
from .compiler import compile as compile_program
from .traced import input as placeholder

_barrier_ids = itertools.count()

barrier_p = primitive("barrier", lambda params, x: x, lambda params, x: x,
                      format_params=lambda params: f"#{params}", params=Int(0))
deflinear(barrier_p, lambda params, ct, out, x: ct)


def _barrier(x):
    """An identity that never merges with another node (so a re-traced region is new)."""
    return bind1(barrier_p, next(_barrier_ids), x)


class Region:
    """A checkpointed function applied to operands of fixed shapes and dtypes (traced), or
    to whatever it was called with (eager)."""

    def __init__(self, fn: Callable, avals: tuple | None, returns_tuple: bool):
        self.fn = fn
        self.avals = avals
        self.returns_tuple = returns_tuple
        self._program = None
        self.out_avals = None

    def outputs(self, *xs) -> tuple:
        result = self.fn(*xs)
        return _as_outputs(result)

    def program(self):
        """``fn`` compiled for the region's operand shapes (traced regions only)."""
        if self._program is None:
            xs = [placeholder(shape, dtype) for shape, dtype in self.avals]
            result = self.fn(*xs)
            self.returns_tuple = isinstance(result, tuple)
            outs = [as_node(o) for o in _as_outputs(result)]
            self.out_avals = [(o.dtype_code, o.shape) for o in outs]
            self._program = compile_program(outs, xs)
        return self._program

    def __repr__(self):
        return f"<checkpoint {getattr(self.fn, '__name__', 'fn')}>"


def _as_outputs(result) -> tuple:
    outs = result if isinstance(result, tuple) else (result,)
    for o in outs:
        if not (is_tensor(o) or isinstance(o, np.ndarray)):
            raise ArgumentError("checkpoint: the function must return a tensor or a tuple "
                                f"of tensors, got {type(o).__name__}")
    return outs


def _single(values):
    """Multi-output rules return tuples; a one-output primitive returns the value."""
    return values if len(values) != 1 else values[0]


def _impl(region, *arrays):
    return _single(tuple(region.program()(*arrays)))


def _shape_rule(region, *xs):
    region.program()
    return _single(region.out_avals)


def _vjp(region, cts, out, xs, active):
    """Re-run the region on its inputs and pull the cotangents back through it.  Traced,
    the inputs pass an optimisation barrier first, so the re-run is a fresh copy that
    the program evaluates during the backward pass; eager, it records its own tape."""
    cts = cts if type(cts) is tuple else (cts,)
    outs, pullback = function_vjp(region.outputs, *[_barrier(x) for x in xs])
    return pullback(tuple(st.full_like(o, 0) if c is None else c for c, o in zip(cts, outs)))


def _jvp(region, tangents, out, xs):
    seeds = tuple(st.full_like(x, 0) if t is None else t for t, x in zip(tangents, xs))
    _, tangents_out = function_jvp(region.outputs, tuple(xs), seeds)
    return _single(tuple(tangents_out))


_checkpoint_primitive = per_output_count("checkpoint", _impl, _shape_rule, _jvp, _vjp,
                                         Instance(Region))


def checkpoint(fn: Callable) -> Callable:
    """``fn`` whose internal values are recomputed in the backward pass, not stored.

    ``fn`` takes tensors (positionally) and returns a tensor or a tuple of tensors.
    Called on plain arrays (nothing to differentiate) it simply runs ``fn``.
    """
    if not callable(fn):
        raise ArgumentError(f"checkpoint: fn must be callable, got {type(fn).__name__}")
    regions: dict = {}

    @functools.wraps(fn)
    def wrapped(*args):
        if any_traced(args):
            avals = tuple((tuple(shape_of(a)), _dtype_of(a)) for a in args)  # the signature
            region = regions.get(avals)
            if region is None:
                region = regions[avals] = Region(fn, avals, False)
            region.program()
            n_out = len(region.out_avals)
            result = bind(_checkpoint_primitive(n_out), region, *args)
            if n_out == 1:
                return (result,) if region.returns_tuple else result
            return result
        if not any_requires_grad(args):
            return fn(*args)
        with no_grad():
            result = fn(*args)
        outs = _as_outputs(result)
        region = Region(fn, None, isinstance(result, tuple))
        prim = _checkpoint_primitive(len(outs))
        arrays = tuple([array_value(o) for o in outs])
        recorded = _core.record_tape(prim, region, tuple(args), arrays)
        return recorded if region.returns_tuple else recorded[0]

    return wrapped


def _dtype_of(x):
    return x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype


__all__ = ["checkpoint"]

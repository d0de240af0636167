"""Registering derivative rules: one line for each common shape of rule.

The engine calls two functions per primitive (see :class:`~tenpy_ad.primitive.Primitive`)::

    prim.jvp(params, tangents, out, xs)         -> output tangent (a tuple if multi-output)
    prim.vjp(params, cotangent, out, xs, active) -> one cotangent per input

``tangents`` hold ``None`` for symbolic zeros and ``active[i]`` says whether input ``i``
needs a cotangent at all.  The helpers below build those two functions from smaller
pieces, and are the one place that deals with symbolic zeros and the ``active`` mask:

* :func:`defjvp` / :func:`defvjp` — one rule per input, as JAX's ``defjvp`` and autograd's
  ``defvjp``: ``rule(params, g, out, *xs)``.  JVP contributions of the inputs with a
  non-zero tangent are summed; VJP rules run only for the inputs that need them.
* :func:`deflinear` — a primitive linear in its operands: the JVP applies the primitive to
  the tangents, the VJP is its transpose, one rule per operand as for ``defvjp``.
* :func:`defrules` — whole rules, for primitives whose outputs or inputs are coupled
  (``svd``, ``qr``, ...): ``jvp(params, tangents, out, xs)``,
  ``vjp(params, cts, out, xs, active)``.

A slice's transpose is a *block cotangent*, zero outside the slice (the core's
``BlockCotangent``): the sweeps hand VJP rules dense values, except to the rules of
:func:`takes_block_cotangents` (the decompositions, which read which triplets the loss
uses from it); the input cotangents of entrywise primitives (``elementwise`` ones, and
those of :func:`local_cotangents`) keep the block of theirs.

Rules are written with the library's own operations, so one rule serves traced transforms
(any order), eager ``.backward()`` and plain arrays.  Contributions are added with ``+``
(they all have the output's shape and dtype).
"""
from __future__ import annotations

from typing import Callable

from ._compiled import _core
from .primitive import Primitive, bind, bind1, full_like, primitive

__all__ = ["defjvp", "defvjp", "deflinear", "defrules", "linear_jvp", "zero_rule",
           "takes_block_cotangents", "local_cotangents"]


def defrules(prim: Primitive, jvp: Callable, vjp: Callable) -> Primitive:
    """Attach whole JVP and VJP rules (they handle ``None`` and ``active`` themselves)."""
    prim.jvp = jvp
    prim.vjp = vjp
    return prim


def per_output_count(name: str, impl: Callable, shape_rule: Callable, jvp: Callable,
                     vjp: Callable, params) -> Callable[[int], Primitive]:
    """A family of primitives ``name/n`` with ``n`` outputs and whole rules
    (:func:`defrules`), each registered on first use: ``family(n)`` -> the primitive;
    ``params`` the schema of their params (:mod:`tenpy_ad.param_schema`)."""
    made: dict = {}

    def family(n_outputs: int) -> Primitive:
        prim = made.get(n_outputs)
        if prim is None:
            prim = primitive(f"{name}/{n_outputs}", impl, shape_rule, n_outputs=n_outputs,
                             format_params=repr, params=params)
            made[n_outputs] = defrules(prim, jvp, vjp)
        return prim
    return family


def zero_rule(params, g, out, *xs):
    """The rule of an input the output does not depend on differentiably (a mask, an
    index): its contribution is a symbolic zero."""
    return None


def defjvp(prim: Primitive, *rules: Callable) -> Primitive:
    """``rules[i](params, t_i, out, *xs)``: the output tangent along input ``i``'s tangent
    (``None`` for none); the contributions of the inputs with a tangent are summed."""
    prim.jvp = _core.PerInputJVP(rules)
    return prim


def defvjp(prim: Primitive, *rules: Callable) -> Primitive:
    """``rules[i](params, ct, out, *xs)``: the cotangent of input ``i`` (called only for
    the inputs that need one)."""
    prim.vjp = _core.PerInputVJP(rules)
    return prim


def deflinear(prim: Primitive, *transposes: Callable) -> Primitive:
    """A primitive linear in its operands (jointly): the JVP is the primitive applied to
    the tangents (:func:`linear_jvp`); the VJP is the transpose, given per operand as for
    :func:`defvjp`: ``transposes[i](params, ct, out, *xs)``."""
    prim.jvp = linear_jvp(prim)
    prim.vjp = _core.PerInputVJP(transposes)
    return prim


def linear_jvp(prim: Primitive) -> Callable:
    """The JVP of a primitive linear in its operands: the primitive applied to the
    tangents, with zeros for the symbolic zeros of other operands (for primitives with a
    variable number of operands, whose VJP is a whole rule: ``defrules``)."""
    def jvp(params, tangents, out, xs):
        if len(tangents) == 1:
            return bind1(prim, params, tangents[0])
        return bind(prim, params, *[full_like(x, 0) if t is None else t
                                    for t, x in zip(tangents, xs)])
    return jvp


def takes_block_cotangents(prim: Primitive) -> Primitive:
    """Let ``prim``'s VJP receive block cotangents as they are (it reads their range with
    :mod:`tenpy_ad.ops.linalg.truncation`); other VJPs get dense values."""
    prim.block_cotangents = _core.BLOCK_COTANGENTS_TAKEN
    return prim


def local_cotangents(prim: Primitive) -> Primitive:
    """Declare ``prim`` entrywise (each input cotangent entry depends on the same entry of
    the output's cotangent only), as ``elementwise`` primitives are: its input cotangents
    keep the block of a block cotangent."""
    prim.block_cotangents = _core.BLOCK_COTANGENTS_LOCAL
    return prim

"""A loss's own cotangents of a decomposition, told from derived ones (the gauge check).

The complex gauge check (:mod:`.gauge`) asks whether a loss depends on the arbitrary
phases of the singular vectors or eigenvectors: the phase-dependent part of the
cotangents that reach ``svd``/``eigh``/``eig`` (``Im(v_j^H g_j)`` per column) must
vanish, to rounding relative to those cotangents.  A derivative of a derivative (a
Hessian-vector product, a gradient of a gradient or of a JVP) sends the decomposition more
cotangents: from the uses of its outputs in its own rules (the VJP's ``v core v^H``, the
JVP's ``v (F o dP)``) and from the loss's derivative.  For a phase-invariant loss their
phase-dependent parts cancel in their sum only, and where the second derivative does not
go through the vectors (``sum |v|^2``, sums of eigenvalues, projectors onto every vector)
the sum itself is rounding noise: relative to it the noise is O(1), and no tolerance
tells it from a dependence on the phase.  Nor need one: such cotangents carry no news
about the loss, whose own cotangents were checked where they were seen, and that check is
carried into every derivative of the rule that ran it (:mod:`.gauge`).

So each decomposition primitive has a last, zero-size output, its *token*, that users
never see.  The results of its rules that may be differentiated again pass through
:func:`mark_derived`, an identity whose VJP sends an empty cotangent to the token: a VJP
that finds a cotangent on its token was reached through its own rules and skips the check
(:func:`loss_cotangents`).  A JVP's tangents pass through :func:`guard_tangents`, whose
VJP -- a reverse pass over a forward-mode derivative -- checks the cotangents it gets for
them, which are then the loss's own cotangents of the outputs, unless its own token shows
that they are derived too.  Real inputs have no phase and use neither.

Which tokens a node points at: a rule's result points at its decomposition's token, a
guard's VJP results at the guard's own token (its last output).  A forward-mode
derivative of a mark or guard points at the same tokens, at their tangents (the tangent
of a decomposition's token is the token of the guard of that JVP) and, for a guard, at
its own token: so every sweep through a derivative of a rule reaches the token of each
node whose outputs it sends derived cotangents (tests/test_gauge_second_order.py checks
every composition of up to three transforms).

Not seen: a loss that adds a phase-dependent function of a decomposition to a derivative
of another loss of the same decomposition (``L1(x) + Re<grad L2(x), c>``) -- the
decomposition then receives both kinds of cotangents at once and skips the check.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ... import dtypes
from ...param_schema import EPS, SIZE, Struct, Text
from ...primitive import bind, code_of_value, primitive, shape_of
from ...rules import defrules, per_output_count
from .. import structural as st
from .gauge import gauge_checked
from .truncation import differentiable

#: the token's shape: no entries, so it costs nothing and its cotangent only says "here"
TOKEN_SHAPE = (0,)

#: name -> phase(values, cotangents, eps) -> (residual, reference) or None: the gauge
#: check's operands for the cotangents of a decomposition's outputs (registered by each
#: decomposition module; the tangent guard computes them from its own cotangents)
PHASES: dict = {}


def token_result(code: int) -> tuple:
    """The token's ``(dtype code, shape)`` in a shape rule (the real dtype of ``code``)."""
    return dtypes.real_code(code), TOKEN_SHAPE


def empty_token(like) -> np.ndarray:
    """A token for an implementation whose operand is ``like`` (an ndarray): one shared,
    read-only empty array per dtype (it holds no values to overwrite)."""
    dtype = getattr(like, "dtype", None) or np.asarray(like).dtype
    token = _TOKENS.get(dtype)
    if token is None:
        token = _TOKENS[dtype] = np.zeros(TOKEN_SHAPE, np.empty(0, dtype).real.dtype)
        token.flags.writeable = False
    return token


_TOKENS: dict = {}


def loss_cotangents(token_cotangent) -> bool:
    """Whether a decomposition's cotangents are a loss's own (none reached its token)."""
    return token_cotangent is None


def _flag(token):
    return st.full_like(token, 0)


def _flags(tokens, active):
    """The (empty) cotangents that tell the ``tokens``' owners they were reached."""
    return tuple(_flag(t) if wanted else None for t, wanted in zip(tokens, active))


def _pointed(tokens, tangents, own=None) -> tuple:
    """The tokens a forward-mode derivative of a mark or guard points at: the same ones,
    their tangents (the guards of that derivative's JVPs) and the guard's own token (so
    that the guard learns of the derived cotangents its outputs get), each once."""
    chosen = []
    for t in list(tokens) + [t for t in tangents if t is not None] + (
            [] if own is None else [own]):
        if not any(t is c for c in chosen):
            chosen.append(t)
    return tuple(chosen)


# ---------------------------------------------------------------- marks of rule results

def _mark_jvp(params, tangents, out, xs):
    if tangents[0] is None:
        return None
    return mark_derived(tangents[0], *_pointed(xs[1:], tangents[1:]))


def _mark_vjp(params, ct, out, xs, active):
    if ct is None:
        return (None,) * len(xs)
    return (ct,) + _flags(xs[1:], active[1:])


derived_mark_p = primitive("derived_mark", lambda params, x, *tokens: x,
                           lambda params, x, *tokens: x, static_shapes=True)
defrules(derived_mark_p, _mark_jvp, _mark_vjp)


def mark_derived(x, *tokens):
    """``x``, a result of a rule of the decomposition (or guard) whose token is among
    ``tokens``; its derivatives keep the mark (see the module docstring)."""
    return bind(derived_mark_p, None, x, *tokens)


def mark_rule_result(x, token, phased: bool, again: bool):
    """``x`` marked when it may be differentiated again (``again``) and the decomposition
    has phases to check (``phased``: complex vectors)."""
    if x is None or not again or not phased:
        return x
    return mark_derived(x, token)


# ---------------------------------------------------------------- the tangent guard
# operands: the n tangents, the m values the check reads, the tokens pointed at;
# outputs: the tangents and the guard's own token; params (name, eps, n, m)

def _guard_impl(params, *operands):
    n, m = params[2], params[3]
    return tuple(operands[:n]) + (np.zeros_like(operands[n + m]),)


def _guard_rule(params, *operands):
    n, m = params[2], params[3]
    kept = operands[:n] + operands[n + m:n + m + 1]          # the tangents, a token
    return [(code_of_value(x), shape_of(x)) for x in kept]


def _guard_jvp(params, tangents, out, xs):
    """The guard again, on the tangents of the tangents (the values are constants: they
    only feed the check), pointing also at its own token and the tangents of its tokens."""
    n, m = params[2], params[3]
    if all(t is None for t in tangents[:n]):
        return (None,) * (n + 1)
    moved = [st.full_like(x, 0) if t is None else t for t, x in zip(tangents, xs[:n])]
    tokens = _pointed(xs[n + m:], tangents[n + m:], own=out[n])
    return tuple(_bind_guard(params, moved, xs[n:n + m], tokens))


def _guard_vjp(params, cts, out, xs, active):
    """The cotangents of the tangents, checked when they are a loss's own; marked with the
    guard's token when they may be differentiated again, as a decomposition's VJP is."""
    name, eps, n, m = params
    given = list(cts[:n])
    if all(g is None for g in given):
        return (None,) * len(xs)
    if loss_cotangents(cts[n]):
        found = PHASES[name](xs[n:n + m], given, eps)
        if found is not None:
            k = next(i for i, g in enumerate(given) if g is not None)
            given[k] = gauge_checked(given[k], found[0], found[1], name)
    again = differentiable(*given)
    given = [mark_rule_result(g, out[n], True, again) for g in given]
    return tuple(given) + (None,) * m + _flags(xs[n + m:], active[n + m:])


_guards = per_output_count("tangent_gauge_guard", _guard_impl, _guard_rule, _guard_jvp,
                           _guard_vjp, Struct(Text("a decomposition's name", r"[a-z_]+",
                                                   max_length=64, example="eigh"),
                                              EPS, SIZE, SIZE))
for _count in (3, 4):       # (dw, dv) and (du, ds, dvh) with the token: registered now, so
    _guards(_count)         # that a saved program finds them by name in a fresh process


def _bind_guard(params, tangents, values, tokens):
    return bind(_guards(params[2] + 1), params, *tangents, *values, *tokens)


def guard_tangents(name: str, eps: float, tangents, values, token, phased: bool):
    """A JVP's ``tangents`` (all of them, none None) and the tangent of the token: the
    tangents pass through the guard when the decomposition has phases to check
    (``phased``; else unchanged, with no tangent of the token).  ``values``: the outputs
    the phase check reads (``PHASES[name]``)."""
    if not phased:
        return tuple(tangents) + (None,)
    params = (name, float(eps), len(tangents), len(values))
    return tuple(_bind_guard(params, list(tangents), list(values), (token,)))


def register_phase(name: str, phase: Callable) -> None:
    """``phase(values, cotangents, eps) -> (residual, reference) | None`` for ``name``."""
    PHASES[name] = phase

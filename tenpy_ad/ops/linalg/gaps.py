"""The broadened spectral-gap factors of the decomposition rules as one primitive.

``spectral_gaps(s_rows, s_cols)`` gives ``minus + plus`` and ``minus - plus`` of

    minus[i, j] = 0.5 L(s_j - s_i),    plus[i, j] = w L(s_j + s_i),

with ``L(x) = x / (x^2 + eps + pin)`` the broadened ``1/x`` and ``w`` = 0.5 (or, with
``same_indices``, 0 on the diagonal i == j and 0.5 elsewhere; ``pin`` = 1 there, so those
entries are 0 even for eps = 0).  The rules combine them as ``(minus + plus) o A +
(minus - plus) o B`` (:func:`.matrix.combine_gaps`).  Written with elementwise ops this is a dozen nodes per
SVD rule; as one primitive it is one node (one step of a program, one NumPy pass in an
eager backward), which is most of what a rule costs on small matrices.  The values are
those of the elementwise form (``pin + eps`` is added at once: the pinned entries have
``x = 0``, so the sums are the same).

The derivatives use ``L'(x) = (c - x^2) / (x^2 + c)^2`` with ``c = eps + pin``, written with
the library's ops, so the rules differentiate again to any order.
"""
from __future__ import annotations

import functools

import numpy as np

from ... import dtypes
from ...errors import ShapeError
from ...param_schema import BOOL, EPS, Struct
from ...primitive import bind, code_of_value, describe, primitive, shape_of
from ...rules import defrules
from .. import structural as st


@functools.lru_cache(maxsize=256)
def _shifted_pin(rows: int, cols: int, code: int, eps: float) -> tuple:
    """For ``same_indices``: ``pin + eps`` (``pin`` ones at (i, i), else 0) and the weight
    of ``plus`` (0 at (i, i), else 0.5), read-only arrays of dtype ``code``."""
    pin = np.eye(rows, cols, dtype=dtypes.DTYPES[code])
    weight = (1 - pin) * 0.5
    shifted = pin + eps
    shifted.flags.writeable = False
    weight.flags.writeable = False
    return shifted, weight


def _shift_and_weight(params, rows: int, cols: int, code: int):
    """``c`` of ``L(x) = x / (x^2 + c)`` (eps, or ``pin + eps``: the same sums, as the pinned
    entries have x = 0) and the weight of ``plus``."""
    if not params[1]:
        return params[0], 0.5
    return _shifted_pin(rows, cols, code, params[0])


def _impl(params, s_rows, s_cols):
    c, weight = _shift_and_weight(params, s_rows.shape[-1], s_cols.shape[-1],
                                  dtypes.value_code(s_rows.dtype))
    rows, cols = s_rows[..., :, None], s_cols[..., None, :]
    minus, plus = cols - rows, cols + rows
    f_minus = (minus / (minus * minus + c)) * 0.5
    f_plus = (plus / (plus * plus + c)) * weight
    return f_minus + f_plus, f_minus - f_plus


def _shape_rule(params, s_rows, s_cols):
    rows, cols = shape_of(s_rows), shape_of(s_cols)
    code = code_of_value(s_rows)
    if (not rows or not cols or rows[:-1] != cols[:-1] or code != code_of_value(s_cols)
            or dtypes.is_complex(code)):
        raise ShapeError(f"spectral_gaps: expected real vectors of one batch shape and "
                         f"dtype, got {describe(s_rows)} and {describe(s_cols)}")
    shape = tuple(rows) + tuple(cols[-1:])
    return [(code, shape), (code, shape)]


def outer_operands(v_rows, v_cols):
    """The vectors ``v_rows`` (as a column) and ``v_cols`` (as a row), of one batch shape,
    broadcast to the rows x cols matrices."""
    rows = st.reshape(v_rows, tuple(shape_of(v_rows)) + (1,))
    cols = st.reshape(v_cols, tuple(shape_of(v_cols)[:-1]) + (1, shape_of(v_cols)[-1]))
    shape = tuple(shape_of(rows)[:-1]) + tuple(shape_of(cols)[-1:])
    return st.broadcast_to(rows, shape), st.broadcast_to(cols, shape)


def _slopes(params, s_rows, s_cols):
    """``0.5 L'(s_j - s_i)`` and ``w L'(s_j + s_i)``."""
    c, weight = _shift_and_weight(params, shape_of(s_rows)[-1], shape_of(s_cols)[-1],
                                  code_of_value(s_rows))
    rows, cols = outer_operands(s_rows, s_cols)
    slopes = []
    for x, w in ((cols - rows, 0.5), (cols + rows, weight)):
        square = x * x
        denominator = square + c
        slopes.append((-square + c) / (denominator * denominator) * w)
    return slopes


def _jvp(params, tangents, out, xs):
    t_rows, t_cols = tangents
    zero_rows = st.full_like(xs[0], 0) if t_rows is None else t_rows
    zero_cols = st.full_like(xs[1], 0) if t_cols is None else t_cols
    d_rows, d_cols = outer_operands(zero_rows, zero_cols)
    slope_minus, slope_plus = _slopes(params, *xs)
    t_minus, t_plus = slope_minus * (d_cols - d_rows), slope_plus * (d_cols + d_rows)
    return t_minus + t_plus, t_minus - t_plus


def _vjp(params, cts, out, xs, active):
    # the outputs are (Fm + Fp, Fm - Fp); Fm depends on s_j - s_i, Fp on s_j + s_i
    ct_minus, ct_plus = _sum_and_difference(*cts)
    slope_minus, slope_plus = _slopes(params, *xs)
    to_cols, to_rows = _sum_and_difference(ct_plus * slope_plus, ct_minus * slope_minus)
    last = len(shape_of(to_cols)) - 1
    return (st.reduce_sum(to_rows, (last,)) if active[0] else None,
            st.reduce_sum(to_cols, (last - 1,)) if active[1] else None)


def _sum_and_difference(a, b):
    """``(a + b, a - b)`` with None for a zero term (not both)."""
    if b is None:
        return a, a
    if a is None:
        return b, -b
    return a + b, a - b


spectral_gaps_p = primitive(
    "spectral_gaps", _impl, _shape_rule, n_outputs=2,
    format_params=lambda p: f"eps={p[0]:g} same_indices={p[1]}", static_shapes=True,
    params=Struct(EPS, BOOL))
defrules(spectral_gaps_p, _jvp, _vjp)


def spectral_gaps(s_rows, s_cols, eps: float, same_indices: bool):
    """``(minus + plus, minus - plus)`` with ``minus = 0.5 L(s_j - s_i)``, ``plus = w
    L(s_j + s_i)`` for ``s_i`` in ``s_rows``, ``s_j`` in ``s_cols`` (see the module
    docstring)."""
    return bind(spectral_gaps_p, (float(eps), bool(same_indices)), s_rows, s_cols)

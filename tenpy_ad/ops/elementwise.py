"""Elementwise primitives.

Binary primitives take operands of one shape and one dtype (the numpy-like surface inserts
``broadcast_in_dim`` and ``convert_element_type`` first), so their rules never unbroadcast.

Complex convention: a VJP is the adjoint for the real inner product Re<a, b>, i.e. the
transpose of the derivative seen as a real-linear map.  For a real loss ``L(z)`` the
gradient is ``dL/dx + i dL/dy`` (the steepest-ascent direction, as in PyTorch; JAX returns
its complex conjugate).  For holomorphic ``f`` that means ``ct_x = ct * conj(f'(x))``.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .. import dtypes
from .._compiled import _core
from ..errors import DTypeError, ShapeError
from ..param_schema import Int, ScalarOf
from ..primitive import (bind, bind1, bind2, code_of_value, describe, full_like,
                         is_complex_value, primitive, same_meta, shape_of)
from ..rules import deflinear, defjvp, defrules, defvjp, local_cotangents, zero_rule
from ..step_facts import ElementwiseLoop, declare_steps
from ..tree import tree_map

Scalar = _core.Scalar
#: an identity shortcut's result (x * 1, x.astype(x.dtype)): a new handle, as NumPy's copy
fresh_handle = _core.fresh_handle

#: a traced copy: the identity, as a unique node that in-place writes may go into
copy_p = primitive("copy", lambda params, x: x, lambda params, x: x)
deflinear(copy_p, lambda params, ct, out, x: ct)


#: NumPy's new array of ``x``'s value: a new eager handle, a unique traced ``copy`` node
fresh_array = _core.new_array


def fresh_result(x):
    """:func:`fresh_array` for a ufunc's or a reduction's identity shortcut (``np.sum`` of
    a 0-d array, ``np.conj`` of a real one): NumPy gives a 0-d result as a scalar."""
    return _core.as_scalar_result(fresh_array(x))


def same_as_input(params, x):
    """Shape rule of an elementwise primitive: the output is like its (first) operand."""
    return x


def same_operands(name):
    """Shape rule of a binary elementwise primitive: operands of one shape and dtype."""
    def rule(params, x, y):
        if not same_meta(x, y):
            raise ShapeError(f"{name}: operands {describe(x)} and {describe(y)} differ; use "
                             "the numpy-like functions (tp.add, +, ...) for broadcasting and "
                             "promotion")
        return x
    return rule


def unary(name: str, fn: Callable, derivative: Callable | None = None):
    """An elementwise primitive computing ``fn``.

    ``derivative(x, out)`` is ``f'(x)`` (the complex derivative for holomorphic ``f``):
    the JVP is ``t f'(x)`` and the VJP ``ct conj(f'(x))``.  Without it, attach rules.
    """
    prim = primitive(name, lambda params, x: fn(x), same_as_input, array_fn=fn,
                     elementwise=True)
    if derivative is not None:
        defjvp(prim, lambda params, t, out, x: mul(t, derivative(x, out)))
        defvjp(prim, lambda params, ct, out, x: mul(ct, conj(derivative(x, out))))
    return prim


def binary(name: str, fn: Callable, d_x: Callable | None = None,
           d_y: Callable | None = None):
    """An elementwise primitive computing ``fn`` on two operands of one shape and dtype.

    ``d_x(x, y, out)`` and ``d_y(x, y, out)`` are the partial derivatives (complex ones for
    holomorphic ``fn``): the JVP is ``tx d_x + ty d_y``, the VJPs ``ct conj(d_x)`` and
    ``ct conj(d_y)``.  Without them, attach rules.
    """
    prim = primitive(name, lambda params, x, y: fn(x, y), same_operands(name), array_fn=fn,
                     elementwise=True)
    if d_x is not None and d_y is not None:
        defjvp(prim, lambda p, t, out, x, y: mul(t, d_x(x, y, out)),
               lambda p, t, out, x, y: mul(t, d_y(x, y, out)))
        defvjp(prim, lambda p, ct, out, x, y: mul(ct, conj(d_x(x, y, out))),
               lambda p, ct, out, x, y: mul(ct, conj(d_y(x, y, out))))
    return prim


# ------------------------------------------------------------------ add, sub, neg

add_p = binary("add", np.add)
defjvp(add_p, lambda p, t, out, x, y: t, lambda p, t, out, x, y: t)
defvjp(add_p, lambda p, ct, out, x, y: ct, lambda p, ct, out, x, y: ct)

sub_p = binary("sub", np.subtract)
defvjp(sub_p, lambda p, ct, out, x, y: ct, lambda p, ct, out, x, y: neg(ct))


def _sub_jvp(params, tangents, out, xs):
    tx, ty = tangents      # one subtraction, not a negation plus an addition
    return tx if ty is None else neg(ty) if tx is None else sub(tx, ty)


sub_p.jvp = _sub_jvp

neg_p = unary("neg", np.negative)
deflinear(neg_p, lambda params, ct, out, x: neg(ct))


def add(x, y):
    return bind2(add_p, None, x, y)


def sub(x, y):
    return bind2(sub_p, None, x, y)


def neg(x):
    return bind1(neg_p, None, x)


# ------------------------------------------------------------------ mul, div

mul_p = binary("mul", np.multiply)
defjvp(mul_p, lambda p, t, out, x, y: mul(t, y), lambda p, t, out, x, y: mul(t, x))
# a product's cotangent is zero where a traced constant factor is (a mask that keeps some
# columns): declared, so that a decomposition's rule sees the columns the loss uses
defvjp(mul_p, lambda p, ct, out, x, y: _core.zero_where_constant(mul(ct, conj(y)), y),
       lambda p, ct, out, x, y: _core.zero_where_constant(mul(ct, conj(x)), x))


def _div_jvp(params, tangents, out, xs):
    tx, ty = tangents      # (tx - out ty) / y: one division for both tangents
    y = xs[1]
    if ty is None:
        return div(tx, y)
    if tx is None:
        return neg(div(mul(out, ty), y))
    return div(sub(tx, mul(out, ty)), y)


def _div_vjp(params, ct, out, xs, active):
    ct_x = div(ct, conj(xs[1]))          # shared by both cotangents
    return ct_x, neg(mul(ct_x, conj(out))) if active[1] else None


div_p = binary("div", np.divide)
div_p.jvp = _div_jvp
div_p.vjp = _div_vjp


def mul(x, y):
    return bind2(mul_p, None, x, y)


def div(x, y):
    return bind2(div_p, None, x, y)


# ------------------------------------------------------------------ scale (static scalar)

def _scale_rule(scalar, x):
    """Shape rule of the static-scalar operations: a complex scalar needs a complex
    operand (the surface promotes it first)."""
    if isinstance(scalar.value, complex) and not is_complex_value(x):
        raise DTypeError(f"scale/shift: a complex scalar needs a complex operand (got "
                         f"{describe(x)}); promote the operand first")
    return x


scale_p = primitive("scale", lambda factor, x: np.multiply(x, factor.value), _scale_rule,
                    format_params=repr, elementwise=True, params=ScalarOf(float, complex))
deflinear(scale_p, lambda factor, ct, out, x: bind1(scale_p, factor.conjugate(), ct))


def scale(x, factor):
    """``x * factor`` for a Python scalar ``factor`` kept as a static parameter."""
    if factor == 1 and not isinstance(factor, complex) and not is_complex_value(x):
        return fresh_handle(x)    # exact for real x (complex x*1: 0+inf j -> nan+inf j)
    factor = complex(factor) if isinstance(factor, complex) else float(factor)
    return bind1(scale_p, Scalar(factor), x)


# ------------------------------------------------------------------ shift (static scalar)

shift_p = primitive("shift", lambda term, x: np.add(x, term.value), _scale_rule,
                    format_params=repr, elementwise=True, params=ScalarOf(float, complex))
defjvp(shift_p, lambda term, t, out, x: t)
defvjp(shift_p, lambda term, ct, out, x: ct)


def shift(x, term):
    """``x + term`` for a Python scalar ``term`` kept as a static parameter (one node where
    a constant would need a constant, a broadcast and an addition)."""
    term = complex(term) if isinstance(term, complex) else float(term)
    return bind1(shift_p, Scalar(term), x)


# ------------------------------------------------------------------ C kernels in programs

# small float64 steps of the exactly rounded operations skip NumPy's per-call machinery
for _prim, _op in ((add_p, "add"), (sub_p, "sub"), (mul_p, "mul"), (div_p, "div"),
                   (neg_p, "neg")):
    declare_steps(_prim, c_kernel=ElementwiseLoop(_op))
declare_steps(scale_p, c_kernel=ElementwiseLoop("scale", lambda factor: factor.value,
                                                np.multiply))
declare_steps(shift_p, c_kernel=ElementwiseLoop("shift", lambda term: term.value, np.add))


# ------------------------------------------------------------------ power (static exponent)

def _power_derivative(exponent, x):
    return scale(power(x, exponent - 1), exponent)


def _power_jvp(exponent, t, out, x):
    if exponent.value == 0:
        return full_like(out, 0)    # x ** 0 is 1 everywhere, also at x = 0: slope 0
    return mul(t, _power_derivative(exponent.value, x))


def _power_vjp(exponent, ct, out, x):
    if exponent.value == 0:
        return full_like(x, 0)      # (0 * x**-1 would be NaN at x = 0)
    return mul(ct, conj(_power_derivative(exponent.value, x)))


pow_p = primitive("pow", lambda exponent, x: np.power(x, exponent.value), same_as_input,
                  format_params=lambda exponent: f"exponent={exponent!r}", elementwise=True,
                  params=ScalarOf(int, float))
defjvp(pow_p, _power_jvp)
defvjp(pow_p, _power_vjp)


def power(x, exponent):
    """``x ** exponent`` for a static real exponent.  ``x ** 0`` is a node too (its
    derivative is zero), so an eager result requires grad when ``x`` does, as in
    PyTorch."""
    if exponent == 1:
        return fresh_handle(x)
    exponent = int(exponent) if float(exponent).is_integer() else float(exponent)
    return bind1(pow_p, Scalar(exponent), x)


# ------------------------------------------------------------------ analytic functions

def _tanh_derivative(x, out):
    return sub(full_like(out, 1), mul(out, out))


exp_p = unary("exp", np.exp, lambda x, out: out)
sin_p = unary("sin", np.sin, lambda x, out: cos(x))
cos_p = unary("cos", np.cos, lambda x, out: neg(sin(x)))
tanh_p = unary("tanh", np.tanh, _tanh_derivative)

log_p = unary("log", np.log)           # quotient forms: one division instead of two ops
defjvp(log_p, lambda p, t, out, x: div(t, x))
defvjp(log_p, lambda p, ct, out, x: div(ct, conj(x)))

sqrt_p = unary("sqrt", np.sqrt)
defjvp(sqrt_p, lambda p, t, out, x: div(t, scale(out, 2.0)))
defvjp(sqrt_p, lambda p, ct, out, x: div(ct, conj(scale(out, 2.0))))


def exp(x):
    return bind1(exp_p, None, x)


def log(x):
    return bind1(log_p, None, x)


def sqrt(x):
    return bind1(sqrt_p, None, x)


def sin(x):
    return bind1(sin_p, None, x)


def cos(x):
    return bind1(cos_p, None, x)


def tanh(x):
    return bind1(tanh_p, None, x)


# ------------------------------------------------------------------ complex parts, abs, sign

conj_p = unary("conj", np.conj)
deflinear(conj_p, lambda params, ct, out, x: conj(ct))


def conj(x):
    """Complex conjugate; the identity (no node, no copy) on real values."""
    if not is_complex_value(x):
        return fresh_handle(x)       # a new array in NumPy: writes into it stay apart
    return bind1(conj_p, None, x)


def _to_real(params, x):
    return dtypes.real_code(code_of_value(x)), x.shape


real_p = primitive("real", lambda params, x: np.real(x), _to_real, array_fn=np.real)
deflinear(real_p, lambda params, ct, out, x: convert(ct, code_of_value(x)))
local_cotangents(real_p)            # entrywise, as are imag, abs, convert and select

imag_p = primitive("imag", lambda params, x: np.imag(x), _to_real, array_fn=np.imag)
local_cotangents(imag_p)
deflinear(imag_p,
          lambda params, ct, out, x: scale(convert(ct, code_of_value(x)), 1j))


def _complex_rule(params, x, y):
    code = code_of_value(x)
    if dtypes.is_complex(code) or code != code_of_value(y) or x.shape != y.shape:
        raise DTypeError(f"complex: expected two real operands of one shape and dtype, got "
                         f"{describe(x)} and {describe(y)}")
    return dtypes.complex_code(code), x.shape


def _complex_values(params, x, y):
    z = np.empty(np.shape(x), dtypes.DTYPES[dtypes.complex_code(dtypes.value_code(
        np.asarray(x).dtype))])
    z.real, z.imag = x, y                # exact: no 0 * inf of ``x + 1j * y``
    return z


#: ``x + i y`` from its parts (a write into ``z.real`` or ``z.imag``)
complex_p = primitive("complex", _complex_values, _complex_rule)
defjvp(complex_p, lambda p, t, out, x, y: convert(t, code_of_value(out)),
       lambda p, t, out, x, y: scale(convert(t, code_of_value(out)), 1j))
defvjp(complex_p, lambda p, ct, out, x, y: real(ct), lambda p, ct, out, x, y: imag(ct))


def make_complex(x, y):
    """``x + 1j * y`` of two real operands of one shape and dtype, exactly (infinite
    parts stay apart)."""
    return bind2(complex_p, None, x, y)


def real(x):
    if not is_complex_value(x):
        return x
    return bind1(real_p, None, x)


def imag(x):
    if is_complex_value(x):
        return bind1(imag_p, None, x)
    return full_like(x, 0)


def _complex_sign_derivative(x, s, t):
    """d(z/|z|) along ``t``: ``(t - s Re(conj(s) t)) / |z|``, a symmetric real-linear map
    (so it is its own VJP); 0 at ``z == 0``, where the sign jumps (as the real sign's, so
    ``abs`` has second derivative 0 there too).  Real signs are locally constant:
    derivative zero."""
    if not is_complex_value(x):
        return None
    code = code_of_value(x)
    size = abs(x)
    zero = is_zero(size)
    radial = mul(s, convert(real(mul(conj(s), t)), code))
    away = div(sub(t, radial), convert(select(zero, full_like(size, 1), size), code))
    return select(zero, full_like(away, 0), away)


sign_p = unary("sign", np.sign)
defjvp(sign_p, lambda p, t, out, x: _complex_sign_derivative(x, out, t))
defvjp(sign_p, lambda p, ct, out, x: _complex_sign_derivative(x, out, ct))


def sign(x):
    """Sign, and ``z/|z|`` for complex ``z`` (0 at 0)."""
    return bind1(sign_p, None, x)


def _abs_jvp(params, t, out, x):
    if is_complex_value(x):
        return real(mul(conj(sign(x)), t))
    return mul(t, sign(x))


abs_p = primitive("abs", lambda params, x: np.abs(x), _to_real, array_fn=np.abs)
local_cotangents(abs_p)
defjvp(abs_p, _abs_jvp)
defvjp(abs_p, lambda p, ct, out, x: mul(convert(ct, code_of_value(x)), sign(x)))


def abs(x):  # noqa: A001 - NumPy's name
    return bind1(abs_p, None, x)


# ------------------------------------------------------------------ dtype conversion

def _convert_rule(code, x):
    if (dtypes.is_complex(code_of_value(x)) and not dtypes.is_complex(code)
            and code != dtypes.BOOL):          # to bool is a test for non-zero, as NumPy's
        raise DTypeError(f"convert_element_type: {describe(x)} -> "
                         f"{dtypes.DTYPES[code].name} would drop the imaginary part; take "
                         ".real explicitly")
    return code, x.shape


def _convert_back(ct, code):
    """The cotangent of an input of dtype ``code`` from an output cotangent ``ct``."""
    if not dtypes.is_complex(code):
        ct = real(ct)
    return convert(ct, code)


convert_p = primitive("convert_element_type",
                      lambda code, x: np.asarray(x).astype(dtypes.DTYPES[code]),
                      _convert_rule, format_params=lambda code: dtypes.DTYPES[code].name,
                      params=Int(0, len(dtypes.DTYPES) - 1))
# bool and int64 values are not differentiated: no tangent into them, no cotangent out
defjvp(convert_p, lambda code, t, out, x: convert(t, code) if dtypes.is_inexact(code) else None)
defvjp(convert_p, lambda code, ct, out, x: _convert_back(ct, code_of_value(x))
       if dtypes.is_inexact(code_of_value(x)) else None)
local_cotangents(convert_p)


def convert(x, code: int):
    """Change the dtype to ``code`` (no node when it already has it)."""
    if code_of_value(x) == code:
        return fresh_handle(x)       # astype copies in NumPy: writes into it stay apart
    return bind1(convert_p, code, x)


# ------------------------------------------------------------------ comparison mask

eq_mask_p = binary("eq_mask", lambda x, y: np.equal(x, y).astype(np.result_type(x, y)))
defjvp(eq_mask_p, zero_rule, zero_rule)
defvjp(eq_mask_p, zero_rule, zero_rule)


def eq_mask(x, y):
    """1 where ``x == y`` else 0, in the operands' dtype; not differentiable (zero)."""
    return bind2(eq_mask_p, None, x, y)


# ------------------------------------------------------------------ sqrt with a subgradient

def _safe_sqrt_derivative(out):
    """``1/(2 sqrt)``, with 0 where the square root is 0 (the subgradient of ``|x|`` at 0
    that norms use)."""
    zero = eq_mask(out, full_like(out, 0.0))
    return 0.5 * (1.0 - zero) / (out + zero)


safe_sqrt_p = unary("safe_sqrt", np.sqrt)
defjvp(safe_sqrt_p, lambda p, t, out, x: t * _safe_sqrt_derivative(out))
defvjp(safe_sqrt_p, lambda p, ct, out, x: ct * _safe_sqrt_derivative(out))


def safe_sqrt(x):
    """Square root of a non-negative real ``x`` whose derivative at 0 is taken as 0."""
    return bind1(safe_sqrt_p, None, x)


# ------------------------------------------------------------------ comparisons (bool)

def _comparison_rule(name):
    same = same_operands(name)

    def rule(params, x, y):
        same(params, x, y)
        return dtypes.BOOL, x.shape
    return rule


def comparison(name: str, fn: Callable):
    """An elementwise predicate of two operands of one shape and dtype: a bool result,
    which is not differentiated (no tangent out, no cotangent back)."""
    prim = primitive(name, lambda params, x, y: fn(x, y), _comparison_rule(name))
    defjvp(prim, zero_rule, zero_rule)
    defvjp(prim, zero_rule, zero_rule)
    return prim


equal_p = comparison("equal", np.equal)
not_equal_p = comparison("not_equal", np.not_equal)
less_p = comparison("less", np.less)
less_equal_p = comparison("less_equal", np.less_equal)
greater_p = comparison("greater", np.greater)
greater_equal_p = comparison("greater_equal", np.greater_equal)


def equal(x, y):
    """``x == y`` elementwise (operands of one shape and dtype): a bool mask."""
    return bind2(equal_p, None, x, y)


def is_zero(x):
    """The bool mask of the zero entries of ``x``."""
    return equal(x, full_like(x, 0))


# ------------------------------------------------------------------ reciprocal

reciprocal_p = unary("reciprocal", np.reciprocal, lambda x, out: neg(mul(out, out)))


def reciprocal(x):
    """``1/x`` as NumPy's ``reciprocal`` computes it (integers: integer division)."""
    return bind1(reciprocal_p, None, x)


# ------------------------------------------------------------------ select (where)

def _select_rule(params, mask, x, y):
    if code_of_value(mask) != dtypes.BOOL or shape_of(mask) != shape_of(x) \
            or not same_meta(x, y):
        raise ShapeError(f"select: needs a bool mask and two operands of its shape and one "
                         f"dtype, got {describe(mask)}, {describe(x)}, {describe(y)}; use "
                         "tnp.where for broadcasting and promotion")
    return x


def _select_jvp(params, tangents, out, xs):
    _, tx, ty = tangents                # the mask has no tangent
    if tx is None and ty is None:
        return None
    zeros = full_like(out, 0)
    return select(xs[0], zeros if tx is None else tx, zeros if ty is None else ty)


def _select_vjp(params, ct, out, xs, active):
    mask, zeros = xs[0], full_like(ct, 0)
    return (None, select(mask, ct, zeros) if active[1] else None,
            select(mask, zeros, ct) if active[2] else None)


select_p = primitive("select", lambda params, mask, x, y: np.where(mask, x, y), _select_rule)
defrules(select_p, _select_jvp, _select_vjp)
local_cotangents(select_p)


def select(mask, x, y):
    """``x`` where ``mask`` else ``y`` (a bool mask; ``x`` and ``y`` of its shape and one
    dtype).  The derivative flows into the selected operand; the mask gets none."""
    return bind(select_p, None, mask, x, y)


# ------------------------------------------------------------------ stop_gradient

stop_gradient_p = unary("stop_gradient", lambda x: x)
defjvp(stop_gradient_p, zero_rule)
defvjp(stop_gradient_p, zero_rule)
stop_gradient_p.blocks_derivatives = True       # nothing past it asks for a cotangent


def stop_gradient(x):
    """The value of ``x`` with derivative zero, in every mode.  (An eager result stays
    on the tape, so ``.backward()`` through it runs, as ``grad`` does in JAX, and gives
    ``x`` nothing; ``x.detach()`` is PyTorch's spelling, a tensor off the tape.)  No
    rule past it is asked for a cotangent, in either reverse sweep.  ``x`` may be a
    pytree of tuples, lists and dicts, as in JAX: each leaf is stopped."""
    t = type(x)
    if t is tuple or t is list or t is dict:
        return tree_map(stop_gradient, x)
    return bind1(stop_gradient_p, None, x)

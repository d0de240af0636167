"""Elementwise primitives.

Binary primitives take operands of one shape and one dtype (the numpy-like surface inserts
``broadcast_in_dim`` and ``convert_element_type`` first), so their rules never unbroadcast.

Complex convention: a VJP is the adjoint for the real inner product Re<a, b>, i.e. the
transpose of the derivative seen as a real-linear map.  For a real loss ``L(z)`` the
gradient is ``dL/dx + i dL/dy`` (the steepest-ascent direction, as in PyTorch; JAX returns
its complex conjugate).  For holomorphic ``f`` that means ``ct_x = ct * conj(f'(x))``.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .._compiled import _core
from ..errors import DTypeError, ShapeError
from ..primitive import (Tensor, TracedTensor, bind1, bind2, code_of_value, is_complex_value,
                         primitive)
from . import structural as st

_intern_like = _core.intern_like
Scalar = _core.Scalar
_ndarray = np.ndarray


def _same_as_input(params, x):
    return x


def _binary_rule(name):
    def rule(params, x, y):
        if not x.same_meta(y):
            raise ShapeError(f"{name}: operands {x.dtype.name}{list(x.shape)} and "
                             f"{y.dtype.name}{list(y.shape)} differ; use the numpy-like "
                             "functions (tp.add, +, ...) for broadcasting and promotion")
        return x
    return rule


def _binary(name, impl):
    return primitive(name, lambda params, x, y: impl(x, y), _binary_rule(name), array_fn=impl,
                     elementwise=True)


def _unary(name, impl, shape_rule=_same_as_input, format_params=None):
    return primitive(name, lambda params, x: impl(x), shape_rule, format_params=format_params,
                     array_fn=impl, elementwise=shape_rule is _same_as_input)


def _tangent_sum(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return add(a, b)


# ------------------------------------------------------------------ add, sub, neg

add_p = _binary("add", np.add)
add_p.jvp = lambda params, t, out, xs: _tangent_sum(t[0], t[1])
add_p.vjp = lambda params, ct, out, xs, active: (ct, ct)

sub_p = _binary("sub", np.subtract)
sub_p.jvp = lambda params, t, out, xs: (
    t[0] if t[1] is None else neg(t[1]) if t[0] is None else sub(t[0], t[1]))
sub_p.vjp = lambda params, ct, out, xs, active: (ct, neg(ct) if active[1] else None)

neg_p = _unary("neg", np.negative)
neg_p.jvp = lambda params, t, out, xs: neg(t[0])
neg_p.vjp = lambda params, ct, out, xs, active: (neg(ct),)


def add(x, y):
    return bind2(add_p, None, x, y)


def sub(x, y):
    return bind2(sub_p, None, x, y)


def neg(x):
    return bind1(neg_p, None, x)


# ------------------------------------------------------------------ mul, div

mul_p = _binary("mul", np.multiply)
mul_p.jvp = lambda params, t, out, xs: _tangent_sum(
    None if t[0] is None else mul(t[0], xs[1]),
    None if t[1] is None else mul(xs[0], t[1]))
mul_p.vjp = lambda params, ct, out, xs, active: (
    mul(ct, conj(xs[1])) if active[0] else None,
    mul(ct, conj(xs[0])) if active[1] else None)


def _div_jvp(params, t, out, xs):
    tx, ty = t
    y = xs[1]
    if ty is None:
        return div(tx, y)
    if tx is None:
        return neg(div(mul(out, ty), y))
    return div(sub(tx, mul(out, ty)), y)


def _div_vjp(params, ct, out, xs, active):
    ct_x = div(ct, conj(xs[1]))
    return ct_x, neg(mul(ct_x, conj(out))) if active[1] else None


div_p = _binary("div", np.divide)
div_p.jvp = _div_jvp
div_p.vjp = _div_vjp


def mul(x, y):
    return bind2(mul_p, None, x, y)


def div(x, y):
    return bind2(div_p, None, x, y)


# ------------------------------------------------------------------ scale (static scalar)

def _scale_rule(params, x):
    if isinstance(params.value, complex) and not dtypes.is_complex(x.dtype_code):
        raise DTypeError("scale: a complex factor needs a complex operand "
                         f"(got {x.dtype.name}); promote the operand first")
    return x


scale_p = primitive("scale", lambda params, x: np.multiply(x, params.value), _scale_rule,
                    format_params=repr, elementwise=True)
scale_p.jvp = lambda params, t, out, xs: scale(t[0], params.value)
scale_p.vjp = lambda params, ct, out, xs, active: (scale(ct, params.value.conjugate()),)


def scale(x, factor):
    """``x * factor`` for a Python scalar factor kept as a static parameter."""
    if factor == 1 and not isinstance(factor, complex) and not is_complex_value(x):
        return x          # exact for real x (complex x * 1 turns 0+inf j into nan+inf j)
    t = type(x)
    if t is not TracedTensor and t is not Tensor:
        return np.multiply(x, factor)
    if isinstance(factor, complex):
        if not is_complex_value(x):
            raise DTypeError("scale: a complex factor needs a complex operand; promote first")
        factor = complex(factor)
    else:
        factor = float(factor)
    return bind1(scale_p, Scalar(factor), x)


# ------------------------------------------------------------------ power (static exponent)

def _pow_jvp(params, t, out, xs):
    return mul(t[0], _pow_derivative(params.value, xs[0]))


def _pow_derivative(p, x):
    return scale(power(x, p - 1), p)


pow_p = primitive("pow", lambda params, x: np.power(x, params.value), _same_as_input,
                  format_params=lambda params: f"exponent={params!r}", elementwise=True)
pow_p.jvp = _pow_jvp
pow_p.vjp = lambda params, ct, out, xs, active: (
    mul(ct, conj(_pow_derivative(params.value, xs[0]))),)


def power(x, p):
    """``x ** p`` for a static real exponent ``p``."""
    if p == 1:
        return x
    if p == 0:
        return st.full_like(x, 1)
    p = int(p) if float(p).is_integer() else float(p)
    return bind1(pow_p, Scalar(p), x)


# ------------------------------------------------------------------ analytic functions

exp_p = _unary("exp", np.exp)
exp_p.jvp = lambda params, t, out, xs: mul(t[0], out)
exp_p.vjp = lambda params, ct, out, xs, active: (mul(ct, conj(out)),)

log_p = _unary("log", np.log)
log_p.jvp = lambda params, t, out, xs: div(t[0], xs[0])
log_p.vjp = lambda params, ct, out, xs, active: (div(ct, conj(xs[0])),)

sqrt_p = _unary("sqrt", np.sqrt)
sqrt_p.jvp = lambda params, t, out, xs: div(t[0], scale(out, 2.0))
sqrt_p.vjp = lambda params, ct, out, xs, active: (div(ct, conj(scale(out, 2.0))),)

sin_p = _unary("sin", np.sin)
sin_p.jvp = lambda params, t, out, xs: mul(t[0], cos(xs[0]))
sin_p.vjp = lambda params, ct, out, xs, active: (mul(ct, conj(cos(xs[0]))),)

cos_p = _unary("cos", np.cos)
cos_p.jvp = lambda params, t, out, xs: neg(mul(t[0], sin(xs[0])))
cos_p.vjp = lambda params, ct, out, xs, active: (neg(mul(ct, conj(sin(xs[0])))),)


def _tanh_derivative(out):
    return sub(st.full_like(out, 1), mul(out, out))


tanh_p = _unary("tanh", np.tanh)
tanh_p.jvp = lambda params, t, out, xs: mul(t[0], _tanh_derivative(out))
tanh_p.vjp = lambda params, ct, out, xs, active: (mul(ct, conj(_tanh_derivative(out))),)


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

conj_p = _unary("conj", np.conj)
conj_p.jvp = lambda params, t, out, xs: conj(t[0])
conj_p.vjp = lambda params, ct, out, xs, active: (conj(ct),)


def conj(x):
    """Complex conjugate; the identity (no node) on real values."""
    t = type(x)
    if t is _ndarray:
        return np.conj(x) if x.dtype.kind == "c" else x
    if t is TracedTensor:
        if x.dtype_code < dtypes.COMPLEX64:
            return x
        return _intern_like(conj_p, None, (x,), x)
    if not is_complex_value(x):
        return x
    return bind1(conj_p, None, x)


def _to_real_rule(params, x):
    return dtypes.real_code(x.dtype_code), x.shape


real_p = _unary("real", np.real, _to_real_rule)
real_p.jvp = lambda params, t, out, xs: real(t[0])
real_p.vjp = lambda params, ct, out, xs, active: (
    convert(ct, code_of_value(xs[0])),)

imag_p = _unary("imag", np.imag, _to_real_rule)
imag_p.jvp = lambda params, t, out, xs: imag(t[0])
imag_p.vjp = lambda params, ct, out, xs, active: (
    scale(convert(ct, code_of_value(xs[0])), 1j),)


def real(x):
    if not is_complex_value(x):
        return x
    return bind1(real_p, None, x)


def imag(x):
    if not is_complex_value(x):
        return st.full_like(x, 0)
    return bind1(imag_p, None, x)


def _complex_sign_derivative(x, s, t):
    """d(z/|z|) along ``t``: ``(t - s Re(conj(s) t)) / |z|``, a symmetric real-linear map
    (so it is its own VJP).  Real signs are locally constant: derivative zero."""
    if not is_complex_value(x):
        return None
    code = code_of_value(x)
    radial = mul(s, convert(real(mul(conj(s), t)), code))
    return div(sub(t, radial), convert(abs(x), code))


sign_p = _unary("sign", np.sign)
sign_p.jvp = lambda params, t, out, xs: _complex_sign_derivative(xs[0], out, t[0])
sign_p.vjp = lambda params, ct, out, xs, active: (_complex_sign_derivative(xs[0], out, ct),)


def sign(x):
    """Sign, and ``z/|z|`` for complex ``z`` (0 at 0)."""
    return bind1(sign_p, None, x)


def _abs_jvp(params, t, out, xs):
    x = xs[0]
    if is_complex_value(x):
        return real(mul(conj(sign(x)), t[0]))
    return mul(t[0], sign(x))


def _abs_vjp(params, ct, out, xs, active):
    x = xs[0]
    return (mul(convert(ct, code_of_value(x)), sign(x)),)


abs_p = _unary("abs", np.abs, _to_real_rule)
abs_p.jvp = _abs_jvp
abs_p.vjp = _abs_vjp


def abs(x):  # noqa: A001 - NumPy's name
    return bind1(abs_p, None, x)


# ------------------------------------------------------------------ dtype conversion

def _convert_rule(code, x):
    if dtypes.is_complex(x.dtype_code) and not dtypes.is_complex(code):
        raise DTypeError(f"convert_element_type: {x.dtype.name} -> {dtypes.DTYPES[code].name} "
                         "would drop the imaginary part; take .real explicitly")
    return code, x.shape


def _convert_back(ct, code):
    """The cotangent of an input of dtype ``code`` from an output cotangent ``ct``."""
    if not dtypes.is_complex(code):
        ct = real(ct)
    return convert(ct, code)


convert_p = primitive("convert_element_type",
                      lambda code, x: np.asarray(x).astype(dtypes.DTYPES[code]),
                      _convert_rule, format_params=lambda code: dtypes.DTYPES[code].name)
convert_p.jvp = lambda code, t, out, xs: convert(t[0], code)
convert_p.vjp = lambda code, ct, out, xs, active: (_convert_back(ct, code_of_value(xs[0])),)


def convert(x, code: int):
    """Change the dtype to ``code`` (no node when it already has it)."""
    if code_of_value(x) == code:
        return x
    return bind1(convert_p, code, x)


# ------------------------------------------------------------------ comparison mask

eq_mask_p = _binary("eq_mask", lambda x, y: np.equal(x, y).astype(np.result_type(x, y)))
eq_mask_p.jvp = lambda params, t, out, xs: None
eq_mask_p.vjp = lambda params, ct, out, xs, active: (None, None)


def eq_mask(x, y):
    """1 where ``x == y`` else 0, in the operands' dtype; not differentiable (zero)."""
    return bind2(eq_mask_p, None, x, y)

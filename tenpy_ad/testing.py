"""Gradient checking for users and for the test-suite.

``check_grads(fn, args)`` traces ``fn`` on placeholders and checks, in random directions:

* the JVP against central finite differences: ``J v ~ (f(x + h v) - f(x - h v)) / 2h``;
* the VJP against the JVP: ``Re<u, J v> = sum_i Re<J_i^T u, v_i>`` (the adjoint identity
  for the real inner product, which is the convention of tenpy_ad for complex values);
* with ``order=2``, the same checks again on the gradient map ``x -> J(x)^T u``.

With ``eager=True`` it also checks that eager ``.backward()`` reproduces the traced VJP.
Directions are random, so a check costs a few function evaluations whatever the sizes.

``numerical_gradient(f, x)`` is the reference the other way round: the whole gradient of a
real scalar function by central differences, entry by entry (two evaluations per real
coordinate), for tests against a gradient the engine computed.  ``random_array`` and
``random_like`` draw the seeded data both use.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from . import ad
from .errors import ArgumentError
from .eager import tensor
from .primitive import is_traced
from .compiler import compile as compile_program
from .traced import input as placeholder


def inner(a, b) -> float:
    """The real inner product Re(sum(conj(a) * b))."""
    return float(np.real(np.vdot(np.asarray(a), np.asarray(b))))


def random_array(rng: np.random.Generator | int, shape: Sequence[int] | int,
                 dtype: np.dtype | str = "float64") -> np.ndarray:
    """Standard-normal entries of ``shape`` and ``dtype``: for a complex dtype the real
    parts are drawn first, then the imaginary parts (each standard normal).  ``rng`` is a
    NumPy ``Generator`` or an int seed (the same seed gives the same array)."""
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    value = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        value = value + 1j * rng.standard_normal(shape)
    return value.astype(dtype)


def random_like(rng: np.random.Generator, array) -> np.ndarray:
    """A standard-normal array of ``array``'s shape and dtype (complex parts if complex)."""
    array = np.asarray(array)
    return random_array(rng, array.shape, array.dtype)


def numerical_gradient(f: Callable[[np.ndarray], float], x, eps: float = 1e-6) -> np.ndarray:
    """The gradient of a real scalar ``f`` at ``x`` by central differences, entry by entry:
    ``(f(x + eps e_i) - f(x - eps e_i)) / (2 eps)`` (error ``O(eps^2)``).

    ``f`` is called on ndarrays of ``x``'s dtype (an integer or bool ``x`` is taken as
    float64) and must return a real number.  For complex ``x`` the result is
    ``dL/dRe(x) + i dL/dIm(x)``, each part differenced on its own: the convention of
    tenpy_ad's gradients of real losses (PyTorch's; JAX's is the conjugate), so the result
    compares directly with ``tp.grad(f)(x)`` or ``.backward()``'s ``.grad``.
    """
    x = np.asarray(x)
    if x.dtype.kind not in "fc":
        x = x.astype(np.float64)
    grad = np.zeros_like(x)
    units = (1.0, 1j) if x.dtype.kind == "c" else (1.0,)
    for index in np.ndindex(x.shape):
        for unit in units:
            grad[index] += unit * _central_difference(f, x, index, unit * eps, eps)
    return grad


def _central_difference(f, x, index, step, eps) -> float:
    """``(f(x + step e_index) - f(x - step e_index)) / (2 eps)``, checking ``f`` is real."""
    values = []
    for sign in (1.0, -1.0):
        shifted = x.copy()
        shifted[index] += sign * step
        value = np.asarray(f(shifted))
        if value.size != 1 or np.iscomplexobj(value):
            raise ArgumentError("numerical_gradient: f must return a real scalar, got "
                                f"{value.dtype}{list(value.shape)}")
        values.append(float(value.reshape(())))
    return (values[0] - values[1]) / (2 * eps)


def _assert_close(actual, expected, rtol, atol, what):
    actual, expected = np.asarray(actual), np.asarray(expected)
    if not np.allclose(actual, expected, rtol=rtol, atol=atol):
        err = np.max(np.abs(actual - expected))
        raise AssertionError(f"{what}: max |difference| {err:.3e} (rtol={rtol}, atol={atol})"
                             f"\nactual:   {actual!r}\nexpected: {expected!r}")


def check_grads(fn: Callable, args: Sequence[np.ndarray], order: int = 1, *,
                rng: np.random.Generator | None = None, step: float = 1e-6,
                rtol: float = 1e-5, atol: float = 1e-7, eager: bool = False,
                modes_tol: float = 1e-12) -> None:
    """Check the traced JVP and VJP of ``fn`` at ``args`` (and higher orders); raise
    ``AssertionError`` naming the failing check.  ``rtol``/``atol`` hold the JVP to finite
    differences; ``eager`` also checks eager ``backward()`` against the traced VJP, to
    ``modes_tol`` (relative and absolute: the two modes agree to rounding, or to the
    tolerance of an iterative solve inside ``fn``, whose iterates rounding moves)."""
    rng = np.random.default_rng(0) if rng is None else rng
    args = [np.asarray(a) for a in args]
    xs = [placeholder(a.shape, a.dtype) for a in args]
    y = fn(*xs)
    if not is_traced(y):
        raise ArgumentError("check_grads: fn must return one tensor")
    value_fn = compile_program(y, xs)
    y0 = value_fn(*args)
    tangents = [random_like(rng, a) for a in args]
    cotangent = random_like(rng, y0)
    jv = ad.jvp([y], xs, tangents)[0]
    vjps = ad.vjp([y], xs, [cotangent])
    program = compile_program([jv] + vjps, xs)
    jv0, *vjps0 = program(*args)
    shifted = lambda s: value_fn(*[a + s * step * t for a, t in zip(args, tangents)])
    fd = (shifted(1.0) - shifted(-1.0)) / (2 * step)
    _assert_close(jv0, fd, rtol, atol, f"JVP of {getattr(fn, '__name__', fn)} vs finite "
                                       "differences")
    lhs = inner(cotangent, jv0)
    rhs = sum(inner(g, t) for g, t in zip(vjps0, tangents))
    magnitude = max(1.0, abs(lhs), abs(rhs))
    if abs(lhs - rhs) > 1e2 * rtol * magnitude:
        raise AssertionError(f"VJP/JVP adjoint identity of {fn}: <u, Jv> = {lhs!r} but "
                             f"<J^T u, v> = {rhs!r}")
    if eager:
        leaves = [tensor(a, requires_grad=True) for a in args]
        out = fn(*leaves)
        if out.requires_grad:           # else no input reaches it: all grads are zero
            out.backward(cotangent)
        for k, (leaf, expected) in enumerate(zip(leaves, vjps0)):
            got = np.zeros_like(expected) if leaf.grad is None else np.asarray(leaf.grad)
            _assert_close(got, expected, modes_tol, modes_tol, f"eager grad of input {k}")
    if order > 1:
        for k in range(len(args)):
            def gradient_map(*zs, k=k):
                if is_traced(zs[0]):
                    return ad.vjp([fn(*zs)], list(zs), [cotangent])[k]
                return _eager_vjp(fn, zs, cotangent, k)
            gradient_map.__name__ = f"vjp_{k}({getattr(fn, '__name__', 'fn')})"
            check_grads(gradient_map, args, order - 1, rng=rng, step=step, rtol=rtol,
                        atol=atol, eager=eager, modes_tol=modes_tol)


def _eager_vjp(fn, zs, cotangent, k):
    """``J_k(z)^T u`` in eager mode, recorded so that it can be differentiated again."""
    from .eager import grad_of
    (grad,) = grad_of([fn(*zs)], [zs[k]], [tensor(cotangent)], create_graph=True)
    return grad


__all__ = ["check_grads", "inner", "numerical_gradient", "random_array", "random_like"]

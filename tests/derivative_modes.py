"""Every way to take a first or second derivative of a real scalar loss of one array:
eager ``backward()``, ``tp.grad``, the traced ``tp.ad.grad`` compiled, ``tp.jvp`` (eager and
traced), and their compositions (gradients of gradients eager, by transforms and traced,
the traced Hessian-vector product, ``tp.jvp`` of ``tp.grad``, ``tp.grad`` of ``tp.jvp``,
traced gradient of a traced JVP).

Each takes ``(loss, a, v)`` and returns, as an ndarray, the gradient at ``a``, the
directional derivative along ``v`` (the JVPs: a 0-d value) or the Hessian applied to ``v``
(the second-order ones).  With the complex convention of tenpy_ad (the gradient of a real
loss is ``dL/dx + i dL/dy``) the Hessian-vector product is the gradient of ``Re<g, v>``.
"""
from __future__ import annotations

import numpy as np

import tenpy_ad as tp


def _array(x):
    return np.asarray(x.data if isinstance(x, tp.Tensor) else x)


def _inner(g, v):
    return tp.real(tp.sum(tp.conj(g) * v))


def _eager_backward(loss, a, v):
    t = tp.tensor(a, requires_grad=True)
    loss(t).backward()
    return t.grad


def _traced_grad(loss, a, v):
    x = tp.input(a.shape, a.dtype)
    return tp.compile([tp.ad.grad(loss(x), x)], inputs=[x])(a)[0]


def _eager_jvp(loss, a, v):
    return tp.jvp(loss, (a,), (v,))[1]


def _traced_jvp(loss, a, v):
    x = tp.input(a.shape, a.dtype)
    return tp.compile(tp.ad.jvp([loss(x)], [x], [v]), inputs=[x])(a)[0]


def _eager_grad_of_grad(loss, a, v):
    x = tp.tensor(a, requires_grad=True)
    (g,) = tp.grad_of([loss(x)], [x], create_graph=True)
    (h,) = tp.grad_of([_inner(g, v)], [x])
    return h


def _transform_grad_of_grad(loss, a, v):
    return tp.grad(lambda x: _inner(tp.grad(loss)(x), v))(a)


def _traced_grad_of_grad(loss, a, v):
    x = tp.input(a.shape, a.dtype)
    g = tp.ad.grad(loss(x), x)
    return tp.compile([tp.ad.grad(_inner(g, v), x)], inputs=[x])(a)[0]


def _traced_hessian_vector(loss, a, v):
    x = tp.input(a.shape, a.dtype)
    g = tp.ad.grad(loss(x), x)
    return tp.compile(tp.ad.jvp([g], [x], [v]), inputs=[x])(a)[0]


def _jvp_of_grad(loss, a, v):
    return tp.jvp(tp.grad(loss), (a,), (v,))[1]


def _grad_of_jvp(loss, a, v):
    return tp.grad(lambda x: tp.jvp(loss, (x,), (v,))[1])(a)


def _traced_grad_of_jvp(loss, a, v):
    x = tp.input(a.shape, a.dtype)
    (t,) = tp.ad.jvp([loss(x)], [x], [v])
    return tp.compile([tp.ad.grad(t, x)], inputs=[x])(a)[0]


def _transform_grad(loss, a, v):
    return tp.grad(loss)(a)


DERIVATIVES = {"eager_backward": _eager_backward, "tp.grad": _transform_grad,
               "traced_grad": _traced_grad, "eager_jvp": _eager_jvp, "traced_jvp": _traced_jvp,
               "eager_grad_of_grad": _eager_grad_of_grad,
               "transform_grad_of_grad": _transform_grad_of_grad,
               "traced_grad_of_grad": _traced_grad_of_grad,
               "traced_hessian_vector": _traced_hessian_vector, "jvp_of_grad": _jvp_of_grad,
               "grad_of_jvp": _grad_of_jvp, "traced_grad_of_jvp": _traced_grad_of_jvp}
#: the modes that give the directional derivative (a 0-d value), not a gradient
TANGENTS = {"eager_jvp", "traced_jvp"}
FIRST_ORDER = ("eager_backward", "tp.grad", "traced_grad", "eager_jvp", "traced_jvp")
SECOND_ORDER = tuple(mode for mode in DERIVATIVES if mode not in FIRST_ORDER)


def derivative(mode: str, loss, a: np.ndarray, v: np.ndarray) -> np.ndarray:
    """What ``mode`` computes (see the module docstring), as an ndarray."""
    return _array(DERIVATIVES[mode](loss, a, v))

"""Spec entries of ``tp.fixed_point``: a linear map (its derivative solves are exact
linear systems, real and complex), a map that is only real-linear in complex x (the
solvers treat complex leaves as pairs of reals), a nonlinear scalar map, and a two-leaf
state.  The maps contract for the inputs ``make_args`` draws (standard normal, fixed
seed)."""
import tenpy_ad as tp

from .table import REAL, Spec


def _linear(a, b):
    """x = 0.2 a x + b, started from b."""
    return tp.fixed_point(lambda x, a, b: (a @ x) * 0.2 + b, b, a, b)


def _conjugating(a, b):
    """x = 0.2 conj(a x) + b."""
    return tp.fixed_point(lambda x, a, b: tp.conj(a @ x) * 0.2 + b, b, a, b)


def _tanh(a):
    """x = tanh(0.3 a x + 0.5), elementwise."""
    return tp.fixed_point(lambda x, a: tp.tanh(a * x * 0.3 + 0.5), a * 0.0, a)


def _pair(a, b):
    """A two-leaf state (a matrix and a vector) that couples both leaves."""
    def step(state, params):
        m, v = state
        return tp.tanh(params["a"] * 0.3 + m * 0.2), tp.sin(m @ v * 0.3 + params["b"])
    m, v = tp.fixed_point(step, (a * 0.0, b * 0.0), {"a": a, "b": b})
    return (m @ v) * 2.0 + v


SPECS = [
    Spec("fixed_point_linear", _linear, ((3, 3), (3,))),
    Spec("fixed_point_conjugating", _conjugating, ((3, 3), (3,)), dtypes=("complex128",)),
    Spec("fixed_point_tanh", _tanh, ((4,),), dtypes=REAL),
    Spec("fixed_point_two_leaves", _pair, ((2, 2), (2,)), dtypes=REAL),
]

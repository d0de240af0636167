"""The spec table's vocabulary: ``Spec(name, fn, shapes, domain, dtypes, tol, special,
max_order)``;
``fn`` takes tensors and returns one tensor and is used unchanged in traced and eager mode.
``special`` lists the primitive's special points (:class:`SpecialPoint`): ties, kinks,
jumps, bounds, singular points and branch cuts, with the derivatives the engine takes
there (tests/test_special_points.py checks them in every mode at first and second
order)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from tenpy_ad.testing import random_array

REAL = ("float64",)
BOTH = ("float64", "complex128")


INF, NAN = math.inf, math.nan


@dataclass(frozen=True)
class SpecialPoint:
    """A point where the function has no derivative, an infinite one, a tie or a branch
    cut, and the derivatives chosen there.

    ``args`` are the arguments of ``fn`` (the spec's own unless given: for a spec whose
    ``fn`` rescales its argument into the domain), scalars or arrays, complex ones for
    branch cuts.  ``grad`` and ``hess`` are the gradient and the Hessian of
    ``L = sum(real(fn(*args)))`` over the real coordinates of the args, in order: each
    real entry; for a complex arg its entries' real parts, then their imaginary parts
    (``modes.coordinates``).  Infinities and NaNs in them are what every mode must return
    too.  ``note`` says what was chosen and why."""
    args: tuple
    grad: tuple
    hess: tuple
    note: str
    fn: Callable | None = None


def flat(n: int) -> tuple:
    """The ``n x n`` zero Hessian (piecewise linear functions, chosen subgradients)."""
    return ((0.0,) * n,) * n


@dataclass
class Spec:
    name: str
    fn: Callable
    shapes: tuple
    domain: str = "normal"          # normal | positive | away_from_zero | distinct
    dtypes: tuple = BOTH
    tol: dict = field(default_factory=dict)
    special: tuple = ()             # SpecialPoints
    max_order: int = 2              # 1: derivatives of order 2 must raise NotDifferentiableError
    eager_max_order: int | None = None   # 1: only in eager mode (None: max_order)

    @property
    def eager_order(self) -> int:
        """The highest order eager mode differentiates (above it: NotDifferentiableError)."""
        return self.max_order if self.eager_max_order is None else self.eager_max_order

def make_args(spec: Spec, dtype: str, rng: np.random.Generator) -> list:
    args = []
    for shape in spec.shapes:
        x = random_array(rng, shape, dtype)
        if spec.domain == "positive":
            x = (np.abs(x) + 0.5) if not np.iscomplexobj(x) else x + 2.5
        elif spec.domain == "away_from_zero":
            x = x + np.where(np.real(x) >= 0, 0.5, -0.5)
        elif spec.domain == "distinct":
            x = rng.permutation(np.arange(np.prod(shape, dtype=int))).reshape(shape) * 0.37 \
                + 0.01 * rng.standard_normal(shape)
        args.append(np.asarray(x).astype(dtype))
    return args

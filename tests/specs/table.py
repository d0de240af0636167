"""The spec table's vocabulary: ``Spec(name, fn, shapes, domain, dtypes, tol)``; ``fn``
takes tensors and returns one tensor and is used unchanged in traced and eager mode."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

REAL = ("float64",)
BOTH = ("float64", "complex128")


@dataclass
class Spec:
    name: str
    fn: Callable
    shapes: tuple
    domain: str = "normal"          # normal | positive | away_from_zero | distinct
    dtypes: tuple = BOTH
    tol: dict = field(default_factory=dict)

def make_args(spec: Spec, dtype: str, rng: np.random.Generator) -> list:
    args = []
    for shape in spec.shapes:
        x = rng.standard_normal(shape)
        if dtype.startswith("complex"):
            x = x + 1j * rng.standard_normal(shape)
        if spec.domain == "positive":
            x = (np.abs(x) + 0.5) if not np.iscomplexobj(x) else x + 2.5
        elif spec.domain == "away_from_zero":
            x = x + np.where(np.real(x) >= 0, 0.5, -0.5)
        elif spec.domain == "distinct":
            x = rng.permutation(np.arange(np.prod(shape, dtype=int))).reshape(shape) * 0.37 \
                + 0.01 * rng.standard_normal(shape)
        args.append(np.asarray(x).astype(dtype))
    return args

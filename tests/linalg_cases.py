"""What the ``tp.linalg`` test files share: modes, dtypes, shapes, the documented config
defaults and random matrices."""
from __future__ import annotations

import numpy as np

import tenpy_ad as tp
from tenpy_ad.testing import random_array    # noqa: F401 - the linalg tests import it here

#: the modes of ``modes.run`` the linalg tests are parametrized over
MODES = ("numpy", "eager", "traced")
DTYPES = ("float64", "complex128")
SHAPES = ((4, 4), (5, 3), (3, 5))
SHAPE_IDS = ["square", "tall", "wide"]
#: broadening, gauge_check, gauge_rtol, degeneracy_check
DEFAULT_CONFIG = (1e-16, "raise", 1e-8, "raise")


def unitary(rng, n, dtype="float64") -> np.ndarray:
    """A Haar-like random orthogonal/unitary matrix."""
    q, r = np.linalg.qr(random_array(rng, (n, n), dtype))
    d = np.diag(r)
    return q * (d / np.abs(d))


def hermitian(rng, n, dtype="float64") -> np.ndarray:
    b = random_array(rng, (n, n), dtype)
    return (b + b.conj().T) / 2


def assert_orthonormal_columns(q, atol=1e-12) -> None:
    k = q.shape[1]
    np.testing.assert_allclose(q.conj().T @ q, np.eye(k), atol=atol)


def svd(x, **kwargs):
    return tp.linalg.svd(x, **kwargs)


def traced_hvp(loss_fn, a: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """The Hessian of ``loss_fn`` at ``a`` applied to ``direction``: forward over reverse
    on the traced graph."""
    x = tp.input(a.shape, a.dtype)
    g = tp.ad.grad(loss_fn(x), x)
    (hv,) = tp.ad.jvp([g], [x], [direction])
    return tp.evaluate(hv, {x: a})


def case_ids(cases) -> list[str]:
    """Test ids for ``(loss function, shape)`` cases."""
    return [f"{f.__name__}-{'x'.join(map(str, s))}" for f, s in cases]

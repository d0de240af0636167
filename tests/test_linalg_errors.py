"""Bad input to ``tp.linalg`` fails as NumPy's does, in our words, in every mode: a
non-square matrix is a ``ShapeError`` naming the function and the shape; a singular matrix
(``inv``, ``solve``, the derivative of ``det``) or one that is not positive definite
(``cholesky``) is ``numpy.linalg.LinAlgError`` naming the function.  NaN or Inf input gives
NaN output (the other matrices of a stack are unaffected), and LAPACK never sees it.
"""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ShapeError

from linalg_cases import MODES
from modes import run


pytestmark = pytest.mark.usefixtures("restore_linalg_config")

SQUARE_ONLY = ["inv", "det", "slogdet", "cholesky", "eig", "eigvals", "eigh", "eigvalsh",
               "expm"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", SQUARE_ONLY)
@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 3)], ids=["matrix", "stack"])
def test_non_square_is_a_shape_error(name, shape, mode):
    fn = getattr(tp.linalg, name)
    with pytest.raises(ShapeError, match=rf"{name}: expected a square matrix") as info:
        run(fn, mode, np.ones(shape))
    assert str(list(shape)) in str(info.value)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["pinv", "svdvals", "qr", "inv", "det"])
def test_fewer_than_two_axes_is_a_shape_error(name, mode):
    with pytest.raises(ShapeError, match=name):
        run(getattr(tp.linalg, name), mode, np.ones(3))


@pytest.mark.parametrize("mode", MODES)
def test_matrix_power_of_a_non_square_matrix(mode):
    with pytest.raises(ShapeError, match=r"matrix_power: .*\[2, 3\]"):
        run(lambda x: tp.linalg.matrix_power(x, 2), mode, np.ones((2, 3)))


SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,fn", [
    ("inv", tp.linalg.inv),
    ("solve", lambda a: tp.linalg.solve(a, np.ones(2))),
    ("inv", lambda a: tp.linalg.matrix_power(a, -1)),
], ids=["inv", "solve", "matrix_power"])
def test_singular_matrix_is_a_linalg_error(name, fn, mode):
    with pytest.raises(np.linalg.LinAlgError, match=rf"{name}: singular matrix \(float64"):
        run(fn, mode, SINGULAR)
    with pytest.raises(np.linalg.LinAlgError, match=name):         # one bad matrix of many
        run(fn, mode, np.stack([np.eye(2), SINGULAR]))


@pytest.mark.parametrize("mode", MODES)
def test_cholesky_of_an_indefinite_matrix(mode):
    with pytest.raises(np.linalg.LinAlgError, match="cholesky: the matrix is not positive "
                                                    "definite"):
        run(tp.linalg.cholesky, mode, np.diag([1.0, -1.0]))


def test_derivative_of_det_at_a_singular_matrix_names_det():
    t = tp.tensor(SINGULAR, requires_grad=True)
    d = tp.linalg.det(t)
    assert d.item() == 0.0                              # the value is fine
    with pytest.raises(np.linalg.LinAlgError, match="det: singular matrix"):
        d.backward()


@pytest.mark.parametrize("mode", MODES)
def test_bad_arguments(mode):
    with pytest.raises(ValueError, match="rtol"):
        run(lambda x: tp.linalg.pinv(x, rcond=0.1, rtol=0.1), mode, np.eye(2))
    with pytest.raises(ValueError, match="at least two"):
        run(lambda x: tp.linalg.multi_dot([x]), mode, np.eye(2))
    with pytest.raises(ValueError if mode == "numpy" else ShapeError):    # NumPy's own
        run(lambda x: tp.linalg.multi_dot([x, np.ones((2, 2, 2)), x]), mode, np.eye(2))


@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_lstsq_needs_matching_rows(mode):
    with pytest.raises(ShapeError, match="lstsq"):
        run(tp.linalg.lstsq, mode, np.ones((4, 2)), np.ones(3))


def _slogdet(x):
    sign, logabsdet = tp.linalg.slogdet(x)
    return sign * logabsdet


#: every function on one argument, and the NumPy/SciPy function computing it
NAN_CASES = [
    ("svd", lambda x: tp.linalg.svd(x)[0]),
    ("svdvals", tp.linalg.svdvals),
    ("qr", lambda x: tp.linalg.qr(x)[1]),
    ("eigh", lambda x: tp.linalg.eigh(x)[1]),
    ("eig", lambda x: tp.linalg.eig(x)[1]),
    ("eigvals", tp.linalg.eigvals),
    ("inv", tp.linalg.inv),
    ("det", tp.linalg.det),
    ("slogdet", _slogdet),
    ("cholesky", tp.linalg.cholesky),
    ("pinv", tp.linalg.pinv),
    ("expm", tp.linalg.expm),
    ("solve", lambda x: tp.linalg.solve(x, x[..., :1])),
    ("norm_2", lambda x: tp.linalg.norm(x, 2, axis=(-2, -1))),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bad", [np.nan, np.inf], ids=["nan", "inf"])
@pytest.mark.parametrize("name,fn", NAN_CASES, ids=[c[0] for c in NAN_CASES])
def test_non_finite_input_gives_nan(name, fn, bad, mode, capfd):
    good = 3 * np.eye(3) + 0.1 * np.arange(9.0).reshape(3, 3).T @ np.arange(9.0).reshape(3, 3)
    good = (good + good.T) / 20 + np.eye(3)
    poisoned = good.copy()
    poisoned[1, 1] = bad
    with np.errstate(invalid="ignore"):
        alone = run(fn, mode, poisoned)
        stacked = run(fn, mode, np.stack([good, poisoned]))
    assert np.all(np.isnan(alone))
    assert np.all(np.isnan(stacked[1]))
    np.testing.assert_allclose(stacked[0], run(fn, mode, good), rtol=1e-12, atol=1e-14)
    assert "illegal value" not in capfd.readouterr().err            # LAPACK never saw it

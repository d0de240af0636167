"""``np.linalg.<name>(tensor)`` dispatches to tenpy_ad with NumPy's signatures and defaults:
values against NumPy's in every mode, NumPy's defaults where ``tp.linalg``'s differ, and
the functions without a tenpy_ad version refused by name."""
from __future__ import annotations

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import NotDifferentiableError, ShapeError

from modes import GRAD_MODES, check_modes, grad_in

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
STACK = RNG.standard_normal((2, 4, 3))
B = RNG.standard_normal((3, 2))
SPD = A @ A.T + np.eye(3)
RANK_TWO = STACK @ np.diag([1.0, 1.0, 0.0])         # both matrices of rank 2

#: (NumPy-written function, arguments); each is run in every mode against NumPy
CASES = {
    "det": (np.linalg.det, A), "inv": (np.linalg.inv, A),
    "slogdet": (np.linalg.slogdet, A),
    "solve": (np.linalg.solve, A, B), "solve_vector": (np.linalg.solve, A, B[:, 0]),
    "cholesky": (np.linalg.cholesky, SPD),
    "cholesky_upper": (lambda a: np.linalg.cholesky(a, upper=True), SPD),
    "eigvalsh": (np.linalg.eigvalsh, SPD),
    "eigvalsh_U": (lambda a: np.linalg.eigvalsh(a, "U"), A),
    "eigh_values": (lambda a: np.linalg.eigh(a)[0], SPD),
    "eigh_gauge_free": (lambda a: np.abs(np.linalg.eigh(a)[1]), SPD),
    "svd_values": (lambda a: np.linalg.svd(a, compute_uv=False), STACK),
    "svd_square": (lambda a: np.abs(np.linalg.svd(a)[0]), A),
    "svd_reduced": (lambda a: np.abs(np.linalg.svd(a, full_matrices=False)[2]), STACK),
    "svdvals": (np.linalg.svdvals, STACK),
    "qr": (lambda a: np.abs(np.linalg.qr(a)[1]), STACK),
    "pinv": (np.linalg.pinv, STACK), "lstsq": (lambda a, b: np.linalg.lstsq(a, b)[0], A, B),
    "matrix_power": (lambda a: np.linalg.matrix_power(a, 3), A),
    "norm": (np.linalg.norm, STACK), "norm_nuc": (lambda a: np.linalg.norm(a, "nuc"), A),
    "norm_axis": (lambda a: np.linalg.norm(a, 1, axis=-1, keepdims=True), STACK),
    "matrix_norm": (np.linalg.matrix_norm, STACK),
    "matrix_norm_2": (lambda a: np.linalg.matrix_norm(a, ord=2, keepdims=True), STACK),
    "vector_norm": (np.linalg.vector_norm, STACK),
    "vector_norm_axes": (lambda a: np.linalg.vector_norm(a, axis=(0, 2), ord=3), STACK),
    "vector_norm_keepdims": (
        lambda a: np.linalg.vector_norm(a, axis=(-1, 0), keepdims=True, ord=np.inf), STACK),
    "vector_norm_axis": (lambda a: np.linalg.vector_norm(a, axis=1, ord=1), STACK),
    "diagonal": (lambda a: np.linalg.diagonal(a, offset=-1), STACK),
    "trace": (lambda a: np.linalg.trace(a, offset=1), STACK),
    "matrix_transpose": (np.linalg.matrix_transpose, STACK),
    "cond": (np.linalg.cond, STACK), "cond_-2": (lambda a: np.linalg.cond(a, -2), STACK),
    "cond_1": (lambda a: np.linalg.cond(a, 1), A),
    "cond_nuc": (lambda a: np.linalg.cond(a, "nuc"), A),
    "matrix_rank": (np.linalg.matrix_rank, RANK_TWO),
    "matrix_rank_tol": (lambda a: np.linalg.matrix_rank(a, tol=0.5), RANK_TWO),
    "matrix_rank_rtol": (lambda a: np.linalg.matrix_rank(a, rtol=0.3), RANK_TWO),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_linalg_matches_numpy_in_every_mode(name):
    fn, *args = CASES[name]
    check_modes(fn, *args)


def test_eig_is_complex_with_numpy_values():
    w = np.asarray(np.linalg.eigvals(tp.tensor(SPD)))
    assert w.dtype == np.complex128
    np.testing.assert_allclose(np.sort(w.real), np.linalg.eigvalsh(SPD), rtol=1e-12)
    np.testing.assert_allclose(w.imag, 0.0, atol=1e-12)


def test_svd_has_numpy_defaults():
    u, s, vh = np.linalg.svd(tp.tensor(STACK))
    assert (u.shape, s.shape, vh.shape) == ((2, 4, 4), (2, 3), (2, 3, 3))
    x = tp.tensor(STACK, requires_grad=True)
    np.linalg.svd(x, full_matrices=False, hermitian=True)[1].sum().backward()   # only a hint
    u, _, vh = np.linalg.svd(STACK, full_matrices=False)
    np.testing.assert_allclose(np.asarray(x.grad), u @ vh, rtol=1e-12)     # d sum(s) = u vh
    y = tp.tensor(STACK, requires_grad=True)
    np.linalg.svd(y)[1].sum().backward()        # NumPy's full_matrices=True: s alone is fine
    np.testing.assert_allclose(np.asarray(y.grad), u @ vh, rtol=1e-12)
    with pytest.raises(ShapeError, match="full_matrices=False"):      # the extra vectors
        np.linalg.svd(y)[0].sum().backward()


def test_singular_values_alone_are_differentiable_with_numpy_defaults():
    """``compute_uv=False`` has no extra singular vectors, whatever ``full_matrices`` says."""
    u, _, vh = np.linalg.svd(STACK, full_matrices=False)
    loss = lambda a: np.sum(np.linalg.svd(a, compute_uv=False))     # noqa: E731
    for mode in GRAD_MODES:
        np.testing.assert_allclose(grad_in(mode, loss, STACK), u @ vh, rtol=1e-12)
    nuclear = lambda a: np.linalg.norm(a[0], "nuc") + np.linalg.norm(a[1], 2)   # noqa: E731
    expected = np.stack([u[0] @ vh[0], np.outer(u[1][:, 0], vh[1][0])])
    np.testing.assert_allclose(grad_in("eager", nuclear, STACK), expected, rtol=1e-12)


@pytest.mark.parametrize("mode", ["numpy", "eager", "traced"])
def test_decompositions_return_numpys_named_results(mode):
    """NumPy 2's field names (``.eigenvalues``, ``.U``, ``.Q``, ``.logabsdet``), also
    through ``tp.jit``, as in ``np.linalg.eigh(a).eigenvalues``."""
    fields = {"eigh": ("eigenvalues", "eigenvectors"), "eig": ("eigenvalues", "eigenvectors"),
              "svd": ("U", "S", "Vh"), "qr": ("Q", "R"), "slogdet": ("sign", "logabsdet")}
    a = {"numpy": lambda x: x, "eager": tp.tensor,
         "traced": lambda x: tp.input(x.shape)}[mode](SPD)
    for name, names in fields.items():
        result = getattr(np.linalg, name)(a)
        expected = getattr(np.linalg, name)(SPD)
        assert type(result).__name__ == type(expected).__name__
        assert result._fields == names and len(result) == len(names)
    got = tp.jit(lambda x: np.linalg.eigh(x))(SPD)
    assert type(got).__name__ == "EighResult"
    np.testing.assert_allclose(got.eigenvalues, np.linalg.eigvalsh(SPD), rtol=1e-12)
    def value(x):
        x = (x + x.T) / 2
        return np.linalg.eigh(x).eigenvalues[-1] + np.linalg.slogdet(x).logabsdet
    w, v = np.linalg.eigh(SPD)
    expected = np.outer(v[:, -1], v[:, -1]) + np.linalg.inv(SPD).T
    np.testing.assert_allclose(grad_in("transform", value, SPD), expected, rtol=1e-10)


@pytest.mark.parametrize("name", ["tensorinv", "tensorsolve"])
def test_functions_without_a_version_are_refused_by_name(name):
    with pytest.raises(NotDifferentiableError, match=f"np.linalg.{name} is not"):
        getattr(np.linalg, name)(tp.tensor(A), *([B] if name == "tensorsolve" else []))


@pytest.mark.parametrize("p", [None, -2, 1, "fro"])
def test_condition_number_gradient(p):
    """Against central differences of NumPy's ``cond``."""
    direction = RNG.standard_normal(A.shape)
    step = 1e-6
    expected = (np.linalg.cond(A + step * direction, p)
                - np.linalg.cond(A - step * direction, p)) / (2 * step)
    for mode in GRAD_MODES:
        got = grad_in(mode, lambda a: np.linalg.cond(a, p), A)
        np.testing.assert_allclose(np.sum(got * direction), expected, rtol=1e-6)


def test_matrix_rank_is_an_integer_that_stops_the_gradient():
    x = tp.tensor(RANK_TWO, requires_grad=True)
    rank = np.linalg.matrix_rank(x)
    assert rank.dtype == np.int64 and np.asarray(rank).tolist() == [2, 2]
    traced = tp.linalg.matrix_rank(tp.input((4, 3)))
    assert traced.dtype == np.int64 and traced.shape == ()
    with pytest.raises(ValueError, match="tol or rtol"):
        np.linalg.matrix_rank(x, tol=0.1, rtol=0.1)
    for vector in (B[:, 0], np.zeros(3)):           # NumPy: 1 unless every entry is 0
        assert int(np.linalg.matrix_rank(tp.tensor(vector))) == np.linalg.matrix_rank(vector)


def test_scipy_functions_on_a_tensor_that_requires_grad_name_tenpy_ads_versions():
    """SciPy does not dispatch to tensors: its functions would drop the gradient, so the
    conversion is refused with a pointer to tenpy_ad.scipy."""
    import scipy.linalg
    x = tp.tensor(A, requires_grad=True)
    with pytest.raises(NotDifferentiableError,
                       match="by scipy.linalg.expm, .*call tp.scipy.linalg.expm instead"):
        scipy.linalg.expm(x)
    np.testing.assert_allclose(scipy.linalg.expm(tp.tensor(A)), scipy.linalg.expm(A))

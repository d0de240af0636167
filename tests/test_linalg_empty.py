"""``tp.linalg`` on empty stacks (``(0, n, n)``, ``(2, 0, n, n)``) and empty matrices
(``0 x 0``, ``0 x n``, ``n x 0``): NumPy's results (values, shapes, dtypes) in every mode, or
a clear error naming the function where NumPy raises; and first and second derivatives in
every mode (eager backward, ``tp.grad``, traced ``tp.ad.grad`` + compile, ``tp.jvp``, and
their compositions) are zero-size gradients of the input's shape and dtype, float64 and
complex128.  A function of an input without entries is a constant: its derivatives are
exact and zero, whatever the loss (also one that would depend on a phase of a non-empty
decomposition).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest
import scipy.linalg

import tenpy_ad as tp
from tenpy_ad.errors import TenpyAdError
from tenpy_ad.numpy._dispatch import direct

from derivative_modes import DERIVATIVES, TANGENTS, derivative
from modes import ALL_MODES, assert_matches, run


pytestmark = pytest.mark.usefixtures("restore_linalg_config")

#: empty stacks of matrices and empty matrices of every kind
SQUARE = [(0, 3, 3), (2, 0, 3, 3), (0, 1, 1), (0, 0), (2, 0, 0)]
RECTANGULAR = [(0, 3), (3, 0), (0, 2, 0), (0, 0, 2), (2, 3, 0), (2, 0, 3)]
EVERY = SQUARE + RECTANGULAR
MATRICES = [s for s in EVERY if len(s) == 2]
DTYPES = ("float64", "complex128")


@dataclass
class Case:
    """``fn`` of one operand (tensor or array) and NumPy's ``ref``; ``name`` is what an
    error must name; ``derivatives``: False for results without a derivative path (an
    integer, a piecewise constant), whose forward values only are checked; ``finite``:
    False for infinite results (whose squares would meet a zero tangent: NaN)."""
    label: str
    fn: Callable
    ref: Callable
    name: str
    shapes: list = None
    derivatives: bool = True
    finite: bool = True


def _rhs(a):
    """A right-hand side for ``solve``/``lstsq`` with two columns (a constant)."""
    return np.ones(np.shape(a)[:-1] + (2,), np.dtype(a.dtype))


def _swap(x):
    return np.swapaxes(x, -1, -2) if isinstance(x, np.ndarray) else tp.swapaxes(x, -1, -2)


def _tuple(fn):
    return lambda a: tuple(fn(a))


CASES = [
    Case("svd", _tuple(tp.linalg.svd), _tuple(lambda a: np.linalg.svd(a, full_matrices=False)),
         "svd"),
    Case("svd_full", _tuple(lambda x: tp.linalg.svd(x, full_matrices=True)),
         _tuple(np.linalg.svd), "svd"),
    Case("svd_values", lambda x: tp.linalg.svd(x, compute_uv=False),
         lambda a: np.linalg.svd(a, compute_uv=False), "svd"),
    Case("svdvals", tp.linalg.svdvals, np.linalg.svdvals, "svdvals"),
    Case("qr", _tuple(tp.linalg.qr), _tuple(np.linalg.qr), "qr"),
    Case("qr_r", lambda x: tp.linalg.qr(x, mode="r"), lambda a: np.linalg.qr(a, mode="r"),
         "qr"),
    Case("qr_complete", _tuple(lambda x: tp.linalg.qr(x, mode="complete")),
         _tuple(lambda a: np.linalg.qr(a, mode="complete")), "qr"),
    Case("eigh_L", _tuple(tp.linalg.eigh), _tuple(np.linalg.eigh), "eigh"),
    Case("eigh_U", _tuple(lambda x: tp.linalg.eigh(x, "U")),
         _tuple(lambda a: np.linalg.eigh(a, "U")), "eigh"),
    Case("eigh_symmetrized", _tuple(lambda x: tp.linalg.eigh(x, symmetrize_input=True)),
         _tuple(np.linalg.eigh), "eigh"),
    Case("eigvalsh_L", tp.linalg.eigvalsh, np.linalg.eigvalsh, "eigvalsh"),
    Case("eigvalsh_U", lambda x: tp.linalg.eigvalsh(x, "U"),
         lambda a: np.linalg.eigvalsh(a, "U"), "eigvalsh"),
    # tp's eig is always complex (NumPy's is real when every eigenvalue is: here, none)
    Case("eig", _tuple(tp.linalg.eig),
         lambda a: tuple(x.astype(np.result_type(a, 1j)) for x in np.linalg.eig(a)), "eig"),
    Case("eigvals", tp.linalg.eigvals,
         lambda a: np.linalg.eigvals(a).astype(np.result_type(a, 1j)), "eigvals"),
    Case("solve", lambda x: tp.linalg.solve(x, _rhs(x)), lambda a: np.linalg.solve(a, _rhs(a)),
         "solve"),
    Case("inv", tp.linalg.inv, np.linalg.inv, "inv"),
    Case("det", tp.linalg.det, np.linalg.det, "det"),
    Case("slogdet", _tuple(tp.linalg.slogdet), _tuple(np.linalg.slogdet), "slogdet"),
    Case("cholesky", tp.linalg.cholesky, np.linalg.cholesky, "cholesky"),
    Case("cholesky_upper", lambda x: tp.linalg.cholesky(x, upper=True),
         lambda a: np.linalg.cholesky(a, upper=True), "cholesky"),
    Case("pinv", tp.linalg.pinv, np.linalg.pinv, "pinv"),
    Case("pinv_hermitian", lambda x: tp.linalg.pinv(x, hermitian=True),
         lambda a: np.linalg.pinv(a, hermitian=True), "pinv"),
    # tensors get rank as a float (documented): x, residuals and s are compared
    Case("lstsq", lambda x: (lambda r: (r[0], r[1], r[3]))(tp.linalg.lstsq(x, _rhs(x))),
         lambda a: (lambda r: (r[0], r[1], r[3]))(np.linalg.lstsq(a, _rhs(a))), "lstsq",
         shapes=MATRICES),
    Case("matrix_power_0", lambda x: tp.linalg.matrix_power(x, 0),
         lambda a: np.linalg.matrix_power(a, 0), "matrix_power", derivatives=False),
    Case("matrix_power_3", lambda x: tp.linalg.matrix_power(x, 3),
         lambda a: np.linalg.matrix_power(a, 3), "matrix_power"),
    Case("matrix_power_-2", lambda x: tp.linalg.matrix_power(x, -2),
         lambda a: np.linalg.matrix_power(a, -2), "matrix_power"),
    Case("multi_dot", lambda x: tp.linalg.multi_dot([x, _swap(x), x]),
         lambda a: np.linalg.multi_dot([a, _swap(a), a]), "multi_dot", shapes=MATRICES),
    Case("expm", tp.linalg.expm, scipy.linalg.expm, "expm"),
    # on plain arrays tp.scipy.linalg.expm is SciPy's own: its tenpy_ad body is checked
    Case("scipy_expm", direct(tp.scipy.linalg.expm), scipy.linalg.expm, "expm"),
    Case("cond", tp.linalg.cond, np.linalg.cond, "cond"),
    Case("cond_-2", lambda x: tp.linalg.cond(x, -2), lambda a: np.linalg.cond(a, -2), "cond"),
    Case("cond_1", lambda x: tp.linalg.cond(x, 1), lambda a: np.linalg.cond(a, 1), "cond"),
    Case("cond_fro", lambda x: tp.linalg.cond(x, "fro"), lambda a: np.linalg.cond(a, "fro"),
         "cond"),
    Case("cond_inf", lambda x: tp.linalg.cond(x, np.inf), lambda a: np.linalg.cond(a, np.inf),
         "cond"),
    Case("matrix_rank", tp.linalg.matrix_rank, np.linalg.matrix_rank, "matrix_rank",
         derivatives=False),
    Case("matrix_rank_tol", lambda x: tp.linalg.matrix_rank(x, tol=0.5),
         lambda a: np.linalg.matrix_rank(a, tol=0.5), "matrix_rank", derivatives=False),
    Case("matrix_rank_hermitian", lambda x: tp.linalg.matrix_rank(x, hermitian=True),
         lambda a: np.linalg.matrix_rank(a, hermitian=True), "matrix_rank",
         derivatives=False),
    Case("norm", tp.linalg.norm, np.linalg.norm, "norm"),
    Case("norm_axis", lambda x: tp.linalg.norm(x, axis=-1, keepdims=True),
         lambda a: np.linalg.norm(a, axis=-1, keepdims=True), "norm"),
]
for _order in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
    CASES.append(Case(f"norm_matrix_{_order}",
                      (lambda o: lambda x: tp.linalg.norm(x, o, axis=(-2, -1)))(_order),
                      (lambda o: lambda a: np.linalg.norm(a, o, axis=(-2, -1)))(_order),
                      "norm"))
for _order in (1, 2, 3, 0.5, -1, np.inf, -np.inf, 0):
    CASES.append(Case(f"norm_vector_{_order}",
                      (lambda o: lambda x: tp.linalg.norm(x, o, axis=-1))(_order),
                      (lambda o: lambda a: np.linalg.norm(a, o, axis=-1))(_order), "norm",
                      derivatives=_order != 0,        # ord=0 counts: piecewise constant
                      finite=_order > 0))             # p < 0: inf, as NumPy's

TABLE = [(case, shape, dtype) for case in CASES for shape in (case.shapes or EVERY)
         for dtype in DTYPES]


def _ids(table):
    return [f"{c.label}-{'x'.join(map(str, s))}-{d}" for c, s, d in table]


def _numpy_result(case, a):
    """NumPy's outputs (a tuple), or the exception NumPy raises."""
    try:
        with np.errstate(divide="ignore"):          # 0 ** (1/p), p < 0: inf
            out = case.ref(a.copy())
    except (ValueError, np.linalg.LinAlgError) as error:
        return error
    return out if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("case,shape,dtype", TABLE, ids=_ids(TABLE))
def test_forward_is_numpys_or_a_clear_error(case, shape, dtype):
    a = np.zeros(shape, dtype)
    expected = _numpy_result(case, a)
    for mode in ALL_MODES:
        if isinstance(expected, Exception):
            with pytest.raises((TenpyAdError, np.linalg.LinAlgError), match=case.name):
                run(case.fn, mode, a)
            continue
        got = run(case.fn, mode, a)
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(expected)
        for k, (g, e) in enumerate(zip(got, expected)):
            assert_matches(g, e, f"{mode} mode, output {k}")


# ---------------------------------------------------------------- derivatives


def _loss(case):
    """A real scalar of every floating output: ``sum(Re o + |o|^2)`` (``sum(Re o)`` of
    infinite ones)."""
    def loss(x):
        total = 0.0
        out = case.fn(x)
        for o in out if isinstance(out, tuple) else (out,):
            total = total + tp.sum(tp.real(o))
            if case.finite:
                total = total + tp.sum(tp.real(o * tp.conj(o)))
        return total
    return loss



DIFFERENTIABLE = [(c, s, d) for c, s, d in TABLE
                  if c.derivatives and not isinstance(_numpy_result(c, np.zeros(s, d)),
                                                      Exception)]


def _check_zero_size_derivative(mode, result, a):
    """A tangent of the loss is a 0-d zero; a gradient has ``a``'s shape and dtype and is
    zero (it has no entries when ``a`` has none)."""
    shape, dtype = ((), result.dtype) if mode in TANGENTS else (a.shape, a.dtype)
    assert (result.shape, result.dtype) == (shape, dtype), (
        f"{mode}: {result.dtype}{list(result.shape)}, expected {dtype}{list(shape)}")
    assert not result.any(), f"{mode}: {result!r} is not zero"


@pytest.mark.parametrize("case,shape,dtype", DIFFERENTIABLE, ids=_ids(DIFFERENTIABLE))
def test_derivatives_are_zero_size_gradients(case, shape, dtype):
    a = np.zeros(shape, dtype)
    v = np.ones(shape, dtype)
    for mode in DERIVATIVES:
        _check_zero_size_derivative(mode, derivative(mode, _loss(case), a, v), a)


# ---------------------------------------------------------------- results of zero size


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_with_no_right_hand_sides(dtype):
    """A non-empty matrix and an ``n x 0`` right-hand side: the solution is empty, so the
    gradient of the (non-empty) matrix is exactly zero, in every mode."""
    a = np.eye(3, dtype=dtype) * 2 + 0.1
    rhs = np.zeros((3, 0), dtype)
    case = Case("solve_empty", lambda x: tp.linalg.solve(x, rhs),
                lambda x: np.linalg.solve(x, rhs), "solve")
    for mode in ALL_MODES:
        assert_matches(run(case.fn, mode, a), case.ref(a), f"{mode} mode")
    for mode in DERIVATIVES:
        _check_zero_size_derivative(mode, derivative(mode, _loss(case), a, np.ones_like(a)), a)


@pytest.mark.parametrize("name,fn", [("svds", lambda x: tp.linalg.svds(x, 1)),
                                     ("eigsh", lambda x: tp.linalg.eigsh(x, 1))])
@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0)])
def test_partial_decompositions_need_k_values(name, fn, shape):
    """``svds``/``eigsh`` take matrices with at least k >= 1 values: an empty one is a
    ShapeError naming the function (eigsh's non-square ones: as for eigh)."""
    for mode in ("numpy", "eager", "traced"):
        with pytest.raises(TenpyAdError, match=name):
            run(fn, mode, np.zeros(shape))

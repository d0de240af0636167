"""tp.scipy.linalg: SciPy's own results on plain arrays; SciPy's values, shapes and
dtypes on tensors in every mode (eager, traced, compiled, jit); derivatives against
central finite differences (first order, and Hessian-vector products against finite
differences of the gradient) in every derivative mode; the errors of options without a
derivative; the refusal of ``scipy.linalg.f(tensor)`` naming tp.scipy.linalg.f."""
import numpy as np
import pytest
import scipy.linalg as sl

import tenpy_ad as tp
from tenpy_ad.errors import (ConcretizationError, DTypeError, NotDifferentiableError,
                             ShapeError, UnsupportedError)
from tenpy_ad.testing import check_grads

from modes import DERIVATIVE_MODES, derivatives_in, run

L = tp.scipy.linalg
RNG = np.random.default_rng(20261201)


def _array(shape, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if dtype == "complex128":
        x = x + 1j * rng.standard_normal(shape)
    return x


def _hermitian_pd(n, dtype="float64", seed=1, batch=()):
    x = _array(batch + (n, n), dtype, seed)
    return x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)


def _hermitian(n, dtype="float64", seed=2):
    x = _array((n, n), dtype, seed)
    return x + np.conj(x.T)


def _away_from_cut(n, dtype="float64", seed=3, batch=()):
    return 0.3 * _array(batch + (n, n), dtype, seed) + 2.0 * np.eye(n)


# ------------------------------------------------------------------ values

# (id, function, args, kwargs, gauge): with ``gauge`` the vectors are compared by |entry|
# (each column's sign or phase is LAPACK's choice); eig's vectors are complex
VALUE_CASES = []
for _dt in ("float64", "complex128"):
    VALUE_CASES += [
        (f"svd-square-{_dt}", "svd", (_array((3, 3), _dt),), {}, True),
        (f"svd-tall-reduced-{_dt}", "svd", (_array((4, 3), _dt),), {"full_matrices": False},
         True),
        (f"svd-wide-gesvd-{_dt}", "svd", (_array((2, 4), _dt),),
         {"full_matrices": False, "lapack_driver": "gesvd"}, True),
        (f"svd-stack-{_dt}", "svd", (_array((2, 3, 4), _dt),), {"full_matrices": False}, True),
        (f"svd-values-{_dt}", "svd", (_array((4, 3), _dt),), {"compute_uv": False}, False),
        (f"svdvals-{_dt}", "svdvals", (_array((3, 5), _dt),), {}, False),
        (f"eigh-{_dt}", "eigh", (_hermitian(4, _dt),), {}, True),
        (f"eigh-upper-subset-{_dt}", "eigh", (_array((4, 4), _dt),),
         {"lower": False, "subset_by_index": [1, 2]}, True),
        (f"eigh-values-{_dt}", "eigh", (_hermitian(4, _dt),), {"eigvals_only": True}, False),
        (f"eigh-stack-{_dt}", "eigh", (_hermitian_pd(3, _dt, batch=(2,)),), {}, True),
        (f"eigh-generalized-{_dt}", "eigh", (_hermitian(3, _dt), _hermitian_pd(3, _dt)), {},
         True),
        (f"eigh-generalized-2-{_dt}", "eigh", (_hermitian(3, _dt), _hermitian_pd(3, _dt)),
         {"type": 2, "lower": False}, True),
        (f"eigh-generalized-3-{_dt}", "eigh", (_hermitian(3, _dt), _hermitian_pd(3, _dt)),
         {"type": 3}, True),
        (f"eigvalsh-{_dt}", "eigvalsh", (_array((4, 4), _dt),), {"lower": False}, False),
        (f"eig-{_dt}", "eig", (_array((3, 3), _dt),), {"left": True}, True),
        (f"eig-homogeneous-{_dt}", "eig", (_array((3, 3), _dt),),
         {"homogeneous_eigvals": True, "right": False}, False),
        (f"eigvals-{_dt}", "eigvals", (_array((2, 3, 3), _dt),), {}, False),
        (f"qr-full-square-{_dt}", "qr", (_array((3, 3), _dt),), {}, False),
        (f"qr-full-wide-{_dt}", "qr", (_array((3, 5), _dt),), {}, False),
        (f"qr-economic-{_dt}", "qr", (_array((5, 3), _dt),), {"mode": "economic"}, False),
        (f"qr-r-{_dt}", "qr", (_array((5, 3), _dt),), {"mode": "r"}, False),
        (f"qr-stack-{_dt}", "qr", (_array((2, 4, 3), _dt),), {"mode": "economic"}, False),
        (f"expm-stack-{_dt}", "expm", (_array((2, 3, 3), _dt),), {}, False),
        (f"solve-{_dt}", "solve", (_array((3, 3), _dt), _array((3, 2), _dt, 4)), {}, False),
        (f"solve-vector-stack-{_dt}", "solve", (_array((2, 3, 3), _dt), _array((3,), _dt, 4)),
         {}, False),
        (f"solve-sym-{_dt}", "solve", (_array((3, 3), _dt), _array((3, 2), _dt, 4)),
         {"assume_a": "sym"}, False),
        (f"solve-her-lower-{_dt}", "solve", (_array((3, 3), _dt), _array((3,), _dt, 4)),
         {"assume_a": "her", "lower": True}, False),
        (f"solve-pos-{_dt}", "solve", (_hermitian_pd(3, _dt), _array((3, 2), _dt, 4)),
         {"assume_a": "pos"}, False),
        (f"solve-diagonal-{_dt}", "solve", (_array((3, 3), _dt), _array((3, 2), _dt, 4)),
         {"assume_a": "diagonal"}, False),
        (f"solve-tridiagonal-{_dt}", "solve", (_array((4, 4), _dt), _array((4, 2), _dt, 4)),
         {"assume_a": "tridiagonal"}, False),
        (f"solve-lower-triangular-{_dt}", "solve",
         (_array((3, 3), _dt), _array((3, 2), _dt, 4)), {"assume_a": "lower triangular"},
         False),
        (f"solve_triangular-{_dt}", "solve_triangular",
         (_array((3, 3), _dt), _array((3, 2), _dt, 4)),
         {"trans": 2, "lower": True, "unit_diagonal": True}, False),
        (f"solve_triangular-T-{_dt}", "solve_triangular",
         (_array((3, 3), _dt), _array((3,), _dt, 4)), {"trans": "T"}, False),
        (f"inv-{_dt}", "inv", (_array((2, 3, 3), _dt),), {}, False),
        (f"inv-pos-{_dt}", "inv", (_hermitian_pd(3, _dt),), {"assume_a": "pos", "lower": True},
         False),
        (f"inv-upper-{_dt}", "inv", (_array((3, 3), _dt),), {"assume_a": "upper triangular"},
         False),
        (f"det-{_dt}", "det", (_array((2, 3, 3), _dt),), {}, False),
        (f"cholesky-upper-{_dt}", "cholesky", (_hermitian_pd(3, _dt),), {}, False),
        (f"cholesky-lower-stack-{_dt}", "cholesky", (_hermitian_pd(3, _dt, batch=(2,)),),
         {"lower": True}, False),
        (f"cho_factor-{_dt}", "cho_factor", (_hermitian_pd(3, _dt) + 0.1 * _array((3, 3), _dt),),
         {}, False),
        (f"cho_factor-lower-{_dt}", "cho_factor", (_hermitian_pd(3, _dt),), {"lower": True},
         False),
        (f"lu-{_dt}", "lu", (_array((4, 4), _dt),), {}, False),
        (f"lu-tall-{_dt}", "lu", (_array((5, 3), _dt),), {}, False),
        (f"lu-wide-permute_l-{_dt}", "lu", (_array((3, 5), _dt),), {"permute_l": True}, False),
        (f"lu-p_indices-{_dt}", "lu", (_array((4, 4), _dt),), {"p_indices": True}, False),
        (f"lu-stack-{_dt}", "lu", (_array((2, 3, 3), _dt),), {}, False),
        (f"lu_factor-{_dt}", "lu_factor", (_array((4, 4), _dt),), {}, False),
        (f"lu_factor-tall-{_dt}", "lu_factor", (_array((5, 3), _dt),), {}, False),
        (f"lu_factor-wide-{_dt}", "lu_factor", (_array((3, 5), _dt),), {}, False),
        (f"polar-{_dt}", "polar", (_array((4, 3), _dt),), {}, False),
        (f"polar-left-{_dt}", "polar", (_array((3, 4), _dt),), {"side": "left"}, False),
        (f"sqrtm-{_dt}", "sqrtm", (_away_from_cut(3, _dt),), {}, False),
        (f"sqrtm-stack-{_dt}", "sqrtm", (_away_from_cut(3, _dt, batch=(2,)),), {}, False),
        (f"logm-{_dt}", "logm", (_away_from_cut(3, _dt),), {}, False),
        (f"fractional_matrix_power-{_dt}", "fractional_matrix_power",
         (_away_from_cut(3, _dt), 0.3), {}, False),
        (f"block_diag-{_dt}", "block_diag",
         (_array((2, 3), _dt), np.array([1.0, 2.0]), _array((1, 1), _dt, 5)), {}, False),
    ]
VALUE_CASES.append(("sqrtm-complex-of-real", "sqrtm", (-_hermitian_pd(3) + 0j,), {}, False))

#: documented differences of dtype: eig's vectors are complex, lu's indices int64
_DTYPE_EXCEPTIONS = {"eig", "lu_factor", "lu"}


def _tensor_args(args):
    return [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype != int]


def _call(name, args, kwargs):
    """``fn(*arrays)`` calling tp.scipy.linalg.name with the ndarray args in their
    places (the others, such as ``t``, as constants)."""
    places = _tensor_args(args)

    def fn(*arrays):
        full = list(args)
        for i, a in zip(places, arrays):
            full[i] = a
        out = getattr(L, name)(*full, **kwargs)
        if isinstance(out, tuple) and isinstance(out[-1], bool):         # cho_factor
            out = out[0]
        return out
    return fn, [args[i] for i in places]


def _listed(x):
    return [np.asarray(o) for o in (x if isinstance(x, (tuple, list)) else (x,))]


def _compare(got, expected, gauge: bool, exact_dtype: bool, what: str):
    got, expected = _listed(got), _listed(expected)
    assert len(got) == len(expected), what
    for g, e in zip(got, expected):
        assert g.shape == e.shape, f"{what}: shape {g.shape}, SciPy {e.shape}"
        if exact_dtype:
            assert g.dtype == e.dtype, f"{what}: dtype {g.dtype}, SciPy {e.dtype}"
        if gauge and g.ndim >= 2:
            g, e = np.abs(g), np.abs(e)
        scale = max(1.0, float(np.max(np.abs(e)))) if e.size else 1.0
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-10 * scale, err_msg=what)


@pytest.mark.parametrize("case", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_plain_arrays_get_scipys_own_results(case):
    _, name, args, kwargs, _ = case
    expected = getattr(sl, name)(*args, **kwargs)
    got = getattr(L, name)(*args, **kwargs)
    for g, e in zip(_listed(got), _listed(expected)):
        assert g.dtype == e.dtype and np.array_equal(g, e, equal_nan=True)


@pytest.mark.parametrize("mode", ["eager", "traced", "compiled", "jit"])
@pytest.mark.parametrize("case", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_tensors_get_scipys_values_in_every_mode(case, mode):
    cid, name, args, kwargs, gauge = case
    expected = getattr(sl, name)(*args, **kwargs)
    if isinstance(expected, tuple) and isinstance(expected[-1], bool):
        expected = expected[0]
    fn, arrays = _call(name, args, kwargs)
    got = run(fn, mode, *arrays)
    if name == "lu" and kwargs.get("p_indices"):
        expected = (expected[0].astype(np.int64),) + expected[1:]
    if name == "lu_factor":
        expected = (expected[0], expected[1].astype(np.int64))
    _compare(got, expected, gauge, name not in _DTYPE_EXCEPTIONS or name == "lu_factor",
             f"{cid} in {mode} mode")


def test_eig_vectors_are_eigenvectors():
    """Gauge-free checks of eig's left and right vectors (their phases are free)."""
    a = _array((4, 4), "float64", 7)
    w, vl, vr = L.eig(tp.tensor(a), left=True)
    w, vl, vr = w.numpy(), vl.numpy(), vr.numpy()
    np.testing.assert_allclose(a @ vr, vr * w, atol=1e-12)
    np.testing.assert_allclose(np.conj(vl.T) @ a, w[:, None] * np.conj(vl.T), atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(vl, axis=0), 1.0, rtol=1e-13)


def test_generalized_eigh_is_normalised_as_lapack():
    a, b = _hermitian(4, "complex128"), _hermitian_pd(4, "complex128")
    for kind, gram in ((1, b), (2, b), (3, np.linalg.inv(b))):
        w, v = (x.numpy() for x in L.eigh(tp.tensor(a), tp.tensor(b), type=kind))
        np.testing.assert_allclose(np.conj(v.T) @ gram @ v, np.eye(4), atol=1e-12)
        np.testing.assert_allclose(w, sl.eigh(a, b, type=kind, eigvals_only=True), rtol=1e-12)


def test_null_space_and_orth_match_scipy_on_eager_tensors():
    rank_two = _array((4, 2), seed=8) @ _array((2, 5), seed=9)
    for name in ("null_space", "orth"):
        got = getattr(L, name)(tp.tensor(rank_two)).numpy()
        expected = getattr(sl, name)(rank_two)
        assert got.shape == expected.shape
        np.testing.assert_allclose(got @ np.conj(got.T), expected @ np.conj(expected.T),
                                   atol=1e-12)                  # the same subspace
    with pytest.raises(ConcretizationError, match="null_space: the number of columns"):
        L.null_space(tp.input((4, 5)))


def test_large_eigh_subsets_use_the_partial_decomposition():
    """The top eigenpairs of a large matrix (``subset_by_index=[lo, n-1]``): eigsh's values
    and the derivative of the dense slice."""
    n = 210
    a = _hermitian(n, seed=11)
    lo = n - 3
    w = L.eigh(tp.tensor(a), subset_by_index=[lo, n - 1], eigvals_only=True)
    np.testing.assert_allclose(w.numpy(), sl.eigh(a, subset_by_index=[lo, n - 1],
                                                  eigvals_only=True), rtol=1e-10)

    def loss(fn):
        t = tp.tensor(a, requires_grad=True)
        tp.sum(fn(t) ** 2).backward()
        return t.grad.numpy()
    partial = loss(lambda t: L.eigh(t, subset_by_index=[lo, n - 1], eigvals_only=True))
    dense = loss(lambda t: tp.linalg.eigh(t)[0][lo:])
    np.testing.assert_allclose(partial, dense, atol=1e-8)


# ------------------------------------------------------------------ derivatives

def _pd(x):
    return x @ tp.conj(tp.matrix_transpose(x)) + 3.0 * np.eye(x.shape[-1])


def _cut(x):
    return x * 0.3 + 2.0 * np.eye(x.shape[-1])


def _eigh_projector(w, v):
    return (v * w[..., None, :]) @ tp.conj(tp.matrix_transpose(v))


GRAD_CASES = [   # (id, loss of tensors, shapes, complex too, second order)
    ("svd", lambda x: (lambda u, s, vh: u @ vh + tp.abs(u) ** 2 * s)(*L.svd(x)), [(3, 3)],
     True, True),
    ("svd-reduced", lambda x: (lambda u, s, vh: (u * s) @ vh[:, :1])(
        *L.svd(x, full_matrices=False)), [(4, 3)], True, False),
    ("svdvals", lambda x: L.svdvals(x), [(3, 5)], True, False),
    ("eigh", lambda x: _eigh_projector(*L.eigh(x, lower=False)), [(4, 4)], True, True),
    ("eigh-subset", lambda x: _eigh_projector(*L.eigh(x, subset_by_index=[1, 2])), [(4, 4)],
     True, False),
    ("eigh-generalized", lambda x, y: _eigh_projector(*L.eigh(x, _pd(y))), [(3, 3), (3, 3)],
     True, True),
    ("eigh-generalized-3", lambda x, y: L.eigh(x, _pd(y), type=3, eigvals_only=True),
     [(3, 3), (3, 3)], True, False),
    ("eig-left", lambda x: (lambda w, vl: tp.abs(vl) ** 2 + tp.real(w))(*L.eig(x, left=True,
                                                                              right=False)),
     [(3, 3)], True, False),
    ("qr-full", lambda x: (lambda q, r: tp.sum(q * 2.0) + r)(*L.qr(x)), [(3, 4)], True, True),
    ("qr-r", lambda x: L.qr(x, mode="r")[0], [(4, 3)], True, False),
    ("expm", L.expm, [(2, 3, 3)], True, False),
    ("solve-pos", lambda x, b: L.solve(_pd(x), b, assume_a="pos"), [(3, 3), (3, 2)], True,
     True),
    ("solve-sym", lambda x, b: L.solve(x, b, assume_a="sym", lower=True), [(3, 3), (3,)],
     True, False),
    ("solve-transposed", lambda x, b: L.solve(x, b, transposed=True), [(3, 3), (3, 2)], False,
     False),
    ("solve_triangular", lambda x, b: L.solve_triangular(x + 3.0 * np.eye(3), b, trans=2),
     [(3, 3), (3, 2)], True, False),
    ("inv-pos", lambda x: L.inv(_pd(x), assume_a="pos"), [(3, 3)], True, False),
    ("det", L.det, [(3, 3)], True, True),
    ("cholesky", lambda x: L.cholesky(_pd(x)), [(3, 3)], True, True),
    ("cho", lambda x, b: L.cho_solve(L.cho_factor(_pd(x), lower=True), b), [(3, 3), (3, 2)],
     True, False),
    ("lu", lambda x: (lambda p, l, u: l + u * 2.0)(*L.lu(x)), [(4, 4)], True, True),
    ("lu-permute_l", lambda x: (lambda pl, u: tp.sum(pl) + u)(*L.lu(x, permute_l=True)),
     [(3, 4)], True, False),
    ("lu_factor", lambda x: L.lu_factor(x)[0], [(5, 3)], True, False),
    ("lu_solve", lambda x, b: L.lu_solve(L.lu_factor(x), b, trans=1), [(3, 3), (3, 2)], True,
     True),
    ("polar", lambda x: (lambda u, p: u + tp.sum(p))(*L.polar(x)), [(4, 3)], True, False),
    ("polar-left", lambda x: (lambda u, p: tp.sum(u) + p)(*L.polar(x, side="left")),
     [(3, 4)], True, True),
    ("sqrtm", lambda x: L.sqrtm(_cut(x)), [(3, 3)], True, True),
    ("logm", lambda x: L.logm(_cut(x)), [(3, 3)], True, True),
    ("fractional_matrix_power", lambda x: L.fractional_matrix_power(_cut(x), -0.4), [(3, 3)],
     True, False),
    ("block_diag", lambda x, y: L.block_diag(x, y, np.ones((1, 2))), [(2, 3), (2, 2)], True,
     False),
]
GRADS = [(c, dt, order) for c in GRAD_CASES for dt in (("float64", "complex128") if c[3]
                                                        else ("float64",))
         for order in ((1, 2) if c[4] else (1,))]


@pytest.mark.parametrize("case,dtype,order", GRADS,
                         ids=[f"{c[0]}-{dt}-{o}" for c, dt, o in GRADS])
def test_derivatives_against_finite_differences(case, dtype, order):
    """Traced JVP and VJP (compiled programs) against central differences, the adjoint
    identity, eager gradients equal to the traced ones; order 2: the same of the gradient
    map (Hessian-vector products against differences of the gradient)."""
    _, loss, shapes, _, _ = case
    args = [_array(s, dtype, seed=20 + i) for i, s in enumerate(shapes)]
    check_grads(loss, args, order=order, rng=np.random.default_rng(5), eager=True)


def _central_gradient(loss, a, step=1e-6):
    grad = np.zeros_like(a)
    for index in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[index] = step
        grad[index] = (float(loss(a + e)) - float(loss(a - e))) / (2 * step)  # SciPy's
    return grad


SCALAR_LOSSES = {
    "svd": lambda x: tp.sum(L.svd(x)[1] ** 3),
    "eigh": lambda x: tp.sum(L.eigh(x, lower=False, eigvals_only=True) ** 3),
    "qr": lambda x: tp.sum(L.qr(x)[1] ** 2 * L.qr(x)[0][:, :1]),
    "lu": lambda x: tp.sum(L.lu(x)[2] ** 2 + L.lu(x)[1]),
    "solve": lambda x: tp.sum(L.solve(x + 3.0 * np.eye(3), np.ones(3)) ** 2),
    "sqrtm": lambda x: tp.sum(L.sqrtm(_cut(x)) ** 2),
    "logm": lambda x: tp.sum(L.logm(_cut(x)) ** 3),
}


@pytest.mark.parametrize("mode", DERIVATIVE_MODES)
@pytest.mark.parametrize("name", sorted(SCALAR_LOSSES))
def test_gradient_and_hessian_in_every_derivative_mode(name, mode):
    """The gradient against central differences of the loss, the Hessian against central
    differences of the (traced) gradient, in every way of taking them."""
    loss = SCALAR_LOSSES[name]
    a = _array((3, 3), seed=31)
    grad, hessian = derivatives_in(mode, loss, a)
    np.testing.assert_allclose(grad, _central_gradient(loss, a).ravel(), rtol=1e-6,
                               atol=1e-7)
    x = tp.input(a.shape, a.dtype)
    gradient = tp.compile([tp.ad.grad(loss(x), x)], inputs=[x])
    step = 1e-5
    for j, index in enumerate(np.ndindex(a.shape)):
        e = np.zeros_like(a)
        e[index] = step
        column = (gradient(a + e)[0] - gradient(a - e)[0]) / (2 * step)
        np.testing.assert_allclose(hessian[:, j], column.ravel(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("singular_values", [(1.0, 1.0, 1.0), (2.0, 1.0, 1.0)])
def test_polar_is_exact_at_degenerate_singular_values(side, singular_values):
    """u and p are smooth where a has full rank, degenerate or not (p = u^H a: the SVD's
    broadened derivative of vh^H s vh would miss the ds terms there)."""
    a = np.diag(singular_values)
    weights = [_array((3, 3), seed=50), _array((3, 3), seed=51)]

    def loss(x):
        u, p = L.polar(x, side=side)
        return tp.sum(u * weights[0]) + tp.sum(p * weights[1])
    t = tp.tensor(a, requires_grad=True)
    loss(t).backward()
    np.testing.assert_allclose(t.grad.numpy(), _central_gradient(loss, a), atol=1e-7)


# ------------------------------------------------------------------ errors

@pytest.mark.parametrize("call,error,words", [
    (lambda x: L.qr(x, pivoting=True), UnsupportedError, "qr: pivoting=True"),
    (lambda x: L.qr(x, mode="raw"), UnsupportedError, "qr: mode='raw'"),
    (lambda x: L.qr(x[:, :2]), ShapeError, "mode='economic'"),
    (lambda x: L.eigh(x, subset_by_value=[0, 1]), UnsupportedError, "eigh: subset_by_value"),
    (lambda x: L.eigh(x, subset_by_index=[2, 1]), ValueError, "eigh: requested eigenvalue"),
    (lambda x: L.eig(x, x), UnsupportedError, "eig: the generalized problem"),
    (lambda x: L.solve(x + 0j, x, transposed=True), UnsupportedError, "solve: transposed"),
    (lambda x: L.solve(x, x, assume_a="spd"), ValueError, "not a recognized matrix structure"),
    (lambda x: L.svd(x, lapack_driver="gesvj"), ValueError, "svd: lapack_driver"),
    (lambda x: L.polar(x, side="up"), ValueError, "polar: side"),
    (lambda x: L.sqrtm(-_pd(x)), DTypeError, "sqrtm: the result for this real"),
    (lambda x: L.solve(x - x, x, assume_a="pos"), np.linalg.LinAlgError, "positive definite"),
])
def test_options_without_a_derivative_raise_naming_the_function(call, error, words):
    x = tp.tensor(_array((3, 3), seed=40), requires_grad=True)
    with pytest.raises(error, match=words.replace("(", r"\(").replace("[", r"\[")):
        call(x)


def test_unsupported_error_is_a_not_implemented_error():
    assert issubclass(UnsupportedError, NotImplementedError)


TIE = np.array([[1.0, 2.0, 0.5], [-1.0, 0.5, 3.0], [0.25, 4.0, 1.0]])   # |a00| = |a10|


def test_lu_at_a_pivoting_tie_has_values_but_no_derivative():
    p, l, u = (x.numpy() for x in L.lu(tp.tensor(TIE)))
    np.testing.assert_allclose(p @ l @ u, TIE, atol=1e-15)
    t = tp.tensor(TIE, requires_grad=True)
    with pytest.raises(NotDifferentiableError, match="lu: the partial pivoting has a tie "
                                                     "at column 0"):
        tp.sum(L.lu(t)[2]).backward()
    x = tp.input((3, 3))
    program = tp.compile([tp.ad.grad(tp.sum(L.lu_factor(x)[0] ** 2), x)], inputs=[x])
    program(TIE + np.diag([0.1, 0.0, 0.0]))               # no tie: runs
    with pytest.raises(NotDifferentiableError, match="lu: the partial pivoting"):
        program(TIE)
    with pytest.raises(NotDifferentiableError, match="lu: the partial pivoting"):
        tp.jvp(lambda z: L.lu(z)[1], (TIE,), (np.ones((3, 3)),))


def test_lu_of_a_complex_tie_uses_lapacks_magnitude():
    """zgetrf compares |Re| + |Im|: 1 + 1j and 2 tie, 1 + 1j and 1.5 do not."""
    for first, tied in ((2.0, True), (1.5, False)):
        a = np.array([[first, 1.0], [1.0 + 1.0j, 3.0]])
        t = tp.tensor(a, requires_grad=True)
        loss = tp.sum(tp.abs(L.lu(t)[2]) ** 2)
        if tied:
            with pytest.raises(NotDifferentiableError, match="tie at column 0"):
                loss.backward()
        else:
            loss.backward()


def test_scipys_own_functions_name_tp_scipy_linalg():
    t = tp.tensor(_array((3, 3)), requires_grad=True)
    with pytest.raises(NotDifferentiableError,
                       match="by scipy.linalg.svd, .*call tp.scipy.linalg.svd instead"):
        sl.svd(t)
    with pytest.raises(ConcretizationError,
                       match="by scipy.linalg.lu_factor, .*call tp.scipy.linalg.lu_factor"):
        sl.lu_factor(tp.input((3, 3)))
    with pytest.raises(NotDifferentiableError, match="by scipy.linalg.schur, .*has no "
                                                     "tenpy_ad version"):
        sl.schur(t)


def test_the_registry_lists_the_scipy_names():
    names = set(tp.numpy.supported_names())
    for name in L.__all__:
        assert f"scipy.linalg.{name}" in names
        assert getattr(L, name).__doc__

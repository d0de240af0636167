"""``tp.scipy.special``: SciPy's values and dtypes in every mode (float64, float32, complex128
where SciPy has a complex loop, special values included), ``scipy.special.<ufunc>(t)``
dispatching on tensors, SciPy's exact results on plain arrays, clear errors for what is not
supported, and derivatives against central differences: gradients in every first-order
mode, Hessian-vector products in every second-order mode, and higher orders against
closed forms."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.special as sc

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad.errors import ArgumentError, ArgumentValueError, DTypeError, NotDifferentiableError
from tenpy_ad.testing import check_grads

from derivative_modes import FIRST_ORDER, SECOND_ORDER, TANGENTS, derivative
from modes import ALL_MODES, run

S = tp.scipy.special
RNG = np.random.default_rng(2024)


def _uniform(low, high, shape=(6,)):
    return RNG.uniform(low, high, shape)


# ------------------------------------------------------------------ values in every mode

#: name -> (arguments covering the domain and its special values, as float64 arrays)
UNARY_POINTS = {
    "erf": [np.array([-3.0, -0.5, 0.0, 0.7, 2.0, np.inf, -np.inf])],
    "erfc": [np.array([-3.0, -0.5, 0.0, 0.7, 2.0, 27.0, np.inf])],
    "erfinv": [np.array([-1.0, -0.99, -0.2, 0.0, 0.5, 1.0, 1.5])],
    "erfcinv": [np.array([0.0, 0.01, 0.5, 1.0, 1.7, 2.0, -0.5])],
    "gamma": [np.array([0.0, -0.0, -1.0, -2.5, 0.3, 4.0, 171.5, 200.0])],
    "gammaln": [np.array([0.0, -1.0, -2.5, 0.3, 4.0, 1e5])],
    "loggamma": [np.array([0.3, 1.0, 4.0, 1e5])],
    "psi": [np.array([0.0, -0.0, -1.0, -2.5, 0.3, 4.0])],
    "expit": [np.array([-800.0, -30.0, -1.0, 0.0, 2.0, 40.0, np.inf])],
    "logit": [np.array([0.0, 1e-10, 0.3, 0.5, 0.9, 1.0, 1.2])],
    "log_expit": [np.array([-800.0, -30.0, -1.0, 0.0, 2.0, 40.0])],
    "entr": [np.array([-1.0, 0.0, 1e-300, 0.5, 1.0, 3.0, np.inf])],
    "erfcx": [np.array([-30.0, -3.0, -0.5, 0.0, 0.7, 19.0, 21.0, 1e5, 1e30, np.inf])],
    "ndtr": [np.array([-40.0, -3.0, -0.5, 0.0, 0.7, 9.0, np.inf, -np.inf])],
    "log_ndtr": [np.array([-1e5, -40.0, -3.0, -0.5, 0.0, 0.7, 9.0, 40.0, -np.inf])],
    "i0": [np.array([-3.0, -0.5, 0.0, 1e-200, 0.7, 20.0, 720.0])],
    "i0e": [np.array([-1e5, -3.0, -0.5, 0.0, 0.7, 20.0, 720.0, 1e30])],
    "i1": [np.array([-3.0, -0.5, 0.0, 1e-200, 0.7, 20.0, 720.0])],
    "i1e": [np.array([-1e5, -3.0, -0.5, 0.0, 0.7, 20.0, 720.0, 1e30])],
}
BINARY_POINTS = {
    "xlogy": [np.array([0.0, 0.0, 0.0, 1.0, 2.0, -1.5, 0.0]),
              np.array([0.0, 2.0, -1.0, 0.0, 3.0, 0.5, np.inf])],
    "xlog1py": [np.array([0.0, 0.0, 1.0, 2.0, -1.5, 0.0]),
                np.array([-1.0, 2.0, -1.0, 1e-12, 0.5, np.inf])],
    "rel_entr": [np.array([0.0, 0.0, 1.0, -1.0, 0.5, 2.0, 0.0]),
                 np.array([0.0, 1.0, 0.0, 1.0, 2.0, 0.5, -1.0])],
    "kl_div": [np.array([0.0, 0.0, 1.0, -1.0, 0.5, 2.0, 0.0]),
               np.array([0.0, 1.0, 0.0, 1.0, 2.0, 0.5, -1.0])],
    "gammainc": [np.array([0.5, 1.0, 2.0, 2.5, 0.0, 100.0, 3.0, 1.0, -1.0]),
                 np.array([0.0, 0.0, 0.0, 1.5, 2.0, 90.0, np.inf, -1.0, 1.0])],
    "gammaincc": [np.array([0.5, 1.0, 2.0, 2.5, 0.0, 100.0, 3.0, 1.0, -1.0]),
                  np.array([0.0, 0.0, 0.0, 1.5, 2.0, 90.0, np.inf, -1.0, 1.0])],
    "chdtr": [np.array([1.0, 2.0, 4.0, 5.0, 0.0, 200.0, 6.0, 2.0, -1.0]),
              np.array([0.0, 0.0, 0.0, 3.0, 4.0, 180.0, np.inf, -2.0, 2.0])],
    "chdtrc": [np.array([1.0, 2.0, 4.0, 5.0, 0.0, 200.0, 6.0, 2.0, -1.0]),
               np.array([0.0, 0.0, 0.0, 3.0, 4.0, 180.0, np.inf, -2.0, 2.0])],
}
POINTS = {**UNARY_POINTS, **BINARY_POINTS}
#: the functions SciPy has complex loops for
COMPLEX = ("erf", "erfc", "gamma", "loggamma", "psi", "xlogy", "xlog1py", "erfcx", "ndtr",
           "log_ndtr")


def _complex_points(name):
    finite = np.all([np.isfinite(a) for a in POINTS[name]], axis=0)
    return [a[finite] * (1 + 0.5j) + 0.25j for a in POINTS[name]]


def check_modes(fn, *args, ref):
    """``fn(*args)`` in every mode has ``ref(*args)``'s dtype, shape and values (NaNs and
    infinities at the same places: modes.check_modes scales its atol by the largest
    value, which an infinity makes infinite)."""
    expected = np.asarray(ref(*args))
    rtol = 2e-6 if expected.dtype in (np.float32, np.complex64) else 1e-13
    for mode in ALL_MODES:
        got = run(fn, mode, *args)
        assert got.dtype == expected.dtype and got.shape == expected.shape, mode
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=0, err_msg=mode)


def _quietly(fn):
    def quiet(*args):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return fn(*args)
    return quiet


@pytest.mark.parametrize("name", sorted(POINTS))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_and_dtypes_are_scipys_in_every_mode(name, dtype):
    args = [a.astype(dtype) for a in POINTS[name]]
    check_modes(_quietly(getattr(S, name)), *args, ref=_quietly(getattr(sc, name)))


@pytest.mark.parametrize("name", COMPLEX)
def test_complex_values_are_scipys_in_every_mode(name):
    check_modes(_quietly(getattr(S, name)), *_complex_points(name),
                ref=_quietly(getattr(sc, name)))


def test_special_values():
    """The values SciPy defines at its special points, on tensors."""
    def values(fn, *args):
        return np.asarray(fn(*[tp.tensor(a) for a in args]))
    assert values(S.xlogy, 0.0, 0.0) == 0.0 and values(S.xlog1py, 0.0, -1.0) == 0.0
    assert values(S.entr, 0.0) == 0.0 and values(S.entr, -1.0) == -np.inf
    np.testing.assert_array_equal(values(S.rel_entr, [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]),
                                  [0.0, 0.0, np.inf])
    np.testing.assert_array_equal(values(S.kl_div, [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]),
                                  [0.0, 1.0, np.inf])
    np.testing.assert_array_equal(values(S.erfinv, [1.0, -1.0]), [np.inf, -np.inf])
    np.testing.assert_array_equal(values(S.gamma, [0.0, -0.0]), [np.inf, -np.inf])
    assert np.isnan(values(S.gamma, -2.0))                       # SciPy's value at a pole


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_values_and_axes_are_scipys_in_every_mode(name, axis, dtype):
    x = (RNG.standard_normal((3, 4)) * 4).astype(dtype)
    x[0, 1] = -np.inf
    check_modes(lambda a: getattr(S, name)(a, axis=axis), x,
                ref=lambda a: getattr(sc, name)(a, axis=axis))


def test_softmax_of_0d_and_complex_inputs_and_logsumexp():
    check_modes(S.softmax, np.array(2.5), ref=sc.softmax)
    check_modes(S.log_softmax, np.array(2.5), ref=sc.log_softmax)
    z = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
    check_modes(lambda a: S.softmax(a, axis=1), z, ref=lambda a: sc.softmax(a, axis=1))
    check_modes(lambda a: S.logsumexp(a, axis=0), RNG.standard_normal((3, 4)),
                ref=lambda a: sc.logsumexp(a, axis=0))


@pytest.mark.parametrize("n", [0, 1, 3])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_polygamma_values_and_dtype_are_scipys(n, dtype):
    x = np.array([-2.5, -0.5, 0.0, 0.3, 1.0, 7.0], dtype)
    check_modes(_quietly(lambda a: S.polygamma(n, a)), x,
                ref=_quietly(lambda a: sc.polygamma(n, a)))


# ------------------------------------------------------------------ dispatch and plain arrays

@pytest.mark.parametrize("name", sorted(POINTS))
def test_scipy_ufunc_on_a_tensor_runs_tenpy_ads_version(name):
    args = [a[np.isfinite(a)][:3] for a in POINTS[name]]
    ufunc = getattr(sc, name)
    eager = _quietly(ufunc)(*[tp.tensor(a, requires_grad=True) for a in args])
    assert type(eager) is tp.Tensor and eager.requires_grad
    xs = [tp.input(a.shape) for a in args]
    traced = ufunc(*xs)
    assert type(traced) is tp.TracedTensor
    expected = _quietly(ufunc)(*args)
    rtol = 1e-15 if name == "expit" else 0     # the engine's overflow-free logistic
    np.testing.assert_allclose(eager.detach().numpy(), expected, rtol=rtol, atol=0)
    np.testing.assert_allclose(_quietly(tp.evaluate)(traced, dict(zip(xs, args))),
                               expected, rtol=rtol, atol=0)


def test_scipy_erf_dispatches_with_gradients_eager_and_traced():
    a = np.array([-1.0, 0.2, 1.5])
    slope = 2 / math.sqrt(math.pi) * np.exp(-a ** 2)
    t = tp.tensor(a, requires_grad=True)
    sc.erf(t).sum().backward()
    np.testing.assert_allclose(t.grad, slope, rtol=1e-14)
    x = tp.input((3,))
    grad = tp.compile([tp.ad.grad(sc.erf(x).sum(), x)], inputs=[x])(a)[0]
    np.testing.assert_allclose(grad, slope, rtol=1e-14)


def test_scipy_binary_ufuncs_broadcast_and_take_python_scalars():
    y = RNG.uniform(0.5, 2.0, (4,))
    x = RNG.standard_normal((3, 1))
    out = sc.xlogy(tp.tensor(x), y)
    assert out.shape == (3, 4)
    np.testing.assert_array_equal(np.asarray(out), sc.xlogy(x, y))
    for got, expected in ((sc.xlogy(2.0, tp.tensor(y)), sc.xlogy(2.0, y)),
                          (S.xlog1py(tp.tensor(x.astype(np.float32)), 0.5),
                           sc.xlog1py(x.astype(np.float32), 0.5)),
                          (S.rel_entr(tp.tensor(y.astype(np.float32)), np.float32(1.5)),
                           sc.rel_entr(y.astype(np.float32), np.float32(1.5))),
                          (sc.kl_div(tp.tensor(y), [1.0, 2.0, 3.0, 4.0]),
                           sc.kl_div(y, [1.0, 2.0, 3.0, 4.0]))):
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(POINTS))
def test_plain_arrays_get_scipys_own_result(name):
    args = POINTS[name]
    got, expected = _quietly(getattr(S, name))(*args), _quietly(getattr(sc, name))(*args)
    assert type(got) is type(expected) and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    scalar = _quietly(getattr(S, name))(*[a[1] for a in args])
    assert type(scalar) is type(_quietly(getattr(sc, name))(*[a[1] for a in args]))


def test_plain_arrays_of_the_other_functions_get_scipys_result():
    x = RNG.standard_normal((3, 4))
    for ours, theirs in ((S.softmax, sc.softmax), (S.log_softmax, sc.log_softmax),
                         (S.logsumexp, sc.logsumexp)):
        np.testing.assert_array_equal(ours(x, axis=1), theirs(x, axis=1))
    np.testing.assert_array_equal(S.polygamma(2, x), sc.polygamma(2, x))


# ------------------------------------------------------------------ errors

@pytest.mark.parametrize("name", ["erfinv", "erfcinv", "gammaln", "expit", "logit",
                                  "log_expit", "entr", "rel_entr", "kl_div", "i0", "i0e",
                                  "i1", "i1e", "gammainc", "gammaincc", "chdtr", "chdtrc"])
def test_complex_operands_of_real_only_functions_raise_naming_the_function(name):
    args = [tp.tensor(a[:2] + 1j) for a in POINTS[name]]
    with pytest.raises(DTypeError, match=name):
        getattr(S, name)(*args)


def test_real_only_non_ufuncs_refuse_complex():
    z = tp.tensor([1.0 + 1j, 2.0])
    with pytest.raises(DTypeError, match="polygamma"):
        S.polygamma(1, z)
    with pytest.raises(DTypeError, match="log_softmax"):
        S.log_softmax(z)


COMPLEX_POINT = np.array([1.2 + 0.5j, 2.0 - 0.3j, 0.7 + 1.1j])


@pytest.mark.parametrize("name", ["gamma", "loggamma", "erf", "erfc", "erfcx", "ndtr",
                                  "log_ndtr"])
def test_complex_first_derivatives(name, rng):
    check_grads(getattr(S, name), [COMPLEX_POINT], order=1, rng=rng, eager=True)


@pytest.mark.parametrize("name,order", [("psi", 1), ("gamma", 2), ("loggamma", 2)])
def test_complex_derivatives_needing_polygamma_raise(name, order):
    """SciPy has no complex polygamma: psi's first derivative, and the second derivative of
    gamma and loggamma, of complex arguments raise DTypeError naming it, traced and
    eager."""
    fn = getattr(S, name)
    x = tp.input(COMPLEX_POINT.shape, COMPLEX_POINT.dtype)
    value = tnp.real(fn(x)).sum()
    for _ in range(order - 1):
        value = tnp.real(tp.ad.grad(value, x)).sum()
    with pytest.raises(DTypeError, match="polygamma"):
        tp.ad.grad(value, x)
    t = tp.tensor(COMPLEX_POINT, requires_grad=True)
    value = tnp.real(fn(t)).sum()
    for _ in range(order - 1):
        (g,) = tp.grad_of([value], [t], create_graph=True)
        value = tnp.real(g).sum()
    with pytest.raises(DTypeError, match="polygamma"):
        value.backward()


def test_polygamma_order_must_be_a_static_non_negative_integer():
    x = tp.tensor([1.0, 2.0])
    with pytest.raises(ArgumentError, match="polygamma"):
        S.polygamma(tp.tensor(1.0), x)
    with pytest.raises(ArgumentError, match="polygamma"):
        S.polygamma(1.5, x)
    with pytest.raises(ArgumentValueError, match="polygamma"):
        S.polygamma(-1, x)


def test_scipys_non_ufuncs_on_a_tensor_refuse_instead_of_dropping_the_gradient():
    with pytest.raises(NotDifferentiableError):
        sc.softmax(tp.tensor([1.0, 2.0], requires_grad=True))


# ------------------------------------------------------------------ derivatives

def _weights(shape):
    return np.random.default_rng(7).standard_normal(shape)


def _unary_loss(name, **kw):
    fn = getattr(S, name)
    return lambda a: (fn(a, **kw) * _weights(a.shape)).sum()


def _binary_loss(name):
    """Both partial derivatives at once: ``a[0]`` and ``a[1]`` are the two operands."""
    fn = getattr(S, name)
    return lambda a: (fn(a[0], a[1]) * _weights(a.shape[1:])).sum()


def _stacked(x, y):
    return np.stack([x, y])


def _with_constant_first(name, first):
    """``fn(first, x)`` differentiated in ``x`` (``gammainc``'s ``a`` is a constant)."""
    fn = getattr(S, name)
    return lambda a: (fn(first, a) * _weights(a.shape)).sum()


def _with_constant_parameters(name, first, second):
    """``fn(first, second, x)`` differentiated in ``x`` (``betainc``'s ``a`` and ``b``)."""
    fn = getattr(S, name)
    return lambda a: (fn(first, second, a) * _weights(a.shape)).sum()


def _all_arguments(name):
    """``fn(a[0], a[1], ...)``: every argument differentiated (the shape parameters too)."""
    fn = getattr(S, name)
    return lambda a: (fn(*a) * _weights(a.shape[1:])).sum()


def _shape_parameters(name, x):
    """``fn(a[0], a[1], x)``: the two shape parameters differentiated, ``x`` constant."""
    fn = getattr(S, name)
    return lambda a: (fn(a[0], a[1], x) * _weights(a.shape[1:])).sum()


#: small (0.3), moderate and large (50) shape parameters, x near 0 and 1 among them
SHAPE_A = np.array([0.3, 0.3, 2.5, 50.0, 50.0, 5.0])
SHAPE_B = np.array([2.0, 0.3, 1.5, 50.0, 3.0, 0.5])
SHAPE_X = np.array([1e-3, 0.999, 0.3, 0.45, 0.97, 0.9])
#: where the central differences in x too are accurate (x not within ~1e-2 of 0 or 1)
MIDDLE_X = np.array([0.1, 0.9, 0.3, 0.55, 0.95, 0.8])
#: degrees of freedom and values of the F distribution
F_POINT = np.stack([np.array([0.6, 1.0, 3.0, 10.0, 100.0, 5.0]),
                    np.array([0.6, 7.0, 4.0, 2.0, 100.0, 60.0]),
                    np.array([0.3, 2.0, 0.5, 4.0, 1.1, 0.2])])
GAMMA_POINT = _stacked(np.array([0.3, 0.3, 2.5, 50.0, 50.0, 5.0]),
                       np.array([0.05, 2.0, 1.0, 45.0, 60.0, 30.0]))
CHI_POINT = _stacked(np.array([0.6, 1.0, 3.0, 100.0, 8.0, 2.0]),
                     np.array([0.1, 2.0, 5.0, 90.0, 3.0, 1.0]))

#: name -> (loss of one float64 array, the point)
DERIVATIVE_CASES = {
    "erf": (_unary_loss("erf"), RNG.standard_normal(6)),
    "erfc": (_unary_loss("erfc"), RNG.standard_normal(6)),
    "erfinv": (_unary_loss("erfinv"), _uniform(-0.8, 0.8)),
    "erfcinv": (_unary_loss("erfcinv"), _uniform(0.2, 1.8)),
    "gamma": (_unary_loss("gamma"), _uniform(0.5, 3.0)),
    "gamma_negative": (_unary_loss("gamma"), _uniform(-2.8, -2.2)),
    "gammaln": (_unary_loss("gammaln"), _uniform(0.5, 4.0)),
    "gammaln_negative": (_unary_loss("gammaln"), _uniform(-1.8, -1.2)),
    "loggamma": (_unary_loss("loggamma"), _uniform(0.5, 4.0)),
    "psi": (_unary_loss("psi"), _uniform(0.5, 4.0)),
    "polygamma": (lambda a: (S.polygamma(2, a) * _weights(a.shape)).sum(), _uniform(0.5, 3)),
    "expit": (_unary_loss("expit"), RNG.standard_normal(6) * 3),
    "logit": (_unary_loss("logit"), _uniform(0.1, 0.9)),
    "log_expit": (_unary_loss("log_expit"), RNG.standard_normal(6) * 3),
    "entr": (_unary_loss("entr"), _uniform(0.2, 2.0)),
    "xlogy": (_binary_loss("xlogy"), _stacked(RNG.standard_normal(6), _uniform(0.5, 2))),
    "xlogy_zero_x": (_binary_loss("xlogy"), _stacked(np.zeros(6), _uniform(0.5, 2))),
    "xlog1py": (_binary_loss("xlog1py"),
                _stacked(RNG.standard_normal(6), _uniform(-0.5, 1.0))),
    "rel_entr": (_binary_loss("rel_entr"), _stacked(_uniform(0.2, 2), _uniform(0.2, 2))),
    "kl_div": (_binary_loss("kl_div"), _stacked(_uniform(0.2, 2), _uniform(0.2, 2))),
    "softmax": (lambda a: (S.softmax(a, axis=1) * _weights(a.shape)).sum(),
                RNG.standard_normal((3, 4))),
    "softmax_all": (lambda a: (S.softmax(a) * _weights(a.shape)).sum(),
                    RNG.standard_normal((3, 4))),
    "log_softmax": (lambda a: (S.log_softmax(a, axis=0) * _weights(a.shape)).sum(),
                    RNG.standard_normal((3, 4))),
    "logsumexp": (lambda a: (S.logsumexp(a, axis=1) * _weights(3)).sum(),
                  RNG.standard_normal((3, 4))),
    "erfcx": (_unary_loss("erfcx"), RNG.standard_normal(6)),
    "erfcx_tail": (_unary_loss("erfcx"), _uniform(15.0, 40.0)),
    "ndtr": (_unary_loss("ndtr"), RNG.standard_normal(6) * 2),
    "log_ndtr": (_unary_loss("log_ndtr"), RNG.standard_normal(6) * 2),
    "log_ndtr_left_tail": (_unary_loss("log_ndtr"), _uniform(-45.0, -20.0)),
    "i0": (_unary_loss("i0"), RNG.standard_normal(6) * 3),
    "i0e": (_unary_loss("i0e"), RNG.standard_normal(6) * 3),
    "i1": (_unary_loss("i1"), RNG.standard_normal(6) * 3),
    "i1_near_zero": (_unary_loss("i1"), _uniform(-1e-3, 1e-3)),
    "i1e": (_unary_loss("i1e"), RNG.standard_normal(6) * 3),
    "gammainc": (_with_constant_first("gammainc", _uniform(0.3, 4.0)), _uniform(0.1, 5.0)),
    "gammaincc": (_with_constant_first("gammaincc", _uniform(0.3, 4.0)), _uniform(0.1, 5.0)),
    "chdtr": (_with_constant_first("chdtr", _uniform(1.0, 8.0)), _uniform(0.2, 10.0)),
    "chdtrc": (_with_constant_first("chdtrc", _uniform(1.0, 8.0)), _uniform(0.2, 10.0)),
    "stdtr": (_with_constant_first("stdtr", _uniform(1.0, 12.0)), RNG.standard_normal(6) * 2),
    "betainc": (_with_constant_parameters("betainc", _uniform(0.6, 4.0), _uniform(0.6, 4.0)),
                _uniform(0.05, 0.95)),
    "betaincc": (_with_constant_parameters("betaincc", _uniform(0.6, 4.0),
                                           _uniform(0.6, 4.0)), _uniform(0.05, 0.95)),
    "fdtr": (_with_constant_parameters("fdtr", _uniform(1.0, 9.0), _uniform(1.0, 9.0)),
             _uniform(0.1, 4.0)),
    "fdtrc": (_with_constant_parameters("fdtrc", _uniform(1.0, 9.0), _uniform(1.0, 9.0)),
              _uniform(0.1, 4.0)),
    # the shape parameters and degrees of freedom
    "betainc_shape": (_shape_parameters("betainc", SHAPE_X), np.stack([SHAPE_A, SHAPE_B])),
    "betaincc_shape": (_shape_parameters("betaincc", SHAPE_X), np.stack([SHAPE_A, SHAPE_B])),
    "betainc_all": (_all_arguments("betainc"), np.stack([SHAPE_A, SHAPE_B, MIDDLE_X])),
    "betaincc_all": (_all_arguments("betaincc"), np.stack([SHAPE_A, SHAPE_B, MIDDLE_X])),
    "fdtr_all": (_all_arguments("fdtr"), F_POINT),
    "fdtrc_all": (_all_arguments("fdtrc"), F_POINT),
    "stdtr_all": (_binary_loss("stdtr"), _stacked(np.array([0.6, 1.0, 3.0, 10.0, 100.0, 4.5]),
                                                  np.array([0.0, -2.0, 0.7, 3.0, -1.5, 1e-3]))),
    "gammainc_all": (_binary_loss("gammainc"), GAMMA_POINT),
    "gammaincc_all": (_binary_loss("gammaincc"), GAMMA_POINT),
    "chdtr_all": (_binary_loss("chdtr"), CHI_POINT),
    "chdtrc_all": (_binary_loss("chdtrc"), CHI_POINT),
}


def _central_gradient(loss, a, h=1e-6):
    grad = np.zeros_like(a)
    for index in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[index] = h
        grad[index] = (float(loss(a + step)) - float(loss(a - step))) / (2 * h)
    return grad


def _eager_gradient(loss, a):
    return derivative("eager_backward", loss, a, None)


@pytest.mark.parametrize("mode", FIRST_ORDER)
@pytest.mark.parametrize("case", sorted(DERIVATIVE_CASES))
def test_first_derivatives_match_central_differences(case, mode):
    loss, a = DERIVATIVE_CASES[case]
    v = np.random.default_rng(3).standard_normal(a.shape)
    expected = _central_gradient(loss, a)
    got = derivative(mode, loss, a, v)
    if mode in TANGENTS:
        got, expected = float(got), float(np.sum(expected * v))
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-7, err_msg=mode)


@pytest.mark.parametrize("mode", SECOND_ORDER)
@pytest.mark.parametrize("case", sorted(DERIVATIVE_CASES))
def test_hessian_vector_products_match_differences_of_the_gradient(case, mode):
    loss, a = DERIVATIVE_CASES[case]
    v = np.random.default_rng(3).standard_normal(a.shape)
    h = 1e-5
    expected = (_eager_gradient(loss, a + h * v) - _eager_gradient(loss, a - h * v)) / (2 * h)
    got = derivative(mode, loss, a, v)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6, err_msg=mode)


def _nth_derivative(fn, x: float, n: int) -> float:
    """``d^n fn / dx^n`` at ``x`` by ``n`` nested ``tp.grad``."""
    for _ in range(n):
        fn = tp.grad(fn)
    return float(fn(x))


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_any_order_digamma_and_gamma_family(n):
    x = 1.7
    assert _nth_derivative(lambda t: S.psi(t), x, n) == pytest.approx(
        float(sc.polygamma(n, x)), rel=1e-12)
    assert _nth_derivative(lambda t: S.gammaln(t), x, n) == pytest.approx(
        float(sc.polygamma(n - 1, x)), rel=1e-12)
    assert _nth_derivative(lambda t: S.polygamma(1, t), x, n) == pytest.approx(
        float(sc.polygamma(n + 1, x)), rel=1e-12)


def test_third_derivatives_of_erf_and_erfinv_are_the_closed_forms():
    x = 0.4
    c = 2 / math.sqrt(math.pi)
    assert _nth_derivative(S.erf, x, 3) == pytest.approx(
        c * (4 * x * x - 2) * math.exp(-x * x), rel=1e-12)
    y = float(sc.erfinv(x))              # erfinv''' = d/dx (2 y y'^2) = 2 y'^3 (1 + 4 y^2)
    slope = math.sqrt(math.pi) / 2 * math.exp(y * y)
    assert _nth_derivative(S.erfinv, x, 3) == pytest.approx(
        2 * slope ** 3 * (1 + 4 * y * y), rel=1e-12)


def test_xlogy_y_derivative_at_x_zero_is_zero_and_finite_at_y_zero():
    """``d xlogy(x, y)/dy`` is 0 wherever ``x == 0`` (y == 0 included), in every mode, and
    the gradient with respect to ``y`` has no NaN from the discarded ``0/0``."""
    y = np.array([0.0, 1e-300, 2.0])
    for mode in FIRST_ORDER[:3]:
        grad = derivative(mode, lambda b: S.xlogy(np.zeros(3), b).sum(), y, None)
        np.testing.assert_array_equal(grad, np.zeros(3))
    for mode in SECOND_ORDER:
        hess = derivative(mode, lambda b: S.xlogy(np.zeros(3), b).sum(), y, np.ones(3))
        np.testing.assert_array_equal(hess, np.zeros(3))


@pytest.mark.parametrize("case", ["erf", "erfinv", "gammaln", "psi", "logit", "xlogy",
                                  "kl_div", "softmax", "log_softmax", "erfcx", "log_ndtr",
                                  "i0e", "i1", "gammainc", "chdtrc"])
def test_float32_gradients_stay_float32(case):
    loss, a = DERIVATIVE_CASES[case]
    expected = derivative("eager_backward", loss, a, None)
    for mode in ("eager_backward", "traced_grad"):
        got = derivative(mode, loss, a.astype(np.float32), None)
        assert got.dtype == np.float32, mode
        np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-4, err_msg=mode)


# ------------------------------------------------------------------ incomplete beta, t, F

THREE_OPERANDS = {
    "betainc": (np.array([0.5, 1.0, 2.0, 5.0, 0.0, 3.0, 1.0]),
                np.array([0.5, 1.0, 3.0, 0.5, 2.0, -1.0, 1.0]),
                np.array([0.3, 0.0, 1.0, 0.9, 0.5, 0.5, 2.0])),
    "fdtr": (np.array([1.0, 3.0, 10.0, 2.0]), np.array([1.0, 5.0, 2.0, 7.0]),
             np.array([0.5, 0.0, 3.0, 40.0])),
}


@pytest.mark.parametrize("name", ["betainc", "betaincc", "fdtr", "fdtrc"])
@pytest.mark.parametrize("mode", ["eager", "traced"])
def test_three_operand_functions_match_scipy_broadcast(name, mode):
    a, b, x = THREE_OPERANDS["betainc" if name.startswith("beta") else "fdtr"]
    expected = getattr(sc, name)(a, b[:, None], x)
    if mode == "eager":
        got = getattr(S, name)(tp.tensor(a), b[:, None], x).data
    else:
        t = tp.input(x.shape)
        got = tp.compile([getattr(S, name)(a, b[:, None], t)], inputs=[t])(x)[0]
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(getattr(S, name)(a, b[:, None], x), expected)


def test_stdtr_matches_scipy_and_its_slope_is_the_t_density():
    df, t = np.array([1.0, 2.5, 30.0, 4.0]), np.array([-3.0, 0.0, 1.5, 80.0])
    np.testing.assert_allclose(S.stdtr(tp.tensor(df), tp.tensor(t)).data, sc.stdtr(df, t),
                               rtol=1e-14)
    slope = tp.grad(lambda u: S.stdtr(df, u).sum())(t)
    density = np.exp(sc.gammaln((df + 1) / 2) - sc.gammaln(df / 2)) / np.sqrt(df * np.pi) \
        * (1 + t * t / df) ** (-(df + 1) / 2)
    np.testing.assert_allclose(slope, density, rtol=1e-12)


# ------------------------------------------------------------------ shape parameters

#: (a, b, x): small, moderate and large shape parameters, x near 0, the middle and 1
BETA_POINTS = [(0.3, 2.0, 1e-3), (0.3, 0.3, 0.999), (2.5, 1.5, 0.3), (50.0, 50.0, 0.45),
               (50.0, 50.0, 0.6), (50.0, 3.0, 0.97), (5.0, 0.5, 0.9999), (0.5, 4.0, 0.02)]
#: (a, x): either side of the mean a, small and large a
GAMMA_POINTS = [(0.3, 0.01), (0.3, 2.0), (2.5, 1.0), (2.5, 7.0), (50.0, 45.0), (50.0, 60.0),
                (5.0, 40.0)]


def _mixed_derivative(fn, m: int, n: int, a: float, b: float) -> float:
    """``d^m/da^m d^n/db^n fn(a, b)`` by nested ``tp.grad`` (b innermost)."""
    g = fn
    for _ in range(n):
        g = tp.grad(g, argnums=1)
    for _ in range(m):
        g = tp.grad(g, argnums=0)
    return float(g(a, b))


@pytest.mark.parametrize("m, n", [(1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (3, 0), (1, 2)])
@pytest.mark.parametrize("a, b, x", BETA_POINTS)
def test_betainc_shape_derivatives_of_any_order_match_high_precision(a, b, x, m, n):
    """Nested ``tp.grad`` in ``a`` and ``b`` against mpmath's derivatives of its
    regularized incomplete beta function at 30 digits."""
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(30):
        expected = float(mpmath.diff(lambda p, q: mpmath.betainc(p, q, 0, x, regularized=True),
                                     (mpmath.mpf(a), mpmath.mpf(b)), (m, n)))
    got = _mixed_derivative(lambda p, q: S.betainc(p, q, x), m, n, a, b)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
@pytest.mark.parametrize("a, x", GAMMA_POINTS)
def test_gammainc_shape_derivatives_of_any_order_match_high_precision(a, x, k):
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(30):
        expected = float(mpmath.diff(lambda p: mpmath.gammainc(p, 0, x, regularized=True),
                                     mpmath.mpf(a), k))
    assert _nth_derivative(lambda p: S.gammainc(p, x), a, k) == pytest.approx(expected,
                                                                              rel=1e-9)


@pytest.mark.parametrize("df, t", [(0.6, -2.0), (3.0, 0.0), (3.0, 0.7), (30.0, 5.0),
                                   (2.0, -40.0)])
def test_stdtr_df_derivatives_match_high_precision(df, t):
    """Orders 1 to 3 in ``df`` and the mixed ``d^2/ddf dt``, through ``t = 0`` too."""
    mpmath = pytest.importorskip("mpmath")

    def cdf(d, u):            # the t distribution function, as SciPy's betainc form
        z = d / (d + u * u)
        tail = mpmath.betainc(d / 2, mpmath.mpf(1) / 2, 0, z, regularized=True) / 2
        return tail if u < 0 else 1 - tail
    with mpmath.workdps(30):
        point = (mpmath.mpf(df), mpmath.mpf(t))
        expected = [float(mpmath.diff(cdf, point, (k, 0))) for k in (1, 2, 3)]
        mixed = float(mpmath.diff(cdf, point, (1, 1)))
    got = [_mixed_derivative(lambda d, u: S.stdtr(d, u), k, 0, df, t) for k in (1, 2, 3)]
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-15)
    assert _mixed_derivative(lambda d, u: S.stdtr(d, u), 1, 1, df, t) == pytest.approx(
        mixed, rel=1e-8)


@pytest.mark.parametrize("name, args", [
    ("betainc", (0.3, 2.0, 0.2)), ("betaincc", (50.0, 3.0, 0.97)), ("fdtr", (3.0, 7.0, 1.5)),
    ("fdtrc", (3.0, 7.0, 1.5)), ("stdtr", (4.5, -1.2)), ("gammainc", (2.5, 1.5)),
    ("chdtrc", (3.0, 2.0)),
])
def test_jit_gradients_and_hessians_in_every_argument_equal_eager(name, args):
    fn = getattr(S, name)
    argnums = tuple(range(len(args)))
    eager = tp.grad(fn, argnums=argnums)(*args)
    jitted = tp.jit(tp.grad(fn, argnums=argnums))(*args)
    np.testing.assert_allclose(np.array(jitted, dtype=float), np.array(eager, dtype=float),
                               rtol=1e-12)
    hessian = tp.jit(tp.grad(lambda *p: tp.grad(fn, argnums=0)(*p), argnums=argnums))(*args)
    expected = tp.grad(lambda *p: tp.grad(fn, argnums=0)(*p), argnums=argnums)(*args)
    np.testing.assert_allclose(np.array(hessian, dtype=float), np.array(expected, dtype=float),
                               rtol=1e-12)


def test_shape_derivatives_at_the_bounds_and_outside_the_domain():
    """``I_0 = 0`` and ``I_1 = 1`` for every ``a, b`` (``P(a, 0) = 0``, ``P(a, inf) = 1``): the
    derivatives in the shape parameters are 0 there, to every order; outside the domain
    (``a <= 0``, ``x > 1``) SciPy's value is NaN and so are they."""
    ends = np.array([0.0, 1.0])
    for order in (1, 2):
        g = lambda p: S.betainc(p, np.full(2, 2.0), ends).sum()        # noqa: E731
        for _ in range(order - 1):
            g = (lambda f: lambda p: tp.grad(f)(p).sum())(g)
        np.testing.assert_array_equal(tp.grad(g)(np.full(2, 1.5)), [0.0, 0.0])
    assert tp.grad(lambda p: S.gammainc(p, np.inf))(2.0) == 0.0
    assert tp.grad(lambda p: S.gammainc(p, 0.0))(2.0) == 0.0
    assert np.isnan(tp.grad(lambda p: S.betainc(p, 2.0, 1.5))(2.0))
    assert np.isnan(tp.grad(lambda p: S.betainc(2.0, p, 0.5))(-1.0))
    assert np.isnan(tp.grad(lambda p: S.gammainc(p, 1.0))(-0.5))


def test_a_derivative_lost_to_rounding_is_nan_not_a_wrong_number():
    """At ``a = 1`` near ``x = 0`` the third derivative in ``b`` (``-(1-x)^b ln^3(1-x)``,
    ~1e-18) is far below the rounding of its integrand's terms: NaN.  Beside it, where the
    terms do not cancel, the value is accurate."""
    from tenpy_ad.ops.special import betainc_shape_derivative
    lost = betainc_shape_derivative(0, 3, np.array(1.0), np.array(0.5), np.array(1e-6))
    assert np.isnan(lost)
    kept = float(betainc_shape_derivative(0, 3, np.array(1.0), np.array(0.5), np.array(0.3)))
    assert kept == pytest.approx(-(0.7 ** 0.5) * math.log(0.7) ** 3, rel=1e-10)


def test_float32_shape_derivatives_stay_float32():
    a = np.array([0.7, 3.0], np.float32)
    got = tp.grad(lambda p: S.betainc(p, np.float32(2.0), np.float32(0.4)).sum())(a)
    assert got.dtype == np.float32
    expected = tp.grad(lambda p: S.betainc(p, 2.0, 0.4).sum())(a.astype(np.float64))
    np.testing.assert_allclose(got, expected, rtol=1e-5)

"""SciPy's array-API code (``SCIPY_ARRAY_API=1``) on tenpy_ad tensors: tenpy_ad imports
under it, and SciPy's functions that find a namespace through ``x.__array_namespace__()``
return tensors with SciPy's values and gradients equal to central differences.

SciPy reads the variable when it is first imported, so each check runs in a fresh
interpreter."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: name -> the call, on an eager tensor ``x`` of positive values
CALLS = {
    "special.erf": "sc.erf(x)",
    "special.gammaln": "sc.gammaln(x)",
    "special.entr": "sc.entr(x)",
    "special.xlogy": "sc.xlogy(x, x + 1.0)",
    "special.softmax": "sc.softmax(x)",
    "stats.moment": "st.moment(x, 3)",
    "stats.skew": "st.skew(x)",
    "stats.kurtosis": "st.kurtosis(x)",
    "stats.gmean": "st.gmean(x)",
    "stats.hmean": "st.hmean(x)",
    "stats.entropy": "st.entropy(x)",
    "integrate.trapezoid": "si.trapezoid(x)",
    "integrate.cumulative_trapezoid": "si.cumulative_trapezoid(x)",
    "signal.fftconvolve": "ss.fftconvolve(x, x[::-1])",
    # SciPy writes into copies of its inputs here (xp.asarray(x, copy=True), concat)
    "special.logsumexp": "sc.logsumexp(x)",
    "stats.zscore": "st.zscore(x)",
    "stats.variation": "st.variation(x)",
    "signal.lp2hp": "ss.lp2hp(x, x + 1.0)",
    # special functions SciPy's statistics look up in xp.special
    "special.ndtr": "sc.ndtr(x - 1.0)",
    "special.ndtri": "sc.ndtri(x / 2.5)",
    "special.exp2": "sc.exp2(x)",
    "special.sinc": "sc.sinc(x)",
    "special.multigammaln": "sc.multigammaln(x + 1.0, 3)",
    "stats.skewtest": "st.skewtest(tp.concatenate([x, x * x])).statistic",
    "stats.kurtosistest": "st.kurtosistest(tp.concatenate([x, x * x])).pvalue",
    # the functions of scipy.special SciPy's tests need beyond those (erfcx, log_ndtr, the
    # Bessel functions, the incomplete gamma and chi-square functions)
    "special.erfcx": "sc.erfcx(x * 3.0 - 2.0)",
    "special.log_ndtr": "sc.log_ndtr(x * 8.0 - 12.0)",
    "special.i0": "sc.i0(x * 2.0 - 1.5)",
    "special.i0e": "sc.i0e(x * 2.0 - 1.5)",
    "special.i1": "sc.i1(x * 2.0 - 1.5)",
    "special.i1e": "sc.i1e(x * 2.0 - 1.5)",
    "special.gammainc": "sc.gammainc(2.5, x)",
    "special.gammaincc": "sc.gammaincc(0.7, x)",
    "special.chdtr": "sc.chdtr(3.0, x * 2.0)",
    "special.chdtrc": "sc.chdtrc(3.0, x * 2.0)",
    # and the p-values of SciPy's tests that need them (chi-square: chdtrc; normal: ndtr)
    "stats.normaltest": "st.normaltest(tp.concatenate([x, x * x])).pvalue",
    "stats.jarque_bera": "st.jarque_bera(tp.concatenate([x, x * x])).pvalue",
    "stats.chisquare": "st.chisquare(x * 3.0).pvalue",
    "stats.power_divergence": "st.power_divergence(x * 3.0, lambda_='log-likelihood').pvalue",
    "stats.bartlett": "st.bartlett(x, x[::-1] * x).pvalue",
    "stats.combine_pvalues": "st.combine_pvalues(x / 2.5).pvalue",
    "stats.combine_pvalues_pearson": "st.combine_pvalues(x / 2.5, method='pearson').pvalue",
    "stats.alexandergovern": "st.alexandergovern(x, x[::-1] * x + 0.5).pvalue",
    "stats.epps_singleton_2samp": "st.epps_singleton_2samp(tp.concatenate([x, x * x]), "
                                  "tp.concatenate([x, x * x]) * 1.1 + 0.2).pvalue",
    # the incomplete beta, t and F distributions, and the tests whose p-values use them
    "special.betainc": "sc.betainc(2.5, 1.5, x / 2.5)",
    "special.betaincc": "sc.betaincc(0.7, 3.0, x / 2.5)",
    "special.stdtr": "sc.stdtr(4.0, x * 2.0 - 2.0)",
    "special.fdtr": "sc.fdtr(3.0, 5.0, x)",
    "special.fdtrc": "sc.fdtrc(3.0, 5.0, x)",
    "stats.ttest_1samp": "st.ttest_1samp(x, 1.0).pvalue",
    "stats.ttest_ind": "st.ttest_ind(x, x[::-1] * x).pvalue",
    # Welch's test: its degrees of freedom come from the data (stdtr's df derivative)
    "stats.ttest_ind_welch": "st.ttest_ind(x, x[::-1] * x, equal_var=False).pvalue",
    "stats.ttest_ind_welch_statistic": "st.ttest_ind(x, x[::-1] * x, equal_var=False)"
                                       ".statistic",
    "stats.ttest_rel": "st.ttest_rel(x, x[::-1] * x).pvalue",
    "stats.f_oneway": "st.f_oneway(x, x[::-1] * x + 0.5).pvalue",
    "stats.levene": "st.levene(x, x[::-1] * x).pvalue",
    "stats.pearsonr": "st.pearsonr(x, x[::-1] + x * x).pvalue",
}

SCRIPT = """
import json, sys
import numpy as np
import scipy.integrate as si, scipy.signal as ss, scipy.special as sc, scipy.stats as st
import tenpy_ad as tp
from tenpy_ad.testing import numerical_gradient
values = np.linspace(0.3, 2.0, 6)
weights = np.cos(np.arange(64.0))
results = {}
def check(call):
    def f(x):
        out = eval(call)
        return out if not isinstance(out, tuple) else out[0]
    reference = np.asarray(f(values))
    x = tp.tensor(values, requires_grad=True)
    out = f(x)
    w = weights[:reference.size].reshape(reference.shape)
    (out * w).sum().backward()
    expected_grad = numerical_gradient(lambda v: float(np.sum(np.asarray(f(v)) * w)), values)
    return dict(kind=type(out).__name__,
                value_error=float(np.max(np.abs(out.data - reference))),
                grad_error=float(np.max(np.abs(x.grad.data - expected_grad))),
                grad_scale=float(np.max(np.abs(expected_grad))))
for name, call in json.loads(sys.argv[1]).items():
    try:
        results[name] = check(call)
    except Exception as error:       # reported by the test of that function
        results[name] = dict(error=f"{type(error).__name__}: {error}")
print(json.dumps(results))
"""


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, SCIPY_ARRAY_API="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_tenpy_ad_imports_with_scipy_array_api():
    done = _run("import tenpy_ad, scipy.special as sc; print(tenpy_ad.scipy.special.erf(0.5)"
                " == sc.erf(0.5))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


@pytest.fixture(scope="module")
def results():
    done = _run(SCRIPT, json.dumps(CALLS))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_scipy_array_api_functions_take_tensors(results, name):
    found = results[name]
    assert "error" not in found, found.get("error")
    assert found["kind"] == "Tensor"
    assert found["value_error"] < 1e-12
    assert found["grad_scale"] > 1e-2              # a point where the gradient is not ~0
    assert found["grad_error"] < 1e-6 * max(1.0, found["grad_scale"])


WRITES = """
import numpy as np
import tenpy_ad as tp
xp = tp.array_api
x = tp.tensor(np.arange(4.0), requires_grad=True)
copies = {"asarray": lambda t: xp.asarray(t, copy=True), "astype": lambda t: xp.astype(t, xp.float64),
          "concat": lambda t: xp.concat([t]), "tile": lambda t: xp.tile(t, (1,)),
          "roll": lambda t: xp.roll(t, 0), "clip": lambda t: xp.clip(t),
          "multiply": lambda t: xp.multiply(t, 1.0), "np.roll": lambda t: np.roll(t, 0)}
for name, make in copies.items():
    for source in (x, x * 2.0):
        before = source.data.copy()
        out = make(source)
        out[0] = 7.0                       # a new array: writable, the source unchanged
        assert np.array_equal(source.data, before), name
        assert out.data[0] == 7.0, name
assert xp.asarray(x) is x and xp.astype(x, xp.float64, copy=False) is x
y = xp.asarray(x, copy=True)
y[1:] = 0.0
(y * y).sum().backward()
assert np.array_equal(x.grad.data, [0.0, 0.0, 0.0, 0.0]), x.grad
print("ok")
"""


def test_results_that_are_new_arrays_take_writes_and_leave_their_operand_alone():
    done = _run(WRITES)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


CONCRETE = """
import numpy as np
import tenpy_ad as tp
xp = tp.array_api
x = tp.tensor(np.array([0.5, 1.0, 1.0, 2.0]), requires_grad=True)
y = tp.tensor(np.array([0.5, 1.0, 1.0, 2.5]), requires_grad=True)
assert np.allclose(x, x) is True and np.array_equal(x, y) is False
assert np.isclose(x, y).data.tolist() == [True, True, True, False]
assert int(np.count_nonzero(x > 0.7)) == 3 and int(xp.count_nonzero(x > 0.7)) == 3
assert np.searchsorted(x, y).data.tolist() == [0, 1, 1, 4]
assert xp.searchsorted(x, y, side="right").data.tolist() == [1, 3, 3, 4]
assert xp.unique_values(x).data.tolist() == [0.5, 1.0, 2.0]
assert xp.unique_counts(x).counts.data.tolist() == [1, 2, 1]
print("ok")
"""


def test_functions_with_bool_or_integer_results_take_tensors_that_require_grad():
    done = _run(CONCRETE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


WELCH = """
import numpy as np
import scipy.stats as st
import tenpy_ad as tp
from tenpy_ad.testing import numerical_gradient
rng = np.random.default_rng(5)
x_values, y_values = rng.normal(0.0, 1.0, 7), rng.normal(0.8, 2.5, 5)
for alternative in ("two-sided", "less", "greater"):
    def welch(x, y):
        return st.ttest_ind(x, y, equal_var=False, alternative=alternative)
    reference = welch(x_values, y_values)
    x = tp.tensor(x_values, requires_grad=True)
    y = tp.tensor(y_values, requires_grad=True)
    result = welch(x, y)
    assert type(result.pvalue) is tp.Tensor, type(result.pvalue)
    statistic = reference.statistic
    assert abs(result.statistic.item() - statistic) <= 1e-13 * abs(statistic)
    assert abs(result.pvalue.item() - reference.pvalue) <= 1e-13 * reference.pvalue
    result.pvalue.backward()
    for tensor, values, other in ((x, x_values, lambda v: welch(v, y_values)),
                                  (y, y_values, lambda v: welch(x_values, v))):
        expected = numerical_gradient(lambda v: float(other(v).pvalue), values)
        error = np.max(np.abs(tensor.grad.data - expected))
        assert error <= 1e-8 * np.max(np.abs(expected)), (alternative, error, expected)
print("ok")
"""


def test_welch_ttest_pvalue_and_its_gradient_in_both_samples():
    """``ttest_ind(x, y, equal_var=False)``: SciPy's statistic and p-value, and the
    p-value's gradient in both samples (through the data's degrees of freedom) equal to
    central differences, for each alternative."""
    done = _run(WELCH)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_a_scipy_function_behind_a_decorator_is_named_in_the_refusal():
    """``scipy.signal.sos2zpk`` converts with ``np.asarray`` inside SciPy's array-API
    ``wrapper``: the refusal names sos2zpk, not the decorator."""
    done = _run("""
        import numpy as np, tenpy_ad as tp, scipy.signal as sg
        sos = tp.tensor(np.array([[1.0, 0.5, 0.2, 1.0, -0.3, 0.1]]), requires_grad=True)
        try:
            sg.sos2zpk(sos)
        except tp.errors.NotDifferentiableError as error:
            print(error)
        """)
    assert done.returncode == 0, done.stderr
    assert "by scipy.signal.sos2zpk, which converts" in done.stdout, done.stdout

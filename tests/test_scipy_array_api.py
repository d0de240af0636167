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
for name, call in json.loads(sys.argv[1]).items():
    def f(x):
        out = eval(call)
        return out if not isinstance(out, tuple) else out[0]
    reference = np.asarray(f(values))
    x = tp.tensor(values, requires_grad=True)
    out = f(x)
    w = weights[:reference.size].reshape(reference.shape)
    (out * w).sum().backward()
    expected_grad = numerical_gradient(lambda v: float(np.sum(np.asarray(f(v)) * w)), values)
    results[name] = dict(kind=type(out).__name__,
                         value_error=float(np.max(np.abs(out.data - reference))),
                         grad_error=float(np.max(np.abs(x.grad.data - expected_grad))))
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
    assert found["kind"] == "Tensor"
    assert found["value_error"] < 1e-12
    assert found["grad_error"] < 1e-6

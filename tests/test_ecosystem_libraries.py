"""scikit-learn (``array_api_dispatch``), quimb/autoray and opt_einsum on tenpy_ad tensors.

Each library is optional: its tests skip, naming it, where it is not installed.  SciPy and
scikit-learn read ``SCIPY_ARRAY_API`` when first imported, so the scikit-learn checks run
in a fresh interpreter."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.testing import numerical_gradient

ROOT = Path(__file__).resolve().parents[1]


def _run(script: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, SCIPY_ARRAY_API="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)],
                          capture_output=True, text=True, env=env, timeout=600)


SKLEARN = """
import numpy as np, sklearn, tenpy_ad as tp
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import Ridge
from sklearn import metrics
rng = np.random.default_rng(0)
X = rng.standard_normal((30, 4))
y = X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.1 * rng.standard_normal(30)
labels = (y > 0).astype(np.int64)
scores = 1.0 / (1.0 + np.exp(-y))
fits = {
    "pca": lambda X, y, c, s: PCA(n_components=2).fit_transform(X),
    "lda": lambda X, y, c, s: LinearDiscriminantAnalysis().fit(X, c).predict_proba(X),
    "ridge": lambda X, y, c, s: Ridge(alpha=0.1, solver="svd").fit(X, y).predict(X),
    "r2": lambda X, y, c, s: metrics.r2_score(y, y + 0.1 * X[:, 0]),
    "mse": lambda X, y, c, s: metrics.mean_squared_error(y, y + 0.1 * X[:, 0]),
    "roc_curve": lambda X, y, c, s: metrics.roc_curve(c, s)[1],
    "rbf": lambda X, y, c, s: metrics.pairwise.rbf_kernel(X),
}
for name, fit in fits.items():
    with sklearn.config_context(array_api_dispatch=False):
        expected = np.asarray(fit(X, y, labels, scores))
    with sklearn.config_context(array_api_dispatch=True):
        found = fit(tp.tensor(X), tp.tensor(y), tp.tensor(labels), tp.tensor(scores))
    kind = type(found).__name__
    value = found.data if isinstance(found, tp.Tensor) else np.asarray(found)
    if name == "pca":                       # each component's sign is a convention
        value = value * np.sign(value[0] * expected[0])
    assert kind in ("Tensor", "float"), (name, kind)
    assert np.allclose(value, expected, rtol=1e-9, atol=1e-10), (name, value, expected)
print("ok")
"""


def test_scikit_learn_estimators_and_metrics_fit_on_tensors():
    pytest.importorskip("sklearn", reason="scikit-learn is not installed")
    pytest.importorskip("array_api_compat", reason="array-api-compat is not installed")
    done = _run(SKLEARN)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_opt_einsum_contracts_tensors_with_gradients():
    oe = pytest.importorskip("opt_einsum", reason="opt_einsum is not installed")
    rng = np.random.default_rng(1)
    a, b, c = rng.standard_normal((3, 4)), rng.standard_normal((4, 5)), rng.standard_normal((5, 3))

    def loss(a_values):
        return float(oe.contract("ij,jk,ki->", a_values, b, c))
    x = tp.tensor(a, requires_grad=True)
    out = oe.contract("ij,jk,ki->", x, tp.tensor(b), c)
    assert isinstance(out, tp.Tensor)
    assert np.isclose(float(out.data), loss(a))
    out.backward()
    assert np.allclose(x.grad.data, numerical_gradient(loss, a), atol=1e-7)


def test_autoray_dispatches_to_tenpy_ad():
    ar = pytest.importorskip("autoray", reason="autoray is not installed")
    x = tp.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    assert ar.infer_backend(x) == "tenpy_ad"
    u, s, vh = ar.do("linalg.svd", x, full_matrices=False)
    assert all(isinstance(t, tp.Tensor) for t in (u, s, vh))
    ar.do("sum", s).backward()                 # the nuclear norm: d/dx = u @ vh
    assert np.allclose(x.grad.data, (u @ vh).data, atol=1e-12)


def _mps_norm_after(prepare, arrays, template):
    """``<psi|psi>`` of ``template``'s MPS with ``arrays`` as its tensors, after
    ``prepare(mps)``."""
    mps = template.copy()
    for site, array in zip(mps.tensors, arrays):
        site.modify(data=array)
    prepare(mps)
    return mps.H @ mps


@pytest.mark.parametrize("prepare", ["canonize", "compress"])
def test_quimb_mps_canonize_compress_contract_with_gradients(prepare):
    pytest.importorskip("quimb", reason="quimb is not installed")
    import quimb.tensor as qtn
    template = qtn.MPS_rand_state(5, bond_dim=3, seed=0)
    step = {"canonize": lambda mps: mps.canonicalize_(2),
            "compress": lambda mps: mps.compress(max_bond=2)}[prepare]
    site = 2
    values = [np.asarray(a) for a in template.arrays]
    tensors = [tp.tensor(v, requires_grad=(i == site)) for i, v in enumerate(values)]
    norm = _mps_norm_after(step, tensors, template)
    assert isinstance(norm, tp.Tensor)
    norm.backward()

    def loss(site_values):
        arrays = values[:site] + [site_values] + values[site + 1:]
        return float(np.real(_mps_norm_after(step, arrays, template)))
    assert np.isclose(float(norm.data), loss(values[site]))
    assert np.allclose(tensors[site].grad.data, numerical_gradient(loss, values[site]),
                       atol=1e-6)

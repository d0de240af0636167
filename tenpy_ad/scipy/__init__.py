"""``tp.scipy``: SciPy's names, signatures and conventions for the functions SciPy has and
NumPy has not, differentiable in every mode: :mod:`tp.scipy.linalg
<tenpy_ad.scipy.linalg>` (decompositions, solves and matrix functions with SciPy's
defaults: ``svd``'s full matrices, ``cholesky``'s upper factor, ``lu``, ``sqrtm``,
``logm``, ...) and :mod:`tp.scipy.special <tenpy_ad.scipy.special>`.

On plain arrays each is SciPy's own function.  SciPy's functions themselves do not
dispatch on tensors (they call ``np.asarray``): a tensor being differentiated that reaches
one raises an error naming it and the tenpy_ad version to call."""
from . import _conversion  # noqa: F401 - the hint tenpy_ad hands the core
from . import linalg
from . import special

__all__ = ["linalg", "special"]

"""``tp.scipy``: SciPy's names, signatures and conventions for the functions SciPy has and
NumPy has not, differentiable in every mode:

* :mod:`tp.scipy.linalg <tenpy_ad.scipy.linalg>`: decompositions, solves and matrix
  functions with SciPy's defaults (``svd``'s full matrices, ``cholesky``'s upper factor,
  ``lu``, ``sqrtm``, ``logm``, ...);
* :mod:`tp.scipy.special <tenpy_ad.scipy.special>`: SciPy's special functions (``erf``,
  ``gamma``, ``gammaln``, ``psi``, ``polygamma``, ``xlogy``, ``expit``, ``entr``,
  ``kl_div``, ``softmax``, ...), differentiable to any order; those that are ufuncs also
  run when called as ``scipy.special.<name>(t)`` on a tensor;
* :mod:`tp.scipy.sparse.linalg <tenpy_ad.scipy.sparse.linalg>`: ``LinearOperator`` with a
  matvec written on tensors, ``eigsh``, ``svds``, ``gmres``, ``cg``, ``minres`` with exact
  implicit first-order derivatives, ``expm_multiply`` (differentiable in ``B`` and in the operator).

On plain arrays each is SciPy's own function.  SciPy's other functions do not dispatch on
tensors (they call ``np.asarray``): a tensor being differentiated that reaches one raises
an error naming it and the tenpy_ad version to call."""
from . import _conversion  # noqa: F401 - the hint tenpy_ad hands the core
from . import linalg
from . import sparse
from . import special

__all__ = ["linalg", "sparse", "special"]

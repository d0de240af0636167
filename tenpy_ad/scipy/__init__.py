"""``tp.scipy``: SciPy's names for the functions SciPy has and NumPy has not.

``tp.scipy.special`` holds SciPy's special functions (``erf``, ``gamma``, ``gammaln``,
``psi``, ``polygamma``, ``xlogy``, ``expit``, ``entr``, ``kl_div``, ``softmax``, ...) with
SciPy's semantics, differentiable to any order in every mode; those that are ufuncs also
run when called as ``scipy.special.<name>(t)`` on a tensor.
"""
from . import linalg
from . import special

__all__ = ["linalg", "special"]

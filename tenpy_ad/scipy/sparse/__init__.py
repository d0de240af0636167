"""``tp.scipy.sparse``: :mod:`tp.scipy.sparse.linalg <tenpy_ad.scipy.sparse.linalg>`, SciPy's
iterative eigensolvers and linear solvers on operators whose matvec is tensor code."""
from . import linalg

__all__ = ["linalg"]

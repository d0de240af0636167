"""``tp.scipy``: SciPy's names for the functions SciPy has and NumPy has not."""
from . import linalg

__all__ = ["linalg"]

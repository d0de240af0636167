"""``tp.scipy``: SciPy's names for the functions SciPy has and NumPy has not."""
from . import _conversion
from . import linalg
from . import special

__all__ = ["linalg", "special"]

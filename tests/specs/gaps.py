"""The spectral-gap factors of the decomposition rules (``spectral_gaps``), on their own:
distinct values (the factors' poles are the degeneracies), both outputs, a broadening
that matters and one that does not, and the pinned diagonal of ``same_indices``."""
from tenpy_ad.ops.linalg.gaps import spectral_gaps

from .table import REAL, Spec


def _both(s_rows, s_cols, eps, same):
    minus, plus = spectral_gaps(s_rows, s_cols, eps, same)
    return minus + plus * 1.7


SPECS = [
    Spec("spectral_gaps", lambda r, c: _both(r, c, 1e-16, False), ((3,), (4,)),
         domain="distinct", dtypes=REAL),
    Spec("spectral_gaps_broadened", lambda r, c: _both(r, c, 0.3, False), ((2, 3), (2, 4)),
         domain="distinct", dtypes=REAL),
    Spec("spectral_gaps_same", lambda s: _both(s, s, 1e-16, True), ((4,),),
         domain="distinct", dtypes=REAL),
    Spec("spectral_gaps_same_leading", lambda s: _both(s, s[:2], 0.1, True), ((4,),),
         domain="distinct", dtypes=REAL),
]

"""Comparisons: boolean masks, not differentiated, used as factors of differentiable
values (the derivative flows through the other factor only)."""
from .table import REAL, Spec

SPECS = [
    Spec("equal_mask", lambda x, y: x * (x == y) + y * (x != y), ((3, 4), (3, 4)),
         domain="distinct", dtypes=REAL),
    Spec("less_masks", lambda x, y: x * (x < y) + y * (x <= y), ((3, 4), (3, 4)),
         domain="distinct", dtypes=REAL),
    Spec("greater_masks", lambda x, y: x * (x > y) - y * (y >= x), ((3, 4), (4,)),
         domain="distinct", dtypes=REAL),
]

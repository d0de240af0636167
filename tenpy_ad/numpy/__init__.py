"""``tenpy_ad.numpy``: NumPy's names for differentiable tensors.

    import tenpy_ad.numpy as tnp
    tnp.concatenate([x, y]); tnp.where(x > 0, x, -x); tnp.einsum("ij,jk->ik", a, b)

Every function accepts TracedTensors, eager Tensors, ndarrays and Python scalars (mixed),
follows NumPy's semantics (broadcasting, NEP 50 promotion, argument names, return orders)
and returns the kind its operands call for: a graph node when any operand is traced, an
eager Tensor when any is eager, else what NumPy returns.  They lower onto the primitives of
:mod:`tenpy_ad.ops`.
"""
from .. import linalg
from . import _dispatch
from . import (arithmetic as _arithmetic, comparison as _comparison, creation as _creation,
               indexing as _indexing, joining as _joining, products as _products,
               reductions as _reductions, shaping as _shaping)
from . import (complex_numbers as _complex_numbers, logic as _logic, rounding as _rounding,
               transcendental as _transcendental)
from ._dispatch import implements, supported_names
from .arithmetic import *    # noqa: F401,F403 - each family lists its names in __all__
from .comparison import *    # noqa: F401,F403
from .creation import *      # noqa: F401,F403
from .indexing import *      # noqa: F401,F403
from .joining import *       # noqa: F401,F403
from .products import *      # noqa: F401,F403
from .reductions import *    # noqa: F401,F403
from .shaping import *       # noqa: F401,F403
from .complex_numbers import *   # noqa: F401,F403
from .logic import *             # noqa: F401,F403
from .rounding import *          # noqa: F401,F403
from .transcendental import *    # noqa: F401,F403

_FAMILIES = (_arithmetic, _comparison, _creation, _indexing, _joining, _products, _reductions,
             _shaping)
_FAMILIES += (_complex_numbers, _logic, _rounding, _transcendental)
_FUNCTIONS = sorted({name for family in _FAMILIES for name in family.__all__})

#: what the tensor operators and methods forward to (installed in the core at import)
SURFACE = {name: globals()[name] for name in _FUNCTIONS}
SURFACE.update({"__array_function__": _dispatch.array_function,
                "__array_ufunc__": _dispatch.array_ufunc,
                "scale": SURFACE["scale_real"]})      # the .scale_real method

__all__ = _FUNCTIONS + ["linalg", "implements", "supported_names"]

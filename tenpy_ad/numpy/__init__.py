"""``tenpy_ad.numpy``: NumPy's names for differentiable tensors.

    import tenpy_ad.numpy as tnp
    tnp.concatenate([x, y]); tnp.where(x > 0, x, -x); tnp.einsum("ij,jk->ik", a, b)

Every function accepts TracedTensors, eager Tensors, ndarrays and Python scalars (mixed),
follows NumPy's semantics (broadcasting, NEP 50 promotion, argument names, return orders)
and returns the kind its operands call for: a graph node when any operand is traced, an
eager Tensor when any is eager, else what NumPy returns (without a tensor among the
arguments NumPy's own function runs).  They lower onto the primitives of
:mod:`tenpy_ad.ops`.  ``tnp.linalg`` is ``tp.linalg``.
"""
from . import _dispatch, _views
from . import (arithmetic as _arithmetic, closeness as _closeness,
               comparison as _comparison, complex_numbers as _complex_numbers,
               creation as _creation, cumulative as _cumulative, diagonals as _diagonals,
               index_tricks as _index_tricks, indexing as _indexing, inplace as _inplace,
               joining as _joining, logic as _logic, padding as _padding, products as _products,
               rearranging as _rearranging, reductions as _reductions, rounding as _rounding,
               shaping as _shaping, sorting as _sorting, splitting as _splitting,
               statistics as _statistics, transcendental as _transcendental)
from . import linalg            # tp.linalg: NumPy's linalg names, above the families it uses
from ._dispatch import implements, supported_names
from .arithmetic import *      # noqa: F401,F403 - each family lists its names in __all__
from .closeness import *       # noqa: F401,F403
from .comparison import *      # noqa: F401,F403
from .complex_numbers import *  # noqa: F401,F403
from .creation import *        # noqa: F401,F403
from .cumulative import *      # noqa: F401,F403
from .diagonals import *       # noqa: F401,F403
from .index_tricks import *    # noqa: F401,F403
from .indexing import *        # noqa: F401,F403
from .inplace import *         # noqa: F401,F403
from .joining import *         # noqa: F401,F403
from .logic import *           # noqa: F401,F403
from .padding import *         # noqa: F401,F403
from .products import *        # noqa: F401,F403
from .rearranging import *     # noqa: F401,F403
from .reductions import *      # noqa: F401,F403
from .rounding import *        # noqa: F401,F403
from .shaping import *         # noqa: F401,F403
from .sorting import *         # noqa: F401,F403
from .splitting import *       # noqa: F401,F403
from .statistics import *      # noqa: F401,F403
from .transcendental import *  # noqa: F401,F403

_FAMILIES = (_arithmetic, _closeness, _comparison, _complex_numbers, _creation, _cumulative,
             _diagonals, _index_tricks, _indexing, _inplace, _joining, _logic, _padding,
             _products, _rearranging, _reductions, _rounding, _shaping, _sorting, _splitting,
             _statistics, _transcendental)
_FUNCTIONS = sorted({name for family in _FAMILIES for name in family.__all__})

#: what the tensor operators and methods forward to (installed in the core at import):
#: their first operand is a tensor, so they call the implementations directly
SURFACE = {name: _dispatch.direct(globals()[name]) for name in _FUNCTIONS}
SURFACE.update({"__array_function__": _dispatch.array_function,
                "__array_ufunc__": _dispatch.array_ufunc,
                "scale": SURFACE["scale_real"],       # the .scale_real method
                "setitem": _inplace.setitem, "inplace_op": _inplace.inplace_op,
                "set_at": _indexing.set_at,
                "fill": _inplace.fill, "conj": _inplace.conj_method,
                "traced_reshape_is_view": _views.reshape_needs_no_copy,
                "basic_index_plans": _indexing.BASIC_PLANS})

__all__ = _FUNCTIONS + ["linalg", "implements", "supported_names"]

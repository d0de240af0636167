"""tenpy_ad: a tensor engine with eager and traced automatic differentiation whose graph
transforms stay linear in graph size, whatever the depth and sharing of the graph.

Traced::

    x = tp.input((3, 3), name="x")
    loss = ((x * x) * 0.5).sum()
    g = tp.ad.grad(loss, x)
    f = tp.compile([loss, g], inputs=[x])
    value, gradient = f(np.eye(3))

Eager::

    b = tp.tensor(0.3, requires_grad=True)
    loss = model(b); loss.backward(); b.grad
"""
from ._compiled import _core
from . import blas as _blas, dtypes as _dtypes, errors
from .primitive import Tensor, TracedTensor, PRIMITIVES, constant
from . import numpy
from .numpy import *       # noqa: F401,F403 - NumPy's names are also tp.<name>
from .numpy import SURFACE as _SURFACE
from .traced import input
from .ops.elementwise import stop_gradient
from .eager import tensor, no_grad, is_grad_enabled, grad_of
from . import ad
from .numpy import linalg
from . import scipy
from .compiler import Program, compile, evaluate, load_graph, load_program
from .functional import grad, value_and_grad, vjp, jvp, jit
from .tree import tree_flatten, tree_unflatten, tree_map
from .checkpoint import checkpoint
from .fixed_point import fixed_point
from . import optimize
from .debug import debug_nans
from . import introspection
from .introspection import counters, reset_counters
from .config import config
from .ops import elementwise as _ew, structural as _st
from .ops.contraction import einsum_p as _einsum_p
from .primitive import constant_p as _constant_p

# the primitives the core binds itself: the operators' fast paths (same nodes as
# tenpy_ad.numpy), the folds of bind on plain arrays, full_like and the block cotangents
_OPERATOR_PRIMITIVES = {"add": _ew.add_p, "sub": _ew.sub_p, "mul": _ew.mul_p,
                        "div": _ew.div_p, "neg": _ew.neg_p, "scale": _ew.scale_p,
                        "shift": _ew.shift_p, "constant": _constant_p, "copy": _ew.copy_p,
                        "transpose": _st.transpose_p, "reshape": _st.reshape_p,
                        "broadcast_in_dim": _st.broadcast_in_dim_p, "einsum": _einsum_p,
                        "slice": _st.slice_p, "scatter_slice": _st.scatter_slice_p}
_SURFACE["array_conversion_hint"] = scipy._conversion.conversion_hint
_SURFACE["blas_matmul"] = _blas.matmul        # the products the rules make on arrays
from .array_api import _tensor_protocols as _array_api_protocols   # noqa: E402
_SURFACE.update(_array_api_protocols.SURFACE)     # x.__array_namespace__(), x.device, ...
_core.install(surface=_SURFACE, constant=constant,
              errors=errors.ALL, dtypes=list(_dtypes.DTYPES), value_code=_dtypes.value_code,
              primitives=_OPERATOR_PRIMITIVES)

__version__ = "0.1.0"

__all__ = [
    "errors", "ad", "linalg", "numpy", "scipy", "Tensor", "TracedTensor", "PRIMITIVES",
    "constant", "input", "tensor", "no_grad", "is_grad_enabled", "grad_of", "Program",
    "compile", "evaluate", "grad", "value_and_grad", "vjp", "jvp", "jit", "checkpoint",
    "fixed_point", "optimize", "stop_gradient", "debug_nans", "load_graph", "load_program",
    "tree_flatten", "tree_unflatten", "tree_map", "core_info", "counters", "reset_counters",
    "introspection", "config",
] + [name for name in numpy.__all__ if name not in ("implements", "supported_names", "linalg")]


def core_info() -> dict:
    """Facts about the compiled core: its source hash and the counters' names."""
    return {"source_hash": _core.SOURCE_HASH, "module": _core.__file__,
            "counters": sorted(_core.counters())}

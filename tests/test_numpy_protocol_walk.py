"""Every public callable of ``numpy`` and ``numpy.linalg`` called on differentiated tensors.

Each function, ufunc and class that ``dir(np)`` / ``dir(np.linalg)`` lists is called with
tensors as its array arguments (eager tensors that require grad, and traced placeholders):
one tensor, a second where the signature asks for one, and the arguments of
:data:`ARGUMENTS` where it needs other kinds.  Each call must end in one of

* ``dispatched``: tenpy_ad computed it (a tensor comes back) -- its values are NumPy's and,
  for floating-point results, the gradient of a weighted sum of the outputs matches
  central finite differences of NumPy's own function (eager), and the traced graph gives
  the same values and gradient;
* ``refused by name``: a ``TenpyAdError`` naming the function;
* ``refused at conversion``: NumPy converted the tensor to an ndarray (``np.float64(t)``,
  ``np.asanyarray(t)``, ...) and the conversion refused, as a tensor being differentiated
  must;
* ``other tenpy_ad error``, ``needs concrete values`` (traced value-dependent shapes);
* ``shape-only result`` (``np.ndim(t)``, ``np.shape(t)``: the result does not change with
  the tensor's values) or ``text`` (``np.str_(t)``);
* ``argument error``: NumPy's own error for arguments it cannot take, only for the names
  of :data:`ARGUMENT_FAILURES` (functions that take no arrays), functions without
  parameters and classes NumPy does not instantiate.

A result that holds NumPy values computed from the tensor (``detached``), a wrong value or
a wrong gradient fails.  ``python tests/test_numpy_protocol_walk.py`` prints the counts
per outcome and the names in each.
"""
from __future__ import annotations

import collections
import functools
import inspect
import io
import warnings

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import ConcretizationError, TenpyAdError
from tenpy_ad.numpy._dispatch import implementation_of

RNG = np.random.default_rng(11)
X = RNG.uniform(0.1, 0.9, (3, 3))
Y = RNG.uniform(0.1, 0.9, (3, 3))
#: other values of the same shape: a non-tensor result that changes with them is detached
X_OTHER, Y_OTHER = X[::-1] * 0.5, Y[:, ::-1] * 0.5

#: never called: they run NumPy's test suite, print, change global state or read files
NOT_CALLED = {
    "numpy.test", "numpy.linalg.test", "numpy.show_config", "numpy.show_runtime",
    "numpy.info", "numpy.set_printoptions", "numpy.printoptions", "numpy.setbufsize",
    "numpy.seterr", "numpy.seterrcall", "numpy.load", "numpy.loadtxt", "numpy.genfromtxt",
    "numpy.fromfile", "numpy.fromregex",
}

#: name -> arguments built from the tensors ``x, y`` (or ndarrays): ``(args, kwargs)``
ARGUMENTS = {
    "array_split": lambda x, y: ((x, 2), {}),
    "split": lambda x, y: ((x, 3), {}),
    "hsplit": lambda x, y: ((x, 3), {}),
    "vsplit": lambda x, y: ((x, 3), {}),
    "dsplit": lambda x, y: ((x.reshape(3, 1, 3), 3), {}),
    "unstack": lambda x, y: ((x,), {"axis": 1}),
    "broadcast_to": lambda x, y: ((x, (2, 3, 3)), {}),
    "expand_dims": lambda x, y: ((x, 0), {}),
    "moveaxis": lambda x, y: ((x.reshape(3, 3, 1), 0, 2), {}),
    "rollaxis": lambda x, y: ((x.reshape(3, 3, 1), 2), {}),
    "swapaxes": lambda x, y: ((x, 0, 1), {}),
    "permute_dims": lambda x, y: ((x, (1, 0)), {}),
    "transpose": lambda x, y: ((x, (1, 0)), {}),
    "reshape": lambda x, y: ((x, (9,)), {}),
    "repeat": lambda x, y: ((x, [1, 2, 0]), {"axis": 0}),
    "tile": lambda x, y: ((x, (1, 2)), {}),
    "roll": lambda x, y: ((x, 1), {"axis": 1}),
    "rot90": lambda x, y: ((x, 3), {}),
    "put": lambda x, y: ((x, [0, 4], y), {}),
    "pad": lambda x, y: ((x, 1), {"mode": "reflect"}),
    "partition": lambda x, y: ((x, 1), {}),
    "argpartition": lambda x, y: ((x, 1), {}),
    "einsum": lambda x, y: (("ij,jk->ik", x, y), {}),
    "einsum_path": lambda x, y: (("ij,jk->ik", x, y), {}),
    "take": lambda x, y: ((x, [0, 4, 4]), {}),
    "take_along_axis": lambda x, y: ((x, np.argsort(X, axis=1)), {"axis": 1}),
    "compress": lambda x, y: (([True, False, True], x), {"axis": 0}),
    "extract": lambda x, y: ((X > 0.4, x), {}),
    "where": lambda x, y: ((X > 0.4, x, y), {}),
    "clip": lambda x, y: ((x, 0.3, y), {}),
    "digitize": lambda x, y: ((x, [0.2, 0.5, 0.8]), {}),
    "searchsorted": lambda x, y: (([0.2, 0.5, 0.8], x), {}),
    "diff": lambda x, y: ((x,), {"n": 2, "prepend": y[:, :1]}),
    "append": lambda x, y: ((x, y), {"axis": 0}),
    "average": lambda x, y: ((x,), {"axis": 0, "weights": y}),
    "linspace": lambda x, y: ((x[0], y[1], 4), {}),
    "nan_to_num": lambda x, y: ((x,), {"nan": 0.5}),
    "heaviside": lambda x, y: ((x - 0.5, y), {}),
    "tril": lambda x, y: ((x, -1), {}),
    "triu": lambda x, y: ((x, 1), {}),
    "diag": lambda x, y: ((x, 1), {}),
    "diagonal": lambda x, y: ((x, -1), {}),
    "trace": lambda x, y: ((x, 1), {}),
    "full_like": lambda x, y: ((x, 2.5), {}),
    "block": lambda x, y: (([[x, y], [y, x]],), {}),
    "stack": lambda x, y: (([x, y],), {"axis": 1}),
    "concatenate": lambda x, y: (([x, y],), {"axis": 1}),
    "concat": lambda x, y: (([x, y],), {"axis": 1}),
    "hstack": lambda x, y: (([x, y],), {}),
    "vstack": lambda x, y: (([x, y],), {}),
    "dstack": lambda x, y: (([x, y],), {}),
    "column_stack": lambda x, y: (([x, y],), {}),
    "row_stack": lambda x, y: (([x, y],), {}),
    "lexsort": lambda x, y: (((x[0], y[0]),), {}),
    "savez": lambda x, y: ((io.BytesIO(), x), {}),
    "savez_compressed": lambda x, y: ((io.BytesIO(), x), {}),
    "linalg.outer": lambda x, y: ((x[0], y[1]), {}),
    "array": lambda x, y: ((x,), {"like": x}),
    "asarray": lambda x, y: ((x,), {"like": x}),
    "asanyarray": lambda x, y: ((x,), {"like": x}),
    "ascontiguousarray": lambda x, y: ((x,), {"like": x}),
    "arange": lambda x, y: ((4,), {"like": x}),
    "ones": lambda x, y: ((3,), {"like": x}),
    "zeros": lambda x, y: ((3,), {"like": x}),
    "empty": lambda x, y: ((3,), {"like": x}),
    "full": lambda x, y: (((2, 3), x[0, 0]), {"like": x}),
    "eye": lambda x, y: ((3,), {"k": 1, "like": x}),
    "identity": lambda x, y: ((3,), {"like": x}),
    "astype": lambda x, y: ((x, "complex128"), {}),
    "bitwise_and": lambda x, y: ((x > 0.5, y > 0.5), {}),
    "bitwise_or": lambda x, y: ((x > 0.5, y > 0.5), {}),
    "bitwise_xor": lambda x, y: ((x > 0.5, y > 0.5), {}),
    "invert": lambda x, y: ((x > 0.5,), {}),
    "bitwise_not": lambda x, y: ((x > 0.5,), {}),
    "bitwise_invert": lambda x, y: ((x > 0.5,), {}),
    "linalg.cholesky": lambda x, y: ((x @ x.T + np.eye(3),), {}),
    "linalg.matrix_power": lambda x, y: ((x, 3), {}),
    "linalg.multi_dot": lambda x, y: (([x, y, x],), {}),
    "linalg.norm": lambda x, y: ((x,), {"ord": "nuc"}),
    "linalg.tensorsolve": lambda x, y: ((x, y[0]), {}),
    "arccosh": lambda x, y: ((x + 1.0,), {}),
    "acosh": lambda x, y: ((x + 1.0,), {}),
}

#: name -> why its call fails for reasons of arguments, not of tensors (NumPy's own error)
ARGUMENT_FAILURES = {
    "numpy.typename": "takes a type code character",
    "numpy.isfortran": "needs an ndarray's .flags",
    "numpy.from_dlpack": "needs the DLPack protocol",
    "numpy.fromstring": "takes a string",
    "numpy.frombuffer": "takes a buffer",
    "numpy.fromiter": "takes an iterable and a dtype",
    "numpy.frompyfunc": "takes a Python function",
    "numpy.fromfunction": "takes a Python function",
    "numpy.base_repr": "takes an integer",
    "numpy.binary_repr": "takes an integer",
    "numpy.datetime_data": "takes a datetime dtype",
    "numpy.busdaycalendar": "takes weekmasks and holidays",
    "numpy.datetime64": "takes a date",
    "numpy.timedelta64": "takes a duration",
    "numpy.errstate": "takes keyword arguments only",
    "numpy.iinfo": "takes an integer dtype",
    "numpy.nditer": "an iterator needs flags as strings",
    "numpy.nested_iters": "an iterator needs flags as strings",
    "numpy.ndarray": "takes a shape",
    "numpy.recarray": "takes a shape",
    "numpy.broadcast_shapes": "takes shapes",
    "numpy.tri": "takes sizes",
    "numpy.tril_indices": "takes sizes",
    "numpy.triu_indices": "takes sizes",
    "numpy.mask_indices": "takes a size and a function",
    "numpy.diag_indices": "takes sizes",
    "numpy.indices": "takes a shape",
    "numpy.ndindex": "takes a shape",
    "numpy.poly1d": "takes the coefficients of one polynomial (1-d)",
    "numpy.put_along_axis": "writes into its argument (takes an axis)",
    "numpy.memmap": "takes a file name",
}

#: they write into their first argument (numpy/inplace.py): the walk's tensors are leaves
#: that require grad, which refuse the write as PyTorch does; tests/test_inplace_writes.py
#: checks their values and gradients
WRITES_INTO_ARGUMENT = {"numpy.copyto", "numpy.put", "numpy.place"}
LEAF_REFUSAL = "TapeError: a leaf tensor that requires grad is used in an in-place operation"

#: their values are arbitrary (NumPy's uninitialised memory): only dispatching is checked
ARBITRARY_VALUES = {"numpy.empty", "numpy.empty_like"}


def _no_argument_or_abstract(f) -> bool:
    """Functions without any parameter and NumPy's classes that cannot be instantiated."""
    if isinstance(f, type) and f.__name__ in ("generic", "number", "integer", "inexact",
                                              "floating", "complexfloating", "flexible",
                                              "character", "signedinteger",
                                              "unsignedinteger", "ufunc", "flatiter"):
        return True
    try:
        return not inspect.signature(f).parameters
    except (TypeError, ValueError):
        return False


def public_callables() -> dict:
    """``"numpy.name"`` / ``"numpy.linalg.name"`` -> the callable, for every public one."""
    found = {}
    for module in (np, np.linalg):
        for name in dir(module):
            if name.startswith("_"):
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                f = getattr(module, name)
            if callable(f):
                found[f"{module.__name__}.{name}"] = f
    return found


CALLABLES = public_callables()


def _short(qualname: str) -> str:
    return qualname.removeprefix("numpy.")


def _default_arguments(f, x, y):
    """One tensor per required positional parameter (ufuncs: per input); one if none."""
    if isinstance(f, np.ufunc):
        return (x, y)[:f.nin], {}
    try:
        parameters = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return (x,), {}
    required = [p for p in parameters if p.default is p.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return (x, y, x)[:max(1, min(len(required), 3))], {}


def arguments(qualname: str, x, y):
    builder = ARGUMENTS.get(_short(qualname))
    if builder is not None:
        return builder(x, y)
    return _default_arguments(CALLABLES[qualname], x, y)


def call(qualname: str, x, y):
    args, kwargs = arguments(qualname, x, y)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return CALLABLES[qualname](*args, **kwargs)


def leaves(result) -> list:
    """The items of (nested) tuples and lists, the fields of NumPy's named results."""
    if isinstance(result, (tuple, list)):
        return [leaf for item in result for leaf in leaves(item)]
    return [result]


def _is_tensor(value) -> bool:
    return isinstance(value, (tp.Tensor, tp.TracedTensor))


def _is_numpy_value(value) -> bool:
    return isinstance(value, (np.ndarray, np.generic, float, complex)) and not isinstance(
        value, (str, bytes))


def _inexact(value) -> bool:
    return np.dtype(value.dtype).kind in "fc"


def _same(a, b) -> bool:
    a, b = leaves(a), leaves(b)
    if len(a) != len(b):
        return False
    for u, v in zip(a, b):
        if _is_numpy_value(u) or _is_numpy_value(v):
            if not (np.shape(u) == np.shape(v) and np.array_equal(u, v, equal_nan=True)):
                return False
        elif repr(u) != repr(v):
            return False
    return True


# ------------------------------------------------------------------ outcomes

Outcome = collections.namedtuple("Outcome", "kind detail")
ACCEPTED = ("dispatched", "refused by name", "refused at conversion", "other tenpy_ad error",
            "needs concrete values", "shape-only result", "text", "argument error")
#: how the conversions of a tensor being differentiated refuse (``Tensor.__array__``,
#: ``__float__``, ``__complex__``; a placeholder's, which has no values)
CONVERSION = ("conversion to a NumPy array", "float()", "complex()")


def _refusal(qualname: str, error: Exception) -> Outcome:
    message = str(error)
    if isinstance(error, TenpyAdError):
        names = (qualname.replace("numpy.", "np."), f"np.{CALLABLES[qualname].__name__}")
        if message.startswith(CONVERSION):
            return Outcome("refused at conversion", message[:100])
        if isinstance(error, ConcretizationError):
            return Outcome("needs concrete values", message[:100])
        if any(name in message for name in names):
            return Outcome("refused by name", message[:100])
        return Outcome("other tenpy_ad error", f"{type(error).__name__}: {message[:100]}")
    detail = f"{type(error).__name__}: {message[:100]}"
    if qualname in ARGUMENT_FAILURES or (isinstance(error, (TypeError, ValueError)) and
                                         _no_argument_or_abstract(CALLABLES[qualname])):
        return Outcome("argument error", detail)
    if isinstance(error, (TypeError, ValueError)):
        return Outcome("unexpected argument error", detail)
    return Outcome("other exception", detail)


def _values(result) -> list:
    """The array-valued items of a result: tensors, ndarrays, NumPy and Python numbers."""
    return [leaf for leaf in leaves(result) if _is_tensor(leaf) or _is_numpy_value(leaf)]


#: how many of the floating-point outputs enter the loss: eig's eigenvectors have an
#: arbitrary phase, so only its eigenvalues do
LOSS_OUTPUTS = {"numpy.linalg.eig": 1}


def _loss_positions(qualname: str, result) -> list:
    """Where, among ``_values(result)``, the floating-point tensors of the loss are."""
    positions = [k for k, value in enumerate(_values(result))
                 if _is_tensor(value) and _inexact(value)]
    return positions[:LOSS_OUTPUTS.get(qualname)]


def _loss(values, positions, weights):
    """A weighted sum of real and imaginary parts (of tensors or of NumPy's values)."""
    total = 0.0
    for k, (w_real, w_imag) in zip(positions, weights):
        total = total + np.sum(np.real(values[k]) * w_real) + np.sum(
            np.imag(values[k]) * w_imag)
    return total


def _numpy_values(qualname: str, x, y) -> list:
    return _values(call(qualname, x, y))


def _check_values(qualname: str, result) -> str | None:
    """The outputs are those of NumPy's own function on the ndarrays."""
    try:
        theirs = _numpy_values(qualname, X.copy(), Y.copy())
    except Exception as error:                     # noqa: BLE001 - reported
        return f"NumPy itself raised {type(error).__name__}: {error}"
    ours = [leaf.detach() if isinstance(leaf, tp.Tensor) else leaf for leaf in _values(result)]
    if len(ours) != len(theirs):
        return f"{len(ours)} outputs, NumPy gives {len(theirs)}"
    for k, (a, b) in enumerate(zip(map(np.asarray, ours), map(np.asarray, theirs))):
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-10, atol=1e-12,
                                                 equal_nan=True):
            return f"output {k}: {a!r} but NumPy gives {b!r}"
    return None


def _check_gradient(qualname: str, result, x, y, seed: int):
    """The eager gradient of a weighted sum of the outputs against central differences
    of NumPy's function in a random direction; returns ``(problem, loss)``, the loss as
    ``(positions, weights, gradients, output values)``."""
    ours = _values(result)
    positions = _loss_positions(qualname, result)
    rng = np.random.default_rng(seed)
    weights = [(rng.standard_normal(ours[k].shape), rng.standard_normal(ours[k].shape))
               for k in positions]
    loss = _loss(ours, positions, weights)
    grads = [np.zeros_like(X), np.zeros_like(Y)]
    if _is_tensor(loss) and loss.requires_grad:
        loss.backward()
        grads = [g if t.grad is None else np.asarray(t.grad) for g, t in zip(grads, (x, y))]
    vx, vy = rng.standard_normal(X.shape), rng.standard_normal(Y.shape)
    step = 1e-6
    shifted = [_loss(_numpy_values(qualname, X + sign * step * vx, Y + sign * step * vy),
                     positions, weights) for sign in (1.0, -1.0)]
    fd = (shifted[0] - shifted[1]) / (2 * step)
    ad = float(np.sum(grads[0] * vx) + np.sum(grads[1] * vy))
    problem = None
    if not np.isfinite(fd) or abs(ad - fd) > 1e-5 * max(1.0, abs(fd)):
        problem = f"directional derivative {ad!r}, finite differences {fd!r}"
    outputs = [np.asarray(ours[k].detach()) for k in positions]
    return problem, (positions, weights, grads, outputs)


def _eager(qualname: str, seed: int):
    """The outcome of the call on eager tensors that require grad, and the loss used."""
    x, y = (tp.tensor(v, requires_grad=True) for v in (X, Y))
    try:
        result = call(qualname, x, y)
    except Exception as error:                     # noqa: BLE001 - every error is classified
        return _refusal(qualname, error), None
    found = leaves(result)
    if any(_is_tensor(leaf) for leaf in found):
        if any(_is_numpy_value(leaf) and _inexact(np.asarray(leaf)) for leaf in found):
            return Outcome("detached", "floating-point NumPy values beside tensors"), None
        if qualname in ARBITRARY_VALUES:
            return Outcome("dispatched", "arbitrary values: not compared"), None
        problem = _check_values(qualname, result)
        if problem:
            return Outcome("wrong value", problem), None
        if not _loss_positions(qualname, result):
            return Outcome("dispatched", "integer or bool result"), None
        problem, loss = _check_gradient(qualname, result, x, y, seed)
        if problem:
            return Outcome("wrong gradient", problem), None
        return Outcome("dispatched", "values and gradient checked"), loss
    if isinstance(result, str):
        return Outcome("text", repr(result)[:60]), None
    if isinstance(result, BaseException) or qualname in ARBITRARY_VALUES:
        return Outcome("shape-only result", repr(result)[:60]), None
    other = call(qualname, *(tp.tensor(v, requires_grad=True) for v in (X_OTHER, Y_OTHER)))
    if _same(result, other):
        return Outcome("shape-only result", repr(result)[:60]), None
    return Outcome("detached", f"{type(result).__name__} changes with the values"), None


def _traced(qualname: str, eager_loss):
    """The same call on placeholders; compiled with the gradient graph of the eager loss,
    it gives the eager outputs and gradients."""
    x, y = tp.input(X.shape), tp.input(Y.shape)
    try:
        result = call(qualname, x, y)
    except Exception as error:                     # noqa: BLE001 - every error is classified
        return _refusal(qualname, error)
    if not any(_is_tensor(leaf) for leaf in leaves(result)):
        return Outcome("text" if isinstance(result, str) else "shape-only result", "")
    if eager_loss is None:
        return Outcome("dispatched", "")
    positions, weights, eager_grads, eager_outputs = eager_loss
    if _loss_positions(qualname, result) != positions:
        return Outcome("wrong value", "other floating-point outputs than in eager mode")
    values = _values(result)
    outputs = [values[k] for k in positions]
    loss = _loss(values, positions, weights)
    grads = [tp.ad.grad(loss, v) for v in (x, y)]
    computed = tp.compile(outputs + grads, inputs=[x, y])(X, Y)
    for k, (got, want) in enumerate(zip(computed, eager_outputs + eager_grads)):
        if not np.allclose(got, want, rtol=1e-10, atol=1e-12, equal_nan=True):
            kind = "wrong value" if k < len(outputs) else "wrong gradient"
            return Outcome(kind, f"traced {got!r} but eager {want!r}")
    return Outcome("dispatched", "the eager outputs and gradient")


@functools.lru_cache(maxsize=None)
def walk(qualname: str) -> dict:
    """``{"eager": Outcome, "traced": Outcome}`` of one public callable."""
    seed = sum(map(ord, qualname))
    eager, loss = _eager(qualname, seed)
    return {"eager": eager, "traced": _traced(qualname, loss)}


WALKED = sorted(name for name in CALLABLES if name not in NOT_CALLED)


@pytest.mark.parametrize("qualname", WALKED)
def test_call_dispatches_or_refuses_clearly(qualname):
    for mode, outcome in walk(qualname).items():
        assert outcome.kind in ACCEPTED, f"{qualname} ({mode}): {outcome}"


def test_every_registered_numpy_function_is_reached_and_dispatches():
    """The walk builds working arguments for every function tenpy_ad implements (those
    that build constants or read shapes give NumPy's results)."""
    registered = [name for name in WALKED if _registered(CALLABLES[name])]
    assert len(registered) > 200
    missed = {name: walk(name)["eager"] for name in registered
              if walk(name)["eager"].kind not in ("dispatched", "shape-only result")
              and name not in WRITES_INTO_ARGUMENT}
    assert not missed, missed
    for name in WRITES_INTO_ARGUMENT:
        assert walk(name)["eager"].detail.startswith(LEAF_REFUSAL), walk(name)


def _registered(f) -> bool:
    return implementation_of(f) is not None


def summary() -> dict:
    """``(mode, outcome) -> names`` over the whole walk."""
    table = collections.defaultdict(list)
    for name in WALKED:
        for mode, outcome in walk(name).items():
            table[mode, outcome.kind].append(_short(name))
    return dict(table)


if __name__ == "__main__":
    print(f"{len(CALLABLES)} public callables, {len(NOT_CALLED)} not called, "
          f"{len(WALKED)} walked")
    for (mode, kind), names in sorted(summary().items()):
        print(f"{mode:7} {kind:24} {len(names):4}  {' '.join(names)}")

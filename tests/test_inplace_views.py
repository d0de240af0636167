"""Every way NumPy makes a view, applied to an eager tensor: after a write into the result
and a write into its base, both equal NumPy's doing the same writes, or the write raised.

Never a value that differs from NumPy's, silently: an op tenpy_ad does not track as a
view must give a copy where NumPy gives one, and a write NumPy refuses (read-only views)
must be refused too."""
import sys
import warnings

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import TenpyAdError, UnsupportedError

A = np.arange(24.0).reshape(2, 3, 4)
S = np.arange(12.0).reshape(3, 4)
C = (np.arange(6.0) + 1j * np.arange(6.0)[::-1]).reshape(2, 3)
tricks = np.lib.stride_tricks

#: name -> (source values, the op); the op runs on an ndarray and on a tensor alike
VIEW_OPS = {
    "a[0]": (A, lambda a: a[0]),
    "a[...]": (A, lambda a: a[...]),
    "a[:]": (A, lambda a: a[:]),
    "a[1:, ::2]": (A, lambda a: a[1:, ::2]),
    "a[None]": (A, lambda a: a[None]),
    "a[0][1]": (A, lambda a: a[0][1]),
    "a[[0, 1]] (a copy)": (S, lambda a: a[[0, 1]]),
    "a[a > 3] (a copy)": (S, lambda a: a[a > 3]),
    ".T": (A, lambda a: a.T),
    ".mT": (A, lambda a: a.mT),
    "transpose": (A, lambda a: np.transpose(a)),
    ".transpose": (A, lambda a: a.transpose(1, 0, 2)),
    "permute_dims": (A, lambda a: np.permute_dims(a, (2, 0, 1))),
    "matrix_transpose": (A, lambda a: np.matrix_transpose(a)),
    "swapaxes": (A, lambda a: np.swapaxes(a, 0, 2)),
    ".swapaxes": (A, lambda a: a.swapaxes(0, 1)),
    "moveaxis": (A, lambda a: np.moveaxis(a, 0, -1)),
    "rollaxis": (A, lambda a: np.rollaxis(a, 2)),
    "reshape": (A, lambda a: np.reshape(a, (6, 4))),
    ".reshape": (A, lambda a: a.reshape(4, 6)),
    "reshape of .T (a copy)": (S, lambda a: np.reshape(a.T, (12,))),
    "ravel": (A, lambda a: np.ravel(a)),
    ".ravel": (A, lambda a: a.ravel()),
    "ravel order F": (S, lambda a: np.ravel(a, order="F")),
    "ravel F of .T": (S, lambda a: np.ravel(a.T, order="F")),
    ".flatten (a copy)": (A, lambda a: a.flatten()),
    "squeeze": (A[:1], lambda a: np.squeeze(a)),
    ".squeeze": (A[:1], lambda a: a.squeeze()),
    "expand_dims": (A, lambda a: np.expand_dims(a, 1)),
    "atleast_1d": (A, lambda a: np.atleast_1d(a)),
    "atleast_2d": (S[0], lambda a: np.atleast_2d(a)),
    "atleast_3d": (S, lambda a: np.atleast_3d(a)),
    "real": (C, lambda a: np.real(a)),
    "imag": (C, lambda a: np.imag(a)),
    ".real": (C, lambda a: a.real),
    ".imag": (C, lambda a: a.imag),
    "real of a real array": (S, lambda a: np.real(a)),
    "imag of a real array": (S, lambda a: np.imag(a)),
    ".conj of a real array": (S, lambda a: a.conj()),
    "conj of a real array (a copy)": (S, lambda a: np.conj(a)),
    "positive (a copy)": (S, lambda a: np.positive(a)),
    ".astype of its dtype (a copy)": (S, lambda a: a.astype(np.float64)),
    "diagonal": (S, lambda a: np.diagonal(a)),
    ".diagonal": (S, lambda a: a.diagonal()),
    "broadcast_to": (S, lambda a: np.broadcast_to(a, (2, 3, 4))),
    "broadcast_arrays": (S, lambda a: np.broadcast_arrays(a, np.ones((2, 1, 1)))[0]),
    "flip": (A, lambda a: np.flip(a, 1)),
    "fliplr": (S, lambda a: np.fliplr(a)),
    "flipud": (S, lambda a: np.flipud(a)),
    "rot90": (S, lambda a: np.rot90(a)),
    "split": (A, lambda a: np.split(a, 2)[1]),
    "array_split": (A, lambda a: np.array_split(a, 3, axis=1)[1]),
    "hsplit": (S, lambda a: np.hsplit(a, 2)[1]),
    "vsplit": (S, lambda a: np.vsplit(a, 3)[1]),
    "dsplit": (A, lambda a: np.dsplit(a, 2)[1]),
    "unstack": (A, lambda a: np.unstack(a, axis=1)[1]),
    "np.asarray": (S, lambda a: np.asarray(a)),
    "np.asanyarray": (S, lambda a: np.asanyarray(a)),
    "np.array copy=False": (S, lambda a: np.array(a, copy=False)),
    "np.array (a copy)": (S, lambda a: np.array(a)),
    "as_strided": (S, lambda a: tricks.as_strided(a, (2, 2), np.asarray(a).strides)),
    "sliding_window_view": (S, lambda a: tricks.sliding_window_view(a, 2, axis=1)),
    ".view": (S, lambda a: a.view()),
    ".flat": (S, lambda a: a.flat),
}

#: a refusal: a tenpy_ad error, or NumPy's own for a write into the read-only ndarray
#: that np.asarray(t) gives (tape entries may have saved the tensor's array); an op
#: that tensors do not have (``.view``, ``.flat``) fails at once
REFUSALS = (TenpyAdError, ValueError)


def _first(value):
    return (0,) * np.ndim(value)


def _write(value, where: str, result, base):
    """The same write into NumPy's or tenpy_ad's ``result`` or ``base``."""
    target = result if where == "result" else base
    new = 100 + 1j if np.iscomplexobj(target) else 100.0
    target[_first(target)] = new if where == "result" else -new


def _values(x):
    return x.data if isinstance(x, tp.Tensor) else np.asarray(x)


def _outcome(op, source, where: str):
    """``("raised", error)`` or ``("values", base, result)``, for ndarrays or tensors."""
    base = source.copy() if isinstance(source, np.ndarray) else tp.tensor(source.data.copy())
    try:
        result = op(base)
    except (TenpyAdError, AttributeError) as error:
        return ("op raised", error)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)   # broadcast_arrays' write
            _write(None, where, result, base)
    except REFUSALS as error:
        return ("raised", error)
    return ("values", _values(base).copy(), _values(result).copy())


@pytest.mark.parametrize("where", ["result", "base"])
@pytest.mark.parametrize("name", list(VIEW_OPS))
def test_writes_through_views_give_numpy_values_or_raise(name, where):
    values, op = VIEW_OPS[name]
    expected = _outcome(op, values, where)
    got = _outcome(op, tp.tensor(values), where)
    if got[0] == "op raised":
        return                              # tensors have no such op: nothing to write
    if expected[0] == "raised":
        assert got[0] == "raised", f"{name}: NumPy refuses the write, tenpy_ad wrote"
        return
    if got[0] == "raised":
        return                              # refused clearly: never a different value
    np.testing.assert_array_equal(got[1], expected[1], err_msg=f"{name}: the base")
    np.testing.assert_array_equal(got[2], expected[2], err_msg=f"{name}: the result")


def test_an_array_numpy_holds_of_a_tensor_refuses_writes_into_the_tensor():
    t = tp.tensor(S.copy())
    held = np.asarray(t)
    with pytest.raises(UnsupportedError, match=r"np\.asarray\(t\).*np\.array\(t\)"):
        t[0, 0] = 5.0
    with pytest.raises(ValueError, match="read-only"):
        held[0, 0] = 5.0                  # the tensor's own array: tape entries saved it
    del held
    t[0, 0] = 5.0                         # once the array is gone, writes are NumPy's
    assert t.data[0, 0] == 5.0 and S[0, 0] == 0.0


def test_registered_functions_give_a_view_exactly_where_numpy_does():
    """Every function tenpy_ad implements, with the protocol walk's arguments: NumPy's
    result shares memory with an argument exactly when tenpy_ad's is that tensor or a
    view tracked for writes."""
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    import test_numpy_protocol_walk as walk
    mismatched = []
    for name in walk.WALKED:
        if not walk._registered(walk.CALLABLES[name]):
            continue
        arrays = (walk.X.copy(), walk.Y.copy())
        tensors = (tp.tensor(walk.X.copy()), tp.tensor(walk.Y.copy()))
        try:
            expected = walk.call(name, *arrays)
            got = walk.call(name, *tensors)
        except Exception:                   # noqa: BLE001 - the walk checks the failures
            continue
        for u, v in zip(walk.leaves(expected), walk.leaves(got)):
            if isinstance(u, np.ndarray) and isinstance(v, tp.Tensor):
                shares = any(np.shares_memory(u, a) for a in arrays)
                tracked = any(v is t or _is_view(v, t) for t in tensors)
                if shares != tracked and u.flags.writeable:
                    mismatched.append((name, "NumPy: a view" if shares else "NumPy: a copy"))
    assert not mismatched, mismatched


def _is_view(v, t) -> bool:
    from tenpy_ad.numpy._views import is_view_of
    return is_view_of(v, t)

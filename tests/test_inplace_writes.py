"""In-place writes on eager tensors (NumPy's semantics, views included), differentiable;
traced tensors: ``+=`` gives a new node, the other writes raise."""
import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad.errors import (ArgumentValueError, NotDifferentiableError, TapeError,
                             UnsupportedError)
from tenpy_ad.testing import numerical_gradient


def _pair(shape=(3, 4), seed=0):
    values = np.random.default_rng(seed).normal(size=shape)
    return tp.tensor(values.copy()), values.copy()


def _same(tensors, arrays):
    for t, a in zip(tensors, arrays):
        np.testing.assert_array_equal(t.data, a)


# ------------------------------------------------------------------ values and views

WRITES = [
    lambda a: a.__setitem__((0, 1), 7.0),
    lambda a: a.__setitem__(slice(None), 2.0),
    lambda a: a.__setitem__((slice(None), 2), [1.0, 2.0, 3.0]),
    lambda a: a.__setitem__([0, 2], np.arange(4.0)),
    lambda a: a.__setitem__(([0, 0], [1, 3]), -5.0),
    lambda a: a.__setitem__(np.array([True, False, True]), 9.0),
    lambda a: a.__setitem__((Ellipsis, None, 1), 4.0),
]


@pytest.mark.parametrize("k", range(len(WRITES)))
def test_setitem_matches_numpy(k):
    t, a = _pair()
    row, col, tr = t[1], t[:, 1], t.T
    r, c, ta = a[1], a[:, 1], a.T
    WRITES[k](t)
    WRITES[k](a)
    _same([t, row, col, tr], [a, r, c, ta])


def test_augmented_assignment_matches_numpy():
    t, a = _pair()
    row, tr, flat = t[0], t.T, t.reshape(-1)
    r, ta, f = a[0], a.T, a.reshape(-1)
    for tt, aa in ((t, a),):
        tt += 1.0
        aa += 1.0
        tt[0, 1] -= 3.0
        aa[0, 1] -= 3.0
        tt[:, 1] *= 2.0
        aa[:, 1] *= 2.0
        tt[[0, 0, 2]] /= 4.0                 # repeated index: NumPy writes once
        aa[[0, 0, 2]] /= 4.0
        tt **= 2
        aa **= 2
    _same([t, row, tr, flat], [a, r, ta, f])


def test_writes_through_views_reach_the_base_and_each_other():
    t, a = _pair((4, 6), seed=1)
    tv = [t[1], t[:, ::2], t.T, t[1:3].T[::-1], np.swapaxes(t, 0, 1), t.reshape(2, 12),
          np.flip(t, 1), np.split(t, 2)[1], np.expand_dims(t, 0), np.moveaxis(t, 0, 1)]
    av = [a[1], a[:, ::2], a.T, a[1:3].T[::-1], np.swapaxes(a, 0, 1), a.reshape(2, 12),
          np.flip(a, 1), np.split(a, 2)[1], np.expand_dims(a, 0), np.moveaxis(a, 0, 1)]
    for k in range(len(tv)):
        index = (0,) * tv[k].ndim
        tv[k][index] = 100.0 + k
        av[k][index] = 100.0 + k
        tv[k] += 0.5
        av[k] += 0.5
        _same([t] + tv, [a] + av)


def test_real_and_imag_views():
    z0 = np.array([1 + 2j, 3 - 1j, -2 + 0.5j])
    t, a = tp.tensor(z0.copy()), z0.copy()
    re, im = t.real, t.imag
    rea, ima = a.real, a.imag
    re[0] = 10.0
    rea[0] = 10.0
    im += 1.0
    ima += 1.0
    t[2] = 5j
    a[2] = 5j
    _same([t, re, im], [a, rea, ima])


def test_reshape_of_a_non_contiguous_tensor_is_a_copy_as_in_numpy():
    t, a = _pair()
    flat, fa = t.T.reshape(-1), a.T.reshape(-1)
    flat[0] = 50.0
    fa[0] = 50.0
    _same([t, flat], [a, fa])


def test_read_only_views_raise_and_follow_their_base():
    t, a = _pair()
    d, da = np.diagonal(t), np.diagonal(a)
    b, ba = np.broadcast_to(t[0], (2, 4)), np.broadcast_to(a[0], (2, 4))
    for view in (d, b):
        with pytest.raises(ArgumentValueError, match="read-only"):
            view[0] = 1.0
    t[0, 0] = 3.0
    a[0, 0] = 3.0
    _same([d, b], [da, ba])


def test_copies_do_not_alias():
    t, a = _pair()
    copies = [t.copy(), np.copy(t), t.flatten(), t * 1, t.astype(t.dtype), t[[0, 1]]]
    kept = [c.data.copy() for c in copies]
    t[...] = 0.0
    _same(copies, kept)
    copies[0][0, 0] = 1.0
    assert t.data[0, 0] == 0.0


def test_out_copyto_fill_put_place():
    t, a = _pair()
    x = tp.tensor(np.linspace(-2, 2, 12).reshape(3, 4))
    assert np.add(x, 1.0, out=t) is t
    np.add(x.data, 1.0, out=a)
    np.clip(x[1], -0.5, 0.5, out=t[1])
    np.clip(x.data[1], -0.5, 0.5, out=a[1])
    np.multiply(x[0], 2.0, out=(t[2],))
    np.multiply(x.data[0], 2.0, out=(a[2],))
    _same([t], [a])
    np.sum(x, axis=0, out=t[0])
    np.sum(x.data, axis=0, out=a[0])
    np.testing.assert_allclose(t.data, a)
    np.copyto(t, [1.0, 2.0, 3.0, 4.0])
    np.copyto(a, [1.0, 2.0, 3.0, 4.0])
    np.copyto(t, -1.0, where=x.data > 0)
    np.copyto(a, -1.0, where=x.data > 0)
    t[1].fill(8.0)
    a[1].fill(8.0)
    np.put(t, [0, 5, 11], [0.5, 0.25])
    np.put(a, [0, 5, 11], [0.5, 0.25])
    np.place(t, a > 3, [7.0, 6.0])
    np.place(a, a > 3, [7.0, 6.0])
    _same([t], [a])


def test_dtype_and_shape_rules_of_numpy():
    t = tp.tensor(np.arange(3), dtype="int64")
    with pytest.raises(TypeError, match="same_kind"):
        t += 0.5
    t += 2
    np.testing.assert_array_equal(t.data, [2, 3, 4])
    f = tp.tensor(np.zeros(3))
    with pytest.raises(ValueError, match="non-broadcastable"):
        f += np.ones((2, 3))


# ------------------------------------------------------------------ gradients

def _written(x, v):
    """A program with writes of every form: the loss depends on the written values and
    on the kept ones."""
    z = x * 1.5
    z[0] = v                            # basic index, broadcast value
    row = z[1]
    row *= v                            # a view written in place reaches z
    z[[2, 2]] += tnp.sin(v)             # integer array, repeated: written once
    z[:, 0] -= x[:, 1] ** 2
    z += x
    np.multiply(z, 2.0, out=z)
    return (tnp.exp(z) * z).sum() + (row ** 3).sum()


def _functional(x, v):
    z = x * 1.5
    z = z.at[0].set(tnp.broadcast_to(v, (4,)))
    z = z.at[1].set(z[1] * v)
    z = z.at[[2, 2]].set(z[[2, 2]] + tnp.sin(v))
    z = z.at[:, 0].set(z[:, 0] - x[:, 1] ** 2)
    z = (z + x) * 2.0
    return (tnp.exp(z) * z).sum() + (z[1] ** 3).sum()


def _inputs():
    rng = np.random.default_rng(3)
    return rng.normal(size=(3, 4)) * 0.3, rng.normal(size=(4,)) * 0.3


def test_values_and_gradients_of_writes_against_central_differences():
    x0, v0 = _inputs()
    x, v = tp.tensor(x0, requires_grad=True), tp.tensor(v0, requires_grad=True)
    loss = _written(x, v)
    np.testing.assert_allclose(loss.item(),
                               _functional(tp.tensor(x0), tp.tensor(v0)).item(), rtol=1e-12)
    loss.backward()
    gx = numerical_gradient(lambda a: _written(tp.tensor(a), tp.tensor(v0)).item(), x0)
    gv = numerical_gradient(lambda b: _written(tp.tensor(x0), tp.tensor(b)).item(), v0)
    np.testing.assert_allclose(x.grad.data, gx, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(v.grad.data, gv, rtol=1e-6, atol=1e-8)


def test_second_order_gradients_of_writes():
    x0, v0 = _inputs()
    v = tp.tensor(v0, requires_grad=True)
    x = tp.tensor(x0, requires_grad=True)
    loss = _written(x, v)
    loss.backward(create_graph=True)
    weights = np.arange(1.0, 5.0)
    gv = v.grad
    v.grad = None
    x.grad = None
    (gv * tp.tensor(weights)).sum().backward()      # d/dv of <dL/dv, w>

    def directional(b):
        xx, vv = tp.tensor(x0), tp.tensor(b, requires_grad=True)
        _written(xx, vv).backward()
        return float(vv.grad.data @ weights)

    np.testing.assert_allclose(v.grad.data, numerical_gradient(directional, v0),
                               rtol=1e-5, atol=1e-7)


def test_a_write_of_a_grad_value_into_a_plain_tensor_requires_grad():
    v = tp.tensor(2.0, requires_grad=True)
    z = tp.tensor(np.zeros(3))
    z[1] = v
    assert z.requires_grad
    (z * tp.tensor([1.0, 5.0, 1.0])).sum().backward()
    assert v.grad.item() == 5.0


def test_saved_values_stay_right_after_a_write():
    x = tp.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    y = tnp.exp(x)
    w = y * 1.0 + 0.0
    z = w * w                            # saves w
    w[0] = 100.0                         # a new array: the tape keeps the old one
    z.sum().backward()
    np.testing.assert_allclose(x.grad.data, 2 * np.exp(2 * x.data))


# ------------------------------------------------------------------ what raises

def test_a_write_into_a_leaf_that_requires_grad_raises():
    x = tp.tensor(np.ones(3), requires_grad=True)
    for write in (lambda: x.__setitem__(0, 1.0), lambda: x.__iadd__(1.0),
                  lambda: x[1:].__setitem__(0, 2.0), lambda: np.add(x, 1, out=x)):
        with pytest.raises(TapeError, match="leaf tensor that requires grad"):
            write()
    with tp.no_grad():
        x[0] = 5.0
    assert x.is_leaf and x.requires_grad and x.data[0] == 5.0


def test_writing_a_grad_tensor_into_an_ndarray_raises():
    t = tp.tensor(np.ones(3), requires_grad=True)
    arr = np.zeros(3)
    with pytest.raises(NotDifferentiableError, match="zeros_like"):
        arr += t
    with pytest.raises(NotDifferentiableError, match="zeros_like"):
        np.multiply(t, 2.0, out=arr)
    # every form names the write and how to make a tensor target (0-d values included:
    # NumPy's float64 setitem would replace a sequence's error by its own)
    for write in (lambda: arr.__setitem__(slice(None), t),
                  lambda: arr.__setitem__(0, t[0]),
                  lambda: arr.__setitem__(0, t.sum()),
                  lambda: arr.__setitem__([0, 2], t[:2]),
                  lambda: arr.__setitem__(arr > 0.5, t[:0])):
        with pytest.raises(NotDifferentiableError, match=r"a\[i(dx)?\] = t.*zeros_like"):
            write()
    np.testing.assert_array_equal(arr, np.zeros(3))
    plain = tp.tensor(np.ones(3))
    arr += plain                        # no gradient to lose: NumPy's write
    np.testing.assert_array_equal(arr, np.ones(3))


# ------------------------------------------------------------------ traced

def test_traced_augmented_assignment_is_a_new_node_with_the_functional_gradient():
    x = tp.input((3,), name="x")
    y = x * 2.0
    before = y
    y += tnp.sin(x)
    y *= x
    assert y is not before
    loss = y.sum()
    functional = ((x * 2.0 + tnp.sin(x)) * x).sum()
    f = tp.compile([loss, tp.ad.grad(loss, x), tp.ad.grad(functional, x)], inputs=[x])
    value, g, g_functional = f(np.array([0.1, 0.5, -0.3]))
    np.testing.assert_allclose(g, g_functional, rtol=1e-14)


@pytest.mark.parametrize("write, form", [
    (lambda x: x.__setitem__(0, 1.0), r"x\[idx\] = value"),
    (lambda x: np.add(x, 1.0, out=x), "out="),
    (lambda x: np.copyto(x, 1.0), "np.copyto"),
    (lambda x: x.fill(1.0), "fill"),
])
def test_traced_writes_raise_naming_the_form(write, form):
    x = tp.input((3,), name="x")
    with pytest.raises(UnsupportedError, match=form) as info:
        write(x)
    assert "x.at[index].set(value)" in str(info.value)


# ------------------------------------------------------------------ out= of tnp's and np's calls

OUT_CALLS = {
    "np.sum": (lambda x, t: np.sum(x, axis=0, out=t), lambda a: a.sum(axis=0), (3,)),
    "np.mean": (lambda x, t: np.mean(x, axis=1, out=t), lambda a: a.mean(axis=1), (2,)),
    "tnp.clip": (lambda x, t: tnp.clip(x, 1.0, 3.0, out=t), lambda a: np.clip(a, 1, 3), (2, 3)),
    "t.clip": (lambda x, t: x.clip(1.0, 3.0, out=t), lambda a: np.clip(a, 1, 3), (2, 3)),
    "tnp.multiply": (lambda x, t: tnp.multiply(x, x, out=t), lambda a: a * a, (2, 3)),
    "tnp.exp out=(t,)": (lambda x, t: tnp.exp(x, out=(t,)), np.exp, (2, 3)),
}


@pytest.mark.parametrize("name", list(OUT_CALLS))
def test_out_called_directly_writes_the_tensor_with_its_gradient(name):
    call, reference, shape = OUT_CALLS[name]
    values = np.arange(6.0).reshape(2, 3) * 0.7
    x = tp.tensor(values, requires_grad=True)
    t = tp.tensor(np.zeros(shape))
    assert call(x, t) is t
    np.testing.assert_allclose(t.data, reference(values))
    weights = np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape)
    tnp.sum(t * weights).backward()
    expected = numerical_gradient(lambda a: np.sum(reference(a) * weights), values)
    np.testing.assert_allclose(x.grad, expected, rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------ out= of every function

OUT_OF_FUNCTIONS = {        # name: (call(xp, x, out), shape of out); xp is numpy or tenpy_ad.numpy
    "sum": (lambda xp, x, o: xp.sum(x, axis=0, out=o), (4,)),
    "mean": (lambda xp, x, o: xp.mean(x, axis=1, out=o), (3,)),
    "max": (lambda xp, x, o: xp.max(x, axis=0, out=o), (4,)),
    "std": (lambda xp, x, o: xp.std(x, axis=0, out=o), (4,)),
    "cumsum": (lambda xp, x, o: xp.cumsum(x[0], out=o), (4,)),
    "take": (lambda xp, x, o: xp.take(x, [5, 0, 11, 5], out=o), (4,)),
    "round": (lambda xp, x, o: xp.round(x[1], 1, out=o), (4,)),
    "clip": (lambda xp, x, o: xp.clip(x[2], -0.5, 0.5, out=o), (4,)),
    "dot": (lambda xp, x, o: xp.dot(x.T, x[:, 0], out=o), (4,)),
    "einsum": (lambda xp, x, o: xp.einsum("ij,ij->j", x, x, out=o), (4,)),
    "concatenate": (lambda xp, x, o: xp.concatenate([x[0, :2], x[1, 2:]], out=o), (4,)),
    "method sum": (lambda xp, x, o: x.sum(axis=0, out=o), (4,)),
    "method max": (lambda xp, x, o: x.max(axis=0, out=o), (4,)),
}


@pytest.mark.parametrize("name", sorted(OUT_OF_FUNCTIONS))
def test_out_of_every_function_writes_the_tensor_as_numpy_does(name):
    """``f(..., out=t)`` (tnp's functions, NumPy's through dispatch, the methods) returns
    ``t`` holding NumPy's result, and the loss through ``t`` has the functional gradient."""
    call, shape = OUT_OF_FUNCTIONS[name]
    t, a = _pair()
    expected = np.zeros(shape)
    assert call(np, a, expected) is expected
    for xp in (tnp, np):
        out = tp.tensor(np.zeros(shape))
        assert call(xp, t, out) is out
        np.testing.assert_allclose(out.data, expected, rtol=1e-14)
    if name == "round":
        return                           # piecewise constant: nothing to compare
    x = tp.tensor(a.copy(), requires_grad=True)
    out = tp.tensor(np.zeros(shape))
    call(tnp, x * 1.0, out)
    (out * out).sum().backward()
    reference = numerical_gradient(
        lambda b: float(np.sum(call(np, b, np.zeros(shape)) ** 2)), a.copy())
    np.testing.assert_allclose(x.grad.data, reference, rtol=1e-6, atol=1e-8)


NEW_ARRAYS_OF_A_LEAF = {   # NumPy returns a new array: a write into it leaves the leaf alone
    "x * 1": lambda x: x * 1, "+x": lambda x: +x, "astype": lambda x: x.astype(x.dtype),
    "concatenate": lambda x: np.concatenate([x]), "tile": lambda x: np.tile(x, 1),
    "repeat": lambda x: np.repeat(x, 1), "conj": lambda x: np.conj(x),
    "sum over no axis": lambda x: np.sum(x, axis=()),
}


@pytest.mark.parametrize("name", sorted(NEW_ARRAYS_OF_A_LEAF))
def test_identity_shortcuts_of_a_leaf_are_new_tensors_that_take_writes(name):
    """An op that changes nothing still returns a new array in NumPy; of a leaf that
    requires grad it is a taped copy (a second handle of the leaf would be a leaf whose
    gradient never reaches it): writable, with the gradient of what was kept."""
    make = NEW_ARRAYS_OF_A_LEAF[name]
    x = tp.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    y = make(x)
    assert y is not x and not y.is_leaf
    y[0] = 5.0
    y[1] *= 3.0
    (y * y).sum().backward()
    np.testing.assert_array_equal(x.data, [0.5, -1.0, 2.0])
    np.testing.assert_allclose(x.grad.data, [0.0, 18.0 * -1.0, 4.0])
    with tp.no_grad():
        z = make(x)
        z[2] = 7.0
    assert z is not x and not z.requires_grad
    np.testing.assert_array_equal(x.data, [0.5, -1.0, 2.0])


def test_traced_augmented_assignment_refuses_where_numpys_views_would_see_it():
    """Traced views are not followed (nodes are interned): ``x += v`` into a traced view,
    or into a traced tensor a NumPy-level view was taken of, raises instead of leaving the
    views with the old values; without views it is the new node."""
    x, y = tp.input((2, 3), name="x"), tp.input((2, 3), name="y")
    t = x * 2.0
    t += y                                           # no views: a new node
    assert t is (x * 2.0 + y)
    u = x * 3.0
    row = u[0]
    with pytest.raises(UnsupportedError, match=r"\+= value into a view"):
        u += y
    with pytest.raises(UnsupportedError, match=r"\+= value into a view"):
        row += y[0]
    w = x * 4.0
    wt = w.T
    with pytest.raises(UnsupportedError, match="traced tensor"):
        w *= 2.0
    assert wt.shape == (3, 2)

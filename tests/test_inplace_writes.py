"""In-place writes with NumPy's semantics (views included), differentiable: eager tensors
are rebound, traced ones forwarded to the node of the written value."""
import gc

import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad.errors import (ArgumentValueError, NotDifferentiableError, TapeError,
                             UnsupportedError)
from tenpy_ad.primitive import PRIMITIVES, bind1, primitive
from tenpy_ad.rules import defvjp
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

def _traced_inputs():
    return tp.input((3, 4), name="x"), tp.input((4,), name="v")


def test_traced_writes_of_every_form_match_eager_values_and_gradients():
    """The program of every write form, traced: its value and its gradients (the graph's
    own derivative, tp.jit of tp.grad) equal the eager ones and central differences."""
    x0, v0 = _inputs()
    x, v = _traced_inputs()
    loss = _written(x, v)
    gx, gv = tp.ad.grad(loss, [x, v])
    value, grad_x, grad_v = tp.compile([loss, gx, gv], inputs=[x, v])(x0, v0)
    np.testing.assert_allclose(value, _written(tp.tensor(x0), tp.tensor(v0)).item(),
                               rtol=1e-13)
    np.testing.assert_allclose(grad_x, numerical_gradient(
        lambda a: _written(tp.tensor(a), tp.tensor(v0)).item(), x0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad_v, numerical_gradient(
        lambda b: _written(tp.tensor(x0), tp.tensor(b)).item(), v0), rtol=1e-6, atol=1e-8)
    jit_x, jit_v = tp.jit(tp.grad(_written, argnums=(0, 1)))(x0, v0)
    np.testing.assert_allclose(jit_x, grad_x, rtol=1e-13)
    np.testing.assert_allclose(jit_v, grad_v, rtol=1e-13)


def test_traced_writes_second_order_against_central_differences():
    x0, v0 = _inputs()
    weights = np.arange(1.0, 5.0)

    def directional(x, v):             # <dL/dv, w>
        return (tp.grad(_written, argnums=(0, 1))(x, v)[1] * weights).sum()

    second = tp.jit(tp.grad(directional, argnums=1))(x0, v0)
    expected = numerical_gradient(lambda b: float(directional(x0, b)), v0)
    np.testing.assert_allclose(second, expected, rtol=1e-5, atol=1e-7)


def test_a_traced_write_leaves_the_nodes_built_before_it():
    """No node changes: what was computed from ``t`` before a write keeps the old value,
    later uses of ``t`` (and its live views) take the written one."""
    x = tp.input((3,), name="x")
    t = x * 2.0
    before = t.sum()
    row = t[1:]
    t[0] = 10.0
    t[2] += 1.0
    after, kept, seen = t.sum(), before, row.sum()
    values = tp.compile([after, kept, seen, t], inputs=[x])(np.array([1.0, 2.0, 3.0]))
    expected = np.array([10.0, 4.0, 7.0])
    np.testing.assert_array_equal(values[3], expected)
    assert values[0] == expected.sum() and values[1] == 12.0 and values[2] == 11.0


def test_traced_views_and_bases_see_each_others_writes_as_numpys():
    def program(xp, x):
        t = xp.zeros_like(x)
        row, col, tt = t[1], t[:, 2], t.T
        row[:] = x[0]                   # through a view into the base
        tt[0, :] += 1.0                 # through a transposed view
        flat = t.reshape(-1)            # a view of a C-ordered array
        flat[5] = -7.0
        t[2, 0] = 3.0                   # into the base: every live view sees it
        return t, row, col, tt, flat

    x0 = np.arange(12.0).reshape(3, 4) * 0.5
    expected = program(np, x0)
    for got in (tp.jit(lambda a: program(tnp, a))(x0),
                tp.compile(list(program(tnp, x := tp.input((3, 4)))), inputs=[x])(x0)):
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e)


def test_a_traced_reshape_of_a_transposed_layout_is_a_copy_as_in_numpy():
    def program(xp, x):
        t = xp.zeros_like(x.T)          # laid out as x.T: column-major
        flat = t.reshape(-1)            # NumPy copies
        t[0] = x[1]
        return flat, t

    x0 = np.arange(9.0).reshape(3, 3)
    for g, e in zip(tp.jit(lambda a: program(tnp, a))(x0), program(np, x0)):
        np.testing.assert_array_equal(g, e)


def test_a_write_whose_source_is_its_own_base_reads_the_source_first():
    """``np.copyto(np.flip(a), a)``: NumPy reads ``a`` before it writes into the view of
    it (the fuzzer's writes mode found the view taking ``a``'s new values instead), and
    ``out=`` a view of the operand likewise; eager, traced and the gradient."""
    def program(xp, x):
        a = x * 1.0
        flipped = xp.flip(a, -2)
        xp.copyto(flipped, a)
        b = x * 2.0
        xp.negative(b[::-1], out=b[:, ::-1])
        return flipped, a, b

    x0 = np.arange(12.0).reshape(4, 3)
    expected = program(np, x0)
    np.testing.assert_array_equal(expected[0][:, 0], [0.0, 3.0, 6.0, 9.0])   # (NumPy's)
    _same([*program(tnp, tp.tensor(x0))], expected)
    x = tp.input(x0.shape, x0.dtype)
    for got, want in zip(tp.evaluate(list(program(tnp, x)), {x: x0}), expected):
        np.testing.assert_array_equal(got, want)
    weights = [np.random.default_rng(k).normal(size=x0.shape) for k in range(3)]

    def loss(x):
        return sum(tp.sum(w * out) for w, out in zip(weights, program(tnp, x)))
    t = tp.tensor(x0, requires_grad=True)
    loss(t).backward()
    numeric = numerical_gradient(lambda v: float(sum(np.sum(w * out) for w, out in
                                                     zip(weights, program(np, v)))), x0)
    np.testing.assert_allclose(t.grad, numeric, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(tp.grad(loss)(x0), numeric, rtol=1e-7, atol=1e-7)


def test_traced_out_copyto_fill_put_place_match_numpy():
    def program(xp, x):
        t = xp.empty_like(x)
        xp.multiply(x, 2.0, out=t)
        xp.clip(t, 1.0, 5.0, out=t)
        u = t.copy()
        xp.copyto(u, x, where=x > 2.0)
        w = xp.ones_like(x)
        w.fill(4.0)
        xp.put(w, [0, 5], [x[0, 0], -1.0])
        xp.place(w, np.array([[True, False, True], [False, False, True]]), [9.0, x[1, 1]])
        return t, u, w

    x0 = np.arange(6.0).reshape(2, 3) * 0.9
    for g, e in zip(tp.jit(lambda a: program(tnp, a))(x0), program(np, x0)):
        np.testing.assert_array_equal(g, e)


def test_traced_augmented_assignment_writes_in_place_as_numpy():
    """``t += v`` changes ``t`` itself: its other names and its views see it."""
    x = tp.input((2, 3), name="x")
    t = x.copy()
    alias, row = t, t[0]
    t += 1.0
    t *= x
    assert t is alias
    out = tp.compile([alias, row], inputs=[x])(np.ones((2, 3)) * 3.0)
    np.testing.assert_array_equal(out[0], np.full((2, 3), 12.0))
    np.testing.assert_array_equal(out[1], np.full(3, 12.0))


def test_equal_expressions_are_one_node_so_a_write_into_one_is_refused():
    x = tp.input((3,), name="x")
    y, z = x * 2.0, x * 2.0
    assert y is z
    with pytest.raises(UnsupportedError, match=r"x\.copy\(\)"):
        y[0] = 1.0
    y += 1.0                              # no views: Python binds y to the new node
    assert y is not z
    w = z.copy()                          # a copy is a new array: writable
    w[0] = 1.0
    np.testing.assert_array_equal(tp.compile([w, z], inputs=[x])(np.ones(3))[0],
                                  [1.0, 2.0, 2.0])


def test_copies_and_new_arrays_of_a_traced_tensor_are_writable_and_apart():
    x = tp.input((3,), name="x")
    base = x * 3.0
    for copy in (base.copy(), tnp.copy(base), base * 1.0, +base, base.astype(np.float64),
                 tnp.array(base), tnp.zeros_like(base)):
        assert copy is not base
        copy[0] = -1.0
    np.testing.assert_array_equal(tp.compile([base], inputs=[x])(np.ones(3))[0], 3.0)


def test_a_write_inside_a_derivative_rule_is_refused():
    def vjp(params, ct, out, x):
        g = tnp.zeros_like(ct)
        g[0] = 1.0                       # rules see graph nodes: no forwarding there
        return g * ct

    name = "double_with_a_writing_rule"
    double = defvjp(primitive(name, lambda params, x: 2.0 * x, lambda params, x: x), vjp)
    try:
        x = tp.input((3,))
        with pytest.raises(UnsupportedError, match="derivative rule"):
            tp.ad.grad(bind1(double, None, x).sum(), x)
    finally:
        PRIMITIVES.pop(name)             # a test's primitive, not the engine's


def test_a_write_into_an_output_of_a_decomposition_keeps_its_second_derivatives():
    """An output of a multi-output operation (QR's R) written in place: the sweeps still
    find its siblings, so reverse over reverse equals forward over reverse and the eager
    grad of grad; making the same operation again afterwards raises."""
    m0 = np.random.default_rng(5).normal(size=(3, 3)) + 3.0 * np.eye(3)
    w = np.arange(9.0).reshape(3, 3) / 9.0

    def loss(m):
        r = tnp.linalg.qr(m)[1]
        r[0, 0] = 0.5 * r[1, 1]
        r += m
        return (r * r * w).sum()

    def along(m):                          # <grad, w>
        return (tp.grad(loss)(m) * w).sum()

    eager = tp.grad(along)(tp.tensor(m0)).data
    m = tp.input((3, 3))
    g = tp.ad.grad(loss(m), m)
    rr = tp.ad.grad((g * w).sum(), m)
    fr = tp.ad.jvp([g], [m], [w])[0]
    rr_value, fr_value = tp.compile([rr, fr], inputs=[m])(m0)
    np.testing.assert_allclose(rr_value, eager, rtol=1e-10)
    np.testing.assert_allclose(fr_value, eager, rtol=1e-10)
    np.testing.assert_allclose(eager, numerical_gradient(lambda a: float(along(a)), m0),
                               rtol=1e-5, atol=1e-7)
    with pytest.raises(UnsupportedError, match=r"qr.*written in place.*copy"):
        tnp.linalg.qr(m)                    # loss(m) wrote into this qr's r


def test_the_nodes_written_inside_a_traced_run_are_released_when_it_ends():
    """``a[i] = a[i - 1] * 2 + x[i]`` forwards ``a`` to a node built from ``a``: a cycle
    the garbage collector cannot see, ended when the trace returns (no node outlives the
    program); a written tensor leaked out of the run raises when used."""
    from tenpy_ad._compiled import _core

    def recurrence(x):
        a = np.zeros_like(x)
        for i in range(3):
            a[i] = a[i - 1] * 2.0 + x[i]
        return a.sum()

    leaked = []

    def leaking(x):
        t = x.copy()
        t[0] = 1.0
        leaked.append(t)
        return t.sum()

    gc.collect()
    before = _core.intern_table_size()
    for fn in (tp.jit(recurrence), tp.jit(tp.grad(recurrence))):
        np.testing.assert_array_equal(fn(np.ones(4)), 11.0 if fn.fn is recurrence
                                      else [7.0, 3.0, 1.0, 0.0])
        del fn
        gc.collect()
        assert _core.intern_table_size() == before
    assert tp.jit(leaking)(np.ones(3)) == 3.0
    with pytest.raises(UnsupportedError, match="written in place inside a traced function"):
        leaked[0] * 2.0


def test_a_matvec_that_writes_into_its_result_gives_hellmann_feynman():
    """DMRG codes fill the effective Hamiltonian's output in place: eigsh on such a
    LinearOperator, eager and under tp.jit, has the gradient v v^T of its lowest
    eigenvalue (Hellmann-Feynman)."""
    from tenpy_ad.scipy.sparse.linalg import LinearOperator, eigsh
    a = np.random.default_rng(0).normal(size=(6, 6))
    a = a + a.T

    def lowest(h):
        def matvec(v):
            out = np.zeros_like(v)
            out[:3] = h[:3] @ v
            out[3:] += h[3:] @ v
            return out
        return eigsh(LinearOperator((6, 6), matvec=matvec, dtype=np.float64), k=1,
                     which="SA")[0][0]

    values, vectors = np.linalg.eigh(a)
    expected = np.outer(vectors[:, 0], vectors[:, 0])
    np.testing.assert_allclose(lowest(a), values[0], rtol=1e-12)
    for gradient in (tp.grad(lowest), tp.jit(tp.grad(lowest))):
        np.testing.assert_allclose(gradient(a), expected, atol=1e-10)


def test_a_written_value_keeps_its_value_when_its_source_is_written_later():
    """``np.copyto(a, b)`` then ``b[0] = 1``: ``a`` keeps b's old value (a write's value is
    a node of its own); ``np.copyto(t.T, t)`` reads ``t`` before the write, as NumPy's."""
    def program(xp, x):
        a, b = xp.zeros_like(x), x * 2.0
        xp.copyto(a, b)
        b[0, 0] = -1.0
        t = xp.zeros_like(x)
        t[0, 1] = 5.0
        xp.copyto(t.T, t)
        return a, b, t

    x0 = np.arange(9.0).reshape(3, 3)
    for got in (tp.jit(lambda v: program(tnp, v))(x0), program(tnp, tp.tensor(x0))):
        for g, e in zip(got, program(np, x0)):
            np.testing.assert_array_equal(np.asarray(g.data if hasattr(g, "data") else g), e)


def test_a_roll_of_a_zero_d_array_is_an_array_its_views_share():
    """``np.roll`` of a 0-d array is a 0-d array (not a scalar), so ``v1 **= 2`` writes in
    place and the view ``v1[...]`` sees it (the fuzzer's writes mode, seed 104)."""
    def program(xp, x):
        rolled = xp.roll(x, 1)
        view = rolled[...]
        rolled **= 2
        return rolled, view

    x0 = np.array(0.5)
    expected = program(np, x0.copy())
    np.testing.assert_array_equal(expected[1], 0.25)                 # (NumPy's)
    _same(program(tnp, tp.tensor(x0)), expected)
    x = tp.input((), np.float64)
    for got, want in zip(tp.evaluate(list(program(tnp, x)), {x: x0}), expected):
        np.testing.assert_array_equal(got, want)


#: NumPy functions whose result of a 0-d array is a scalar, though ours may take an
#: identity shortcut there (conj of a real, a reduction over no axes, a one-operand einsum)
ZERO_D_SCALARS = {
    "conj": lambda xp, x: xp.conj(x), "positive": lambda xp, x: xp.positive(x),
    "flip": lambda xp, x: xp.flip(x), "sum": lambda xp, x: xp.sum(x),
    "prod": lambda xp, x: xp.prod(x), "max": lambda xp, x: xp.max(x),
    "mean": lambda xp, x: xp.mean(x), "average": lambda xp, x: xp.average(x),
    "var": lambda xp, x: xp.var(x), "einsum": lambda xp, x: xp.einsum("->", x),
    "multiply by one": lambda xp, x: xp.multiply(x, 1), "sum over ()": lambda xp, x:
    xp.sum(xp.sum(x), axis=()),
}


@pytest.mark.parametrize("name", list(ZERO_D_SCALARS))
def test_an_identity_shortcut_of_a_zero_d_array_gives_a_scalar(name):
    """``r = np.sum(a0); alias = r; r += 1`` leaves ``alias`` alone in NumPy (the result of
    a 0-d array is an immutable scalar), ours too, eager and traced, where the result is
    the operand's value taken without an operation."""
    function = ZERO_D_SCALARS[name]

    def program(xp, x):
        result = function(xp, x)
        alias = result
        result += 1.0
        return alias, result, x

    x0 = np.array(0.5)
    expected = program(np, x0.copy())
    assert not isinstance(expected[0], np.ndarray)              # (NumPy's: a scalar)
    _same(program(tnp, tp.tensor(x0)), expected)
    x = tp.input((), np.float64)
    for got, want in zip(tp.evaluate(list(program(tnp, x)), {x: x0}), expected):
        np.testing.assert_array_equal(got, want)


def test_a_reduction_over_no_axes_adds_its_initial_value():
    """``np.sum(a, axis=(), initial=5)`` is ``a + 5`` (it returned a copy of ``a``)."""
    a0 = np.arange(3.0)
    for name, initial in (("sum", 5.0), ("prod", 2.0), ("max", 1.5), ("min", 0.5)):
        want = getattr(np, name)(a0, axis=(), initial=initial)
        got = getattr(tnp, name)(tp.tensor(a0), axis=(), initial=initial)
        np.testing.assert_array_equal(got.data, want)
        traced = tp.jit(lambda a: getattr(tnp, name)(a, axis=(), initial=initial))(a0)
        np.testing.assert_array_equal(np.asarray(traced), want)
    gradient = tp.grad(lambda a: tnp.sum(tnp.prod(a, axis=(), initial=3.0)))(a0)
    np.testing.assert_array_equal(np.asarray(gradient), np.full(3, 3.0))


def test_zero_d_results_are_scalars_as_numpys():
    """``E += term`` on a 0-d result makes a new scalar, as NumPy's immutable scalars do:
    a history of ``E`` keeps every value (eager, traced, jit); views of a scalar are new
    arrays; 0-d arrays (``np.zeros_like(x, shape=())``, ``tp.tensor(1.0)``, a 0-d view,
    ``np.tensordot`` of vectors, as NumPy's) are written in place."""
    def program(xp, x, make_zero):
        energy, history = 0.0, []
        for i in range(3):
            energy += xp.sum(x * (i + 1))
            history.append(energy)
        alias = energy
        energy -= 1.0
        s = xp.sum(x)
        column = xp.reshape(s, (1,))
        column[0] = 7.0
        z = make_zero(x)
        z_alias = z
        z += 1.0
        return (*history, alias, energy, s, column, z_alias)

    x0 = np.arange(3.0)
    expected = [np.asarray(v) for v in program(np, x0, lambda x: np.zeros(()))]
    zero = lambda x: np.zeros_like(x, shape=())              # noqa: E731
    for got in (program(tnp, tp.tensor(x0), zero), tp.jit(lambda a: program(tnp, a, zero))(x0)):
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(np.asarray(g.data if hasattr(g, "data") else g), e)
    d = np.tensordot(tp.tensor(x0), tp.tensor(x0), axes=1)
    d_alias = d
    d += 1.0
    assert float(d_alias) == 6.0
    t = tp.tensor(1.0)
    t += 1.0
    view = tp.tensor(np.ones(2))[0:1].reshape(())
    view[...] = 5.0
    assert float(t) == 2.0 and float(view) == 5.0


# ------------------------------------------------------------------ a view's op= as its base's update

VIEW_UPDATES = [   # (a, b) -> None: NumPy's statements, run on arrays and on tensors
    lambda a, b: a[:, 1].__iadd__(b[0]),
    lambda a, b: a[0].__iadd__(a[1]),                 # the value is another view of a
    lambda a, b: a[1:3].__isub__(b[:2]),
    lambda a, b: a[::2, 1:].__imul__(2.5),            # a Python number
    lambda a, b: a[..., 2].__iadd__(3),               # a Python int into floats
    lambda a, b: a[None, 1].__imul__(b[1:2]),          # broadcast along the view's rows
    lambda a, b: a[1].__iadd__(b),                    # a 2-d value into a row: refused
]


def _run_view_update(k, a, b) -> bool:
    """Whether the statement ran (NumPy's refusals raise tenpy_ad's errors here)."""
    try:
        VIEW_UPDATES[k](a, b)
        return True
    except (ValueError, TypeError):
        return False


@pytest.mark.parametrize("k", range(len(VIEW_UPDATES)))
def test_a_views_augmented_assignment_matches_numpy(k):
    t, a = _pair((3, 4), seed=4)
    u, b = _pair((3, 4), seed=5)
    held_t, held_a = (t[0], t[:, 1], t.T), (a[0], a[:, 1], a.T)
    assert _run_view_update(k, t, u) == _run_view_update(k, a, b)
    _same([t, *held_t], [a, *held_a])


def test_a_views_augmented_assignment_keeps_numpys_dtype_rules():
    for target, value in ((np.float32, np.float64), (np.int64, np.float64),
                          (np.float64, np.complex128), (np.int64, np.int64)):
        a = np.arange(6).reshape(2, 3).astype(target)
        t = tp.tensor(a.copy(), dtype=a.dtype)
        b = (np.arange(3) * 0.37 + 1).astype(value)
        try:
            a[1] += b
            expected = None
        except TypeError:                 # NumPy's UFuncTypeError: same_kind casting
            expected = TypeError
        if expected is None:
            t[1] += tp.tensor(b, dtype=b.dtype)
            np.testing.assert_array_equal(t.data, a)
            assert t.dtype == a.dtype
        else:
            with pytest.raises(Exception):
                t[1] += tp.tensor(b, dtype=b.dtype)


def test_a_views_augmented_assignment_records_one_tape_entry_per_write():
    """``t[:, j] += v`` adds one tape entry to its base, as ``t.at[:, j].add(v)`` does:
    the backward pass sweeps no slice or update of the temporary view (the engine's own
    counters), and the gradients are the functional form's."""
    def swept(write, n):
        x = tp.tensor(np.ones((4, 5)), requires_grad=True)
        v = tp.tensor(np.arange(4.0), requires_grad=True)
        t = x * 1.0
        for j in range(n):
            t = write(t, v, j % 5)
        tp.reset_counters()
        (t * t).sum().backward()
        return tp.counters()["eager_swept"], x.grad.data, v.grad.data

    def in_place(t, v, j):
        t[:, j] += v
        return t

    assert swept(in_place, 10)[0] - swept(in_place, 5)[0] == 5
    inplace, functional = swept(in_place, 7), swept(lambda t, v, j: t.at[:, j].add(v), 7)
    np.testing.assert_array_equal(inplace[1], functional[1])
    np.testing.assert_array_equal(inplace[2], functional[2])


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_a_one_operand_einsum_of_a_0d_array_is_a_new_value(mode):
    """NumPy's ``einsum('->', a)`` of a 0-d ``a`` is a scalar, which a later write into
    ``a`` leaves alone (a relabelling einsum of an array is a view)."""
    def program(a):
        zero_d = a[:1, :1].reshape(())       # a 0-d view of a
        copy, view = np.einsum("->", zero_d), np.einsum("ij->ji", a)
        zero_d[...] = 5.0
        return copy, view, a

    a0 = np.arange(4.0).reshape(2, 2) - 1.5
    fn = program if mode == "eager" else tp.jit(program)
    got = fn(tp.tensor(a0.copy()) if mode == "eager" else a0.copy())
    expected = program(a0.copy())
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(getattr(g, "data", g), e)


def _layout_program(x):
    """Reshapes whose NumPy results are views or copies by the layout of what they
    reshape, then writes through them."""
    y = np.exp(x.T) * 2.0              # NumPy lays y out as x.T (order "K")
    r = y.reshape(-1)                  # a copy unless y is C-ordered
    r[0] = 100.0
    z = x.reshape(-1)                  # a copy unless x is C-ordered
    z[1] = -7.0
    w = (x + 1.0).T.reshape(-1)        # a view of x + 1 exactly where that is F-ordered
    w[2] = 9.0
    return y, r, x, w


@pytest.mark.parametrize("order", ["C", "F"])
def test_traced_reshapes_follow_the_layouts_numpy_gives_results_and_inputs(order):
    x0 = np.asarray(np.arange(6.0).reshape(2, 3) / 10, order=order)
    expected = _layout_program(x0.copy(order="K"))
    got = tp.jit(_layout_program)(x0.copy(order="K"))
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    eager = _layout_program(tp.tensor(x0.copy(order="K")))
    for g, e in zip(eager, expected):
        np.testing.assert_array_equal(g.data, e)


def test_the_nodes_written_in_a_graph_built_by_hand_are_released_when_dropped():
    """Outside any traced function ``a[i] = a[i - 1] * 2 + x[i]`` makes the same cycle;
    once nothing but its own written values holds ``a``, a full collection (or enough
    later writes) releases it, while a written node still held keeps its value."""
    import weakref
    from tenpy_ad._compiled import _core

    def build():
        x = tp.input((4,), name="x")
        a = np.zeros_like(x)
        for i in range(3):
            a[i] = a[i - 1] * 2.0 + x[i]
        value = tp.compile([a.sum()], inputs=[x])(np.ones(4))[0]
        return value, weakref.ref(a)

    gc.collect()
    before = _core.intern_table_size()
    value, written = build()
    assert value == 11.0
    x = tp.input((3,), name="x")
    held = x * 1.0
    held[0] = 5.0
    gc.collect()
    assert written() is None                       # released, with its whole graph
    np.testing.assert_array_equal(tp.compile([held], inputs=[x])(np.arange(3.0))[0],
                                  [5.0, 1.0, 2.0])
    gc.disable()                                   # the writes' own sweeps alone
    try:
        for _ in range(3000):                      # each interns three nodes or more
            y = tp.input((2,))
            c = y.copy()
            c[1] = c[0] * 3.0
        assert _core.intern_table_size() - before < 2000
    finally:
        gc.enable()
    del x, held, y, c
    gc.collect()
    assert _core.intern_table_size() == before


def test_a_jitted_function_traces_per_layout_only_when_it_writes():
    """Layouts can show only through writes: a function without any traces once for
    C- and F-ordered inputs alike, one with writes once per layout."""
    x0 = np.arange(6.0).reshape(2, 3)
    reader = tp.jit(lambda x: (np.exp(x.T) * 2.0).reshape(-1).sum())
    writer = tp.jit(_layout_program)
    for x in (x0, np.asfortranarray(x0), x0.copy()):
        reader(x)
        writer(x.copy(order="K"))
    assert reader.trace_count == 1 and writer.trace_count == 2

"""The differential checker on in-place writes and views (write programs: seeds
``(s, i, 1)`` of ``tests/program_fuzz.py``): hand-written programs in every mode and
route, how the checker sorts the errors of the write machinery, and the failures the
fuzzer found that are not fixed yet (``xfail(strict=True)``: each passes once fixed, and
the generator's comment marked KNOWN FAILURE naming the test can then go)."""
import numpy as np
import pytest

import tenpy_ad as tp
from differential import Failure, Raised, _attempt, check_source
from program_fuzz import Program, draw_program

_RNG = np.random.default_rng(11)
_X = _RNG.standard_normal((3, 3))
_Y = _RNG.standard_normal((3, 3))


def _check(source: str, **inputs) -> list:
    return check_source(source, inputs, writes=True)


# ------------------------------------------------------------------ the checker

def test_a_write_program_is_checked_against_finite_differences_at_both_orders():
    checked = _check("""
def program(xp, sp, lx, x, y):
    t = x.copy()
    row, tt = t[1, ::-1], t.T
    t[0] = y[0]
    row *= y[2]
    tt[:, 1] += xp.sin(y[1])
    xp.multiply(t, y, out=t)
    return (t, row, tt * x)
""", x=_X, y=_Y)
    assert {"forward", "gradients", "jvp", "hvp", "fd directional derivative",
            "fd Hessian-vector product"} <= set(checked)


def _program() -> Program:
    return Program.from_source("def program(xp, sp, lx, x):\n    return (x,)\n",
                               {"x": _X}, writes=True)


def _traced_write_into_a_shared_node():
    def f(x):
        y, z = x * 2.0, x * 2.0          # one node: the write would change both
        y[0] = 1.0
        return y + z
    return tp.jit(f)(_X)


def test_a_traced_route_may_refuse_a_write_into_a_shared_node():
    result = _attempt("jit", _program(), _traced_write_into_a_shared_node)
    assert isinstance(result, Raised) and "also the value of another" in str(result.error)


def test_an_eager_route_may_not_refuse_a_write():
    with pytest.raises(Failure, match="eager tensors support every write"):
        _attempt("eager", _program(), _traced_write_into_a_shared_node, eager=True)


def test_a_traced_route_may_not_raise_another_error_of_the_writes():
    def write_into_a_leaf():
        x = tp.tensor(_X, requires_grad=True)
        x[0] = 1.0
    with pytest.raises(Failure, match="only the refusal of a write into a shared node"):
        _attempt("jit", _program(), write_into_a_leaf)


def test_write_programs_leave_the_other_programs_as_they_were():
    program = draw_program((0, 3, 1))
    assert program.writes and "writes" in program.families()
    assert not draw_program((0, 3)).writes


def test_pruning_keeps_the_writes_into_a_needed_value_and_its_views():
    program = draw_program((2, 7, 1))
    for name in program.results():
        pruned = program.pruned([name])
        kept = {line.code() for line in pruned.lines}
        for line in program.lines:
            if line.writes is not None and name in line.writes and \
                    program.lines.index(line) > _defined_at(program, name):
                assert line.code() in kept


def _defined_at(program: Program, name: str) -> int:
    return next(i for i, line in enumerate(program.lines) if line.target == name)


# ------------------------------------------------------------------ fixed

def test_copyto_from_a_leaf_keeps_its_gradient():
    # np.copyto(t, x) and np.positive(x, out=t) rebound t to the leaf x itself: t became
    # a second leaf, the gradient of its uses stopped at t (x.grad None), and a later
    # write into t raised TapeError
    for write in (lambda t, x: np.copyto(t, x), lambda t, x: np.positive(x, out=t)):
        x = tp.tensor(_X, requires_grad=True)
        t = tp.tensor(np.zeros((3, 3)))
        write(t, x)
        t *= 2.0
        tp.sum(t * t).backward()
        assert not t.is_leaf
        np.testing.assert_allclose(x.grad.numpy(), 8.0 * _X, rtol=1e-14)
    _check("""
def program(xp, sp, lx, x, y):
    t = xp.sin(x)
    xp.copyto(t, y)
    u = t * x
    t -= x
    return (t, u)
""", x=_X, y=_Y)


# ------------------------------------------------------------------ known failures

def test_full_integer_index_is_a_copy():
    _check("""
def program(xp, sp, lx, x):
    t = x.copy()
    s = t[0, 1]
    t[...] = 5.0
    return (s, t)
""", x=_X)


def test_identity_shortcut_of_a_leaf_is_writable():
    _check("""
def program(xp, sp, lx, x):
    t = xp.positive(x)
    t[0] = 2.0
    return (t,)
""", x=_X)


def test_advanced_index_write_into_a_transposed_layout():
    t = tp.tensor(np.asfortranarray(_X))
    np.testing.assert_array_equal(t.at[[0, 2]].set(0.0).numpy()[[0, 2]], 0.0)
    _check("""
def program(xp, sp, lx, x, y):
    t = x.copy()
    tt = t.T
    tt[[0, 2]] = y[0]
    tt[np.array([True, False, True])] *= y[1]
    return (t,)
""", x=_X, y=_Y)


def test_traced_augmented_assignment_of_a_view():
    _check("""
def program(xp, sp, lx, x, y):
    t = x.copy()
    tt = t.T
    t += y
    row = t[0]
    row *= 2.0
    return (tt, t)
""", x=_X, y=_Y)


def test_zeros_like_keeps_the_layout():
    _check("""
def program(xp, sp, lx, x):
    t = xp.zeros_like(x.T)
    flat = t.reshape(-1)
    t[0] = x[1]
    return (flat, t)
""", x=_X)


def test_copy_method_is_c_ordered():
    _check("""
def program(xp, sp, lx, x):
    t = x.T.copy()
    u = xp.copy(x[::-1])
    flat, uflat = t.reshape(-1), u.reshape(-1)
    t[0] = x[1]
    u[1] = x[0]
    return (flat, uflat)
""", x=_X)


def test_trivial_roll_and_empty_axis_max_are_copies():
    _check("""
def program(xp, sp, lx, x, y):
    t = x.copy()
    r = xp.roll(t[0], 3)
    m = xp.max(t, axis=())
    r[...] = y[0]
    m[1] = y[1]
    return (t, r, m)
""", x=_X, y=_Y)


def test_einsum_relabeling_is_a_view():
    _check("""
def program(xp, sp, lx, x, y):
    t = x.copy()
    e = xp.einsum('ab->ba', t)
    t[0] = y[0]
    return (e,)
""", x=_X, y=_Y)


def test_a_view_of_a_scalar_is_a_copy():
    _check("""
def program(xp, sp, lx, x, y):
    s = xp.sum(x)
    m = xp.reshape(s, (1, 1))
    m[...] *= y[0, 0]
    return (s, m)
""", x=_X, y=_Y)


def test_result_layouts_are_numpys():
    _check("""
def program(xp, sp, lx, x, y):
    k = xp.copy(xp.kron(xp.eye(2), xp.reshape(x[0, :2], (2, 1, 1))))
    e = xp.einsum('ab,cb->ca', x, y)
    kflat, eflat = k.reshape(-1), e.reshape(-1)
    xp.negative(y[0], out=kflat[1:4])
    xp.sin(y[1], out=eflat[:3])
    return (k, e)
""", x=_X, y=_Y)

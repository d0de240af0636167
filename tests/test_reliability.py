"""Reliability: depth, memory, threads, fuzzed bad input, ``tp.debug_nans``, key semantics
and saved programs (DESIGN.md §3, invariants 1-5; §4 public API).

* depth      a 10^6-deep traced chain is built, differentiated, compiled, run and freed
             (in a subprocess, so that a crash is reported as a failure instead of killing
             the test session); the same for a 10^6-deep eager tape (tracemalloc);
* memory     1000 rounds of build + grad + compile + run + drop keep the interner, the
             metadata table and tracemalloc flat;
* threads    four threads interning the same expressions get the very same nodes; eager
             backwards in threads equal a serial run;
* fuzz       random op sequences (hypothesis) either raise a TenpyAdError (ShapeErrors name
             the op) or evaluate to exactly what NumPy computes (values and dtype), traced
             and eager;
* debug_nans the first non-finite value is reported with the primitive's name;
* keys       random DAGs merge iff a naive recursive structural comparison says equal;
             constants are keyed by dtype and bit pattern;
* save/load  programs round-trip; loaded graphs compare structurally in linear time;
             corrupt files raise SaveFormatError and nothing is ever unpickled.

The hypothesis tests are derandomized (reproducible) and keep no example database.
"""
from __future__ import annotations

import copy
import gc
import io
import json
import math
import operator
import os
import pathlib
import struct
import subprocess
import sys
import textwrap
import threading
import tracemalloc
import warnings
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

import tenpy_ad as tp
from tenpy_ad._compiled import _core
from tenpy_ad.errors import NonFiniteError, SaveFormatError, ShapeError, TenpyAdError

TracedTensor = _core.TracedTensor
Tensor = _core.Tensor

FUZZ = dict(deadline=None, derandomize=True, database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                   HealthCheck.filter_too_much])
# the op-sequence fuzzers print the whole op sequence on failure; shrinking it would cost
# tens of seconds per failing family, more than this file's time budget allows
NO_SHRINK = dict(FUZZ, phases=(Phase.explicit, Phase.generate))


def _sizes() -> tuple:
    return _core.table_size(), _core.intern_table_size()


# ====================================================================== 1. depth

DEPTH = 10**6

_TRACED_DEEP = textwrap.dedent("""
    import gc, json, sys
    import numpy as np
    import tenpy_ad as tp
    from tenpy_ad._compiled import _core

    depth = int(sys.argv[1])
    def stage(name):
        print("stage", name, flush=True)

    gc.collect()
    before = [_core.table_size(), _core.intern_table_size()]
    x = tp.input((2,), name="x")
    y = x
    for _ in range(depth):
        y = tp.sin(y)
    stage("built")
    loss = y.sum()
    g = tp.ad.grad(loss, x)
    stage("differentiated")
    program = tp.compile([loss, g], inputs=[x])
    n_nodes = program.n_nodes
    stage("compiled")
    value, grad = program(np.array([0.3, 1.2]))
    stage("ran")
    del program
    stage("freed the program")
    del g
    stage("freed the gradient graph")
    del loss
    stage("freed the loss")
    del y
    stage("freed the chain")
    del x
    gc.collect()
    after = [_core.table_size(), _core.intern_table_size()]
    print("RESULT " + json.dumps({"value": float(value), "grad": [float(v) for v in grad],
                                  "n_nodes": n_nodes, "before": before, "after": after}),
          flush=True)
""")

_FORWARD_DEEP = textwrap.dedent("""
    import gc, json, sys
    import tenpy_ad as tp
    from tenpy_ad._compiled import _core

    depth = int(sys.argv[1])
    gc.collect()
    before = [_core.table_size(), _core.intern_table_size()]
    x = tp.input((2,), name="x")
    y = x
    for _ in range(depth):
        y = y * 0.999
    print("stage built", flush=True)
    del y                         # only the chain goes; the placeholder stays alive
    print("stage freed the chain", flush=True)
    del x
    gc.collect()
    print("RESULT " + json.dumps({"before": before,
                                  "after": [_core.table_size(), _core.intern_table_size()]}),
          flush=True)
""")

_EAGER_DEEP = textwrap.dedent("""
    import gc, json, sys, tracemalloc
    import numpy as np
    import tenpy_ad as tp

    depth = int(sys.argv[1])
    def stage(name):
        print("stage", name, flush=True)

    gc.collect()
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    b = tp.tensor(np.array([0.3, 1.2]), requires_grad=True)
    y = b
    for _ in range(depth):
        y = tp.sin(y)
    loss = y.sum()
    held = tracemalloc.get_traced_memory()[0] - start
    stage("forward")
    loss.backward()
    stage("backward")
    grad = [float(v) for v in np.asarray(b.grad.numpy())]
    value = float(loss.item())
    del loss, y, b
    gc.collect()
    end = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    stage("freed")
    # a tape that is dropped without a backward pass
    c = tp.tensor(np.array([0.3, 1.2]), requires_grad=True)
    z = c
    for _ in range(depth):
        z = tp.sin(z)
    del z, c
    gc.collect()
    stage("freed an unused tape")
    print("RESULT " + json.dumps({"value": value, "grad": grad, "held": held, "end": end}),
          flush=True)
""")


class _DeepRun:
    """A depth script started in its own interpreter (all of them at once: the machine
    has two cores and the traced run dominates)."""

    def __init__(self, script: str):
        env = dict(os.environ, PYTHONFAULTHANDLER="1")
        self.proc = subprocess.Popen([sys.executable, "-c", script, str(DEPTH)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env)
        self._done = None

    def result(self) -> dict:
        if self._done is None:
            out, err = self.proc.communicate(timeout=900)
            self._done = (self.proc.returncode, out, err)
        code, out, err = self._done
        stages = [line[6:] for line in out.splitlines() if line.startswith("stage ")]
        results = [line[7:] for line in out.splitlines() if line.startswith("RESULT ")]
        assert code == 0 and results, (
            f"the depth-{DEPTH} run died (exit code {code}) after stage "
            f"{stages[-1] if stages else '(none)'!r}; stderr:\n{err[-3000:]}")
        return json.loads(results[0])

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def _depth_tests_selected(session) -> bool:
    return any(item.name.startswith("test_deep_") and item.path == pathlib.Path(__file__)
               for item in session.items)


@pytest.fixture(scope="module", autouse=True)
def deep_runs(request):
    """Starts the depth runs with the module's first test when any depth test is selected,
    so that they run on the second core while the other tests run here; the depth tests
    come last in this file and collect the results."""
    if not _depth_tests_selected(request.session):
        yield None
        return
    runs = {"traced": _DeepRun(_TRACED_DEEP), "eager": _DeepRun(_EAGER_DEEP),
            "forward": _DeepRun(_FORWARD_DEEP)}
    yield runs
    for run in runs.values():
        run.kill()


# ====================================================================== 2. memory

_X = np.array([[0.5, 0.1, -0.2], [0.3, 0.9, 0.05], [-0.4, 0.2, 0.7]])
_W = np.array([0.2, -0.1, 0.4])


def _memory_round(x, w):
    """~25 ops incl. matmul, svd, slicing and einsum; gradient; compile; run; drop."""
    y = x @ x.T + w
    y = tp.tanh(y) * 0.9 + x
    u, s, vt = tp.linalg.svd(y)
    z = (u * s) @ vt
    z = tp.exp(-(z * z)) + tp.sin(z)[::-1, :]
    loss = (z.sum(axis=0) * w).sum() + s.sum() + tp.einsum("ij,ji->", z, x)
    grads = tp.ad.grad(loss, [x, w])
    program = tp.compile([loss] + grads, inputs=[x, w])
    value, gx, gw = program(_X, _W)
    return float(value), float(gx.sum() + gw.sum()), program.n_nodes


def test_thousand_rounds_of_build_grad_compile_run_drop_stay_flat():
    x, w = tp.input((3, 3), name="x"), tp.input((3,), name="w")
    first = _memory_round(x, w)
    assert first[2] > 40                     # the round is a real graph
    for _ in range(20):
        _memory_round(x, w)                 # warm caches (plans, promotion tables)
    gc.collect()
    start = _sizes()
    tracemalloc.start()
    try:
        for i in range(1, 1001):
            assert _memory_round(x, w) == first
            if i == 100:
                gc.collect()
                mem_100, sizes_100 = tracemalloc.get_traced_memory()[0], _sizes()
        gc.collect()
        mem_1000, sizes_1000 = tracemalloc.get_traced_memory()[0], _sizes()
    finally:
        tracemalloc.stop()
    assert sizes_100 == start and sizes_1000 == start
    assert mem_1000 - mem_100 < 64 * 1024, f"grew by {mem_1000 - mem_100} bytes"


# ====================================================================== 3. threads

def _shared_expressions(x, y):
    out = []
    a = x
    for i in range(12):
        a = tp.exp(a @ y * 0.1) + x + np.float64(1.5)
        b = tp.sin(a.sum(axis=0)) * np.array([1.0, 2.0, 3.0]) - float(i)
        out += [a, b, tp.exp(x @ y).sum(), x + np.float64(1.5)]
    u, s, vt = tp.linalg.svd(a)
    loss = b.sum() + s.sum()
    out += [u, s, vt, loss]
    if type(x) is TracedTensor:
        out += tp.ad.grad(loss, [x, y])
    return out


def _shared_reference(xv, yv):
    a = xv
    for i in range(12):
        a = np.exp(a @ yv * 0.1) + xv + 1.5
        b = np.sin(a.sum(axis=0)) * np.array([1.0, 2.0, 3.0]) - float(i)
    return a, b, np.linalg.svd(a, compute_uv=False)


def _run_threads(target, n=4):
    errors, barrier = [], threading.Barrier(n)

    def run(k):
        try:
            barrier.wait()
            target(k)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append((k, error))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)         # switch threads as often as possible
    try:
        threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors


def test_threads_building_the_same_expressions_get_the_same_nodes():
    x, y = tp.input((3, 3), name="x"), tp.input((3, 3), name="y")
    per_thread = [None] * 4

    def work(k):
        mine = None
        for _ in range(25):
            nodes = _shared_expressions(x, y)
            if mine is None:
                mine = nodes
            assert all(a is b for a, b in zip(nodes, mine))
        per_thread[k] = mine

    _run_threads(work)
    reference = per_thread[0]
    for nodes in per_thread[1:]:
        assert len(nodes) == len(reference)
        for i, (a, b) in enumerate(zip(nodes, reference)):
            assert a is b, f"expression {i} was interned twice: {a!r} vs {b!r}"
    rng = np.random.default_rng(7)
    xv, yv = rng.normal(size=(3, 3)) * 0.3, rng.normal(size=(3, 3)) * 0.3
    a, b, s = _shared_reference(xv, yv)
    values = tp.compile(reference, inputs=[x, y])(xv, yv)
    np.testing.assert_allclose(values[44], a, rtol=1e-12)      # the last a and b
    np.testing.assert_allclose(values[45], b, rtol=1e-12)
    np.testing.assert_allclose(values[-5], s, rtol=1e-10)
    np.testing.assert_allclose(values[-6] * values[-5] @ values[-4], a, rtol=1e-10)
    np.testing.assert_allclose(values[2], np.exp(xv @ yv).sum(), rtol=1e-12)
    np.testing.assert_allclose(values[3], xv + 1.5)
    # the gradient agrees with an eager evaluation of the same function
    xe, ye = tp.tensor(xv, requires_grad=True), tp.tensor(yv, requires_grad=True)
    eager = _shared_expressions(xe, ye)[-1]
    eager.backward()
    np.testing.assert_allclose(values[-2], xe.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(values[-1], ye.grad.numpy(), rtol=1e-10)


def _eager_work(seed: int):
    rng = np.random.default_rng(seed)
    a = tp.tensor(rng.normal(size=(4, 4)), requires_grad=True)
    b = tp.tensor(rng.normal(size=(4, 4)), requires_grad=True)
    c = a
    for _ in range(20):
        c = tp.tanh(c @ b) * 0.5 + a
    loss = (c * c).sum() + tp.linalg.svd(c)[1].sum()
    loss.backward()
    return loss.item(), a.grad.numpy(), b.grad.numpy()


def test_eager_backwards_in_threads_match_a_serial_run():
    serial = [_eager_work(seed) for seed in range(4)]
    results = [[] for _ in range(4)]

    def work(k):
        for _ in range(15):
            if k == 3:      # no_grad is per thread: the others keep recording
                with tp.no_grad():
                    t = tp.tensor(np.ones(3), requires_grad=True) * 2.0
                assert not t.requires_grad
            results[k].append(_eager_work(k))

    _run_threads(work)
    for k in range(4):
        assert len(results[k]) == 15
        for value, ga, gb in results[k]:
            np.testing.assert_allclose(value, serial[k][0], rtol=1e-12)
            np.testing.assert_allclose(ga, serial[k][1], rtol=1e-11, atol=1e-13)
            np.testing.assert_allclose(gb, serial[k][2], rtol=1e-11, atol=1e-13)


# ====================================================================== 4. fuzzed bad input

_IN_DTYPES = ("float32", "float64", "complex128")
_ARRAY_DTYPES = ("float64", "float32", "complex128", "int64", "int32", "bool")
_SPECIALS = (np.nan, np.inf, -np.inf, 0.0, -0.0)
_ASTYPE = ("float32", "float64", "complex64", "complex128", "int32", "int64", "bool",
           "float16", np.float32, "not-a-dtype")
_UNARY = {
    "sin": (tp.sin, np.sin), "cos": (tp.cos, np.cos), "exp": (tp.exp, np.exp),
    "log": (tp.log, np.log), "sqrt": (tp.sqrt, np.sqrt), "tanh": (tp.tanh, np.tanh),
    "abs": (tp.abs, np.abs), "negative": (operator.neg, operator.neg),
    "conj": (tp.conj, np.conj), "real": (tp.real, np.real), "imag": (tp.imag, np.imag),
    "sign": (tp.sign, np.sign),
}
_BINARY = {
    "add": (operator.add, tp.add, np.add),
    "subtract": (operator.sub, tp.subtract, np.subtract),
    "multiply": (operator.mul, tp.multiply, np.multiply),
    "divide": (operator.truediv, tp.divide, np.divide),
    "matmul": (operator.matmul, tp.matmul, np.matmul),
}
# a ShapeError must name the operation (the surface name; the primitive's is also fine)
_OP_WORDS = {
    "add": ("add",), "subtract": ("subtract", "sub"), "multiply": ("multiply", "mul", "scale"),
    "divide": ("divide", "div"), "matmul": ("matmul",), "einsum": ("einsum",),
    "reshape": ("reshape",), "transpose": ("transpose",), "sum": ("sum",),
    "amax": ("amax", "max"), "getitem": ("getitem", "index", "slice"),
    "broadcast_to": ("broadcast",), "power": ("power", "pow"), "astype": ("astype", "convert"),
}
_FAMILIES = {   # each family also mixes in elementwise ops, so values flow between kinds
    "elementwise": ("unary", "binary", "binary", "power", "astype"),
    "structural": ("reshape", "transpose", "sum", "broadcast_to", "unary", "binary"),
    "indexing": ("getitem", "getitem", "unary", "binary"),
    "contraction": ("matmul", "einsum", "einsum", "unary", "binary"),
    "mixed": ("unary", "binary", "matmul", "reshape", "transpose", "sum", "getitem",
              "einsum", "astype", "power", "broadcast_to"),
}


def _element_strategy(specials: bool):
    finite = st.floats(-3, 3, allow_subnormal=False)
    if not specials:
        return finite
    return st.one_of(finite, finite, st.sampled_from(_SPECIALS))


class _Fuzz:
    """Draws a random op sequence, applying each op to tenpy_ad values (traced or eager)
    and to the NumPy arrays they stand for, side by side."""

    def __init__(self, data, mode: str, kinds: tuple):
        self.data, self.mode, self.kinds = data, mode, kinds
        self.lib, self.ref, self.log = [], [], []
        self.feed = {}
        self.n_inputs = 0

    def draw(self, strategy, label=None):
        return self.data.draw(strategy, label=label)

    def history(self) -> str:
        return "op sequence:\n  " + "\n  ".join(self.log)

    # ---------------------------------------------------------------- values

    def shape(self) -> tuple:
        zero = self.draw(st.integers(0, 9), label="allow a zero dim") == 0
        dim = st.integers(0 if zero else 1, 3)
        return tuple(self.draw(st.lists(dim, max_size=3), label="shape"))

    def related_shape(self, base: tuple) -> tuple:
        how = self.draw(st.sampled_from(("same", "suffix", "ones", "random")), label="shape")
        if how == "same":
            return base
        if how == "suffix":
            return base[self.draw(st.integers(0, len(base)), label="suffix"):]
        if how == "ones":
            mask = self.draw(st.lists(st.booleans(), min_size=len(base), max_size=len(base)))
            return tuple(1 if m else d for m, d in zip(mask, base))
        return self.shape()

    def array(self, shape: tuple, dtype: str) -> np.ndarray:
        n = math.prod(shape)
        specials = self.draw(st.booleans(), label="with NaN/Inf/±0")
        elements = _element_strategy(specials)
        re = self.draw(st.lists(elements, min_size=n, max_size=n), label="values")
        if np.dtype(dtype).kind == "c":
            im = self.draw(st.lists(elements, min_size=n, max_size=n), label="imag")
            values = np.empty(n, dtype=np.complex128)
            values.real, values.imag = re, im            # (no inf * 1j = nan + inf j)
        else:
            values = np.array(re, dtype=np.float64)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return values.reshape(shape).astype(dtype)

    def add_input(self):
        shape = self.shape()
        dtype = self.draw(st.sampled_from(_IN_DTYPES), label="dtype")
        array = self.array(shape, dtype)
        k = len(self.lib)
        if self.mode == "traced":
            value = tp.input(shape, dtype, name=f"v{k}")
            self.feed[value] = array
        else:
            value = tp.tensor(array, requires_grad=self.draw(st.booleans(), label="grad"))
        self.lib.append(value)
        self.ref.append(array)
        self.n_inputs += 1
        text = np.array2string(array, separator=", ", threshold=100).replace("\n", "")
        self.log.append(f"v{k} = input {dtype}{list(shape)} = {text}")

    def pick(self) -> int:
        return self.draw(st.integers(0, len(self.lib) - 1), label="operand")

    def ndarray(self, base: tuple):
        shape = self.related_shape(base)
        dtype = self.draw(st.sampled_from(_ARRAY_DTYPES), label="array dtype")
        a = self.array(shape, dtype)
        return a, a, f"ndarray {dtype}{list(shape)}"

    def operand(self, base: tuple):
        """(library operand, NumPy operand, description): a value, an ndarray or a scalar."""
        kind = self.draw(st.sampled_from(("value", "array", "python", "numpy")), label="kind")
        if kind == "value":
            j = self.pick()
            return self.lib[j], self.ref[j], f"v{j}"
        if kind == "array":
            return self.ndarray(base)
        number = self.draw(st.one_of(
            st.floats(-3, 3, allow_subnormal=False), st.integers(-3, 3), st.booleans(),
            st.sampled_from(_SPECIALS),
            st.builds(complex, st.floats(-3, 3), st.floats(-3, 3))), label="scalar")
        if kind == "numpy" and not isinstance(number, bool):
            cast = self.draw(st.sampled_from((np.float64, np.float32, np.complex128)))
            if isinstance(number, complex) and cast is not np.complex128:
                number = number.real
            number = cast(number)
        return number, number, repr(number)

    # ---------------------------------------------------------------- applying an op

    def apply(self, name: str, text: str, lib_call, ref_call, supported: bool = True):
        """Run one op both ways.  ``supported``: the library documents this case, so it
        must accept whatever NumPy accepts (einsum's stricter letter sizes, amax of complex
        values, int/bool targets of astype and array exponents are documented refusals)."""
        self.log.append(text)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                want, ref_error = np.asarray(ref_call()), None
            except Exception as error:  # noqa: BLE001 - NumPy's verdict
                want, ref_error = None, error
            try:
                got = lib_call()
            except TenpyAdError as error:
                self.log.append(f"    -> {type(error).__name__}: {error}")
                if supported and ref_error is None:
                    raise AssertionError(
                        f"{name} refused what NumPy computes: {type(error).__name__}: "
                        f"{error}\n" + self.history()) from error
                if isinstance(error, ShapeError):
                    words = _OP_WORDS.get(name, (name,))
                    assert any(w in str(error).lower() for w in words), (
                        f"ShapeError from {name} does not name the op: {error}\n"
                        + self.history())
                return
            except Exception as error:  # noqa: BLE001 - the point of the test
                raise AssertionError(
                    f"{name} raised {type(error).__name__} (not a TenpyAdError): {error}\n"
                    + self.history()) from error
        if ref_error is not None:
            raise AssertionError(f"{name} was accepted, but NumPy raises "
                                 f"{type(ref_error).__name__}: {ref_error}\n" + self.history())
        kind = TracedTensor if self.mode == "traced" else Tensor
        assert type(got) is kind, f"{name} returned {type(got).__name__}\n" + self.history()
        assert tuple(got.shape) == want.shape and got.dtype == want.dtype, (
            f"{name}: built {got.dtype}{list(got.shape)}, NumPy gives "
            f"{want.dtype}{list(want.shape)}\n" + self.history())
        self.log[-1] = f"v{len(self.lib)} = {text}"
        self.lib.append(got)
        self.ref.append(want)

    def step(self):
        kind = self.draw(st.sampled_from(self.kinds), label="op")
        i = self.pick()
        x, xr = self.lib[i], self.ref[i]
        shape = xr.shape
        if kind == "unary":
            name = self.draw(st.sampled_from(sorted(_UNARY)), label="unary")
            f, g = _UNARY[name]
            self.apply(name, f"{name}(v{i})", lambda: f(x), lambda: g(xr))
        elif kind in ("binary", "matmul"):
            name = "matmul" if kind == "matmul" else self.draw(
                st.sampled_from(("add", "subtract", "multiply", "divide")), label="binary")
            op, f, g = _BINARY[name]
            other, other_ref, text = self.operand(shape)
            a, ar, b, br, ta, tb = x, xr, other, other_ref, f"v{i}", text
            if self.draw(st.booleans(), label="swap"):
                a, ar, b, br, ta, tb = b, br, a, ar, tb, ta
            if not any(type(v) in (TracedTensor, Tensor) for v in (a, b)):
                return
            if self.draw(st.booleans(), label="operator form"):
                self.apply(name, f"{ta} {name} {tb}", lambda: op(a, b), lambda: op(ar, br))
            else:
                self.apply(name, f"{name}({ta}, {tb})", lambda: f(a, b), lambda: g(ar, br))
        elif kind == "reshape":
            size = math.prod(shape)
            how = self.draw(st.sampled_from(("flat", "minus1", "random")), label="reshape")
            if how == "flat":
                target = (size,)
            elif how == "minus1":
                target = (-1,) + tuple(self.draw(st.lists(st.integers(1, 3), max_size=2)))
            else:
                target = tuple(self.draw(st.lists(st.integers(-1, 6), max_size=3)))
            self.apply("reshape", f"reshape(v{i}, {target})", lambda: tp.reshape(x, target),
                       lambda: np.reshape(xr, target))
        elif kind == "transpose":
            n = len(shape)
            how = self.draw(st.sampled_from(("none", "perm", "negative", "random")))
            if how == "none":
                axes = None
            elif how in ("perm", "negative"):
                axes = self.draw(st.permutations(range(n)), label="perm")
                if how == "negative":
                    axes = [a - n for a in axes]
            else:
                axes = self.draw(st.lists(st.integers(-3, 3), max_size=3), label="axes")
            self.apply("transpose", f"transpose(v{i}, {axes})",
                       lambda: tp.transpose(x, axes), lambda: np.transpose(xr, axes))
        elif kind == "sum":
            name = self.draw(st.sampled_from(("sum", "sum", "amax")))
            axis = self.draw(st.one_of(st.none(), st.integers(-3, 3),
                                       st.lists(st.integers(-3, 3), max_size=3).map(tuple)),
                             label="axis")
            keepdims = self.draw(st.booleans(), label="keepdims")
            f, g = (tp.sum, np.sum) if name == "sum" else (tp.amax, np.max)
            self.apply(name, f"{name}(v{i}, axis={axis}, keepdims={keepdims})",
                       lambda: f(x, axis=axis, keepdims=keepdims),
                       lambda: g(xr, axis=axis, keepdims=keepdims),
                       # (NumPy's legacy acceptance of axis 0/-1 on 0-d arrays aside)
                       supported=(name == "sum" or xr.dtype.kind != "c")
                       and (xr.ndim > 0 or axis in (None, ())))
        elif kind == "getitem":
            small = st.integers(-4, 4)
            item = st.one_of(
                small, small,
                st.builds(slice, st.none() | small, st.none() | small,
                          st.none() | st.integers(-3, 3)),
                st.just(None), st.just(Ellipsis))
            index = self.draw(st.one_of(item, st.lists(item, max_size=4).map(tuple)),
                              label="index")
            self.apply("getitem", f"v{i}[{index!r}]", lambda: x[index], lambda: xr[index])
        elif kind == "einsum":
            operands = [(x, xr, f"v{i}")]
            if self.draw(st.booleans(), label="two operands"):
                if self.draw(st.booleans(), label="second operand is a value"):
                    j = self.pick()
                    operands.append((self.lib[j], self.ref[j], f"v{j}"))
                else:
                    operands.append(self.ndarray(shape))
            terms = []
            for _, r, _ in operands:
                n = self.draw(st.one_of(st.just(r.ndim), st.integers(0, 3)), label="letters")
                term = "".join(self.draw(st.lists(st.sampled_from("ijk"), min_size=n,
                                                  max_size=n)))
                if self.draw(st.integers(0, 5), label="ellipsis") == 0:
                    term = "..." + term[1:]
                terms.append(term)
            subscripts = ",".join(terms)
            if self.draw(st.booleans(), label="explicit output"):
                subscripts += "->" + "".join(self.draw(
                    st.lists(st.sampled_from("ijkl"), max_size=3), label="output"))
            libs = [o[0] for o in operands]
            refs = [o[1] for o in operands]
            text = f"einsum({subscripts!r}, {', '.join(o[2] for o in operands)})"
            self.apply("einsum", text, lambda: tp.einsum(subscripts, *libs),
                       lambda: np.einsum(subscripts, *refs), supported=False)
        elif kind == "astype":
            dtype = self.draw(st.sampled_from(_ASTYPE), label="dtype")
            supported = dtype in ("float32", "float64", "complex64", "complex128") and not (
                xr.dtype.kind == "c" and dtype in ("float32", "float64"))
            self.apply("astype", f"astype(v{i}, {dtype!r})", lambda: tp.astype(x, dtype),
                       lambda: xr.astype(dtype), supported=supported)
        elif kind == "power":
            p = self.draw(st.sampled_from((2, 3, 0.5, -1, 1.5, 0, 2.0, np.array([2.0, 3.0]))))
            # np.power, not ``ndarray ** p``: NumPy's ``**`` takes shortcuts for some
            # exponents (-1 -> reciprocal, 0.5 -> sqrt) that differ from np.power at
            # special values (sqrt(-0.0) = -0.0 but power(-0.0, 0.5) = 0.0)
            self.apply("power", f"power(v{i}, {p!r})", lambda: x ** p,
                       lambda: np.power(xr, p), supported=np.ndim(p) == 0)
        elif kind == "broadcast_to":
            target = self.related_shape(shape)
            if self.draw(st.booleans(), label="extra leading axis"):
                target = (2,) + target
            self.apply("broadcast_to", f"broadcast_to(v{i}, {target})",
                       lambda: tp.broadcast_to(x, target),
                       lambda: np.broadcast_to(xr, target))

    # ---------------------------------------------------------------- checking

    def check(self):
        outputs = self.lib[self.n_inputs:]
        if not outputs:
            return
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                if self.mode == "traced":
                    values = tp.evaluate(outputs, self.feed)
                else:
                    values = [v.numpy() for v in outputs]
            except Exception as error:  # noqa: BLE001 - any failure here is a bug
                raise AssertionError(f"evaluation raised {type(error).__name__}: {error}\n"
                                     + self.history()) from error
        for k, (got, want) in enumerate(zip(values, self.ref[self.n_inputs:])):
            where = f"v{self.n_inputs + k}\n" + self.history()
            got = np.asarray(got)
            assert got.dtype == want.dtype, f"dtype {got.dtype} != NumPy's {want.dtype} at " \
                                            + where
            assert got.shape == want.shape, f"shape {got.shape} != {want.shape} at " + where
            tol = 2e-4 if want.dtype in (np.float32, np.complex64) else 1e-9
            with np.errstate(all="ignore"):
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True,
                                           err_msg=where)


def _fuzz(data, mode, family):
    case = _Fuzz(data, mode, _FAMILIES[family])
    for _ in range(data.draw(st.integers(1, 2), label="inputs")):
        case.add_input()
    for _ in range(data.draw(st.integers(1, 5), label="ops")):
        case.step()
    case.check()


# examples per family (traced; eager runs a third of them)
_EXAMPLES = {"elementwise": 300, "structural": 300, "indexing": 300, "contraction": 150,
             "mixed": 300}


@pytest.mark.parametrize("family", sorted(_FAMILIES))
def test_fuzzed_traced_op_sequences_fail_clearly_or_match_numpy(family):
    @settings(max_examples=_EXAMPLES[family], **NO_SHRINK)
    @given(data=st.data())
    def fuzz(data):
        _fuzz(data, "traced", family)
    fuzz()


@pytest.mark.parametrize("family", sorted(_FAMILIES))
def test_fuzzed_eager_op_sequences_fail_clearly_or_match_numpy(family):
    @settings(max_examples=_EXAMPLES[family] // 3, **NO_SHRINK)
    @given(data=st.data())
    def fuzz(data):
        _fuzz(data, "eager", family)
    fuzz()


# ====================================================================== 5. debug_nans

def test_debug_nans_names_the_primitive_in_a_compiled_program():
    x = tp.input((3,), name="x")
    program = tp.compile(tp.log(x) * 2.0, inputs=[x])
    with tp.debug_nans():
        np.testing.assert_allclose(program(np.array([1.0, 2.0, 3.0])),
                                   2 * np.log([1.0, 2.0, 3.0]))
        with pytest.raises(NonFiniteError) as excinfo:
            program(np.array([1.0, 0.0, 3.0]))
    assert "'log'" in str(excinfo.value) and "inf" in str(excinfo.value).lower()
    assert isinstance(excinfo.value, FloatingPointError)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = program(np.array([1.0, 0.0, 3.0]))            # outside: NumPy semantics
    assert result[1] == -np.inf and np.isfinite(result[[0, 2]]).all()


def test_debug_nans_names_the_primitive_of_an_eager_op():
    with tp.debug_nans():
        assert tp.sqrt(tp.tensor(4.0)).item() == 2.0
        with pytest.raises(NonFiniteError) as excinfo:
            tp.sqrt(tp.tensor(-1.0))
    assert "'sqrt'" in str(excinfo.value) and "nan" in str(excinfo.value).lower()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(tp.sqrt(tp.tensor(-1.0)).item())


def test_debug_nans_names_the_vjp_in_an_eager_backward():
    with tp.debug_nans():
        b = tp.tensor(1e-300, requires_grad=True)
        out = tp.sqrt(b * b)            # b*b underflows to 0: the forward pass is finite
        assert out.item() == 0.0
        with pytest.raises(NonFiniteError) as excinfo:
            out.backward()
    message = str(excinfo.value)
    assert "vjp" in message.lower() and "'sqrt'" in message, message
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = tp.tensor(1e-300, requires_grad=True)
        tp.sqrt(b * b).backward()
    assert not np.isfinite(b.grad.item())


def test_debug_nans_reports_inputs_that_were_already_non_finite():
    x = tp.input((2,), name="x")
    program = tp.compile(tp.sin(x), inputs=[x])
    with tp.debug_nans():
        with pytest.raises(NonFiniteError) as excinfo:
            program(np.array([0.5, np.nan]))
        assert "already non-finite" in str(excinfo.value)
        assert "'sin'" in str(excinfo.value)
        with pytest.raises(NonFiniteError) as excinfo:
            tp.exp(tp.tensor([np.inf, 1.0]))
        assert "already non-finite" in str(excinfo.value)
    result = program(np.array([0.5, np.nan]))
    assert np.isnan(result[1]) and result[0] == np.sin(0.5)


def test_debug_nans_switches_off_after_an_error_and_nests():
    x = tp.input((), name="x")
    program = tp.compile(tp.log(x), inputs=[x])
    with pytest.raises(NonFiniteError):
        with tp.debug_nans():
            with tp.debug_nans():
                pass
            program(np.array(0.0))          # the outer context is still active
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert program(np.array(0.0)) == -np.inf


# ====================================================================== 6. key semantics

_SCALES = (0.5, 2.0, -1.5, 0.0, -0.0, 3.0)
_SCALE_BITS = tuple(struct.unpack("<Q", struct.pack("<d", c))[0] for c in _SCALES)


def _float_of_bits(bits: int) -> float:
    """A fresh float object with exactly these 64 bits (NaN payloads included)."""
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


_STEP = st.tuples(st.sampled_from(("add", "mul", "sin", "exp", "scale", "matmul")),
                  st.integers(0, 50), st.integers(0, 50), st.sampled_from(_SCALE_BITS))
_RECIPE = st.lists(_STEP, min_size=1, max_size=7)


def _build(recipe, inputs) -> list:
    nodes = list(inputs)
    for op, i, j, bits in recipe:
        a, b = nodes[i % len(nodes)], nodes[j % len(nodes)]
        if op == "add":
            node = a + b
        elif op == "mul":
            node = a * b
        elif op == "sin":
            node = tp.sin(a)
        elif op == "exp":
            node = tp.exp(a)
        elif op == "scale":
            node = a * _float_of_bits(bits)
        else:
            node = a @ b
        nodes.append(node)
    return nodes


def _naive_equal(r1, i, r2, j) -> bool:
    """Recursive structural equality of recipe trees (no memo: fine for tiny DAGs)."""
    if i < 2 or j < 2:
        return i == j
    op1, a1, b1, bits1 = r1[i - 2]
    op2, a2, b2, bits2 = r2[j - 2]
    if op1 != op2:
        return False
    a1, b1, a2, b2 = a1 % i, b1 % i, a2 % j, b2 % j
    if op1 in ("sin", "exp"):
        return _naive_equal(r1, a1, r2, a2)
    if op1 == "scale":
        return bits1 == bits2 and _naive_equal(r1, a1, r2, a2)
    return _naive_equal(r1, a1, r2, a2) and _naive_equal(r1, b1, r2, b2)


@settings(max_examples=400, **FUZZ)
@given(_RECIPE, _RECIPE)
def test_random_dags_merge_iff_naively_structurally_equal(r1, r2):
    inputs = [tp.input((2, 2), name="a"), tp.input((2, 2), name="b")]
    n1, again, n2 = _build(r1, inputs), _build(r1, inputs), _build(r2, inputs)
    assert all(p is q for p, q in zip(n1, again))
    for i in range(len(n1)):
        for j in range(len(n2)):
            assert (n1[i] is n2[j]) == _naive_equal(r1, i, r2, j), (i, j)


@settings(max_examples=300, **FUZZ)
@given(_RECIPE, _RECIPE)
def test_structural_equality_across_placeholders_agrees_with_the_naive_one(r1, r2):
    n1 = _build(r1, [tp.input((2, 2), name="a"), tp.input((2, 2), name="b")])
    n2 = _build(r2, [tp.input((2, 2), name="a"), tp.input((2, 2), name="b")])
    for i in range(len(n1)):
        for j in range(len(n2)):
            expected = _naive_equal(r1, i, r2, j)
            assert _core.structurally_equal(n1[i], n2[j]) == expected, (i, j)
            if not expected:
                assert n1[i] is not n2[j]


_NAN_BITS = st.one_of(st.integers(0x7FF0000000000001, 0x7FFFFFFFFFFFFFFF),
                      st.integers(0xFFF0000000000001, 0xFFFFFFFFFFFFFFFF),
                      st.just(0x7FF8000000000000))
_BITS64 = st.one_of(st.integers(0, 2**64 - 1), _NAN_BITS,
                    st.sampled_from((0, 1 << 63, 0x3FF0000000000000, 0x7FF0000000000000,
                                     0xFFF0000000000000)))
_BITS32 = st.one_of(st.integers(0, 2**32 - 1), st.integers(0x7F800001, 0x7FFFFFFF),
                    st.sampled_from((0, 1 << 31, 0x3F800000, 0x7FC00000)))


def _f32_of_bits(bits: int) -> np.float32:
    return np.frombuffer(struct.pack("<I", bits), dtype=np.float32)[0]


@settings(max_examples=400, **FUZZ)
@given(_BITS64, _BITS64, _BITS32, _BITS32)
@example(0, 1 << 63, 0, 1 << 31)                                          # 0.0 vs -0.0
@example(0x7FF8000000000000, 0x7FF8000000000000, 0x7FC00000, 0x7FC00000)  # same NaN
@example(0x7FF8000000000000, 0x7FF8000000000001, 0x7FC00000, 0x7FC00001)  # NaN payloads
def test_constants_are_keyed_by_dtype_and_bit_pattern(b1, b2, c1, c2):
    x = tp.input((2,), name="x")
    v1, v2 = np.float64(_float_of_bits(b1)), np.float64(_float_of_bits(b2))
    same = b1 == b2
    assert ((x + v1) is (x + v2)) == same
    assert (tp.constant(np.array([v1, 1.0])) is tp.constant(np.array([v2, 1.0]))) == same
    y = tp.input((2,), dtype="float32", name="y")
    w1, w2 = _f32_of_bits(c1), _f32_of_bits(c2)
    assert ((y + w1) is (y + w2)) == (c1 == c2)
    # float32 and float64 constants never merge, whatever the value
    assert tp.constant(np.float32(w1)) is not tp.constant(np.float64(w1))
    assert tp.constant(np.float32(w1)).dtype == np.float32
    # across placeholders: structural equality agrees
    z = tp.input((2,), name="x")
    assert _core.structurally_equal(x + v1, z + v2) == same
    # the constant holds exactly these bits
    const = (x + v1).inputs[1]
    while const.prim.name != "constant":
        const = const.inputs[0]
    assert np.asarray(const.params.array).view(np.uint64).ravel()[0] == b1


@settings(max_examples=100, **FUZZ)
@given(_BITS64, _BITS64)
@example(0, 1 << 63)
@example(0x7FF8000000000000, 0x7FF8000000000001)
@example(0x7FF8000000000000, 0x7FF8000000000000)
def test_static_scale_factors_are_keyed_by_bit_pattern(b1, b2):
    """``x * c`` keeps ``c`` as a static parameter: like a constant, the same bits (NaN
    payloads included) must give the same node, different bits (0.0 / -0.0) different."""
    x = tp.input((2,), name="x")
    f1, f2 = _float_of_bits(b1), _float_of_bits(b2)
    if f1 == 1.0 or f2 == 1.0:
        return                             # x * 1.0 is x itself
    assert ((x * f1) is (x * f2)) == (b1 == b2)
    z = tp.input((2,), name="x")
    assert _core.structurally_equal(x * f1, z * f2) == (b1 == b2)


# ====================================================================== 7. saved programs

def _saved_graph():
    x = tp.input((3, 4), dtype="float32", name="x")
    z = tp.input((4, 3), dtype="complex128", name="z")
    u, s, vt = tp.linalg.svd(x @ x.T + np.float32(1.0))
    e = tp.einsum("ij,jk->ik", x, z)
    nan_mask = np.array([[np.nan, 1.0], [1.0, 2.0]])
    w = tp.abs(e[1:, ::-2] * nan_mask)                        # slicing, a NaN constant
    signed = tp.divide(x[0, :2] * 0.0 + 1.0, np.array([-0.0, 0.0]))   # 1/-0.0 = -inf
    ladder = x[:2, :2]
    for _ in range(40):                                     # 2^40 paths: must stay linear
        ladder = (ladder * ladder) * 0.5
    out = (u * s).sum() + w.sum() + e.real[::2].sum() + ladder.sum() + (x * -0.0).sum()
    return [x, z], [out, u, s, w, signed, ladder, e]


def _saved_inputs(seed):
    rng = np.random.default_rng(seed)
    x = (rng.normal(size=(3, 4)) * 0.5).astype(np.float32)
    z = rng.normal(size=(4, 3)) + 1j * rng.normal(size=(4, 3))
    return x, z


def _assert_same_arrays(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)                   # NaN positions included
    assert (np.signbit(a.real) == np.signbit(b.real)).all()


def test_saved_program_round_trips(tmp_path):
    inputs, outputs = _saved_graph()
    program = tp.compile(outputs, inputs=inputs)
    path = tmp_path / "program.tpz"
    program.save(path)
    loaded = tp.load_program(path)
    for seed in (1, 2):
        for a, b in zip(program(*_saved_inputs(seed)), loaded(*_saved_inputs(seed))):
            _assert_same_arrays(a, b)
    got = loaded(*_saved_inputs(3))
    assert got[4].tolist() == [-np.inf, np.inf]           # the -0.0 constant survived
    assert np.isnan(got[3][0, 0]) and np.isfinite(got[3][1:]).all()
    assert got[0].dtype == np.float64 and got[1].dtype == np.float32
    assert got[6].dtype == np.complex128


def test_loaded_graph_is_structurally_equal_in_linear_time(tmp_path):
    inputs, outputs = _saved_graph()
    path = tmp_path / "program.tpz"
    tp.compile(outputs, inputs=inputs).save(path)
    loaded_inputs, loaded_outputs = tp.load_graph(path)
    assert [(v.name, v.shape, v.dtype) for v in loaded_inputs] == \
        [(v.name, v.shape, v.dtype) for v in inputs]
    assert len(loaded_outputs) == len(outputs)
    for original, loaded in zip(outputs, loaded_outputs):
        assert loaded is not original
        n_nodes = len(_core.toposort([original]))
        tp.reset_counters()
        assert _core.structurally_equal(original, loaded)
        calls = tp.counters()["equality_calls"]
        assert calls <= n_nodes + 4, f"{calls} pair comparisons for {n_nodes} nodes"
    # a different graph is told apart
    assert not _core.structurally_equal(outputs[0], loaded_outputs[5].sum())


def _write_zip(path, members: dict):
    with zipfile.ZipFile(path, "w") as archive:
        for name, payload in members.items():
            archive.writestr(name, payload)


def _members(path) -> dict:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _save_sample(path):
    """A small saved program (sin, einsum, svd, slicing, a constant): (path, members of
    the archive, the parsed program.json)."""
    x = tp.input((3, 2), name="x")
    u, s, vt = tp.linalg.svd(x)
    y = (tp.einsum("ij,jk->ik", u, vt)[1:, ::-1] * 2.0).reshape(4) + np.array(
        [1.0, -0.0, np.nan, 2.0])
    tp.compile([tp.sin(y).sum(), s], inputs=[x]).save(path)
    members = _members(path)
    return path, members, json.loads(members["program.json"])


@pytest.fixture(scope="module")
def saved_sample(tmp_path_factory):
    return _save_sample(tmp_path_factory.mktemp("saved") / "good.tpz")


def _expect_save_format_error(path, *words):
    with pytest.raises(SaveFormatError) as excinfo:
        tp.load_program(path)
    message = str(excinfo.value)
    assert message and all(w.lower() in message.lower() for w in words), message
    return message


def test_corrupt_files_raise_save_format_error(tmp_path, saved_sample):
    path, members, document = saved_sample
    data = path.read_bytes()
    for cut in (0, 10, len(data) // 2, len(data) - 1):
        bad = tmp_path / f"cut{cut}.tpz"
        bad.write_bytes(data[:cut])
        _expect_save_format_error(bad)
    bad = tmp_path / "random.tpz"
    bad.write_bytes(np.random.default_rng(0).bytes(2000))
    _expect_save_format_error(bad)
    bad = tmp_path / "nojson.tpz"
    _write_zip(bad, {k: v for k, v in members.items() if k != "program.json"})
    _expect_save_format_error(bad, "program.json")
    bad = tmp_path / "notjson.tpz"
    _write_zip(bad, dict(members, **{"program.json": b"{not json"}))
    _expect_save_format_error(bad)
    for field, value, word in (("format", "something-else", "not a saved tenpy_ad program"),
                               ("version", 99, "version")):
        bad = tmp_path / f"{field}.tpz"
        _write_zip(bad, dict(members, **{"program.json": json.dumps(
            dict(document, **{field: value}))}))
        _expect_save_format_error(bad, word)
    unknown = copy.deepcopy(document)
    next(n for n in unknown["nodes"] if n["op"] == "sin")["op"] = "frobnicate"
    bad = tmp_path / "unknown.tpz"
    _write_zip(bad, dict(members, **{"program.json": json.dumps(unknown)}))
    _expect_save_format_error(bad, "frobnicate")
    # a truncated constant inside an intact archive
    constant = next(k for k in members if k.endswith(".npy"))
    bad = tmp_path / "short_npy.tpz"
    _write_zip(bad, dict(members, **{constant: members[constant][:-5]}))
    _expect_save_format_error(bad)


class _Touch:
    """Unpickling this would create a file: proof that loading never unpickles."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.path),))


def test_loading_never_unpickles(tmp_path, saved_sample):
    path, members, document = saved_sample
    marker = tmp_path / "unpickled"
    buffer = io.BytesIO()
    np.save(buffer, np.array([_Touch(marker), None], dtype=object), allow_pickle=True)
    constant = next(k for k in members if k.endswith(".npy"))
    bad = tmp_path / "object.tpz"
    _write_zip(bad, dict(members, **{constant: buffer.getvalue()}))
    _expect_save_format_error(bad)
    with pytest.raises(SaveFormatError):
        tp.load_graph(bad)
    assert not marker.exists()


def _mutated(document, edit):
    document = copy.deepcopy(document)
    edit(document)
    return document


def _node(document, op):
    return next(n for n in document["nodes"] if n["op"] == op)


_DOCUMENT_EDITS = {
    "einsum params not a string": lambda d: _node(d, "einsum").update(params=7),
    "reshape params of the wrong size": lambda d: _node(d, "reshape").update(
        params={"tuple": [7]}),
    "an input id that is not an input": lambda d: d.update(inputs=[1]),
    "an input id that does not exist": lambda d: d.update(inputs=[999]),
    "an output id that does not exist": lambda d: d.update(outputs=[999]),
    "an operand id that does not exist": lambda d: _node(d, "sin").update(inputs=[999]),
    "nodes is not a list": lambda d: d.update(nodes=7),
    "an unsupported input dtype": lambda d: _node(d, "input").update(dtype="int32"),
    "a negative input dim": lambda d: _node(d, "input").update(shape=[-3, 2]),
    "metadata that disagrees": lambda d: _node(d, "sin").update(meta=[["float32", [4]]]),
    "an unreadable param": lambda d: _node(d, "reshape").update(params={"float": "zz"}),
}


@pytest.mark.parametrize("edit", sorted(_DOCUMENT_EDITS))
def test_corrupt_documents_raise_save_format_error(tmp_path, saved_sample, edit):
    path, members, document = saved_sample
    bad = tmp_path / "edited.tpz"
    _write_zip(bad, dict(members, **{"program.json": json.dumps(
        _mutated(document, _DOCUMENT_EDITS[edit]))}))
    _expect_save_format_error(bad)


_JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-3, 1000),
                         st.floats(allow_nan=False), st.text(max_size=8),
                         st.sampled_from(["float64", "int32", "svd", "input", "constant",
                                          "einsum", "ij,jk->ik"]),
                         st.lists(st.integers(-1, 12), max_size=3),
                         st.just({"tuple": [1, 2]}), st.just({"float": "0x1p-1"}))


def _leaf_paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaf_paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaf_paths(v, path + (i,))


@settings(max_examples=300, **FUZZ)
@given(data=st.data())
def test_randomly_edited_documents_load_or_raise_save_format_error(data, saved_sample):
    path, members, document = saved_sample
    document = copy.deepcopy(document)
    paths = [p for p in _leaf_paths(document) if p]
    fields = [("nodes", i, key) for i, node in enumerate(document["nodes"]) for key in node]
    fields += [(key,) for key in document]
    edits = []
    for _ in range(data.draw(st.integers(1, 2), label="edits")):
        target = data.draw(st.one_of(st.sampled_from(fields), st.sampled_from(paths)),
                           label="path")
        value = data.draw(_JSON_LEAVES, label="value")
        edits.append(f"{'/'.join(map(str, target))} = {value!r}")
        holder = document
        try:
            for key in target[:-1]:
                holder = holder[key]
            holder[target[-1]] = value
        except (KeyError, IndexError, TypeError):
            pass
    bad = path.parent / "randomly_edited.tpz"
    _write_zip(bad, dict(members, **{"program.json": json.dumps(document)}))
    try:
        tp.load_program(bad)
    except SaveFormatError:
        pass
    except Exception as error:  # noqa: BLE001 - the point of the test
        raise AssertionError(f"loading a file edited with {edits} raised "
                             f"{type(error).__name__}: {error}") from error


def test_saving_a_checkpoint_region_raises_save_format_error(tmp_path):
    x = tp.input((3,), name="x")
    region = tp.checkpoint(lambda a: tp.sin(a) * 2.0)
    loss = region(x).sum()
    program = tp.compile([loss, tp.ad.grad(loss, x)], inputs=[x])
    value, grad = program(np.zeros(3))
    assert value == 0.0
    np.testing.assert_allclose(grad, 2.0 * np.ones(3))
    with pytest.raises(SaveFormatError) as excinfo:
        program.save(tmp_path / "checkpoint.tpz")
    assert "checkpoint" in str(excinfo.value)


# ====================================================================== 1. depth (results)

def _sin_chain(x0: float, depth: int) -> tuple:
    """``sin`` applied ``depth`` times, and its derivative (product of the cosines)."""
    v, d = x0, 1.0
    for _ in range(depth):
        d *= math.cos(v)
        v = math.sin(v)
    return v, d


def test_deep_traced_chain_is_differentiated_compiled_run_and_freed(deep_runs):
    result = deep_runs["traced"].result()
    (v1, d1), (v2, d2) = _sin_chain(0.3, DEPTH), _sin_chain(1.2, DEPTH)
    assert DEPTH < result["n_nodes"] < 4 * DEPTH + 16
    np.testing.assert_allclose(result["value"], v1 + v2, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(result["grad"], [d1, d2], rtol=1e-6)
    assert all(math.isfinite(g) and g > 0 for g in result["grad"])
    assert result["after"] == result["before"], "tables did not return to their size"


def test_deep_forward_chain_is_freed_without_crash(deep_runs):
    result = deep_runs["forward"].result()
    assert result["after"] == result["before"]


def test_deep_eager_tape_backward_and_free(deep_runs):
    result = deep_runs["eager"].result()
    (v1, d1), (v2, d2) = _sin_chain(0.3, DEPTH), _sin_chain(1.2, DEPTH)
    np.testing.assert_allclose(result["value"], v1 + v2, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(result["grad"], [d1, d2], rtol=1e-6)
    assert all(math.isfinite(g) for g in result["grad"])
    assert result["held"] > 50 * DEPTH, "the tape should hold real memory while alive"
    assert result["end"] < 64 * 1024, f"{result['end']} bytes still allocated after the free"

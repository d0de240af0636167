"""Random op sequences for the fuzz tests (``tests/test_fuzz.py``), and the hypothesis
settings every randomized test shares.

:class:`OpSequence` draws a random op sequence and applies each op both to tenpy_ad values
(traced or eager) and to the NumPy arrays they stand for, side by side: every op must either
raise a TenpyAdError (a ShapeError naming the op) or build a value of NumPy's shape and
dtype, and :meth:`OpSequence.check` then evaluates everything against NumPy's values.
"""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np
from hypothesis import HealthCheck, Phase
from hypothesis import strategies as st

import tenpy_ad as tp
from tenpy_ad.errors import ShapeError, TenpyAdError

#: derandomized (reproducible), no example database
FUZZ = dict(deadline=None, derandomize=True, database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                   HealthCheck.filter_too_much])
# the op-sequence fuzzers print the whole op sequence on failure; shrinking it would cost
# tens of seconds per failing family, more than the fuzz tests' time budget allows
NO_SHRINK = dict(FUZZ, phases=(Phase.explicit, Phase.generate))

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
FAMILIES = {   # each family also mixes in elementwise ops, so values flow between kinds
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


class OpSequence:
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
        kind = tp.TracedTensor if self.mode == "traced" else tp.Tensor
        assert type(got) is kind, f"{name} returned {type(got).__name__}\n" + self.history()
        assert tuple(got.shape) == want.shape and got.dtype == want.dtype, (
            f"{name}: built {got.dtype}{list(got.shape)}, NumPy gives "
            f"{want.dtype}{list(want.shape)}\n" + self.history())
        if want.dtype.kind in "biu":
            return           # masks and indices: checked here, not fed to further ops
        self.log[-1] = f"v{len(self.lib)} = {text}"
        self.lib.append(got)
        self.ref.append(want)

    def step(self):
        """Draw one op of the sequence's kinds and apply it to a drawn operand."""
        kind = self.draw(st.sampled_from(self.kinds), label="op")
        i = self.pick()
        if kind in ("binary", "matmul"):
            self._binary(i, kind)
        else:
            getattr(self, "_" + kind)(i)

    def _unary(self, i: int):
        x, xr = self.lib[i], self.ref[i]
        name = self.draw(st.sampled_from(sorted(_UNARY)), label="unary")
        f, g = _UNARY[name]
        self.apply(name, f"{name}(v{i})", lambda: f(x), lambda: g(xr))

    def _binary(self, i: int, kind: str):
        x, xr = self.lib[i], self.ref[i]
        shape = xr.shape
        name = "matmul" if kind == "matmul" else self.draw(
            st.sampled_from(("add", "subtract", "multiply", "divide")), label="binary")
        op, f, g = _BINARY[name]
        other, other_ref, text = self.operand(shape)
        a, ar, b, br, ta, tb = x, xr, other, other_ref, f"v{i}", text
        if self.draw(st.booleans(), label="swap"):
            a, ar, b, br, ta, tb = b, br, a, ar, tb, ta
        if not any(type(v) in (tp.TracedTensor, tp.Tensor) for v in (a, b)):
            return
        if self.draw(st.booleans(), label="operator form"):
            self.apply(name, f"{ta} {name} {tb}", lambda: op(a, b), lambda: op(ar, br))
        else:
            self.apply(name, f"{name}({ta}, {tb})", lambda: f(a, b), lambda: g(ar, br))

    def _reshape(self, i: int):
        x, xr = self.lib[i], self.ref[i]
        shape = xr.shape
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

    def _transpose(self, i: int):
        x, xr = self.lib[i], self.ref[i]
        shape = xr.shape
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

    def _sum(self, i: int):
        x, xr = self.lib[i], self.ref[i]
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

    def _getitem(self, i: int):
        x, xr = self.lib[i], self.ref[i]
        small = st.integers(-4, 4)
        item = st.one_of(
            small, small,
            st.builds(slice, st.none() | small, st.none() | small,
                      st.none() | st.integers(-3, 3)),
            st.just(None), st.just(Ellipsis))
        index = self.draw(st.one_of(item, st.lists(item, max_size=4).map(tuple)),
                          label="index")
        self.apply("getitem", f"v{i}[{index!r}]", lambda: x[index], lambda: xr[index])

    def _einsum(self, i: int):
        x, xr = self.lib[i], self.ref[i]
        shape = xr.shape
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

    def _astype(self, i: int):
        x, xr = self.lib[i], self.ref[i]
        dtype = self.draw(st.sampled_from(_ASTYPE), label="dtype")
        supported = dtype in ("float32", "float64", "complex64", "complex128", "int64",
                              "bool") and not (xr.dtype.kind == "c" and dtype != "complex128"
                                               and dtype != "complex64")
        self.apply("astype", f"astype(v{i}, {dtype!r})", lambda: tp.astype(x, dtype),
                   lambda: xr.astype(dtype), supported=supported)

    def _power(self, i: int):
        x, xr = self.lib[i], self.ref[i]
        p = self.draw(st.sampled_from((2, 3, 0.5, -1, 1.5, 0, 2.0, np.array([2.0, 3.0]))))
        # np.power, not ``ndarray ** p``: NumPy's ``**`` takes shortcuts for some
        # exponents (-1 -> reciprocal, 0.5 -> sqrt) that differ from np.power at
        # special values (sqrt(-0.0) = -0.0 but power(-0.0, 0.5) = 0.0)
        self.apply("power", f"power(v{i}, {p!r})", lambda: x ** p,
                   lambda: np.power(xr, p), supported=np.ndim(p) == 0)

    def _broadcast_to(self, i: int):
        x, xr = self.lib[i], self.ref[i]
        shape = xr.shape
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


def fuzz_op_sequence(data, mode: str, family: str) -> None:
    """One example: 1-2 inputs, 1-5 ops of ``family``, then the check against NumPy."""
    case = OpSequence(data, mode, FAMILIES[family])
    for _ in range(data.draw(st.integers(1, 2), label="inputs")):
        case.add_input()
    for _ in range(data.draw(st.integers(1, 5), label="ops")):
        case.step()
    case.check()


# examples per family (traced; eager runs a third of them)
EXAMPLES = {"elementwise": 300, "structural": 300, "indexing": 300, "contraction": 150,
            "mixed": 300}

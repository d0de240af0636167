"""Every error the engine raises on its own behalf is a ``TenpyAdError`` subclass that
names the op or the API (and keeps the built-in base a NumPy or PyTorch user catches).

* a table of misuse cases over the public entry points (placeholders, tensors, programs,
  shapes, axes, dtypes, indices, keyword arguments, the transforms, tp.linalg, the
  configuration), each with the class it raises and the words its message must hold;
* the cases named in the audit: a backward through a freed graph, ``tp.input`` of a
  shape NumPy cannot hold, ragged nested lists, unnamed program inputs in messages and
  listings;
* a scan of the sources: no ``raise ValueError(...)`` and the like left in the engine
  (the exceptions are listed with the reason).

Left to NumPy on purpose: the functions that, given no tensor, are NumPy's own function
(``tnp.zeros(-1)``, ``tnp.exp("a")``: NumPy's error, as ``np.zeros``), numerical failures
on user values (``numpy.linalg.LinAlgError`` for a singular matrix names the function), and
Python's own errors for a call that does not match a signature.
"""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import tenpy_ad as tp
import tenpy_ad.numpy as tnp
from tenpy_ad import errors
from tenpy_ad.primitive import PRIMITIVES, bind1, primitive
from tenpy_ad.errors import (ArgumentError, ArgumentValueError, ConcretizationError,
                             DTypeError, GraphError, IndexingError, MissingRuleError,
                             NotDifferentiableError, ParamError, ProgramInputError, ShapeError,
                             TapeError, TenpyAdError)

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _x():
    return tp.input((2, 3), name="x")


def _e():
    return tp.tensor(np.ones((2, 3)), requires_grad=True)


def _m():
    return tp.tensor(np.eye(3), requires_grad=True)


def _program():
    x = _x()
    return tp.compile(x.sum(), inputs=[x])


# (id, call, class, words of the message); each call builds its own operands
MISUSE = [
    # ---- placeholders and tensors
    ("input too big", lambda: tp.input((2**63,)), ShapeError, ["tp.input", "9223372036854775808"]),
    ("input too many bytes", lambda: tp.input((2**40, 2**40)), ShapeError,
     ["tp.input", "1099511627776", "too big"]),
    ("input rank 65", lambda: tp.input((1,) * 65), ShapeError, ["tp.input", "65", "64"]),
    ("input negative", lambda: tp.input((2, -1)), ShapeError, ["tp.input", "-1"]),
    ("input float dim", lambda: tp.input((2.5,)), ShapeError, ["tp.input", "2.5"]),
    ("input bad dtype", lambda: tp.input((2,), dtype="foo"), DTypeError, ["foo"]),
    ("input float16", lambda: tp.input((2,), dtype="float16"), DTypeError, ["float16"]),
    ("input name", lambda: tp.input((2,), name=3), ArgumentError, ["tp.input", "name"]),
    ("tensor ragged", lambda: tp.tensor([[1, 2], [3]]), ShapeError, ["tensor", "ragged"]),
    ("tensor bad dtype", lambda: tp.tensor(1.0, dtype="foo"), DTypeError, ["foo"]),
    ("tensor str", lambda: tp.tensor("abc"), DTypeError, ["<U3"]),
    ("tensor int requires grad", lambda: tp.tensor([1], dtype="int64", requires_grad=True),
     DTypeError, ["tensor", "int64"]),
    ("tensor requires_grad str", lambda: tp.tensor(1.0, requires_grad="yes"), ArgumentError,
     ["tensor", "requires_grad"]),
    ("asarray ragged", lambda: tnp.asarray([[1, 2], [3]]), ShapeError, ["asarray", "ragged"]),
    ("array ragged", lambda: tnp.array([[1, 2], [3]]), ShapeError, ["array", "ragged"]),
    ("constant ragged", lambda: tp.constant([[1, 2], [3]]), ShapeError, ["constant", "ragged"]),
    ("item of many", lambda: _e().item(), ShapeError, ["item", "[2, 3]"]),
    ("len 0-d", lambda: len(tp.tensor(1.0)), ArgumentError, ["len()", "0-d"]),
    ("iter 0-d traced", lambda: list(tp.input(())), ArgumentError, ["iteration", "0-d"]),
    ("float index", lambda: [1, 2][tp.tensor(1.0)], ArgumentError, ["index", "float64"]),
    ("requires_grad off non-leaf", lambda: setattr(_e() * 2, "requires_grad", False),
     TapeError, ["requires_grad", "leaf"]),
    ("TracedTensor()", lambda: tp.TracedTensor(), ArgumentError, ["TracedTensor", "tp.input"]),
    ("pickle traced", lambda: __import__("pickle").dumps(_x()), ArgumentError,
     ["pickle", "TracedTensor"]),
    ("float of traced", lambda: float(_x()), ConcretizationError, ["float()"]),
    ("float of grad tensor", lambda: float(tp.tensor(1.0, requires_grad=True)),
     NotDifferentiableError, ["float()"]),
    ("setitem", lambda: _e().__setitem__(0, 1.0), TapeError, ["leaf tensor", "x.copy()"]),
    # ---- programs
    ("compile inputs int", lambda: tp.compile(_x(), inputs=3), ArgumentError,
     ["compile", "inputs", "int"]),
    ("compile eager output", lambda: tp.compile(_e(), inputs=[_x()]), ArgumentError,
     ["compile", "Tensor"]),
    ("compile non-input", lambda: tp.compile(_x() * 2, inputs=[_x() * 3]), GraphError,
     ["compile", "tp.input"]),
    ("compile unbound", lambda: tp.compile(_x() * 2, inputs=[tp.input(())]), GraphError,
     ["compile", "inputs=["]),
    ("program count", lambda: _program()(), ProgramInputError, ["program", "1 inputs", "'x'"]),
    ("program shape", lambda: _program()(np.ones(3)), ProgramInputError,
     ["program", "input 0", "'x'", "[2, 3]", "[3]"]),
    ("program dtype", lambda: _program()(np.ones((2, 3), complex)), ProgramInputError,
     ["program", "input 0", "complex128"]),
    ("program ragged", lambda: _program()([[1, 2], [3]]), ProgramInputError,
     ["program", "input 0", "ragged"]),
    ("program object", lambda: _program()(object()), ProgramInputError,
     ["program", "input 0", "object"]),
    ("evaluate feed list", lambda: tp.evaluate(_x().sum(), [1.0]), ArgumentError,
     ["evaluate", "feed", "list"]),
    # ---- shapes and axes
    ("reshape size", lambda: _x().reshape(4, 2), ShapeError, ["reshape", "[4, 2]"]),
    ("reshape str", lambda: _x().reshape("a"), ArgumentError, ["reshape", "shape", "'a'"]),
    ("reshape float", lambda: _x().reshape(2.0, 3), ArgumentError, ["reshape", "2.0"]),
    ("reshape -2", lambda: _e().reshape(-2, -3), ShapeError, ["reshape", "-2"]),
    ("reshape no shape", lambda: tnp.reshape(_e(), None), ArgumentError, ["reshape", "shape"]),
    ("reshape rank 70", lambda: _e().reshape((1,) * 68 + (2, 3)), ParamError,
     ["reshape", "shape", "70", "64"]),
    ("expand_dims rank", lambda: tnp.expand_dims(_e(), tuple(range(70))), ParamError,
     ["reshape", "shape", "64"]),
    ("broadcast_to beyond int64", lambda: tnp.broadcast_to(_x(), (2**63, 2, 3)), ParamError,
     ["broadcast", "shape", "9223372036854775808", "int64"]),
    ("broadcast_to float", lambda: tnp.broadcast_to(_x(), (2.0, 3)), ArgumentError,
     ["broadcast_to", "2.0"]),
    ("transpose str", lambda: _x().transpose("a"), ArgumentError, ["transpose", "'a'"]),
    ("transpose short", lambda: _x().transpose(0), ShapeError, ["transpose", "[0]"]),
    ("sum axis range", lambda: _x().sum(axis=5), ShapeError, ["sum", "axis 5"]),
    ("sum axis str", lambda: _x().sum(axis="a"), ArgumentError, ["sum", "axis", "'a'"]),
    ("sum axis float", lambda: _e().sum(axis=1.5), ArgumentError, ["sum", "1.5"]),
    ("sum axis tuple", lambda: _e().sum(axis=(0, "a")), ArgumentError, ["sum", "'a'"]),
    ("sum repeated axis", lambda: _x().sum(axis=(0, 0)), ShapeError, ["sum", "repeated"]),
    ("sum dtype", lambda: _x().sum(dtype="foo"), DTypeError, ["foo"]),
    ("mean axis", lambda: _e().mean(axis=7), ShapeError, ["mean", "axis 7"]),
    ("cumsum axis float", lambda: _e().cumsum(axis=0.5), ArgumentError, ["cumsum", "0.5"]),
    ("swapaxes", lambda: _e().swapaxes(0, 5), ShapeError, ["swapaxes", "axis 5"]),
    ("squeeze size", lambda: _e().squeeze(0), ShapeError, ["squeeze", "axis 0"]),
    ("squeeze float", lambda: _e().squeeze(0.5), ArgumentError, ["squeeze", "0.5"]),
    ("moveaxis float", lambda: tnp.moveaxis(_e(), 0.5, 1), ArgumentError, ["moveaxis", "0.5"]),
    ("concatenate axis", lambda: tnp.concatenate([_e(), _e()], axis=5), ShapeError,
     ["concatenate", "axis 5"]),
    ("stack shapes", lambda: tnp.stack([_e(), _e().T]), ShapeError, ["stack", "[2, 3]"]),
    ("stack ragged tensors", lambda: tnp.array([[tp.tensor(1.0), tp.tensor(1.0)],
                                                [tp.tensor(1.0)]]), ShapeError, ["array"]),
    ("split unequal", lambda: tnp.split(_e(), 4, axis=1), ShapeError, ["split", "3", "4"]),
    ("split zero", lambda: tnp.split(_e(), 0, axis=1), ArgumentValueError, ["split", "0"]),
    ("split float index", lambda: tnp.split(_e(), [0.5], axis=1), ArgumentError,
     ["split", "0.5"]),
    ("tile float", lambda: tnp.tile(_e(), 1.5), ArgumentError, ["tile", "1.5"]),
    ("tile negative", lambda: tnp.tile(_e(), -1), ArgumentValueError, ["tile", "-1"]),
    ("repeat negative", lambda: _e().repeat(-1), ArgumentValueError, ["repeat", "negative"]),
    ("repeat float", lambda: _e().repeat(1.5), ArgumentError, ["repeat", "float64"]),
    ("pad negative", lambda: tnp.pad(_e(), -1), ArgumentValueError, ["pad", "negative"]),
    ("pad mode", lambda: tnp.pad(_e(), 1, mode="foo"), ArgumentError, ["pad", "'foo'"]),
    ("rot90 axes", lambda: tnp.rot90(_e(), axes=(0,)), ArgumentValueError, ["rot90", "axes"]),
    ("rot90 k", lambda: tnp.rot90(_e(), 1.5), ArgumentError, ["rot90", "1.5"]),
    ("diagonal offset", lambda: _e().diagonal(offset=0.5), ArgumentError,
     ["diagonal", "offset", "0.5"]),
    ("tril k", lambda: tnp.tril(_m(), "a"), ArgumentError, ["tril", "k", "'a'"]),
    ("diagonal same axes", lambda: _e().diagonal(axis1=0, axis2=0), ShapeError, ["diagonal"]),
    ("diff order", lambda: tnp.diff(_e(), n=-1), ArgumentValueError, ["diff", "-1"]),
    ("diff 0-d", lambda: tnp.diff(tp.tensor(1.0)), ShapeError, ["diff"]),
    ("ravel order", lambda: _e().ravel(order="X"), ArgumentValueError, ["ravel", "'X'"]),
    # ---- einsum, products, elementwise
    ("einsum sizes", lambda: tnp.einsum("ij,jk->ik", _x(), _x()), ShapeError,
     ["einsum", "'j'"]),
    ("einsum operands", lambda: tnp.einsum("ij,jk->ik", _x()), ShapeError,
     ["einsum", "2 terms"]),
    ("einsum bad letter", lambda: tnp.einsum("i$->i", _x()), ArgumentValueError,
     ["einsum", "'$'"]),
    ("einsum two arrows", lambda: tnp.einsum("ij->ji->ij", _x()), ArgumentValueError,
     ["einsum", "'->'"]),
    ("einsum nothing", lambda: tnp.einsum(), ArgumentValueError, ["einsum", "subscripts"]),
    ("einsum sublist", lambda: tnp.einsum(_x(), [0, 99]), ArgumentValueError,
     ["einsum", "99"]),
    ("matmul", lambda: _x() @ _x(), ShapeError, ["matmul", "[2, 3]"]),
    ("add shapes", lambda: _x() + tp.input((4,)), ShapeError, ["add", "[2, 3]", "[4]"]),
    ("add ragged list", lambda: _e() + [[1, 2], [3]], ShapeError, ["add", "ragged"]),
    ("add str", lambda: _e() + "a", DTypeError, ["add", "<U1"]),
    ("power int negative", lambda: tp.tensor([2], dtype="int64") ** -1, DTypeError,
     ["power", "negative"]),
    ("ufunc keyword", lambda: tnp.exp(_e(), foo=1), ArgumentError, ["exp", "'foo'"]),
    ("ufunc out", lambda: np.exp(_e(), out=np.ones((2, 3))), NotDifferentiableError,
     ["exp", "out="]),
    ("unsupported numpy", lambda: np.polyfit(_e(), _e(), 1), NotDifferentiableError,
     ["polyfit"]),
    ("where one branch", lambda: tnp.where(_e() > 0, _e()), ArgumentValueError, ["where"]),
    ("clip both bounds", lambda: tnp.clip(_e(), 0, 1, min=0), ArgumentValueError, ["clip"]),
    ("astype", lambda: _e().astype("foo"), DTypeError, ["foo"]),
    ("var ddof", lambda: _e().var(ddof="a"), ArgumentError, ["var", "ddof"]),
    ("linspace num", lambda: tnp.linspace(tp.tensor(0.0), 1.0, 2.5), ArgumentError,
     ["linspace", "num"]),
    ("linspace negative", lambda: tnp.linspace(tp.tensor(0.0), 1.0, -1), ArgumentValueError,
     ["linspace", "-1"]),
    ("full float shape", lambda: tnp.full((2.5,), tp.tensor(1.0)), ArgumentError,
     ["full", "2.5"]),
    # ---- sorting and indexing
    ("argsort kind", lambda: tnp.argsort(_e(), kind="foo"), ArgumentValueError,
     ["argsort", "'foo'"]),
    ("sort kind", lambda: tnp.sort(_e(), kind="foo"), ArgumentValueError, ["sort", "'foo'"]),
    ("searchsorted side", lambda: tnp.searchsorted(tp.tensor([1.0, 2.0]), 1.0, side="x"),
     ArgumentValueError, ["searchsorted", "'x'"]),
    ("index out of bounds", lambda: _x()[5], IndexingError, ["index 5", "size 2"]),
    ("index str", lambda: _e()["a"], ArgumentError, ["index 'a'"]),
    ("take mode", lambda: _e().take(0, mode="foo"), ArgumentValueError, ["take", "'foo'"]),
    ("take float", lambda: _e().take(1.5), ArgumentError, ["take", "float64"]),
    ("at set str", lambda: _e().at[0].set("abc"), DTypeError, ["x.at[...]", "<U3"]),
    ("at set shape", lambda: _e().at[0].set(np.ones(5)), ShapeError, ["x.at[...]", "[5]"]),
    # ---- transforms
    ("grad argnums range", lambda: tp.grad(lambda a: a.sum(), argnums=3)(np.ones(2)),
     ArgumentError, ["grad", "argnums", "3"]),
    ("grad argnums str", lambda: tp.grad(lambda a: a.sum(), argnums="a")(np.ones(2)),
     ArgumentError, ["grad", "argnums", "'a'"]),
    ("grad argnums float", lambda: tp.grad(lambda a: a.sum(), argnums=0.5)(np.ones(2)),
     ArgumentError, ["grad", "argnums", "0.5"]),
    ("grad non-scalar", lambda: tp.grad(lambda a: a)(np.ones(2)), GraphError, ["grad", "[2]"]),
    ("grad returns None", lambda: tp.grad(lambda a: None)(1.0), ArgumentError,
     ["grad", "NoneType"]),
    ("grad complex", lambda: tp.grad(lambda a: a * 1j)(1.0), DTypeError, ["grad", "complex"]),
    ("ad.grad non-scalar", lambda: tp.ad.grad(_x(), _x()), GraphError, ["grad", "[2, 3]"]),
    ("ad.grad eager loss", lambda: tp.ad.grad(tp.tensor(1.0), _x()), ArgumentError,
     ["grad", "Tensor"]),
    ("ad.vjp cotangent shape", lambda: tp.ad.vjp(_x(), _x(), np.ones(3)), ShapeError,
     ["vjp", "cotangent 0", "[3]"]),
    ("ad.jvp tangent shape", lambda: tp.ad.jvp(_x(), _x(), np.ones(3)), ShapeError,
     ["jvp", "tangent 0", "[3]"]),
    ("ad.jvp complex tangent", lambda: tp.ad.jvp(_x(), _x(), np.ones((2, 3)) * 1j),
     DTypeError, ["jvp", "complex"]),
    ("jvp tangent shape", lambda: tp.jvp(lambda a: a * 2, (np.ones(2),), (np.ones(3),)),
     ShapeError, ["jvp", "[3]"]),
    ("jvp primals array", lambda: tp.jvp(lambda a: a * 2, np.ones(2), np.ones(2)),
     ArgumentError, ["jvp", "primals", "ndarray"]),
    ("vjp cotangent shape", lambda: tp.vjp(lambda a: a * 2, np.ones(2))[1](np.ones(3)),
     ShapeError, ["vjp", "[3]"]),
    ("vjp cotangent str", lambda: tp.vjp(lambda a: a * 2, np.ones(2))[1](np.array(["a", "b"])),
     DTypeError, ["vjp", "<U1"]),
    ("backward not requiring grad", lambda: tp.tensor(1.0).backward(), GraphError,
     ["backward", "requires_grad"]),
    ("backward non-scalar", lambda: (_e() * 2).backward(), GraphError, ["backward", "[2, 3]"]),
    ("backward gradient shape", lambda: (_e() * 2).backward(np.ones(3)), ShapeError,
     ["backward", "[3]"]),
    ("backward complex gradient", lambda: (_e() * 2).backward(np.ones((2, 3)) * 1j),
     DTypeError, ["backward", "complex"]),
    ("jit static_argnums str", lambda: tp.jit(lambda a: a, static_argnums="x"), ArgumentError,
     ["jit", "static_argnums"]),
    ("jit static_argnums range", lambda: tp.jit(lambda a, b: a, static_argnums=3)(1.0, 2.0),
     ArgumentError, ["jit", "static_argnums", "2 arguments"]),
    ("jit negative static", lambda: tp.jit(lambda a: a, static_argnums=-1), ArgumentValueError,
     ["jit", "-1"]),
    ("checkpoint non-callable", lambda: tp.checkpoint(3), ArgumentError,
     ["checkpoint", "callable"]),
    ("fixed_point tol", lambda: tp.fixed_point(lambda z: z, np.ones(2), tol=-1), ArgumentError,
     ["fixed_point", "tol"]),
    # ---- tp.linalg
    ("svd vector", lambda: tp.linalg.svd(tp.tensor(np.ones(3))), ShapeError, ["svd", "[3]"]),
    ("svd eps negative", lambda: tp.linalg.svd(_m(), eps=-1), ArgumentValueError,
     ["svd", "eps", "-1"]),
    ("svd eps str", lambda: tp.linalg.svd(_m(), eps="a"), ArgumentError, ["svd", "eps", "'a'"]),
    ("qr mode", lambda: tp.linalg.qr(_m(), mode="foo"), ArgumentValueError, ["qr", "'foo'"]),
    ("eigh UPLO", lambda: tp.linalg.eigh(_m(), UPLO="X"), ArgumentValueError, ["eigh", "'X'"]),
    ("eigh non-square", lambda: tp.linalg.eigh(_e()), ShapeError, ["eigh", "[2, 3]"]),
    ("solve shapes", lambda: tp.linalg.solve(_m(), np.ones(4)), ShapeError, ["solve"]),
    ("norm ord", lambda: tp.linalg.norm(_m(), ord="foo"), ArgumentValueError,
     ["norm", "'foo'"]),
    ("norm vector ord list", lambda: tp.linalg.norm(tp.tensor(np.ones(3)), ord=[1]),
     ArgumentValueError, ["norm", "[1]"]),
    ("norm axis str", lambda: tp.linalg.norm(_m(), axis="a"), ArgumentError, ["norm", "'a'"]),
    ("norm duplicate axes", lambda: tp.linalg.norm(_m(), axis=(0, 0)), ShapeError,
     ["norm", "duplicate"]),
    ("matrix_power float", lambda: tp.linalg.matrix_power(_m(), 1.5), ArgumentError,
     ["matrix_power", "1.5"]),
    ("multi_dot one", lambda: tp.linalg.multi_dot([_m()]), ArgumentValueError, ["multi_dot"]),
    ("pinv rcond str", lambda: tp.linalg.pinv(_m(), rcond="a"), ArgumentError,
     ["pinv", "rcond"]),
    ("svds k", lambda: tp.linalg.svds(_m(), 5), ShapeError, ["svds", "k=5"]),
    ("svds method", lambda: tp.linalg.svds(_m(), 1, method="x"), ArgumentValueError,
     ["svds", "'x'"]),
    ("svds tol str", lambda: tp.linalg.svds(_m(), 1, tol="a"), ArgumentError, ["svds", "tol"]),
    ("eigsh which", lambda: tp.linalg.eigsh(_m(), 1, which="x"), ArgumentValueError,
     ["eigsh", "'x'"]),
    # ---- configuration
    ("blas_threads", lambda: setattr(tp.config, "blas_threads", "x"), ArgumentError,
     ["tp.config.blas_threads", "'x'"]),
    ("broadening negative", lambda: setattr(tp.linalg.config, "broadening", -1),
     ArgumentValueError, ["tp.linalg.config.broadening", "-1"]),
    ("broadening str", lambda: setattr(tp.linalg.config, "broadening", "1e-8"), ArgumentError,
     ["tp.linalg.config.broadening"]),
    ("gauge_check", lambda: setattr(tp.linalg.config, "gauge_check", "foo"),
     ArgumentValueError, ["tp.linalg.config.gauge_check", "'foo'"]),
    ("gauge_rtol", lambda: setattr(tp.linalg.config, "gauge_rtol", -1.0), ArgumentValueError,
     ["tp.linalg.config.gauge_rtol"]),
]


@pytest.mark.parametrize("call,cls,words", [case[1:] for case in MISUSE],
                         ids=[case[0] for case in MISUSE])
def test_misuse_raises_a_tenpy_ad_error_naming_the_op(call, cls, words,
                                                      restore_linalg_config):
    with pytest.raises(TenpyAdError) as info:
        call()
    error = info.value
    assert isinstance(error, cls), f"{type(error).__name__}: {error}"
    message = str(error)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"


# ------------------------------------------------------------------ the hierarchy

@pytest.mark.parametrize("cls,bases", [
    (ArgumentValueError, (ValueError,)),
    (ArgumentError, (TypeError,)),
    (TapeError, (GraphError, RuntimeError, ValueError)),
    (MissingRuleError, (NotImplementedError,)),
])
def test_new_classes_keep_the_builtin_bases(cls, bases):
    assert issubclass(cls, TenpyAdError)
    for base in bases:
        assert issubclass(cls, base)
    assert errors.ALL[cls.__name__] is cls


# ------------------------------------------------------------------ named in the audit

def test_second_backward_through_a_freed_graph_is_a_tape_error():
    b = tp.tensor(0.3, requires_grad=True)
    loss = tp.exp(b * b)
    loss.backward()
    with pytest.raises(TapeError) as info:
        loss.backward()
    assert isinstance(info.value, RuntimeError)          # what PyTorch raises
    message = str(info.value)
    assert message.startswith("backward: the graph has been freed by a previous backward()")
    assert "backward(retain_graph=True) the first time" in message
    assert "'exp'" in message                            # the entry whose values are gone


def test_grad_of_through_a_freed_graph_names_itself():
    b = tp.tensor(0.3, requires_grad=True)
    y = b * b
    y.backward()
    with pytest.raises(TapeError, match="^grad_of: the graph has been freed"):
        tp.grad_of(y, b)


def test_a_shape_beyond_int64_is_a_shape_error_wherever_it_is_made():
    with pytest.raises(ShapeError, match=r"tp\.input: shape \[9223372036854775808\]"):
        tp.input((2**63,))
    x = tp.input((3,))
    with pytest.raises(ParamError, match="broadcast_in_dim: shape.*9223372036854775808"):
        tp.broadcast_to(x, (2**63, 3))


def test_an_input_numpy_can_hold_is_accepted():
    assert tp.input((2**40, 0)).shape == (2**40, 0)     # no elements
    assert tp.input((1,) * 64).ndim == 64


def test_unnamed_program_inputs_read_naturally():
    a, b = tp.input((2,)), tp.input((), name="b")
    assert repr(a) == "TracedTensor(input, float64[2])"
    program = tp.compile(a.sum() * b, inputs=[a, b])
    listing = str(program)
    assert "None" not in listing
    assert "= input\n" in listing and "= input 'b'" in listing
    with pytest.raises(ProgramInputError) as info:
        program(np.ones(2))
    assert "(input 0, 'b')" in str(info.value)
    with pytest.raises(ProgramInputError) as info:
        program(np.ones(3), 1.0)
    assert str(info.value).startswith("program: input 0: expected shape [2]")
    assert "None" not in str(info.value)


def test_a_missing_rule_is_a_tenpy_ad_error_and_not_implemented_error():
    prim = primitive("hygiene_no_rules", lambda params, x: x * 2.0, lambda params, x: x)
    try:                 # out of the registry afterwards (test_rules.py covers every one)
        x = tp.input((2,))
        y = bind1(prim, None, x).sum()
        with pytest.raises(MissingRuleError, match="^no VJP rule for 'hygiene_no_rules'$") \
                as info:
            tp.ad.grad(y, x)
        assert isinstance(info.value, NotImplementedError)
    finally:
        PRIMITIVES.pop(prim.name)


# ------------------------------------------------------------------ the sources

_RAW_RAISE = re.compile(r"^\s*raise\s+(ValueError|TypeError|RuntimeError|KeyError|IndexError|"
                        r"AssertionError|OverflowError|AttributeError|NotImplementedError)"
                        r"\s*(\(|$)", re.M)

# file -> how many raw raises it keeps, and why
_ALLOWED = {
    "tenpy_ad/testing.py": 2,            # AssertionError: a failed gradient check is a test failure
    "_core/small_kernels.pxi": 1,        # NotImplementedError of an abstract cdef method
    "tenpy_ad/param_schema.py": 4,       # NotImplementedError of abstract Schema methods
}


def _engine_sources():
    for folder, pattern in (("tenpy_ad", "*.py"), ("_core", "*.pxi"), ("_core", "*.pyx")):
        for path in sorted((ROOT / folder).rglob(pattern)):
            relative = path.relative_to(ROOT).as_posix()
            if not relative.startswith("tenpy_ad/cli/"):     # the CLI exits with its own
                yield relative, path.read_text()              # messages and codes


def test_the_engine_raises_no_builtin_exception_of_its_own():
    found = {}
    for relative, text in _engine_sources():
        count = len(_RAW_RAISE.findall(text))
        if count:
            found[relative] = count
    assert found == _ALLOWED

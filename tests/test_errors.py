"""Bad input fails early and clearly (invariant 5 of ARCHITECTURE.md).

* shape errors are raised when an op is *built* (traced inputs), naming the op and shapes;
* a compiled Program checks the count, shapes and dtypes of its inputs before any work
  (proved with the deterministic ``instructions_run`` counter);
* misuse of traced values, unsupported dtypes, unbound inputs and non-scalar losses raise
  the documented error classes, all subclasses of ``TenpyAdError``.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad import errors
from tenpy_ad.errors import (ConcretizationError, DTypeError, GraphError, ProgramInputError,
                             ShapeError, TenpyAdError)


def mentions_shape(message: str, shape) -> bool:
    """``message`` spells the dims of ``shape`` in order, e.g. '[3, 4]', '(3, 4)', '3x4'."""
    pattern = r"(?<![\d.])" + r"\D{1,3}".join(str(d) for d in shape) + r"(?![\d.])"
    return re.search(pattern, message) is not None


def check_error(excinfo, cls, *words, shapes=()):
    """The raised error is exactly documented: class, base classes, words and shapes."""
    error = excinfo.value
    assert isinstance(error, cls)
    assert isinstance(error, TenpyAdError)
    message = str(error)
    for word in words:
        assert word.lower() in message.lower(), f"{word!r} not in {message!r}"
    for shape in shapes:
        assert mentions_shape(message, shape), f"shape {shape} not named in {message!r}"
    return message


def test_mentions_shape_helper():
    assert mentions_shape("add: shapes [3, 4], [5] cannot be broadcast", (3, 4))
    assert mentions_shape("float64[3,4]", (3, 4))
    assert mentions_shape("(3, 4)", (3, 4))
    assert not mentions_shape("[3, 44]", (3, 4))
    assert not mentions_shape("[13, 4]", (3, 4))
    assert not mentions_shape("[4, 3]", (3, 4))


# ------------------------------------------------------------------ the hierarchy

@pytest.mark.parametrize("name", sorted(errors.ALL))
def test_every_error_is_a_tenpy_ad_error(name):
    assert issubclass(errors.ALL[name], TenpyAdError)


@pytest.mark.parametrize("cls,base", [
    (ShapeError, ValueError), (DTypeError, TypeError), (ProgramInputError, ValueError),
    (GraphError, ValueError), (ConcretizationError, TypeError),
    (errors.NonFiniteError, FloatingPointError), (errors.SaveFormatError, ValueError),
    (errors.InternalError, RuntimeError),
])
def test_errors_also_derive_from_the_builtin_a_numpy_user_expects(cls, base):
    assert issubclass(cls, base)
    assert issubclass(cls, TenpyAdError)


def test_errors_are_exported():
    assert tp.errors is errors
    assert set(errors.ALL) >= {"TenpyAdError", "ShapeError", "DTypeError",
                               "ConcretizationError", "ProgramInputError", "GraphError"}


# ------------------------------------------------------------------ build-time shape errors

BINARY = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b,
}
BINARY_FN = {"add": tp.add, "subtract": tp.subtract, "multiply": tp.multiply,
             "divide": tp.divide}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_shape_mismatch_traced(name):
    x, y = tp.input((3, 4)), tp.input((5,))
    with pytest.raises(ShapeError) as excinfo:
        BINARY[name](x, y)
    check_error(excinfo, ShapeError, name, shapes=[(3, 4), (5,)])
    with pytest.raises(ValueError):
        BINARY_FN[name](x, y)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_shape_mismatch_same_rank(name):
    x, y = tp.input((3, 4)), tp.input((4, 3))
    with pytest.raises(ShapeError) as excinfo:
        BINARY[name](x, y)
    check_error(excinfo, ShapeError, name, shapes=[(3, 4), (4, 3)])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_shape_mismatch_with_ndarray(name):
    x = tp.input((3, 4))
    with pytest.raises(ShapeError) as excinfo:
        BINARY[name](x, np.ones((2, 7)))
    check_error(excinfo, ShapeError, name, shapes=[(3, 4), (2, 7)])
    with pytest.raises(ShapeError) as excinfo:
        BINARY[name](np.ones((2, 7)), x)
    check_error(excinfo, ShapeError, name, shapes=[(3, 4), (2, 7)])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_shape_mismatch_eager(name):
    a, b = tp.tensor(np.ones((3, 4))), tp.tensor(np.ones((5,)))
    with pytest.raises(ShapeError) as excinfo:
        BINARY[name](a, b)
    check_error(excinfo, ShapeError, name, shapes=[(3, 4), (5,)])


def test_binary_mismatch_with_different_dtypes_still_shape_error():
    x, y = tp.input((3, 4), "float32"), tp.input((6,), "complex128")
    with pytest.raises(ShapeError) as excinfo:
        x * y
    check_error(excinfo, ShapeError, "multiply", shapes=[(3, 4), (6,)])


@pytest.mark.parametrize("sa,sb", [((3, 4), (5, 6)), ((3,), (4,)), ((3, 4), (5,)),
                                   ((7,), (3, 4)), ((2, 3, 4), (2, 5, 6))])
def test_matmul_contracted_axis_mismatch(sa, sb):
    x, y = tp.input(sa), tp.input(sb)
    with pytest.raises(ShapeError) as excinfo:
        x @ y
    check_error(excinfo, ShapeError, "matmul", shapes=[sa, sb])
    with pytest.raises(ShapeError):
        tp.matmul(x, y)


def test_matmul_batch_mismatch():
    x, y = tp.input((2, 3, 4)), tp.input((5, 4, 6))
    with pytest.raises(ShapeError) as excinfo:
        x @ y
    message = check_error(excinfo, ShapeError, "matmul")
    assert re.search(r"(?<!\d)2(?!\d)", message) and re.search(r"(?<!\d)5(?!\d)", message), \
        message


def test_matmul_zero_dim_operand():
    x, y = tp.input(()), tp.input((3,))
    with pytest.raises(ShapeError) as excinfo:
        x @ y
    check_error(excinfo, ShapeError, "matmul")


def test_matmul_with_ndarray_mismatch():
    x = tp.input((3, 4))
    with pytest.raises(ShapeError) as excinfo:
        x @ np.ones((5, 2))
    check_error(excinfo, ShapeError, "matmul", shapes=[(3, 4), (5, 2)])
    with pytest.raises(ShapeError) as excinfo:
        np.ones((2, 5)) @ x
    check_error(excinfo, ShapeError, "matmul", shapes=[(2, 5), (3, 4)])


def test_einsum_letter_size_mismatch():
    x, y = tp.input((3, 4)), tp.input((5, 6))
    with pytest.raises(ShapeError) as excinfo:
        tp.einsum("ij,jk->ik", x, y)
    check_error(excinfo, ShapeError, "einsum", "ij,jk->ik", "j", shapes=[(3, 4), (5, 6)])


def test_einsum_wrong_number_of_letters():
    x = tp.input((3, 4))
    with pytest.raises(ShapeError) as excinfo:
        tp.einsum("ijk->k", x)
    check_error(excinfo, ShapeError, "einsum", "ijk", shapes=[(3, 4)])


def test_einsum_wrong_number_of_operands():
    x = tp.input((3, 4))
    with pytest.raises(ShapeError) as excinfo:
        tp.einsum("ij,jk->ik", x)
    check_error(excinfo, ShapeError, "einsum")


def test_einsum_output_letter_not_in_inputs():
    x = tp.input((3, 4))
    with pytest.raises(ShapeError) as excinfo:
        tp.einsum("ij->ik", x)
    check_error(excinfo, ShapeError, "einsum", "ik")


def test_einsum_trace_of_non_square():
    x = tp.input((3, 4))
    with pytest.raises(ShapeError) as excinfo:
        tp.einsum("ii->", x)
    check_error(excinfo, ShapeError, "einsum", shapes=[(3, 4)])


def test_einsum_four_operand_mismatch():
    a, b, c, d = (tp.input((2, 3, 4)), tp.input((5, 2, 4)), tp.input((5, 3, 4)),
                  tp.input((3, 7, 4)))               # d: z has size 7, c says 3
    with pytest.raises(ShapeError) as excinfo:
        tp.einsum("xwu,yxl,yzd,wzr->uldr", a, b, c, d)
    message = check_error(excinfo, ShapeError, "einsum", "z")
    assert mentions_shape(message, (3, 7, 4)), message


def test_tensordot_mismatch():
    x, y = tp.input((2, 3, 4)), tp.input((5, 6))
    with pytest.raises(ShapeError) as excinfo:
        tp.tensordot(x, y, 1)
    check_error(excinfo, ShapeError, shapes=[(2, 3, 4), (5, 6)])
    with pytest.raises(ShapeError):
        tp.tensordot(x, y, ([0, 1], [0]))


@pytest.mark.parametrize("target", [(5,), (5, 2), (-1, 5), (7, -1), (2, 2, 2)])
def test_reshape_size_mismatch(target):
    x = tp.input((3, 4))
    with pytest.raises(ShapeError) as excinfo:
        x.reshape(target)
    check_error(excinfo, ShapeError, "reshape", shapes=[(3, 4), target])
    with pytest.raises(ShapeError):
        tp.reshape(x, target)


def test_reshape_two_unknowns():
    x = tp.input((3, 4))
    with pytest.raises(ShapeError) as excinfo:
        x.reshape(-1, -1)
    check_error(excinfo, ShapeError, "reshape")


def test_reshape_mismatch_eager():
    with pytest.raises(ShapeError) as excinfo:
        tp.tensor(np.ones((3, 4))).reshape(5, 2)
    check_error(excinfo, ShapeError, "reshape", shapes=[(3, 4), (5, 2)])


def test_transpose_bad_axes():
    x = tp.input((2, 3, 4))
    with pytest.raises(ShapeError) as excinfo:
        x.transpose(0, 0, 1)
    check_error(excinfo, ShapeError, "transpose", shapes=[(2, 3, 4)])
    with pytest.raises(ShapeError):
        x.transpose(1, 0)


def test_sum_axis_out_of_range():
    x = tp.input((2, 3))
    with pytest.raises(ShapeError) as excinfo:
        x.sum(axis=2)
    check_error(excinfo, ShapeError, "sum")
    with pytest.raises(ShapeError):
        x.max(axis=-3)


def test_index_out_of_range():
    x = tp.input((2, 3))
    with pytest.raises(ShapeError) as excinfo:
        x[5]
    check_error(excinfo, ShapeError, "5", shapes=[(2, 3)])
    with pytest.raises(ShapeError):
        x[0, 0, 0]
    with pytest.raises(ShapeError):
        x[..., 0, ...]


def test_broadcast_in_dim_incompatible():
    x = tp.input((3,))
    with pytest.raises(ShapeError) as excinfo:
        tp.broadcast_in_dim(x, (2, 4), (1,))
    check_error(excinfo, ShapeError, "broadcast_in_dim", shapes=[(3,), (2, 4)])


def test_failed_build_leaves_no_partial_state():
    x, y = tp.input((3, 4)), tp.input((5,))
    with pytest.raises(ShapeError):
        x + y
    out = (x + x).sum()                     # the graph is still usable
    assert float(tp.evaluate(out, {x: np.ones((3, 4))})) == 24.0


# ------------------------------------------------------------------ Program input checks

@pytest.fixture
def program():
    """A program whose instructions would all happily run on wrong-shaped or complex
    arrays, so only the input checks can stop them."""
    x = tp.input((2, 3), dtype="float64", name="x")
    out = ((x * x) * 0.5).sum()
    f = tp.compile([out], inputs=[x])
    assert f.n_instructions > 0
    return f


def _run_counted(f, *args):
    before = tp.counters()["instructions_run"]
    try:
        return f(*args)
    finally:
        run = tp.counters()["instructions_run"] - before
        _run_counted.last = run


def test_program_good_call_runs_and_counts(program):
    """Positive control: a valid call does the work and the counter sees it."""
    tp.reset_counters()
    assert tp.counters()["instructions_run"] == 0
    (value,) = _run_counted(program, np.ones((2, 3)))
    assert value == pytest.approx(3.0)
    assert _run_counted.last == program.n_instructions
    # float32 -> float64 and integers -> float64 are safe casts: accepted
    (value,) = _run_counted(program, np.ones((2, 3), np.float32))
    assert value == pytest.approx(3.0)
    (value,) = _run_counted(program, np.full((2, 3), 2, dtype=np.int64))
    assert value == pytest.approx(12.0)
    assert tp.counters()["instructions_run"] == 3 * program.n_instructions


@pytest.mark.parametrize("shape", [(3, 2), (2, 3, 1), (6,), (), (2, 4)])
def test_program_wrong_shape(program, shape):
    tp.reset_counters()
    with pytest.raises(ProgramInputError) as excinfo:
        _run_counted(program, np.ones(shape))
    check_error(excinfo, ProgramInputError, "shape", shapes=[(2, 3)])
    assert isinstance(excinfo.value, ValueError)
    assert _run_counted.last == 0
    assert tp.counters()["instructions_run"] == 0


@pytest.mark.parametrize("value", [np.ones((2, 3), np.complex128), np.ones((2, 3), np.complex64),
                                   np.ones((2, 3)) + 0j])
def test_program_complex_into_float64(program, value):
    tp.reset_counters()
    with pytest.raises(ProgramInputError) as excinfo:
        _run_counted(program, value)
    check_error(excinfo, ProgramInputError, "dtype", "float64", value.dtype.name)
    assert _run_counted.last == 0


def test_program_float64_into_float32():
    x = tp.input((4,), dtype="float32", name="v")
    f = tp.compile([(x * x).sum()], inputs=[x])
    (ok,) = f(np.ones(4, np.float32))
    assert ok.dtype == np.float32 and ok == 4.0
    tp.reset_counters()
    with pytest.raises(ProgramInputError) as excinfo:
        _run_counted(f, np.ones(4, np.float64))
    check_error(excinfo, ProgramInputError, "float32", "float64")
    assert _run_counted.last == 0
    with pytest.raises(ProgramInputError):
        _run_counted(f, np.ones(4, np.complex64))
    assert _run_counted.last == 0
    assert tp.counters()["instructions_run"] == 0


@pytest.mark.parametrize("n_args", [0, 2, 3])
def test_program_wrong_number_of_inputs(program, n_args):
    tp.reset_counters()
    with pytest.raises(ProgramInputError) as excinfo:
        _run_counted(program, *[np.ones((2, 3))] * n_args)
    message = check_error(excinfo, ProgramInputError, "1", str(n_args))
    assert re.search(r"\bx\b", message), message   # names the expected input
    assert _run_counted.last == 0


def test_program_second_input_wrong_checked_before_work():
    x, y = tp.input((2, 3), name="x"), tp.input((3,), name="y")
    f = tp.compile([(x * y).sum()], inputs=[x, y])
    tp.reset_counters()
    with pytest.raises(ProgramInputError) as excinfo:
        _run_counted(f, np.ones((2, 3)), np.ones((4,)))
    check_error(excinfo, ProgramInputError, "y", shapes=[(3,), (4,)])
    assert _run_counted.last == 0
    with pytest.raises(ProgramInputError):
        _run_counted(f, np.ones((2, 3)), np.ones((3,), np.complex128))
    assert _run_counted.last == 0


def test_evaluate_wrong_shape():
    x = tp.input((2, 2))
    tp.reset_counters()
    with pytest.raises(ProgramInputError):
        tp.evaluate((x * x).sum(), {x: np.ones((3, 3))})
    assert tp.counters()["instructions_run"] == 0


# ------------------------------------------------------------------ AD misuse

@pytest.mark.parametrize("shape", [(3,), (2, 2), (1,)])
def test_grad_of_non_scalar_loss(shape):
    x = tp.input(shape)
    with pytest.raises(GraphError) as excinfo:
        tp.ad.grad(x * x, x)
    check_error(excinfo, GraphError, "scalar")
    assert isinstance(excinfo.value, ValueError)


def test_grad_of_scalar_loss_is_fine():
    x = tp.input((3,))
    g = tp.ad.grad((x * x).sum(), x)
    np.testing.assert_allclose(tp.evaluate(g, {x: np.array([1.0, 2.0, 3.0])}), [2.0, 4.0, 6.0],
                               rtol=1e-15)


# ------------------------------------------------------------------ concretization

CONCRETIZE = {
    "bool": bool,
    "if": lambda t: 1 if t else 0,
    "float": float,
    "int": int,
    "complex": complex,
    "np.asarray": np.asarray,
    "np.array": np.array,
    "range": lambda t: range(t),
}


@pytest.mark.parametrize("what", sorted(CONCRETIZE))
def test_traced_value_cannot_be_concretized(what):
    x = tp.input((), name="x")
    target = x * x
    with pytest.raises(ConcretizationError) as excinfo:
        CONCRETIZE[what](target)
    check_error(excinfo, ConcretizationError)
    assert isinstance(excinfo.value, TypeError)


def test_concretization_message_is_helpful():
    x = tp.input((2,), name="weights")
    with pytest.raises(ConcretizationError) as excinfo:
        bool(x.sum())
    check_error(excinfo, ConcretizationError, "traced", "evaluate")


def test_indexing_with_a_float_tensor():
    x, i = tp.input((3,)), tp.input(())
    with pytest.raises(TypeError) as excinfo:
        x[i]
    check_error(excinfo, errors.ArgumentError, "integer")


def test_indexing_with_a_traced_mask():
    x = tp.input((3,))
    with pytest.raises(ConcretizationError) as excinfo:
        x[x > 0]
    check_error(excinfo, ConcretizationError, "mask", "where")


# ------------------------------------------------------------------ tp.input / dtypes

@pytest.mark.parametrize("shape", [(-1,), (2, -3), -2])
def test_input_negative_dimension(shape):
    with pytest.raises(ShapeError) as excinfo:
        tp.input(shape)
    check_error(excinfo, ShapeError, "negative")


def test_input_bad_shape_type():
    """The documented error for a shape that is not a tuple of ints is ShapeError."""
    for shape in (None, 2.5):
        with pytest.raises(ShapeError) as excinfo:
            tp.input(shape)
        check_error(excinfo, ShapeError, "shape")
    with pytest.raises(ShapeError) as excinfo:
        tp.input(("a", 2))
    check_error(excinfo, ShapeError, "shape")


def test_input_fractional_dimension_is_not_truncated():
    """np.zeros((2.5, 3)) refuses a float dimension; tp.input must not silently make (2, 3)."""
    with pytest.raises(TypeError):
        np.zeros((2.5, 3))
    with pytest.raises(ShapeError) as excinfo:
        tp.input((2.5, 3))
    check_error(excinfo, ShapeError, "2.5")


@pytest.mark.parametrize("dtype", ["float16", np.float16, np.longdouble, np.clongdouble])
def test_input_unsupported_dtype(dtype):
    with pytest.raises(DTypeError) as excinfo:
        tp.input((2,), dtype=dtype)
    message = check_error(excinfo, DTypeError)
    assert np.dtype(dtype).name in message
    assert isinstance(excinfo.value, TypeError)


def test_input_not_a_dtype():
    with pytest.raises(DTypeError) as excinfo:
        tp.input((2,), dtype="not-a-dtype")
    check_error(excinfo, DTypeError, "not-a-dtype")


@pytest.mark.parametrize("dtype", ["float16", np.longdouble])
def test_tensor_unsupported_dtype(dtype):
    with pytest.raises(DTypeError):
        tp.tensor([1.0, 2.0], dtype=dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_supported_dtypes_accepted(dtype):
    x = tp.input((2,), dtype=dtype)
    assert x.dtype == np.dtype(dtype)


def test_complex_to_real_conversion_refused():
    z = tp.input((2,), "complex128")
    with pytest.raises(DTypeError) as excinfo:
        z.astype("float64")
    check_error(excinfo, DTypeError, "complex128", "float64")


# ------------------------------------------------------------------ compile misuse

def test_compile_with_missing_input_names_it():
    x = tp.input((2,), name="alpha")
    z = tp.input((2,), name="zeta_missing")
    out = (x * z).sum()
    with pytest.raises(GraphError) as excinfo:
        tp.compile([out], inputs=[x])
    check_error(excinfo, GraphError, "zeta_missing", "inputs")
    assert isinstance(excinfo.value, ValueError)


def test_compile_input_listed_twice():
    x = tp.input((2,), name="x")
    with pytest.raises(GraphError):
        tp.compile([x.sum()], inputs=[x, x])


def test_compile_input_that_is_not_a_placeholder():
    x = tp.input((2,), name="x")
    with pytest.raises(GraphError):
        tp.compile([x.sum()], inputs=[x * 2.0])


# ------------------------------------------------------------------ every deliberate error

def _misuse_cases():
    x = tp.input((3,), name="x")
    return {
        "traced boolean mask": lambda: x[x > 0],
        "float index": lambda: x[1.5],
        "bitwise and of floats": lambda: x & x,
        "non-scalar scale factor": lambda: tp.scale(x, np.ones(3)),
        "non-string input name": lambda: tp.input((3,), name=3),
        "compile an ndarray output": lambda: tp.compile([np.ones(3)], inputs=[x]),
        "grad of an ndarray loss": lambda: tp.ad.grad(np.float64(1.0), x),
        "vjp of ndarray outputs": lambda: tp.ad.vjp([np.ones(3)], [x], [np.ones(3)]),
    }


@pytest.mark.parametrize("case", sorted(_misuse_cases()))
def test_deliberate_type_errors_are_tenpy_ad_errors(case):
    """errors.py: every error the engine raises on purpose derives from TenpyAdError (and
    from the built-in class a NumPy user expects, here TypeError)."""
    with pytest.raises(TypeError) as excinfo:
        _misuse_cases()[case]()
    assert isinstance(excinfo.value, TenpyAdError), (
        f"{case}: raised a bare {type(excinfo.value).__name__}: {excinfo.value}")


def test_missing_compiled_core_says_how_to_build():
    """Without the extension, importing tenpy_ad fails with build instructions (no slow
    fallback)."""
    import subprocess
    import sys
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'tenpy_ad._core':\n"
        "            raise ImportError('simulated: extension not built')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import tenpy_ad\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode != 0
    assert "pip install -e ." in run.stderr and "no pure-Python fallback" in run.stderr


def test_traced_tensors_iterate_over_their_static_first_axis():
    y = tp.input((3, 2), name="y")
    rows = list(y)
    assert len(rows) == 3 and all(r.shape == (2,) for r in rows)
    value = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(tp.evaluate(rows[2], {y: value}), value[2])
    with pytest.raises(TypeError):
        iter(tp.input((), name="scalar"))


def test_item_assignment_writes_an_eager_tensor():
    x = tp.tensor(np.ones(3))
    x[0] = 2.0
    np.testing.assert_array_equal(x.data, [2.0, 1.0, 1.0])


@pytest.mark.parametrize("write", [lambda x: x.__setitem__(0, 2.0),
                                   lambda x: x.fill(2.0)])
def test_a_write_into_a_shared_traced_tensor_points_to_the_functional_update(write):
    x = tp.input((3,))
    y, z = x * 2.0, x * 2.0                  # one node, the value of two expressions
    with pytest.raises(tp.errors.UnsupportedError,
                       match=r"another expression.*x\.copy\(\).*x\.at\[index\]\.set"):
        write(y)
    assert y is z

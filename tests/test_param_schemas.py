"""Every primitive declares the schema of its static params (tenpy_ad.param_schema): the
registry walk checks that each accepts a valid value and rejects malformed ones (wrong
types, unknown modes, negative axes, bad lengths), that the params the library itself
builds fit, and that a malformed param fails in every mode (traced, eager, plain arrays,
elementwise fast paths) with a ParamError naming the primitive and the part of the params.
"""
import importlib

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad._compiled import _core
from tenpy_ad.errors import IndexingError, ParamError, ShapeError
from tenpy_ad.ops import contraction, elementwise, indexing, reductions, structural
from tenpy_ad.param_schema import check_params, schema_of, slice_fits
from tenpy_ad.primitive import PRIMITIVES, bind

from specs import SPECS, make_args

# the per-output-count families register their members on first use (the modules are
# shadowed by the functions tp.checkpoint and tp.fixed_point)
importlib.import_module("tenpy_ad.checkpoint")._checkpoint_primitive(1)
importlib.import_module("tenpy_ad.fixed_point")._primitive(1)


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_every_primitive_rejects_malformed_params(name):
    prim = PRIMITIVES[name]
    schema = schema_of(prim)
    try:
        example = schema.example()
    except NotImplementedError:       # params that are objects made by the engine
        example = None
    else:
        check_params(prim, example)
    counterexamples = schema.counterexamples()
    assert counterexamples, f"{name}: no malformed params to try"
    for bad in counterexamples:
        with pytest.raises(ParamError) as excinfo:
            check_params(prim, bad)
        assert str(excinfo.value).startswith(f"{name}: "), str(excinfo.value)
        assert not schema.accepts(bad)       # the quick test agrees with the message
    if example is not None:
        assert schema.accepts(example) and schema.problem(example, "params") is None


def _spec_graphs():
    rng = np.random.default_rng(0)
    for spec in SPECS:
        for dtype in spec.dtypes:
            args = make_args(spec, dtype, rng)
            xs = [tp.input(a.shape, a.dtype) for a in args]
            out = spec.fn(*xs)
            yield [out]
            yield tp.ad.vjp([out], xs, [np.ones(out.shape, out.dtype)])
            yield tp.ad.jvp([out], xs, [np.ones(x.shape, x.dtype) for x in xs])


def test_the_params_the_library_builds_fit_their_schemas():
    reached = set()
    for outputs in _spec_graphs():
        for node in tp.introspection.graph_nodes(outputs):
            check_params(node.prim, node.params)
            reached.add(node.prim.name)
    assert len(reached) > 120


# ------------------------------------------------------------------ in every mode

def _modes(x):
    """The operand as a placeholder, an eager tensor and a plain array."""
    return {"traced": tp.input(x.shape, x.dtype), "eager": tp.tensor(x), "plain": x}


_X = np.arange(12.0).reshape(3, 4)
_INDEX = np.array([0, 2])

MALFORMED = {   # primitive, params, operands, words of the message
    "unknown gather mode": (indexing.gather_p, ((("index", 0),), "xxx"), (_X, _INDEX),
                            ["gather", "params[1]", "'xxx'", "'clip'"]),
    "negative axis": (structural.reduce_sum_p, (-1,), (_X,),
                      ["reduce_sum", "params[0] = -1", "[0, 63]"]),
    "unsorted axes": (structural.reduce_sum_p, (1, 0), (_X,), ["reduce_sum", "increasing"]),
    "negative dimension": (structural.reshape_p, (-3, -4), (_X,),
                           ["reshape", "shape[0]", "-3"]),
    "a string for an int": (structural.concatenate_p, "0", (_X, _X),
                            ["concatenate", "'0'", "an int"]),
    "a float for an int": (structural.tril_p, 1.0, (_X,), ["tril", "1.0", "an int"]),
    "a bool for an int": (reductions.argmax_p, (True,), (_X,), ["argmax", "True"]),
    "a list for a tuple": (structural.transpose_p, [1, 0], (_X,), ["transpose", "[1, 0]"]),
    "not a permutation": (structural.transpose_p, (0, 0), (_X,), ["transpose", "permutation"]),
    "a zero step": (structural.slice_p, ((0, 3, 0), (0, 4, 1)), (_X,), ["slice", "!= 0"]),
    "bad subscripts": (contraction.einsum_p, "ij->ik", (_X,), ["einsum", "'ij->ik'"]),
    "params for none": (elementwise.sin_p, 7, (_X,), ["sin", "takes no params", "7"]),
    "a float for a Scalar": (elementwise.scale_p, 0.5, (_X,), ["scale", "a Scalar"]),
    "a Scalar of the wrong kind": (elementwise.pow_p, _core.Scalar(1j), (_X,),
                                   ["pow", "a Scalar of int or float"]),
}


@pytest.mark.parametrize("mode", ["traced", "eager", "plain"])
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_params_fail_in_every_mode(case, mode):
    prim, params, operands, words = MALFORMED[case]
    args = [_modes(a)[mode] for a in operands]
    with pytest.raises(ParamError) as excinfo:
        bind(prim, params, *args)
    message = str(excinfo.value)
    assert all(w in message for w in words), message


def test_elementwise_fast_paths_check_params():
    x, y = tp.input((3,)), tp.input((3,))
    with pytest.raises(ParamError, match="mul: takes no params"):
        tp.primitive.bind2(elementwise.mul_p, 2, x, y)          # same-meta fast path
    with pytest.raises(ParamError, match="scale"):
        tp.primitive.bind1(elementwise.scale_p, _core.Scalar(True), x)
    with pytest.raises(ParamError, match="mul: takes no params"):
        tp.primitive.bind2(elementwise.mul_p, 2, np.ones(3), np.ones(3))
    assert tp.primitive.bind1(elementwise.scale_p, _core.Scalar(2.0), np.ones(3)).tolist() \
        == [2.0, 2.0, 2.0]


# ------------------------------------------------------------------ what the shape rules add

def test_slices_must_be_normalised_for_their_axis():
    assert slice_fits((0, 3, 1), 3) and slice_fits((2, -1, -1), 3)
    assert slice_fits((-1, -1, -1), 0)          # an empty axis reversed
    assert not slice_fits((0, 9, 1), 3) and not slice_fits((-1, -1, -1), 3)
    x = tp.input((3, 4))
    with pytest.raises(ShapeError, match="slice .0, 9, 1. is not normalised for axis 0"):
        bind(structural.slice_p, ((0, 9, 1), (0, 4, 1)), x)
    with pytest.raises(ShapeError, match="scatter_slice"):
        bind(structural.scatter_slice_p, ((2, 4), ((0, 3, 1), (0, 4, 1))), x)
    with pytest.raises(IndexingError, match="not normalised"):
        bind(indexing.gather_p, (((5, 9, 1),), "raise"), x)


def test_gather_needs_the_index_operands_its_template_names():
    x = tp.input((3, 4))
    with pytest.raises(IndexingError, match="index operand 1 of 1 does not exist"):
        bind(indexing.gather_p, ((("index", 1),), "raise"), x, np.array([0]))


def test_einsum_needs_one_operand_per_term():
    with pytest.raises(ShapeError, match="1 operands for 2 terms"):
        bind(contraction.einsum_p, "ij,jk->ik", tp.input((3, 4)))


def test_order_statistic_k_must_fit_the_axis():
    with pytest.raises(ShapeError, match="k = 4 is out of bounds for axis 1"):
        bind(reductions.order_statistic_p, (1, 4), tp.input((3, 4)))

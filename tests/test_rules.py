"""Every primitive's JVP and VJP, traced and eager, against finite differences and the
adjoint identity <u, J v> = <J^T u, v>, in float64 and complex128, at first and second
order; eager gradients must equal the traced ones to 1e-12 at both orders.
"""
import importlib
import importlib.util
import pkgutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.testing import check_grads, random_like

import specs
from specs import SPECS, make_args

CASES = [(s, d) for s in SPECS for d in s.dtypes]


@pytest.mark.parametrize("spec,dtype", CASES, ids=[f"{s.name}-{d}" for s, d in CASES])
def test_first_order(spec, dtype, rng):
    args = make_args(spec, dtype, rng)
    check_grads(spec.fn, args, order=1, rng=rng, eager=True, **spec.tol)


@pytest.mark.parametrize("spec,dtype", CASES, ids=[f"{s.name}-{d}" for s, d in CASES])
def test_second_order(spec, dtype, rng):
    args = make_args(spec, dtype, rng)
    if spec.max_order < 2:                  # first-order only: the second order raises
        with pytest.raises(tp.errors.NotDifferentiableError):
            check_grads(spec.fn, args, order=2, rng=rng, eager=True, **spec.tol)
        return
    if spec.eager_order < 2:                # exact when traced; eager mode refuses
        check_grads(spec.fn, args, order=2, rng=rng, eager=False, **spec.tol)
        with pytest.raises(tp.errors.NotDifferentiableError):
            check_grads(spec.fn, args, order=2, rng=rng, eager=True, **spec.tol)
        return
    check_grads(spec.fn, args, order=2, rng=rng, eager=True, **spec.tol)


def test_every_primitive_is_covered():
    """The spec table reaches every differentiable primitive registered so far; a
    primitive it misses fails naming the primitive and the spec module to add it to."""
    reached_by: dict = {}                     # primitive family -> spec modules reaching it
    rng = np.random.default_rng(0)
    for spec in SPECS:
        args = make_args(spec, spec.dtypes[-1], rng)
        xs = [tp.input(a.shape, a.dtype) for a in args]
        out = spec.fn(*xs)
        reached = {node.prim.name for node in tp.introspection.graph_nodes([out])}
        g = tp.ad.vjp([out], xs, [np.ones(out.shape, out.dtype)])
        reached |= {node.prim.name for node in tp.introspection.graph_nodes(g)}
        for name in reached:
            reached_by.setdefault(_family(name), set()).add(SPEC_FILES[spec.name])
    missing = {_family(name) for name in tp.PRIMITIVES} - set(reached_by)
    missing -= {"input", "constant"} | LATER | EAGER_ONLY
    assert not missing, missing_spec_message(sorted(missing), reached_by)


def _family(name: str) -> str:
    """Primitives made per output count (``checkpoint/2``, ``fixed_point/5``: derivative
    solves add outputs) share their rules: reaching one member covers the family."""
    return name.split("/")[0]


LATER: set = set()

#: primitives bound only by eager rules (the sparse solvers' derivatives on arrays, which
#: refuse higher orders): a traced spec cannot reach them; tests/test_scipy_sparse_linalg.py
#: and tests/test_scipy_sparse_higher_order.py run them
EAGER_ONLY = {"eigsh_operator_derivative", "operator_solve_derivative"}

#: spec name -> the file of tests/specs/ that holds it
SPEC_FILES = {spec.name: f"tests/specs/{module.name}.py"
              for module in pkgutil.iter_modules(specs.__path__) if module.name != "table"
              for spec in importlib.import_module(f"specs.{module.name}").SPECS}


def _defining_files() -> dict:
    """primitive family -> the file that creates it (as docs/primitives.md lists it)."""
    path = Path(__file__).resolve().parents[1] / "docs" / "generate_primitives_page.py"
    loader = importlib.util.spec_from_file_location("generate_primitives_page", path)
    page = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(page)
    primitives, families = page.definitions()
    found = {_family(name): where.module for name, where in primitives.items()}
    found.update({name: where.module for name, (where, _) in families.items()})
    return {name: module.__name__.replace(".", "/") + ".py" for name, module in found.items()}


def missing_spec_message(missing: list, reached_by: dict) -> str:
    """Per missing primitive: where it is defined and the spec file to add a ``Spec`` to
    (the one covering most primitives of the same module, else a new module)."""
    defined_in = _defining_files()
    lines = ["primitives without a spec entry (tests/test_rules.py checks every one):"]
    for name in missing:
        home = defined_in.get(name, "an unknown module")
        neighbours = Counter(f for other, files in reached_by.items()
                             if defined_in.get(other) == home for f in files)
        target = (neighbours.most_common(1)[0][0] if neighbours
                  else "a new module of tests/specs/ (with its own SPECS list)")
        lines.append(f"  {name!r} (defined in {home}): add a Spec reaching it to {target}")
    return "\n".join(lines)


def test_the_coverage_message_names_the_primitive_and_the_file():
    """What a contributor sees for an uncovered primitive: its name, the module that
    defines it and the spec file its module's other primitives are in."""
    reached_by = {"sinh": {"tests/specs/elementwise.py"}, "qr": {"tests/specs/basic.py"}}
    message = missing_spec_message(["cosh", "svd"], reached_by)
    assert "'cosh' (defined in tenpy_ad/ops/transcendental.py): add a Spec reaching it " \
           "to tests/specs/elementwise.py" in message
    assert "'svd' (defined in tenpy_ad/ops/linalg/svd.py): add a Spec reaching it to a " \
           "new module of tests/specs/" in message


@pytest.mark.parametrize("spec,dtype", CASES, ids=[f"{s.name}-{d}" for s, d in CASES])
def test_eager_jvp_equals_traced_jvp(spec, dtype, rng):
    """Eager ``tp.jvp`` (a forward sweep of the JVP rules over the tape) equals the traced
    ``tp.ad.jvp`` (whose agreement with finite differences test_first_order checks)."""
    args = make_args(spec, dtype, rng)
    tangents = [random_like(rng, a) for a in args]
    _, eager = tp.jvp(spec.fn, tuple(args), tuple(tangents))
    xs = [tp.input(a.shape, a.dtype) for a in args]
    (traced,) = tp.ad.jvp([spec.fn(*xs)], xs, tangents)
    np.testing.assert_allclose(eager, tp.evaluate(traced, dict(zip(xs, args))),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("spec,dtype", CASES[::7], ids=[f"{s.name}-{d}" for s, d in CASES[::7]])
def test_eager_forward_over_reverse_equals_traced(spec, dtype, rng):
    """Hessian-vector products by ``tp.jvp(tp.grad(...))`` in eager mode: the tape holds the
    recorded backward pass too, and the forward sweep runs through it."""
    if spec.eager_order < 2:
        pytest.skip("first-order only in eager mode (test_second_order checks that it "
                    "raises)")
    args = make_args(spec, dtype, rng)
    out = spec.fn(*[tp.input(a.shape, a.dtype) for a in args])
    u = random_like(rng, np.zeros(out.shape, out.dtype))
    tangent = random_like(rng, args[0])

    def gradient(x0):
        return tp.vjp(lambda x: spec.fn(x, *args[1:]), x0)[1](u)[0]

    _, eager = tp.jvp(gradient, (args[0],), (tangent,))
    x = tp.input(args[0].shape, args[0].dtype)
    (traced,) = tp.ad.jvp([gradient(x)], [x], [tangent])
    np.testing.assert_allclose(eager, tp.evaluate(traced, {x: args[0]}), rtol=1e-10,
                               atol=1e-10)

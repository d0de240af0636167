"""The differential checker: one program, every mode of the engine, every route to its
derivatives, compared with each other (tightly), with NumPy (forward values) and with
central finite differences (loosely, where a step check says they are reliable).

Forward modes: NumPy (the reference); eager tensors; traced and evaluated; compiled with
the memory plan on and off (bit-identical to each other); ``tp.jit``; NumPy's own names
on eager and on traced tensors (the dispatch protocols).

Derivatives of the real loss ``L = sum_k Re<c_k, out_k>`` (fixed random ``c_k``):

* gradients by eager ``.backward()``, ``tp.grad``, ``tp.ad.grad`` + compile (plan on and
  off, bit-identical), ``tp.jit(tp.grad)``, ``.backward()`` through NumPy's names, and
  ``tp.ad.grad`` of the traced NumPy-named program;
* directional derivatives by eager ``tp.jvp`` and traced ``tp.ad.jvp``, equal to
  ``Re<grad, v>``;
* Hessian-vector products by reverse over reverse (traced), forward over reverse
  (traced), ``tp.grad`` of ``tp.grad`` (eager) and ``tp.jit`` of it.

A mode may instead raise a TenpyAdError (a clear refusal: a boolean mask in a trace, a
gauge-dependent complex loss, a singular matrix as ``LinAlgError``); any other exception,
and any disagreement, is a :class:`Failure`.

Write programs (seeds ``(s, i, 1)``: in-place writes and views, see program_fuzz.py) hold
the eager routes (eager tensors, NumPy's names on them, ``.backward()``, ``tp.grad``,
``tp.jvp``, ``tp.grad`` of ``tp.grad``) to NumPy's values and to central differences of
the eager loss, at first and second order; an error of the write machinery there is a
Failure.  A traced route (``tp.jit``, ``tp.compile``, ``tp.ad.grad``/``jvp``) must agree as
well; it may refuse only a write into a node that is also another expression's value (the
UnsupportedError saying so); any other error of the write machinery is a Failure.  :func:`shrink` reduces a failing program to
the smallest one (fewest lines) that still fails, printable as runnable Python.

``python tests/differential.py --programs N [--workers W] [--seed S] [--writes]`` runs the
long mode (``--writes``: the write programs of the same indices).
"""
from __future__ import annotations

import argparse
import sys
import traceback
import warnings
import zlib
from dataclasses import dataclass

import numpy as np

import tenpy_ad as tp
from tenpy_ad.errors import TenpyAdError, UnsupportedError

from program_fuzz import Program, draw_program, evaluate_reference, namespaces

#: tight agreement between modes (relative to the values' scale)
MODE_RTOL = 1e-8
#: NumPy's forward values against the engine's
VALUE_RTOL = 1e-9
#: finite differences (Richardson-extrapolated central differences) against AD
FD_RTOL = 1e-5


class Failure(AssertionError):
    """A disagreement or an unclear error; ``program`` is the failing program."""

    def __init__(self, what: str, program: Program):
        super().__init__(what)
        self.what, self.program = what, program

    def report(self) -> str:
        seed = self.program.seed
        writes = " --writes" if isinstance(seed, tuple) and len(seed) == 3 else ""
        rerun = "" if not isinstance(seed, tuple) else (
            f"; rerun: python tests/differential.py --seed {seed[0]} --start {seed[1]} "
            f"--programs 1{writes}")
        return (f"{self.what}\nprogram seed {seed!r}, families {self.program.families()}"
                f"{rerun}; the shrunk program:\n\n{self.program.runnable()}")


@dataclass
class Raised:
    """A mode that refused with a clear error."""
    error: BaseException


def _allowed(error: BaseException) -> bool:
    return isinstance(error, (TenpyAdError, np.linalg.LinAlgError))


#: the modules of in-place writes and views
_WRITE_MODULES = ("tenpy_ad/numpy/inplace.py", "tenpy_ad/numpy/_views.py")
#: the one write a traced route may refuse: into a node that is also another expression's
#: value (equal traced expressions are one node)
_SHARED_WRITE = "is also the value of another expression"


def _from_writes(error: BaseException) -> bool:
    """Whether ``error`` was raised by the write machinery (a frame of its modules)."""
    return any(frame.f_code.co_filename.replace("\\", "/").endswith(_WRITE_MODULES)
               for frame, _ in traceback.walk_tb(error.__traceback__))


def _refused_write(error: BaseException) -> bool:
    """Whether ``error`` is a traced tensor's refusal of a write into a shared node."""
    return isinstance(error, UnsupportedError) and _SHARED_WRITE in str(error)


def _attempt(what: str, program: Program, fn, eager: bool = False):
    """``fn()``, a :class:`Raised` for a clear refusal, or a Failure for anything else.
    An error of the write machinery is a Failure in an ``eager`` route (eager tensors
    support every write); in a traced one, unless it refuses a write into a shared node."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    except Failure:
        raise
    except Exception as error:  # noqa: BLE001 - sorting errors is the point
        about_writes = _from_writes(error) or _refused_write(error)
        if _allowed(error) and not about_writes:
            return Raised(error)
        if _allowed(error) and not eager and _refused_write(error):
            return Raised(error)
        kind = ("an eager route: eager tensors support every write" if eager else
                "a traced route: only the refusal of a write into a shared node is allowed")
        why = f" (an error of the in-place write machinery in {kind})" if about_writes else ""
        raise Failure(f"{what} raised {type(error).__name__}: {error}{why}\n"
                      + "".join(traceback.format_exception(error)[-6:]), program) from error


def _arrays(values) -> list:
    return [np.asarray(v.detach() if isinstance(v, tp.Tensor) else v) for v in values]


def _floating(value) -> bool:
    return np.asarray(value).dtype.kind in "fc"


# ---------------------------------------------------------------------- comparisons

def _scale(*arrays) -> float:
    finite = [np.abs(a[np.isfinite(a)]).max() for a in arrays if a.size and
              np.isfinite(a).any()]
    return max(finite + [1.0])


def _close(got, expected, rtol: float, exact_nonfinite: bool = True,
           floor: float = 1.0) -> bool:
    """Equal shapes, the same non-finite entries (when ``exact_nonfinite``) and finite
    entries within ``rtol`` of the values' scale (at least ``floor``)."""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        return False
    if got.size == 0:
        return True
    same_nonfinite = np.array_equal(np.isnan(got), np.isnan(expected)) and np.array_equal(
        np.isinf(got) & (got.real > 0), np.isinf(expected) & (expected.real > 0))
    if exact_nonfinite and not same_nonfinite:
        return False
    finite = np.isfinite(got) & np.isfinite(expected)
    scale = max(_scale(got, expected), floor)
    return bool(np.all(np.abs(got[finite] - expected[finite]) <= rtol * scale))


def _show(values) -> str:
    """A short description of a list of arrays: small ones whole, big ones summarised."""
    parts = []
    for v in values:
        v = np.asarray(v)
        parts.append(repr(v) if v.size <= 16 else
                     f"<{v.dtype}{list(v.shape)}: {np.array2string(v.reshape(-1)[:6])}...>")
    return "[" + ", ".join(parts) + "]"


def _difference(got, expected) -> str:
    """Where and by how much two lists of arrays differ most."""
    worst = ""
    for k, (g, e) in enumerate(zip(got, expected)):
        g, e = np.asarray(g), np.asarray(e)
        if g.shape != e.shape:
            return f"output {k}: shapes {g.shape} and {e.shape}"
        if g.size:
            with np.errstate(all="ignore"):
                diff = np.where(np.isfinite(g) & np.isfinite(e), np.abs(g - e), 0.0)
            i = np.unravel_index(int(np.argmax(diff)), g.shape)
            worst += f"output {k}: max |difference| {diff[i]:.3g} at {tuple(map(int, i))}; "
    return worst


def _nonfinite_differs(got, expected) -> bool:
    got, expected = np.asarray(got), np.asarray(expected)
    return got.shape == expected.shape and not np.array_equal(np.isfinite(got),
                                                              np.isfinite(expected))


def _compare(what, checker, modes: dict, reference_mode: str, rtol: float,
             derivative: bool = False) -> None:
    """Every mode's list of arrays equals the reference mode's (modes that raised are
    skipped).  Derivatives are compared where both are finite: where a derivative is
    infinite (sqrt at 0) one route multiplies it by a zero cotangent (0 * inf = NaN) and
    another never forms the product; such differences are counted, not failed.
    Derivatives are compared on the scale of the loss's terms (``checker.term_scale``):
    rounding in the sum of a gradient's contributions is relative to the largest of them,
    which can be far above the gradient itself (a product of many factors whose
    contributions cancel, summed in another order by each route)."""
    expected, program = modes[reference_mode], checker.program
    floor = checker.term_scale if derivative else 1.0
    for name, got in modes.items():
        if name == reference_mode or isinstance(got, Raised):
            continue
        if len(got) != len(expected) or not all(
                _close(g, e, rtol, not derivative, floor) for g, e in zip(got, expected)):
            raise Failure(f"{what}: {name} differs from {reference_mode} "
                          f"({_difference(got, expected)}):\n  {name}: {_show(got)}\n"
                          f"  {reference_mode}: {_show(expected)}", program)
        if derivative and any(_nonfinite_differs(g, e) for g, e in zip(got, expected)):
            checker.checked.append(f"non-finite {what}: {name} and {reference_mode}")


def _same_bits(what, program, a, b) -> None:
    if isinstance(a, Raised) or isinstance(b, Raised):
        if isinstance(a, Raised) != isinstance(b, Raised):
            raise Failure(f"{what}: one program raised, the other did not", program)
        return
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
            raise Failure(f"{what}: not bit-identical with and without the memory plan "
                          f"({_difference([x], [y])}):\n  {_show([x])}\n  {_show([y])}",
                          program)


# ---------------------------------------------------------------------- the checker

class Checker:
    """Runs one program in every mode; :meth:`run` raises a Failure or returns a summary
    of what was checked."""

    def __init__(self, program: Program, order: int = 2):
        self.program, self.order = program, order
        self.fn = program.function()
        self.inputs = list(program.inputs.values())
        self.rng = np.random.default_rng(zlib.crc32(repr(program.seed).encode()))
        self.checked: list = []
        # ill-conditioned solves amplify rounding (least squares: by the condition squared)
        self.rtol = max(MODE_RTOL, 1e-15 * program.condition ** 2)
        self.term_scale = 1.0             # of the loss's terms (set by derivatives)

    # -- forward
    def forward(self) -> list | None:
        p, fn, xs = self.program, self.fn, self.inputs
        reference = _attempt("NumPy", p, lambda: list(evaluate_reference(p)))
        if isinstance(reference, Raised):
            return None                  # not a valid NumPy program at these values
        names, dispatch = namespaces("tenpy_ad"), namespaces("dispatch")

        def traced(names, compiled=None):
            placeholders = [tp.input(a.shape, a.dtype) for a in xs]
            outs = fn(names, *placeholders)
            if compiled is None:
                return tp.evaluate(list(outs), dict(zip(placeholders, xs)))
            return tp.compile(list(outs), placeholders, reuse_buffers=compiled)(*xs)
        modes = {
            "numpy": [np.asarray(r) for r in reference],
            "eager": _attempt("eager", p, lambda: _arrays(fn(names, *map(tp.tensor, xs))),
                              eager=True),
            "traced": _attempt("traced", p, lambda: traced(names)),
            "compiled": _attempt("compiled", p, lambda: traced(names, True)),
            "compiled, no plan": _attempt("compiled", p, lambda: traced(names, False)),
            "jit": _attempt("jit", p, lambda: list(tp.jit(lambda *a: fn(names, *a))(*xs))),
            "dispatch eager": _attempt("np.* on tensors", p, lambda: _arrays(
                fn(dispatch, *map(tp.tensor, xs))), eager=True),
            "dispatch traced": _attempt("np.* on traced", p, lambda: traced(dispatch, True)),
        }
        _same_bits("forward", p, modes["compiled"], modes["compiled, no plan"])
        _compare("forward values", self, modes, "numpy", VALUE_RTOL)
        self.checked.append("forward")
        return modes["numpy"]

    # -- the loss and its derivatives
    def _loss_weights(self, outputs):
        weights = []
        for out in outputs:
            if not _floating(out):
                weights.append(None)
                continue
            c = self.rng.standard_normal(out.shape)
            if out.dtype.kind == "c":
                c = c + 1j * self.rng.standard_normal(out.shape)
            weights.append(c)
        return weights

    def _loss_fn(self, names):
        fn, weights = self.fn, self.weights

        def loss(*xs):
            total = 0.0
            for out, c in zip(fn(names, *xs), weights):
                if c is not None:
                    total = total + tp.sum(tp.real(tp.conj(c) * out))
            return total
        return loss

    def derivatives(self, outputs) -> None:
        self.weights = self._loss_weights(outputs)
        if all(w is None for w in self.weights):
            return
        self.term_scale = max([1.0] + [_scale(np.abs(w) * np.abs(o)) for w, o in
                                       zip(self.weights, outputs) if w is not None])
        xs, p = self.inputs, self.program
        loss = self._loss_fn(namespaces("tenpy_ad"))
        dloss = self._loss_fn(namespaces("dispatch"))
        argnums = tuple(range(len(xs)))

        def backward(loss_fn):
            ts = [tp.tensor(a, requires_grad=True) for a in xs]
            value = loss_fn(*ts)
            if not isinstance(value, tp.Tensor) or not value.requires_grad:
                return [np.zeros_like(a) for a in xs]
            value.backward()
            return [np.zeros_like(a) if t.grad is None else np.asarray(t.grad)
                    for t, a in zip(ts, xs)]

        def traced(loss_fn, reuse=True):
            placeholders = [tp.input(a.shape, a.dtype) for a in xs]
            grads = tp.ad.grad(loss_fn(*placeholders), placeholders)
            return tp.compile(grads, placeholders, reuse_buffers=reuse)(*xs)
        grad_fn = tp.grad(loss, argnums=argnums)
        grads = {
            "backward": _attempt("backward()", p, lambda: backward(loss), eager=True),
            "tp.grad": _attempt("tp.grad", p, lambda: _arrays(grad_fn(*xs)), eager=True),
            "ad.grad": _attempt("tp.ad.grad", p, lambda: traced(loss)),
            "ad.grad, no plan": _attempt("tp.ad.grad", p, lambda: traced(loss, False)),
            "jit(grad)": _attempt("tp.jit(tp.grad)", p,
                                  lambda: _arrays(tp.jit(grad_fn)(*xs))),
            "dispatch backward": _attempt("backward() of np.*", p, lambda: backward(dloss),
                                          eager=True),
            "dispatch ad.grad": _attempt("tp.ad.grad of np.*", p, lambda: traced(dloss)),
        }
        _same_bits("gradient", p, grads["ad.grad"], grads["ad.grad, no plan"])
        reference = next((k for k, v in grads.items() if not isinstance(v, Raised)), None)
        if reference is None:
            return
        _compare("gradients", self, grads, reference, self.rtol, derivative=True)
        self.checked.append("gradients")
        gradient = grads[reference]
        direction = [self._direction(a) for a in xs]
        self._directional(loss, gradient, direction)
        if self.order >= 2:
            self._second_order(loss, grad_fn, direction)

    def _direction(self, a):
        v = self.rng.standard_normal(a.shape)
        if a.dtype.kind == "c":
            v = v + 1j * self.rng.standard_normal(a.shape)
        return v.astype(a.dtype)

    def _directional(self, loss, gradient, direction) -> None:
        xs, p = self.inputs, self.program
        expected = sum(float(np.real(np.vdot(g, v))) for g, v in zip(gradient, direction))

        def traced_jvp():
            placeholders = [tp.input(a.shape, a.dtype) for a in xs]
            (d,) = tp.ad.jvp([loss(*placeholders)], placeholders, direction)
            return [tp.compile(d, placeholders)(*xs)]
        jvps = {
            "Re<grad, v>": [np.float64(expected)],
            "tp.jvp": _attempt("tp.jvp", p, lambda: [np.asarray(
                tp.jvp(loss, xs, direction)[1])], eager=True),
            "ad.jvp": _attempt("tp.ad.jvp", p, traced_jvp),
        }
        _compare("directional derivatives", self, jvps, "Re<grad, v>", self.rtol,
                 derivative=True)
        self.checked.append("jvp")
        value = _attempt("the compiled loss", p, lambda: _compiled_loss(loss, xs))
        if isinstance(value, Raised) and p.writes:       # writes: the eager loss
            value = lambda *a: loss(*map(tp.tensor, a))
        if self.program.smooth and not isinstance(value, Raised):
            self._finite_difference("directional derivative", value, direction, expected)

    def _second_order(self, loss, grad_fn, direction) -> None:
        xs, p = self.inputs, self.program
        argnums = tuple(range(len(xs)))

        def along(gradient):
            total = 0.0
            for g, v in zip(gradient, direction):
                total = total + tp.sum(tp.real(tp.conj(g) * v))
            return total
        hvp_fn = tp.grad(lambda *a: along(grad_fn(*a)), argnums=argnums)

        def reverse_over_reverse():
            placeholders = [tp.input(a.shape, a.dtype) for a in xs]
            grads = tp.ad.grad(loss(*placeholders), placeholders)
            return tp.compile(tp.ad.grad(along(grads), placeholders), placeholders)(*xs)

        def forward_over_reverse():
            placeholders = [tp.input(a.shape, a.dtype) for a in xs]
            grads = tp.ad.grad(loss(*placeholders), placeholders)
            return tp.compile(tp.ad.jvp(grads, placeholders, direction), placeholders)(*xs)
        hvps = {
            "reverse over reverse": _attempt("HVP (ad.grad of ad.grad)", p,
                                             reverse_over_reverse),
            "forward over reverse": _attempt("HVP (ad.jvp of ad.grad)", p,
                                             forward_over_reverse),
            "grad of grad": _attempt("HVP (tp.grad of tp.grad)", p,
                                     lambda: _arrays(hvp_fn(*xs)), eager=True),
            "jit(grad of grad)": _attempt("HVP (tp.jit)", p,
                                          lambda: _arrays(tp.jit(hvp_fn)(*xs))),
        }
        reference = next((k for k, v in hvps.items() if not isinstance(v, Raised)), None)
        if reference is None:
            return
        if self.program.degenerate:      # documented: each route composes the convention
            self.checked.append("hvp at an exact degeneracy: not compared")
            return
        _compare("Hessian-vector products", self, hvps, reference, self.rtol,
                 derivative=True)
        self.checked.append("hvp")
        gradient = _attempt("the compiled gradient", p, lambda: _compiled_gradient(loss, xs))
        if isinstance(gradient, Raised) and p.writes:    # writes: the eager gradient
            gradient = lambda *a: _arrays(grad_fn(*a))
        if self.program.smooth and not isinstance(gradient, Raised):
            w = [self._direction(a) for a in xs]
            expected = sum(float(np.real(np.vdot(h, u))) for h, u in zip(hvps[reference], w))
            projected = lambda *a: sum(float(np.real(np.vdot(g, u)))
                                       for g, u in zip(gradient(*a), w))
            self._finite_difference("Hessian-vector product", projected, direction,
                                    expected)

    def _finite_difference(self, what, f, direction, expected) -> None:
        """Compare ``expected`` with the derivative of ``f`` along ``direction`` at the
        inputs, when a step check finds the central differences reliable and no kink."""
        xs = self.inputs
        if not np.isfinite(expected):
            self.checked.append(f"non-finite {what}")       # see _compare
            return
        norm = np.sqrt(sum(float(np.vdot(v, v).real) for v in direction)) or 1.0
        size = max([1.0] + [float(np.abs(a).max()) for a in xs if a.size])
        h = 1e-3 * size / norm

        def at(t):
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return float(f(*[a + t * v for a, v in zip(xs, direction)]))
        steps = (h, h / 2, h / 4, h / 8)
        try:
            f0, values = at(0.0), {t: at(t) for step in steps for t in (step, -step)}
        except TenpyAdError:
            return
        if not all(np.isfinite(list(values.values()) + [f0])):
            return
        central = [(values[t] - values[-t]) / (2 * t) for t in steps]
        kink = lambda t: (values[t] - f0) / t - (f0 - values[-t]) / t
        scale = max([1.0, abs(expected)] + [abs(d) for d in central])
        if abs(kink(h / 2)) > 0.75 * abs(kink(h)) and abs(kink(h)) > 1e-6 * scale:
            return                       # a kink: one-sided slopes differ at every step
        # Richardson from pairs of steps: they must agree (the function is smooth on the
        # scale of the steps) and converge as the steps halve (their error falls 16-fold
        # for a smooth function; a fast oscillation of small amplitude that the steps
        # alias, sinc far out, can make two estimates agree by chance); their difference
        # bounds the estimate's error
        coarse = (4 * central[1] - central[0]) / 3
        fine = (4 * central[2] - central[1]) / 3
        finer = (4 * central[3] - central[2]) / 3
        error = abs(coarse - fine)
        if error > 1e-4 * scale or abs(fine - finer) > error / 4 + 1e-9 * scale:
            return                       # not smooth at this scale: no verdict
        tolerance = FD_RTOL * scale + 10 * error
        if not abs(fine - expected) <= tolerance:
            raise Failure(f"{what}: AD gives {expected!r}, central differences {fine!r} "
                          f"(Richardson over steps {h:.3g}, {h / 2:.3g}, {h / 4:.3g}: "
                          f"{coarse!r}, {fine!r})", self.program)
        self.checked.append(f"fd {what}")

    def run(self) -> list:
        outputs = self.forward()
        if outputs is not None:
            self.derivatives(outputs)
        return self.checked


def _compiled_loss(loss, xs):
    placeholders = [tp.input(a.shape, a.dtype) for a in xs]
    value = loss(*placeholders)
    if not isinstance(value, tp.TracedTensor):      # no output depends on the inputs
        return lambda *a: value
    return tp.compile(value, placeholders)


def _compiled_gradient(loss, xs):
    placeholders = [tp.input(a.shape, a.dtype) for a in xs]
    return tp.compile(tp.ad.grad(loss(*placeholders), placeholders), placeholders)


def check_bits(program: Program) -> list:
    """A program's value and gradient, compiled with and without the memory plan:
    bit-identical, and the value NumPy's (for the big programs, whose arrays are above
    the plan's size threshold)."""
    checker = Checker(program, order=1)
    xs, p = checker.inputs, program
    reference = _attempt("NumPy", p, lambda: list(evaluate_reference(p)))
    if isinstance(reference, Raised):
        return []
    names = namespaces("tenpy_ad")
    checker.weights = checker._loss_weights(reference)
    loss = checker._loss_fn(names)

    def compiled(reuse):
        placeholders = [tp.input(a.shape, a.dtype) for a in xs]
        outs = list(checker.fn(names, *placeholders))
        value = loss(*placeholders)
        if isinstance(value, tp.TracedTensor):
            outs += tp.ad.grad(value, placeholders)
        return tp.compile(outs, placeholders, reuse_buffers=reuse)(*xs)
    planned = _attempt("compiled", p, lambda: compiled(True))
    _same_bits("value and gradient", p, planned, _attempt("compiled", p,
                                                           lambda: compiled(False)))
    if not isinstance(planned, Raised):
        _compare("forward values", checker, {"numpy": reference,
                                             "compiled": planned[:len(reference)]},
                 "numpy", VALUE_RTOL)
    return ["bits"]


# ---------------------------------------------------------------------- shrinking

def _fails(program: Program, check) -> Failure | None:
    try:
        check(program)
    except Failure as failure:
        return failure
    return None


def shrink(failure: Failure, check=lambda p: Checker(p).run()) -> Failure:
    """The smallest program (fewest lines) whose ``check`` still fails: each line of the
    failing program as the only output, with the lines it needs."""
    program = failure.program
    best = failure
    candidates = [program.pruned([name]) for name in program.results()]
    candidates += [program.pruned([name]) for name in program.outputs]
    for candidate in sorted(candidates, key=lambda c: len(c.lines)):
        if len(candidate.lines) >= len(best.program.lines):
            break
        found = _fails(candidate, check)
        if found is not None:
            return found
    return best


def check_source(source: str, inputs: dict, smooth: bool = True,
                 condition: float = 1.0, writes: bool = False) -> list:
    """Check a program given as the text of :meth:`Program.source` (see
    :meth:`Program.runnable`; ``writes``: it writes in place)."""
    program = Program.from_source(source, inputs, smooth, condition, writes)
    try:
        return Checker(program).run()
    except Failure as failure:
        raise AssertionError(failure.report()) from None


def check_program(seed, order: int = 2) -> list:
    """Check the program of ``seed``; a failure is shrunk and raised with its report."""
    program = draw_program(seed)
    try:
        return Checker(program, order).run()
    except Failure as failure:
        raise AssertionError(shrink(failure).report()) from None


def check_big_program(seed) -> list:
    """:func:`check_bits` of the big program of ``seed``, shrunk on failure."""
    program = draw_program(seed, big=True)
    try:
        return check_bits(program)
    except Failure as failure:
        raise AssertionError(shrink(failure, check_bits).report()) from None


# ---------------------------------------------------------------------- long mode

def _run_range(args) -> list:
    seed, start, stop, writes = args
    failures = []
    for i in range(start, stop):
        key = (seed, i, 1) if writes else (seed, i)
        try:
            check_program(key)
        except AssertionError as error:
            failures.append((key, str(error)))
    return failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--writes", action="store_true",
                        help="the write programs (in-place writes and views)")
    args = parser.parse_args(argv)
    chunks = [(args.seed, i, min(i + 50, args.start + args.programs), args.writes)
              for i in range(args.start, args.start + args.programs, 50)]
    if args.workers > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(args.workers) as pool:
            results = list(pool.map(_run_range, chunks))
    else:
        results = [_run_range(chunk) for chunk in chunks]
    failures = [f for chunk in results for f in chunk]
    for seed, report in failures:
        print(f"=== FAILED program {seed}\n{report}\n")
    print(f"{args.programs} programs, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

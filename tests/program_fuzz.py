"""Random differentiable programs for the differential fuzzer (``tests/differential.py``).

A :class:`Program` is straight-line code over three namespaces — ``xp`` (NumPy's names),
``sp`` (SciPy's: ``sp.special``, ``sp.linalg``) and ``lx`` (tenpy_ad's partial
decompositions) — so the same text runs on ndarrays with NumPy and SciPy (the reference),
on tensors with ``tenpy_ad`` (eager and traced) and on tensors with NumPy's own names
(``np.exp(t)``: the dispatch protocols).  :class:`Generator` draws programs over every
public op family: elementwise functions with operands placed *on* ties, zeros, bounds
and branch points as well as away from them, broadcasting, slicing with negative steps,
integer-array and boolean indexing, reductions with axes and keepdims, einsum, tensordot
and matmul (two operands derived from one input included), joining, sorting, and every
``tp.linalg`` function on well-conditioned, ill-conditioned and degenerate matrices —
in float64 and complex128, with sizes 0 and 1 — and fixed points (``fx.fixed_point``, in
every program's scope: ``tp.fixed_point`` of a contraction with implicit derivatives,
against NumPy's iteration of the same map).  Each candidate line is run on NumPy's
values as it is drawn, so every program is valid NumPy.

Write programs (seeds ``(s, i, 1)``; the programs of ``(s, i)`` are as before) add
in-place writes and views: a target made from a value (``x.copy()``, ``zeros_like``,
``ones_like``, an arithmetic result), views of it (basic indices with negative steps,
``.T``, transposes, reshapes NumPy does without a copy, ``.real``/``.imag``, ``flip``,
``squeeze``, read-only ``diagonal``), then writes into the target and its views by every
form — ``t[idx] = v`` (basic, integer-array with repeats, boolean), augmented assignment
whole and indexed, ufuncs' ``out=``, ``clip(..., out=)``, ``copyto`` (with ``where``),
``fill``, ``put``, ``place`` — with values of every broadcastable shape (0-d included)
and reads between the writes; the target and its views are outputs.  A write is a
:class:`Line` whose ``writes`` names the values it changes (those sharing memory with its
target in NumPy), so pruning keeps it while one of them is needed.  The generator runs
the writes on NumPy's arrays, views kept as views, so aliasing is NumPy's own.  Program
shapes of failures not fixed yet are avoided where marked KNOWN FAILURE, each with its
``xfail(strict=True)`` test in ``tests/test_differential_writes.py``.
"""
from __future__ import annotations

import math
import re
import textwrap
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.special

#: largest value a program keeps (elements), so that every mode stays fast
MAX_SIZE = 48
_NAME = re.compile(r"\bv\d+\b")


# ---------------------------------------------------------------------- namespaces

class _ReferenceDecompositions:
    """NumPy stand-ins for tenpy_ad's partial decompositions (the ``lx`` namespace of the
    reference run): the leading triplets / eigenpairs of the full decomposition."""

    @staticmethod
    def svds(a, k):
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return u[..., :, :k], s[..., :k], vh[..., :k, :]

    @staticmethod
    def eigsh(a, k):
        w, v = np.linalg.eigh(a)                    # the k largest, ascending
        return w[..., w.shape[-1] - k:], v[..., :, w.shape[-1] - k:]


class _SciPy:
    special, linalg = scipy.special, scipy.linalg


def _contraction_step(xp, x, a, b):
    """A contraction in ``x`` (Jacobian norm <= 0.45 + 0.1) coupling every entry through
    the mean, smooth in ``a`` and ``b``: the ``fx`` family's map."""
    return 0.9 * xp.sin(a * x) / (1.0 + a * a) + 0.1 * xp.tanh(xp.mean(x)) + b


class FixedPoints:
    """``fx`` in every program's scope: the fixed point of :func:`_contraction_step` --
    NumPy's iteration to the last bit (a rate of 0.55: ~70 steps) on arrays (the
    reference run), ``tp.fixed_point`` (implicit derivatives) on tensors and traced
    values."""

    @staticmethod
    def fixed_point(a, b, solver: str = "gmres", anderson: int = 0):
        """(``solver`` and ``anderson``: tp.fixed_point's, its derivative solves and its
        acceleration; NumPy's iteration has neither.)"""
        import tenpy_ad as tp
        shape = np.broadcast_shapes(tp.shape(a), tp.shape(b))
        if all(isinstance(v, (np.ndarray, np.generic, float, int)) for v in (a, b)):
            x = np.zeros(shape)
            for _ in range(500):
                x, last = _contraction_step(np, x, a, b), x
                if np.max(np.abs(x - last)) <= 1e-16 * (1.0 + np.max(np.abs(x))):
                    break
            return x
        return tp.fixed_point(lambda x, a, b: _contraction_step(tp, x, a, b),
                              np.zeros(shape), a, b, tol=1e-15, max_iter=500,
                              solver=solver, anderson=anderson)


REFERENCE = {"xp": np, "sp": _SciPy, "lx": _ReferenceDecompositions}


def namespaces(kind: str) -> dict:
    """The names a program sees: ``"reference"`` (NumPy, SciPy), ``"tenpy_ad"`` (``tp``,
    ``tp.scipy``, ``tp.linalg``) or ``"dispatch"`` (NumPy's own names on tensors;
    SciPy's non-ufunc functions do not dispatch, so ``sp`` is tenpy_ad's)."""
    import tenpy_ad as tp
    if kind == "reference":
        return dict(REFERENCE)
    if kind == "tenpy_ad":
        return {"xp": tp, "sp": tp.scipy, "lx": tp.linalg}
    if kind == "dispatch":
        return {"xp": np, "sp": tp.scipy, "lx": tp.linalg}
    raise ValueError(kind)


# ---------------------------------------------------------------------- programs

@dataclass
class Line:
    """``target = expression``, or (``writes`` not None) the statement ``expression``: an
    in-place write (``v3[1:] = v2``, ``v3 += v1``, ``xp.add(v1, v2, out=v3)``) that
    changes the values ``writes`` names (the written array and every value sharing its
    memory in NumPy: its base and views)."""
    target: str
    expression: str
    family: str
    smooth: bool = True               # False: the op has kinks, ties or jumps
    condition: float = 1.0            # of the matrix a linear-algebra line decomposes
    degenerate: bool = False          # a decomposition at exactly repeated values
    writes: tuple | None = None       # a statement: the names whose values it changes

    @property
    def operands(self) -> list:
        """The names the line reads (a write reads its target: it keeps other entries)."""
        return sorted(set(_NAME.findall(self.expression)), key=lambda n: int(n[1:]))

    @property
    def defines(self) -> set:
        """The names whose values the line sets or changes."""
        return {self.target} if self.writes is None else set(self.writes)

    def code(self) -> str:
        return self.expression if self.writes is not None else \
            f"{self.target} = {self.expression}"


@dataclass
class Program:
    """Straight-line code: ``inputs`` (name -> array), ``lines``, ``outputs``."""
    inputs: dict
    lines: list
    outputs: list
    seed: object = None
    text: str | None = None           # the source as written by hand (from_source)

    @property
    def smooth(self) -> bool:
        """Whether every op is smooth (finite differences are then a valid check)."""
        return all(line.smooth for line in self.lines)

    @property
    def degenerate(self) -> bool:
        """Whether a decomposition meets exactly repeated values, where second
        derivatives of losses of the vectors follow the broadened rule's documented
        convention (each route its own composition of it)."""
        return any(line.degenerate for line in self.lines)

    @property
    def writes(self) -> bool:
        """Whether the program writes in place (statements; a hand-written program: when
        told so)."""
        return any(line.writes is not None for line in self.lines)

    @property
    def condition(self) -> float:
        """The largest condition number of a matrix the program decomposes or solves."""
        return max([1.0] + [line.condition for line in self.lines])

    def source(self) -> str:
        if self.text is not None:
            return self.text
        args = ", ".join(self.inputs)
        body = [f"    {line.code()}" for line in self.lines]
        body.append(f"    return ({', '.join(self.outputs)},)")
        return f"def program(xp, sp, lx, {args}):\n" + "\n".join(body) + "\n"

    def function(self):
        """``fn(namespaces dict, *inputs) -> tuple of outputs``."""
        scope: dict = {"np": np, "fx": FixedPoints}
        exec(compile(self.source(), "<fuzzed program>", "exec"), scope)  # noqa: S102
        program = scope["program"]
        return lambda names, *xs: program(names["xp"], names["sp"], names["lx"], *xs)

    def families(self) -> list:
        return sorted({line.family for line in self.lines})

    def results(self) -> list:
        """The names of the values the lines compute (statements write, not define)."""
        return [line.target for line in self.lines if line.writes is None]

    def runnable(self) -> str:
        """The program as a Python script that reproduces it; run from the repository's
        root it checks it in every mode again."""
        arrays = "\n".join(f"{name} = {_array_source(a)}" for name, a in self.inputs.items())
        names = ", ".join(self.inputs)
        return ("import numpy as np\nimport tenpy_ad as tp\n\n"
                "# xp: NumPy's names (tp, or np on tensors), sp: SciPy's (tp.scipy),\n"
                "# lx: tp.linalg; the reference run uses xp = np, sp = scipy\n"
                + ("import sys; sys.path.insert(0, 'tests')\n"
                   "from program_fuzz import FixedPoints as fx   # fx.fixed_point\n"
                   if "fx." in self.source() else "") +
                f"{self.source()}\n{arrays}\n"
                f"outputs = program(tp, tp.scipy, tp.linalg, {names})\n\n"
                "if __name__ == '__main__':        # every mode, every derivative route\n"
                "    import inspect, sys\n    sys.path.insert(0, 'tests')\n"
                "    from differential import check_source\n"
                f"    check_source(inspect.getsource(program), dict({', '.join(f'{n}={n}' for n in self.inputs)}),\n"
                f"                 smooth={self.smooth}, condition={self.condition!r}"
                f"{', writes=True' if self.writes else ''})\n")

    @classmethod
    def from_source(cls, source: str, inputs: dict, smooth: bool = True,
                    condition: float = 1.0, writes: bool = False) -> "Program":
        """A program written by hand: ``def program(xp, sp, lx, <inputs>): ...``
        (``writes``: it writes in place)."""
        line = Line("", "", "given", smooth, condition, writes=() if writes else None)
        return cls(dict(inputs), [line], [], "given", textwrap.dedent(source))

    def pruned(self, outputs: list) -> "Program":
        """The lines ``outputs`` need, and only them (a hand-written program: itself)."""
        if self.text is not None:
            return self
        needed, kept = set(outputs), []
        for line in reversed(self.lines):     # a write is kept while what it changes is
            if line.defines & needed:         # needed (it reads its target: still needed)
                kept.append(line)
                needed.update(line.operands)
        inputs = {k: v for k, v in self.inputs.items() if k in needed}
        return Program(inputs, kept[::-1], list(outputs), self.seed)


def _root(a: np.ndarray) -> np.ndarray:
    """The array owning ``a``'s memory (``a`` itself if it owns it)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _array_source(a: np.ndarray) -> str:
    return f"np.array({a.tolist()!r}, dtype=np.{a.dtype.name}).reshape({a.shape})"


def evaluate_reference(program: Program) -> tuple:
    """NumPy's outputs of ``program``."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return program.function()(REFERENCE, *program.inputs.values())





# ---------------------------------------------------------------------- values

SHAPES = [(), (1,), (3,), (4,), (2, 3), (3, 3), (3, 2), (1, 3), (2, 2, 2), (2, 1, 3),
          (4, 4), (2, 3, 3), (0,), (2, 0), (0, 3), (1, 1)]
#: shapes of big programs: values above the memory plan's 16 KiB, where compiled programs
#: write into reused arrays (and where layouts and summation orders could change)
BIG_SHAPES = [(3, 33, 33), (48, 48), (40, 52), (2, 40, 30), (2100,), (33, 3, 33), (1, 48, 48)]
_SIZE_WEIGHTS = None


def special_values(rng, n: int, complex_: bool) -> np.ndarray:
    """``n`` values mixing normal ones with zeros, ones, -0.0, small integers and exact
    repeats (ties within the array)."""
    kind = rng.integers(4)
    values = rng.standard_normal(n)
    if kind >= 1 and n:
        k = rng.integers(1, n + 1)
        where = rng.choice(n, size=k, replace=False)
        values[where] = rng.choice([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.0], size=k)
    if kind >= 2 and n > 1:
        values[rng.integers(n)] = values[rng.integers(n)]           # a tie
    if kind == 3:
        values = np.round(values * 2) / 2                            # many ties
    if complex_:
        imag = rng.standard_normal(n)
        if kind >= 1 and n:
            imag[rng.random(n) < 0.3] = 0.0
        values = values + 1j * imag
    return values


# ---------------------------------------------------------------------- generator

class Generator:
    """Draws programs; ``rng`` is a NumPy Generator (the program's seed decides all)."""

    def __init__(self, rng: np.random.Generator, big: bool = False, writes: bool = False):
        self.rng, self.writes = rng, writes
        self.shapes, self.max_size = (BIG_SHAPES, 10 ** 5) if big else (SHAPES, MAX_SIZE)
        self.values: dict = {}
        self.lines: list = []
        self.inputs: dict = {}
        self.writable: set = set()        # names of writable arrays (add_line)
        self.scalars: set = set()         # names of NumPy scalars (write programs)
        self.known_layout: set = set()    # names whose layout tenpy_ad's is (writes)
        self.of_scalars: set = set()      # names computed from NumPy scalars (writes)
        self.constants: set = set()       # names that depend on no input (writes)
        self.written: list = []           # names a write family made or viewed: outputs
        self.kinked = False               # set by a maker that draws a non-smooth op
        self.condition = 1.0              # set by a maker of a linear-algebra line
        self.degenerate = False           # likewise

    # -- helpers
    def choice(self, options):
        return options[self.rng.integers(len(options))]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def new_input(self, shape=None, complex_=None) -> str:
        shape = self.choice(self.shapes) if shape is None else shape
        complex_ = self.chance(0.3) if complex_ is None else complex_
        n = math.prod(shape)
        values = special_values(self.rng, n, complex_).reshape(shape)
        name = f"v{len(self.values)}"
        self.values[name] = values
        self.inputs[name] = values
        self.known_layout.add(name)
        return name

    def floating(self, min_ndim=0, min_size=0, pred=None) -> list:
        return [n for n, v in self.values.items()
                if v.dtype.kind in "fc" and v.ndim >= min_ndim and v.size >= min_size
                and (pred is None or pred(v))]

    def pick(self, min_ndim=0, min_size=0, pred=None) -> str | None:
        names = self.floating(min_ndim, min_size, pred)
        if not names:
            return None
        if self.chance(0.5):                      # recent values: longer dependency chains
            return names[-1 - int(self.rng.integers(min(3, len(names))))]
        return self.choice(names)

    def value(self, name: str) -> np.ndarray:
        return self.values[name]

    def evaluate(self, expression: str, values: dict, raw: bool = False):
        """NumPy's value of ``expression``, or None where NumPy refuses it (``raw``: as
        NumPy returns it, a scalar or an array that may be a view)."""
        env = self._environment(values)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                value = eval(expression, {"np": np, "fx": FixedPoints}, env)  # noqa: S307
            except Exception:  # noqa: BLE001 - NumPy's verdict: not a valid line
                return None
        if not isinstance(value, (np.ndarray, np.generic)):
            return None
        return value if raw else np.asarray(value)

    def _environment(self, values: dict) -> dict:
        """The names a line sees.  In a write program, the values NumPy gives as scalars
        are scalars (they have no memory to write or view; ``s.copy()`` is one too)."""
        env = dict(REFERENCE, **values)
        for name in self.scalars:
            env[name] = env[name][()]
        return env

    def robust(self, expression: str, value: np.ndarray) -> bool:
        """Whether the value moves continuously when its computed operands move by
        rounding-sized amounts (1e-12 of their scale): a condition, a jump or a branch
        cut that rounding could flip would make modes disagree for no fault of theirs.
        Inputs stay exact, so ties and zeros placed in them on purpose are kept."""
        if self._noise_operand(expression):
            return False
        finite = np.isfinite(value)
        scale = np.abs(value[finite]).max() if finite.any() else 1.0
        for sign in (1.0, -1.0):         # both ways: a jump shows on one side at least
            moved = dict(self.values)
            with np.errstate(all="ignore"):
                self._move(expression, moved, sign)
            other = self.evaluate(expression, moved)
            if other is None or other.shape != value.shape or \
                    not np.array_equal(finite, np.isfinite(other)) or \
                    not np.all(np.abs(other[finite] - value[finite]) <= 1e-7 * (1 + scale)):
                return False
        return True

    def _largest(self) -> float:
        return max([1.0] + [float(np.abs(v[np.isfinite(v)]).max()) for v in
                            self.values.values() if v.size and np.isfinite(v).any()])

    def _noise_operand(self, expression: str) -> bool:
        """Whether a computed operand has entries of rounding size (nonzero, below 1e-10
        of the program's largest value): a zero that cancellation left as 1e-17, whose
        quotients and derivatives are noise that differs between correct modes."""
        floor = 1e-10 * self._largest()
        for name in set(_NAME.findall(expression)):
            if name in self.inputs or name not in self.values:
                continue
            x = np.abs(self.values[name])
            if ((x > 0) & (x < floor)).any():
                return True
        return False

    def _move(self, expression: str, moved: dict, sign: float) -> None:
        """Perturb the computed operands by rounding-sized amounts of the program's
        largest value (a value that is rounding noise itself, as a zero computed as 1e-17,
        moves by more than its own size); ``sign`` flips the perturbation.  The noise is
        drawn from a generator of its own, so that checking a line draws nothing from the
        program's."""
        largest = self._largest()
        rng = np.random.default_rng(len(self.values))
        for name in _NAME.findall(expression):
            if name in self.inputs or name not in moved:
                continue
            x = moved[name]
            noise = rng.uniform(-1, 1, x.shape)
            if x.dtype.kind == "c":
                noise = noise + 1j * rng.uniform(-1, 1, x.shape)
            moved[name] = x + sign * 1e-12 * (np.abs(x) + largest) * noise

    def add_line(self, expression: str, family: str) -> str | None:
        """Run ``expression`` on NumPy's values; keep it if it gives a usable array that
        rounding cannot flip.  The value is kept as NumPy returns it (a view stays a view
        of its base, so that a later write changes both, as in the program)."""
        raw = self.evaluate(expression, self.values, raw=True)
        value = None if raw is None else np.asarray(raw)
        if value is None or value.dtype not in (np.float64, np.complex128) or \
                value.size > self.max_size:
            return None
        if value.size and not np.isfinite(value).any():
            return None
        if not self.robust(expression, value):
            return None
        if self.writes and not (self._same_views(expression, raw) and
                                self._same_layouts(expression, value)):
            return None
        name = f"v{len(self.values)}"
        self.values[name] = value
        if isinstance(raw, np.ndarray) and raw.flags.writeable:
            self.writable.add(name)         # not a NumPy scalar, nor a read-only view
        elif self.writes and not isinstance(raw, np.ndarray):
            self.scalars.add(name)
        self.lines.append(Line(name, expression, family, not self.kinked, self.condition,
                               self.degenerate))
        return name

    def _same_layouts(self, expression: str, value: np.ndarray) -> bool:
        """Whether a reshape in ``expression`` is a view (or a copy) in tenpy_ad as in
        NumPy: of C-ordered operands whose layout is known to be NumPy's (inputs, their
        copies and elementwise results, ``zeros_like``/``ones_like`` of C-ordered values,
        and views of these).  Records whether the result's layout is known.  KNOWN
        FAILURES (test_differential_writes.py::test_copy_method_is_c_ordered,
        test_zeros_like_keeps_the_layout, test_result_layouts_are_numpys): whether a
        reshape is a view depends on the layout, and tenpy_ad's layouts are not NumPy's:
        ``x.copy()`` keeps x's (NumPy's is C-ordered; ``np.copy`` of negative strides:
        positive ones), ``zeros_like``/``ones_like`` are C-ordered (NumPy's keep x's),
        and ``kron``, ``einsum`` and others lay their results out their own way."""
        operands = [n for n in set(_NAME.findall(expression)) if n in self.values]
        known = all(n in self.known_layout for n in operands)
        contiguous = all(self.values[n].flags.c_contiguous for n in operands)
        if ("reshape(" in expression or "ravel(" in expression) and not (
                known and contiguous):
            return False
        view = any(self.values[n].size and np.shares_memory(value, self.values[n])
                   for n in operands)
        if known and (view or contiguous and _KNOWN_LAYOUT.match(expression)):
            self.known_layout.add(f"v{len(self.values)}")
        return True

    def add_statement(self, statement: str, target: str) -> bool:
        """Run the in-place write ``statement`` (into ``target`` or a view of it) on
        NumPy's values; keep it if NumPy accepts it without a warning (a complex value
        into a real array, an overflow).  The values sharing memory with ``target`` are
        those it changes."""
        root = _root(self.values[target])
        saved = root.copy()
        env = self._environment(self.values)
        with np.errstate(all="raise"), warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                exec(statement, {"np": np}, env)  # noqa: S102
            except Exception:  # noqa: BLE001 - NumPy's verdict: not a valid write
                root[...] = saved          # (a write that failed half-way)
                return False
        if (np.isfinite(saved) & ~np.isfinite(root)).any():
            root[...] = saved              # an overflow to inf: no derivative to compare
            return False
        writes = tuple(n for n, v in self.values.items()
                       if v.size and np.shares_memory(v, root))
        self.lines.append(Line(target, statement, "writes", not self.kinked,
                               writes=writes or (target,)))
        return True

    def write_targets(self) -> list:
        """The values a program may write into: writable arrays sharing no memory with an
        input (the engine's inputs are leaves that require grad: writes into them
        raise)."""
        # (roots: empty views share no memory); values made from NumPy scalars: see
        # _same_views; constants (no input among their operands) are NumPy arrays in
        # tenpy_ad too, which refuse a tensor that requires grad (as documented)
        avoid = [_root(x) for x in self.inputs.values()] + \
            [_root(self.values[n]) for n in self.of_scalars if n in self.values]
        return [n for n in self.writable if self.values[n].dtype.kind in "fc"
                and not any(_root(self.values[n]) is x for x in avoid)]

    def _same_views(self, expression: str, raw) -> bool:
        """Whether tenpy_ad's result of ``expression`` is a view of its operands exactly
        when NumPy's is.  Values made from NumPy scalars are no write targets (NumPy's
        scalars take no writes), and a NumPy scalar by a basic index of a computed value
        is not drawn (KNOWN FAILURE: test_a_view_of_a_scalar_is_a_copy): tenpy_ad's 0-d
        results are arrays, whose views (``s[...]``) see writes."""
        names = [n for n in set(_NAME.findall(expression)) if n in self.values]
        if isinstance(raw, np.generic) and re.match(r"v\d+\[[^\[]*\]$", expression) and \
                not set(names) <= set(self.inputs):
            return False
        if any(n in self.scalars for n in names) or not any(
                n not in self.constants for n in names):
            self.of_scalars.add(f"v{len(self.values)}")     # (not a write target)
        if not any(n not in self.constants for n in names):
            self.constants.add(f"v{len(self.values)}")
        return True


    # -- the program
    def program(self, n_lines: int | None = None) -> Program:
        complex_program = self.chance(0.3)
        for _ in range(int(self.rng.integers(1, 4))):
            self.new_input(complex_=complex_program and self.chance(0.8))
        n_lines = int(self.rng.integers(1, 9)) if n_lines is None else n_lines
        attempts = 0
        while len(self.lines) < n_lines and attempts < 20 * n_lines:
            attempts += 1
            self._draw_line()
        for _ in range(10 * (self.writes and not self._has_writes())):
            self._draw_line("writes")    # a write program writes
            if self._has_writes():
                break
        candidates = [line.target for line in self.lines if line.writes is None] or \
            list(self.inputs)
        outputs = [candidates[-1]]
        for name in candidates[:-1]:
            if self.chance(0.2):
                outputs.append(name)
        # the targets and their views, at their final values
        outputs += [n for n in dict.fromkeys(self.written) if n not in outputs and
                    n in self.values and self.chance(0.6)]
        return Program(dict(self.inputs), list(self.lines), outputs).pruned(outputs)

    def _draw_line(self, family: str | None = None) -> None:
        if family is None and self.writes and self.chance(0.35):
            family = "writes"
        if family is None:
            family = self.choice(BIG_FAMILIES if self.max_size > MAX_SIZE else FAMILY_NAMES)
        self.kinked, self.condition, self.degenerate = False, 1.0, False
        expression = {**FAMILIES, **WRITE_FAMILIES}[family](self)
        if expression is not None:
            self.add_line(expression, family)

    def _has_writes(self) -> bool:
        return any(line.writes is not None for line in self.lines)


# ---------------------------------------------------------------------- op families
# Each maker returns one expression over existing values (or None); add_line checks it
# against NumPy.

_SMOOTH_UNARY = ["sin", "cos", "tan", "exp", "expm1", "tanh", "sinh", "cosh", "arctan",
                 "arcsinh", "square", "negative", "positive", "conj", "real", "imag",
                 "exp2", "sinc", "deg2rad", "rad2deg"]
_DOMAIN_UNARY = {   # functions with a restricted real domain: raw, or mapped into it
    "log": "xp.abs({x}) + 0.5", "log1p": "xp.abs({x})", "log2": "xp.abs({x}) + 0.25",
    "log10": "xp.abs({x}) + 1.0", "sqrt": "xp.abs({x}) + 0.1", "cbrt": "{x} + 3.0",
    "reciprocal": "xp.abs({x}) + 0.5", "arcsin": "xp.tanh({x})", "arccos": "xp.tanh({x})",
    "arctanh": "0.9 * xp.tanh({x})", "arccosh": "{x} * {x} + 1.5",
}
#: smooth functions of complex arguments with branch cuts (on the real or imaginary axis)
_BRANCH_CUTS = {"arctan", "arcsinh", "log", "log1p", "log2", "log10", "sqrt", "cbrt",
                "reciprocal", "arcsin", "arccos", "arctanh", "arccosh"}


def _on_an_axis(value) -> bool:
    """Whether a complex value has an entry with a zero real or imaginary part (where a
    branch cut may lie: finite differences across it see a jump, not the derivative)."""
    return value is not None and value.dtype.kind == "c" and bool(
        ((value.real == 0) | (value.imag == 0)).any())


_KINKED_UNARY = ["abs", "sign", "floor", "ceil", "round", "rint", "trunc", "fix", "angle"]


def _unary(g: Generator):
    x = g.pick()
    if x is None:
        return None
    roll = g.rng.random()
    if roll < 0.5:
        name = g.choice(_SMOOTH_UNARY)
        g.kinked = name in _BRANCH_CUTS and _on_an_axis(g.evaluate(x, g.values))
        return f"xp.{name}({x})"
    if roll < 0.8:
        name = g.choice(sorted(_DOMAIN_UNARY))
        argument = x if g.chance(0.3) else _DOMAIN_UNARY[name].format(x=x)
        # |x| at 0; a complex operand on a branch cut (finite differences cross it)
        g.kinked = "abs" in argument or _on_an_axis(g.evaluate(argument, g.values))
        return f"xp.{name}({argument})"
    g.kinked = True
    name = g.choice(_KINKED_UNARY)
    if name == "angle" and g.value(x).dtype.kind == "f":
        return None                                    # real angle: 0 or pi, derivative 0
    return f"xp.{name}({x})"


#: SciPy's special functions (``sp.special``), each with its argument mapped into the real
#: domain where it is smooth (or, now and then, as it is: their edges, poles and NaNs)
_SPECIAL_UNARY = {
    "erf": "{x}", "erfc": "{x}", "expit": "{x}", "log_expit": "{x}",
    "erfinv": "0.9 * xp.tanh({x})", "erfcinv": "1.0 + 0.9 * xp.tanh({x})",
    "gamma": "xp.abs({x}) + 0.5", "gammaln": "xp.abs({x}) + 0.5",
    "digamma": "xp.abs({x}) + 0.5", "entr": "xp.abs({x}) + 0.1",
    "logit": "0.05 + 0.9 * sp.special.expit({x})",
    "erfcx": "{x}", "ndtr": "{x}", "log_ndtr": "{x}", "i0": "{x}", "i1": "{x}",
    "ndtri": "0.05 + 0.9 * sp.special.expit({x})",
    "i0e": "xp.abs({x}) + 0.1", "i1e": "xp.abs({x}) + 0.1",
}
#: exp(-|x|) times a Bessel function: kinked at 0 (a raw argument may be 0)
_SCALED_AT_ABS = ("i0e", "i1e")
_SPECIAL_BINARY = {"xlogy": ("{x}", "xp.abs({y}) + 0.5"), "xlog1py": ("{x}", "xp.abs({y})"),
                   "rel_entr": ("xp.abs({x}) + 0.1", "xp.abs({y}) + 0.1"),
                   "kl_div": ("xp.abs({x}) + 0.1", "xp.abs({y}) + 0.1"),
                   # the shape parameters and degrees of freedom are constants here (their
                   # derivatives, quadratures, are checked in tests/test_scipy_special.py);
                   # betainc's two lead its three operands
                   "gammainc": ("1.5", "xp.abs({y}) + 0.1"),
                   "gammaincc": ("2.5", "xp.abs({y}) + 0.1"),
                   "stdtr": ("3.5", "{y}"),
                   "betainc": ("2.5, 1.5", "0.05 + 0.9 * sp.special.expit({y})"),
                   "betaincc": ("0.7, 3.0", "0.05 + 0.9 * sp.special.expit({y})"),
                   "fdtr": ("3.0, 5.0", "xp.abs({y}) + 0.1")}


def _special(g: Generator):
    x = g.pick()
    if x is None:
        return None
    real = lambda v: f"xp.real({v})" if v in g.values and g.value(v).dtype.kind == "c" else v
    if g.chance(0.65):
        name = g.choice(sorted(_SPECIAL_UNARY))
        argument = real(x) if g.chance(0.2) else _SPECIAL_UNARY[name].format(x=real(x))
        g.kinked = "abs" in argument
        if name in _SCALED_AT_ABS:
            _kinked_at_zero(g, argument)
        return f"sp.special.{name}({argument})"
    y = real(_partner(g, x))
    x = real(x)
    name = g.choice(sorted(_SPECIAL_BINARY))
    left, right = _SPECIAL_BINARY[name]
    g.kinked = True                        # |y|, and x == 0 where xlogy switches branches
    return f"sp.special.{name}({left.format(x=x)}, {right.format(y=y)})"


def _partner(g: Generator, x: str) -> str:
    """A second operand for ``x``: itself (ties), another value, a broadcastable input,
    a constant equal to ``x`` at some entries (ties) or a scalar."""
    roll = g.rng.random()
    shape = g.value(x).shape
    if roll < 0.15:
        return x
    if roll < 0.5:
        other = g.pick()
        if other is not None:
            return other
    if roll < 0.7:
        k = int(g.rng.integers(len(shape) + 1))
        sub = tuple(1 if g.chance(0.3) else d for d in shape[k:])
        return g.new_input(sub, complex_=g.value(x).dtype.kind == "c" and g.chance(0.5))
    if roll < 0.8 and x in g.inputs and g.value(x).size:
        copy = g.value(x).copy()                       # ties with an input, entry-wise
        flat = copy.reshape(-1)
        flat[g.rng.random(flat.size) < 0.5] += 1.0
        name = g.new_input(copy.shape, complex_=copy.dtype.kind == "c")
        g.values[name][...] = copy
        g.inputs[name] = g.values[name]
        return name
    return repr(g.choice([0.0, 1.0, -1.5, 2.0, 0.5, 3]))


_BINARY = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}
_SMOOTH_BINARY = ["arctan2", "hypot", "logaddexp", "logaddexp2"]
_KINKED_BINARY = ["maximum", "minimum", "fmax", "fmin", "copysign", "heaviside",
                  "remainder", "fmod", "floor_divide"]


def _binary(g: Generator):
    x = g.pick()
    if x is None:
        return None
    y = _partner(g, x)
    if g.chance(0.5):
        x, y = y, x
    roll = g.rng.random()
    if roll < 0.45:
        name = g.choice(sorted(_BINARY))
        if g.chance(0.5):
            return f"{x} {_BINARY[name]} {y}"
        return f"xp.{name}({x}, {y})"
    if roll < 0.6:
        name = g.choice(_SMOOTH_BINARY)
        values = [g.evaluate(v, g.values) for v in (x, y)]
        # hypot and arctan2 have a cone at (0, 0); logaddexp is smooth everywhere
        g.kinked = name in ("hypot", "arctan2") and any(
            v is None or (np.asarray(v) == 0).any() for v in values)
        return f"xp.{name}({x}, {y})"
    if roll < 0.75:
        exponent = g.choice(["2", "3", "0.0", "1", "0.5", "-1", "2.5", y])
        base = x if exponent in ("2", "3", "0.0", "1", "-1") or g.chance(0.2) \
            else f"(xp.abs({x}) + 0.5)"
        base_value = g.evaluate(base, g.values)
        x_value = g.evaluate(x, g.values)
        if "abs" in base and (x_value is None or (x_value == 0).any()):
            g.kinked = True              # |x| at 0
        if exponent == y and (base_value is None or (base_value == 0).any()):
            g.kinked = True              # x ** y at x = 0: not differentiable in (x, y)
        if exponent not in ("2", "3", "0.0", "1", "-1") and _on_an_axis(base_value):
            g.kinked = True              # a non-integer power's branch cut
        return f"{base} ** {exponent}" if g.chance(0.6) else f"xp.power({base}, {exponent})"
    g.kinked = True
    return f"xp.{g.choice(_KINKED_BINARY)}({x}, {y})"


def _select(g: Generator):
    """where and clip, with bounds and conditions placed on the data."""
    x = g.pick()
    if x is None:
        return None
    g.kinked = True
    v = g.value(x)
    real = v.dtype.kind == "f"
    if g.chance(0.5) and real and v.size and x in g.inputs:
        bound = float(g.rng.choice(v.reshape(-1)))     # a bound on an input's value
        low, high = sorted([bound, bound + float(g.rng.choice([0.0, 0.5, 1.0]))])
        if g.chance(0.3):
            return f"xp.clip({x}, {low!r}, None)"
        return f"xp.clip({x}, {low!r}, {high!r})"
    y = _partner(g, x)
    condition = g.choice([f"xp.real({x}) > 0", f"xp.real({x}) >= xp.real({y})",
                          f"xp.abs({x}) < 1.0"])
    return f"xp.where({condition}, {x}, {y})"


def _axis_args(g: Generator, ndim: int, allow_tuple=True) -> str:
    if ndim == 0 or g.chance(0.25):
        axis = "None"
    elif allow_tuple and ndim > 1 and g.chance(0.3):
        k = int(g.rng.integers(1, ndim + 1))
        axes = sorted(g.rng.choice(ndim, size=k, replace=False).tolist())
        axis = repr(tuple(a - ndim if g.chance(0.3) else a for a in axes))
    else:
        a = int(g.rng.integers(ndim))
        axis = str(a - ndim if g.chance(0.4) else a)
    keep = ", keepdims=True" if g.chance(0.4) else ""
    return f"axis={axis}{keep}"


_SMOOTH_REDUCTIONS = ["sum", "mean", "prod", "nansum"]
_KINKED_REDUCTIONS = ["max", "min", "amax", "amin", "ptp"]


def _reduction(g: Generator):
    x = g.pick()
    if x is None:
        return None
    v = g.value(x)
    roll = g.rng.random()
    if roll < 0.4:
        name = g.choice(_SMOOTH_REDUCTIONS)
        return f"xp.{name}({x}, {_axis_args(g, v.ndim)})"
    if roll < 0.55:
        ddof = g.choice(["", ", ddof=1"])
        expression = f"xp.{g.choice(['std', 'var'])}({x}, {_axis_args(g, v.ndim)}{ddof})"
        return _kinked_at_zero(g, expression)
    if roll < 0.65:
        return f"sp.special.logsumexp({x}, {_axis_args(g, v.ndim)})"
    if roll < 0.75 and v.ndim:
        name = g.choice(["cumsum", "cumprod"])
        return f"xp.{name}({x}, axis={int(g.rng.integers(-v.ndim, v.ndim))})"
    if roll < 0.85:
        order = g.choice(["None", "1", "2", "3", "np.inf", "-np.inf", "0.5"])
        g.kinked = order not in ("None", "2", "3")         # |x| or max|x| inside
        return _kinked_at_zero(g, f"xp.linalg.norm(xp.reshape({x}, (-1,)), {order})")
    g.kinked = True
    if v.dtype.kind == "c":
        return None
    return f"xp.{g.choice(_KINKED_REDUCTIONS)}({x}, {_axis_args(g, v.ndim)})"


def _kinked_at_zero(g: Generator, expression: str) -> str:
    """Norms and standard deviations are cones at 0: no second derivative there."""
    value = g.evaluate(expression, g.values)
    if value is not None and value.size and np.min(np.abs(value)) < 1e-9:
        g.kinked = True
    return expression


def _structural(g: Generator):
    x = g.pick()
    if x is None:
        return None
    v = g.value(x)
    n = v.ndim
    options = [
        lambda: f"xp.reshape({x}, {_factor_shape(g, v.size)})",
        lambda: f"{x}.reshape(-1)",
        lambda: f"xp.transpose({x}, {tuple(g.rng.permutation(n).tolist())})" if n else None,
        lambda: f"{x}.T",
        lambda: f"xp.swapaxes({x}, 0, -1)" if n else None,
        lambda: f"xp.moveaxis({x}, 0, -1)" if n else None,
        lambda: f"xp.expand_dims({x}, {int(g.rng.integers(-n - 1, n + 1))})",
        lambda: f"xp.squeeze({x})",
        lambda: f"xp.broadcast_to({x}, {(2,) + v.shape})",
        lambda: f"xp.flip({x}, {int(g.rng.integers(-n, n))})" if n else None,
        lambda: f"xp.roll({x}, {int(g.rng.integers(-3, 4))}, {int(g.rng.integers(n))})"
        if n else f"xp.roll({x}, 1)",
        lambda: f"xp.tile({x}, {g.choice([2, (1, 2), (2, 1, 1)])})",
        lambda: f"xp.repeat({x}, {g.choice([1, 2, 3])}, axis={int(g.rng.integers(n))})"
        if n else None,
        lambda: f"xp.diagonal({x}, {g.choice([0, 1, -1])})" if n >= 2 else None,
        lambda: f"xp.trace({x})" if n >= 2 else None,
        lambda: f"xp.{g.choice(['triu', 'tril'])}({x}, {g.choice([0, 1, -1])})"
        if n >= 2 else None,
        lambda: f"xp.diag({x})" if n in (1, 2) else None,
        lambda: f"xp.pad({x}, {g.choice([1, ((1, 0),) * n, ((0, 2),) * n])})" if n else None,
        lambda: f"xp.rot90({x})" if n >= 2 else None,
        lambda: f"xp.diff({x}, axis={int(g.rng.integers(-n, n))})" if n else None,
    ]
    return g.choice(options)()


def _factor_shape(g: Generator, size: int) -> tuple:
    if size == 0:
        return g.choice([(0,), (0, 3), (2, 0)])
    factors, rest = [], size
    for d in (2, 3, 2, 4):
        if rest % d == 0 and g.chance(0.5):
            factors.append(d)
            rest //= d
    shape = factors + [rest]
    g.rng.shuffle(shape)
    if g.chance(0.3):
        shape[int(g.rng.integers(len(shape)))] = -1
    return tuple(int(d) for d in shape)


def _indexing(g: Generator):
    x = g.pick(min_ndim=1)
    if x is None:
        return None
    v = g.value(x)
    n = v.ndim

    def axis_index():
        d = v.shape[0]
        kind = g.rng.integers(7)
        if kind == 0:
            return "::-1"
        if kind == 1:
            return f"{g.choice(['', '1', '-1'])}::{g.choice([2, -2, -1, 1])}"
        if kind == 2 and d:
            return str(int(g.rng.integers(-d, d)))
        if kind == 3:
            return ":"
        if kind == 4:
            return "None"
        if kind == 5:
            return "..."
        return f"1:{g.choice(['', '-1', '3'])}"
    roll = g.rng.random()
    if roll < 0.55:
        items = [axis_index() for _ in range(int(g.rng.integers(1, n + 1)))]
        if items.count("...") > 1:
            return None
        return f"{x}[{', '.join(items)}]"
    if roll < 0.75 and v.shape[0]:
        idx = g.rng.integers(-v.shape[0], v.shape[0], size=int(g.rng.integers(1, 5)))
        tail = ", ::-1" if n > 1 and g.chance(0.3) else ""
        return f"{x}[{idx.tolist()}{tail}]"             # repeats accumulate
    if roll < 0.85:
        return f"{x}[xp.real({x}) > 0]"                  # a boolean mask (eager only)
    if roll < 0.93 and v.shape[-1]:
        axis = n - 1
        idx = g.rng.integers(v.shape[-1], size=int(g.rng.integers(1, 4))).tolist()
        return f"xp.take({x}, {idx}, axis={axis})"
    if v.shape[-1]:
        g.kinked = True                  # sorted by a permutation: ties swap it
        return f"xp.take_along_axis({x}, xp.argsort(xp.real({x}), axis=-1), axis=-1)"
    return None


def _contraction(g: Generator):
    # BLAS's products treat NaN and Inf their own way (a zero factor may win): finite only
    x = g.pick(pred=lambda v: np.isfinite(v).all())
    if x is None:
        return None
    roll = g.rng.random()
    y = x if g.chance(0.3) else (g.pick(pred=lambda v: np.isfinite(v).all()) or x)
    if roll < 0.5:
        return _einsum(g, [x, y] if g.chance(0.8) else [x])
    if roll < 0.7:
        vx, vy = g.value(x), g.value(y)
        if g.chance(0.25):
            return f"xp.tensordot({x}, {y}, axes=([], []))"
        for k in range(min(vx.ndim, vy.ndim), -1, -1):
            if vx.shape[vx.ndim - k:] == vy.shape[:k] and g.chance(0.7):
                return f"xp.tensordot({x}, {y}, axes={k})"
        pairs = [(i, j) for i in range(vx.ndim) for j in range(vy.ndim)
                 if vx.shape[i] == vy.shape[j]]
        if pairs:
            i, j = g.choice(pairs)
            return f"xp.tensordot({x}, {y}, axes=([{i}], [{j}]))"
        return None
    if roll < 0.85:
        return f"{x} @ {y}" if g.chance(0.5) else f"xp.matmul({x}, {y})"
    return f"xp.{g.choice(['dot', 'inner', 'outer', 'kron', 'vdot'])}({x}, {y})"


def _einsum(g: Generator, operands: list):
    sizes: dict = {}
    letters = iter("abcdefgh")
    terms = []
    for name in operands:
        term = ""
        for d in g.value(name).shape:
            same = [c for c, s in sizes.items() if s == d and c not in term]
            if same and g.chance(0.6):
                term += g.choice(same)
            else:
                c = next(letters, None)
                if c is None:
                    return None
                sizes[c] = d
                term += c
        terms.append(term)
    used = sorted(set("".join(terms)))
    out = "".join(c for c in used if g.chance(0.5))
    out = "".join(g.rng.permutation(list(out)).tolist()) if out else ""
    args = ", ".join(operands)
    return f"xp.einsum('{','.join(terms)}->{out}', {args})"


def _joining(g: Generator):
    x = g.pick()
    if x is None:
        return None
    v = g.value(x)
    same = [n for n in g.floating() if g.value(n).shape == v.shape]
    y = g.choice(same)
    roll = g.rng.random()
    if roll < 0.35 and v.ndim:
        return f"xp.concatenate([{x}, {y}], axis={int(g.rng.integers(-v.ndim, v.ndim))})"
    if roll < 0.65:
        return f"xp.stack([{x}, {y}, {x}], axis={int(g.rng.integers(-v.ndim - 1, v.ndim + 1))})"
    if roll < 0.8:
        return f"xp.{g.choice(['hstack', 'vstack'])}([{x}, {y}])"
    if v.ndim and v.shape[0] >= 2:
        return f"xp.split({x}, {g.choice([[1], 2, [1, 1]])})[{g.choice([0, -1])}]"
    return None


def _sorting(g: Generator):
    x = g.pick(min_ndim=1, pred=lambda v: v.dtype.kind == "f")
    if x is None:
        return None
    g.kinked = True
    v = g.value(x)
    if g.chance(0.6):
        return f"xp.sort({x}, axis={int(g.rng.integers(-v.ndim, v.ndim))})"
    return f"xp.median({x})" if g.chance(0.5) else f"xp.nanmax({x})"


# -- linear algebra

def _matrix_line(g: Generator, square: bool) -> str | None:
    """A line making a matrix (or a stack of two) from a value: well-conditioned,
    ill-conditioned (singular values down to 1e-6), exactly degenerate (every eigenvalue
    twice) or as it comes."""
    x = g.pick(min_size=1, pred=lambda v: np.isfinite(v).all())
    if x is None:
        return None
    size = g.value(x).size
    n = int(g.choice([1, 2, 3]))
    m = n if square else int(g.choice([1, 2, 4]))
    b = 2 if g.chance(0.25) else 1
    need = b * m * n
    reps = -(-need // size)
    flat = f"xp.reshape({x}, (-1,))" if reps == 1 else \
        f"xp.tile(xp.reshape({x}, (-1,)), {reps})"
    shape = (b, m, n) if b > 1 else (m, n)
    base = f"xp.reshape({flat}[:{need}], {shape})"
    kind = g.rng.integers(5) if square else 4
    if kind <= 1:
        base = f"{base} + {n + 1.0} * xp.eye({n})"
    elif kind == 2:
        base = f"{base} @ xp.diag(xp.array({[10.0 ** -(3 * i) for i in range(n)]}))"
    elif kind == 3:
        base = f"xp.kron(xp.eye(2), {base})"
    return g.add_line(base, "linalg")


def _condition(a: np.ndarray) -> float:
    if a.size == 0:
        return 1.0
    s = np.linalg.svd(a, compute_uv=False)
    return float(np.max(s[..., 0] / np.maximum(s[..., -1], 1e-300)))


def _relative_gap(values: np.ndarray, with_zero: bool) -> float:
    """The smallest distance between two of ``values`` (per matrix; also to 0 when
    ``with_zero``: the implicit zero singular values of a non-square matrix's
    complement), relative to the largest magnitude."""
    if values.size == 0:
        return np.inf
    scale = max(1.0, float(np.abs(values).max()))
    values = np.sort(values, axis=-1)
    smallest = [np.diff(values, axis=-1)] + ([np.abs(values[..., :1])] if with_zero else [])
    flat = np.concatenate([d.reshape(-1) for d in smallest])
    return float(flat.min()) / scale if flat.size else np.inf


def _pairwise_gap(values: np.ndarray) -> float:
    """The smallest distance between two of the complex ``values`` (per matrix),
    relative to the largest magnitude."""
    n = values.shape[-1]
    if n < 2:
        return np.inf
    gaps = np.abs(values[..., :, None] - values[..., None, :]) + np.diag(np.full(n, np.inf))
    return float(gaps.min()) / max(1.0, float(np.abs(values).max()))


def _linalg(g: Generator):
    square = g.chance(0.75)
    a = _matrix_line(g, square)
    if a is None:
        return None
    v = g.value(a)
    if not np.isfinite(v).all():
        return None
    condition = _condition(v)
    # a zero singular value is degenerate for a non-square or complex matrix (its vectors'
    # complement or phase)
    gaps = [_relative_gap(np.linalg.svd(v, compute_uv=False),
                          v.shape[-1] != v.shape[-2] or v.dtype.kind == "c")]
    if square:
        gaps.append(_relative_gap(np.linalg.eigvalsh(v + np.conj(np.swapaxes(v, -1, -2))),
                                  False))
        gaps.append(_pairwise_gap(np.linalg.eigvals(v)))   # eig's (complex) values
    if any(1e-6 <= gap < 1e-3 for gap in gaps):
        return None        # nearly degenerate: the broadening (1e-16) moves derivatives by
        #                    eps / gap^2, more than the modes' agreement allows
    # equal values, or a zero singular value of a non-square matrix (equal to the implicit
    # zeros of the complement): the vectors are discontinuous there
    g.degenerate = min(gaps) < 1e-6
    # a zero singular value is a cone of s (|x| of a 1 x 1 matrix) for every matrix
    zero = _relative_gap(np.linalg.svd(v, compute_uv=False), True) < 1e-6
    g.kinked = g.degenerate or zero or condition > 1e4     # FD lose their accuracy too
    g.condition = min(condition, 1e8)
    herm = f"({a} + xp.conj(xp.swapaxes({a}, -1, -2)))"
    gram = f"({a} @ xp.conj(xp.swapaxes({a}, -1, -2)) + xp.eye({v.shape[-2]}))"
    k = int(g.rng.integers(1, min(v.shape[-2:]) + 1))
    invertible = condition < 1e8                   # else the value itself is noise
    flat2d = v.ndim == 2
    options = [
        f"xp.linalg.svd({a})[1]", f"xp.linalg.svdvals({a})",
        f"(lambda u, s, vh: (u * s[..., None, :]) @ vh)(*xp.linalg.svd({a}, "
        "full_matrices=False))",
        f"(lambda u, s, vh: u[..., :{k}] @ xp.conj(xp.swapaxes(u[..., :{k}], -1, -2)))"
        f"(*xp.linalg.svd({a}, full_matrices=False))",
        f"xp.abs(xp.linalg.svd({a}, full_matrices=False)[2]) ** 2",
        f"xp.linalg.norm({a}, {g.choice(['None', repr('fro'), repr('nuc'), '1', '-1', '2', '-2', 'np.inf', '-np.inf'])})"
        if flat2d else f"xp.linalg.norm({a}, axis=(-2, -1))",
        f"xp.linalg.cholesky({gram})",
        f"lx.svds({a}, {k})[1]" if flat2d else None,
        f"(lambda u, s, vh: u @ xp.conj(u.T))(*lx.svds({a}, {k}))" if flat2d else None,
        f"xp.linalg.multi_dot([{a}, xp.conj({a}.T), {a}])" if flat2d else None,
    ]
    leading = v[..., :, :min(v.shape[-2:])]       # QR's derivative solves with it
    if invertible and _condition(leading) < 1e8:
        options.append(f"xp.linalg.qr({a})[{g.choice([0, 1])}]")
    if invertible:
        options += [f"xp.linalg.pinv({a})",                # (a right-hand side off a's
                    f"xp.linalg.lstsq({a}, {a}[..., :, :1] + 1.0)[0]"   # columns: no zeros
                    if flat2d else None]                                # of rounding size)
    if square:
        options += [
            f"xp.linalg.eigh({herm})[0]", f"xp.linalg.eigvalsh({herm}, UPLO='U')",
            f"(lambda w, v: (v * w[..., None, :]) @ xp.conj(xp.swapaxes(v, -1, -2)))"
            f"(*xp.linalg.eigh({herm}))",
            f"xp.abs(xp.linalg.eigh({herm})[1]) ** 2",
            f"xp.linalg.det({a})",
            f"xp.linalg.matrix_power({a}, {g.choice([0, 1, 2, 3])})",
            f"sp.linalg.expm({a} * 0.5)",
            f"lx.eigsh({herm}, {k})[0]" if flat2d else None,
        ]
        if invertible:
            options += [
                f"xp.linalg.inv({a})", f"xp.linalg.slogdet({a})[1]",
                f"xp.linalg.solve({a}, {a}[..., :, 0])" if flat2d else
                f"xp.linalg.solve({a}, {a})",
                f"xp.linalg.matrix_power({a}, {g.choice([-1, -2])})",
                f"(xp.linalg.eigvals({a}) + 0j)",    # tenpy_ad's are always complex
                f"xp.linalg.cond({a}, {g.choice(['None', repr('fro'), '2', '-2', '1', 'np.inf'])})",
            ]
    expression = g.choice([o for o in options if o is not None])
    if any(kink in expression for kink in ("xp.abs(", "np.inf", ", 1)", ", -1)")):
        g.kinked = True                        # |x| at 0, max|x| at ties
    return expression


def _fixed_point(g: Generator):
    """The fixed point of a contraction of two real operands (:class:`FixedPoints`):
    the implicit derivatives of ``tp.fixed_point`` in every mode."""
    def moderate(v):                 # real, finite, not empty (the mean), |v| <= 10
        return v.dtype.kind != "c" and v.size > 0 and bool(np.all(np.abs(v) <= 10.0))
    a = g.pick(pred=moderate)
    if a is None:
        return None
    b = _partner(g, a)
    if b in g.values and not moderate(g.value(b)):
        return None
    options = g.choice(["", ", 'iterate'", ", 'gmres', 3", ", 'iterate', 2"])
    return f"fx.fixed_point({a}, {b}{options})"


# -- in-place writes and views

#: results laid out as NumPy's of a C-ordered operand of known layout (Generator._same_layouts)
_KNOWN_LAYOUT = re.compile(r"(v\d+\.copy\(\)|xp\.copy\(v\d+\)|xp\.(zeros|ones)_like\(v\d+\)"
                           r"|v\d+ \* 1\.5|xp\.sin\(v\d+\)|\(v\d+ \+ 0j\)"
                           r"|v\d+ \* \(1 \+ 0\.5j\))$")

def _writes(g: Generator):
    """A block of lines: a write target made from a value (a copy, ``zeros_like``,
    ``ones_like``, an arithmetic result, or an earlier writable result), views of it
    (basic indices with negative steps, transposes, reshapes, ``.real``/``.imag``, ...),
    then writes into the target and its views by every form (``t[idx] = v`` with basic,
    integer-array (repeated) and boolean indices, augmented assignment whole and indexed,
    ufuncs' ``out=``, ``clip(..., out=)``, ``copyto``, ``fill``, ``put``, ``place``), with
    reads between them.  The base and its views become outputs, so a view that missed a
    write (or saw one it should not) shows in the values and derivatives.  Adds its lines
    itself; returns None."""
    base = _write_base(g)
    if base is None:
        return None
    names = [base]
    for _ in range(int(g.rng.integers(0, 3))):
        view = _view_of(g, g.choice(names))
        if view is not None:
            names.append(view)
    g.written.extend(names)
    for _ in range(int(g.rng.integers(1, 4))):
        targets = [n for n in names if n in g.writable]
        if targets:
            _write(g, g.choice(targets))
        if g.chance(0.3):                        # a read between writes: the old values
            g.kinked = False
            x = g.choice(names)
            g.add_line(g.choice([f"xp.sin({x})", f"{x} * 2.0", f"xp.sum({x})",
                                 f"{x} @ {x}.T" if g.value(x).ndim == 2 else f"{x} ** 2"]),
                       "writes")
    return None


def _write_base(g: Generator) -> str | None:
    g.kinked = False
    earlier = g.write_targets()
    if earlier and g.chance(0.3):
        return g.choice(sorted(earlier, key=lambda n: int(n[1:])))
    x = g.pick()
    if x is None:
        return None
    roll = g.rng.random()
    if roll < 0.6:
        expression = g.choice([f"{x}.copy()", f"xp.copy({x})", f"xp.zeros_like({x})",
                               f"xp.ones_like({x})"])
    elif roll < 0.8:
        expression = g.choice([f"{x} * 1.5", f"xp.sin({x})", f"{x} + {_partner(g, x)}"])
    else:
        expression = g.choice([f"({x} + 0j)", f"{x} * (1 + 0.5j)"])     # complex targets
    name = g.add_line(expression, "writes")
    return name if name in g.write_targets() else None


def _basic_item(g: Generator, d: int) -> str:
    kind = g.rng.integers(8)
    if kind <= 1 and d:
        return str(int(g.rng.integers(-d, d)))
    if kind == 2:
        return g.choice(["::-1", "-1::-2", "::-2"])
    if kind == 3:
        return g.choice(["1:", ":-1", "::2", "1::2"])
    if kind == 4:
        return "None"
    if kind == 5:
        return "..."
    return ":"


def _basic_index(g: Generator, shape: tuple) -> str | None:
    """A basic index of an array of ``shape`` (integers, slices of any step, ``None``,
    ``...``): a view, or for a full integer index NumPy's scalar (a copy)."""
    if not shape:
        return g.choice(["...", "None", "..., None"])
    k = int(g.rng.integers(1, len(shape) + 1))
    items = [_basic_item(g, shape[i]) for i in range(k)]
    if items.count("...") > 1:
        return None
    return ", ".join(items)


def _view_of(g: Generator, name: str) -> str | None:
    """A view of ``name`` as NumPy makes one (a reshape NumPy cannot do in place is a
    copy in both)."""
    v = g.value(name)
    n = v.ndim
    options = [
        lambda: (lambda index: index and f"{name}[{index}]")(_basic_index(g, v.shape)),
        lambda: f"{name}.T",
        lambda: f"xp.transpose({name}, {tuple(g.rng.permutation(n).tolist())})" if n else None,
        lambda: f"xp.swapaxes({name}, 0, -1)" if n else None,
        lambda: f"xp.reshape({name}, {_factor_shape(g, v.size)})",
        lambda: f"{name}.reshape(-1)",
        lambda: f"xp.flip({name}, {int(g.rng.integers(-n, n))})" if n else None,
        lambda: f"xp.expand_dims({name}, 0)",
        lambda: f"xp.squeeze({name})",
        lambda: g.choice([f"{name}.real", f"{name}.imag", f"xp.real({name})"])
        if v.dtype.kind == "c" else None,
        lambda: f"xp.diagonal({name})" if n >= 2 else None,            # read-only
    ]
    expression = g.choice(options)()
    if expression is None:
        return None
    g.kinked = False
    return g.add_line(expression, "writes")


def _value_for(g: Generator, shape: tuple, complex_: bool, apart=None) -> str:
    """A value that broadcasts to ``shape``: a constant, an earlier value (the target
    itself included: overlapping reads, unless sharing memory with the array ``apart``),
    a new input or a 0-d value."""
    def fits(v):
        if apart is not None and v.size and np.shares_memory(v, apart):
            return False
        try:
            return np.broadcast_shapes(v.shape, shape) == shape and (
                complex_ or v.dtype.kind != "c")
        except ValueError:
            return False
    roll = g.rng.random()
    if roll < 0.2:
        return repr(g.choice([0.0, 1.0, -2.5, 0.5] + ([1 - 2j] if complex_ else [])))
    if roll < 0.6:
        names = [n for n in g.floating(pred=fits)]
        if names:
            return names[-1] if g.chance(0.4) else g.choice(names)
    k = int(g.rng.integers(len(shape) + 1))
    sub = tuple(1 if g.chance(0.25) else d for d in shape[k:])
    return g.new_input(sub, complex_=complex_ and g.chance(0.6))


def _inline_target(g: Generator, name: str) -> str:
    """``name``, or now and then a view of it made in the statement itself."""
    v = g.value(name)
    if g.chance(0.7) or not v.ndim:
        return name
    return g.choice([f"{name}.T", f"{name}[::-1]", f"{name}[1:]"] +
                    ([f"{name}.real", f"{name}.imag"] if v.dtype.kind == "c" else []))


def _write_index(g: Generator, shape: tuple, advanced: bool = True) -> str | None:
    """An index to write through: basic, integer arrays (repeats), boolean masks
    (``advanced``)."""
    n = len(shape)
    roll = g.rng.random()
    if roll < 0.45 or not n or not shape[0] or not advanced:
        return _basic_index(g, shape) if g.chance(0.8) or not n else \
            ", ".join(str(int(g.rng.integers(-d, d))) if d else ":" for d in shape)
    if roll < 0.7:
        idx = g.rng.integers(-shape[0], shape[0], size=int(g.rng.integers(1, 5))).tolist()
        if n >= 2 and shape[1] and g.chance(0.4):
            other = g.rng.integers(shape[1], size=len(idx)).tolist()
            return f"{idx}, {other}"
        return f"{idx}" + (", ::-1" if n > 1 and g.chance(0.3) else "")
    if roll < 0.85:
        return repr([bool(b) for b in g.rng.random(shape[0]) < 0.5])   # a mask of axis 0
    mask = g.rng.random(shape) < 0.5
    return f"np.array({mask.tolist()!r})"


def _write(g: Generator, name: str) -> None:
    """One write into ``name`` (a target or a view of one), by a form drawn at random;
    tried a few times until NumPy accepts one."""
    for _ in range(4):
        g.kinked = False
        statement = _write_statement(g, name)
        if statement is not None and g.add_statement(statement, name):
            return


def _write_statement(g: Generator, name: str) -> str | None:
    target = _inline_target(g, name)
    t = g.evaluate(target, g.values)
    if t is None:
        return None
    shape, complex_ = t.shape, t.dtype.kind == "c"
    advanced = True                    # integer-array and boolean indices too
    roll = g.rng.random()
    if roll < 0.25:
        index = _write_index(g, shape, advanced)
        sub = g.evaluate(f"{target}[{index}]", g.values)
        if index is None or sub is None:
            return None
        # NumPy's boolean-mask assignment does not buffer a value overlapping the target
        # (the result depends on its copy order), nor do put and place
        apart = _root(t) if "True" in index or "False" in index else None
        return f"{target}[{index}] = {_value_for(g, sub.shape, complex_, apart)}"
    if roll < 0.45:
        index = _write_index(g, shape, advanced)
        sub = g.evaluate(f"{target}[{index}]", g.values)
        if index is None or sub is None:
            return None
        op = g.choice(["+=", "-=", "*=", "/="])
        value = repr(g.choice([2.0, -4.0, 0.5])) if op == "/=" else \
            _value_for(g, sub.shape, complex_)
        return f"{target}[{index}] {op} {value}"
    if roll < 0.6:
        op = g.choice(["+=", "-=", "*=", "/=", "**="])
        value = repr(g.choice([2.0, -4.0, 0.5])) if op == "/=" else "2" if op == "**=" \
            else _value_for(g, shape, complex_)
        return f"{name} {op} {value}"     # traced: a new node, or refused where viewed
    if roll < 0.72:
        ufunc = g.choice(["add", "subtract", "multiply", "negative", "sin", "exp"])
        a = _value_for(g, shape, complex_)
        if ufunc in ("negative", "sin", "exp"):
            return f"xp.{ufunc}({a}, out={target})"
        return f"xp.{ufunc}({a}, {_value_for(g, shape, complex_)}, out={target})"
    if roll < 0.77 and not complex_:
        g.kinked = True
        return f"xp.clip({_value_for(g, shape, False)}, -0.5, 0.75, out={target})"
    if roll < 0.85:
        where = "" if g.chance(0.6) else \
            f", where=np.array({(g.rng.random(shape) < 0.5).tolist()!r})"
        return f"xp.copyto({target}, {_value_for(g, shape, complex_)}{where})"
    if roll < 0.9:
        zero_d = [n for n in g.floating(pred=lambda v: v.ndim == 0 and
                                        (complex_ or v.dtype.kind != "c"))]
        value = g.choice(zero_d) if zero_d and g.chance(0.5) else repr(g.choice([0.0, -1.5]))
        return f"{target}.fill({value})"
    size = int(np.prod(shape))
    if not size:
        return None
    count = int(g.rng.integers(1, 5))
    if g.chance(0.5):
        idx = g.rng.integers(-size, size, size=count).tolist()      # repeats: the last
        return f"xp.put({target}, {idx}, {_value_for(g, (count,), complex_, _root(t))})"
    mask = g.rng.random(shape) < 0.5
    values = _value_for(g, (int(g.rng.integers(1, 4)),), complex_, _root(t))
    return f"xp.place({target}, np.array({mask.tolist()!r}), {values})"


FAMILIES = {"unary": _unary, "binary": _binary, "select": _select,
            "reduction": _reduction, "structural": _structural, "indexing": _indexing,
            "contraction": _contraction, "joining": _joining, "sorting": _sorting,
            "linalg": _linalg, "special": _special, "fixed_point": _fixed_point}
FAMILY_NAMES = sorted(FAMILIES)
#: write programs (seeds ``(s, i, 1)``) draw these as well (a block of several lines)
WRITE_FAMILIES = {"writes": _writes}
# big programs: layouts (transposes, permuting einsums, steps) met by elementwise steps,
# then reductions, the paths where a plan could change an operand's layout
BIG_FAMILIES = (["structural"] * 3 + ["unary", "binary"] * 2 + ["reduction"] * 2 +
                ["indexing", "contraction", "joining", "select", "sorting"])


def draw_program(seed, big: bool = False) -> Program:
    """The program of ``seed`` (an int or a tuple of ints): deterministic.  ``big``:
    values of thousands of elements (no decompositions: their cost would dominate).
    A seed ``(s, i, 1)`` draws a write program: in-place writes and views among the
    other families (the programs of the seeds ``(s, i)`` are unchanged by them)."""
    writes = isinstance(seed, tuple) and len(seed) == 3 and seed[2] == 1
    program = Generator(np.random.default_rng(seed), big, writes).program()
    program.seed = seed
    return program

"""What a primitive's static params may be: one schema per primitive, declared beside it
(``primitive(..., params=...)``) and checked by one function.

A schema describes the params' structure and the ranges that hold whatever the operands
are: types (an ``int`` is never a ``bool`` or a ``float``), enumerations (a gather mode),
ranges (an axis is ``>= 0``: params hold normalised axes), lengths and orders (reduced axes
increase).  What depends on the operands (an axis below ``ndim``, a slice that fits its
axis) is the shape rule's part.  The engine checks a primitive's params where it runs the
shape rule (building a node, applying the op to arrays or eager tensors; elementwise
primitives with params also on their fast paths), so a malformed param fails in every mode
with a :class:`~tenpy_ad.errors.ParamError` naming the primitive and the part of the
params; loading a saved program checks every node with :func:`check_params` before binding.

Each schema can also give a value it accepts (:meth:`Schema.example`) and values it rejects
(:meth:`Schema.counterexamples`): the tests walk the registry with them.
"""
from __future__ import annotations

import re
import reprlib
from typing import Callable

from ._compiled import _core
from .errors import ParamError

#: NumPy's limit on the number of axes
MAX_NDIM = 64
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = 60
_repr.maxtuple = _repr.maxlist = 8


def short_repr(value) -> str:
    """A repr cut to a readable length (params from a file can be huge)."""
    return _repr.repr(value)


class Schema:
    """One part of a primitive's params; ``label`` names it in messages (``shape``) where
    the user knows it by that name, instead of its position (``params[0]``)."""

    description = "a valid value"
    label: str | None = None

    def named(self, label: str) -> "Schema":
        """This schema, labelled ``label``."""
        self.label = label
        return self

    def fits(self, value) -> bool:
        """Whether ``value`` fits, for schemas that need no path in their message."""
        raise NotImplementedError

    def problem(self, value, where: str) -> str | None:
        """None if ``value`` fits, else a message naming ``where`` (``params[1]``)."""
        if self.fits(value):
            return None
        return f"{where} = {short_repr(value)} is not {self.description}"

    def accepts(self, value) -> bool:
        """Whether ``value`` fits, building no message (every bind asks)."""
        return self.fits(value)

    def example(self):
        """A value the schema accepts."""
        raise NotImplementedError

    def counterexamples(self) -> list:
        """Values the schema rejects: wrong types, values out of range."""
        raise NotImplementedError


class Exactly(Schema):
    """One of the given values, of the same type (``Exactly(None)``: no params)."""

    def __init__(self, *values):
        self.values = values
        self.description = (repr(values[0]) if len(values) == 1 else
                            "one of " + ", ".join(repr(v) for v in values))

    def fits(self, value) -> bool:
        return any(type(value) is type(v) and value == v for v in self.values)

    def example(self):
        return self.values[0]

    def counterexamples(self) -> list:
        return [c for c in ("xxx", 7, ("tuple",)) if not self.fits(c)]


class Int(Schema):
    """A Python int (not a bool) in ``[low, high]`` (default: the int64 range)."""

    def __init__(self, low: int = INT64_MIN, high: int = INT64_MAX):
        self.low, self.high = low, high
        if low == INT64_MIN and high == INT64_MAX:
            self.description = "an int64"
        elif high == INT64_MAX:
            self.description = f"an int64 >= {low}"
        else:
            self.description = f"an int in [{low}, {high}]"

    def fits(self, value) -> bool:
        return type(value) is int and self.low <= value <= self.high

    def example(self):
        return max(self.low, min(self.high, 1))

    def counterexamples(self) -> list:
        good = self.example()
        return [str(good), float(good), True, self.low - 1, self.high + 1]


class Float(Schema):
    """A Python float, ``>= low`` when given (which also rejects NaN)."""

    def __init__(self, low: float | None = None):
        self.low = low
        self.description = "a float" if low is None else f"a float >= {low:g}"

    def fits(self, value) -> bool:
        return type(value) is float and (self.low is None or value >= self.low)

    def example(self):
        return 0.5 if self.low is None else self.low + 0.5

    def counterexamples(self) -> list:
        wrong = ["0.5", 1, True, None]
        return wrong if self.low is None else wrong + [self.low - 1.0, float("nan")]


class Bool(Schema):
    description = "a bool"

    def fits(self, value) -> bool:
        return type(value) is bool

    def example(self):
        return False

    def counterexamples(self) -> list:
        return [0, 1, "True", None]


class Text(Schema):
    """A string matching ``pattern`` (whole), and passing ``valid`` when given."""

    def __init__(self, description: str, pattern: str = r".*", max_length: int = 1 << 16,
                 valid: Callable[[str], bool] | None = None, example: str = ""):
        self.description = description
        self.pattern = re.compile(pattern, re.DOTALL)
        self.max_length = max_length
        self.valid = valid
        self._example = example

    def fits(self, value) -> bool:
        return (type(value) is str and len(value) <= self.max_length
                and self.pattern.fullmatch(value) is not None
                and (self.valid is None or self.valid(value)))

    def example(self):
        return self._example

    def counterexamples(self) -> list:
        return [c for c in (7, None, b"x", "\x00" * 3, "x" * (self.max_length + 1))
                if not self.fits(c)]


class Instance(Schema):
    """An instance of exactly ``cls`` (params that are objects: constants, regions)."""

    def __init__(self, cls: type, example: Callable | None = None, valid=None,
                 description: str | None = None):
        self.cls = cls
        self.make_example = example
        self.valid = valid
        self.description = description or f"a {cls.__name__}"

    def fits(self, value) -> bool:
        return type(value) is self.cls and (self.valid is None or self.valid(value))

    def example(self):
        if self.make_example is None:
            raise NotImplementedError(f"no example of {self.description}")
        return self.make_example()

    def counterexamples(self) -> list:
        return [0.5, "x", None, (1,)]


class Maybe(Schema):
    """None or a value of ``schema``."""

    def __init__(self, schema: Schema):
        self.schema = schema
        self.description = f"None or {schema.description}"

    def problem(self, value, where: str) -> str | None:
        return None if value is None else self.schema.problem(value, where)

    def accepts(self, value) -> bool:
        return value is None or self.schema.accepts(value)

    def example(self):
        return self.schema.example()

    def counterexamples(self) -> list:
        return [c for c in self.schema.counterexamples() if c is not None]


class AnyOf(Schema):
    """A value of one of ``schemas``."""

    def __init__(self, *schemas: Schema, description: str | None = None):
        self.schemas = schemas
        self.description = description or " or ".join(s.description for s in schemas)

    def accepts(self, value) -> bool:
        return any(s.accepts(value) for s in self.schemas)

    def problem(self, value, where: str) -> str | None:
        if self.accepts(value):
            return None
        if type(value) is tuple and value:   # the closest alternative: as long a tuple
            same = [s for s in self.schemas
                    if type(s) is Struct and len(s.fields) == len(value)]
            if same:                   # preferably one whose first field fits
                best = min(same, key=lambda s: s.fields[0].problem(value[0], "") is not None)
                return best.problem(value, where)
        return f"{where} = {short_repr(value)} is not {self.description}"

    def example(self):
        return self.schemas[0].example()

    def counterexamples(self) -> list:
        candidates = [c for s in self.schemas for c in s.counterexamples()]
        return [c for c in candidates + [{"x": 1}] if self.problem(c, "") is not None]


class Struct(Schema):
    """A tuple with one value per field."""

    def __init__(self, *fields: Schema):
        self.fields = fields
        self.description = f"a tuple of {len(fields)}"

    def accepts(self, value) -> bool:
        return type(value) is tuple and len(value) == len(self.fields) and all(
            field.accepts(item) for field, item in zip(self.fields, value))

    def problem(self, value, where: str) -> str | None:
        if type(value) is not tuple or len(value) != len(self.fields):
            return f"{where} = {short_repr(value)} is not {self.description}"
        for i, (field, item) in enumerate(zip(self.fields, value)):
            message = field.problem(item, field.label or f"{where}[{i}]")
            if message is not None:
                return message
        return None

    def example(self):
        return tuple(f.example() for f in self.fields)

    def counterexamples(self) -> list:
        good = self.example()
        bad = [list(good), good + (good[-1] if good else 0,), good[:-1] if good else (0,)]
        for i, field in enumerate(self.fields):
            bad += [good[:i] + (c,) + good[i + 1:] for c in field.counterexamples()[:3]]
        return bad


class TupleOf(Schema):
    """A tuple of values of ``item``: ``increasing`` strictly (sorted axes), at most
    ``max_length`` long, and passing ``valid(value)`` when given (``rule`` says what it
    checks)."""

    def __init__(self, item: Schema, max_length: int = 1 << 20, min_length: int = 0,
                 increasing: bool = False, valid: Callable[[tuple], bool] | None = None,
                 rule: str = "", example: tuple | None = None):
        self.item, self.max_length, self.min_length = item, max_length, min_length
        self.increasing, self.valid, self.rule = increasing, valid, rule
        self._example = example
        self.description = (f"a tuple of {item.description}" + (" (increasing)" if increasing
                                                                else ""))

    def accepts(self, value) -> bool:
        if type(value) is not tuple or not self.min_length <= len(value) <= self.max_length:
            return False
        if not all(self.item.accepts(item) for item in value):
            return False
        if self.increasing and any(a >= b for a, b in zip(value, value[1:])):
            return False
        return self.valid is None or bool(self.valid(value))

    def problem(self, value, where: str) -> str | None:
        if type(value) is not tuple:
            return f"{where} = {short_repr(value)} is not a tuple"
        if not self.min_length <= len(value) <= self.max_length:
            return (f"{where} has {len(value)} entries, not {self.min_length} to "
                    f"{self.max_length}")
        for i, item in enumerate(value):
            message = self.item.problem(item, f"{where}[{i}]")
            if message is not None:
                return message
        if self.increasing and any(a >= b for a, b in zip(value, value[1:])):
            return f"{where} = {short_repr(value)} is not increasing"
        if self.valid is not None and not self.valid(value):
            return f"{where} = {short_repr(value)} is not {self.rule}"
        return None

    def example(self):
        if self._example is not None:
            return self._example
        return tuple([self.item.example()] * max(self.min_length, 1 if not self.increasing
                                                 else 0))

    def counterexamples(self) -> list:
        good = self.example()
        items = self.item.counterexamples()[:3]
        bad = [list(good), {"x": 1}] + [(c,) + good[1:] for c in items]
        if self.increasing:
            bad.append((0, 0))
        return [c for c in bad if self.problem(c, "") is not None]


# ------------------------------------------------------------------ common parts

NO_PARAMS = Exactly(None)
AXIS = Int(0, MAX_NDIM - 1)
#: reduced axes: sorted, distinct, non-negative
AXES = TupleOf(AXIS, max_length=MAX_NDIM, increasing=True)
SIZE = Int(0)
SHAPE = TupleOf(SIZE, max_length=MAX_NDIM).named("shape")
EPS = Float(0.0)
BOOL = Bool()


class ScalarOf(Instance):
    """A ``Scalar`` static param holding a Python value of one of ``kinds``.  As the
    whole params of a primitive it is checked in the core (``kinds_mask``), without a
    Python call: scale, shift and pow are bound on every other node of a derivative."""

    def __init__(self, *kinds: type):
        names = " or ".join(k.__name__ for k in kinds)
        super().__init__(_core.Scalar, lambda: _core.Scalar(kinds[0](1)),
                         valid=lambda s: type(s.value) in kinds and (
                             type(s.value) is not int or INT64_MIN <= s.value <= INT64_MAX),
                         description=f"a Scalar of {names}")
        self.kinds = kinds
        self.kinds_mask = sum(1 << _core.Scalar(k(1)).kind for k in kinds)

    def counterexamples(self) -> list:
        wrong = [_core.Scalar(k(1)) for k in (float, int, complex, bool) if k not in self.kinds]
        if int in self.kinds:
            wrong.append(_core.Scalar(INT64_MAX + 1))
        return super().counterexamples() + wrong



def _is_permutation(value: tuple) -> bool:
    return sorted(value) == list(range(len(value)))


PERMUTATION = TupleOf(AXIS, max_length=MAX_NDIM, valid=_is_permutation,
                      rule="a permutation of 0..n-1", example=(1, 0))
#: a basic slice normalised by ``slice.indices``: start and stop >= -1 (-1: "through 0"
#: of a reversed slice; an empty axis reversed starts at -1), step != 0; the shape rule
#: checks it against its axis (:func:`slice_fits`)
SLICE = Struct(Int(-1), Int(-1), AnyOf(Int(1), Int(INT64_MIN, -1), description="an int != 0"))


def slice_fits(spec: tuple, size: int) -> bool:
    """Whether a ``SLICE`` triple is what ``slice.indices(size)`` makes of it, so that
    ``len(range(*spec))`` is the length NumPy gives (stop -1 stands for None)."""
    start, stop, step = spec
    return slice(start, None if stop < 0 else stop, step).indices(size) == spec


# ------------------------------------------------------------------ checking

class ParamCheck:
    """The check the engine calls with a primitive's params (``prim.check_params``)."""

    __slots__ = ("name", "schema")

    def __init__(self, name: str, schema: Schema):
        self.name, self.schema = name, schema

    def __call__(self, params) -> None:
        if self.schema.accepts(params):
            return
        message = self.schema.problem(params, self.schema.label or "params")
        if message is not None:
            raise ParamError(f"{self.name}: {message}")

    def __repr__(self):
        return f"<params of {self.name!r}: {self.schema.description}>"


def schema_of(prim) -> Schema:
    """The schema of ``prim``'s params (``NO_PARAMS`` for a primitive without params)."""
    check = prim.check_params
    return NO_PARAMS if check is None else check.schema


def check_params(prim, params) -> None:
    """Raise :class:`~tenpy_ad.errors.ParamError` unless ``params`` fit ``prim``'s schema."""
    check = prim.check_params
    if check is not None:
        check(params)
    elif params is not None:
        raise ParamError(f"{prim.name}: takes no params, got {short_repr(params)}")


__all__ = ["Schema", "Exactly", "Int", "Float", "Bool", "Text", "Instance", "Maybe", "AnyOf",
           "Struct", "TupleOf", "NO_PARAMS", "AXIS", "AXES", "SIZE", "SHAPE", "EPS", "BOOL",
           "PERMUTATION", "SLICE", "MAX_NDIM", "ScalarOf", "slice_fits", "ParamCheck",
           "schema_of", "check_params", "short_repr"]

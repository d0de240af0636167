"""One table of every primitive (through the public functions that lower onto it), with
the input domains and dtypes its gradient checks run on (tests/test_rules.py).

Each module of this package contributes a list ``SPECS`` for one family of primitives;
the table is their concatenation, so a new family is a new module and nothing else.
"""
import importlib
import pkgutil

from .table import BOTH, INF, NAN, REAL, Spec, SpecialPoint, flat, make_args

SPECS = []
for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _module != "table":
        SPECS += importlib.import_module(f"{__name__}.{_module}").SPECS

SPEC_BY_NAME = {s.name: s for s in SPECS}
if len(SPEC_BY_NAME) != len(SPECS):
    raise ValueError("two spec entries share a name")

__all__ = ["SPECS", "SPEC_BY_NAME", "Spec", "SpecialPoint", "make_args", "REAL", "BOTH",
           "INF", "NAN", "flat"]

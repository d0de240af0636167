"""Defaults of the linear-algebra derivatives: ``tp.linalg.config``."""
from __future__ import annotations

import numbers

from ...errors import ArgumentError, ArgumentValueError


#: what ``gauge_check`` may be (also the mode of the gauge and degeneracy checks' params)
GAUGE_MODES = ("raise", "warn", "off")


def _setting(name: str, check, doc: str) -> property:
    """A validated setting of :class:`LinalgConfig`: ``check(value, "tp.linalg.config.<name>")``
    returns the value kept, or raises."""
    field = "_" + name

    def set_value(self, value):
        setattr(self, field, check(value, f"tp.linalg.config.{name}"))
    return property(lambda self: getattr(self, field), set_value, doc=doc)


def _one_of(value, name: str) -> str:
    if value not in GAUGE_MODES:
        raise ArgumentValueError(f"{name}: expected one of {GAUGE_MODES}, got {value!r}")
    return value


def _non_negative(value, name: str) -> float:
    """A real number >= 0 (a bool or a string is refused, as ``float()`` would take
    ``"1e-8"``)."""
    if isinstance(value, (bool, str)) or not isinstance(value, numbers.Real):
        raise ArgumentError(f"{name}: expected a real number >= 0, got {value!r}")
    if not value >= 0:
        raise ArgumentValueError(f"{name}: expected a real number >= 0, got {value!r}")
    return float(value)


class LinalgConfig:
    """Defaults for the linear-algebra derivatives (read when a node is built).

    ``broadening``  Lorentzian epsilon for ``1/(s_i - s_j)``-type terms (default 1e-16).
                    The TRG derivative of the 2D Ising model needs it that small: from the
                    fifth RG step on the 256 x 256 matrices have hundreds of exactly equal,
                    near-zero singular values; the error grows like epsilon, and the common
                    1e-12 misses the reference values by ~4e-11.
    ``gauge_check`` what a VJP does when a complex loss depends on the arbitrary phase of
                    singular vectors/eigenvectors: ``"raise"`` (default), ``"warn"``, ``"off"``.
    ``gauge_rtol``  relative size of the phase-dependent part above which that happens.
    ``degeneracy_check`` what a VJP does when the loss depends on the basis of an
                    exactly degenerate subspace (singular vectors or eigenvectors of
                    repeated values entering other than through the whole subspace), where
                    its derivative is infinite: ``"raise"`` (default), ``"warn"``, ``"off"``
                    (the broadened rule's finite value, :mod:`.degenerate_guard`).
    """

    def __init__(self):
        self.broadening = 1e-16
        self.gauge_check = "raise"
        self.gauge_rtol = 1e-8
        self.degeneracy_check = "raise"

    broadening = _setting(
        "broadening", _non_negative,
        "Lorentzian epsilon of ``1/(s_i - s_j)``-type terms (a real >= 0; 1e-16).")
    gauge_check = _setting(
        "gauge_check", _one_of,
        "What a VJP does when a complex loss depends on the arbitrary phase of singular "
        "vectors or eigenvectors: ``\"raise\"`` (default), ``\"warn\"`` or ``\"off\"``.")
    gauge_rtol = _setting(
        "gauge_rtol", _non_negative,
        "Relative size of the phase-dependent part above which ``gauge_check`` acts (1e-8).")
    degeneracy_check = _setting(
        "degeneracy_check", _one_of,
        "What a VJP does when the loss depends on the basis of an exactly degenerate "
        "subspace: ``\"raise\"`` (default), ``\"warn\"`` or ``\"off\"``.")

    def __repr__(self):
        return (f"LinalgConfig(broadening={self.broadening!r}, "
                f"gauge_check={self.gauge_check!r}, gauge_rtol={self.gauge_rtol!r}, "
                f"degeneracy_check={self.degeneracy_check!r})")


config = LinalgConfig()


def broadening(eps: float | None, name: str) -> float:
    """The broadening a node is built with: ``eps`` or the configured default."""
    if eps is None:
        return config.broadening
    return _non_negative(eps, f"{name}: eps")

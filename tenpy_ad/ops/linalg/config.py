"""Defaults of the linear-algebra derivatives: ``tp.linalg.config``."""
from __future__ import annotations


#: what ``gauge_check`` may be (also the mode of the gauge and degeneracy checks' params)
GAUGE_MODES = ("raise", "warn", "off")


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
    """

    def __init__(self):
        self.broadening = 1e-16
        self.gauge_check = "raise"
        self.gauge_rtol = 1e-8

    def __repr__(self):
        return (f"LinalgConfig(broadening={self.broadening!r}, "
                f"gauge_check={self.gauge_check!r}, gauge_rtol={self.gauge_rtol!r})")


config = LinalgConfig()


def broadening(eps: float | None, name: str) -> float:
    """The broadening a node is built with: ``eps`` or the configured default."""
    eps = config.broadening if eps is None else float(eps)
    if not eps >= 0:
        raise ValueError(f"{name}: eps must be >= 0, got {eps}")
    return eps

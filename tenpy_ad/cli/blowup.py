"""``python -m tenpy_ad blowup``: the traced ``ad.grad`` cost versus chain depth (the table
and its options live in :mod:`tenpy_ad.blowup`, shared with ``bench/ad_blowup.py``)."""
from __future__ import annotations

from tenpy_ad.cli.arguments import Parser

DESCRIPTION = """\
The cost of the traced gradient transform tp.ad.grad against the depth n of a chain
y <- layer(y) on a 3x3 matrix (tenpy_ad.models.chains), one line per depth: value ops,
the median transform time, its ratio to the previous depth, derivative ops, microseconds
per derivative op, and the time to drop the derivative graph.  The transform is linear
in graph size: the time per op stays flat as n doubles.

Chains: mul y*y*0.5 and cube y*y*y*0.5 (every value reused: 2^n and 3^n paths), ladder
tanh(y*y), svd1 u + y, svd2 u*s + y, svd3 u*s + vt, qr2 q + r.

tenpy_ad measures itself only; bench/ad_blowup.py (in the source tree) prints the same
table and figure with JAX's measured columns beside when JAX is installed.
"""


def build_parser(prog: str, epilog: str = "") -> Parser:
    from tenpy_ad.blowup import add_arguments
    parser = Parser(prog=prog, description=DESCRIPTION, epilog=epilog)
    add_arguments(parser)
    return parser


def run(args) -> int:
    from tenpy_ad.blowup import run as run_table
    return run_table(args)

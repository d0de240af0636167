"""What computes each kind of program step, from the facts its primitive declares
(:mod:`tenpy_ad.step_facts`), decided once when a program is compiled."""
from __future__ import annotations

from .. import dtypes
from ..blas import threads_of_work


def blas_threads(prim, params, operands: list, setting):
    """The BLAS threads of a step of ``prim`` on ``operands`` (``(dtype code, shape)``
    each) under ``setting``: None (as they are), ``runtime.PROCESS`` or a count."""
    work = prim.step_facts.blas if prim.step_facts is not None else None
    if work is None:
        return None
    return threads_of_work(work.work, params, [shape for _, shape in operands],
                           dtypes.is_complex(operands[0][0]), setting)


def blas_kernel(prim, params, operands: list):
    """What a program calls for a step of a primitive that declares BLAS work: its kernel
    for these shapes, or the impl without the eager per-call decision."""
    work = prim.step_facts.blas
    specialized = None if work.specialize is None else \
        work.specialize(params, *[shape for _, shape in operands])
    return specialized or work.impl


def threaded_primitives() -> set:
    """The primitives that declare BLAS work."""
    from ..primitive import PRIMITIVES
    return {prim for prim in PRIMITIVES.values()
            if prim.step_facts is not None and prim.step_facts.blas is not None}

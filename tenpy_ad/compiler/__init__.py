"""The compiler: a traced graph scheduled into a Program, its memory plan and kernels, its
listing, and saving and loading it (see ``program.py`` for the way through).

``tp.compile``, ``tp.evaluate``, ``tp.Program``, ``tp.load_program`` and ``tp.load_graph``
are these names."""
from .program import Program, compile, evaluate, load_program
from .saved_programs import load_graph

__all__ = ["Program", "compile", "evaluate", "load_program", "load_graph"]

"""The command line, ``python -m tenpy_ad [SUB-COMMAND] [options]``.

Sub-commands (one module each, with ``build_parser(prog)`` and ``run(args)``):

* ``trg`` (the default): TRG for the 2D Ising model with AD, beside Onsager (:mod:`.trg`);
* ``ctmrg``: CTMRG for the 2D Ising model, derivatives implicit (:mod:`.ctmrg`);
* ``ipeps``: the variational C4v iPEPS ground state of a spin model (:mod:`.ipeps`);
* ``blowup``: the traced ``ad.grad`` cost versus chain depth (:mod:`.blowup`).

Every argument is checked while parsing, before any work: a bad one ends the command with
one line ``error: ...`` and exit code 2; a failure of the work itself with one line and
exit code 1 (:mod:`.exits`).  ``--json`` prints one JSON list of objects for every
sub-command.
"""
from __future__ import annotations

import importlib
import sys

from tenpy_ad.cli.exits import Failure, UsageError, exit_code

PROG = "python -m tenpy_ad"
COMMANDS = {
    "trg": "TRG for the 2D Ising model with AD, beside Onsager (the default)",
    "ctmrg": "CTMRG for the 2D Ising model, derivatives implicit through tp.fixed_point",
    "ipeps": "variational iPEPS ground states (Heisenberg, XXZ, TFIM) through CTMRG",
    "blowup": "the cost of the traced gradient transform versus chain depth",
}
DEFAULT = "trg"
EPILOG = "sub-commands (each with its own --help, e.g. python -m tenpy_ad ctmrg --help):\n" + \
    "\n".join(f"  {name:<8} {text}" for name, text in COMMANDS.items()) + """

exit codes: 0 done; 2 bad arguments (checked before any work); 1 the work failed.
TENPY_AD_TRACEBACK=1 shows the traceback of an unexpected error."""


def _command(argv: list) -> tuple:
    """The sub-command's name, its module, its prog and the remaining arguments."""
    if argv and argv[0] in COMMANDS:
        name, rest, prog = argv[0], argv[1:], f"{PROG} {argv[0]}"
    elif argv and not argv[0].startswith("-"):
        raise UsageError(f"unknown sub-command {argv[0]!r}: choose from "
                         f"{', '.join(COMMANDS)} (see {PROG} --help)")
    else:
        name, rest, prog = DEFAULT, argv, f"{PROG} [{DEFAULT}]"
    return name, importlib.import_module(f"tenpy_ad.cli.{name}"), prog, rest


def main(argv=None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        name, module, prog, rest = _command(argv)
        parser = module.build_parser(prog, EPILOG if name == DEFAULT else "")
        args = parser.parse_args(rest)
        return module.run(args)
    except SystemExit as done:          # --help
        if done.code is None or isinstance(done.code, int):
            return done.code or 0
        return exit_code(Failure(str(done.code)))
    except (Exception, KeyboardInterrupt) as error:
        return exit_code(error)

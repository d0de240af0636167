"""``python -m tenpy_ad ipeps``: the variational iPEPS ground state of a square-lattice
spin-1/2 model (a C4v single site, or a general real or complex cell), optimised by L-BFGS
through a gauge-fixed CTMRG environment."""
from __future__ import annotations

import json
import math
import os
import sys
import time

from tenpy_ad.cli.arguments import Parser, integer, plot_file
from tenpy_ad.cli.exits import Failure, UsageError

DESCRIPTION = """\
Variational iPEPS (Liao, Liu, Wang, Xiang, PRX 9, 031041): one C4v-symmetric tensor of
bond dimension D, its CTMRG environment of dimension chi as a gauge-fixed fixed point
(tp.fixed_point: derivatives implicit, memory flat in the CTMRG moves), the energy per
site from the two-site density matrix, minimised by tp.optimize's L-BFGS from a seeded
random tensor, the whole value-and-gradient compiled once.

models: heisenberg (S.S, with the sublattice rotation that lets one tensor describe the
Neel state), xxz (Sx Sx + Sy Sy + jz Sz Sz), tfim (-sz sz - field sx, Pauli matrices),
j1j2 (S.S on the nearest bonds, j2 S.S on the diagonals; --unit-cell 2x2 only, its energy
from each plaquette's reduced density matrix).
--unit-cell 2x2: four independent (non-symmetric) tensors with a directional CTMRG
environment (tenpy_ad.models.peps_cell), no sublattice rotation, from four seeded
random tensors (no order assumed; for heisenberg they reach about -0.66251 at D = 2,
below the C4v optimum).
--dtype complex128: complex tensors, optimised over their real and imaginary parts
(peps_cell); with --unit-cell 1x1 a general (non-C4v) single site in the rotated frame
(heisenberg, xxz; tfim needs no rotation), with 2x2 four complex tensors.  Both start
from seeded complex random tensors (2x2 heisenberg and xxz: the Neel cell of the 1x1
run's tensor, the same state), not from a real start cast to complex: the models are
real, so E(A) = E(conj A) and a real start has no gradient into the imaginary parts.
At D = 2 a complex 1x1 site reaches about -0.66251 for heisenberg, below the C4v optimum.
The report also gives |<S>| per site and its average (1x1: in the rotated frame, the
staggered moment; 2x2: the local moments, whose average is the staggered magnetisation
of a Neel cell) and the horizontal and vertical correlation lengths of the environment's
edge transfer matrices.
References (heisenberg): the D = 2 C4v optimum -0.6602310934799582, D = 3 about -0.6676,
quantum Monte Carlo -0.669437.
"""
MODELS = ("heisenberg", "xxz", "tfim", "j1j2")
UNIT_CELLS = ("1x1", "2x2")
DTYPES = ("float64", "complex128")
#: the short names --dtype also accepts
DTYPE_ALIASES = {"float": "float64", "complex": "complex128"}
#: bytes per tensor entry of each --dtype
ITEMSIZE = {"float64": 8, "complex128": 16}
#: references of the Heisenberg model, per site
REFERENCES = {"d2_c4v_optimum": -0.6602310934799582, "d3_c4v": -0.6676, "qmc": -0.669437}
#: the fraction of the machine's memory a run may plan to use
MEMORY_SHARE = 0.5


def build_parser(prog: str, epilog: str = "") -> Parser:
    parser = Parser(prog=prog, description=DESCRIPTION, epilog=epilog)
    parser.add_argument("--model", choices=MODELS, default="heisenberg",
                        help="the Hamiltonian (default heisenberg)")
    parser.add_argument("--jz", type=float, default=1.0, help="xxz: the Sz Sz coupling")
    parser.add_argument("--j2", type=float, default=0.5,
                        help="j1j2: the next-nearest (diagonal) coupling, J1 = 1 (default 0.5)")
    parser.add_argument("--field", type=float, default=2.5,
                        help="tfim: the transverse field (default 2.5, critical near 3.04)")
    parser.add_argument("--D", type=integer(1, 8), default=2, help="bond dimension (1..8)")
    parser.add_argument("--chi", type=integer(1, 512), default=16,
                        help="environment dimension (default 16)")
    parser.add_argument("--unit-cell", default="1x1",
                        help="the unit cell: 1x1 (a C4v-symmetric single site, default; "
                             "with --dtype complex128 a general, non-C4v one) or 2x2 (four "
                             "general tensors, directional CTMRG)")
    parser.add_argument("--dtype", type=_dtype, choices=DTYPES, default="float64",
                        help="the tensors' entries (default float64; float and complex are "
                             "aliases): complex128 optimises a general complex cell "
                             "(tenpy_ad.models.peps_cell), 1x1 or 2x2, from complex random "
                             "tensors")
    parser.add_argument("--seed", type=integer(0), default=0,
                        help="seed of the random starting tensor (default 0)")
    parser.add_argument("--maxiter", type=integer(1), default=500,
                        help="L-BFGS iterations at most (default 500)")
    parser.add_argument("--tol", type=float, default=1e-10,
                        help="tolerance of the environment (default 1e-10)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--plot", metavar="FILE", type=plot_file,
                        help="draw the energy per iteration against the references (log "
                             "axis); the suffix picks the format; needs matplotlib")
    parser.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    return parser


def _dtype(text: str) -> str:
    """The --dtype argument type: an alias read as its full name (anything else goes on
    to the choices' check, which names the choices)."""
    return DTYPE_ALIASES.get(text, text)


def planned_bytes(bond: int, chi: int, d: int = 2, plaquette: bool = False,
                  itemsize: int = 8) -> int:
    """About the memory the largest arrays of one evaluation of one site take (value and
    gradient); ``plaquette``: with the next-nearest terms' plaquette density matrices;
    ``itemsize``: bytes per entry (:data:`ITEMSIZE`, 16 for complex128)."""
    d2 = bond * bond
    corner = (chi * d2) ** 2                 # the enlarged corner, its eigenvectors, ...
    density = chi * chi * d2 ** 3 * d * d    # the bond density matrix's half column
    layer = d * d * d2 ** 4                  # the open double layer
    # the plaquette's upper and lower halves, chi^2 D^4 d^4 each
    halves = 2 * chi * chi * d2 ** 2 * d ** 4 if plaquette else 0
    return itemsize * (12 * corner + 6 * density + 4 * layer + 4 * halves)


def _machine_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def _general(args) -> bool:
    """Whether the run is peps_cell's general cell (2x2, or a complex 1x1 site) rather
    than the C4v code, which is real only."""
    return args.unit_cell == "2x2" or args.dtype == "complex128"


def _cell_size(args) -> tuple:
    return (2, 2) if args.unit_cell == "2x2" else (1, 1)


def _check(args) -> None:
    if args.unit_cell not in UNIT_CELLS:
        raise UsageError(f"--unit-cell {args.unit_cell}: only 1x1 (a C4v-symmetric single "
                         "site) and 2x2 (four general tensors) are supported")
    if args.model == "j1j2" and args.unit_cell != "2x2":
        also = " (the general complex 1x1 site too)" if args.dtype == "complex128" else ""
        raise UsageError(f"--model j1j2 needs --unit-cell 2x2 (its diagonal bonds come from "
                         f"the 2 x 2 plaquette), got --unit-cell {args.unit_cell}{also}")
    if not (0 < args.tol < 1e-3):
        raise UsageError(f"--tol must be in (0, 1e-3), got {args.tol}")
    if args.chi < args.D * args.D:
        raise UsageError(f"--chi {args.chi} is below D^2 = {args.D ** 2}: the environment "
                         "could not hold even one absorbed tensor")
    lx, ly = _cell_size(args)
    need = lx * ly * planned_bytes(args.D, args.chi, plaquette=args.model == "j1j2",
                                   itemsize=ITEMSIZE[args.dtype])
    have = _machine_bytes() * MEMORY_SHARE
    if need > have:
        raise UsageError(f"--D {args.D} --chi {args.chi} --dtype {args.dtype} would need about "
                         f"{need / 2 ** 30:.1f} GiB, more than {MEMORY_SHARE:.0%} of this "
                         f"machine's {_machine_bytes() / 2 ** 30:.1f} GiB")


def _hamiltonian(args, rotated: bool = True):
    from tenpy_ad.models import peps
    if args.model == "tfim":
        return peps.transverse_ising(args.field)
    if args.model == "j1j2":
        return peps.j1j2(args.j2)[0]
    return peps.heisenberg(jz=args.jz if args.model == "xxz" else None, rotated=rotated)


def _start(args) -> list:
    """The starting cell of a general run, of ``--dtype``: seeded random tensors, four on
    a 2x2 cell (for the Heisenberg model they reach -0.66251, below the C4v optimum,
    where the Neel cell of one random real tensor stalled at -0.64703 after 500
    iterations).  A complex run draws them complex (real and imaginary parts Gaussian):
    the models are real, so E(A) = E(conj A), the gradient into the imaginary parts
    vanishes at a real cell, and a real start would stay real.  A complex 2x2 heisenberg
    or xxz run starts from the Neel cell of the seed's complex 1x1 tensor, so the two
    cells start from one state."""
    from tenpy_ad.models import peps_cell
    dtype = complex if args.dtype == "complex128" else float
    lx, ly = _cell_size(args)
    if (lx, ly) == (2, 2) and args.model in ("heisenberg", "xxz") and dtype is complex:
        site = peps_cell.random_cell(1, 1, 2, args.D, args.seed, dtype)[0][0]
        return peps_cell.neel_cell(site)
    return peps_cell.random_cell(lx, ly, 2, args.D, args.seed, dtype)


def _optimize(args, callback):
    """The real 1x1 C4v optimisation, or peps_cell's of the general cell (:func:`_start`;
    a 1x1 cell in the rotated frame, a 2x2 one with unrotated bonds)."""
    from tenpy_ad.models import peps, peps_cell
    options = dict(tol=args.tol, maxiter=args.maxiter, callback=callback)
    if not _general(args):
        return peps.optimize(_hamiltonian(args), bond=args.D, chi=args.chi, seed=args.seed,
                             **options)
    lx, ly = _cell_size(args)
    h_bond, h_diagonal = _cell_bonds(args)
    return peps_cell.optimize(h_bond, lx, ly, bond=args.D, chi=args.chi,
                              tensors=_start(args), seed=args.seed, h_diagonal=h_diagonal,
                              **options)


def _cell_bonds(args) -> tuple:
    """``(h_bond, h_diagonal)`` of a general run: the bond rotated on a 1x1 cell (one
    tensor for both sublattices), unrotated on a 2x2 one; the diagonal bond of j1j2, else
    None."""
    from tenpy_ad.models import peps
    h_diagonal = peps.j1j2(args.j2)[1] if args.model == "j1j2" else None
    return _hamiltonian(args, rotated=_cell_size(args) == (1, 1)), h_diagonal


def run(args) -> int:
    _check(args)
    from tenpy_ad.errors import ConvergenceError
    start = time.perf_counter()
    energies, last = [], [start]

    def progress(iteration, x, value):
        energies.append(value)
        last.append(time.perf_counter())
        if not args.quiet:
            print(f"\riteration {iteration:4d}  energy {value:+.14f}", end="",
                  file=sys.stderr, flush=True)

    try:
        result = _optimize(args, progress)
    except ConvergenceError as error:
        raise Failure(f"the environment did not converge at the start: {error}") from None
    finally:
        if not args.quiet and energies:
            print(file=sys.stderr)
    report = _report(args, result, time.perf_counter() - start)
    report.update(_observables(args, result))
    if args.plot is not None:
        _plot(args.plot, energies, args)
    if args.json:
        print(json.dumps(report))
    else:
        _print(report)
    return 0


def _report(args, result, seconds: float) -> dict:
    report = {"energy": result.fun, "iterations": result.nit, "evaluations": result.nfev,
              "seconds_per_evaluation": seconds / max(result.nfev, 1),
              "total_seconds": seconds, "converged": bool(result.success),
              "message": result.message, "gradient_max": result.grad_norm,
              "settings": {"model": args.model, "D": args.D, "chi": args.chi,
                           "unit_cell": args.unit_cell, "dtype": args.dtype,
                           "ansatz": "general" if _general(args) else "c4v",
                           "seed": args.seed,
                           "tol": args.tol, "maxiter": args.maxiter,
                           **({"jz": args.jz} if args.model == "xxz" else {}),
                           **({"field": args.field} if args.model == "tfim" else {}),
                           **({"j2": args.j2} if args.model == "j1j2" else {})},
              "energies": list(result.history)}
    if args.model == "heisenberg":
        report["references"] = dict(REFERENCES)
    return report


def _observables(args, result) -> dict:
    """``magnetization`` (``sites``: ``|<S>|`` per site as a list of columns, ``average``)
    and ``correlation_lengths`` (``horizontal``, ``vertical``: of the edge transfer
    matrices; null if infinite) of the final state, in the environment re-converged at
    it (the optimiser's carry is the last trial point's).  1x1: one site in the rotated
    frame, where ``|<S>|`` is the staggered moment, and for the C4v site its edge's one
    length both ways, for a general (complex) one its two; 2x2: the local moments of the
    unrotated cell (their average, the staggered magnetisation of a Neel cell) and the
    cell's two lengths."""
    from tenpy_ad.models import peps, peps_cell
    if not _general(args):
        _, env = peps.energy(result.x, args.chi, _hamiltonian(args), env0=result.carry,
                             tol=args.tol)
        moment = float(peps.magnetization(peps.normalized(result.x), env))
        sites, average = [[moment]], moment
        horizontal = vertical = peps.correlation_length(env)
    else:
        h_bond, h_diagonal = _cell_bonds(args)
        cell = peps_cell.normalized_cell(result.x)
        _, env = peps_cell.cell_energy(cell, args.chi, h_bond, env0=result.carry,
                                       tol=args.tol, h_diagonal=h_diagonal)
        moments, average = peps_cell.magnetization(cell, env)
        sites, average = [[float(m) for m in column] for column in moments], float(average)
        horizontal, vertical = peps_cell.correlation_lengths(env)
    # an infinite length (a degenerate leading eigenvalue) is null, as in the other
    # sub-commands' JSON
    lengths = {"horizontal": horizontal, "vertical": vertical}
    return {"magnetization": {"sites": sites, "average": average},
            "correlation_lengths": {key: value if math.isfinite(value) else None
                                    for key, value in lengths.items()}}


def _print(report: dict) -> None:
    s = report["settings"]
    print(f"iPEPS {s['model']}, D = {s['D']}, chi = {s['chi']}, unit cell {s['unit_cell']} "
          f"({s['ansatz']}, {s['dtype']}), seed {s['seed']}")
    print(f"  energy per site  {report['energy']:+.15f}")
    for name, value in report.get("references", {}).items():
        print(f"  {name:16s} {value:+.15f}   (ours - it: {report['energy'] - value:+.2e})")
    m, xi = report["magnetization"], report["correlation_lengths"]
    print(f"  |<S>| per site   {m['sites']}  (average {m['average']:.10f})")
    lengths = ["inf" if xi[key] is None else f"{xi[key]:.6f}" for key in ("horizontal",
                                                                          "vertical")]
    print(f"  correlation lengths  horizontal {lengths[0]}  vertical {lengths[1]} (sites)")
    print(f"  {report['iterations']} iterations, {report['evaluations']} evaluations, "
          f"{report['seconds_per_evaluation'] * 1e3:.1f} ms each, "
          f"{report['total_seconds']:.2f} s in all; {report['message']}")


def _plot(path, energies: list, args) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise Failure("--plot needs matplotlib: pip install -e '.[plot]'") from None
    figure, axis = plt.subplots(figsize=(6.4, 4.2))
    if args.model == "heisenberg":
        qmc, optimum = REFERENCES["qmc"], REFERENCES["d2_c4v_optimum"]
        axis.semilogy(range(1, len(energies) + 1), [e - qmc for e in energies], ".-",
                      label=f"E - E_QMC (D = {args.D}, chi = {args.chi})")
        axis.axhline(optimum - qmc, color="C1", ls="--",
                     label=f"D = 2 C4v optimum - E_QMC = {optimum - qmc:.2e}")
        if args.D == 2:
            axis.semilogy(range(1, len(energies) + 1),
                          [max(abs(e - optimum), 1e-16) for e in energies], ".-", color="C2",
                          label="|E - E_opt(D = 2)|")
        axis.set_ylabel("energy error per site")
    else:
        best = min(energies)
        axis.semilogy(range(1, len(energies)), [e - best for e in energies[:-1]], ".-",
                      label="E - E_final")
        axis.set_ylabel("energy per site above the final one")
    axis.set_xlabel("L-BFGS iteration")
    axis.set_title(f"iPEPS {args.model}, D = {args.D}, chi = {args.chi}")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)

"""``python -m tenpy_ad ctmrg``: CTMRG for the 2D Ising model, derivatives implicit."""
from __future__ import annotations

import warnings
from functools import partial

from tenpy_ad.cli import output
from tenpy_ad.cli.arguments import (Parser, add_beta_options, add_output_options,
                                    add_process_options, check_beta_options, integer)
from tenpy_ad.cli.execution import (WINDOW_EACH_SIDE, WINDOW_HALF_WIDTH, Stopwatch,
                                    finished, plot_rows, prepare_process, report_failures,
                                    run_points)

DEFAULT_BETA = 0.6
DESCRIPTION = """\
CTMRG for the 2D Ising model (J = 1): the environment is the fixed point of the CTMRG
move, found by tp.fixed_point; lnZ/N from it, the energy u = -d(lnZ/N)/d beta and the
specific heat c = beta^2 d^2(lnZ/N)/d beta^2 by implicit differentiation of the fixed
point (not through the iterations), the magnetization |m| from an impurity tensor; beside
Onsager's and Yang's exact values, with the costs (iterations, forward and backward time).

  --mode compiled  trace lnZ/N once per beta with beta as a placeholder, differentiate
                   the graph, compile and run it
  --mode eager     compute lnZ/N eagerly (PyTorch style): lnz.backward() gives u, a
                   second backward sweep gives c

Below the critical temperature the boundary starts polarised (spins up), selecting the
m > 0 phase.  Near beta_c = 0.440687 CTMRG at finite chi converges slowly.  Should the
environment's entries stall above the tolerance (1e-10) while its corner spectrum has
converged, the point says how far from a fixed point it is (its values and derivatives are
accurate to about that).  A sweep keeps every finished point when one fails, names the
failed ones on stderr and exits with 1.
"""
#: said after a failed point
HINT = ("; CTMRG converges slowly near beta_c = 0.440687: a beta further from it, or a "
        "smaller --chi, converges faster")
COLUMNS = [("lnZ/N", "lnz"), ("u", "u"), ("|m|", "m"), ("c", "c")]


def build_parser(prog: str, epilog: str = "") -> Parser:
    parser = Parser(prog=prog, description=DESCRIPTION, epilog=epilog)
    add_beta_options(parser, f"default {DEFAULT_BETA}, in the ordered phase")
    parser.add_argument("--chi", type=integer(2), default=32,
                        help="bond dimension: states kept in the environment (default 32)")
    parser.add_argument("--mode", choices=("compiled", "eager"), default="compiled",
                        help="how the derivatives are taken (above; default compiled)")
    add_output_options(parser, "draw u, |m| and the errors against the exact solution "
                               f"over beta (a single beta gets {2 * WINDOW_EACH_SIDE} more "
                               f"betas within +-{WINDOW_HALF_WIDTH} around it, without c)")
    add_process_options(parser)
    return parser


def eager_point(beta: float, chi: int, second_order: bool = True) -> dict:
    """:func:`tenpy_ad.models.ctmrg.point` by eager AD: the same keys."""
    import tenpy_ad as tp
    from tenpy_ad.models import ctmrg
    boundary = ctmrg.converge(beta, chi)
    beta, stats = boundary.beta, {}
    watch = Stopwatch()
    b = tp.tensor(beta, requires_grad=True)
    lnz = ctmrg.ctmrg_lnz(b, chi, boundary=boundary, stats=stats)
    lnz.backward(create_graph=second_order)       # b.grad = d(lnZ/N)/d beta
    first = b.grad
    backward_s = watch.lap() / 1e3
    result = {"beta": beta, "chi": chi, "lnz": lnz.item(), "u": -first.item(),
              **ctmrg.environment_report(boundary),
              "adjoint_iterations": stats.get("adjoint_iterations"), "backward_s": backward_s}
    if second_order:
        watch.lap()

        def first_at(x: float) -> float:
            bx = tp.tensor(x, requires_grad=True)
            ctmrg.ctmrg_lnz(bx, chi, boundary=boundary).backward()
            return bx.grad.item()
        result.update(ctmrg.specific_heat(lambda x: tp.grad_of([first], [b])[0].item(),
                                          first_at, beta, chi),
                      second_s=watch.lap() / 1e3)
    result.update(ctmrg.exact(beta, second_order))
    return result


def quiet_point(point_of, beta: float, **options) -> dict:
    """``point_of(beta, **options)`` without the AccuracyWarning: the row carries what it
    says (``converged``, ``residual``), and the report prints it."""
    from tenpy_ad.models.ctmrg import AccuracyWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        return point_of(beta, **options)


def _rows(point, betas: list, args) -> list:
    """The rows of ``betas``; a point that failed is the row ``beta, error`` (and the
    settings)."""
    from tenpy_ad.models.ctmrg import POINT_FAILURES
    rows = run_points(point, betas, args.workers, args.threads, POINT_FAILURES)
    return [dict(row, chi=args.chi, mode=args.mode) for row in rows]


def _point(mode: str, chi: int, second_order: bool = True):
    from tenpy_ad.models import ctmrg
    point_of = ctmrg.point if mode == "compiled" else eager_point
    return partial(quiet_point, point_of, chi=chi, second_order=second_order)


def run(args) -> int:
    check_beta_options(args)
    prepare_process(args.threads)
    betas = args.betas or [DEFAULT_BETA if args.beta is None else args.beta]
    rows = _rows(_point(args.mode, args.chi), betas, args)
    if args.json:
        output.print_json(rows)
    elif finished(rows):
        print_rows(rows)
    if args.plot and finished(rows):
        plot(args, finished(rows))
    return report_failures(rows, HINT)


def print_rows(rows: list) -> None:
    """The table of one beta or a sweep (failed points marked), the accuracy notes and the
    cost lines."""
    done = finished(rows)
    first = done[0]
    print(f"CTMRG, 2D Ising (J = 1): chi = {first['chi']}, {first['mode']}, derivatives "
          "implicit (tp.fixed_point)")
    single = []
    if len(rows) == 1:
        single = [f"beta = {first['beta']:.12g} ({first['kept']} states kept)",
                  *output.observable_block(first, COLUMNS, "CTMRG + AD"),
                  f"  u from the local energy -2<s s> (no AD): {first['u_local']: .15f}"]
    output.print_report(rows, COLUMNS, single, "exact: Onsager (lnZ/N, u, c), Yang (|m|)",
                        accuracy_lines(done) + cost_lines(done))


def accuracy_lines(rows: list) -> list:
    """A line per point whose environment is a fixed point only to a residual above the
    tolerance (its entries stalled at a noise floor), per point whose c comes from
    differences (its derivative solve did not converge), and per point without c."""
    lines = [f"beta = {row['beta']:.6g}: the environment is a fixed point only to "
             f"{row['residual']:.1e} element-wise (tol {row['tol']:g}; its corner spectrum "
             "converged): values and derivatives are accurate to about that"
             for row in rows if not row.get("converged", True)]
    lines += [f"beta = {row['beta']:.6g}: c from central differences of the implicit u "
              f"(+- {row['c_uncertainty']:.1e}; {row['c_reason']})"
              for row in rows if row.get("c_method") == "differences"]
    return lines + [f"beta = {row['beta']:.6g}: no c ({row['c_error']})"
                    for row in rows if "c_error" in row]


def cost_lines(rows: list) -> list:
    """Medians per beta: forward iterations and time, derivative and second derivative."""
    median = partial(output.median, rows)
    second = f", c {median('second_s') * 1e3:.0f} ms" if "second_s" in rows[0] else ""
    return [f"cost per beta: forward {median('iterations'):.0f} moves to the fixed point in "
            f"{median('forward_s') * 1e3:.0f} ms (NumPy);",
            f"  lnZ/N and u {median('backward_s') * 1e3:.0f} ms ({rows[0]['mode']}, "
            f"{median('adjoint_iterations'):.0f} adjoint GMRES iterations){second}"]


def plot(args, rows: list) -> None:
    """The figure of ``rows``; a single beta gets its neighbours computed (without c)."""
    from tenpy_ad.models import onsager
    without_c = _point(args.mode, args.chi, second_order=False)

    def figure(first: dict) -> dict:
        return {"label": f"CTMRG + AD ({first['mode']})",
                "title": f"2D Ising by CTMRG: χ = {first['chi']}, derivatives implicit "
                         f"(tp.fixed_point), {first['mode']} AD",
                "panels": [("u", "energy per site u", onsager.energy, "Onsager"),
                           ("m", "magnetization |m|", onsager.magnetization, "Yang")],
                "errors": [("lnz", "lnZ/N"), ("u", "u"), ("m", "|m|"), ("c", "c")]}
    plot_rows(args.plot, rows, lambda betas: finished(_rows(without_c, betas, args)),
              figure)

"""``python -m tenpy_ad ctmrg``: CTMRG for the 2D Ising model, derivatives implicit."""
from __future__ import annotations

import math
from functools import partial

from tenpy_ad.cli import output
from tenpy_ad.cli.arguments import (Parser, add_beta_options, add_output_options,
                                    add_process_options, check_beta_options, integer)
from tenpy_ad.cli.execution import (WINDOW_EACH_SIDE, WINDOW_HALF_WIDTH, Stopwatch,
                                    plot_rows, prepare_process, run_points)
from tenpy_ad.cli.exits import Failure, one_line

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
m > 0 phase.  Near beta_c = 0.440687 CTMRG at finite chi converges slowly.
"""
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
    from tenpy_ad.errors import ConvergenceError
    from tenpy_ad.models import ctmrg
    boundary = ctmrg.converge(beta, chi)
    beta, env, stats = boundary.beta, boundary.env, {}
    watch = Stopwatch()
    b = tp.tensor(beta, requires_grad=True)
    lnz = ctmrg.ctmrg_lnz(b, chi, boundary=boundary, stats=stats)
    lnz.backward(create_graph=second_order)       # b.grad = d(lnZ/N)/d beta
    first = b.grad
    result = {"beta": beta, "chi": chi, "kept": boundary.kept, "lnz": lnz.item(),
              "u": -first.item(), "m": abs(float(ctmrg.magnetization(env, beta))),
              "u_local": -2.0 * float(ctmrg.bond_correlation(env, beta)),
              "iterations": boundary.iterations,
              "adjoint_iterations": stats.get("adjoint_iterations"),
              "forward_s": boundary.seconds, "backward_s": watch.lap() / 1e3}
    if second_order:
        watch.lap()
        try:
            (second,) = tp.grad_of([first], [b])
            c = beta * beta * second.item()
        except ConvergenceError:
            c = math.nan
        result.update(c=c, second_s=watch.lap() / 1e3)
    result.update(ctmrg.exact(beta, second_order))
    return result


def _rows(point, betas: list, args) -> list:
    from tenpy_ad.errors import ConvergenceError
    try:
        results = run_points(point, betas, args.workers, args.threads)
    except ConvergenceError as error:
        raise Failure(f"{one_line(error)}; CTMRG converges slowly near beta_c = 0.440687: "
                      "a beta further from it, or a smaller --chi, converges faster") from None
    return [dict(result, mode=args.mode) for result in results]


def _point(mode: str, chi: int, second_order: bool = True):
    from tenpy_ad.models import ctmrg
    point_of = ctmrg.point if mode == "compiled" else eager_point
    return partial(point_of, chi=chi, second_order=second_order)


def run(args) -> int:
    check_beta_options(args)
    prepare_process(args.threads)
    betas = args.betas or [DEFAULT_BETA if args.beta is None else args.beta]
    rows = _rows(_point(args.mode, args.chi), betas, args)
    if args.json:
        output.print_json(rows)
    else:
        print_rows(rows)
    if args.plot:
        plot(args, rows)
    return 0


def print_rows(rows: list) -> None:
    """The table of one beta or a sweep, and the cost lines."""
    first = rows[0]
    print(f"CTMRG, 2D Ising (J = 1): chi = {first['chi']}, {first['mode']}, derivatives "
          "implicit (tp.fixed_point)")
    single = [f"beta = {first['beta']:.12g} ({first['kept']} states kept)",
              *output.observable_block(first, COLUMNS, "CTMRG + AD"),
              f"  u from the local energy -2<s s> (no AD): {first['u_local']: .15f}"]
    output.print_report(rows, COLUMNS, single, "exact: Onsager (lnZ/N, u, c), Yang (|m|)",
                        cost_lines(rows))


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
    plot_rows(args.plot, rows, lambda betas: _rows(without_c, betas, args), figure)

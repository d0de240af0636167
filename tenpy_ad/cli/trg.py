"""``python -m tenpy_ad [trg]``: the main job, TRG for the 2D Ising model with AD."""
from __future__ import annotations

from functools import lru_cache, partial

from tenpy_ad.cli import output
from tenpy_ad.cli.arguments import (BETA_C_TEXT, Parser, add_beta_options,
                                    add_output_options, add_process_options,
                                    check_beta_options, integer)
from tenpy_ad.cli.execution import (WINDOW_EACH_SIDE, WINDOW_HALF_WIDTH, Stopwatch,
                                    finished, plot_rows, prepare_process, report_failures,
                                    run_points)

DESCRIPTION = """\
TRG for the 2D Ising model (J = 1): lnZ/N, the energy u = -d(lnZ/N)/d beta and the
specific heat c = beta^2 d^2(lnZ/N)/d beta^2 by automatic differentiation through every
RG step (SVDs included), beside Onsager's exact values, with what each stage cost.

  --mode compiled  trace the computation once with beta as a placeholder, differentiate
                   the graph twice, compile it, then run the program for each beta
  --mode eager     compute each beta eagerly (PyTorch style): lnz.backward() gives u,
                   a second backward sweep gives c
"""
COLUMNS = [("lnZ/N", "lnz"), ("u", "u"), ("c", "c")]


def build_parser(prog: str, epilog: str = "") -> Parser:
    parser = Parser(prog=prog, description=DESCRIPTION, epilog=epilog)
    add_beta_options(parser, f"default: the critical point {BETA_C_TEXT}")
    parser.add_argument("--chi", type=integer(2), default=16,
                        help="bond dimension: singular triplets kept per step (default 16)")
    parser.add_argument("--steps", type=integer(1, 1000), default=20,
                        help="RG steps; the lattice has 2^steps spins (default 20)")
    parser.add_argument("--svd", choices=("auto", "partial", "full"), default="auto",
                        help="auto (the default): the faster path for the size, full up to "
                             "chi = 20 (c is a second derivative), partial above; partial: "
                             "only the kept singular triplets (Krylov, exact derivatives); "
                             "full: the whole SVD, sliced")
    parser.add_argument("--mode", choices=("compiled", "eager"), default="compiled",
                        help="how the derivatives are taken (above; default compiled)")
    parser.add_argument("--checkpoint", action="store_true",
                        help="recompute each RG step in the backward pass instead of "
                             "storing it (less memory)")
    add_output_options(parser, "draw u, c and the errors against Onsager over beta (a "
                               f"single beta gets {2 * WINDOW_EACH_SIDE} more betas within "
                               f"+-{WINDOW_HALF_WIDTH} around it)")
    add_process_options(parser)
    return parser


@lru_cache(maxsize=4)
def _program(chi: int, steps: int, ks: tuple, svd_method: str, checkpoint: bool):
    """One compiled program per process and setting (a sweep's workers build their own)."""
    from tenpy_ad.models.trg import CompiledTRG
    return CompiledTRG(chi, steps, ks=list(ks), checkpoint=checkpoint, svd_method=svd_method)


def compiled_point(beta: float, chi: int, steps: int, ks: tuple, svd_method: str,
                   checkpoint: bool) -> dict:
    """lnZ/N, u, c at ``beta`` from the compiled program, with its costs (ms)."""
    from tenpy_ad.models.trg import observables
    program = _program(chi, steps, ks, svd_method, checkpoint)
    watch = Stopwatch()
    result = observables(beta, program(beta))
    result["run_ms"] = watch.lap()
    result.update({f"{stage}_ms": ms for stage, ms in program.timings.items()})
    result.update(value_ops=program.value_ops, total_ops=program.total_ops)
    return result


def eager_point(beta: float, chi: int, steps: int, ks: tuple, svd_method: str,
                checkpoint: bool) -> dict:
    """lnZ/N, u, c at ``beta`` by eager AD (``backward()``), with its costs (ms)."""
    import tenpy_ad as tp
    from tenpy_ad.models.trg import trg_lnz
    watch = Stopwatch()
    b = tp.tensor(beta, requires_grad=True)
    lnz = trg_lnz(b, chi, steps, ks=list(ks), svd_method=svd_method, checkpoint=checkpoint)
    forward_ms = watch.lap()
    lnz.backward(create_graph=True)           # b.grad = d(lnZ/N)/d beta, differentiable
    first = b.grad
    backward_ms = watch.lap()
    (second,) = tp.grad_of([first], [b])
    second_ms = watch.lap()
    return {"beta": beta, "lnz": lnz.item(), "u": -first.item(),
            "c": beta * beta * second.item(), "forward_ms": forward_ms,
            "backward_ms": backward_ms, "second_ms": second_ms}


def _rows(point, betas: list, args, ks: list) -> list:
    """The points at ``betas``, each beside Onsager's values and the settings; a point that
    did not converge is the row ``beta, error`` (and the settings)."""
    from tenpy_ad.errors import ConvergenceError
    from tenpy_ad.models import onsager
    settings = {"chi": args.chi, "steps": args.steps, "ks": ks, "svd": args.svd,
                "mode": args.mode, "checkpoint": args.checkpoint}
    rows = []
    for result in run_points(point, betas, args.workers, args.threads, (ConvergenceError,)):
        beta = result.pop("beta")
        if "error" in result:
            rows.append({"beta": beta, "error": result["error"], **settings})
            continue
        lnz, u, c = result.pop("lnz"), result.pop("u"), result.pop("c")
        rows.append({"beta": beta, "lnz": lnz, "u": u, "c": c, "lnz_exact": onsager.lnz(beta),
                     "u_exact": onsager.energy(beta), "c_exact": onsager.specific_heat(beta),
                     **settings, **result})
    return rows


def run(args) -> int:
    check_beta_options(args)
    prepare_process(args.threads)
    from tenpy_ad.models import onsager
    from tenpy_ad.models.trg import ks_rule, svd_method_for
    args.svd = svd_method_for(args.svd, args.chi, second_order=True)   # both modes give c
    ks = ks_rule(args.chi, args.steps, svd_method=args.svd)
    point_of = compiled_point if args.mode == "compiled" else eager_point
    point = partial(point_of, chi=args.chi, steps=args.steps, ks=tuple(ks),
                    svd_method=args.svd, checkpoint=args.checkpoint)
    betas = args.betas or [onsager.BETA_C if args.beta is None else args.beta]
    rows = _rows(point, betas, args, ks)
    if args.json:
        output.print_json(rows)
    elif finished(rows):
        print_rows(rows)
    if args.plot and finished(rows):
        plot(args, finished(rows), point)
    hint = "; --svd full computes the whole SVD instead" if args.svd == "partial" else ""
    return report_failures(rows, hint)


def print_rows(rows: list) -> None:
    """The table of one beta or a sweep (failed points marked), and the cost lines."""
    from tenpy_ad.models.onsager import BETA_C
    done = finished(rows)
    first = done[0]
    ks = first["ks"]
    shown = ", ".join(str(k) for k in ks[:6]) + (", ..." if len(ks) > 6 else "")
    print(f"TRG, 2D Ising (J = 1): chi = {first['chi']}, steps = {first['steps']} "
          f"(N = 2^{first['steps']} spins), svd {first['svd']}, {first['mode']}")
    print(f"ks = [{shown}] (singular triplets kept per step)")
    tag = " (beta_c)" if abs(first["beta"] - BETA_C) < 1e-12 else ""
    single = [f"beta = {first['beta']:.12g}{tag}",
              *output.observable_block(first, COLUMNS, "TRG + AD")]
    output.print_report(rows, COLUMNS, single, "exact: Onsager", cost_lines(done))


def cost_lines(rows: list) -> list:
    """What the run cost: the one-time stages and the median per beta."""
    median = partial(output.median, rows)
    first = rows[0]
    if first["mode"] == "eager":
        return [f"cost per beta (eager): forward {median('forward_ms'):.0f} ms (computes and "
                f"records the tape),",
                f"  backward {median('backward_ms'):.0f} ms (lnz.backward(): u), second "
                f"derivative {median('second_ms'):.0f} ms (c); nothing to build or compile"]
    return [f"cost: build {first['build_ms']:.1f} ms, grad transform "
            f"{first['grad_ms']:.1f} ms (+ {first['grad2_ms']:.1f} ms for the second "
            "derivative),",
            f"  compile {first['compile_ms']:.1f} ms, once; run {median('run_ms'):.0f} ms per "
            "beta (value + both derivatives, one program)",
            f"graph: {first['value_ops']} value ops, {first['total_ops']} ops with both "
            "derivatives (the transforms are linear in graph size)"]


def plot(args, rows: list, point) -> None:
    """The figure of ``rows``; a single beta gets its neighbours computed for it."""
    from tenpy_ad.models import onsager
    ks = rows[0]["ks"]

    def figure(first: dict) -> dict:
        return {"label": f"TRG + AD ({first['mode']})",
                "title": f"2D Ising by TRG: χ = {first['chi']}, {first['steps']} steps "
                         f"(2$^{{{first['steps']}}}$ spins), svd {first['svd']}, "
                         f"{first['mode']} AD",
                "panels": [("u", "energy per site u", onsager.energy, "Onsager"),
                           ("c", "specific heat per site c", onsager.specific_heat,
                            "Onsager")],
                "errors": [("lnz", "lnZ/N"), ("u", "u"), ("c", "c")]}
    plot_rows(args.plot, rows, lambda betas: finished(_rows(point, betas, args, ks)),
              figure)

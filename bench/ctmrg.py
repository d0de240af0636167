"""CTMRG (2D Ising, tenpy_ad.models.ctmrg) with implicit derivatives through tp.fixed_point,
beside the same derivative unrolled through every move.

One line per (beta, chi):

* forward: moves of the NumPy pass to the fixed point (``ctmrg.converge``), its time and
  peak traced memory; the states kept;
* implicit: lnZ/N and its derivative through ``tp.fixed_point`` started at the converged
  environment (one move, then the GMRES adjoint solve), eagerly (``backward()``; median
  time, peak memory) and as one compiled program (median run time); GMRES iterations;
* unrolled: the same number of moves from the initial boundary on an eager tape, then
  ``backward()`` through all of them: forward and backward time, peak memory;
* errors of lnZ/N, u = -d(lnZ/N)/d beta (implicit) and |m| against Onsager and Yang, and
  the difference between the unrolled and the implicit u.

Times and memory are measured in separate runs (tracemalloc slows what it watches).

    python bench/ctmrg.py --betas 0.4,0.6 --chis 16,32,64
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
import tracemalloc
from functools import partial

import tenpy_ad as tp
from tenpy_ad.models import ctmrg, onsager
from tenpy_ad.runtime import limit_blas_threads

from timing import Laps, median_laps


def peak_mb(run) -> float:
    """Peak traced memory (MB) while ``run()`` executes."""
    gc.collect()
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def implicit(beta: float, boundary, laps: Laps | None = None) -> float:
    """u by eager AD through tp.fixed_point from the converged environment."""
    laps = laps or Laps()
    b = tp.tensor(beta, requires_grad=True)
    lnz = ctmrg.ctmrg_lnz(b, boundary.chi, boundary=boundary)
    lnz.backward()
    laps.lap("implicit")
    return -float(b.grad)


def unrolled(beta: float, boundary, laps: Laps | None = None) -> float:
    """u by eager AD through every move of the forward pass, from the initial boundary."""
    laps = laps or Laps()
    b = tp.tensor(beta, requires_grad=True)
    t = ctmrg.ising_tensor(b)
    env = ctmrg.initial_environment(beta, boundary.polarized)
    keep = partial(ctmrg.kept_states, chi=boundary.chi)
    for _ in range(boundary.iterations):
        env = ctmrg.move(env, t, keep)
    lnz = ctmrg.lnz_per_site(env, t)
    laps.lap("unrolled_forward")
    lnz.backward()
    laps.lap("unrolled_backward")
    return -float(b.grad)


def compiled(beta: float, boundary):
    """The compiled program of lnZ/N and its derivative (implicit), and its GMRES stats."""
    stats: dict = {}
    b = tp.input((), name="beta")
    lnz = ctmrg.ctmrg_lnz(b, boundary.chi, boundary=boundary, stats=stats)
    program = tp.compile([lnz, tp.ad.grad(lnz, b)], inputs=[b])
    program(beta)
    return program, stats


def row(beta: float, chi: int, unroll: bool, repeats: int) -> dict:
    boundary = ctmrg.converge(beta, chi)
    forward_mb = peak_mb(lambda: ctmrg.converge(beta, chi))
    program, stats = compiled(beta, boundary)
    u = implicit(beta, boundary)

    def both(laps, i):
        implicit(beta, boundary, laps)
        program(beta)
        laps.lap("compiled")

    times = median_laps(both, repeats)
    result = {"beta": beta, "chi": chi, "kept": boundary.kept, "moves": boundary.iterations,
              "forward_s": boundary.seconds, "forward_MB": forward_mb,
              "implicit_ms": times["implicit"], "compiled_ms": times["compiled"],
              "gmres": stats["adjoint_iterations"],
              "implicit_MB": peak_mb(lambda: implicit(beta, boundary))}
    env = boundary.env
    result["lnz_error"] = abs(float(ctmrg.lnz_per_site(env, ctmrg.ising_tensor(beta)))
                              - onsager.lnz(beta))
    result["u_error"] = abs(u - onsager.energy(beta))
    result["m_error"] = abs(abs(float(ctmrg.magnetization(env, beta)))
                            - onsager.magnetization(beta))
    if unroll:
        laps = Laps()
        u_unrolled = unrolled(beta, boundary, laps)
        result.update({f"{k}_ms": v for k, v in laps.ms.items()})
        result["unrolled_MB"] = peak_mb(lambda: unrolled(beta, boundary))
        result["unrolled_minus_implicit"] = u_unrolled - u
    return result


HEADER = (f"{'beta':>5} {'chi':>4} {'kept':>4} {'moves':>5} {'fwd s':>7} {'fwd MB':>7} "
          f"{'impl ms':>8} {'comp ms':>8} {'gmres':>5} {'impl MB':>7} {'unr fwd s':>9} "
          f"{'unr bwd s':>9} {'unr MB':>8} {'err lnZ':>8} {'err u':>8} {'err |m|':>8} "
          f"{'u unr-impl':>10}")


def line(r: dict) -> str:
    if "unrolled_MB" in r:
        unrolled_part = (f"{r['unrolled_forward_ms'] / 1e3:>9.2f} "
                         f"{r['unrolled_backward_ms'] / 1e3:>9.2f} {r['unrolled_MB']:>8.1f}")
        difference = f"{r['unrolled_minus_implicit']:>10.1e}"
    else:
        unrolled_part, difference = f"{'-':>9} {'-':>9} {'-':>8}", f"{'-':>10}"
    return (f"{r['beta']:>5.2f} {r['chi']:>4} {r['kept']:>4} {r['moves']:>5} "
            f"{r['forward_s']:>7.2f} {r['forward_MB']:>7.2f} {r['implicit_ms']:>8.0f} "
            f"{r['compiled_ms']:>8.0f} {r['gmres']:>5} {r['implicit_MB']:>7.2f} "
            f"{unrolled_part} {r['lnz_error']:>8.1e} {r['u_error']:>8.1e} "
            f"{r['m_error']:>8.1e} {difference}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--betas", default="0.4,0.6")
    parser.add_argument("--chis", default="16,32,64")
    parser.add_argument("--unrolled-max-chi", type=int, default=64,
                        help="skip the unrolled derivative above this chi (it is slow)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="median over this many runs of the implicit derivative")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    limit_blas_threads(args.threads)
    if not args.json:
        print(f"# CTMRG 2D Ising; BLAS threads {args.threads}; core "
              f"{tp.core_info()['source_hash']}; errors against Onsager/Yang")
        print(HEADER)
    for chi in [int(c) for c in args.chis.split(",")]:
        for beta in [float(b) for b in args.betas.split(",")]:
            r = row(beta, chi, chi <= args.unrolled_max_chi, args.repeats)
            print(json.dumps(r) if args.json else line(r), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

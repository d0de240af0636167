"""TRG value + d/d beta per beta with the full SVD against the partial one (tp.linalg.svds).

One line per chi, steps and svd_method: program build (trace + grad + compile) and run
seconds (value and first derivative for one beta; the methods' runs interleaved, median of
--repeats), partial/full time ratio, lnZ/N and the energy u = -d(lnZ/N)/d beta with
their errors against Onsager, and partial - full differences.  The full path is skipped
above --full-max-chi (its chi^2 x chi^2 SVDs take ~10 s at chi = 48 and ~1 min at 64).
From --checkpoint-from on, the programs recompute each step in the backward pass
(``checkpoint=True``, method "+cp"): at chi = 64 the kept intermediates would take ~13 GB.

--second-order times the programs of the command line (value, first and second
derivative: u and c) instead of value and first derivative.

--forward adds the measurement behind svds' forward solver: on the TRG matrices at chi
(1024 x 1024 at chi = 32), the k + hint leading triplets by LAPACK's full gesdd, ARPACK,
PROPACK and a randomized range finder (power iterations), with the worst relative residual
|A^H u - s v| / s_1 of the kept triplets.

BLAS runs single-threaded (tenpy_ad.runtime; --threads to change).

    python bench/trg_partial.py --chis 16,24,32,48,64 --steps 10,20
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from tenpy_ad.models import onsager
from tenpy_ad.models.trg import CompiledTRG, ising_tensor, ks_rule, trg_step
from tenpy_ad.runtime import limit_blas_threads

from timing import Laps


def program_rows(chi: int, steps: int, methods: list, beta: float, repeats: int,
                 checkpoint: bool, second_order: bool = False) -> list:
    """One row per method; the runs of the methods are interleaved (a noisy shared
    machine slows them alike) and the median of ``repeats`` is reported.
    ``second_order``: the programs also compute d^2(lnZ/N)/d beta^2 (as the command
    line does, for c)."""
    ks = ks_rule(chi, steps, 0.3, "partial")
    programs, rows = {}, {}
    for method in methods:
        laps = Laps()
        programs[method] = CompiledTRG(chi, steps, ks=ks, second_order=second_order,
                                       svd_method=method, checkpoint=checkpoint)
        laps.lap("build")
        rows[method] = {"chi": chi, "steps": steps,
                        "method": method + ("+cp" if checkpoint else ""), "beta": beta,
                        "build_s": laps.seconds["build"], "runs": []}
    for _ in range(repeats):
        for method in methods:
            start = time.perf_counter()
            result = programs[method](beta)
            rows[method]["runs"].append(time.perf_counter() - start)
            rows[method].update(lnz=result["lnz"], u=-result["dlnz"])
    for row in rows.values():
        row["run_s"] = float(np.median(row.pop("runs")))
        row["lnz_error"] = abs(row["lnz"] - onsager.lnz(beta))
        row["u_error"] = abs(row["u"] - onsager.energy(beta))
    return [rows[method] for method in methods]


def print_row(row: dict, full: dict | None) -> None:
    extra = ""
    if full is not None and row["method"].startswith("partial"):
        extra = (f" {row['run_s'] / full['run_s']:>6.2f} {abs(row['lnz'] - full['lnz']):>9.1e}"
                 f" {abs(row['u'] - full['u']) / abs(full['u']):>9.1e}")
    print(f"{row['chi']:>4} {row['steps']:>5} {row['method']:>8} {row['build_s']:>7.2f} "
          f"{row['run_s']:>8.2f} {row['lnz']:>18.14f} {row['lnz_error']:>9.1e} "
          f"{row['u']:>18.14f} {row['u_error']:>9.1e}{extra}", flush=True)


def trg_matrices(chi: int, steps: int, beta: float) -> list:
    """The matrices TRG decomposes at chi (partial forward pass), largest ones only."""
    t = ising_tensor(beta)
    found = []
    for _ in range(steps):
        d = t.shape[0]
        if d * d > chi:
            found.append(np.asarray(t / np.abs(t).max()).reshape(d * d, d * d))
        t, _, _ = trg_step(t, None, chi, svd_method="partial")
    return found


def forward_rows(chi: int, beta: float, hint: int) -> list:
    import scipy.linalg
    import scipy.sparse.linalg as sparse
    rows = []
    for a in trg_matrices(chi, 8, beta)[-2:]:
        count = chi + hint

        def residual(u, s, vh):
            worst = np.linalg.norm(a.T @ u[:, :chi] - vh[:chi].T * s[:chi], axis=0).max()
            return worst / s[0]

        def sorted_triplets(u, s, vh):
            order = np.argsort(-s)
            return u[:, order], s[order], vh[order]

        def randomized(power):
            rng = np.random.default_rng(0)
            q = scipy.linalg.qr(a @ rng.standard_normal((a.shape[1], 2 * count)),
                                mode="economic")[0]
            for _ in range(power):
                q = scipy.linalg.qr(a @ scipy.linalg.qr(a.T @ q, mode="economic")[0],
                                    mode="economic")[0]
            ub, s, vh = np.linalg.svd(q.T @ a, full_matrices=False)
            return q @ ub, s, vh

        solvers = {"gesdd (full)": lambda: np.linalg.svd(a, full_matrices=False),
                   "arpack": lambda: sorted_triplets(*sparse.svds(
                       a, k=count, tol=0, solver="arpack", random_state=0)),
                   "propack": lambda: sorted_triplets(*sparse.svds(
                       a, k=count, tol=0, solver="propack", random_state=0)),
                   "randomized q=8": lambda: randomized(8),
                   "randomized q=16": lambda: randomized(16)}
        for name, solve in solvers.items():
            start = time.perf_counter()
            triplets = solve()
            rows.append({"size": a.shape[0], "k": chi, "hint": hint, "solver": name,
                         "ms": (time.perf_counter() - start) * 1e3,
                         "residual": float(residual(*triplets))})
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chis", default="16,24,32,48,64")
    parser.add_argument("--steps", default="10,20")
    parser.add_argument("--beta", default="bc", help="a float or 'bc' (beta_c)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--full-max-chi", type=int, default=32)
    parser.add_argument("--second-order", action="store_true",
                        help="the programs also compute the second derivative (c), as "
                             "python -m tenpy_ad does")
    parser.add_argument("--checkpoint-from", type=int, default=48)
    parser.add_argument("--forward", type=int, default=0, metavar="CHI",
                        help="also time the forward solvers on the TRG matrices at CHI")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    limit_blas_threads(args.threads)
    beta = onsager.BETA_C if args.beta == "bc" else float(args.beta)
    if args.forward:
        if not args.json:
            print(f"# forward: the {args.forward} + 8 leading triplets of TRG matrices "
                  f"(beta={beta:.6f}); BLAS threads {args.threads}")
            print(f"{'size':>5} {'solver':>16} {'ms':>8} {'residual':>9}")
        for row in forward_rows(args.forward, beta, 8):
            print(json.dumps(row) if args.json else
                  f"{row['size']:>5} {row['solver']:>16} {row['ms']:>8.1f} "
                  f"{row['residual']:>9.1e}", flush=True)
    if not args.json:
        what = "d/dbeta and d2/dbeta2" if args.second_order else "d/dbeta"
        print(f"# TRG value + {what} at beta={beta:.6f}, run s: median of {args.repeats} "
              f"interleaved runs; BLAS threads {args.threads}; errors against Onsager")
        print(f"{'chi':>4} {'steps':>5} {'method':>8} {'build s':>7} {'run s':>8} "
              f"{'lnZ/N':>18} {'err':>9} {'u':>18} {'err':>9} {'ratio':>6} "
              f"{'|dlnZ|':>9} {'rel du':>9}")
    for chi in [int(c) for c in args.chis.split(",")]:
        methods = ["full", "partial"] if chi <= args.full_max_chi else ["partial"]
        for steps in [int(s) for s in args.steps.split(",")]:
            full = None
            for row in program_rows(chi, steps, methods, beta, args.repeats,
                                    chi >= args.checkpoint_from, args.second_order):
                if args.json:
                    print(json.dumps(row), flush=True)
                else:
                    print_row(row, full)
                full = row if row["method"].startswith("full") else full
    return 0


if __name__ == "__main__":
    sys.exit(main())

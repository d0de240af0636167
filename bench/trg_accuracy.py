"""TRG accuracy against Onsager: lnZ/N and d(lnZ/N)/d beta errors per chi and beta.

    python bench/trg_accuracy.py --chis 16,24,32 --betas 0.3,bc --steps 20
"""
from __future__ import annotations

import argparse
import json
import sys

from tenpy_ad.models import onsager
from tenpy_ad.models.trg import CompiledTRG
from tenpy_ad.runtime import limit_blas_threads

from timing import Laps


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chis", default="16,24,32")
    parser.add_argument("--betas", default="0.3,bc", help="comma list; 'bc' = beta_c")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    limit_blas_threads(1)
    betas = [onsager.BETA_C if b == "bc" else float(b) for b in args.betas.split(",")]
    if not args.json:
        print(f"# TRG {args.steps} steps vs Onsager (errors are |TRG - exact|)")
        print(f"{'chi':>4} {'beta':>10} {'lnZ/N':>20} {'err lnZ/N':>10} {'d lnZ/dbeta':>20} "
              f"{'err':>10} {'run s':>7}")
    for chi in [int(c) for c in args.chis.split(",")]:
        program = CompiledTRG(chi, args.steps, second_order=False)
        for beta in betas:
            laps = Laps()
            result = program(beta)
            laps.lap("run")
            seconds = laps.seconds["run"]
            row = {"chi": chi, "beta": beta, "lnz": result["lnz"], "dlnz": result["dlnz"],
                   "lnz_error": abs(result["lnz"] - onsager.lnz(beta)),
                   "dlnz_error": abs(result["dlnz"] + onsager.energy(beta)),
                   "run_s": seconds}
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"{chi:>4} {beta:>10.6f} {row['lnz']:>20.15f} {row['lnz_error']:>10.2e} "
                      f"{row['dlnz']:>20.15f} {row['dlnz_error']:>10.2e} {seconds:>7.2f}",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

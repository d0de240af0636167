"""Does the Ising CTMRG (tenpy_ad.models.ctmrg) converge everywhere off beta_c, on any BLAS?

One line per (rule, perturbation, chi, beta): the states kept, the moves of the forward
pass (``ctmrg.converge``), the element-wise residual it reached and whether that met the
tolerance (``ok``), reached only a noise floor (``floor``: the corner spectrum converged,
the result says how far from a fixed point it is, with an AccuracyWarning) or failed
(``FAILED``: ConvergenceError after --max-iter moves); the errors of lnZ/N, |m| and the
local energy -2<ss> against Onsager and Yang, and the seconds.

A different BLAS rounds differently; these perturbations emulate it:

* ``tol=X``: a tighter tolerance than the default 1e-10;
* ``noise=X``: every move's corner and edge multiplied entry-wise by (1 + X N(0, 1)) (a
  roundoff X times larger, drawn afresh each move);
* ``gauge``: the starting environment in a random orthogonal gauge (C -> O^T C O, E's
  outer legs likewise).

``--rules weight`` adds the rule the CTMRG kept states by before (every state above 1e-8
of the strongest, whole clusters): its weak states' eigenvectors are not resolved, so its
entries stall (at beta = 0.3, chi = 32 near 1e-8: ConvergenceError after 10^4 moves
before the forward pass judged convergence on the corner spectrum; now a reported floor).

    python bench/ctmrg_robustness.py --betas 0.2,0.3,0.35,0.38,0.42,0.46,0.5,0.6 \\
        --chis 16,24,32,48 --perturbations none,tol=1e-12,noise=1e-14,gauge --rules gap,weight
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from contextlib import contextmanager

import numpy as np

from tenpy_ad.errors import ConvergenceError
from tenpy_ad.models import ctmrg, onsager
from tenpy_ad.models.trg import ising_tensor
from tenpy_ad.runtime import limit_blas_threads


def weight_rule(w: np.ndarray, chi: int) -> int:
    """The former rule: at most chi states above 1e-8 of the strongest, whole clusters."""
    a = np.sort(np.abs(np.asarray(w)))[::-1]
    k = min(chi, int(np.count_nonzero(a > 1e-8 * a[0])))
    while 1 < k < len(a) and a[k] >= (1.0 - ctmrg.CLUSTER_GAP) * a[k - 1]:
        k -= 1
    return max(k, 1)


@contextmanager
def patched(name: str, value):
    """``ctmrg.<name>`` replaced by ``value`` inside the block."""
    saved = getattr(ctmrg, name)
    setattr(ctmrg, name, value)
    try:
        yield
    finally:
        setattr(ctmrg, name, saved)


def noisy_move(scale: float, seed: int):
    """ctmrg.move with its outputs perturbed entry-wise by a relative ``scale``."""
    rng = np.random.default_rng(seed)
    exact_move = ctmrg.move

    def move(env, t, structure):
        c, e = exact_move(env, t, structure)
        c = c * (1.0 + scale * rng.standard_normal(c.shape))
        e = e * (1.0 + scale * rng.standard_normal(e.shape))
        return (c + c.T) * 0.5, (e + e.transpose(2, 1, 0)) * 0.5
    return move


def rotated_start(seed: int):
    """ctmrg.initial_environment in a random orthogonal gauge."""
    rng = np.random.default_rng(seed)
    initial = ctmrg.initial_environment

    def start(beta, polarized):
        c, e = initial(beta, polarized)
        o, _ = np.linalg.qr(rng.standard_normal(c.shape))
        return o.T @ c @ o, np.einsum("ax,asb,by->xsy", o, e, o)
    return start


@contextmanager
def perturbation(spec: str, seed: int):
    """The perturbation ``spec`` in effect; yields the options of ``converge``."""
    kind, _, value = spec.partition("=")
    if kind == "none":
        yield {}
    elif kind == "tol":
        yield {"tol": float(value)}
    elif kind == "noise":
        with patched("move", noisy_move(float(value), seed)):
            yield {}
    elif kind == "gauge":
        with patched("initial_environment", rotated_start(seed)):
            yield {}
    else:
        raise SystemExit(f"unknown perturbation {spec!r}")


def row(rule: str, spec: str, beta: float, chi: int, max_iter: int, seed: int) -> dict:
    result = {"rule": rule, "perturbation": spec, "beta": beta, "chi": chi}
    start = time.perf_counter()
    rule_patch = patched("kept_states", weight_rule) if rule == "weight" else \
        patched("kept_states", ctmrg.kept_states)
    with rule_patch, perturbation(spec, seed) as options, warnings.catch_warnings():
        warnings.simplefilter("ignore", ctmrg.AccuracyWarning)
        try:
            boundary = ctmrg.converge(beta, chi, max_iter=max_iter, **options)
        except ConvergenceError as error:
            result.update(status="FAILED", moves=error.iterations, residual=error.residual,
                          seconds=time.perf_counter() - start)
            return result
    env = boundary.env
    t = np.asarray(ising_tensor(beta))
    result.update(
        status="ok" if boundary.converged else "floor", kept=boundary.kept,
        moves=boundary.iterations, residual=boundary.residual,
        spectrum_change=boundary.spectrum_change, seconds=time.perf_counter() - start,
        lnz_error=abs(float(ctmrg.lnz_per_site(env, t)) - onsager.lnz(beta)),
        m_error=abs(abs(float(ctmrg.magnetization(env, beta))) - onsager.magnetization(beta)),
        u_local_error=abs(-2.0 * float(ctmrg.bond_correlation(env, beta))
                          - onsager.energy(beta)))
    return result


HEADER = (f"{'rule':>6} {'perturbation':>12} {'chi':>4} {'beta':>5} {'kept':>4} {'moves':>6} "
          f"{'residual':>9} {'status':>6} {'err lnZ':>8} {'err |m|':>8} {'err u_loc':>9} "
          f"{'s':>6}")


def print_row(r: dict) -> None:
    def sci(key):
        return f"{r[key]:.1e}" if key in r else "-"
    print(f"{r['rule']:>6} {r['perturbation']:>12} {r['chi']:>4} {r['beta']:>5.3g} "
          f"{r.get('kept', '-'):>4} {r['moves']:>6} {sci('residual'):>9} {r['status']:>6} "
          f"{sci('lnz_error'):>8} {sci('m_error'):>8} {sci('u_local_error'):>9} "
          f"{r['seconds']:>6.2f}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--betas", default="0.2,0.3,0.35,0.38,0.42,0.46,0.5,0.6")
    parser.add_argument("--chis", default="16,24,32,48")
    parser.add_argument("--perturbations", default="none,tol=1e-12,noise=1e-14,gauge")
    parser.add_argument("--rules", default="gap", help="gap (the rule), weight (former)")
    parser.add_argument("--max-iter", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    limit_blas_threads(args.threads)
    if not args.json:
        print(f"# ctmrg.converge, default tol {ctmrg.TOL:g}; BLAS threads {args.threads}; "
              "errors against Onsager and Yang")
        print(HEADER)
    for rule in args.rules.split(","):
        for spec in args.perturbations.split(","):
            for chi in [int(c) for c in args.chis.split(",")]:
                for beta in [float(b) for b in args.betas.split(",")]:
                    r = row(rule, spec, beta, chi, args.max_iter, args.seed)
                    if args.json:
                        print(json.dumps(r), flush=True)
                    else:
                        print_row(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())

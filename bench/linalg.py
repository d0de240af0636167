"""Forward + backward of decompositions, batched ``(64, 32, 32)`` and single ``256 x 256``,
beside PyTorch and JAX in the same run.

Two rows per (decomposition, shape): median ms of ``loss(a)`` plus its gradient, in
wall-clock time and in process CPU time (all threads; on a machine shared with other jobs
the wall clock also measures how the scheduler treats each engine), for tenpy_ad eager
(``tp.tensor`` + ``.backward()``), tenpy_ad compiled (``tp.compile`` of the loss and
``tp.ad.grad``), PyTorch eager (``.backward()``) and JAX (``jax.jit(jax.grad)``, compiled
before timing); ``ours/best`` is tenpy_ad eager over the faster peer.  Every engine runs
float64 with BLAS/LAPACK on one thread (threadpoolctl, ``torch.set_num_threads``, XLA's
single-thread flags), and the repeats are interleaved so that a noisy machine slows all
engines alike.  The losses use every output and are gauge-invariant (eig's also invariant
under reordering the eigenpairs); the engines' gradients are compared (``max |diff|``; for
eigh tenpy_ad's is the derivative of NumPy's lower-triangle function and is compared after
mapping the peers' gradient onto that triangle).

    python bench/linalg.py --ops svd,eigh,eig --repeats 21
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

import tenpy_ad as tp
from tenpy_ad.runtime import limit_blas_threads

from peers import has_module, load_jax, load_torch
from timing import median_laps

OPS = ("svd", "eigh", "eig")
SHAPES = ((64, 32, 32), (256, 256))


def problem(op: str, shape: tuple, seed: int = 0) -> dict:
    """The input (symmetric for eigh) and the loss weights of one row."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if op == "eigh":
        a = (a + np.swapaxes(a, -1, -2)) / 2
    return {"a": a, "matrix_weights": rng.standard_normal(shape),
            "value_weights": rng.standard_normal(shape[:-1])}


def loss(op: str, x, weights: dict, linalg, real, square_abs):
    """The loss of ``op`` written against one engine's ``linalg`` module."""
    mw, vw = weights["matrix_weights"], weights["value_weights"]
    if op == "svd":
        u, s, vh = linalg.svd(x, full_matrices=False)
        return (s * vw).sum() + (u * u * mw).sum() + (vh * vh * mw).sum()
    if op == "eigh":
        w, v = linalg.eigh(x)
        return (w * vw).sum() + (v * v * mw).sum()
    w, v = linalg.eig(x)        # LAPACK's order may differ between engines: weigh rows only
    return (real(w) * real(w)).sum() + (square_abs(v) * vw[..., :, None]).sum()


def tenpy_runners(op, p):
    def ours_loss(x):
        return loss(op, x, p, tp.linalg, tp.real, lambda v: tp.abs(v) ** 2)

    def eager():
        t = tp.tensor(p["a"], requires_grad=True)
        ours_loss(t).backward()
        return np.asarray(t.grad)

    x = tp.input(p["a"].shape)
    value = ours_loss(x)
    program = tp.compile([value, tp.ad.grad(value, x)], inputs=[x])
    return {"eager": eager, "compiled": lambda: program(p["a"])[1]}


def torch_runner(op, p):
    torch = load_torch()
    weights = {k: torch.tensor(v) for k, v in p.items() if k != "a"}

    def run():
        t = torch.tensor(p["a"], requires_grad=True)
        loss(op, t, weights, torch.linalg, lambda w: w.real, lambda v: v.abs() ** 2).backward()
        return t.grad.numpy()
    return run


class _JaxLinalg:
    """``jax.numpy.linalg`` with NumPy's reading of eigh (the lower triangle) and eig's
    eigenvector derivatives enabled (JAX asks to opt in)."""

    def __init__(self, jax):
        self.jnp = jax.numpy
        self.lax_linalg = jax.lax.linalg

    def svd(self, x, full_matrices):
        return self.jnp.linalg.svd(x, full_matrices=full_matrices)

    def eigh(self, x):
        return self.jnp.linalg.eigh(x, symmetrize_input=False)

    def eig(self, x):
        w, v = self.lax_linalg.eig(x, compute_left_eigenvectors=False,
                                   enable_eigvec_derivs=True)
        return w, v


def jax_runner(op, p):
    jax = load_jax()
    jnp = jax.numpy
    weights = {k: jnp.asarray(v) for k, v in p.items() if k != "a"}
    linalg = _JaxLinalg(jax)
    grad = jax.jit(jax.grad(lambda x: loss(op, x, weights, linalg, jnp.real,
                                           lambda v: jnp.abs(v) ** 2)))
    a = jnp.asarray(p["a"])
    grad(a).block_until_ready()                      # compile outside the timing
    return lambda: np.asarray(grad(a).block_until_ready())


def one_thread(peers: tuple) -> None:
    """One BLAS/LAPACK/OpenMP thread for every engine: the peers are imported first (with
    their own thread settings), then every loaded thread pool is limited, by threadpoolctl
    when installed, else through tenpy_ad.runtime (OpenBLAS only)."""
    for name in peers:
        {"torch": load_torch, "jax": load_jax}[name]()
    if has_module("threadpoolctl"):
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    else:
        limit_blas_threads(1)


def as_lower_triangle_gradient(g: np.ndarray) -> np.ndarray:
    """A symmetric-input gradient mapped to that of the lower-triangle function."""
    lower = np.tril(g + np.swapaxes(g, -1, -2), -1)
    return lower + np.tril(np.triu(g))


def measure(op: str, shape: tuple, repeats: int, peers: tuple) -> dict:
    p = problem(op, shape)
    runners = tenpy_runners(op, p)
    if "torch" in peers:
        runners["torch"] = torch_runner(op, p)
    if "jax" in peers:
        runners["jax"] = jax_runner(op, p)
    grads = {name: run() for name, run in runners.items()}      # warm-up and check
    reference = grads["eager"]
    row = {"op": op, "shape": list(shape)}
    for name in grads:
        g = grads[name]
        if name in ("torch", "jax") and op == "eigh":
            g = as_lower_triangle_gradient(g)
        row[f"{name}_grad_diff"] = float(np.max(np.abs(g - reference)))

    def interleaved(laps, _):
        for name, run in runners.items():
            laps.skip()
            run()
            laps.lap(name)

    cpu = {}
    wall = median_laps(interleaved, repeats, cpu=cpu)
    for clock, medians in (("wall", wall), ("cpu", cpu)):
        row[clock] = medians
        best = min((medians[name] for name in peers), default=None)
        if best is not None:
            row[f"{clock}_ours_over_best"] = medians["eager"] / best
            row[f"{clock}_compiled_over_best"] = medians["compiled"] / best
    return row


def format_rows(row: dict, peers: tuple) -> list[str]:
    """One line per clock: wall-clock and CPU medians, the ratios, the gradient check."""
    lines = []
    for clock in ("wall", "cpu"):
        ms = row[clock]
        cells = [f"{row['op']:>5}", f"{'x'.join(map(str, row['shape'])):>9}", f"{clock:>5}",
                 f"{ms['eager']:>9.2f}", f"{ms['compiled']:>9.2f}"]
        cells += [f"{ms[name]:>8.2f}" for name in peers]
        if peers:
            cells += [f"{row[f'{clock}_ours_over_best']:>9.2f}",
                      f"{row[f'{clock}_compiled_over_best']:>9.2f}",
                      f"{max(row[f'{n}_grad_diff'] for n in peers):>9.1e}"]
        lines.append(" ".join(cells))
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--shapes", default=";".join(",".join(map(str, s)) for s in SHAPES),
                        help="semicolon-separated shapes, e.g. '64,32,32;256,256'")
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--no-peers", action="store_true", help="tenpy_ad alone")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    peers = () if args.no_peers else tuple(n for n in ("torch", "jax") if has_module(n))
    one_thread(peers)
    shapes = [tuple(int(d) for d in s.split(",")) for s in args.shapes.split(";")]
    if not args.json:
        print(f"# forward + backward, float64, one thread, medians of {args.repeats} "
              f"(interleaved); ms of wall-clock and of process CPU time")
        print(f"{'op':>5} {'shape':>9} {'clock':>5} {'ours':>9} {'compiled':>9}"
              + "".join(f" {name:>8}" for name in peers)
              + (f" {'ours/best':>9} {'comp/best':>9} {'grad diff':>9}" if peers else ""))
    for op in args.ops.split(","):
        for shape in shapes:
            row = measure(op, shape, args.repeats, peers)
            print(json.dumps(row) if args.json else "\n".join(format_rows(row, peers)),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

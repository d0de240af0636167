"""The C4v iPEPS of ``tenpy_ad.models.peps`` written as a JAX user would, for the
side-by-side tables of bench/ipeps.py.

The same algorithm, convention for convention: the state symmetrised over the square's
eight symmetries and normalised; the double layer; one C4v CTMRG move (P^T Tt P contracted
without forming the enlarged edge Tt; the enlarged
corner's ``chi`` largest-|w| eigenvectors by decreasing w, rotated inside each multiplet by
the eigenbasis of the same covariant matrix, signs fixed against the same reference vector,
the projections symmetrised and normalised); the environment in two solves (the moves until
the corner spectrum converges, then the constant gauge relating the last move's result to
its operand -- NumPy's ``peps._relative_gauge`` for every engine -- and the fixed point of
the move followed by that gauge, from that result in that gauge, with Anderson mixing of
depth ``peps.ANDERSON``); the stopping
rules of ``tp.fixed_point`` (relative change <= tol, and a stalled iteration accepted at a
floor within ``min(1e3 tol, sqrt tol)``).

JAX's pieces: the forward iterations are a Python loop over a jitted move on values (no
gradient is recorded there); the energy's ``jax.jit(jax.value_and_grad(...))`` sees the
converged environment through a ``jax.custom_vjp`` whose backward pass solves the adjoint
fixed point ``lam = A^T lam + xbar`` with ``jax.scipy.sparse.linalg.gmres`` (incremental
Arnoldi, restart 60, the same relative tolerance) and returns ``B^T lam``.  JAX's own
``eigh`` derivative divides by ``w_j - w_i`` unbroadened (NaN or 1e15 at the corner's exact
degeneracies), so ``eigh`` here carries the Lorentzian-broadened rule of tenpy_ad's
(``x / (x^2 + 1e-16)``), as the peers' iPEPS codes do for their SVDs.
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from peers import load_jax
from tenpy_ad.models import peps

jax = load_jax()
jnp = jax.numpy

#: the Lorentzian broadening of 1/(w_j - w_i) (tenpy_ad's default, tp.linalg.config)
BROADENING = 1e-16
GMRES_RESTART = 60
#: iterations without halving after which a stalled iteration may be accepted
PATIENCE = 40


# ------------------------------------------------------------------ eigh, broadened

@jax.custom_jvp
def eigh(a):
    return jnp.linalg.eigh(a)


@eigh.defjvp
def _eigh_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    w, v = eigh(a)
    da = (da + da.T) * 0.5
    dp = v.T @ da @ v
    x = w[None, :] - w[:, None]                       # w_j - w_i
    gaps = x / (x * x + BROADENING + jnp.eye(w.shape[0]))
    return (w, v), (jnp.diagonal(dp), v @ (gaps * dp))


# ------------------------------------------------------------------ the state

def symmetrize(a):
    total = None
    for perm in peps.SQUARE_SYMMETRIES:
        term = jnp.transpose(a, (0,) + tuple(p + 1 for p in perm))
        total = term if total is None else total + term
    return total * 0.125


def normalized(params):
    a = symmetrize(params)
    return a / jnp.linalg.norm(a)


def double_layer(a):
    d2 = a.shape[1] ** 2
    return jnp.einsum("suldr,sULDR->uUlLdDrR", a, a).reshape(d2, d2, d2, d2)


def open_double_layer(a):
    d, d2 = a.shape[0], a.shape[1] ** 2
    return jnp.einsum("suldr,tULDR->stuUlLdDrR", a, a).reshape(d, d, d2, d2, d2, d2)


# ------------------------------------------------------------------ the move

def initial_environment(dl):
    delta = jnp.asarray(np.eye(math.isqrt(dl.shape[0])).reshape(dl.shape[0]))
    return (jnp.einsum("uldr,u,l->rd", dl, delta, delta), jnp.einsum("uldr,u->ldr", dl, delta))


def enlarged(env, dl):
    c, t = env
    k, d2 = c.shape[0], dl.shape[0]
    ct = jnp.einsum("ab,asx->bsx", c, t)
    ctt = jnp.einsum("bsx,bty->sxty", ct, t)
    m = jnp.einsum("sxty,stdr->xryd", ctt, dl).reshape(k * d2, k * d2)
    m = (m + m.T) * 0.5
    return m


def projected_edge(t, dl, p):
    """P^T Tt P [x, d, y] without forming Tt (as tenpy_ad.models.peps.projected_edge)."""
    k, d2 = t.shape[0], dl.shape[0]
    p3 = p.reshape(k, d2, p.shape[1])
    pt = jnp.einsum("alx,asb->xlsb", p3, t)
    pta = jnp.einsum("xlsb,sldr->xdbr", pt, dl)
    return jnp.einsum("xdbr,bry->xdy", pta, p3)


def _along(edge, probe):
    k = jnp.einsum("xdy,d->xy", edge, probe)
    k = (k + k.T) * 0.5
    return k / jnp.linalg.norm(k)


def _multiplet_rotation(w, edge):
    w = jax.lax.stop_gradient(w)
    gaps = jnp.abs(w[1:] - w[:-1]) > peps.MULTIPLET_GAP * jnp.max(jnp.abs(w))
    block = jnp.concatenate([jnp.zeros(1), jnp.cumsum(jnp.where(gaps, 1.0, 0.0))])
    same = jnp.where(block[:, None] == block[None, :], 1.0, 0.0)
    bond = np.arange(edge.shape[1])
    k1, k2, k3 = (_along(edge, probe) for probe in
                  (np.cos(1.0 + 0.7 * bond) + 0.3, np.sin(0.4 + 1.3 * bond * bond),
                   np.cos(2.1 * bond + 0.2) - 0.1))
    k = (k1 + (k2 @ k3 + k3 @ k2) * 0.5) * same
    k = (k + k.T) * 0.5
    shift = jax.lax.stop_gradient(block * (2.0 * jnp.linalg.norm(k) + 1.0))
    return eigh(k + jnp.diag(shift))[1]


def move(env, dl, chi: int):
    m = enlarged(env, dl)
    w, v = eigh(m)
    kept = jnp.argsort(-jnp.abs(w))[:min(chi, m.shape[0])]
    order = kept[jnp.argsort(-w[kept])]
    p = v[:, order]
    edge = projected_edge(env[1], dl, p)
    r = _multiplet_rotation(w[order], edge)
    r = r * jax.lax.stop_gradient(jnp.sign(jnp.asarray(peps._reference(m.shape[0])) @ (p @ r)))
    p = p @ r
    c_new = p.T @ m @ p
    t_new = jnp.einsum("xa,xdy,yb->adb", r, edge, r)
    c_new = (c_new + c_new.T) * 0.5
    t_new = (t_new + t_new.transpose(2, 1, 0)) * 0.5
    return c_new / jnp.linalg.norm(c_new), t_new / jnp.linalg.norm(t_new)


def _swap_layers(t):
    side, k = math.isqrt(t.shape[1]), t.shape[0]
    return t.reshape(k, side, side, k).transpose(0, 2, 1, 3).reshape(k, side * side, k)


def aligned_move(env, dl, gauge, chi: int):
    return regauged(move(env, dl, chi), gauge)


def regauged(env, gauge):
    (c, t), (signs, swapped) = env, gauge
    t = t + (_swap_layers(t) - t) * swapped
    return c * signs[:, None] * signs[None, :], t * signs[:, None, None] * signs[None, None, :]


def corner_spectrum(c):
    w = jnp.linalg.eigvalsh(c)
    return jnp.sort(w) / jnp.max(jnp.abs(w))


def _residual(new, old):
    """tp.fixed_point's residual: the largest change of a leaf over its largest entry."""
    return jnp.max(jnp.stack([jnp.max(jnp.abs(y - x)) / jnp.max(jnp.abs(y))
                              for y, x in zip(new, old)]))


# ------------------------------------------------------------------ observables

def bond_density_matrix(env, a_open):
    c, t = env
    corner_edge = jnp.einsum("ax,xsy->asy", c, t)
    column = jnp.einsum("asy,alc->sylc", corner_edge, t)
    column = jnp.einsum("sylc,cmw->sylmw", column, corner_edge)
    half = jnp.einsum("sylmw,iIslmp->yiIpw", column, a_open)
    rho = jnp.einsum("yiIpw,yjJpw->iIjJ", half, half)
    return rho / jnp.einsum("iijj->", rho)


def energy_per_site(a, env, h):
    rho = bond_density_matrix(env, open_double_layer(a))
    return jnp.einsum("iIjJ,IJij->", rho, h) * 2.0


# ------------------------------------------------------------------ the client

class Client:
    """``vg(params, env) -> ((E, env), g)`` of the JAX client at bond ``chi``; ``counts``
    holds the last call's forward moves (the spectrum solve, the gauge-fixed one)."""

    def __init__(self, chi: int, h=None, tol: float = peps.TOL, max_iter: int = 2000,
                 anderson: int = peps.ANDERSON):
        self.chi, self.tol, self.max_iter, self.anderson = chi, tol, max_iter, anderson
        self.accepted = min(1e3 * tol, math.sqrt(tol))
        self.h = jnp.asarray(peps.heisenberg() if h is None else h)
        self.counts: dict = {}
        self._double_layer = jax.jit(lambda p: double_layer(normalized(p)))
        self._move = jax.jit(partial(move, chi=chi))

        def spectrum_step(env, dl, watched):
            new = move(env, dl, chi)
            spectrum = corner_spectrum(new[0])
            return new, spectrum, _residual(new, env), jnp.max(jnp.abs(spectrum - watched))

        def aligned_step(env, dl, gauge):
            new = aligned_move(env, dl, gauge, chi)
            return new, _residual(new, env)

        self._spectrum_step = jax.jit(spectrum_step)
        self._aligned_step = jax.jit(aligned_step)
        self._regauged = jax.jit(regauged)
        self._spectrum = jax.jit(corner_spectrum)
        self._fixed = self._environment()
        self._value_and_grad = jax.jit(jax.value_and_grad(self._energy))

    # -- the implicit derivative
    def _environment(self):
        chi, tol, restart = self.chi, self.tol, GMRES_RESTART
        max_restarts = -(-self.max_iter // restart)

        @jax.custom_vjp
        def fixed(dl, env, gauge):            # env: the converged fixed point
            return env

        def forward(dl, env, gauge):
            return env, (dl, env, gauge)

        def backward(residuals, env_bar):
            dl, env, gauge = residuals
            _, pullback = jax.vjp(lambda e, d: aligned_move(e, d, gauge, chi), env, dl)

            def matvec(lam):
                ct_env, _ = pullback(lam)
                return jax.tree_util.tree_map(lambda x, y: x - y, lam, ct_env)

            lam, _ = jax.scipy.sparse.linalg.gmres(
                matvec, env_bar, x0=env_bar, tol=tol, atol=0.0, restart=restart,
                maxiter=max_restarts, solve_method="incremental")
            _, dl_bar = pullback(lam)
            return (dl_bar, jax.tree_util.tree_map(jnp.zeros_like, env),
                    jax.tree_util.tree_map(jnp.zeros_like, gauge))

        fixed.defvjp(forward, backward)
        return fixed

    def _energy(self, params, env, gauge):
        a = normalized(params)
        env = self._fixed(double_layer(a), env, gauge)
        return energy_per_site(a, env, self.h)

    # -- the forward solves
    def _iterate(self, step, x, monitored: bool):
        """tp.fixed_point's iteration (solvers.solve_by_iteration) on the jitted step."""
        mixer = None if monitored or not self.anderson else _Anderson(self.anderson)
        best, progress = (math.inf, math.inf, x), (math.inf, 0)
        for n in range(1, self.max_iter + 1):
            y, residual, criterion = step(x)
            residual = float(residual)
            if not math.isfinite(residual):
                raise FloatingPointError(f"jax client: the iteration diverged at move {n}")
            criterion = float(criterion) if monitored else residual
            if criterion <= self.tol:
                return y, n
            if criterion < best[0]:
                best = (criterion, residual, y)
            if criterion < 0.5 * progress[0]:
                progress = (criterion, n)
            elif n - progress[1] >= PATIENCE and best[0] <= self.accepted:
                break
            x = mixer.mix(x, y) if mixer is not None else y
        if best[0] > self.accepted:
            raise RuntimeError(f"jax client: no convergence after {n} moves "
                               f"(residual {best[0]:.3g})")
        return best[2], n

    def environment(self, dl, env0):
        """The converged, gauge-fixed environment and its gauge (values)."""
        watched = [self._spectrum(env0[0])]

        def spectrum_step(pair):             # (x, y) -> (y, move(y)), as peps.environment
            new, spectrum, residual, criterion = self._spectrum_step(pair[1], dl, watched[0])
            watched[0] = spectrum
            return (pair[1], new), residual, criterion

        env0 = tuple(env0)
        (before, rough), moves = self._iterate(spectrum_step, (env0, env0), monitored=True)
        signs, swapped = peps._relative_gauge(None, *(np.asarray(x) for x in rough + before))
        gauge = (jnp.asarray(signs), jnp.asarray(swapped))
        rough = self._regauged(rough, gauge)
        env, aligned = self._iterate(lambda e: (*self._aligned_step(e, dl, gauge), None),
                                     rough, monitored=False)
        self.counts = {"spectrum_moves": moves, "aligned_moves": aligned}
        return env, gauge

    def __call__(self, params, env0):
        params = jnp.asarray(params)
        env, gauge = self.environment(self._double_layer(params),
                                      tuple(jnp.asarray(x) for x in env0))
        value, grad = self._value_and_grad(params, env, gauge)
        return (value, env), grad

    def grown_environment(self, params, moves: int = 4):
        """peps.grown_environment: the closed boundary grown to chi, then a few moves."""
        dl = self._double_layer(jnp.asarray(params))
        env = initial_environment(dl)
        while env[0].shape[0] < self.chi:
            env = self._move(env, dl)
        for _ in range(moves):
            env = self._move(env, dl)
        return env


class _Anderson:
    """Type-II Anderson mixing over the last ``depth`` steps (tenpy_ad.solvers._Anderson),
    on the leaves packed into one NumPy vector."""

    def __init__(self, depth: int):
        self.depth, self.history, self.previous = depth, [], None

    def mix(self, x, y):
        shapes = [leaf.shape for leaf in y]
        g = np.concatenate([np.asarray(leaf).ravel() for leaf in y])
        f = g - np.concatenate([np.asarray(leaf).ravel() for leaf in x])
        if self.previous is not None:
            self.history.append((f - self.previous[0], g - self.previous[1]))
            del self.history[:-self.depth]
        self.previous = (f, g)
        if not self.history:
            return y
        df = np.stack([h[0] for h in self.history], axis=1)
        dg = np.stack([h[1] for h in self.history], axis=1)
        mixed = g - dg @ np.linalg.lstsq(df, f, rcond=1e-12)[0]
        leaves, start = [], 0
        for shape in shapes:
            size = math.prod(shape)
            leaves.append(jnp.asarray(mixed[start:start + size].reshape(shape)))
            start += size
        return tuple(leaves)

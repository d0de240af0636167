"""The C4v iPEPS of ``tenpy_ad.models.peps`` written as a PyTorch user would (eager,
float64), for the side-by-side tables of bench/ipeps.py.

The algorithm and its conventions are those of bench/ipeps_jax.py (see there): the same
move, multiplet rotation, reference signs, NumPy's ``peps._relative_gauge`` and stopping
rules.  PyTorch's pieces: the forward iterations under ``torch.no_grad()``; the implicit
derivative a ``torch.autograd.Function`` whose backward records one gauge-fixed move at
the fixed point and solves ``lam = A^T lam + xbar`` by SciPy's GMRES (restart 60, the same
relative tolerance) on ``torch.autograd.grad`` products through that one graph, then
returns ``B^T lam``.  ``torch.linalg.eigh``'s backward divides by ``w_j - w_i``
unbroadened, so ``eigh`` here is a ``torch.autograd.Function`` with tenpy_ad's Lorentzian
broadening (``x / (x^2 + 1e-16)``), as peps-torch does for its SVD.
"""
from __future__ import annotations

import math

import numpy as np

from peers import load_torch
from tenpy_ad.models import peps

torch = load_torch()
DTYPE = torch.float64

BROADENING = 1e-16
GMRES_RESTART = 60
PATIENCE = 40


def _tensor(x):
    return torch.as_tensor(np.asarray(x), dtype=DTYPE)


# ------------------------------------------------------------------ eigh, broadened

class Eigh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        w, v = torch.linalg.eigh(a)
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx, gw, gv):
        w, v = ctx.saved_tensors
        core = torch.zeros_like(v)
        if gv is not None:
            x = w[None, :] - w[:, None]
            gaps = x / (x * x + BROADENING + torch.eye(w.shape[0], dtype=w.dtype))
            core = gaps * (v.T @ gv)
        if gw is not None:
            core = core + torch.diag(gw)
        ga = v @ core @ v.T
        return (ga + ga.T) * 0.5


eigh = Eigh.apply


# ------------------------------------------------------------------ the state

def symmetrize(a):
    total = None
    for perm in peps.SQUARE_SYMMETRIES:
        term = a.permute((0,) + tuple(p + 1 for p in perm))
        total = term if total is None else total + term
    return total * 0.125


def normalized(params):
    a = symmetrize(params)
    return a / torch.linalg.norm(a)


def double_layer(a):
    d2 = a.shape[1] ** 2
    return torch.einsum("suldr,sULDR->uUlLdDrR", a, a).reshape(d2, d2, d2, d2)


def open_double_layer(a):
    d, d2 = a.shape[0], a.shape[1] ** 2
    return torch.einsum("suldr,tULDR->stuUlLdDrR", a, a).reshape(d, d, d2, d2, d2, d2)


# ------------------------------------------------------------------ the move

def initial_environment(dl):
    delta = _tensor(np.eye(math.isqrt(dl.shape[0])).reshape(dl.shape[0]))
    return (torch.einsum("uldr,u,l->rd", dl, delta, delta),
            torch.einsum("uldr,u->ldr", dl, delta))


def enlarged(env, dl):
    c, t = env
    k, d2 = c.shape[0], dl.shape[0]
    ct = torch.einsum("ab,asx->bsx", c, t)
    ctt = torch.einsum("bsx,bty->sxty", ct, t)
    m = torch.einsum("sxty,stdr->xryd", ctt, dl).reshape(k * d2, k * d2)
    m = (m + m.T) * 0.5
    return m


def projected_edge(t, dl, p):
    """P^T Tt P [x, d, y] without forming Tt (as tenpy_ad.models.peps.projected_edge)."""
    k, d2 = t.shape[0], dl.shape[0]
    p3 = p.reshape(k, d2, p.shape[1])
    pt = torch.einsum("alx,asb->xlsb", p3, t)
    pta = torch.einsum("xlsb,sldr->xdbr", pt, dl)
    return torch.einsum("xdbr,bry->xdy", pta, p3)


_PROBES: dict = {}


def _probes(n: int):
    if n not in _PROBES:
        bond = np.arange(n)
        _PROBES[n] = [_tensor(probe) for probe in
                      (np.cos(1.0 + 0.7 * bond) + 0.3, np.sin(0.4 + 1.3 * bond * bond),
                       np.cos(2.1 * bond + 0.2) - 0.1)]
    return _PROBES[n]


def _along(edge, probe):
    k = torch.einsum("xdy,d->xy", edge, probe)
    k = (k + k.T) * 0.5
    return k / torch.linalg.norm(k)


def _multiplet_rotation(w, edge):
    w = w.detach()
    gaps = torch.abs(w[1:] - w[:-1]) > peps.MULTIPLET_GAP * torch.max(torch.abs(w))
    block = torch.cat([torch.zeros(1, dtype=DTYPE), torch.cumsum(gaps.to(DTYPE), 0)])
    same = (block[:, None] == block[None, :]).to(DTYPE)
    k1, k2, k3 = (_along(edge, probe) for probe in _probes(edge.shape[1]))
    k = (k1 + (k2 @ k3 + k3 @ k2) * 0.5) * same
    k = (k + k.T) * 0.5
    shift = (block * (2.0 * torch.linalg.norm(k) + 1.0)).detach()
    return eigh(k + torch.diag(shift))[1]


_REFERENCES: dict = {}


def move(env, dl, chi: int):
    m = enlarged(env, dl)
    n = m.shape[0]
    if n not in _REFERENCES:
        _REFERENCES[n] = _tensor(peps._reference(n))
    w, v = eigh(m)
    kept = torch.argsort(-torch.abs(w))[:min(chi, n)]
    order = kept[torch.argsort(-w[kept])]
    p = v[:, order]
    edge = projected_edge(env[1], dl, p)
    r = _multiplet_rotation(w[order], edge)
    r = r * torch.sign(_REFERENCES[n] @ (p @ r)).detach()
    p = p @ r
    c_new = p.T @ m @ p
    t_new = torch.einsum("xa,xdy,yb->adb", r, edge, r)
    c_new = (c_new + c_new.T) * 0.5
    t_new = (t_new + t_new.permute(2, 1, 0)) * 0.5
    return c_new / torch.linalg.norm(c_new), t_new / torch.linalg.norm(t_new)


def _swap_layers(t):
    side, k = math.isqrt(t.shape[1]), t.shape[0]
    return t.reshape(k, side, side, k).permute(0, 2, 1, 3).reshape(k, side * side, k)


def aligned_move(env, dl, gauge, chi: int):
    return regauged(move(env, dl, chi), gauge)


def regauged(env, gauge):
    (c, t), (signs, swapped) = env, gauge
    t = t + (_swap_layers(t) - t) * swapped
    return c * signs[:, None] * signs[None, :], t * signs[:, None, None] * signs[None, None, :]


def corner_spectrum(c):
    w = torch.linalg.eigvalsh(c)
    return torch.sort(w).values / torch.max(torch.abs(w))


def _residual(new, old) -> float:
    return max(float(torch.max(torch.abs(y - x)) / torch.max(torch.abs(y)))
               for y, x in zip(new, old))


# ------------------------------------------------------------------ observables

def bond_density_matrix(env, a_open):
    c, t = env
    corner_edge = torch.einsum("ax,xsy->asy", c, t)
    column = torch.einsum("asy,alc->sylc", corner_edge, t)
    column = torch.einsum("sylc,cmw->sylmw", column, corner_edge)
    half = torch.einsum("sylmw,iIslmp->yiIpw", column, a_open)
    rho = torch.einsum("yiIpw,yjJpw->iIjJ", half, half)
    return rho / torch.einsum("iijj->", rho)


def energy_per_site(a, env, h):
    rho = bond_density_matrix(env, open_double_layer(a))
    return torch.einsum("iIjJ,IJij->", rho, h) * 2.0


# ------------------------------------------------------------------ the client

class FixedPoint(torch.autograd.Function):
    """``env*`` (computed by the forward solves, passed in) as a function of the double
    layer, with the implicit backward pass."""

    @staticmethod
    def forward(ctx, dl, c, t, signs, swapped, client):
        ctx.save_for_backward(dl, c, t, signs, swapped)
        ctx.client = client
        return c.clone(), t.clone()

    @staticmethod
    def backward(ctx, c_bar, t_bar):
        from scipy.sparse.linalg import LinearOperator, gmres
        dl, c, t, signs, swapped = ctx.saved_tensors
        client = ctx.client
        with torch.enable_grad():
            x = (c.detach().requires_grad_(), t.detach().requires_grad_())
            d = dl.detach().requires_grad_()
            y = aligned_move(x, d, (signs, swapped), client.chi)
        shapes = [c.shape, t.shape]
        sizes = [c.numel(), t.numel()]

        def unpack(vector):
            parts = torch.split(torch.from_numpy(np.ascontiguousarray(vector)), sizes)
            return [part.reshape(shape) for part, shape in zip(parts, shapes)]

        def pack(leaves):
            return torch.cat([leaf.reshape(-1) for leaf in leaves]).numpy()

        iterations = [0]

        def matvec(vector):
            lam = unpack(vector)
            ct = torch.autograd.grad(y, x, grad_outputs=lam, retain_graph=True)
            return vector - pack(ct)

        def count(_):
            iterations[0] += 1

        b = pack([c_bar, t_bar])
        size = b.size
        operator = LinearOperator((size, size), matvec=matvec, dtype=np.float64)
        restart = min(size, GMRES_RESTART)
        lam, info = gmres(operator, b, x0=b, rtol=client.tol, atol=0.0, restart=restart,
                          maxiter=-(-client.max_iter // restart), callback=count,
                          callback_type="pr_norm")
        if info != 0:
            raise RuntimeError(f"torch client: GMRES did not converge (info {info})")
        client.counts["adjoint_iterations"] = iterations[0]
        (dl_bar,) = torch.autograd.grad(y, d, grad_outputs=unpack(lam))
        return dl_bar, None, None, None, None, None


class Client:
    """``vg(params, env) -> ((E, env), g)`` of the PyTorch client at bond ``chi``; ``counts``
    holds the last call's forward moves and GMRES iterations."""

    def __init__(self, chi: int, h=None, tol: float = peps.TOL, max_iter: int = 2000,
                 anderson: int = peps.ANDERSON):
        self.chi, self.tol, self.max_iter, self.anderson = chi, tol, max_iter, anderson
        self.accepted = min(1e3 * tol, math.sqrt(tol))
        self.h = _tensor(peps.heisenberg() if h is None else h)
        self.counts: dict = {}

    def _iterate(self, step, x, monitored: bool):
        mixer = None if monitored or not self.anderson else _Anderson(self.anderson)
        best, progress = (math.inf, math.inf, x), (math.inf, 0)
        for n in range(1, self.max_iter + 1):
            y, residual, criterion = step(x)
            if not math.isfinite(residual):
                raise FloatingPointError(f"torch client: the iteration diverged at move {n}")
            criterion = criterion if monitored else residual
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
            raise RuntimeError(f"torch client: no convergence after {n} moves "
                               f"(residual {best[0]:.3g})")
        return best[2], n

    @torch.no_grad()
    def environment(self, dl, env0):
        chi = self.chi
        watched = [corner_spectrum(env0[0])]

        def spectrum_step(pair):             # (x, y) -> (y, move(y)), as peps.environment
            env = pair[1]
            new = move(env, dl, chi)
            spectrum = corner_spectrum(new[0])
            criterion = float(torch.max(torch.abs(spectrum - watched[0])))
            watched[0] = spectrum
            return (env, new), _residual(new, env), criterion

        env0 = tuple(env0)
        (before, rough), moves = self._iterate(spectrum_step, (env0, env0), monitored=True)
        signs, swapped = peps._relative_gauge(None, *(x.numpy() for x in rough + before))
        gauge = (_tensor(signs), _tensor(swapped))
        rough = regauged(rough, gauge)

        def aligned_step(env):
            new = aligned_move(env, dl, gauge, chi)
            return new, _residual(new, env), None

        env, aligned = self._iterate(aligned_step, rough, monitored=False)
        self.counts = {"spectrum_moves": moves, "aligned_moves": aligned}
        return env, gauge

    def __call__(self, params, env0):
        params = _tensor(params).requires_grad_()
        a = normalized(params)
        dl = double_layer(a)
        env, gauge = self.environment(dl.detach(), tuple(_tensor(x) for x in env0))
        c, t = FixedPoint.apply(dl, env[0], env[1], gauge[0], gauge[1], self)
        energy = energy_per_site(a, (c, t), self.h)
        energy.backward()
        return (energy.detach(), env), params.grad

    @torch.no_grad()
    def grown_environment(self, params, moves: int = 4):
        dl = double_layer(normalized(_tensor(params)))
        env = initial_environment(dl)
        while env[0].shape[0] < self.chi:
            env = move(env, dl, self.chi)
        for _ in range(moves):
            env = move(env, dl, self.chi)
        return env


class _Anderson:
    """Type-II Anderson mixing over the last ``depth`` steps (tenpy_ad.solvers._Anderson)."""

    def __init__(self, depth: int):
        self.depth, self.history, self.previous = depth, [], None

    def mix(self, x, y):
        g = torch.cat([leaf.reshape(-1) for leaf in y])
        f = g - torch.cat([leaf.reshape(-1) for leaf in x])
        if self.previous is not None:
            self.history.append((f - self.previous[0], g - self.previous[1]))
            del self.history[:-self.depth]
        self.previous = (f, g)
        if not self.history:
            return y
        df = torch.stack([h[0] for h in self.history], dim=1).numpy()
        dg = torch.stack([h[1] for h in self.history], dim=1)
        gamma = _tensor(np.linalg.lstsq(df, f.numpy(), rcond=1e-12)[0])
        mixed = g - dg @ gamma
        parts = torch.split(mixed, [leaf.numel() for leaf in y])
        return tuple(part.reshape(leaf.shape) for part, leaf in zip(parts, y))

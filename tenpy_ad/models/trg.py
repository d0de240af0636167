"""Levin-Nave TRG for the 2D Ising model (J = 1), written once for every mode.

The same functions run on Python floats / ndarrays (a NumPy forward pass), on eager Tensors
(``.backward()``) and on TracedTensors (whole-graph AD, compiled once, run for every beta).
Conventions follow Liao, Liu, Wang, Xiang, "Differentiable programming tensor networks"
(PRX 2019).  Reference values of d(lnZ/N)/d beta at beta = 0.3, chi = 16 (whole-graph
AD; also the exact values of the 2^steps-spin lattice, checked by brute force in the tests):
1 step 1.667309214024311, 2 steps 1.277612005080206, 3 steps 1.023802944795145,
4 steps 0.844054073623855.

    lnZ/N = (acc + ln sum_{x,y} T[x,y,x,y]) / 2^steps,   N = 2^steps spins

Every step normalises ``T`` by ``m = max|T|`` (``acc += 2^(steps-n) ln m``), splits it
twice by SVD, keeps ``ks[n]`` singular triplets and contracts the four halves.  The SVD
derivative uses Lorentzian broadening ``svd_eps`` (default ``tp.linalg.config.broadening``,
1e-16): from step 5 on the 256x256 matrices have hundreds of equal, near-zero singular
values, where the plain formula (also JAX's built-in one) gives NaN.

``svd_method``: ``"partial"`` computes only the kept triplets (``tp.linalg.svds``: ARPACK,
and derivatives from solves with the matrix, exact for the truncated function; LAPACK for
matrices up to ``tp.linalg.PARTIAL_MIN_SIZE``, i.e. chi <= 14), ``"full"`` the whole SVD and
slices it.  Both give the same values and derivatives to roundoff (bench/trg_partial.py).
``"auto"`` (the default) takes the faster one for the size (:func:`svd_method_for`):
``"full"`` up to ``AUTO_FULL_MAX_CHI`` = 20 when second derivatives are computed (measured
at beta_c, 20 steps, value + both derivatives, medians of interleaved runs: partial/full
0.98-1.01 at chi = 16, 1.01 at 20, 0.85 at 24, 0.65 at 32, 0.55 at 48 (10 steps) here;
full 1.17x faster at chi = 16 on another machine), ``"partial"`` otherwise (value + first
derivative: 0.66 at chi = 16, 0.57 at 24, 0.37 at 32; the same path below chi = 16).
"""
from __future__ import annotations

import math
from functools import lru_cache, partial

import numpy as np

import tenpy_ad as tp
from tenpy_ad.errors import ArgumentError
from tenpy_ad.models.values import concrete_float, values_of

#: singular values at or below this count as zero when choosing ``ks``
RANK_CUTOFF = 1e-15
SVD_METHODS = ("auto", "partial", "full")
#: the default ``svd_method``: the faster path for the size (:func:`svd_method_for`)
SVD_METHOD = "auto"
#: ``"auto"`` takes the full SVD up to this chi for second derivatives, else the partial one
AUTO_FULL_MAX_CHI = 20

_W_COSH = np.array([[1.0, 0.0], [1.0, 0.0]])
_W_SINH = np.array([[0.0, 1.0], [0.0, -1.0]])


def ising_tensor(beta):
    """``T0[i,j,k,l] = sum_a W[a,i] W[a,j] W[a,k] W[a,l]`` (legs up, left, down, right),
    ``W = [[sqrt(cosh b), sqrt(sinh b)], [sqrt(cosh b), -sqrt(sinh b)]]``."""
    e_plus, e_minus = tp.exp(beta), tp.exp(-beta)
    sqrt_cosh = tp.sqrt((e_plus + e_minus) * 0.5)
    sqrt_sinh = tp.sqrt((e_plus - e_minus) * 0.5)
    w = sqrt_cosh * _W_COSH + sqrt_sinh * _W_SINH
    return tp.einsum("ai,aj,ak,al->ijkl", w, w, w, w)


def _kept(singular_values) -> int:
    """How many singular values count as non-zero: a discrete choice, read off the
    values (explicitly detached from any tape)."""
    return int(np.count_nonzero(values_of(singular_values) > RANK_CUTOFF))


def svd_method_for(svd_method: str, chi: int, second_order: bool = False) -> str:
    """The SVD path ``svd_method`` stands for at bond dimension ``chi``: ``"auto"`` is
    ``"full"`` up to ``AUTO_FULL_MAX_CHI`` when second derivatives are computed (there the
    partial SVD's second-order solves cost more than the whole SVD), else ``"partial"``
    (equal below chi = 16, where it is LAPACK's SVD too, faster above); the others stand
    for themselves."""
    if svd_method != "auto":
        return svd_method
    return "full" if second_order and chi <= AUTO_FULL_MAX_CHI else "partial"


def _leading_svd(matrix, k: int, svd_method: str, svd_eps):
    """The ``k`` leading singular triplets, by ``svd_method`` (``"auto"``: partial)."""
    if svd_method in ("partial", "auto"):
        return tp.linalg.svds(matrix, k, eps=svd_eps)
    u, s, vh = tp.linalg.svd(matrix, eps=svd_eps)
    return u[:, :k], s[:k], vh[:k]


def trg_step(t, k: int | None, chi: int | None = None, svd_eps: float | None = None,
             svd_method: str = SVD_METHOD):
    """One RG step: ``(T_next, ln m, k)``.

    ``k`` is the number of singular triplets kept; ``None`` applies the rule
    ``min(chi, D^2, #{Sa > 1e-15}, #{Sb > 1e-15})``, which needs concrete values.
    """
    d = t.shape[0]
    m = tp.amax(tp.abs(t))
    t = t / m
    rows = min(chi, d * d) if k is None else k
    ua, sa, vha = _leading_svd(t.reshape(d * d, d * d), rows, svd_method, svd_eps)
    ub, sb, vhb = _leading_svd(t.transpose(1, 2, 0, 3).reshape(d * d, d * d), rows,
                               svd_method, svd_eps)
    if k is None:
        k = min(rows, _kept(sa), _kept(sb))
        ua, sa, vha, ub, sb, vhb = (ua[:, :k], sa[:k], vha[:k], ub[:, :k], sb[:k], vhb[:k])
    root_a, root_b = tp.sqrt(sa), tp.sqrt(sb)
    s1 = (ua * root_a).reshape(d, d, k)
    s3 = (vha.T * root_a).reshape(d, d, k)
    s2 = (ub * root_b).reshape(d, d, k)
    s4 = (vhb.T * root_b).reshape(d, d, k)
    t_next = tp.einsum("xwu,yxl,yzd,wzr->uldr", s2, s3, s4, s1)
    return t_next, tp.log(m), k


def _check_arguments(beta, chi, steps, svd_method=SVD_METHOD):
    if svd_method not in SVD_METHODS:
        raise ArgumentError(f"trg: svd_method must be one of {SVD_METHODS}, got "
                            f"{svd_method!r}")
    if not isinstance(chi, (int, np.integer)) or chi < 2:
        raise ArgumentError(f"trg: chi must be an integer >= 2, got {chi!r}")
    if not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ArgumentError(f"trg: steps must be an integer >= 1, got {steps!r}")
    value = concrete_float(beta)
    if value is not None and not math.isnan(value) and not 0 < value < math.inf:
        raise ArgumentError(f"trg: beta must be finite and > 0 (the tensor needs "
                            f"sqrt(sinh beta)), got {value}")


def _check_ks(ks: list, steps: int) -> None:
    if len(ks) != steps:
        raise ArgumentError(f"trg: {len(ks)} kept dimensions (ks) for {steps} steps")
    dim = 2
    for n, k in enumerate(ks):
        if not isinstance(k, (int, np.integer)) or not 1 <= k <= dim * dim:
            raise ArgumentError(f"trg: ks[{n}] = {k!r} must be an integer in [1, D^2 = "
                                f"{dim * dim}] (D = {dim} is the bond dimension at step {n})")
        dim = int(k)


def ks_rule(chi: int, steps: int, beta: float = 0.3, svd_method: str = SVD_METHOD) -> list:
    """The kept dimensions ``ks[n] = min(chi, D^2, #{Sa > 1e-15}, #{Sb > 1e-15})`` found by
    a NumPy forward pass at ``beta`` (chi = 16: ``[2, 4, 4, 16, 16, ...]``); cached."""
    _check_arguments(beta, chi, steps, svd_method)
    return list(_ks_rule(int(chi), int(steps), float(beta), svd_method))


@lru_cache(maxsize=256)
def _ks_rule(chi: int, steps: int, beta: float, svd_method: str) -> tuple:
    t = ising_tensor(beta)
    ks = []
    for _ in range(steps):
        t, _, k = trg_step(t, None, chi, svd_method=svd_method)
        ks.append(k)
    return tuple(ks)


def trg_lnz(beta, chi: int = 16, steps: int = 20, ks=None, svd_eps: float | None = None,
            checkpoint: bool = False, ks_beta: float = 0.3, svd_method: str = SVD_METHOD):
    """lnZ/N of the 2D Ising model by ``steps`` TRG steps at bond dimension ``chi``.

    ``beta``: a float/array (NumPy forward), an eager Tensor or a TracedTensor.
    ``ks``: kept dimensions per step; by default ``ks_rule`` at ``beta`` itself when it is
    concrete, else at ``ks_beta`` (for chi = 16 the rule gives the same ks for every
    beta > 0).  ``checkpoint=True`` recomputes each step's internals during the backward
    pass instead of keeping them (``tp.checkpoint``).  ``svd_method``: ``"partial"``
    (leading triplets only), ``"full"`` or ``"auto"`` (see the module docstring), which
    here, not knowing whether second derivatives follow, is ``"partial"``: for them at
    chi <= 20 pass ``"full"`` (as :class:`CompiledTRG` with ``second_order`` does).
    """
    _check_arguments(beta, chi, steps, svd_method)
    svd_method = svd_method_for(svd_method, chi)
    if ks is None:
        value = concrete_float(beta)
        ks = ks_rule(chi, steps, ks_beta if value is None or math.isnan(value) else value,
                     svd_method)
    ks = list(ks)
    _check_ks(ks, steps)
    t = ising_tensor(beta)
    acc = 0.0
    for n in range(steps):
        step = partial(_step_with_fixed_k, k=ks[n], svd_eps=svd_eps, svd_method=svd_method)
        if checkpoint:
            step = tp.checkpoint(step)
        t, log_m = step(t)
        acc = acc + log_m * float(2 ** (steps - n))
    return (acc + tp.log(tp.einsum("xyxy->", t))) / float(2 ** steps)


def _step_with_fixed_k(t, k, svd_eps, svd_method):
    t_next, log_m, _ = trg_step(t, k, svd_eps=svd_eps, svd_method=svd_method)
    return t_next, log_m


# ------------------------------------------------------------------ compiled, whole graph

class CompiledTRG:
    """lnZ/N and its first (and second) beta-derivative as one compiled program.

    Built once (beta a placeholder, ``tp.ad.grad`` for the derivatives) and run for any
    beta; ``timings`` holds the build/transform/compile costs in ms.  ``svd_method`` as for
    :func:`trg_lnz`; ``"auto"`` (the default) is :func:`svd_method_for` the program's
    derivatives (``self.svd_method`` the path taken).
    """

    def __init__(self, chi: int = 16, steps: int = 20, ks=None, svd_eps=None,
                 checkpoint: bool = False, second_order: bool = True, ks_beta: float = 0.3,
                 svd_method: str = SVD_METHOD):
        import time
        _check_arguments(ks_beta, chi, steps, svd_method)
        svd_method = svd_method_for(svd_method, chi, second_order)
        self.chi, self.steps, self.svd_method = chi, steps, svd_method
        self.ks = list(ks) if ks is not None else ks_rule(chi, steps, ks_beta, svd_method)
        self.second_order = second_order
        t0 = time.perf_counter()
        beta = tp.input((), name="beta")
        lnz = trg_lnz(beta, chi, steps, ks=self.ks, svd_eps=svd_eps, checkpoint=checkpoint,
                      svd_method=svd_method)
        t1 = time.perf_counter()
        first = tp.ad.grad(lnz, beta)
        t2 = time.perf_counter()
        outputs = [lnz, first]
        if second_order:
            outputs.append(tp.ad.grad(first, beta))
        t3 = time.perf_counter()
        self.value_ops = len(tp._core.toposort([lnz]))
        self.total_ops = len(tp._core.toposort(outputs))
        self.program = tp.compile(outputs, inputs=[beta])
        t4 = time.perf_counter()
        self.timings = {"build": (t1 - t0) * 1e3, "grad": (t2 - t1) * 1e3,
                        "grad2": (t3 - t2) * 1e3, "compile": (t4 - t3) * 1e3}

    def __call__(self, beta: float) -> dict:
        """``{"lnz", "dlnz", "d2lnz"}`` (lnZ/N and its beta-derivatives) at ``beta``."""
        _check_arguments(beta, self.chi, self.steps)
        values = [float(v) for v in self.program(np.float64(beta))]
        result = {"lnz": values[0], "dlnz": values[1]}
        if self.second_order:
            result["d2lnz"] = values[2]
        return result


def observables(beta: float, result: dict) -> dict:
    """lnZ/N, the energy ``u = -d(lnZ/N)/d beta`` and specific heat ``c = beta^2
    d^2(lnZ/N)/d beta^2`` from a :class:`CompiledTRG` result."""
    out = {"beta": float(beta), "lnz": result["lnz"], "u": -result["dlnz"]}
    if "d2lnz" in result:
        out["c"] = beta * beta * result["d2lnz"]
    return out


_process_programs: dict = {}


def _sweep_point(beta: float, chi: int, steps: int, ks: tuple, second_order: bool,
                 svd_method: str = SVD_METHOD) -> dict:
    """One beta of a sweep; each worker process compiles its program once."""
    key = (chi, steps, ks, second_order, svd_method)
    program = _process_programs.get(key)
    if program is None:
        program = _process_programs[key] = CompiledTRG(
            chi, steps, ks=ks, second_order=second_order, svd_method=svd_method)
    return observables(beta, program(beta))


def sweep(betas, chi: int = 16, steps: int = 20, executor=None, ks=None,
          second_order: bool = True, progress=None, svd_method: str = SVD_METHOD) -> list:
    """lnZ/N, u and c for every beta, from one compiled program per process.

    ``executor``: any ``concurrent.futures.Executor`` (a ``ProcessPoolExecutor``, or a
    dask.distributed ``Client.get_executor()`` to spread the sweep over a cluster); None
    runs in this process.  ``progress(i, n)`` is called after each point.  ``svd_method``
    as for :class:`CompiledTRG` (``"auto"``: the faster path for ``chi`` and
    ``second_order``).
    """
    betas = [float(b) for b in betas]
    ks = tuple(ks) if ks is not None else tuple(ks_rule(chi, steps, 0.3, svd_method))
    point = partial(_sweep_point, chi=chi, steps=steps, ks=ks, second_order=second_order,
                    svd_method=svd_method)
    if executor is None:
        results = []
        for i, beta in enumerate(betas):
            results.append(point(beta))
            if progress is not None:
                progress(i + 1, len(betas))
        return results
    futures = [executor.submit(point, beta) for beta in betas]
    results = []
    for i, future in enumerate(futures):
        results.append(future.result())
        if progress is not None:
            progress(i + 1, len(betas))
    return results


# ------------------------------------------------------------------ segmented

class SegmentedTRG:
    """d(lnZ/N)/d beta the way users of engines without linear-time whole-graph AD had
    to: one compiled program per step shape with its own VJP program, and the reverse pass
    chained by hand.  Kept as a cross-check of the whole-graph result."""

    def __init__(self, chi: int = 16, steps: int = 20, ks=None, svd_eps=None,
                 ks_beta: float = 0.3, svd_method: str = SVD_METHOD):
        _check_arguments(ks_beta, chi, steps, svd_method)
        svd_method = svd_method_for(svd_method, chi)          # first derivatives only
        self.chi, self.steps = chi, steps
        self.ks = list(ks) if ks is not None else ks_rule(chi, steps, ks_beta, svd_method)
        _check_ks(self.ks, steps)
        self.svd_eps, self.svd_method = svd_eps, svd_method
        beta = tp.input((), name="beta")
        t0 = ising_tensor(beta)
        ct = tp.input(t0.shape, name="ct")
        self._initial = tp.compile(t0, inputs=[beta])
        self._initial_vjp = tp.compile(tp.ad.vjp([t0], [beta], [ct])[0], inputs=[beta, ct])
        self._steps: dict = {}
        self._final: dict = {}

    def _step_programs(self, dim: int, k: int):
        key = (dim, k)
        if key not in self._steps:
            t = tp.input((dim,) * 4, name="t")
            t_next, log_m, _ = trg_step(t, k, svd_eps=self.svd_eps,
                                        svd_method=self.svd_method)
            ct_t, ct_m = tp.input(t_next.shape, name="ct_t"), tp.input((), name="ct_m")
            (ct,) = tp.ad.vjp([t_next, log_m], [t], [ct_t, ct_m])
            self._steps[key] = (tp.compile([t_next, log_m], inputs=[t]),
                                tp.compile(ct, inputs=[t, ct_t, ct_m]))
        return self._steps[key]

    def _final_programs(self, dim: int):
        if dim not in self._final:
            t = tp.input((dim,) * 4, name="t")
            log_trace = tp.log(tp.einsum("xyxy->", t))
            (ct,) = tp.ad.vjp([log_trace], [t], [1.0])
            self._final[dim] = (tp.compile(log_trace, inputs=[t]), tp.compile(ct, inputs=[t]))
        return self._final[dim]

    def __call__(self, beta: float) -> dict:
        """``{"lnz", "dlnz"}`` at ``beta``."""
        _check_arguments(beta, self.chi, self.steps)
        beta = np.float64(beta)
        n_spins = 2.0 ** self.steps
        tensors = [self._initial(beta)]
        acc = 0.0
        for n, k in enumerate(self.ks):
            forward, _ = self._step_programs(tensors[-1].shape[0], k)
            t_next, log_m = forward(tensors[-1])
            acc += 2.0 ** (self.steps - n) * float(log_m)
            tensors.append(t_next)
        final, final_vjp = self._final_programs(tensors[-1].shape[0])
        lnz = (acc + float(final(tensors[-1]))) / n_spins
        ct = final_vjp(tensors[-1]) / n_spins             # reverse pass, chained by hand
        for n in range(self.steps - 1, -1, -1):
            _, backward = self._step_programs(tensors[n].shape[0], self.ks[n])
            ct = backward(tensors[n], ct, np.float64(2.0 ** (self.steps - n) / n_spins))
        return {"lnz": lnz, "dlnz": float(self._initial_vjp(beta, ct))}


__all__ = ["ising_tensor", "trg_step", "ks_rule", "trg_lnz", "CompiledTRG", "SegmentedTRG",
           "sweep", "observables", "svd_method_for", "RANK_CUTOFF", "SVD_METHODS",
           "SVD_METHOD", "AUTO_FULL_MAX_CHI"]

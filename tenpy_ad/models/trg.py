"""Levin-Nave TRG for the 2D Ising model (J = 1), written once for every mode.

The same functions run on Python floats / ndarrays (a NumPy forward pass), on eager Tensors
(``.backward()``) and on TracedTensors (whole-graph AD, compiled once, run for every beta).
Conventions follow Liao, Liu, Wang, Xiang, "Differentiable programming tensor networks"
(PRX 2019); see DESIGN.md §6 for the spec and the reference values.

    lnZ/N = (acc + ln sum_{x,y} T[x,y,x,y]) / 2^steps,   N = 2^steps spins

Every step normalises ``T`` by ``m = max|T|`` (``acc += 2^(steps-n) ln m``), splits it
twice by SVD, keeps ``ks[n]`` singular triplets and contracts the four halves.  The SVD
derivative uses Lorentzian broadening ``svd_eps`` (default ``tp.linalg.config.broadening``,
1e-16): from step 5 on the 256x256 matrices have hundreds of equal, near-zero singular
values, where the plain formula (also JAX's built-in one) gives NaN.
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np

import tenpy_ad as tp
from tenpy_ad.errors import ArgumentError

#: singular values at or below this count as zero when choosing ``ks`` (DESIGN.md §6)
RANK_CUTOFF = 1e-15

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
    values = np.asarray(singular_values)
    return int(np.count_nonzero(values > RANK_CUTOFF))


def trg_step(t, k: int | None, chi: int | None = None, svd_eps: float | None = None):
    """One RG step: ``(T_next, ln m, k)``.

    ``k`` is the number of singular triplets kept; ``None`` applies the rule
    ``min(chi, D^2, #{Sa > 1e-15}, #{Sb > 1e-15})``, which needs concrete values.
    """
    d = t.shape[0]
    m = tp.amax(tp.abs(t))
    t = t / m
    ua, sa, vha = tp.linalg.svd(t.reshape(d * d, d * d), eps=svd_eps)
    ub, sb, vhb = tp.linalg.svd(t.transpose(1, 2, 0, 3).reshape(d * d, d * d), eps=svd_eps)
    if k is None:
        k = min(chi, d * d, _kept(sa), _kept(sb))
    root_a, root_b = tp.sqrt(sa[:k]), tp.sqrt(sb[:k])
    s1 = (ua[:, :k] * root_a).reshape(d, d, k)
    s3 = (vha[:k].T * root_a).reshape(d, d, k)
    s2 = (ub[:, :k] * root_b).reshape(d, d, k)
    s4 = (vhb[:k].T * root_b).reshape(d, d, k)
    t_next = tp.einsum("xwu,yxl,yzd,wzr->uldr", s2, s3, s4, s1)
    return t_next, tp.log(m), k


def _check_arguments(beta, chi, steps):
    if not isinstance(chi, (int, np.integer)) or chi < 2:
        raise ArgumentError(f"trg: chi must be an integer >= 2, got {chi!r}")
    if not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ArgumentError(f"trg: steps must be an integer >= 1, got {steps!r}")
    value = _concrete_beta(beta)
    if value is not None and not math.isnan(value) and value <= 0:
        raise ArgumentError(f"trg: beta must be > 0 (the tensor needs sqrt(sinh beta)), "
                            f"got {value}")


def _concrete_beta(beta):
    """beta as a float when it has a value (float, array, eager Tensor), else None."""
    if type(beta) is tp.TracedTensor:
        return None
    return float(np.asarray(beta))


def ks_rule(chi: int, steps: int, beta: float = 0.3) -> list:
    """The kept dimensions ``ks[n] = min(chi, D^2, #{Sa > 1e-15}, #{Sb > 1e-15})`` found by
    a NumPy forward pass at ``beta`` (chi = 16: ``[2, 4, 4, 16, 16, ...]``)."""
    _check_arguments(beta, chi, steps)
    t = ising_tensor(float(beta))
    ks = []
    for _ in range(steps):
        t, _, k = trg_step(t, None, chi)
        ks.append(k)
    return ks


def trg_lnz(beta, chi: int = 16, steps: int = 20, ks=None, svd_eps: float | None = None,
            checkpoint: bool = False, ks_beta: float = 0.3):
    """lnZ/N of the 2D Ising model by ``steps`` TRG steps at bond dimension ``chi``.

    ``beta``: a float/array (NumPy forward), an eager Tensor or a TracedTensor.
    ``ks``: kept dimensions per step; by default ``ks_rule`` at ``beta`` itself when it is
    concrete, else at ``ks_beta`` (for chi = 16 the rule gives the same ks for every
    beta > 0).  ``checkpoint=True`` recomputes each step's internals during the backward
    pass instead of keeping them (``tp.checkpoint``).
    """
    _check_arguments(beta, chi, steps)
    if ks is None:
        value = _concrete_beta(beta)
        ks = ks_rule(chi, steps, ks_beta if value is None or math.isnan(value) else value)
    ks = list(ks)
    if len(ks) != steps:
        raise ArgumentError(f"trg: {len(ks)} kept dimensions for {steps} steps")
    t = ising_tensor(beta)
    acc = 0.0
    for n in range(steps):
        step = partial(_step_with_fixed_k, k=ks[n], svd_eps=svd_eps)
        if checkpoint:
            step = tp.checkpoint(step)
        t, log_m = step(t)
        acc = acc + log_m * float(2 ** (steps - n))
    return (acc + tp.log(tp.einsum("xyxy->", t))) / float(2 ** steps)


def _step_with_fixed_k(t, k, svd_eps):
    t_next, log_m, _ = trg_step(t, k, svd_eps=svd_eps)
    return t_next, log_m


__all__ = ["ising_tensor", "trg_step", "ks_rule", "trg_lnz", "RANK_CUTOFF"]

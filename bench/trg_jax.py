"""The same TRG in JAX (x64), for side-by-side timing in bench/trg_ad_steps.py.

A straight transcription of ``tenpy_ad.models.trg.trg_lnz`` with ``jax.numpy``; JAX's
built-in SVD rule gives NaN gradients from step 5 on (degenerate singular values), which
does not change its timing.
"""
from __future__ import annotations

from peers import load_jax
from timing import Laps


def _lnz_function(ks):
    """lnZ/N as a function of beta, in JAX."""
    jnp = load_jax().numpy
    w_cosh = jnp.array([[1.0, 0.0], [1.0, 0.0]])
    w_sinh = jnp.array([[0.0, 1.0], [0.0, -1.0]])

    def lnz(beta):
        w = jnp.sqrt(jnp.cosh(beta)) * w_cosh + jnp.sqrt(jnp.sinh(beta)) * w_sinh
        t = jnp.einsum("ai,aj,ak,al->ijkl", w, w, w, w)
        acc, steps = 0.0, len(ks)
        for n, k in enumerate(ks):
            d = t.shape[0]
            m = jnp.max(jnp.abs(t))
            t = t / m
            acc = acc + 2.0 ** (steps - n) * jnp.log(m)
            ua, sa, vha = jnp.linalg.svd(t.reshape(d * d, d * d), full_matrices=False)
            ub, sb, vhb = jnp.linalg.svd(t.transpose(1, 2, 0, 3).reshape(d * d, d * d),
                                         full_matrices=False)
            ra, rb = jnp.sqrt(sa[:k]), jnp.sqrt(sb[:k])
            s1 = (ua[:, :k] * ra).reshape(d, d, k)
            s3 = (vha[:k].T * ra).reshape(d, d, k)
            s2 = (ub[:, :k] * rb).reshape(d, d, k)
            s4 = (vhb[:k].T * rb).reshape(d, d, k)
            t = jnp.einsum("xwu,yxl,yzd,wzr->uldr", s2, s3, s4, s1, optimize="greedy")
        return (acc + jnp.log(jnp.einsum("xyxy->", t))) / 2.0 ** steps

    return lnz


def build_timed(ks, beta):
    """``({make_jaxpr, lower, compile} ms, run)`` for the jitted ``value_and_grad``;
    ``run(beta)`` returns the value and the gradient as floats."""
    jax = load_jax()
    function = jax.value_and_grad(_lnz_function(ks))
    laps = Laps()
    jax.make_jaxpr(function)(beta)
    laps.lap("make_jaxpr")
    lowered = jax.jit(function).lower(beta)
    laps.lap("lower")
    compiled = lowered.compile()
    laps.lap("compile")

    def run(x):
        value, grad = compiled(x)
        return float(jax.block_until_ready(value)), float(grad)

    return laps.ms, run

"""The same TRG in JAX (x64), for side-by-side timing in bench/trg_ad_steps.py.

A straight transcription of DESIGN.md §6 with jnp; JAX's built-in SVD rule gives NaN
gradients from step 5 on (degenerate singular values), which does not change its timing.
"""
from __future__ import annotations


def _lnz_function(ks):
    """lnZ/N as a function of beta, in JAX."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
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


def build(ks):
    """A function running the jitted ``value_and_grad`` (compiled at the first call)."""
    import jax

    value_and_grad = jax.jit(jax.value_and_grad(_lnz_function(ks)))

    def run(beta):
        value, grad = value_and_grad(beta)
        return float(jax.block_until_ready(value)), float(grad)

    return run


def build_timed(ks, beta):
    """``({make_jaxpr, lower, compile} ms, run)`` for the jitted ``value_and_grad``."""
    import time

    import jax

    function = jax.value_and_grad(_lnz_function(ks))
    t0 = time.perf_counter()
    jax.make_jaxpr(function)(beta)
    t1 = time.perf_counter()
    lowered = jax.jit(function).lower(beta)
    t2 = time.perf_counter()
    compiled = lowered.compile()
    t3 = time.perf_counter()

    def run(x):
        value, grad = compiled(x)
        return float(jax.block_until_ready(value)), float(grad)

    return {"make_jaxpr": (t1 - t0) * 1e3, "lower": (t2 - t1) * 1e3,
            "compile": (t3 - t2) * 1e3}, run

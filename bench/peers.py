"""The optional peer engines of the side-by-side tables (JAX, PyTorch; ``pip install
".[peers]"``): whether one is installed, and importing it with the settings every table
uses: float64, one CPU thread (tenpy_ad's BLAS runs single-threaded beside it).
Nothing under ``tenpy_ad/`` imports a peer."""
from __future__ import annotations

import importlib.util
import os


def has_module(name: str) -> bool:
    """Whether ``name`` can be imported (without importing it)."""
    return importlib.util.find_spec(name) is not None


def load_jax():
    """``jax`` with float64 enabled and XLA's CPU backend on one thread (the flags only
    take effect when this is the first import of JAX in the process)."""
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                       "intra_op_parallelism_threads=1")
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def load_torch():
    """``torch`` on one CPU thread."""
    import torch
    torch.set_num_threads(1)
    return torch

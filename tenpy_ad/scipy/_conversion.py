"""Naming the SciPy function that converted a tensor with ``np.asarray``.

SciPy's functions do not dispatch on tensors: they call ``np.asarray``, which a tensor
that is differentiated refuses (it would drop the gradient).  The refusal names the
SciPy function it came from and tenpy_ad's version, found from the calling frames (on
the error path only)."""
from __future__ import annotations

import importlib
import sys

#: how many frames above ``__array__`` are looked at
_DEPTH = 40


def _public_name(frame) -> str | None:
    """``scipy.linalg.svd`` for a frame running SciPy's ``svd`` (or its batch wrapper)."""
    module = frame.f_globals.get("__name__", "")
    if not module.startswith("scipy."):
        return None
    name = frame.f_code.co_name
    if name == "wrapper":              # SciPy's decorators: the function they wrap
        wrapped = [w for w in map(frame.f_locals.get, ("f", "func")) if callable(w)]
        if not wrapped:
            return None                # (the frames below name it)
        module = getattr(wrapped[0], "__module__", module) or module
        name = wrapped[0].__name__
    if name.startswith(("_", "<")) or not module.startswith("scipy."):
        return None
    public = []
    for part in module.split("."):          # scipy.linalg._decomp_svd -> scipy.linalg
        if part.startswith("_"):
            break
        public.append(part)
    return ".".join(public) + "." + name


def _caller() -> str | None:
    """The outermost public SciPy function among the calling frames."""
    frame, found = sys._getframe(2), None
    for _ in range(_DEPTH):
        if frame is None:
            break
        found = _public_name(frame) or found
        frame = frame.f_back
    return found


def conversion_hint() -> str:
    """``"by scipy.linalg.svd, which converts its arguments with np.asarray: call
    tp.scipy.linalg.svd instead"`` (or that tenpy_ad has no version), or ``""`` when no
    SciPy function is calling."""
    name = _caller()
    if name is None:
        return ""
    module, _, function = name.rpartition(".")
    ours = f"tenpy_ad.{module}"
    try:
        has = hasattr(importlib.import_module(ours), function)
    except ImportError:
        has = False
    if has:
        return (f"by {name}, which converts its arguments with np.asarray: call "
                f"tp.{name} instead")
    return (f"by {name}, which converts its arguments with np.asarray and has no "
            "tenpy_ad version")

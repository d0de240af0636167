"""Import the compiled core, or explain how to build it (there is no slow fallback)."""
try:
    from . import _core
except ImportError as error:  # pragma: no cover - exercised only on a broken install
    raise ImportError(
        "tenpy_ad's compiled core (tenpy_ad._core) is missing or does not load: "
        f"{error}.\nBuild it from the source checkout with\n"
        "    pip install -e .          (editable; rerun after editing the core sources)\n"
        "or  pip install .\n"
        "This needs a C compiler and Python headers; setuptools and Cython are fetched by "
        "pip's build isolation. tenpy_ad has no pure-Python fallback on purpose: the graph "
        "core must be the fast one."
    ) from error

__all__ = ["_core"]

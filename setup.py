"""Build rules for tenpy_ad.

* One extension module, ``tenpy_ad._core``, is built from ``_core/_core.pyx``; that file
  ``include``s one ``.pxi`` per concern (metadata table, intern table, sweeps, executor,
  eager tape), so the hot paths inline into each other and no cross-module ``cimport`` is
  needed.  Its types are declared in ``tenpy_ad/_core.pxd``: Cython reads the ``.pxd`` of
  the module's qualified name, found from the project root (``include_path``).
* Cython directives are set here, never in file headers.  ``TENPY_AD_CYTHON_DEBUG=1`` turns
  bounds/wraparound/initialisation checks back on; ``TENPY_AD_CYTHON_ANNOTATE=1`` writes the
  annotated HTML next to the sources.
* A hash of the Cython sources is compiled into the extension (``_core.SOURCE_HASH``), so CI
  and ``tenpy_ad.core_info()`` can tell which sources the binary was built from.
"""
import hashlib
import os
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = Path(__file__).parent
CORE_SOURCES = sorted((HERE / "_core").glob("*.p*")) + [HERE / "tenpy_ad" / "_core.pxd"]


def source_hash() -> str:
    digest = hashlib.sha256()
    for path in CORE_SOURCES:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


debug = os.environ.get("TENPY_AD_CYTHON_DEBUG") == "1"
directives = {
    "language_level": 3,
    "boundscheck": debug,
    "wraparound": debug,
    "initializedcheck": debug,
    "nonecheck": False,
    "cdivision": True,
    "embedsignature": True,
}

extension = Extension(
    "tenpy_ad._core",
    ["_core/_core.pyx"],
    define_macros=[("TENPY_AD_SOURCE_HASH", f'"{source_hash()}"')],
    extra_compile_args=["-O2"],
)

setup(
    ext_modules=cythonize(
        [extension],
        compiler_directives=directives,
        include_path=[str(HERE)],
        annotate=os.environ.get("TENPY_AD_CYTHON_ANNOTATE") == "1",
        force=True,
    )
)

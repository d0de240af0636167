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
* Nothing is rebuilt that is already current, so a second ``pip install -e .`` of an
  unchanged tree (say, to add an extra) takes seconds: the C file is regenerated only when
  its metadata block (Cython records the extension's macros there: the source hash and the
  debug switch) differs from this build's, and the compiler runs only when no in-tree
  binary newer than the C file (and this file) already holds the source hash.
"""
import hashlib
import json
import os
import shutil
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.modified import newer_group

HERE = Path(__file__).parent
CORE_SOURCES = sorted((HERE / "_core").glob("*.p*")) + [HERE / "tenpy_ad" / "_core.pxd"]
GENERATED_C = HERE / "_core" / "_core.c"


def source_hash() -> str:
    digest = hashlib.sha256()
    for path in CORE_SOURCES:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


debug = os.environ.get("TENPY_AD_CYTHON_DEBUG") == "1"
annotate = os.environ.get("TENPY_AD_CYTHON_ANNOTATE") == "1"
directives = {
    "language_level": 3,
    "boundscheck": debug,
    "wraparound": debug,
    "initializedcheck": debug,
    "nonecheck": False,
    "cdivision": True,
    "embedsignature": True,
}
SOURCE_HASH = source_hash()

extension = Extension(
    "tenpy_ad._core",
    ["_core/_core.pyx"],
    define_macros=[("TENPY_AD_SOURCE_HASH", f'"{SOURCE_HASH}"'),
                   ("TENPY_AD_CYTHON_DEBUG", "1" if debug else "0")],
    extra_compile_args=["-O2"],
    depends=["setup.py"],
)


def generated_c_is_current() -> bool:
    """Whether ``_core/_core.c`` was generated for this build: the macros in its Cython
    metadata block (source hash, debug switch) are this extension's."""
    try:
        head = GENERATED_C.read_text(errors="replace")[:4096]
        block = head.split("BEGIN: Cython Metadata", 1)[1].split("END: Cython Metadata")[0]
        recorded = json.loads(block)["distutils"]["define_macros"]
    except (OSError, IndexError, KeyError, ValueError):
        return False
    return recorded == [list(macro) for macro in extension.define_macros]


class BuildExtReusingCurrent(build_ext):
    """``build_ext`` that copies an up-to-date in-tree binary instead of compiling again.

    Editable installs build in a fresh temporary directory each time, so setuptools' own
    up-to-date check never sees the previous build; the in-tree copy it left is reused
    when it is newer than its C file and this file, and holds this source hash."""

    def build_extension(self, ext):
        in_tree = HERE / self.get_ext_filename(ext.name)
        target = self.get_ext_fullpath(ext.name)
        if self.force or not in_tree.exists() or newer_group(
                [*ext.sources, *ext.depends], str(in_tree)):
            return super().build_extension(ext)
        if SOURCE_HASH.encode() not in in_tree.read_bytes():
            return super().build_extension(ext)
        print(f"reusing {in_tree.relative_to(HERE)}: built from these sources")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.abspath(target) != str(in_tree.resolve()):
            shutil.copy2(in_tree, target)


if annotate or not generated_c_is_current():
    ext_modules = cythonize([extension], compiler_directives=directives,
                            include_path=[str(HERE)], annotate=annotate, force=True)
else:   # cythonize's own timestamps would see Cython's files in a fresh build environment
    extension.sources = [str(GENERATED_C.relative_to(HERE))]
    ext_modules = [extension]

setup(ext_modules=ext_modules, cmdclass={"build_ext": BuildExtReusingCurrent})

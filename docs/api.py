"""Build the API reference (HTML) from the docstrings.

    pip install -e ".[docs]"
    python docs/api.py              # writes docs/api/index.html
    python docs/api.py OUTPUT_DIR   # elsewhere

It covers the public surface: ``tp`` (with ``tp.linalg``, ``tp.ad`` and the rest of what
``import tenpy_ad as tp`` offers), ``tp.numpy``, ``tp.scipy``, the models (TRG, CTMRG,
Onsager's solution, the benchmark chains) and the command line.  Docstrings are read as
reStructuredText (``code``, :func:`links`), rendered by pdoc.
"""
import sys
from pathlib import Path

#: ``tenpy_ad`` brings its imported submodules (numpy, scipy, linalg, ...) along
MODULES = ["tenpy_ad", "tenpy_ad.models", "tenpy_ad.cli", "tenpy_ad.blowup", "tenpy_ad.plots",
           "tenpy_ad.runtime", "tenpy_ad.testing"]
DEFAULT_OUTPUT = Path(__file__).resolve().parent / "api"


def build(output: Path) -> Path:
    """Render every module of ``MODULES`` (and their public submodules) into ``output``;
    returns the index page."""
    try:
        import pdoc
        import pdoc.render
    except ImportError:
        sys.exit('docs/api.py needs pdoc: pip install -e ".[docs]"')
    pdoc.render.configure(docformat="restructuredtext", footer_text="tenpy_ad")
    pdoc.pdoc(*MODULES, output_directory=output)
    return output / "index.html"


if __name__ == "__main__":
    index = build(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUTPUT)
    print(f"API reference written to {index}")

"""Traced ``ad.grad`` cost versus depth on the chains of DESIGN.md §5 (beside JAX when
installed).  Same as ``python -m tenpy_ad blowup``; see :mod:`tenpy_ad.blowup`.

    python bench/ad_blowup.py --kind mul --max-depth 12800
"""
import sys

from tenpy_ad.blowup import main

if __name__ == "__main__":
    sys.exit(main())

"""``python -m tenpy_ad``: the command line (see :mod:`tenpy_ad.cli`)."""
import sys

from tenpy_ad.cli import main

sys.exit(main())

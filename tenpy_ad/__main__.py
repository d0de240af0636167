"""``python -m tenpy_ad``: the TRG main job (see :mod:`tenpy_ad.cli`)."""
import sys

from tenpy_ad.cli import main

sys.exit(main())

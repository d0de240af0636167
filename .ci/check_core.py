"""Fail unless the imported tenpy_ad._core was compiled from this checkout's core sources
(``_core/*.pyx|pxi`` and ``tenpy_ad/_core.pxd``, hashed as setup.py does)."""
import hashlib
import sys
from pathlib import Path

import tenpy_ad

root = Path(__file__).resolve().parent.parent
digest = hashlib.sha256()
for path in sorted((root / "_core").glob("*.p*")) + [root / "tenpy_ad" / "_core.pxd"]:
    digest.update(path.name.encode())
    digest.update(path.read_bytes())
expected = digest.hexdigest()[:16]
built = tenpy_ad.core_info()["source_hash"]
print(f"compiled core: {tenpy_ad.core_info()['module']} (sources {built}); checkout {expected}")
if built != expected:
    sys.exit("the compiled core was not built from these sources: rebuild with pip install -e .")

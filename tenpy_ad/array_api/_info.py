"""``__array_namespace_info__()``: what the namespace supports."""
from __future__ import annotations

from . import _dtypes
from ._convert import CPU_DEVICE, check_device


class Info:
    """The inspection object of the standard (capabilities, devices, dtypes)."""

    __module__ = "tenpy_ad.array_api"

    def capabilities(self) -> dict:
        """Boolean indexing and data-dependent shapes (on eager tensors), up to 64 axes."""
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 64}

    def default_device(self):
        """The CPU."""
        return CPU_DEVICE

    def devices(self) -> list:
        """The devices tenpy_ad computes on: the CPU."""
        return [CPU_DEVICE]

    def default_dtypes(self, *, device=None) -> dict:
        """float64, complex128, int64 and int64 for indices."""
        check_device("default_dtypes", device)
        return {"real floating": _dtypes.float64, "complex floating": _dtypes.complex128,
                "integral": _dtypes.int64, "indexing": _dtypes.int64}

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The supported dtypes by name, those of ``kind`` (a kind name or a tuple)."""
        check_device("dtypes", device)
        if kind is None:
            return dict(_dtypes.ALL)
        return {name: d for name, d in _dtypes.ALL.items() if _dtypes.isdtype(d, kind)}


def __array_namespace_info__() -> Info:
    """The namespace's inspection object."""
    return Info()

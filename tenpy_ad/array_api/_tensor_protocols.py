"""What the tensors' Array API attributes and methods call (installed into the core's
operator surface by ``tenpy_ad/__init__``): ``__array_namespace__``, ``device``,
``to_device``, DLPack, the bit-shift operators."""
from __future__ import annotations

import sys

from ..errors import ArgumentValueError
from ..primitive import Tensor
from ._convert import CPU_DEVICE, check_device, concrete_data
from ._functions import bitwise_left_shift, bitwise_right_shift

#: the standard's versions this namespace serves (their differences are additions)
VERSIONS = (None, "2021.12", "2022.12", "2023.12", "2024.12")


def array_namespace(api_version):
    """``tenpy_ad.array_api`` for a supported ``api_version``."""
    if api_version not in VERSIONS:
        raise ArgumentValueError(f"__array_namespace__: api_version {api_version!r} is not "
                                 f"supported; one of {', '.join(map(str, VERSIONS[1:]))}")
    return sys.modules["tenpy_ad.array_api"]


def device(x):
    """Every tensor is on the CPU."""
    return CPU_DEVICE


def to_device(x, device, stream):
    """The CPU is the only device: the tensor itself."""
    check_device("to_device", device)
    return x


def _exportable(name, x):
    """The ndarray behind an eager tensor that does not require grad."""
    data = concrete_data(name, x)
    if isinstance(x, Tensor) and x.requires_grad:
        x._refuse_if_differentiated(f"{name} (a DLPack export)")
    return data


def dlpack(x, stream, max_version, dl_device, copy):
    """The DLPack capsule of the tensor's ndarray (eager tensors only)."""
    kwargs = {"stream": stream, "max_version": max_version, "dl_device": dl_device,
              "copy": copy}
    return _exportable("__dlpack__", x).__dlpack__(
        **{k: v for k, v in kwargs.items() if v is not None})


def dlpack_device(x):
    """The DLPack device of the tensor's ndarray (the CPU)."""
    return _exportable("__dlpack_device__", x).__dlpack_device__()


SURFACE = {"__array_namespace__": array_namespace, "device": device, "to_device": to_device,
           "__dlpack__": dlpack, "__dlpack_device__": dlpack_device,
           "bitwise_left_shift": bitwise_left_shift,
           "bitwise_right_shift": bitwise_right_shift}

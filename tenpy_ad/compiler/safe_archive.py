"""Reading a saved program's zip within limits: every size is checked before the memory it
takes is allocated or the data decompressed, and every failure is a
:class:`~tenpy_ad.errors.SaveFormatError` naming the member and, for a limit, the limit.

The order of checks, each before the work it bounds:

1. the zip's end record: the number of members and the size of the central directory
   (``max_members``), before ``zipfile`` parses the directory;
2. the directory: only ``program.json`` and ``constant_<id>.npy`` members, each once, stored
   or deflated, unencrypted; ``program.json``'s declared size (``max_json_bytes``) and the
   declared sizes of all members together (``max_bytes``);
3. reading a member fills a buffer of its declared size and stops there: a member whose
   data decompress to more (a header that lies) fails its CRC check instead of growing;
4. ``program.json``: ASCII, then a linear scan outside strings for its nesting depth
   (``max_depth``) and its number of values and keys (``max_nodes``), before ``json.loads``
   (which recurses on nesting and allocates per value);
5. each ``.npy`` header (NumPy's header readers, never unpickling): a supported dtype, no
   objects, and shape times itemsize within ``max_bytes`` and equal to the member's data,
   before the array is allocated.

Deflate compresses at most about 1000:1, so there is no separate ratio limit: what a member
may cost is its declared (and enforced) uncompressed size, and a legitimate constant of
zeros compresses that well too.
"""
from __future__ import annotations

import dataclasses
import math
import os
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass

import numpy as np
from numpy.lib import format as npy_format

from .. import dtypes
from ..errors import ArgumentError, SaveFormatError
from ..param_schema import short_repr

PROGRAM = "program.json"
CONSTANT_NAME = re.compile(r"constant_(?:0|[1-9][0-9]{0,18})\.npy")


@dataclass(frozen=True)
class LoadLimits:
    """What loading a saved program may cost; each limit is checked before the data it
    bounds is allocated or decompressed.  Raise one by keyword:
    ``tp.load_program(path, max_bytes=4 << 30)``.

    ``max_bytes``       the members' uncompressed content together (program.json and
                        the constants' data): 1 GiB
    ``max_json_bytes``  program.json uncompressed: 256 MiB (a TRG program at chi = 32
                        with 20 steps and both derivatives: 1.6 MB)
    ``max_depth``       nesting of program.json's arrays and objects: 64 (saved programs
                        nest 9 deep; gather params a few levels more)
    ``max_nodes``       values and keys in program.json: 2**24, about 16.8 million (the
                        TRG program: 0.29 million); each costs a Python object on loading
    ``max_members``     archive members (program.json and one .npy per constant): 65536
    """

    max_bytes: int = 1 << 30
    max_json_bytes: int = 256 << 20
    max_depth: int = 64
    max_nodes: int = 1 << 24
    max_members: int = 1 << 16


#: the defaults of :func:`tenpy_ad.load_program` and :func:`tenpy_ad.load_graph`
LIMITS = LoadLimits()

#: a saved program's directory entries take about 70 bytes each
_DIRECTORY_BYTES_PER_MEMBER = 128
_CHUNK = 1 << 20
_MAX_NDIM = 64
#: what reading a zip or a member can raise besides SaveFormatError (zlib.error: a corrupt
#: deflate stream; NotImplementedError/RuntimeError: methods and encryption zipfile refuses)
READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, TypeError,
               NotImplementedError, RuntimeError, struct.error, OverflowError)


def limits_with(**given) -> LoadLimits:
    """:data:`LIMITS` with the limits given as keywords (None: the default)."""
    given = {name: value for name, value in given.items() if value is not None}
    for name, value in given.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ArgumentError(f"load_program: {name} must be an int >= 0, got {value!r}")
    return dataclasses.replace(LIMITS, **given)


class Archive:
    """A saved program's zip opened within ``limits`` (a context manager)."""

    def __init__(self, path, limits: LoadLimits):
        self.path, self.limits = path, limits
        self.members: dict[str, zipfile.ZipInfo] = {}
        self._file = self._zip = None
        self._owns_file = isinstance(path, (str, bytes, os.PathLike))

    def __enter__(self) -> Archive:
        try:
            self._open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()
        if self._owns_file and self._file is not None:
            self._file.close()

    def error(self, member: str, message: str) -> SaveFormatError:
        """A SaveFormatError naming the file and ``member`` ("" for the archive; a long
        foreign name is cut)."""
        if len(member) > 80:
            member = short_repr(member)
        return SaveFormatError(f"{self.path}: {member + ': ' if member else ''}{message}")

    # -------------------------------------------------------------- the directory

    def _open(self) -> None:
        try:
            self._file = open(self.path, "rb") if self._owns_file else self.path
            self._check_end_record()
            self._zip = zipfile.ZipFile(self._file)
        except SaveFormatError:
            raise
        except READ_ERRORS as error:
            raise self.error("", f"not a readable zip archive ({type(error).__name__}: "
                                 f"{error})") from error
        self._check_members()

    def _check_end_record(self) -> None:
        """Members and directory size from the end record zipfile reads next (its own
        reader, private but unchanged since Python 2), so that parsing the directory is
        bounded too."""
        end_record = getattr(zipfile, "_EndRecData", None)
        if end_record is None:            # pragma: no cover - a future zipfile
            return
        end = end_record(self._file)
        if end is None:
            raise self.error("", "not a zip archive (no end of central directory record)")
        count, size = end[zipfile._ECD_ENTRIES_TOTAL], end[zipfile._ECD_SIZE]
        limit = self.limits.max_members
        if count > limit:
            raise self.error("", f"{count} members exceed max_members={limit}")
        if size > limit * _DIRECTORY_BYTES_PER_MEMBER:
            raise self.error("", f"a central directory of {size} bytes exceeds the "
                                 f"{limit * _DIRECTORY_BYTES_PER_MEMBER} bytes of "
                                 f"max_members={limit}")

    def _check_members(self) -> None:
        limits, total = self.limits, 0
        infos = self._zip.infolist()
        if len(infos) > limits.max_members:
            raise self.error("", f"{len(infos)} members exceed max_members="
                                 f"{limits.max_members}")
        for info in infos:
            name = info.filename
            self._check_member(info)
            if name == PROGRAM and info.file_size > limits.max_json_bytes:
                raise self.error(PROGRAM, f"{info.file_size} bytes uncompressed exceed "
                                          f"max_json_bytes={limits.max_json_bytes}")
            total += info.file_size
            if total > limits.max_bytes:
                raise self.error(name, f"{info.file_size} bytes uncompressed bring the "
                                       f"archive to {total} bytes, more than max_bytes="
                                       f"{limits.max_bytes}")
            self.members[name] = info
        if PROGRAM not in self.members:
            raise self.error(PROGRAM, "missing: not a saved tenpy_ad program")

    def _check_member(self, info: zipfile.ZipInfo) -> None:
        name = info.filename
        if name in self.members:
            raise self.error(name, "appears twice in the archive")
        if name != PROGRAM and not CONSTANT_NAME.fullmatch(name):
            raise self.error(name, "unexpected member (a saved program holds program.json "
                                   "and constant_<buffer>.npy files)")
        if info.flag_bits & 0x1:
            raise self.error(name, "is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise self.error(name, f"compression method {info.compress_type} (saved "
                                   "programs are stored or deflated)")

    def unreferenced(self, referenced: set) -> list:
        """The constant members that ``program.json`` does not reference."""
        return sorted(set(self.members) - referenced - {PROGRAM})

    # -------------------------------------------------------------- reading

    def read_json(self) -> bytearray:
        """``program.json``'s bytes (its size was checked when the archive opened)."""
        info = self.members[PROGRAM]
        try:
            with self._zip.open(info) as stream:
                data = bytearray(info.file_size)
                _fill(stream, memoryview(data), lambda m: self.error(PROGRAM, m))
                _expect_end(stream, lambda m: self.error(PROGRAM, m))
        except SaveFormatError:
            raise
        except READ_ERRORS as error:
            raise self.error(PROGRAM, f"unreadable ({type(error).__name__}: {error})") \
                from error
        return data

    def read_constant(self, name: str) -> np.ndarray:
        """The array of a ``.npy`` member: header checked before the data is allocated."""
        info = self.members.get(name)
        if info is None:
            raise self.error(name, "referenced by program.json but missing from the archive")
        def fail(message: str) -> SaveFormatError:
            return self.error(name, message)

        try:
            with self._zip.open(info) as raw:
                stream = _Counted(raw)
                dtype, shape, fortran = _npy_header(stream, fail)
                nbytes = math.prod(shape) * dtype.itemsize
                if nbytes > self.limits.max_bytes:
                    raise fail(f"declares {dtype.name}{list(shape)}: {nbytes} bytes, more "
                               f"than max_bytes={self.limits.max_bytes}")
                if stream.count + nbytes != info.file_size:
                    raise fail(f"declares {nbytes} bytes of {dtype.name}{list(shape)} after "
                               f"a {stream.count}-byte header, but holds {info.file_size} "
                               "bytes")
                array = np.empty(shape[::-1] if fortran else shape, dtype)
                _fill(stream, memoryview(array.reshape(-1).view(np.uint8)), fail)
                _expect_end(stream, fail)
        except SaveFormatError:
            raise
        except READ_ERRORS as error:
            raise fail(f"unreadable ({type(error).__name__}: {error})") from error
        array = array.T if fortran else array
        return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))


class _Counted:
    """A stream that counts the bytes read from it (the .npy header's length)."""

    def __init__(self, stream):
        self.stream, self.count = stream, 0

    def read(self, n: int = -1) -> bytes:
        data = self.stream.read(n)
        self.count += len(data)
        return data

    def readinto(self, buffer) -> int:
        n = self.stream.readinto(buffer)
        self.count += n
        return n


def _fill(stream, view: memoryview, fail) -> None:
    """Fill ``view`` from ``stream`` in chunks (no second copy of the data)."""
    done, size = 0, len(view)
    while done < size:
        n = stream.readinto(view[done:done + _CHUNK])
        if not n:
            raise fail(f"truncated: {done} of {size} bytes")
        done += n


def _expect_end(stream, fail) -> None:
    """Nothing may follow the declared size; reading to the end checks the CRC."""
    if stream.read(1):
        raise fail("holds more data than its declared size")


def _npy_header(stream, fail) -> tuple:
    """``(dtype, shape, fortran_order)`` of a .npy header, read by NumPy's header readers
    (a literal, never unpickled); only the engine's dtypes, no objects."""
    version = npy_format.read_magic(stream)
    if version == (1, 0):
        shape, fortran, dtype = npy_format.read_array_header_1_0(stream)
    elif version == (2, 0):
        shape, fortran, dtype = npy_format.read_array_header_2_0(stream)
    else:
        raise fail(f".npy format version {version[0]}.{version[1]} (saved constants use "
                   "1.0 or 2.0)")
    if dtype.hasobject:
        raise fail("holds Python objects (an object dtype): they are never unpickled")
    if dtype.newbyteorder("=") not in dtypes.DTYPES:
        raise fail(f"dtype {dtype.str} is not one of the engine's (float32, float64, "
                   "complex64, complex128, bool, int64)")
    if len(shape) > _MAX_NDIM or any(type(d) is not int or d < 0 for d in shape):
        raise fail(f"shape {shape} is not up to {_MAX_NDIM} dimensions >= 0")
    return dtype, shape, bool(fortran)


# ------------------------------------------------------------------ JSON without recursion

_CHUNK_SCAN = 1 << 20
# the bytes the scan looks at, by kind (0: the rest)
_QUOTE, _OPEN, _CLOSE, _SEPARATOR, _BACKSLASH = 1, 2, 3, 4, 5
_KIND = np.zeros(256, np.uint8)
_KIND[ord('"')] = _QUOTE
_KIND[[ord("["), ord("{")]] = _OPEN
_KIND[[ord("]"), ord("}")]] = _CLOSE
_KIND[[ord(","), ord(":")]] = _SEPARATOR
_KIND[ord("\\")] = _BACKSLASH
_STEP = np.array([0, 0, 1, -1, 0, 0], np.int64)


def json_structure(data) -> tuple[int, int]:
    """``(depth, nodes)`` of JSON text: the deepest nesting of arrays and objects and an
    upper bound on the number of values and keys (separators and openings, plus one),
    found by a linear scan outside strings, in chunks, without recursion.  For text that
    is valid JSON up to some point, the depth is exact up to that point, so
    ``json.loads`` never nests deeper than the scan said before it fails."""
    view = np.frombuffer(data, np.uint8)
    depth = deepest = 0
    nodes = 1
    in_string, carry = 0, 0      # carry: parity of the backslash run ending the last chunk
    for start in range(0, len(view), _CHUNK_SCAN):
        kinds = _KIND[view[start:start + _CHUNK_SCAN]]
        at = np.flatnonzero(kinds)                   # only the bytes that matter
        kind = kinds[at]
        quotes = kind == _QUOTE
        if carry or (kind == _BACKSLASH).any():
            escaped, carry = _escaped(kinds == _BACKSLASH, carry)
            quotes &= ~escaped[at]
        toggles = np.cumsum(quotes)
        outside = ((toggles - quotes + in_string) & 1) == 0
        levels = np.cumsum(_STEP[kind] * outside) + depth
        if len(levels):
            deepest = max(deepest, int(levels.max()))
            depth = int(levels[-1])
            in_string = (in_string + int(toggles[-1])) & 1
        nodes += int(np.count_nonzero(((kind == _OPEN) | (kind == _SEPARATOR)) & outside))
    return deepest, nodes


def _escaped(backslash: np.ndarray, carry: int) -> tuple[np.ndarray, int]:
    """Which bytes follow an odd run of backslashes (``carry``: the parity of the run that
    ended the previous chunk), and the parity of the run ending this chunk."""
    index = np.arange(len(backslash))
    last_other = np.maximum.accumulate(np.where(backslash, -1, index))
    before = np.concatenate(([-1], last_other[:-1]))       # last non-backslash before i
    run = index - 1 - before + np.where(before < 0, carry, 0)
    if not backslash[-1]:
        return (run & 1) == 1, 0
    run_end = len(backslash) - 1 - last_other[-1] + (carry if last_other[-1] < 0 else 0)
    return (run & 1) == 1, int(run_end & 1)


__all__ = ["LoadLimits", "LIMITS", "Archive", "json_structure", "limits_with", "PROGRAM",
           "CONSTANT_NAME", "READ_ERRORS"]

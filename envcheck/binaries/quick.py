"""A first look at a shared object outside the GPU stack's distributions (one that names no
torch or CUDA dependency, such as sgl-kernel): whether it carries GPU code (a `.nv_fatbin`
section) or links a CUDA or torch library, from the section-name table and `.dynstr` alone.
A few bounded reads; pyelftools (4 ms a file) reads only the files that pass."""

from __future__ import annotations

import struct
from typing import BinaryIO

_ELF64_LE = b"\x7fELF\x02\x01"
_SECTION = struct.Struct("<IIQQQQIIQQ")  # name, type, flags, addr, offset, size, link, info, ...
MAX_TABLE = 1 << 20  # bytes of a section-header table, a name table or .dynstr read at most
GPU_LIBRARIES = (b"libcudart", b"libcuda.so", b"libc10", b"libtorch", b"libcublas", b"libnccl")


def _read(handle: BinaryIO, offset: int, size: int) -> bytes:
    """At most MAX_TABLE bytes at ``offset`` (a longer .dynstr is looked at in its first MiB)."""
    if size <= 0 or offset < 0:
        return b""
    handle.seek(offset)
    return handle.read(min(size, MAX_TABLE))


def carries_gpu_code(handle: BinaryIO) -> bool:
    """True for a little-endian ELF64 object with a ``.nv_fatbin`` section or a ``.dynstr``
    naming a CUDA or torch library; anything else (another class, a damaged table) is False."""
    head = _read(handle, 0, 64)
    if len(head) < 64 or not head.startswith(_ELF64_LE):
        return False
    shoff = struct.unpack_from("<Q", head, 0x28)[0]
    entsize, count, strndx = struct.unpack_from("<HHH", head, 0x3A)
    if entsize != _SECTION.size or not 0 < count <= 4096 or strndx >= count:
        return False
    table = _read(handle, shoff, entsize * count)
    if len(table) < entsize * count:
        return False
    sections = [_SECTION.unpack_from(table, i * entsize) for i in range(count)]
    names_at, names_size = sections[strndx][4], sections[strndx][5]
    names = _read(handle, names_at, names_size)
    dynstr = b""
    for name, _kind, _flags, _addr, offset, size, *_ in sections:
        end = names.find(b"\0", name)
        label = names[name:end] if 0 <= name < len(names) and end >= 0 else b""
        if label == b".nv_fatbin":
            return True
        if label == b".dynstr":
            dynstr = _read(handle, offset, size)
    return any(lib in dynstr for lib in GPU_LIBRARIES)

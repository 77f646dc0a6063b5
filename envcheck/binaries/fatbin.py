"""CUDA fatbin headers in an ELF ``.nv_fatbin`` section, read by seeking over the payloads.

Layout (docs: shared facts "fatbin-layout"; NVIDIA's ``fatbinary_section.h`` names the magic):
each fatbin is a 16-byte header (``u32 magic 0xBA55ED50, u16 version, u16 header_size,
u64 fat_size``) and entries back to back; an entry header is ``u16 kind`` (1 PTX, 2 ELF cubin),
``u16``, ``u32 header_size``, ``u64 payload_size``, ..., ``u16 minor, u16 major`` at 24 (the PTX
ISA version of a PTX entry) and ``u32 arch`` at 28 (90 = sm_90). Fatbins are 8-byte aligned,
with padding between them.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import BinaryIO

MAGIC = 0xBA55ED50
KIND_PTX = 1
KIND_CUBIN = 2
_HEADER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIQIIHHI")  # kind, ?, header size, payload, ?, ?, minor, major, arch
MAX_ENTRIES = 200_000  # a bound for a corrupt section: real libraries hold a few thousand


@dataclass(frozen=True)
class FatbinKernels:
    sass: tuple[int, ...]  # SM architectures of the cubins (80 = sm_80), ascending, distinct
    ptx: tuple[int, ...]  # virtual architectures of the embedded PTX
    ptx_isa: tuple[str, ...]  # the PTX ISA version of each of ``ptx`` ("8.4"), in its order
    entries: int  # kernel images seen (cubins and PTX)
    reads: int  # header reads it took


def read_kernels(handle: BinaryIO, offset: int, size: int) -> FatbinKernels:
    """Walk the fatbins of a section at ``offset`` (``size`` bytes) of an open file."""
    sass: set[int] = set()
    isa: dict[int, tuple[int, int]] = {}  # PTX arch -> its newest ISA
    entries = reads = 0
    pos, end = offset, offset + size
    while pos + _HEADER.size <= end and entries < MAX_ENTRIES:
        handle.seek(pos)
        raw = handle.read(_HEADER.size)
        reads += 1
        if len(raw) < _HEADER.size:
            break
        magic, _version, header_size, fat_size = _HEADER.unpack(raw)
        if magic != MAGIC or header_size < _HEADER.size:
            pos += 8  # padding between fatbins: advance to the next 8-byte boundary
            continue
        entry = pos + header_size
        stop = min(end, entry + fat_size)
        while entry + _ENTRY.size <= stop and entries < MAX_ENTRIES:
            handle.seek(entry)
            head = handle.read(_ENTRY.size)
            reads += 1
            if len(head) < _ENTRY.size:
                break
            kind, _, entry_header, payload, _, _, minor, major, arch = _ENTRY.unpack(head)
            if entry_header < _ENTRY.size:
                break  # not an entry header: the rest of this fatbin cannot be walked
            entries += 1
            if kind == KIND_CUBIN:
                sass.add(arch)
            elif kind == KIND_PTX:
                isa[arch] = max(isa.get(arch, (0, 0)), (major, minor))
            entry += entry_header + payload
        # the next fatbin starts after this one's entries, on an 8-byte boundary
        pos = max(pos + 8, (stop + 7) // 8 * 8)
    return FatbinKernels(
        sass=tuple(sorted(sass)),
        ptx=tuple(sorted(isa)),
        ptx_isa=tuple(f"{isa[a][0]}.{isa[a][1]}" for a in sorted(isa)),
        entries=entries,
        reads=reads,
    )

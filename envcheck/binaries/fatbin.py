"""CUDA fatbin headers in an ELF ``.nv_fatbin`` section, read by seeking over the payloads.

Layout (docs: shared facts "fatbin-layout"; NVIDIA's ``fatbinary_section.h`` names the magic):
each fatbin is a 16-byte header (``u32 magic 0xBA55ED50, u16 version, u16 header_size,
u64 fat_size``) and entries back to back; an entry header is ``u16 kind`` (1 PTX, 2 ELF cubin),
``u16``, ``u32 header_size``, ``u64 payload_size``, ..., ``u16 minor, u16 major`` at 24 (the PTX
ISA version of a PTX entry) and ``u32 arch`` at 28 (90 = sm_90). Fatbins are 8-byte aligned,
with padding between them.

A library may also keep fatbins outside ``.nv_fatbin`` and load them itself: cuFFT 12 (CUDA 13)
carries one sm_75 image in ``.nv_fatbin`` and about 24,000 fatbins (cubins sm_75 to sm_120) in
its large-data section ``.ldata`` (read from nvidia-cufft 12.0.0.61's libcufft.so.12; NVIDIA's
cuobjdump lists only the ``.nv_fatbin`` image). ``scan_embedded`` finds those by their magic.
"""

from __future__ import annotations

import mmap
import os
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


_MAGIC_BYTES = struct.pack("<I", MAGIC)
EMBEDDED_SECTIONS = (".ldata", ".lrodata")  # the large-data sections a fatbin store can sit in


def scan_embedded(handle: BinaryIO, offset: int, size: int) -> FatbinKernels:
    """The fatbins found by their magic anywhere in ``size`` bytes at ``offset`` (a data
    section a library loads its own kernels from), each validated as ``read_kernels`` does:
    version 1, a 16-byte header, entries whose headers chain to the fatbin's end."""
    sass: set[int] = set()
    isa: dict[int, tuple[int, int]] = {}
    entries = reads = 0
    size = min(size, os.fstat(handle.fileno()).st_size - offset)  # a header may lie
    if size <= 0 or offset < 0:
        return FatbinKernels((), (), (), 0, 0)
    start = offset - offset % mmap.ALLOCATIONGRANULARITY
    with mmap.mmap(
        handle.fileno(), offset + size - start, offset=start, access=mmap.ACCESS_READ
    ) as view:
        pos, end = offset - start, offset - start + size
        while entries < MAX_ENTRIES:
            pos = view.find(_MAGIC_BYTES, pos, end)
            if pos < 0 or pos + _HEADER.size > end:
                break
            reads += 1
            _magic, version, header_size, fat_size = _HEADER.unpack_from(view, pos)
            stop = pos + header_size + fat_size
            if version != 1 or header_size != _HEADER.size or stop > end:
                pos += 4
                continue
            entry = pos + header_size
            found: list[tuple[int, int, int, int]] = []
            while entry + _ENTRY.size <= stop:
                kind, _, entry_header, payload, _, _, minor, major, arch = _ENTRY.unpack_from(
                    view, entry
                )
                reads += 1
                if entry_header < _ENTRY.size or entry + entry_header + payload > stop:
                    found = []
                    break
                found.append((kind, arch, major, minor))
                entry += entry_header + payload
            for kind, arch, major, minor in found:
                entries += 1
                if kind == KIND_CUBIN:
                    sass.add(arch)
                elif kind == KIND_PTX:
                    isa[arch] = max(isa.get(arch, (0, 0)), (major, minor))
            pos = stop if found else pos + 4
    return FatbinKernels(
        sass=tuple(sorted(sass)),
        ptx=tuple(sorted(isa)),
        ptx_isa=tuple(f"{isa[a][0]}.{isa[a][1]}" for a in sorted(isa)),
        entries=entries,
        reads=reads,
    )


def merged(first: FatbinKernels | None, second: FatbinKernels) -> FatbinKernels:
    """Both stores of one library as one."""
    if first is None:
        return second
    isa = dict(zip(first.ptx, first.ptx_isa, strict=False))
    for arch, version in zip(second.ptx, second.ptx_isa, strict=False):
        if arch not in isa or tuple(map(int, version.split("."))) > tuple(
            map(int, isa[arch].split("."))
        ):
            isa[arch] = version
    return FatbinKernels(
        sass=tuple(sorted({*first.sass, *second.sass})),
        ptx=tuple(sorted(isa)),
        ptx_isa=tuple(isa[a] for a in sorted(isa)),
        entries=first.entries + second.entries,
        reads=first.reads + second.reads,
    )

"""Fatbin headers read from real ELF files: sections built by objcopy from the documented
layout; payloads are skipped, a damaged header stops the walk without hanging."""

from __future__ import annotations

import io
import struct
from pathlib import Path

from envcheck.binaries.elf import read_elf
from envcheck.binaries.fatbin import read_kernels, scan_embedded
from tests.binaries.elfbuild import add_fatbin, build_so, cubin, entry, fatbin, ptx


def test_kernels_of_several_fatbins_with_padding(tmp_path: Path) -> None:
    so = build_so(tmp_path / "libkernels.so", "int k(void) { return 1; }")
    data = (
        fatbin(cubin(80), cubin(86), ptx(90, (8, 4)))
        + bytes(24)
        + fatbin(cubin(120), ptx(120, (8, 7)))
    )
    add_fatbin(so, data)
    kernels = read_elf(so).kernels
    assert kernels is not None
    assert kernels.sass == (80, 86, 120)
    assert kernels.ptx == (90, 120)
    assert kernels.ptx_isa == ("8.4", "8.7")  # one per PTX architecture, in its order
    assert kernels.entries == 5


def test_a_kernel_store_in_the_large_data_section_counts(tmp_path: Path) -> None:
    # cuFFT 12's layout: one sm_75 image in .nv_fatbin, the real kernels as fatbins in .ldata
    # among other data (a stray magic number in that data is not taken for a fatbin)
    so = build_so(tmp_path / "libcufft.so.12", "int plan(void) { return 3; }")
    add_fatbin(so, fatbin(cubin(75)))
    stray = struct.pack("<IHHQ", 0xBA55ED50, 7, 16, 10**9)
    store = (
        b"\x11" * 100
        + stray
        + bytes(4)
        + fatbin(cubin(80), cubin(90), ptx(90, (7, 8)))
        + b"\x22" * 36
        + fatbin(cubin(120))
    )
    add_fatbin(so, store, section=".ldata")
    kernels = read_elf(so).kernels
    assert kernels is not None
    assert kernels.sass == (75, 80, 90, 120)
    assert kernels.ptx == (90,) and kernels.ptx_isa == ("7.8",)
    assert kernels.entries == 5


def test_a_store_section_past_the_end_of_the_file_is_read_as_far_as_the_file_goes(
    tmp_path: Path,
) -> None:
    # a truncated library (a broken download): the section header promises more than is there
    so = build_so(tmp_path / "libcut.so", "int g(void) { return 5; }")
    add_fatbin(so, fatbin(cubin(80)) + bytes(4096), section=".ldata")
    data = so.read_bytes()
    magic = data.index(struct.pack("<I", 0xBA55ED50))
    with so.open("rb") as handle:
        assert scan_embedded(handle, magic, 10**9).sass == (80,)  # clamped to the file
        assert scan_embedded(handle, len(data) + 100, 4096).entries == 0  # wholly past it
    so.write_bytes(data[: magic + 40])  # cut inside the fatbin: nothing half-read
    with so.open("rb") as handle:
        assert scan_embedded(handle, magic, 4096).entries == 0


def test_other_data_sections_are_not_searched(tmp_path: Path) -> None:
    # only the kernel-store sections are searched: fatbin bytes in .rodata are just data
    so = build_so(tmp_path / "libdata.so", "int f(void) { return 4; }")
    add_fatbin(so, fatbin(cubin(90)), section=".rodata.blob")
    assert read_elf(so).kernels is None


def test_payloads_are_seeked_over_not_read(tmp_path: Path) -> None:
    big = entry(2, 90, b"\xab" * 5_000_000)  # a 5 MB cubin: only its 32-byte header is read
    data = fatbin(big, cubin(100))

    class Counting(io.BytesIO):
        read_bytes = 0

        def read(self, size: int | None = -1) -> bytes:
            chunk = super().read(size)
            Counting.read_bytes += len(chunk)
            return chunk

    kernels = read_kernels(Counting(data), 0, len(data))
    assert kernels.sass == (90, 100)
    assert Counting.read_bytes < 200


def test_a_library_without_gpu_code_has_no_kernels(tmp_path: Path) -> None:
    so = build_so(tmp_path / "libplain.so", "int f(void) { return 2; }")
    assert read_elf(so).kernels is None


def test_damaged_headers_end_the_walk() -> None:
    # an entry whose header size is 0 would loop forever if trusted
    bad = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 64) + struct.pack("<HHIQ", 2, 0, 0, 0).ljust(
        64, b"\0"
    )
    kernels = read_kernels(io.BytesIO(bad), 0, len(bad))
    assert kernels.sass == () and kernels.entries == 0
    # a fat size beyond the section and garbage: bounded by the section, no exception
    junk = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 10**12) + b"\xff" * 100
    assert read_kernels(io.BytesIO(junk), 0, len(junk)).entries <= 2


def test_first_look_on_real_and_damaged_files(tmp_path: Path) -> None:
    from envcheck.binaries.quick import carries_gpu_code

    gpu = add_fatbin(build_so(tmp_path / "libg.so", "int g(void) { return 1; }"), fatbin(cubin(90)))
    plain = build_so(tmp_path / "libp.so", "int p(void) { return 1; }")
    with gpu.open("rb") as a, plain.open("rb") as b:
        assert carries_gpu_code(a) and not carries_gpu_code(b)
    raw = plain.read_bytes()
    for damaged in (b"", raw[:40], raw[:64] + b"\xff" * 64, b"\x7fELF\x02\x01" + b"\xff" * 200):
        assert carries_gpu_code(io.BytesIO(damaged)) is False

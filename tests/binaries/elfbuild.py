"""Real shared objects for the binaries tests: built with the system C compiler, fatbins
assembled from the documented header layout and placed in a `.nv_fatbin` section with objcopy
(nvcc is not needed)."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

FATBIN_MAGIC = 0xBA55ED50


def tools() -> tuple[str, str]:
    cc = shutil.which("gcc") or shutil.which("cc")
    objcopy = shutil.which("objcopy")
    if cc is None or objcopy is None:
        pytest.skip("needs a C compiler and objcopy")
    return cc, objcopy


def build_so(
    out: Path,
    source: str,
    *,
    soname: str | None = None,
    libs: tuple[Path, ...] = (),
    runpath: str | None = None,
    rpath: str | None = None,
    version_script: str | None = None,
) -> Path:
    """Compile ``source`` (C) into the shared object ``out``, linked against ``libs``."""
    cc, _ = tools()
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.with_name(out.name + ".c")
    src.write_text(source, encoding="utf-8")
    cmd = [cc, "-shared", "-fPIC", "-o", str(out), str(src)]
    if soname:
        cmd.append(f"-Wl,-soname,{soname}")
    for lib in libs:
        cmd.append(str(lib))  # linked by path: DT_NEEDED is the library's SONAME
    if runpath is not None:
        cmd += [f"-Wl,-rpath,{runpath}", "-Wl,--enable-new-dtags"]
    if rpath is not None:
        cmd += [f"-Wl,-rpath,{rpath}", "-Wl,--disable-new-dtags"]
    if version_script is not None:
        script = out.with_name(out.name + ".map")
        script.write_text(version_script, encoding="utf-8")
        cmd.append(f"-Wl,--version-script,{script}")
    subprocess.run(cmd, check=True, timeout=60, capture_output=True)
    src.unlink()
    return out


def entry(kind: int, arch: int, payload: bytes, isa: tuple[int, int] = (0, 0)) -> bytes:
    """One fatbin entry: a 64-byte header (kind, ?, header size, payload size, ..., minor,
    major at 24, arch at 28) and its payload."""
    header = struct.pack("<HHIQIIHHI", kind, 0x0101, 64, len(payload), 0, 0, isa[1], isa[0], arch)
    return header.ljust(64, b"\0") + payload


def fatbin(*entries: bytes) -> bytes:
    """A fatbin of ``entries``, its size a multiple of 8 (fatbins are 8-byte aligned)."""
    body = b"".join(entries)
    body += bytes(-len(body) % 8)
    return struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(body)) + body


def cubin(arch: int) -> bytes:
    return entry(2, arch, b"\x7fELF" + bytes(60) + b"sass" * 8)


def ptx(arch: int, isa: tuple[int, int]) -> bytes:
    return entry(
        1, arch, f".version {isa[0]}.{isa[1]}\n.target sm_{arch}\n".encode() + b"\0" * 3, isa
    )


def add_fatbin(so: Path, data: bytes, section: str = ".nv_fatbin") -> Path:
    _, objcopy = tools()
    blob = so.with_name(so.name + ".fatbin")
    blob.write_bytes(data)
    subprocess.run(
        [
            objcopy,
            "--add-section",
            f"{section}={blob}",
            "--set-section-flags",
            f"{section}=alloc,readonly,contents",
            str(so),
        ],
        check=True,
        timeout=60,
        capture_output=True,
    )
    blob.unlink()
    return so


def record(
    site: Path, dist: str, version: str, files: list[Path], requires: tuple[str, ...] = ()
) -> None:
    """A dist-info whose RECORD lists ``files`` (as pip writes it)."""
    info = site / f"{dist}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    lines = ["Metadata-Version: 2.1", f"Name: {dist}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    (info / "METADATA").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = [f"{f.relative_to(site)},sha256=x,{f.stat().st_size}" for f in files]
    rows.append(f"{info.name}/RECORD,,")
    (info / "RECORD").write_text("\n".join(rows) + "\n", encoding="utf-8")

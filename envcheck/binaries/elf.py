"""One ELF shared object read with pyelftools: what the dynamic loader and the CUDA runtime
will look at (DT_NEEDED, RPATH/RUNPATH, SONAME, symbol version needs and definitions, the
fatbin headers of ``.nv_fatbin``), and on request the undefined symbols it expects a set of
libraries to define. Only headers and the small dynamic tables are read, never the payloads."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envcheck.binaries.fatbin import (
    EMBEDDED_SECTIONS,
    FatbinKernels,
    merged,
    read_kernels,
    scan_embedded,
)

ELF_MAGIC = b"\x7fELF"
MAX_SYMBOLS = 400_000  # a bound on a symbol table walk (libtorch_cpu.so: about 170,000)


@dataclass(frozen=True)
class ElfFacts:
    soname: str | None = None
    needed: tuple[str, ...] = ()
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    # library -> the symbol versions this object needs from it (.gnu.version_r)
    version_needs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    version_defs: tuple[str, ...] = ()  # the versions it defines (.gnu.version_d): GLIBC_2.34
    kernels: FatbinKernels | None = None
    # undefined dynamic symbols chosen by the caller's filter (torch's C++ namespaces)
    undefined: tuple[str, ...] = ()
    machine: str | None = None


def is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(4) == ELF_MAGIC
    except OSError:
        return False


def _split(value: Any) -> tuple[str, ...]:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return tuple(p for p in text.split(":") if p)


def read_elf(
    path: Path,
    wants_undefined: Callable[[tuple[str, ...]], bool] | None = None,
    keep_symbol: Callable[[str], bool] | None = None,
) -> ElfFacts:
    """Facts of one shared object. ``wants_undefined(needed)`` says whether to walk its dynamic
    symbols for the undefined ones ``keep_symbol`` keeps. Raises OSError or ELFError."""
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile
    from elftools.elf.gnuversions import GNUVerDefSection, GNUVerNeedSection

    with path.open("rb") as handle:
        elf = ELFFile(handle)
        soname: str | None = None
        needed: list[str] = []
        rpath: tuple[str, ...] = ()
        runpath: tuple[str, ...] = ()
        needs: dict[str, tuple[str, ...]] = {}
        defs: list[str] = []
        kernels: FatbinKernels | None = None
        dynsym: Any = None
        for section in _wanted_sections(elf):
            if isinstance(section, DynamicSection):
                tag: Any
                for tag in section.iter_tags():
                    kind = tag.entry.d_tag
                    if kind == "DT_NEEDED":
                        needed.append(tag.needed)
                    elif kind == "DT_SONAME":
                        soname = tag.soname
                    elif kind == "DT_RPATH":
                        rpath = _split(tag.rpath)
                    elif kind == "DT_RUNPATH":
                        runpath = _split(tag.runpath)
            elif isinstance(section, GNUVerNeedSection):
                for verneed, aux in section.iter_versions():
                    names = tuple(str(a.name) for a in aux)
                    lib = str(verneed.name)
                    needs[lib] = needs.get(lib, ()) + names
            elif isinstance(section, GNUVerDefSection):
                for _verdef, aux in section.iter_versions():
                    first = next(iter(aux), None)
                    if first is not None:
                        defs.append(first.name)
            elif section.name == ".nv_fatbin":
                kernels = merged(
                    kernels, read_kernels(handle, section["sh_offset"], section["sh_size"])
                )
            elif section.name in EMBEDDED_SECTIONS and section["sh_type"] == "SHT_PROGBITS":
                found = scan_embedded(handle, section["sh_offset"], section["sh_size"])
                if found.entries:
                    kernels = merged(kernels, found)
            elif section.name == ".dynsym":
                dynsym = section
        undefined: tuple[str, ...] = ()
        if dynsym is not None and wants_undefined is not None and wants_undefined(tuple(needed)):
            undefined = tuple(_undefined(dynsym.iter_symbols(), keep_symbol))
        return ElfFacts(
            soname=soname,
            needed=tuple(needed),
            rpath=rpath,
            runpath=runpath,
            version_needs=needs,
            version_defs=tuple(defs),
            kernels=kernels,
            undefined=undefined,
            machine=str(elf["e_machine"]),
        )


_WANTED_TYPES = ("SHT_DYNAMIC", "SHT_GNU_verneed", "SHT_GNU_verdef", "SHT_DYNSYM")


def _wanted_sections(elf: Any) -> Iterable[Any]:
    """Only the sections read here, built one by one: iterating all of them would make
    pyelftools parse every hash table (100 ms on libtorch_cuda.so) for nothing."""
    for index in range(elf.num_sections()):
        header = elf._get_section_header(index)
        kind = header["sh_type"]
        if kind in _WANTED_TYPES or (
            kind == "SHT_PROGBITS"
            and elf._get_section_name(header) in (".nv_fatbin", *EMBEDDED_SECTIONS)
        ):
            yield elf.get_section(index)


def _undefined(symbols: Iterable[Any], keep: Callable[[str], bool] | None) -> list[str]:
    out: list[str] = []
    for count, symbol in enumerate(symbols):
        if count >= MAX_SYMBOLS:
            break
        if symbol["st_shndx"] != "SHN_UNDEF" or not symbol.name:
            continue
        if symbol["st_info"]["bind"] == "STB_WEAK":
            continue  # a weak reference loads without a definition
        if keep is None or keep(symbol.name):
            out.append(symbol.name)
    return out


def defines(path: Path, names: Iterable[str]) -> set[str]:
    """Which of ``names`` the shared object at ``path`` defines in its dynamic symbol table,
    looked up through its hash table as the loader does (no walk of 100,000 symbols)."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.hash import ELFHashSection, GNUHashSection

    found: set[str] = set()
    with path.open("rb") as handle:
        elf = ELFFile(handle)
        table = None
        for section in elf.iter_sections():
            if isinstance(section, (GNUHashSection, ELFHashSection)):
                table = section
                if isinstance(section, GNUHashSection):
                    break
        if table is None:
            dynsym: Any = elf.get_section_by_name(".dynsym")
            if dynsym is None:
                return found
            wanted = set(names)
            for symbol in dynsym.iter_symbols():
                if symbol.name in wanted and symbol["st_shndx"] != "SHN_UNDEF":
                    found.add(symbol.name)
            return found
        for name in names:
            symbol = table.get_symbol(name)
            if symbol is not None and symbol["st_shndx"] != "SHN_UNDEF":
                found.add(name)
    return found

"""Read the installed packages' ELF files into the report's ``binaries`` section.

Which files: every shared object a distribution's RECORD lists in the interpreter's
site-packages (what pip installed), and those an editable install (PEP 660's direct_url.json
and finders, `setup.py develop`'s .egg-link) left in its source tree (editable.py).
The GPU stack's distributions (torch, the CUDA wheels, what requires them) are read in full;
any other file only when a first look (quick.py) finds GPU code or a CUDA or torch library in
it. Each file's facts are cached by (path, size, mtime,
inode); what depends on other files (where the loader finds a needed library, whether torch
defines a symbol) is worked out on every run from those cached facts.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from stat import S_ISREG
from typing import Any

from envcheck.binaries.cache import FileCache, file_key
from envcheck.binaries.editable import FINDER, editable_objects, editable_sources
from envcheck.binaries.elf import ElfFacts, defines, read_elf
from envcheck.binaries.fatbin import FatbinKernels
from envcheck.binaries.ldcache import Loader, default_dirs, parse_ld_cache
from envcheck.binaries.quick import carries_gpu_code
from envcheck.binaries.warm import MAPPED_NAME, Pending, lookup
from envcheck.model.binaries import BinariesInfo, BinaryFile, Kernels, Need
from envcheck.probes.context import ProbeContext

MAX_FILES = 5000  # shared objects read per run: a bound for an enormous environment
TORCH_LIB_PREFIXES = ("libc10", "libtorch", "libshm")
_TORCH_SYMBOL = re.compile(r"^_ZN(?:[KVr]|St)*(?:3c10|2at|5torch)\d")
_SHARED = re.compile(r"\.so(?:\.\d+)*$")
_EXTENSION = re.compile(r"\.(?:cpython-[^.]+|abi3|pypy[^.]*)\.so$")
# driver libraries: their absence is the driver's story (DRV rules), not a package's
DRIVER_SONAMES = ("libcuda.so.1", "libnvidia-ml.so.1", "libnvcuvid.so.1", "libnvidia-encode.so.1")
# the C library's own pieces: always there where the interpreter runs
_LIBC_PARTS = re.compile(r"^(?:ld-linux[-\w.]*|libc|libm|libdl|libpthread|librt|libutil)\.so")


def wants_torch_symbols(needed: tuple[str, ...]) -> bool:
    return any(n.startswith(TORCH_LIB_PREFIXES) for n in needed)


def is_torch_symbol(name: str) -> bool:
    return _TORCH_SYMBOL.match(name) is not None


# --- per-file facts, cached ---------------------------------------------------------------------


def _to_json(facts: ElfFacts) -> dict[str, Any]:
    k = facts.kernels
    return {
        "soname": facts.soname,
        "needed": list(facts.needed),
        "rpath": list(facts.rpath),
        "runpath": list(facts.runpath),
        "version_needs": {lib: list(v) for lib, v in facts.version_needs.items()},
        "version_defs": list(facts.version_defs),
        "kernels": None
        if k is None
        else {"sass": list(k.sass), "ptx": list(k.ptx), "ptx_isa": list(k.ptx_isa)},
        "undefined": list(facts.undefined),
    }


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _from_json(data: dict[str, Any]) -> ElfFacts:
    k = data.get("kernels")
    kernels = None
    if isinstance(k, dict):
        kernels = FatbinKernels(
            sass=tuple(int(x) for x in k.get("sass", []) if isinstance(x, int)),
            ptx=tuple(int(x) for x in k.get("ptx", []) if isinstance(x, int)),
            ptx_isa=_strs(k.get("ptx_isa")),
            entries=0,
            reads=0,
        )
    needs = data.get("version_needs")
    soname = data.get("soname")
    return ElfFacts(
        soname=soname if isinstance(soname, str) else None,
        needed=_strs(data.get("needed")),
        rpath=_strs(data.get("rpath")),
        runpath=_strs(data.get("runpath")),
        version_needs={str(a): _strs(b) for a, b in needs.items()}
        if isinstance(needs, dict)
        else {},
        version_defs=_strs(data.get("version_defs")),
        kernels=kernels,
        undefined=_strs(data.get("undefined")),
    )


@dataclass
class _Read:
    path: Path
    facts: ElfFacts | None
    error: str | None
    cached: bool
    key: list[int]


def _read(
    path: Path, cache: FileCache, symbols: bool = True, first_look: bool = False
) -> _Read | None:
    """The facts of one file (cached); ``first_look``: only when quick.carries_gpu_code passes."""
    cache.seen.add(str(path))  # looked at, whatever it turns out to be (warm.py)
    try:
        stat = path.stat()
    except OSError:
        return None
    if not S_ISREG(stat.st_mode):
        return None  # a FIFO or device named in a RECORD would block a read
    key = file_key(stat)
    entry = cache.get(str(path), key)
    if entry is not None:
        if entry.get("error"):
            return _Read(path, None, str(entry["error"]), True, key)
        if entry.get("elf") is False or entry.get("gpu") is False:
            return None
        return _Read(path, _from_json(entry), None, True, key)
    try:
        with path.open("rb") as handle:
            if handle.read(4) != b"\x7fELF":
                cache.put(str(path), key, {"elf": False})
                return None
            if first_look and not carries_gpu_code(handle):
                cache.put(str(path), key, {"gpu": False})
                return None
        facts = read_elf(path, wants_torch_symbols if symbols else None, is_torch_symbol)
    except Exception as exc:  # a damaged file is a finding, never a crash (ELFError, OSError)
        error = f"{type(exc).__name__}: {exc}"[:300]
        cache.put(str(path), key, {"error": error})
        return _Read(path, None, error, False, key)
    cache.put(str(path), key, _to_json(facts))
    return _Read(path, facts, None, False, key)


# --- which files --------------------------------------------------------------------------------


def site_dirs(
    sys_path: Iterable[str], ctx: ProbeContext, looked: set[str] | None = None
) -> tuple[Path, ...]:
    seen: list[Path] = []
    for entry in sys_path:
        if not entry.endswith(("site-packages", "dist-packages")):
            continue
        if looked is not None:
            looked.add(entry)
        path = Path(entry)
        if path.is_dir() and path not in seen:
            seen.append(path)
    return tuple(seen)


def gpu_stack(name: str, requires: Iterable[str]) -> bool:
    """A distribution of the GPU stack: torch, the nvidia-* and other CUDA wheels, and every
    distribution that requires one of them (flash-attn, vLLM, xformers, bitsandbytes, ...)."""
    key = name.lower().replace("_", "-")
    if key == "torch" or _CUDA_NAME.search(key):
        return True
    for req in requires:
        dep = re.split(r"[\s<>=!~;\[(]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")
        if dep == "torch" or _CUDA_NAME.search(dep):
            return True
    return False


_CUDA_NAME = re.compile(r"^nvidia-|cuda|^cupy|^jax-cuda|^triton$")


_RECORD_SHARED = re.compile(r"^([^,\r\n]+\.so(?:\.\d+)*),", re.MULTILINE)


def installed_objects(
    site: Path, cache: FileCache | None = None
) -> Iterator[tuple[Path, str | None]]:
    """(shared object, distribution) for each one a RECORD lists (each RECORD's list cached
    like a file's facts)."""
    try:
        names = sorted(n for n in os.listdir(site) if n.endswith(".dist-info"))
    except OSError:
        return
    for folder in names:
        name = folder.split("-")[0]
        for rel in _record_objects(site / folder / "RECORD", cache):
            if not rel.startswith(("/", "..")) and "/../" not in rel:
                yield site / rel, name


def _record_objects(record: Path, cache: FileCache | None) -> list[str]:
    if cache is not None:
        cache.seen.add(str(record))
    try:
        key = file_key(record.stat())
    except OSError:
        return []
    entry = cache.get(str(record), key) if cache is not None else None
    if entry is not None and isinstance(entry.get("objects"), list):
        return [str(o) for o in entry["objects"]]
    try:
        text = record.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    objects = _RECORD_SHARED.findall(text)
    if cache is not None:
        cache.put(str(record), key, {"objects": objects})
    return objects


# --- the node's view --------------------------------------------------------------------------


def _loader(ctx: ProbeContext, arch: str | None) -> Loader:
    raw = b""
    try:
        with ctx.path("/etc/ld.so.cache").open("rb") as handle:
            raw = handle.read(32 * 1024 * 1024)
    except OSError:
        pass
    ld_path = tuple(p for p in ctx.env.get("LD_LIBRARY_PATH", "").split(":") if p)
    return Loader(
        root=ctx.root,
        ld_library_path=ld_path,
        cache=parse_ld_cache(raw),
        default_dirs=default_dirs(arch),
    )


def _wheel_libs(sites: Iterable[Path], looked: set[str] | None = None) -> dict[str, str]:
    """soname -> path for the nvidia-* wheels' libraries (site-packages/nvidia/*/lib)."""
    found: dict[str, str] = {}
    for site in sites:
        if looked is not None:  # the listings the glob reads: nvidia/ and each package in it
            looked.add(str(site / "nvidia"))
            with contextlib.suppress(OSError):
                looked.update(str(site / "nvidia" / n) for n in os.listdir(site / "nvidia"))
        for lib in sorted(site.glob("nvidia/*/lib")):
            if looked is not None:
                looked.add(str(lib))
            try:
                names = sorted(os.listdir(lib))
            except OSError:
                continue
            for name in names:
                if _SHARED.search(name):
                    found.setdefault(name, str(lib / name))
    return found


def _version_family(version: str) -> str:
    return re.sub(r"[\d.]+$", "", version)


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def _newest(defs: Iterable[str], family: str) -> str | None:
    same = [d for d in defs if _version_family(d) == family]
    return max(same, key=lambda d: _numbers(d[len(family) :]), default=None)


def scan(
    ctx: ProbeContext,
    sys_path: Iterable[str],
    arch: str | None,
    distributions: Iterable[tuple[str, Iterable[str]]] | None = None,
    pending: Pending | None = None,
) -> BinariesInfo:
    """``distributions``: (name, requires) of the installed ones; only the GPU stack's files
    are read (all when None). Answered from the last scan when nothing it saw changed
    (warm.py); ``pending``: ``warm.lookup``'s miss for these arguments, looked up already."""
    if pending is None:
        info, pending = lookup(ctx, sys_path, arch, distributions)
        if info is not None:
            return info
    looked: set[str] = set()
    info, keep = _scan(ctx, pending.sys_path, arch, pending.distributions, pending.mapped, looked)
    if keep:
        pending.warm.save(info, looked, pending.started)
    return info


def _scan(
    ctx: ProbeContext,
    sys_path: tuple[str, ...],
    arch: str | None,
    distributions: list[tuple[str, tuple[str, ...]]] | None,
    mapped_paths: list[str] | None,
    looked: set[str],
) -> tuple[BinariesInfo, bool]:
    """The scan, and whether its answer may be kept: ``looked`` gets every path it looked at
    (with the files the per-file cache saw)."""
    cache = FileCache(ctx.env)
    sites = site_dirs(sys_path, ctx, looked)
    keep = True
    stack = None
    if distributions is not None:
        stack = {n.lower().replace("_", "-"): gpu_stack(n, r) for n, r in distributions}
    objects: dict[Path, str | None] = {}
    for site in sites:
        looked.add(str(site))  # its listing: the distributions and editable installs
        for path, dist in installed_objects(site, cache):
            if len(objects) >= MAX_FILES:
                break
            objects.setdefault(path, dist)
        # editable installs (PEP 660, `setup.py develop`): their objects stay in the source
        looked.update(_editable_markers(site))
        if next(editable_sources(site), None) is not None:
            keep = False  # a source tree is walked: its folders are not recorded
        for path, dist in editable_objects(site):
            if len(objects) >= MAX_FILES:
                break
            objects.setdefault(path, dist)
    reads: dict[Path, _Read] = {}
    for path, dist in objects.items():
        # outside the GPU stack's distributions, a file is read only if it has GPU code or
        # links CUDA or torch (sgl-kernel states no dependency)
        other = stack is not None and not stack.get((dist or "").lower().replace("_", "-"))
        read = _read(path, cache, symbols=dist != "torch", first_look=other)
        if read is not None:
            reads[path] = read
    loader = _loader(ctx, arch)
    looked.add(str(ctx.path("/etc/ld.so.cache")))
    wheel_libs = _wheel_libs(sites, looked)
    torch_lib = None
    for site in sites:
        looked.add(str(site / "torch" / "lib"))
        if (site / "torch" / "lib").is_dir():
            torch_lib = site / "torch" / "lib"
            break
    loaded = _torch_loaded(reads, torch_lib, loader)
    mapped, unique = _mapped(ctx, loader, cache, mapped_paths)
    # a staged root (tests) tries paths under it first (_staged): those tries are not recorded
    keep = keep and unique and loader.root == Path("/")
    version_defs: dict[str, tuple[str, ...]] = {}
    files: list[BinaryFile] = []
    torch_exports = _TorchExports(torch_lib, reads)
    real = lru_cache(maxsize=None)(_recorded(os.path.realpath, looked))  # once per run
    for path, read in reads.items():
        dist = objects.get(path)
        extension = _EXTENSION.search(path.name) is not None
        if read.facts is None:
            files.append(BinaryFile(str(path), dist, extension, error=read.error))
            continue
        facts = read.facts
        uses_torch = wants_torch_symbols(facts.needed)
        # what this process has mapped is what the loader reuses, whatever the object's
        # search path says (a conda libstdc++ loaded by an earlier import); the listings shared
        view = replace(loader, loaded={**(loaded if uses_torch else {}), **mapped})
        needs = tuple(_problems(path, facts, view, wheel_libs, version_defs, cache, mapped, real))
        missing: tuple[str, ...] = ()
        checked = 0
        if facts.undefined and torch_lib is not None and dist != "torch":
            missing, checked = torch_exports.missing(facts.undefined)
        kernels = None
        if facts.kernels is not None:
            kernels = Kernels(facts.kernels.sass, facts.kernels.ptx, facts.kernels.ptx_isa)
        if kernels or needs or missing:
            files.append(BinaryFile(str(path), dist, extension, kernels, needs, missing, checked))
    cache.save()
    looked.update(cache.seen)
    looked.update(loader.observed())
    info = BinariesInfo(
        site_dirs=tuple(str(s) for s in sites),
        files=tuple(files),
        scanned=len(reads),
        from_cache=sum(1 for r in reads.values() if r.cached),
        torch_lib=str(torch_lib) if torch_lib else None,
    )
    return info, keep


def _recorded(fn: Callable[[str], str], looked: set[str]) -> Callable[[str], str]:
    def call(path: str) -> str:
        looked.add(path)
        return fn(path)

    return call


def _editable_markers(site: Path) -> Iterator[str]:
    """The files in ``site`` that could declare an editable install (editable.py reads them):
    each distribution's direct_url.json, .egg-link files, setuptools' finders."""
    try:
        names = os.listdir(site)
    except OSError:
        return
    for name in names:
        if name.endswith(".dist-info"):
            yield str(site / name / "direct_url.json")
        elif name.endswith(".egg-link") or FINDER.match(name):
            yield str(site / name)


def _torch_loaded(
    reads: dict[Path, _Read], torch_lib: Path | None, loader: Loader
) -> dict[str, str]:
    """The sonames ``import torch`` has loaded when an extension loads: torch's own libraries
    and the copies of what they need that the loader found for them."""
    if torch_lib is None:
        return {}
    loaded: dict[str, str] = {}
    for path, read in reads.items():
        if path.parent != torch_lib or read.facts is None:
            continue
        loaded[read.facts.soname or path.name] = str(path)
    for path, read in reads.items():
        if path.parent != torch_lib or read.facts is None:
            continue
        for name in read.facts.needed:
            if name in loaded:
                continue
            found = loader.find(name, str(path.parent), read.facts.rpath, read.facts.runpath, False)
            if found.path:
                loaded[name] = found.path
    return loaded


def _problems(
    path: Path,
    facts: ElfFacts,
    loader: Loader,
    wheel_libs: dict[str, str],
    version_defs: dict[str, tuple[str, ...]],
    cache: FileCache,
    mapped: dict[str, str] | None = None,
    real: Callable[[str], str] = os.path.realpath,
) -> Iterator[Need]:
    for name in facts.needed:
        found = loader.find(name, str(path.parent), facts.rpath, facts.runpath)
        if found.path is None:
            if name in DRIVER_SONAMES or _LIBC_PARTS.match(name):
                continue
            yield Need(name)
            continue
        via = found.via
        if via == "loaded" and mapped and mapped.get(name) == found.path:
            via = ALREADY_LOADED
        meant = wheel_libs.get(name)
        shadowed = (
            meant
            if meant
            and real(_staged(loader, meant)) != real(_staged(loader, found.path))
            and via in ("LD_LIBRARY_PATH", "ld.so.cache", "default", ALREADY_LOADED)
            else None
        )
        lacking: tuple[str, ...] = ()
        newest: str | None = None
        wanted = facts.version_needs.get(name, ())
        if wanted:
            defs = version_defs.get(found.path)
            if defs is None:
                defs = _defs_of(_staged(loader, found.path), cache)
                version_defs[found.path] = defs
            if defs:  # a library that defines no versions satisfies none and is not checked
                lacking = tuple(v for v in wanted if v not in defs)
                if lacking:
                    newest = _newest(defs, _version_family(lacking[0]))
        if shadowed or lacking:
            yield Need(name, found.path, via, shadowed, lacking, newest)


ALREADY_LOADED = "already loaded"  # a Need's ``via``: mapped in the process (/proc/self/maps)


def _mapped(
    ctx: ProbeContext, loader: Loader, cache: FileCache, paths: list[str] | None = None
) -> tuple[dict[str, str], bool]:
    """soname -> path of the shared objects the inspected process has mapped: when envcheck
    runs inside the job's interpreter (the API, the Ray hook, ``python -m envcheck`` of that
    environment) these are the copies the loader reuses for every later import, whatever an
    object's RUNPATH says. Another interpreter (``--python``) is not this process: nothing
    then. The flag: no soname is mapped twice (the first copy in address order counts, an
    order that changes from run to run)."""
    if paths is None:
        return {}, True
    found: dict[str, str] = {}
    unique = True
    for path in paths:
        match = MAPPED_NAME.match(path.rsplit("/", 1)[-1])
        if match is None:
            continue
        read = _read(Path(_staged(loader, path)), cache, symbols=False)
        soname = read.facts.soname if read is not None and read.facts is not None else None
        name = soname or match.group("soname")
        if name in found:
            unique = False
        found.setdefault(name, path)
    return found, unique


def _staged(loader: Loader, path: str) -> str:
    if loader.root == Path("/") or not path.startswith("/"):
        return path
    staged = loader.root / path.lstrip("/")
    return str(staged) if staged.exists() else path


def _defs_of(path: str, cache: FileCache) -> tuple[str, ...]:
    read = _read(Path(path), cache)
    return read.facts.version_defs if read is not None and read.facts is not None else ()


class _TorchExports:
    """Which symbols the installed torch's libraries define (hash-table lookups, remembered)."""

    def __init__(self, torch_lib: Path | None, reads: dict[Path, _Read]) -> None:
        self.libs = sorted(
            p
            for p in reads
            if torch_lib is not None
            and (
                p.parent == torch_lib or (p.parent == torch_lib.parent and p.name.startswith("_C"))
            )
        )
        self.known: dict[str, bool] = {}

    def missing(self, names: tuple[str, ...]) -> tuple[tuple[str, ...], int]:
        todo = [n for n in names if n not in self.known]
        if todo:
            found: set[str] = set()
            for lib in self.libs:
                left = [n for n in todo if n not in found]
                if not left:
                    break
                try:
                    found |= defines(lib, left)
                except Exception:  # an unreadable torch library decides nothing
                    return (), 0
            for name in todo:
                self.known[name] = name in found
        return tuple(n for n in names if not self.known[n]), len(names)

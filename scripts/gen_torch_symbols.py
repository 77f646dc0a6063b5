"""Generate matrices/generated/torch_symbols.tsv: which torch releases export each C++ symbol
of torch's own libraries, read from the release wheels' ELF dynamic symbol tables.

For one Linux x86_64 wheel per torch minor release (the newest final patch release of each
minor from 1.8 on, CPython 3.10's wheel, 3.9's before 1.11) the DYNAMIC symbol tables of
torch/lib/libc10.so, libc10_cuda.so, libtorch_cpu.so, libtorch_cuda*.so and
libtorch_python.so are read: the symbols each one exports (defined, global or weak, default
or protected visibility). The wheels are 0.5-1 GB, so none is downloaded whole: the zip's
central directory is read with HTTP range requests from the end of the file, then each of the
five members is fetched on its own range and stream-decompressed (zlib) only as far as its
ELF section headers, .dynsym and .dynstr reach. PyTorch's wheel build rewrites each library's
RPATH with patchelf, which moves .dynstr and the section headers to the end of the file, so
for these wheels that is most of the member; the script prints what each release cost.

A symbol is keyed by its mangled name with the C++11-ABI std::string spelled as the
pre-C++11 one (``NSt7__cxx1112basic_string...E`` -> ``Ss``, ``B5cxx11`` dropped): PyPI's
wheels switched to the C++11 ABI at 2.7, and the same function must not read as removed and
added there. Written are (1) the symbols whose presence CHANGED over the releases read, each
with its spans (``A..`` from A on, ``A..L`` A through L, ``..L`` up to L) and the library
that exports it, restricted to the namespaces extensions call (c10::, at:: without the
kernels only the dispatcher calls: at::native, at::cpu, at::meta, at::composite*,
at::redispatch, functionalization's, functorch's, at::cuda's per-operator wrappers,
torch::autograd::generated's backward nodes, torch::jit's fusers, CUB's kernels, anonymous
namespaces, function-local statics, the dispatcher's slow-path template instances; torch::,
caffe2::TypeMeta, c10d::, and THP* of the Python bindings; the table stays near 2 MB so),
and (2) a
short hash of each such symbol present in EVERY release read (then no torch release is the
cause: the C++ ABI or a build that never linked torch is).

    python scripts/gen_torch_symbols.py --index-url URL [--cache DIR] [--only 2.1]

URL is the simple index pip uses (PEP 691 JSON); the default is $PIP_INDEX_URL. Raw symbol
lists are cached per release under --cache (outside the repository).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import struct
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from envcheck.matrix.torch_symbols import FILE, neutral, short_hash

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "matrices" / "generated" / FILE
LIBRARIES = re.compile(r"^torch/lib/lib(c10|c10_cuda|torch_cpu|torch_cuda\w*|torch_python)\.so$")
SHORT = {"c10": "c10", "c10_cuda": "c10_cuda", "torch_cpu": "cpu", "torch_python": "python"}
OLDEST = Version("1.8")
# the CPython whose wheel is read, in order of preference (3.10 from 1.11 on; a release that
# dropped 3.10, 2.15, gets 3.11's)
PYTHONS_NEW = ("cp310", "cp311", "cp312")
PYTHONS_OLD = ("cp39", "cp38")
CHUNK = 8 << 20
_OP = re.compile(r"^_ZN2at4_ops\d+([a-z_0-9]+)\d")  # at::_ops::<op>::...
_CUDA_FUNCTION = re.compile(r"^_ZN2at4cuda(\d+)")  # at::cuda::<function>(...)


def _per_op(key: str, ops: set[str]) -> bool:
    """Whether ``key`` is a kernel wrapper generated for one operator in a dispatch key's
    namespace (at::cuda::add_out, at::cuda::addmm: the operator's name; the extension calls
    the operator through at::_ops, which the table keeps), not at::cuda's own API
    (at::cuda::getCurrentCUDAStream)."""
    found = _CUDA_FUNCTION.match(key)
    if found is None:
        return False
    name = key[found.end() : found.end() + int(found.group(1))]
    return name in ops or name.removesuffix("_out").removesuffix("_outf") in ops


# the namespaces an extension calls (mangled prefixes after _ZN / _ZNK / _ZTV ...)
_KEPT = re.compile(r"^(?:_Z(?:N|NK|TV|TI|TS|ZN|ZNK)?[KVR]*(?:3c10|2at|5torch|6caffe2|4c10d)|THP)")
# kernels called through the dispatcher, never by an extension's code: at::native, the
# per-dispatch-key namespaces (at::cpu::, at::meta::, at::compositeexplicitautograd::, ...,
# at::redispatch::), functionalization's and functorch's; caffe2:: but its TypeMeta (the
# dtype extensions read), the rest the protobuf-era ops 1.x carried
_DROPPED = re.compile(
    r"^_Z(?:Z|(?:N|NK|TV|TI|TS)K?(?:2at(?:6native|3cpu|4meta|10redispatch|17functionalization"
    r"|8functorch|\d+composite[a-z]+|4cuda(?:6detail)?3cub|4cuda17kernelHistogram1D)"
    r"|6caffe2(?!8TypeMeta)|5torch8autograd9generated|5torch3jit(?:5fuser|10tensorexpr)"
    r"|3c1010Dispatcher27callWithDispatchKeySlowPath))"
    r"|_GLOBAL__N_"  # a file's anonymous namespace: nothing outside the library calls it
)


class Remote:
    """A file read by HTTP range requests; counts the bytes fetched."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.fetched = 0
        head = urllib.request.Request(url, method="HEAD")
        with urllib.request.urlopen(head, timeout=120) as answer:
            self.size = int(answer.headers["Content-Length"])

    def read(self, start: int, length: int) -> bytes:
        request = urllib.request.Request(
            self.url, headers={"Range": f"bytes={start}-{start + length - 1}"}
        )
        with urllib.request.urlopen(request, timeout=300) as answer:
            data: bytes = answer.read()
        self.fetched += len(data)
        return data

    def stream(self, start: int, length: int) -> Iterator[bytes]:
        request = urllib.request.Request(
            self.url, headers={"Range": f"bytes={start}-{start + length - 1}"}
        )
        with urllib.request.urlopen(request, timeout=300) as answer:
            while True:
                block: bytes = answer.read(CHUNK)
                if not block:
                    return
                self.fetched += len(block)
                yield block


@dataclass(frozen=True)
class Member:
    name: str
    method: int
    compressed: int
    size: int
    header: int  # offset of its local file header


def members(remote: Remote) -> list[Member]:
    """The zip's central directory, read from the end of the file (zip64 where needed)."""
    tail = remote.read(max(0, remote.size - 65536), min(65536, remote.size))
    end = tail.rfind(b"PK\x05\x06")
    if end < 0:
        raise SystemExit(f"{remote.url}: no end of central directory")
    count, cd_size, cd_offset = struct.unpack_from("<HII", tail, end + 10)
    if cd_offset == 0xFFFFFFFF or count == 0xFFFF:
        locator = tail.rfind(b"PK\x06\x07")
        (eocd64,) = struct.unpack_from("<Q", tail, locator + 8)
        record = remote.read(eocd64, 56)
        count, cd_size, cd_offset = struct.unpack_from("<QQQ", record, 32)
    directory = remote.read(cd_offset, cd_size)
    found: list[Member] = []
    at = 0
    for _ in range(count):
        (method, _t, _d, _c, compressed, size, n, m, k) = struct.unpack_from(
            "<HHHIIIHHH", directory, at + 10
        )
        (header,) = struct.unpack_from("<I", directory, at + 42)
        name = directory[at + 46 : at + 46 + n].decode()
        extra = directory[at + 46 + n : at + 46 + n + m]
        values = [compressed, size, header]
        wide = [i for i, v in enumerate((size, compressed, header)) if v == 0xFFFFFFFF]
        if wide:  # zip64 extra field: size, compressed, offset, in that order
            e = 0
            while e < len(extra):
                tag, length = struct.unpack_from("<HH", extra, e)
                if tag == 1:
                    fields = struct.unpack_from(f"<{length // 8}Q", extra, e + 4)
                    order = {0: 1, 1: 0, 2: 2}  # position in (size, compressed, offset)
                    for j, i in enumerate(wide):
                        values[order[i]] = fields[j]
                e += 4 + length
        found.append(Member(name, method, values[0], values[1], values[2]))
        at += 46 + n + m + k
    return found


def _wanted_end(data: bytearray) -> int | None:
    """How many bytes of an ELF64 file are needed for its section headers, .dynsym and
    .dynstr; None until the bytes read so far say."""
    if len(data) < 64:
        return None
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError("not an ELF64 file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    table_end = shoff + shentsize * shnum
    if len(data) < table_end:
        return None
    ends = [table_end]
    for i in range(shnum):
        (kind,) = struct.unpack_from("<I", data, shoff + i * shentsize + 4)
        if kind == 11:  # SHT_DYNSYM and the string table it links
            offset, size = struct.unpack_from("<QQ", data, shoff + i * shentsize + 24)
            (link,) = struct.unpack_from("<I", data, shoff + i * shentsize + 40)
            ends.append(offset + size)
            s_offset, s_size = struct.unpack_from("<QQ", data, shoff + link * shentsize + 24)
            ends.append(s_offset + s_size)
    return int(max(ends))


def exported(data: bytes | bytearray) -> set[str]:
    """The defined, global or weak, default- or protected-visibility symbols of .dynsym."""
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    names: set[str] = set()
    for i in range(shnum):
        base = shoff + i * shentsize
        (kind,) = struct.unpack_from("<I", data, base + 4)
        if kind != 11:
            continue
        offset, size = struct.unpack_from("<QQ", data, base + 24)
        (link,) = struct.unpack_from("<I", data, base + 40)
        (s_offset,) = struct.unpack_from("<Q", data, shoff + link * shentsize + 24)
        for at in range(offset + 24, offset + size, 24):
            name, info, other, shndx = struct.unpack_from("<IBBH", data, at)
            if shndx == 0 or (info >> 4) not in (1, 2, 10) or (other & 3) not in (0, 3):
                continue
            end = data.index(b"\0", s_offset + name)
            names.add(bytes(data[s_offset + name : end]).decode("ascii", "replace"))
    return names


def member_symbols(remote: Remote, member: Member) -> set[str]:
    """Stream-decompress ``member`` only as far as its symbol tables need."""
    local = remote.read(member.header, 30)
    n, m = struct.unpack_from("<HH", local, 26)
    start = member.header + 30 + n + m
    inflate = zlib.decompressobj(-15) if member.method == 8 else None
    data = bytearray()
    needed: int | None = None
    for block in remote.stream(start, member.compressed):
        data += inflate.decompress(block) if inflate is not None else block
        needed = needed or _wanted_end(data)
        if needed is not None and len(data) >= needed:
            break
    return exported(data)


@dataclass(frozen=True)
class Wheel:
    version: Version
    filename: str
    url: str


def pick_wheels(index: str, only: str | None) -> list[Wheel]:
    """The newest final release of each torch minor from 1.8 on that has a Linux x86_64
    wheel, CPython 3.10's (3.9's before 1.11, 3.11's where 3.10 has none), without a build
    tag."""
    request = urllib.request.Request(
        index.rstrip("/") + "/torch/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=120) as answer:
        page = json.load(answer)
    best: dict[tuple[int, int], Wheel] = {}
    ranks: dict[tuple[int, int], tuple[Version, int]] = {}
    for file in page["files"]:
        parts = file["filename"][:-4].split("-")
        if not file["filename"].endswith(".whl") or len(parts) != 5:
            continue  # a build-tagged rebuild (torch-2.10.0-3-...) is skipped
        _, text, python, _abi, platform = parts
        if "x86_64" not in platform or "linux" not in platform:
            continue
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if version.is_prerelease or version.is_devrelease or version.local or version < OLDEST:
            continue
        preference = PYTHONS_NEW if version >= Version("1.11") else PYTHONS_OLD
        if python not in preference:
            continue
        key = (version.major, version.minor)
        if only and f"{version.major}.{version.minor}" != only:
            continue
        rank = (version, -preference.index(python))
        if key not in best or rank > ranks[key]:
            ranks[key] = rank
            url = file["url"]
            if not url.startswith("http"):
                url = urllib.parse.urljoin(index.rstrip("/") + "/torch/", url)
            best[key] = Wheel(version, file["filename"], url.split("#", 1)[0])
    return [best[k] for k in sorted(best)]


def release_symbols(wheel: Wheel, cache: Path) -> dict[str, str]:
    """symbol -> the library that exports it, for one wheel (cached as gzip'd text)."""
    saved = cache / f"torch-{wheel.version}.symbols.gz"
    if saved.exists():
        rows = gzip.decompress(saved.read_bytes()).decode().splitlines()
        pairs = (row.split("\t", 1) for row in rows if row)
        return {symbol: library for symbol, library in pairs}
    began = time.monotonic()
    remote = Remote(wheel.url)
    found: dict[str, str] = {}
    for member in members(remote):
        match = LIBRARIES.match(member.name)
        if match is None:
            continue
        library = SHORT.get(match.group(1), match.group(1).replace("torch_", ""))
        for symbol in member_symbols(remote, member):
            found.setdefault(symbol, library)
    text = "".join(f"{s}\t{lib}\n" for s, lib in sorted(found.items()))
    with tempfile.NamedTemporaryFile(dir=cache, delete=False) as out:
        out.write(gzip.compress(text.encode()))
    os.replace(out.name, saved)
    print(
        f"torch {wheel.version}: {len(found)} symbols, {remote.fetched / 1e6:.0f} MB fetched of "
        f"{remote.size / 1e6:.0f} MB, {time.monotonic() - began:.0f} s",
        file=sys.stderr,
    )
    return found


def spans(present: list[bool], releases: list[str]) -> str:
    """The runs of releases that have a symbol: ``A..L``, ``A..`` (to the newest read),
    ``..L`` (from the oldest read); comma-separated."""
    runs: list[str] = []
    start: int | None = None
    for i, has in enumerate([*present, False]):
        if has and start is None:
            start = i
        elif not has and start is not None:
            first = "" if start == 0 else releases[start]
            last = "" if i == len(releases) else releases[i - 1]
            runs.append(f"{first}..{last}")
            start = None
    return ",".join(runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-url", default=os.environ.get("PIP_INDEX_URL"))
    parser.add_argument(
        "--cache", type=Path, default=Path.home() / ".cache" / "envcheck" / "torch-symbols"
    )
    parser.add_argument("--only", help="one torch minor release (2.1): fetch it only")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if not args.index_url:
        print("gen_torch_symbols: no --index-url and no PIP_INDEX_URL", file=sys.stderr)
        return 2
    args.cache.mkdir(parents=True, exist_ok=True)
    wheels = pick_wheels(args.index_url, args.only)
    tables = {w.filename: release_symbols(w, args.cache) for w in wheels}
    if args.only:
        return 0
    releases = [str(w.version) for w in wheels]
    keyed: list[dict[str, str]] = []
    for wheel in wheels:
        by_key: dict[str, str] = {}
        for symbol, library in tables[wheel.filename].items():
            if _KEPT.match(symbol) and not _DROPPED.search(symbol):
                by_key.setdefault(neutral(symbol), library)
        keyed.append(by_key)
    ops = {m.group(1) for k in keyed for key in k if (m := _OP.match(key))}
    keyed = [{key: lib for key, lib in k.items() if not _per_op(key, ops)} for k in keyed]
    every = set.intersection(*(set(k) for k in keyed))
    changed = sorted(set().union(*keyed) - every)
    lines = [
        "# Generated by scripts/gen_torch_symbols.py from torch's release wheels (the package",
        "# index's Linux x86_64 wheels, CPython 3.10, 3.9 before 1.11): do not edit. The exported",
        "# dynamic symbols of torch/lib/libc10, libc10_cuda, libtorch_cpu, libtorch_cuda* and",
        "# libtorch_python, of the namespaces extensions call (c10::, at:: without the kernels the",
        "# dispatcher calls (at::native, at::cpu, at::meta, at::composite*, at::redispatch, ...),",
        "# torch::, caffe2::TypeMeta, c10d::, THP*), with the C++11 ABI's std::string as `Ss`.",
        "# `symbol<TAB>spans<TAB>library`: only symbols whose presence changed over the releases;",
        "# spans `A..L` (A through L), `A..` (A to the newest read), `..L` (the oldest read to L).",
        "# `=<hash>`: a symbol present in every release read (blake2b, 5 bytes, of its key).",
        "# Read lazily by TOR150 (envcheck/matrix/torch_symbols.py).",
        "releases\t" + " ".join(releases),
        "wheels\t" + " ".join(w.filename for w in wheels),
    ]
    for key in changed:
        present = [key in k for k in keyed]
        library = next(k[key] for k in keyed if key in k)
        lines.append(f"{key}\t{spans(present, releases)}\t{library}")
    lines += sorted(f"={short_hash(key)}" for key in every)
    args.out.write_text("\n".join(lines) + "\n")
    print(
        f"{args.out}: {len(changed)} changed, {len(every)} in every release, "
        f"{args.out.stat().st_size / 1e6:.1f} MB",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

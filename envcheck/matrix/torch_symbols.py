"""The generated table of torch's exported C++ symbols by release (generated/torch_symbols.tsv).

scripts/gen_torch_symbols.py reads the dynamic symbol tables of torch's libraries (libc10,
libc10_cuda, libtorch_cpu, libtorch_cuda*, libtorch_python) in one release wheel per torch
minor release and writes the symbols whose presence changed over those releases, each with
the spans of releases that export it, and a short hash of each symbol every release exports.
An extension's `undefined symbol` then names the torch releases it was built for (TOR150).
The file is large and only an undefined torch symbol needs it: it is read on first use, never
when the matrix loads.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

FILE = "torch_symbols.tsv"  # in a matrix directory's generated/ folder, beside python_names.toml
# the C++11 ABI's std::string as the Itanium ABI mangles it; the pre-C++11 ABI's is `Ss`
CXX11_STRING = "NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
CXX11_TAG = "B5cxx11"  # the abi_tag a function returning the C++11 std::string carries


def neutral(symbol: str) -> str:
    """``symbol`` with the C++11 ABI's std::string spelled as the old ABI's (``Ss``) and its
    abi_tag dropped: the key both ABIs' builds of one function share (where no substitution
    after the string shifts; such a symbol keeps one key per ABI)."""
    return symbol.replace(CXX11_STRING, "Ss").replace(CXX11_TAG, "")


def short_hash(key: str) -> str:
    """The table's hash of a symbol every release exports (blake2b, 5 bytes, hex). ``hashlib``
    is imported here, not with the module: it loads OpenSSL's libcrypto, and every `check`
    imports this module (TOR150's rule) while only an undefined torch symbol asks for a hash."""
    import hashlib

    return hashlib.blake2b(key.encode(), digest_size=5).hexdigest()


@dataclass(frozen=True)
class SymbolHistory:
    """Which of the releases read export one symbol: ``present`` (in order), all of
    ``releases`` when ``every``; ``library`` the one that exports it (c10, c10_cuda, cpu,
    cuda, python; None for a symbol in every release)."""

    symbol: str
    present: tuple[Version, ...]
    releases: tuple[Version, ...]
    library: str | None
    every: bool
    source: str

    @property
    def oldest(self) -> Version:
        return self.releases[0]

    @property
    def newest(self) -> Version:
        return self.releases[-1]

    def has(self, version: Version) -> bool | None:
        """Whether torch ``version`` exports the symbol, judged by its minor release (the
        table reads one wheel per minor); None for a minor release it did not read."""
        same = [r for r in self.releases if (r.major, r.minor) == (version.major, version.minor)]
        if not same:
            return None
        return same[0] in self.present


@dataclass(frozen=True)
class TorchSymbols:
    releases: tuple[Version, ...]
    wheels: tuple[str, ...]
    rows: dict[str, tuple[str, str]]  # key -> (spans, library)
    every: frozenset[str]  # short hashes

    def lookup(self, symbol: str) -> SymbolHistory | None:
        """The releases that export ``symbol`` (either C++ ABI's spelling); None when no
        release read exports it (a nightly's symbol, another library's, or a namespace the
        table leaves out)."""
        key = neutral(symbol)
        source = (
            f"the dynamic symbol tables of torch's release wheels {self.releases[0]} .. "
            f"{self.releases[-1]} (generated/{FILE}, scripts/gen_torch_symbols.py)"
        )
        row = self.rows.get(key)
        if row is not None:
            spans, library = row
            present = tuple(v for v in self.releases if _in_spans(v, spans, self.releases))
            return SymbolHistory(symbol, present, self.releases, library, False, source)
        if short_hash(key) in self.every:
            return SymbolHistory(symbol, self.releases, self.releases, None, True, source)
        return None


def _spans_read(spans: str) -> bool:
    """Whether each ``A..L`` span's bounds are versions (a row of an edited or damaged copy
    that is not is left out, not a failure later)."""
    for span in spans.split(","):
        first, dots, last = span.partition("..")
        if not dots:
            return False
        try:
            _ = [Version(v) for v in (first, last) if v]
        except InvalidVersion:
            return False
    return True


def _in_spans(version: Version, spans: str, releases: Sequence[Version]) -> bool:
    for span in spans.split(","):
        first, _, last = span.partition("..")
        low = Version(first) if first else releases[0]
        high = Version(last) if last else releases[-1]
        if low <= version <= high:
            return True
    return False


@functools.cache
def read(path: str) -> TorchSymbols | None:
    """The table in ``path``; None when the file is absent or unreadable (the rule then
    words its fix without the releases)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    releases: tuple[Version, ...] = ()
    wheels: tuple[str, ...] = ()
    rows: dict[str, tuple[str, str]] = {}
    every: set[str] = set()
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("="):
            every.add(line[1:])
            continue
        parts = line.split("\t")
        if parts[0] == "releases" and len(parts) == 2:
            try:
                releases = tuple(Version(v) for v in parts[1].split())
            except InvalidVersion:
                return None
        elif parts[0] == "wheels" and len(parts) == 2:
            wheels = tuple(parts[1].split())
        elif len(parts) == 3 and _spans_read(parts[1]):
            rows[parts[0]] = (parts[1], parts[2])
    if not releases:
        return None
    return TorchSymbols(releases, wheels, rows, frozenset(every))


def table_for(lazy_files: Sequence[str]) -> TorchSymbols | None:
    """The table of the matrix directory whose generated/ folder holds ``lazy_files`` (the
    matrix's lazily read tables, python_names.toml among them): the last directory that has
    one (an overlay's beats the built-in one)."""
    for name in reversed(lazy_files):
        candidate = Path(name).parent / FILE
        if candidate.is_file():
            return read(str(candidate))
    return None

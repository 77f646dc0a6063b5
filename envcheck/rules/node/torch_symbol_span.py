"""TOR150's reading of an undefined torch symbol against the releases that export it.

The generated table (matrices/generated/torch_symbols.tsv, read from torch's release wheels by
scripts/gen_torch_symbols.py) says which torch releases export a C++ symbol. An extension that
cannot resolve one was built against a torch that has it: where the symbol's releases are a
span (``2.1.2 .. 2.4.1``), the extension was built for a torch in that span, and the torch
that loads is outside it (newer: the symbol was removed or changed; older: it was added
later). The fix then names the torch that has it (the span's release nearest the installed
one, with the torchvision / torchaudio the matrix pairs with it) beside the rebuild. A symbol
every release exports (in either C++ ABI's spelling) is not a release's: a mangled name with
the C++11 ABI's std::string (``__cxx11``) or the old one's (``Ss``) says the extension was
built with the other ``_GLIBCXX_USE_CXX11_ABI`` than the torch that loads.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from packaging.utils import canonicalize_name
from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.torch_symbols import (
    CXX11_STRING,
    CXX11_TAG,
    SymbolHistory,
    TorchSymbols,
    table_for,
)
from envcheck.patterns import lazy

_OLD_STRING = lazy(r"(?<=[A-Za-z_])Ss(?=[A-Za-z_]|$)")  # `Ss` not inside a <len><name>
COMPANIONS = ("torchvision", "torchaudio")
# PyPI's torch wheels are built with the C++11 ABI from this release on (pre-C++11 before it)
PYPI_CXX11_FROM = Version("2.7")


@dataclass(frozen=True)
class SpanReading:
    """What the table says of one undefined torch symbol: ``cause`` (a clause to append to
    the cause sentence), ``pin`` (the requirements that bring a torch exporting it, empty
    when no release is the cause), ``side`` ("newer": the installed torch is past the span,
    "older": before it, "inside": the installed torch has it, "every": every release has
    it, "unknown": the installed torch is not stated)."""

    history: SymbolHistory
    cause: str
    pin: tuple[str, ...]
    side: str


def symbol_table(facts: Facts) -> TorchSymbols | None:
    return table_for(facts.matrix.python_names_files)


def abi_of(symbol: str) -> str | None:
    """ "cxx11" for a symbol spelled with the C++11 ABI's std::string, "old" for the
    pre-C++11 one's, None for a symbol without a std::string."""
    if CXX11_STRING in symbol or CXX11_TAG in symbol or "St7__cxx11" in symbol:
        return "cxx11"
    return "old" if _OLD_STRING.search(symbol) else None


def _span_text(history: SymbolHistory) -> str:
    runs: list[tuple[Version, Version]] = []
    for version in history.present:
        index = history.releases.index(version)
        if runs and history.releases.index(runs[-1][1]) == index - 1:
            runs[-1] = (runs[-1][0], version)
        else:
            runs.append((version, version))
    parts = []
    for first, last in runs:
        low = f"{first}" if first != history.oldest else f"{first} (or older)"
        high = f"{last}" if last != history.newest else f"{last} (or newer)"
        parts.append(low if first == last and low == high else f"{low} .. {high}")
    return ", ".join(parts)


def _pin(facts: Facts, release: Version) -> tuple[str, ...]:
    """``torch==<release>`` and the companions the matrix pairs with exactly that release."""
    wanted = [f"torch=={release}"]
    for name in COMPANIONS:
        paired = [
            c
            for c in facts.matrix.companions
            if canonicalize_name(c.package) == name and c.torch == release
        ]
        if paired:
            wanted.append(f"{name}=={max(paired, key=lambda c: c.version).version}")
    return tuple(wanted)


def span_reading(facts: Facts, symbol: str, readable: str | None = None) -> SpanReading | None:
    """The releases that export ``symbol`` against the installed torch; None without the
    table or when no release read exports it (a nightly's symbol, another build's)."""
    table = symbol_table(facts)
    history = table.lookup(symbol) if table is not None else None
    if history is None:
        return None
    torch: Version | None = None
    with contextlib.suppress(Skip):
        torch = facts.known_version("torch")
    name = readable or symbol
    read = f"torch {history.oldest} .. {history.newest}"
    if history.every:
        abi = abi_of(symbol)
        if abi is not None:
            spelled = "C++11 ABI's (std::__cxx11)" if abi == "cxx11" else "pre-C++11 ABI's (Ss)"
            cause = (
                f"; every torch release read ({read}) exports this function, so no torch "
                f"release is the difference: the symbol is the {spelled} spelling, and the "
                "extension was built with the other _GLIBCXX_USE_CXX11_ABI than the torch "
                "that loads"
            )
            return SpanReading(history, cause, (), "abi")
        cause = (
            f"; every torch release read ({read}) exports {name}, so which torch release "
            "is installed is not the difference (torch's libraries not loaded first, a "
            "source build of torch, or another torch copy found first may be)"
        )
        return SpanReading(history, cause, (), "every")
    span = _span_text(history)
    first, last = history.present[0], history.present[-1]
    if torch is None:
        side = "unknown"
        where = ""
    else:
        has = history.has(torch)
        if has:
            side, where = "inside", f"; torch {torch} exports it too"
        elif torch > last:
            side = "newer"
            where = f"; torch {torch} is newer than the last release that exports it ({last})"
        elif torch < first:
            side = "older"
            where = f"; torch {torch} is older than the first release that exports it ({first})"
        else:
            side = "gap"
            where = f"; torch {torch} does not export it"
    abi = abi_of(symbol)
    switch = next((v for v in history.releases if v >= PYPI_CXX11_FROM), None)
    if switch is not None and side in ("older", "newer"):
        # a span bounded by PyPI's switch to the C++11 ABI, not by a release: the other ABI's
        # spelling of the same function is in the releases on the other side of it
        before = history.releases[history.releases.index(switch) - 1]
        if (abi == "cxx11" and side == "older" and first == switch) or (
            abi == "old" and side == "newer" and last == before
        ):
            cause = (
                f": PyPI's torch wheels export it in this spelling in {span} only, the "
                f"{'C++11' if abi == 'cxx11' else 'pre-C++11'} ABI's side of PyPI's switch at "
                f"{PYPI_CXX11_FROM}{where}: the extension was built with the other "
                "_GLIBCXX_USE_CXX11_ABI than the torch that loads"
            )
            return SpanReading(history, cause, (), "abi")
    cause = (
        f": the torch releases that export it are {span}, so it was built for one of them{where}"
    )
    other_abi = torch is not None and (
        (abi == "cxx11" and torch < PYPI_CXX11_FROM) or (abi == "old" and torch >= PYPI_CXX11_FROM)
    )
    if side == "inside" and other_abi:  # the release has it, in PyPI's other ABI's spelling
        cause += (
            f" (the table keys both C++ ABIs' spellings as one), and PyPI's torch {torch} is "
            f"built with the {'pre-C++11' if abi == 'cxx11' else 'C++11'} ABI while the "
            f"symbol is the {'C++11' if abi == 'cxx11' else 'pre-C++11'} ABI's spelling: the "
            "extension was built with the other _GLIBCXX_USE_CXX11_ABI than the torch that loads"
        )
        return SpanReading(history, cause, (), "abi")
    if side == "inside":
        return SpanReading(history, cause, (), side)
    if side == "older" or (side == "gap" and torch is not None and torch < last):
        target = next(v for v in history.present if torch is None or v >= torch)
    else:
        target = last
    if abi is not None and side == "unknown":  # either ABI's build may be the one installed
        return SpanReading(history, cause, (), side)
    if target == history.newest and side in ("unknown", "gap"):
        return SpanReading(history, cause, (f"torch>={first}",), side)
    return SpanReading(history, cause, _pin(facts, target), side)

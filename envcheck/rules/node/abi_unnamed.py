"""TOR150's readings of loader lines that name no extension file of a package.

Two wordings of the same condition (a binary built against another torch than the one that
loads) name no `<site-packages>/<pkg>/<ext>.so`:

- a C++ program linked against libtorch: glibc's `<program>: symbol lookup error: <program>:
  undefined symbol: _ZN2at4_ops5randn4call...` names the executable itself (a libtorch
  application run against another libtorch than it was built with, or the libtorch of the other
  C++ ABI: pytorch/pytorch#97878, tensordot/syntaxdot#220 "Usually such errors come from
  downloading libtorch with the wrong C++ ABI");
- a wrapper that prints only dlerror()'s tail (`Error loading extension: undefined symbol:
  _ZN3c10...`): no file at all.

A torch symbol establishes the cause either way (only a binary built against another torch, or
another C++ ABI, misses a symbol of torch's own namespaces), so TOR150 is confirmed; the pairing
rules of named packages (TOR103 flash-attn, TOR104 the companions, VLM101 vLLM) are not: the line
does not name them (abi.py's names_other_package rules them out for a program, and leaves them
open for a line without a file).
"""

from __future__ import annotations

import contextlib

from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, manual, pip_install
from envcheck.rules.node.torch_symbol_span import span_reading

# the signatures whose line may name no package's file (abi.toml's generic loader lines)
GENERIC_LOADER_SIGNATURES = frozenset({"undefined-symbol", "undefined-symbol-torch"})

# the std::string of either C++ ABI in a mangled name: the C++11 one (std::__cxx11) or the old
# one (`Ss`, not inside a <length><name>)
_CXX11 = lazy(r"__cxx11|B5cxx11")
_OLD_STRING = lazy(r"(?<=[A-Za-z_])Ss(?=[A-Za-z_]|$)")


def pinned_torch_index(facts: Facts, pins: tuple[str, ...]) -> str | None:
    """torch's index for the node's CUDA variant (`+cu121` of the installed torch) when the
    pinned torch release is built for that variant too (the matrix's `[[torch]]` variants):
    threads reinstall torch from that index (`--index-url https://download.pytorch.org/whl/
    cu121`; the plain package index serves another CUDA's build). None otherwise: no index is
    named that the pinned release does not have."""
    pinned = next((p.split("==", 1)[1] for p in pins if p.startswith("torch==")), None)
    installed = facts.known_version("torch")
    variant = installed.local if installed is not None else None
    if pinned is None or not variant or not variant.startswith("cu"):
        return None
    try:
        release = facts.matrix.torch_release(Version(pinned))
    except InvalidVersion:
        return None
    if release is None or variant not in release.variants:
        return None
    return facts.matrix.torch_index_url(variant)


def unnamed_file(line: LogLine) -> bool:
    """A generic loader line that names neither an extension file nor a program."""
    return (
        line.signature in GENERIC_LOADER_SIGNATURES
        and not line.stated.get("library_path")
        and not line.stated.get("linked_program")
    )


def _torch_text(facts: Facts) -> str:
    version = None
    with contextlib.suppress(Skip):
        version = facts.known_version("torch")
    return f"torch {version}" if version is not None else "the installed torch"


def _abi_clause(symbol: str) -> tuple[str, str]:
    """The libtorch archive's C++ ABI the symbol's std::string spelling asks for, as a cause
    clause and the archive's name on the download page (libtorch-cxx11-abi-shared-with-deps
    vs libtorch-shared-with-deps)."""
    if _CXX11.search(symbol):
        return (
            " (the symbol passes the C++11 ABI's std::string: it was built against a "
            "cxx11-ABI libtorch)",
            "libtorch-cxx11-abi-shared-with-deps",
        )
    if _OLD_STRING.search(symbol):
        return (
            " (the symbol passes the pre-C++11 std::string, `Ss`: it was built against a "
            "pre-cxx11-ABI libtorch)",
            "libtorch-shared-with-deps (the pre-cxx11 ABI)",
        )
    return "", ""


def linked_program(
    facts: Facts, line: LogLine, program: str, symbol: str, readable: str | None
) -> Hit:
    """A program (not a shared library) that misses a torch symbol at start-up: it was linked
    against another libtorch than the one the loader finds now (LD_LIBRARY_PATH, the rpath, a
    pip torch's torch/lib), or one of the other C++ ABI."""
    shown = f"{symbol} ({readable})" if readable else symbol
    clause, archive = _abi_clause(symbol)
    reading = span_reading(facts, symbol, readable)
    cause = (
        f"the program {program} (line {line.line}) cannot resolve {shown}, a symbol of "
        "libtorch: it was built against another libtorch (release or C++ ABI) than the one "
        f"the loader finds{clause}" + (reading.cause if reading is not None else "")
    )
    summary = (
        f"Run {program} against the libtorch it was built with: put that libtorch's lib/ first "
        "(export LD_LIBRARY_PATH=<libtorch>/lib:$LD_LIBRARY_PATH; `ldd` shows which "
        "libtorch_cpu.so / libc10.so it binds), or rebuild it against the libtorch it runs "
        "with: rm -rf build/ && cmake -DCMAKE_PREFIX_PATH=<that libtorch> .. && make"
    )
    if archive:
        summary += f"; a downloaded libtorch must be the {archive} archive"
    actions = [
        manual(f"ldd {program} | grep -E 'libtorch|libc10'  (which libtorch it binds)"),
        manual("export LD_LIBRARY_PATH=<the libtorch it was built with>/lib:$LD_LIBRARY_PATH"),
        manual("rm -rf build/ && cmake -DCMAKE_PREFIX_PATH=<the libtorch it runs with> .. && make"),
    ]
    return Hit(
        cause,
        evidence={"line": line.line, "program": program, "symbol": symbol, "demangled": readable},
        fix=fix(summary, "manual", *actions),
    )


def unnamed_extension(facts: Facts, line: LogLine, symbol: str, readable: str | None) -> Hit:
    """A loader line that names no file but a torch symbol: some extension of the import that
    failed was built against another torch. The fix names the import's package by what the
    traceback shows (the line does not), then the two ways out every thread of the family
    takes: its build for the installed torch, or the torch release that exports the symbol."""
    shown = f"{symbol} ({readable})" if readable else symbol
    torch = _torch_text(facts)
    reading = span_reading(facts, symbol, readable)
    pins = reading.pin if reading is not None else ()
    summary = (
        "Find the extension (the traceback's import above this line names its package; "
        "`pip show -f <package> | grep '\\.so'`) and install its build made for "
        f"{torch} (its wheel for that torch and CUDA), or rebuild it against the installed "
        "torch: pip install --no-build-isolation --no-cache-dir --force-reinstall <package>"
    )
    actions = [
        manual("pip install --no-build-isolation --no-cache-dir --force-reinstall <package>"),
    ]
    if pins:
        index = pinned_torch_index(facts, pins)
        summary += (
            "; or install a torch release that exports the symbol: pip install "
            + " ".join(pins)
            + (f" --index-url {index}" if index else "")
        )
        actions.append(pip_install(*pins, index_url=index))
    return Hit(
        f"an extension (line {line.line} does not name its file) cannot resolve {shown}, a "
        f"symbol of torch itself: it was built against another torch than {torch}"
        + (reading.cause if reading is not None else ""),
        evidence={"line": line.line, "symbol": symbol, "demangled": readable},
        fix=fix(summary, "manual", *actions),
    )

"""CUD192: an extension's source uses torch C++ API that the installed torch removed (THC's
headers and identifiers, gone in torch 1.11). The API, the release that removed it and the last
release with it are data (matrices/packages/torch_cpp_api.toml, ``[[removed_symbol]]`` with
``removed_by = "torch"``); the compiler's line names the API."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import Matrix
from envcheck.matrix.schema import RemovedSymbol
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install

# the API a compiler error names: a header path ('THC/THC.h', 'THC/THCGeneral.h') or an
# identifier of the same library ('THCState', 'THCudaCheck')
_HEADER = lazy(r"(?P<header>(?:THC|TH)/[A-Za-z_]+\.h)")
_IDENTIFIER = lazy(r"(?P<name>\bTHC[A-Za-z_]*|\bAT_CHECK\b)")


def _entry(matrix: Matrix, text: str) -> tuple[str, RemovedSymbol] | None:
    """The removed torch API the line names, with its table entry: the header itself, else the
    library's umbrella header for a header or identifier of the same library (THC/...)."""
    named = _HEADER.search(text) or _IDENTIFIER.search(text)
    if named is None:
        return None
    api = named.group(0)
    entry = matrix.removed_symbol(api)
    if entry is None and api.startswith("TH"):
        library = api.split("/", 1)[0] if "/" in api else "THC"
        entry = matrix.removed_symbol(f"{library}/{library}.h")
    if entry is None or entry.removed_by != "torch":
        return None
    return api, entry


@rule("CUD192", "extension-uses-removed-torch-api", Severity.ERROR)
def removed_torch_api(facts: Facts) -> Iterable[Hit]:
    """An extension's source uses torch C++ API the installed torch removed (THC, gone in 1.11; AT_CHECK, 1.5)

    ## What it checks
    A compiler error of a CUDA extension build that names torch C++ API a torch release removed
    (`matrices/packages/torch_cpp_api.toml`): `fatal error: THC/THC.h: No such file or directory`,
    `'THCState' was not declared in this scope`, `identifier "THCudaCheck" is undefined`; the
    AT_CHECK macro torch 1.5 removed (`'AT_CHECK' was not declared in this scope`, MSVC's
    `'AT_CHECK': identifier not found`), ported to TORCH_CHECK. Only a build log states it.

    ## Why it matters
    torch 1.11 removed THC, the legacy CUDA tensor library; extensions written for torch 1.10 or
    older (RoIAlign / DCN / pointnet2 ops of research repositories, old mmcv, apex) include
    `THC/THC.h` and stop compiling under any newer torch, whatever the CUDA toolkit or gcc.

    ## Example
    `src/roi_align_cuda.cpp:1:10: fatal error: THC/THC.h: No such file or directory` building a
    detection repository's ops under torch 1.13.

    ## Fix
    Port the source to ATen / c10 (replace `#include <THC/THC.h>` with `#include
    <ATen/cuda/CUDAContext.h>`, delete `extern THCState *state;`, `THCudaCheck` ->
    `C10_CUDA_CHECK`, `THCCeilDiv` -> `at::ceil_div`), or use a release of the package that
    supports the installed torch; or build against a torch that still has the API (`pip install
    "torch<1.11"`, with the torchvision of that release).

    ## References
    - https://github.com/pytorch/pytorch/releases/tag/v1.11.0
    - https://github.com/open-mmlab/OpenPCDet/issues/900
    - https://github.com/MVIG-SJTU/AlphAction/issues/84
    - https://github.com/pytorch/pytorch/issues/36581 (AT_CHECK -> TORCH_CHECK)
    """
    raise Skip("only a build log states the torch API an extension's source uses", "log.build")


@from_log("CUD192")
def removed_torch_api_in_log(facts: Facts, line: LogLine) -> Hit:
    """The compiler names the removed API; the entry gives the release that removed it and the
    last that has it; the installed torch (node or log) is named where known."""
    found = _entry(facts.matrix, line.text)
    if found is None:
        raise Skip(f"line {line.line} names no torch API the matrix lists as removed")
    api, entry = found
    torch = line.stated.get("torch_version")
    if torch is None:
        with contextlib.suppress(Skip):
            installed = facts.version("torch")
            torch = str(installed) if installed is not None else None
    have = f" (torch {torch} is installed)" if torch else ""
    last = entry.last or f"a release before {entry.removed_in}"
    library = entry.library or api
    package = line.stated.get("pip_build") or line.stated.get("extension")
    newer = f"a release of {package}" if package else "a release of the package"
    if not api.startswith("TH"):
        return _macro_hit(line, api, entry, have, newer)
    return Hit(
        f"the extension's source uses {api} ({library}), which torch {entry.removed_in} "
        f"removed{have}: it compiles only against torch {last} or older (line {line.line})",
        evidence={
            "line": line.line,
            "api": api,
            "removed_in": str(entry.removed_in),
            "last": entry.last,
            "torch": torch,
        },
        fix=fix(
            f"Port the extension's source to ATen / c10 (replace #include <THC/THC.h> with "
            f"#include <ATen/cuda/CUDAContext.h>, delete extern THCState *state;, THCudaCheck "
            f"-> C10_CUDA_CHECK, THCCeilDiv -> at::ceil_div), or use {newer} that supports torch "
            f"{entry.removed_in} or newer (git pull its current source); or build it against "
            f"torch {last}: pip install 'torch<{entry.removed_in}' with the torchvision of that "
            "release, then rebuild",
            "manual",
            manual(
                "sed -i 's|#include <THC/THC.h>|#include <ATen/cuda/CUDAContext.h>|' <the "
                "extension's .cpp/.cu/.h files>, then delete extern THCState *state; and "
                "replace THCudaCheck with C10_CUDA_CHECK"
            ),
            pip_install(f"torch<{entry.removed_in}"),
        ),
    )


def _macro_hit(line: LogLine, api: str, entry: RemovedSymbol, have: str, newer: str) -> Hit:
    """Removed API other than THC (a macro such as AT_CHECK): the port is the entry's note."""
    last = entry.last or f"a release before {entry.removed_in}"
    port = entry.note or f"replace {api} with its successor"
    return Hit(
        f"the extension's source uses {api} ({entry.library or api}), which torch "
        f"{entry.removed_in} removed{have}: it compiles only against torch {last} or older "
        f"(line {line.line})",
        evidence={"line": line.line, "api": api, "removed_in": str(entry.removed_in)},
        fix=fix(
            f"Port the extension's source: {port}; or use {newer} that supports torch "
            f"{entry.removed_in} or newer; or build it against torch {last}: pip install "
            f"'torch<{entry.removed_in}' with the torchvision of that release, then rebuild",
            "manual",
            manual(f"grep -rln '{api}' <the extension's sources>  # then port each use"),
            pip_install(f"torch<{entry.removed_in}"),
        ),
    )

"""SYS165: a source build's vendored headers missing, CUTLASS and CuTe above all (the signature
`vendored-cutlass-headers-missing` in matrices/signatures/build.toml), and the other header-only
libraries projects carry as git submodules, GLM and fmt, or any header under a project's own
third_party/, dependencies/ or submodules/ tree (`vendored-submodule-header-missing`). Neither
the CUDA toolkit nor a compiler ships them, so a checkout without its submodules builds until
the first file that includes one."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

_SUBMODULES = "git submodule update --init --recursive"


@rule("SYS165", "vendored-headers-missing", Severity.ERROR)
def vendored_headers_missing(facts: Facts) -> Iterable[Hit]:
    """A source build cannot find a vendored library's headers (CUTLASS, GLM, fmt): the git submodules are not checked out

    ## What it checks
    Only a build log says it: a compiler's missing-include error for a CUTLASS or CuTe header,
    `fatal error: cutlass/cutlass.h: No such file or directory` (GCC), `fatal error C1083:
    Cannot open include file: 'cutlass/cutlass.h'` (MSVC), `'cute/tensor.hpp' file not found`
    (clang), `cannot open source file "cutlass/numeric_types.h"` (nvcc's front end); the same
    for another header-only library projects vendor as a submodule (GLM's `glm/glm.hpp` in
    gsplat and the Gaussian-splatting rasterizers, fmt's `fmt/core.h` in tiny-cuda-nn) and for
    any header the compiler looks for under the project's own `third_party/`,
    `dependencies/` or `submodules/` tree.

    ## Why it matters
    CUTLASS is header-only and ships with neither the CUDA toolkit nor pip's nvidia wheels:
    flash-attention, tiny-cuda-nn, instant-ngp, FasterTransformer and others vendor it as a git
    submodule. `git clone` without `--recursive`, `git submodule update` without `--init`, or a
    source archive downloaded from GitHub leaves that directory empty; the build then fails at
    the first file that includes it, after everything else compiled.

    ## Example
    `pip install .` in a flash-attention clone made without `--recursive`:
    `csrc/flash_attn/src/flash.h:10:10: fatal error: cute/tensor.hpp: No such file or directory`.

    ## Fix
    In the source tree: `git submodule update --init --recursive` (or clone again with
    `git clone --recursive`), then rebuild. A downloaded source archive has no submodules: clone
    the repository instead. Where a prebuilt wheel exists for the torch and CUDA in use, it
    needs no build at all.

    ## References
    - https://github.com/NVIDIA/cutlass
    - https://github.com/Dao-AILab/flash-attention/blob/main/.gitmodules
    - https://github.com/NVlabs/tiny-cuda-nn/blob/master/.gitmodules
    - https://github.com/nerfstudio-project/gsplat/blob/main/.gitmodules
    - https://git-scm.com/docs/git-submodule
    """
    raise Skip("only a build log states a missing vendored header", "log.build")


@from_log("SYS165")
def vendored_headers_missing_in_log(facts: Facts, line: LogLine) -> Hit:
    """The header the line names; the fix is the same for every project that vendors it."""
    header = line.stated.get("missing_header") or "a CUTLASS header"
    library = _library(header)
    return Hit(
        f"the compiler cannot find {header} (line {line.line}): {library} is the project's git "
        "submodule, and this source tree was checked out without it",
        evidence={"line": line.line, "header": header},
        fix=fix(
            f"Fetch the submodules in the source tree: {_SUBMODULES} (or git clone "
            "--recursive; a downloaded source archive has none), then rebuild",
            "manual",
            manual(_SUBMODULES),
        ),
    )


def _library(header: str) -> str:
    """The vendored library a missing header belongs to, as the hit names it."""
    top = header.split("/", 1)[0]
    names = {"cutlass": "CUTLASS", "cute": "CUTLASS", "glm": "GLM", "fmt": "fmt", "cmrc": "CMRC"}
    if top in names:
        return names[top]
    parts = header.split("/")
    if len(parts) > 2:  # third_party/<library>/...
        return f"{parts[0]}/{parts[1]}"
    return "the header's library"

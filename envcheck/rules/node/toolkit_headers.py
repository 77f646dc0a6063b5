"""CUD110 and SYS152 from a compiler's missing-include error for a CUDA header that only newer
toolkits ship (the signature `cuda-header-newer-than-toolkit`, matrices/signatures/build.toml;
the releases in matrices/cuda/header_releases.toml: cuda_fp8.h 11.8, cuda_fp4.h and cuda_fp6.h
12.8, cuda_bf16.h 11.0).

The compile found the toolkit's other headers (cuda_runtime.h comes first in every CUDA
source), so a toolkit is there: nvcc's release decides which. Older than the header: the
toolkit is (CUD110), and no toolkit missing is ruled out. As new or newer: the include path
reads another, older toolkit's headers first (an -I/usr/local/cuda/include of another release,
CUDA_HOME pointing elsewhere than the nvcc that ran), SYS152's reading. Not stated: the toolkit's
age is the reading the line supports, and SYS152 stays open."""

from __future__ import annotations

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NodeDecides
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.device_functions import toolkit_hit
from envcheck.rules.node.stated_toolkits import stated_toolkit

SIGNATURE = "cuda-header-newer-than-toolkit"
_HEADER = lazy(r"(cuda_fp[0-9]\.hp?p?|cuda_bf16\.hp?p?)")


def header(line: LogLine) -> str:
    found = _HEADER.search(line.text)
    return found.group(1) if found else (line.stated.get("missing_header") or "")


def header_since(facts: Facts, line: LogLine) -> tuple[str, Version] | None:
    """The header the line names and the first CUDA release that ships it."""
    name = header(line)
    value = facts.matrix.constant(f"cuda.header_since.{name}")
    return (name, Version(f"{value:.1f}")) if value is not None else None


def older_toolkit(facts: Facts, line: LogLine) -> Hit | None:
    """CUD110: the toolkit predates the header (nvcc's release stated, or none stated)."""
    known = header_since(facts, line)
    if known is None:
        return None
    name, since = known
    nvcc = stated_toolkit(facts, line)
    if nvcc is not None and nvcc >= since:
        return None
    why = (
        f"nvcc is CUDA {nvcc}, and {name} first ships with CUDA {since}"
        if nvcc is not None
        else f"{name} first ships with CUDA {since}, and the compile found the toolkit's other "
        "headers, so the toolkit it reads predates it"
    )
    return toolkit_hit(facts, line, name, since, why)


def other_toolkit_headers(facts: Facts, line: LogLine) -> Hit | None:
    """SYS152: nvcc is new enough, so the include path reads an older toolkit's headers."""
    known = header_since(facts, line)
    if known is None:
        return None
    name, since = known
    nvcc = stated_toolkit(facts, line)
    if nvcc is None:
        raise NodeDecides(
            f"line {line.line}: {name} first ships with CUDA {since}; without nvcc's release, "
            "an older toolkit and an older toolkit's include directory read first look alike"
        )
    if nvcc < since:
        return None
    home = f"/usr/local/cuda-{nvcc}"
    return Hit(
        f"the compile cannot find {name} (line {line.line}) although nvcc is CUDA {nvcc}, which "
        f"ships it (from CUDA {since}): the include path reads an older toolkit's headers first "
        "(an -I of another CUDA's include/, CUDA_HOME pointing at another toolkit than the nvcc "
        "that ran)",
        evidence={"line": line.line, "header": name, "nvcc": str(nvcc)},
        fix=fix(
            f"Point the build at the toolkit of the nvcc that runs: export CUDA_HOME={home} "
            f"PATH={home}/bin:$PATH, and drop older CUDA include directories from CPATH, "
            "CPLUS_INCLUDE_PATH and the build's -I flags (ls $CUDA_HOME/include/" + name + ")",
            "manual",
            manual(f"export CUDA_HOME={home} PATH={home}/bin:$PATH"),
            manual("echo $CPATH $CPLUS_INCLUDE_PATH  # no other CUDA's include/ here"),
        ),
    )

"""SYS166: a CUDA build that cannot find CUB's headers (the signature `cub-headers-missing` in
matrices/signatures/build.toml). CUB ships with the CUDA toolkit only from CUDA 11.0 on; before
that, and in projects that still carry it, it is a separate checkout (a git submodule such as
mxnet's 3rdparty/cub or a download the build script makes). So the toolkit's release decides the
fix: below 11.0 a newer toolkit (or CUB itself on the include path), from 11.0 on the toolkit's
own include directory, and in a project that vendors CUB, its submodule checked out."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# CUDA 11.0's toolkit is the first with CUB in include/cub (Thrust's config.h, from that release
# on: 'CUB is now included in the CUDA Toolkit, so you no longer need to use your own checkout
# of CUB').
_FIRST_CUDA_WITH_CUB = (11, 0)
_SUBMODULES = "git submodule update --init --recursive"
_NEWER_TOOLKIT = (
    "install the CUDA 11.0 toolkit or newer (on a Jetson: a JetPack release with CUDA 11 or "
    "newer) and build with it: export CUDA_HOME=/usr/local/cuda-<11.x or newer> "
    "PATH=$CUDA_HOME/bin:$PATH"
)
_OWN_CUB = (
    "or put a CUB release that supports that toolkit (https://github.com/NVIDIA/cub) on the "
    "include path (-I<cub checkout>, CUB_HOME for builds that read it)"
)


def _release(text: str | None) -> tuple[int, int] | None:
    """`10.2` -> (10, 2); None for anything else."""
    if not text:
        return None
    major, _, minor = text.partition(".")
    if not major.isdigit():
        return None
    return int(major), int(minor) if minor.isdigit() else 0


@rule("SYS166", "cub-headers-missing", Severity.ERROR)
def cub_headers_missing(facts: Facts) -> Iterable[Hit]:
    """A CUDA build cannot find CUB's headers: the toolkit predates CUB (before CUDA 11.0) or the project's CUB checkout is missing

    ## What it checks
    Only a build log says it: a compiler's missing-include error for a CUB header,
    `fatal error: cub/cub.cuh: No such file or directory` (GCC, also `cub/block/...`,
    `cub/device/...`), `'cub/cub.cuh' file not found` (clang), `Cannot open include file:
    'cub/cub.cuh'` (MSVC), `cannot open source file "cub/cub.cuh"` (nvcc's front end). Where the
    log states the toolkit's release (its nvcc path or version banner), the fix follows it.

    ## Why it matters
    CUB has shipped inside the CUDA toolkit (include/cub) only since CUDA 11.0. A project that
    includes it builds against CUDA 11+ as it is, but under CUDA 10.x or older (JetPack 4 on a
    Jetson) there is no CUB unless the project brings its own: a git submodule (mxnet's
    3rdparty/cub) or a download in its build script. Either way the build stops at the first
    file that includes CUB, after everything else compiled, and installing a toolkit of the
    same release does not help.

    ## Example
    Building xgboost with `-DUSE_CUDA=ON -DBUILD_WITH_CUDA_CUB=ON` under CUDA 10.2: `fatal
    error: cub/cub.cuh: No such file or directory`.

    ## Fix
    Under CUDA 10.x or older: build with the CUDA 11.0 toolkit or newer (a JetPack with CUDA
    11+ on a Jetson), or put a CUB release that supports the toolkit on the include path. In a
    project that vendors CUB as a git submodule: `git submodule update --init --recursive`
    (a downloaded source archive has none: clone the repository). Under CUDA 11+: build with
    the toolkit's own include directory (CUDA_HOME pointing at the full toolkit; a conda
    environment's partial toolkit lacks CUB: `conda install -c nvidia cuda-cccl`).

    ## References
    - https://github.com/NVIDIA/cub (README: CUB is included in the NVIDIA HPC SDK and the
      CUDA Toolkit)
    - https://github.com/NVIDIA/thrust/blob/main/thrust/system/cuda/config.h ('CUB is now
      included in the CUDA Toolkit, so you no longer need to use your own checkout of CUB')
    - https://github.com/apache/mxnet/pull/18799 (CUB submodule kept only for CUDA < 11)
    - https://github.com/facebookresearch/pytorch3d/blob/main/INSTALL.md ('Starting from CUDA
      11, CUB is part of CUDA'; an earlier CUDA needs CUB_HOME)
    - https://git-scm.com/docs/git-submodule
    """
    raise Skip("only a build log states a missing CUB header", "log.build")


@from_log("SYS166")
def cub_headers_missing_in_log(facts: Facts, line: LogLine) -> Hit:
    """The fix by the toolkit release the log states: below 11.0 a newer toolkit first, from
    11.0 on the toolkit's include directory; unknown, both, with the submodule."""
    header = line.stated.get("missing_header") or "a CUB header"
    stated = line.stated.get("nvcc_version")
    release = _release(stated)
    where = f"the compiler cannot find {header} (line {line.line})"
    if release is not None and release < _FIRST_CUDA_WITH_CUB:
        message = (
            f"{where}: the CUDA toolkit here is {stated}, and CUB ships with the toolkit only "
            "from CUDA 11.0 on"
        )
        summary = (
            f"CUB is not in CUDA {stated}: {_NEWER_TOOLKIT}; {_OWN_CUB}; in a project that "
            f"vendors CUB as a git submodule: {_SUBMODULES}"
        )
        actions = (manual("install the CUDA 11.0 toolkit or newer"), manual(_SUBMODULES))
    elif release is not None:
        message = (
            f"{where}: CUDA {stated} ships CUB in its include directory, which this compile "
            "does not see (CUDA_HOME at a partial toolkit) or the project's own CUB checkout is "
            "missing"
        )
        summary = (
            "Build with the full toolkit's include directory (export CUDA_HOME=<the CUDA "
            f"{stated} toolkit>; a conda environment's partial toolkit lacks CUB: conda "
            f"install -c nvidia cuda-cccl); in a project that vendors CUB: {_SUBMODULES}"
        )
        actions = (manual(_SUBMODULES), manual("conda install -c nvidia cuda-cccl"))
    else:
        message = (
            f"{where}: CUB ships with the CUDA toolkit only from CUDA 11.0 on; an older "
            "toolkit, or a project whose own CUB checkout (git submodule) is missing, has none"
        )
        summary = (
            f"Under CUDA 10.x or older (nvcc --version), CUB is not in the toolkit: "
            f"{_NEWER_TOOLKIT}; {_OWN_CUB}. In a project that vendors CUB as a git submodule: "
            f"{_SUBMODULES} (a downloaded source archive has none)"
        )
        actions = (manual("install the CUDA 11.0 toolkit or newer"), manual(_SUBMODULES))
    return Hit(
        message,
        evidence={"line": line.line, "header": header, "nvcc": stated or ""},
        fix=fix(summary, "manual", *actions),
    )


@rule("SYS167", "cub-version-mismatch", Severity.ERROR)
def cub_version_mismatch(facts: Facts) -> Iterable[Hit]:
    """A separate CUB checkout on the include path shadows the CUDA toolkit's own, and the toolkit's Thrust refuses it

    ## What it checks
    Only a build log says it: Thrust's version check in the toolkit's
    `thrust/system/cuda/config.h`, `#error The version of CUB in your include path is not
    compatible with this release of Thrust. CUB is now included in the CUDA Toolkit` (GCC's
    `error: #error`, MSVC's `fatal error C1189`), and its first wording, `Thrust version must
    match cub version exactly`.

    ## Why it matters
    From CUDA 11.0 on the toolkit ships Thrust and CUB of one release and Thrust checks that the
    CUB it includes is that release. A CUB downloaded for an older toolkit and put first on the
    include path (CUB_HOME, which pytorch3d's and other setup.py files add, a CUB submodule, a
    copy under /usr/include or the toolkit's include folder) fails that check in every file
    that includes Thrust.

    ## Example
    pytorch3d built on Windows with CUDA 11.7 and CUB_HOME set to a CUB 1.17 download:
    `config.h(79): fatal error C1189: #error:  The version of CUB in your include path is not
    compatible with this release of Thrust.`

    ## Fix
    With CUDA 11.0 or newer, build with the toolkit's own CUB: unset CUB_HOME (Windows: `set
    CUB_HOME=`), drop the separate CUB from the include path, restore the toolkit's include
    folder if CUB was copied over it, and rebuild from a clean build directory. Where the
    project needs its own CUB release, compile with `-DTHRUST_IGNORE_CUB_VERSION_CHECK` (the
    escape Thrust's message names).

    ## References
    - https://github.com/NVIDIA/thrust/blob/main/thrust/system/cuda/config.h (the check and
      THRUST_IGNORE_CUB_VERSION_CHECK)
    - https://github.com/NVIDIA/thrust/pull/1082 (the check, in its first wording)
    - https://github.com/facebookresearch/pytorch3d/blob/main/INSTALL.md (CUB_HOME only for
      CUDA before 11)
    """
    raise Skip("only a build log states Thrust's CUB version check", "log.build")


@from_log("SYS167")
def cub_version_mismatch_in_log(facts: Facts, line: LogLine) -> Hit:
    """The toolkit release from the line's path where it names one; the fix is the same."""
    stated = line.stated.get("nvcc_version")
    toolkit = f"CUDA {stated}" if stated else "the CUDA toolkit (11.0 or newer)"
    unset = "unset CUB_HOME (Windows: set CUB_HOME=)"
    return Hit(
        f"{toolkit}'s Thrust refused the CUB on the include path (line {line.line}): a separate "
        "CUB checkout (CUB_HOME, a submodule, a copy over the toolkit's headers) shadows the "
        "one the toolkit ships",
        evidence={"line": line.line, "nvcc": stated or ""},
        fix=fix(
            f"Build with the toolkit's own CUB: {unset}, drop the separate CUB from the include "
            "path (and restore the toolkit's include folder if CUB was copied over it), then "
            "rebuild from a clean build directory; where the project needs its own CUB release, "
            "compile with -DTHRUST_IGNORE_CUB_VERSION_CHECK",
            "manual",
            manual(unset),
            manual("or compile with -DTHRUST_IGNORE_CUB_VERSION_CHECK"),
        ),
    )

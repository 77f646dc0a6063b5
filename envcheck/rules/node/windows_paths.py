"""SYS251: Windows' 260-character path limit (MAX_PATH) in an install or source build (the
signature `windows-path-too-long` in matrices/signatures/windows.toml). Each tool has its own
way past it: git for Windows its `core.longpaths` setting, pip (Python) the system's
LongPathsEnabled, while ninja and MSVC's cl.exe are not long-path aware at all: for them the
build has to run from a short directory (pip's temporary build directory under
%LOCALAPPDATA%\\Temp is long, and torch's extension builder repeats the source path under
build\\temp...\\Release)."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# git for Windows' release notes (Known issues): core.longPaths
GIT_LONGPATHS = "git config --global core.longpaths true"
# pip's documentation, https://pip.pypa.io/warnings/enable-long-paths (an administrator's
# PowerShell; new processes see it)
REGISTRY = (
    'New-ItemProperty -Path "HKLM:\\SYSTEM\\CurrentControlSet\\Control\\FileSystem" '
    '-Name "LongPathsEnabled" -Value 1 -PropertyType DWORD -Force'
)
SHORT_BUILD = (
    "git clone --recursive <the repository> C:\\src\\<pkg> && cd C:\\src\\<pkg> && "
    "pip install . --no-build-isolation"
)
SHORT_TEMP = "set TMP=C:\\t & set TEMP=C:\\t  (mkdir C:\\t first; pip builds under %TEMP%)"


@rule("SYS251", "windows-path-limit", Severity.ERROR)
def windows_path_limit(facts: Facts) -> Iterable[Hit]:
    """An install or build on Windows hit the 260-character path limit (git, pip, ninja, cl.exe)

    ## What it checks
    Only a log says it: git for Windows' `error: unable to create file <path>: Filename too
    long` (a clone or `git submodule update` of a deep tree, often under pip's
    `pip-install-*` directory), pip's `HINT: This error might have occurred since this
    system does not have Windows Long Path support enabled`, ninja's `Stat(<object>):
    Filename longer than 260 characters`, and MSVC's `fatal error C1083: Cannot open
    compiler generated file: '': Invalid argument` (also in MSVC's zh_CN words).

    ## Why it matters
    Windows limits a path to 260 characters unless both the system (LongPathsEnabled) and the
    program opt in. pip builds a package from `%LOCALAPPDATA%\\Temp\\pip-install-<id>\\<pkg>_
    <uuid>`, and torch's extension builder puts each object under `build\\temp.win-amd64-
    <py>\\Release\\` followed by the source's own absolute path: xformers', flash-attn's and
    other CUDA extensions' deep trees (CUTLASS, composable_kernel) pass the limit there.
    git and pip can be told to go past it; ninja and cl.exe cannot, so the registry setting
    alone does not fix a build.

    ## Example
    `pip install -v -U git+https://github.com/facebookresearch/xformers.git@main` on Windows:
    `error: unable to create file docs/classcutlass_1_1epilogue_....html: Filename too long`.

    ## Fix
    For git: `git config --global core.longpaths true`; for pip: set LongPathsEnabled (an
    administrator's PowerShell: `New-ItemProperty -Path
    "HKLM:\\SYSTEM\\CurrentControlSet\\Control\\FileSystem" -Name "LongPathsEnabled" -Value 1
    -PropertyType DWORD -Force`) and open a new shell; for a build (ninja, cl.exe): clone to a
    short path (`C:\\src\\<pkg>`) and `pip install .` there, or point TMP/TEMP at a short
    directory; or install the project's prebuilt wheel where one exists.

    ## References
    - https://github.com/git-for-windows/build-extra/blob/main/installer/ReleaseNotes.md
    - https://pip.pypa.io/warnings/enable-long-paths
    - https://learn.microsoft.com/en-us/windows/win32/fileio/maximum-file-path-limitation
    - https://github.com/facebookresearch/xformers/issues/531
    - https://github.com/facebookresearch/xformers/issues/365
    """
    raise Skip("only a Windows install or build log states the path limit", "log.build")


@from_log("SYS251")
def windows_path_limit_in_log(facts: Facts, line: LogLine) -> Hit:
    """The tool the line names decides the first step: git's setting, pip's registry key, or a
    short build directory for ninja and cl.exe (which no setting makes long-path aware)."""
    text = line.text
    if "Filename too long" in text:
        tool = "git for Windows refuses a path over 260 characters (core.longpaths is off)"
        summary = (
            f"Let git check out long paths: {GIT_LONGPATHS}, then run the install again; a "
            "build of the tree still wants a short path: clone it to C:\\src\\<pkg> (git clone "
            "--recursive) and pip install . there"
        )
        steps = [manual(GIT_LONGPATHS), manual(SHORT_BUILD)]
    elif "Long Path support" in text:
        tool = "pip could not write a path over 260 characters (LongPathsEnabled is off)"
        summary = (
            "Enable long paths in Windows (an administrator's PowerShell: "
            f"{REGISTRY}), open a new shell and run pip again; or install into an environment "
            "with a short path (python -m venv C:\\venv)"
        )
        steps = [manual(REGISTRY), manual("python -m venv C:\\venv  (a short path)")]
    else:
        tool = (
            "the build's ninja or MSVC compiler met an object path over 260 characters, and "
            "neither is long-path aware (LongPathsEnabled does not help them)"
        )
        summary = (
            "Build from a short path: clone the repository to C:\\src\\<pkg> (git clone "
            "--recursive) and pip install . --no-build-isolation there, or set TMP and TEMP "
            "to a short directory (C:\\t) before pip install; or install a prebuilt wheel of "
            "the package where one exists"
        )
        steps = [manual(SHORT_BUILD), manual(SHORT_TEMP)]
    return Hit(
        f"Windows' 260-character path limit (line {line.line}): {tool}",
        evidence={"line": line.line},
        fix=fix(summary, "manual", *steps),
    )

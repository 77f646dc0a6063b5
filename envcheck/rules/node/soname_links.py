"""SYS225: ldconfig found a library's SONAME name that is a copy of the library, not a link to
it (`ldconfig: /usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link`). WSL 2's driver
directory is the case threads show: the Windows driver ships libcuda.so, libcuda.so.1 and
libcuda.so.1.1 as three files in C:\\Windows\\System32\\lxss\\lib."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

_WSL_DIR = "/usr/lib/wsl/lib"
_NOT_A_LINK = lazy(r"(?P<path>/\S+?)/(?P<name>[^/\s]+\.so(?:\.[0-9]+)*) is not a symbolic link")


@rule("SYS225", "soname-file-not-a-link", Severity.WARNING)
def soname_file_not_a_link(facts: Facts) -> Iterable[Hit]:
    """A library's SONAME name is a copy of the library, not a link to it (ldconfig warns)

    ## What it checks
    Only a log states it: ldconfig's `<dir>/<soname> is not a symbolic link`, printed by every
    `ldconfig` run (each apt, dnf or pacman install runs one) when the file named after a
    library's SONAME is a regular file other than the library, so ldconfig may not replace it
    by the link it manages.

    ## Why it matters
    Programs still load the copy, but ldconfig can no longer point the SONAME at a newer
    library in the directory, and the warning repeats on every package install. On WSL 2 it is
    the Windows NVIDIA driver's layout: C:\\Windows\\System32\\lxss\\lib (mounted read-only at
    /usr/lib/wsl/lib) holds libcuda.so, libcuda.so.1 and libcuda.so.1.1 as three copies; a
    driver update puts them back.

    ## Example
    `ldconfig: /usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link` at every `pacman -Syu`
    under WSL 2.

    ## Fix
    WSL 2: in an administrator cmd.exe on Windows, in C:\\Windows\\System32\\lxss\\lib, delete
    libcuda.so and libcuda.so.1 and make them links to libcuda.so.1.1 (`mklink libcuda.so.1
    libcuda.so.1.1`, `mklink libcuda.so libcuda.so.1.1`), then `wsl --shutdown`; the warning
    alone is harmless. Elsewhere: replace the copy by a link to the library it copies
    (`sudo ln -sf <library file> <dir>/<soname>`, `sudo ldconfig`).

    ## References
    - glibc elf/ldconfig.c (create_links: '%s is not a symbolic link')
    - https://github.com/microsoft/WSL/issues/5548
    - https://github.com/yuk7/ArchWSL/issues/248
    - https://docs.nvidia.com/cuda/wsl-user-guide/index.html
    """
    raise Skip("only ldconfig's output states a SONAME file that is not a link", "log.loader")


@from_log("SYS225")
def soname_file_not_a_link_in_log(facts: Facts, line: LogLine) -> Hit:
    """ldconfig's line: the Windows-side links for WSL's driver directory, else a link."""
    found = _NOT_A_LINK.search(line.text)
    path = found.group("path") if found else None
    name = found.group("name") if found else "the SONAME file"
    where = f"{path}/{name}" if path else name
    if path == _WSL_DIR:
        stem = name.split(".so", 1)[0]
        return Hit(
            f"ldconfig: {where} is a copy, not a link (line {line.line}): the Windows NVIDIA "
            "driver ships WSL 2's driver libraries as copies; programs still load it",
            evidence={"line": line.line, "file": where},
            fix=fix(
                "Harmless for programs that load it. To silence ldconfig: in an administrator "
                "cmd.exe on Windows, replace the copies in C:\\Windows\\System32\\lxss\\lib by "
                f"links (mklink) to {stem}.so.1.1, then wsl --shutdown; a driver update "
                "restores the copies",
                "manual",
                manual("cmd.exe (as administrator): cd C:\\Windows\\System32\\lxss\\lib"),
                manual(f"del {stem}.so {stem}.so.1"),
                manual(f"mklink {stem}.so.1 {stem}.so.1.1"),
                manual(f"mklink {stem}.so {stem}.so.1.1"),
                manual("wsl --shutdown  (then start the distribution again)"),
            ),
        )
    return Hit(
        f"ldconfig: {where} is a regular file, not a link to the library (line {line.line}): "
        "ldconfig leaves it, so the SONAME keeps pointing at that copy",
        evidence={"line": line.line, "file": where},
        fix=fix(
            f"Replace {where} by a link to the library file it stands for, then run ldconfig",
            "manual",
            manual(f"ls -l {path or '<dir>'}/  (which file the SONAME copy duplicates)"),
            manual(f"sudo ln -sf <the library file> {where} && sudo ldconfig"),
        ),
    )

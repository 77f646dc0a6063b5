"""The loader found a file but could not use it: SYS220, a library of the other ELF class (a
32-bit copy first on the path); SYS221, a file that is no ELF library at all (truncated, an
LFS pointer, a copied symlink); SYS222, a library that asks for an executable stack, which
glibc >= 2.41 refuses at dlopen; SYS226, a library loaded late whose thread-local storage does
not fit the static TLS space left (the signatures in matrices/signatures/loader_layers.toml)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import package_names
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.imports import distribution_of
from envcheck.rules.node.loader import _lookup

# the object the loader names before its complaint: '<path or soname>: wrong ELF class: ...'
_OBJECT = lazy(
    r"(?P<object>(?:/[^\s:'\"()]+/)?[A-Za-z0-9_+.-]+\.so(?:\.[0-9A-Za-z_.-]+)*)"
    r": (?:wrong ELF class|file too short|invalid ELF header|cannot enable executable stack"
    r"|cannot allocate memory in static TLS block)"
)
_SITE_TOP = lazy(r"[/\\](?:site|dist)-packages[/\\](?P<top>[A-Za-z0-9_]+?)(?:\.libs)?[/\\]")


def _object(line: LogLine) -> str | None:
    found = _OBJECT.search(line.text)
    return found.group("object") if found else None


def _owner(facts: Facts, path: str | None) -> str | None:
    """The distribution whose site-packages folder (or its auditwheel `<name>.libs`) holds it;
    for NVIDIA's namespace folder (site-packages/nvidia/cudnn/lib) the wheel the matrix's
    `[[soname]]` table names for the file."""
    found = _SITE_TOP.search(path) if path else None
    if path is None or found is None or found.group("top").startswith("_"):
        return None
    if found.group("top") == "nvidia":
        entries, _ = _lookup(facts.matrix, path.rsplit("/", 1)[-1])
        wheels = package_names(entries[0].pip) if entries else ()
        return wheels[0] if wheels else None
    return distribution_of(facts, found.group("top"))


@rule("SYS220", "shared-object-wrong-elf-class", Severity.ERROR)
def shared_object_wrong_elf_class(facts: Facts) -> Iterable[Hit]:
    """The loader found a library of the other ELF class (32-bit for a 64-bit program)

    ## What it checks
    A loader line `<library>: wrong ELF class: ELFCLASS32` (or `ELFCLASS64`): the file with
    the wanted name that the loader reached first was built for the other word size.

    ## Why it matters
    A directory of 32-bit libraries (`/usr/lib32`, `/usr/lib/i386-linux-gnu`, a vendor's
    `lib/` instead of `lib64/`) put first on `LD_LIBRARY_PATH`, or a 32-bit package in place
    of the 64-bit one, hides the right copy: the import or the program stops at once.

    ## Example
    `ImportError: /usr/lib/i386-linux-gnu/libcuda.so.1: wrong ELF class: ELFCLASS32`.

    ## Fix
    Take the 32-bit directory off `LD_LIBRARY_PATH` (point it at the 64-bit `lib64` /
    `x86_64-linux-gnu` one) and install the 64-bit package (`apt install <package>:amd64`);
    `ldconfig -p | grep <name>` lists the copies with their class.

    ## References
    - bminor/glibc elf/dl-load.c (open_verify: "wrong ELF class: ELFCLASS32" / "ELFCLASS64")
    """
    raise Skip("only a loader line states a library of the other ELF class", "log.loader")


@from_log("SYS220")
def shared_object_wrong_elf_class_in_log(facts: Facts, line: LogLine) -> Hit:
    path = _object(line)
    found = re.search(r"ELFCLASS(32|64)", line.text)
    bits = found.group(1) if found else "32"
    name = (path or "the library").rsplit("/", 1)[-1]
    folder = path.rsplit("/", 1)[0] if path and "/" in path else None
    want = "64" if bits == "32" else "32"
    actions: list[Action] = []
    if folder:
        actions.append(
            manual(
                f'export LD_LIBRARY_PATH=$(echo "$LD_LIBRARY_PATH" | tr : "\\n" | grep -vx '
                f"'{folder}' | paste -sd:)  (drop the {bits}-bit folder)"
            )
        )
    actions += [
        manual(f"ldconfig -p | grep {name.split('.so')[0]}  (the copies and their class)"),
        manual(f"file {path or name}  (says ELF {bits}-bit)"),
        manual(
            f"install the {want}-bit package that ships {name} (Debian/Ubuntu: sudo apt install "
            "<package>:amd64)"
        ),
    ]
    return Hit(
        f"the loader reached a {bits}-bit {name} (line {line.line}) for a {want}-bit program: a "
        f"{bits}-bit folder comes first on the search path, or only the {bits}-bit package is "
        "installed",
        evidence={"line": line.line, "library": path, "elf_class": bits},
        fix=fix(
            f"Put the {want}-bit copy first: take {folder or 'the ' + bits + '-bit folder'} off "
            f"LD_LIBRARY_PATH (use the lib64 / x86_64-linux-gnu folder), and install the "
            f"{want}-bit package that ships {name}",
            "manual",
            *actions,
        ),
    )


@rule("SYS221", "shared-object-not-elf", Severity.ERROR)
def shared_object_not_elf(facts: Facts) -> Iterable[Hit]:
    """The loader found a file with the library's name that is no ELF library (truncated or not binary)

    ## What it checks
    A loader line `<library>: file too short` or `<library>: invalid ELF header`.

    ## Why it matters
    The file is there but is not a loadable library: a download or copy cut short (a full
    disk), a Git LFS pointer or a text file committed in its place, a symlink copied as a
    small file (`cp` over a filesystem without links): reinstalling is the only fix.

    ## Example
    `OSError: .../site-packages/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8: file too short`.

    ## Fix
    Reinstall what owns the file: `pip install --force-reinstall --no-cache-dir <package>` for
    one in site-packages, the OS package (`apt install --reinstall`) otherwise; `git lfs pull`
    in a repository that stores it in LFS; `file <path>` shows what it really is.

    ## References
    - bminor/glibc elf/dl-load.c (open_verify: "file too short", "invalid ELF header")
    """
    raise Skip("only a loader line states a broken library file", "log.loader")


@from_log("SYS221")
def shared_object_not_elf_in_log(facts: Facts, line: LogLine) -> Hit:
    path = _object(line)
    name = (path or "the library").rsplit("/", 1)[-1]
    owner = _owner(facts, path)
    what = "file too short" if "file too short" in line.text else "invalid ELF header"
    actions: list[Action] = [manual(f"file {path or name}  (what the file really is)")]
    if owner is not None:
        actions.insert(0, manual(f"pip install --force-reinstall --no-cache-dir {owner}"))
        summary = (
            f"Reinstall {owner}, which ships {name}: pip install --force-reinstall "
            f"--no-cache-dir {owner} (the file on disk is cut short or not a library)"
        )
    else:
        actions += [
            manual(
                f"dpkg -S {name}  (the package that owns it) && sudo apt install --reinstall <it>"
            ),
            manual("git lfs pull  (in a repository that keeps the library in Git LFS)"),
        ]
        summary = (
            f"Replace {path or name} by a real copy: reinstall the package that owns it (dpkg -S "
            f"{name}; sudo apt install --reinstall), or git lfs pull where it is an LFS pointer"
        )
    return Hit(
        f"{path or name} is no loadable library ({what}, line {line.line}): the file was cut "
        "short or is something else with its name",
        evidence={"line": line.line, "library": path, "package": owner},
        fix=fix(summary, "manual", *actions),
    )


@rule("SYS222", "shared-object-executable-stack", Severity.ERROR)
def shared_object_executable_stack(facts: Facts) -> Iterable[Hit]:
    """A library asks for an executable stack, which glibc >= 2.41 refuses at dlopen

    ## What it checks
    A loader line `<library>: cannot enable executable stack as shared object requires:
    Invalid argument`.

    ## Why it matters
    Since glibc 2.41 dlopen no longer makes the stack executable for a library that asks
    for it (an assembler object without `.note.GNU-stack`); on Arch, Fedora 42, Debian 13
    and other new distributions such wheels (CTranslate2 4.5, old game engines) stop
    importing although nothing changed in the environment.

    ## Example
    `ImportError: libctranslate2-bc15bf3f.so.4.5.0: cannot enable executable stack as shared
    object requires: Invalid argument`.

    ## Fix
    Upgrade the package to a release built with a non-executable stack; or clear the flag on
    the file (`patchelf --clear-execstack <lib>`, or `execstack -c <lib>`); or allow it for one
    run with the glibc tunable `GLIBC_TUNABLES=glibc.rtld.execstack=2`.

    ## References
    - glibc 2.41 NEWS (dlopen and dlmopen no longer make the stack executable)
    - Debian glibc 2.41-7 changelog (the error text and the glibc.rtld.execstack tunable)
    - https://github.com/OpenNMT/CTranslate2/issues/1849
    - https://github.com/ValveSoftware/portal2/issues/451 (execstack -c)
    """
    raise Skip("only a loader line states an executable-stack refusal", "log.loader")


@from_log("SYS222")
def shared_object_executable_stack_in_log(facts: Facts, line: LogLine) -> Hit:
    path = _object(line)
    name = (path or "the library").rsplit("/", 1)[-1]
    owner = _owner(facts, path)
    if owner is None:
        found = _SITE_TOP.search(line.text)
        owner = distribution_of(facts, found.group("top")) if found else None
    target = path if path and "/" in path else f"$(find / -name '{name}' 2>/dev/null | head -1)"
    actions: list[Action] = []
    if owner is not None:
        actions.append(manual(f"pip install --upgrade {owner}  (a build without executable stack)"))
    actions += [
        manual(f"patchelf --clear-execstack {target}"),
        manual(f"execstack -c {target}  (older tool; same effect)"),
        manual("GLIBC_TUNABLES=glibc.rtld.execstack=2 python ...  (allow it for this run only)"),
    ]
    return Hit(
        f"{name} asks for an executable stack (line {line.line}), which glibc >= 2.41 no longer "
        "grants at dlopen",
        evidence={"line": line.line, "library": path, "package": owner},
        fix=fix(
            (f"Upgrade {owner} to a build without executable stack, or c" if owner else "C")
            + f"lear the flag on {name}: patchelf --clear-execstack {target}; for one run: "
            "GLIBC_TUNABLES=glibc.rtld.execstack=2",
            "manual",
            *actions,
        ),
    )


@rule("SYS226", "shared-object-static-tls-exhausted", Severity.ERROR)
def shared_object_static_tls_exhausted(facts: Facts) -> Iterable[Hit]:
    """A library loaded late needs static TLS the process has no room left for

    ## What it checks
    A loader line `<library>: cannot allocate memory in static TLS block`.

    ## Why it matters
    A library built with initial-exec thread-local storage (GNU OpenMP's libgomp, jemalloc,
    libGLdispatch, some torch and scikit-learn builds, common on aarch64) must take its TLS
    from the small surplus glibc reserves at start; loaded by `dlopen` after other such
    libraries, it finds none left and the import fails. It is not the machine's memory: it
    depends on the order the process loads libraries in.

    ## Example
    `ImportError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static
    TLS block`.

    ## Fix
    Load that library at the process's start: `export LD_PRELOAD=<the library the line
    names>`; or import the package that brings it first (before the one that fails); or, on
    glibc >= 2.32, enlarge the surplus: `GLIBC_TUNABLES=glibc.rtld.optional_static_tls=<bytes>`.

    ## References
    - bminor/glibc:elf/dl-reloc.c (_dl_allocate_static_tls: 'cannot allocate memory in
      static TLS block', as https://github.com/jemalloc/jemalloc/issues/2472 traces it)
    - glibc manual, Dynamic Linking Tunables (glibc.rtld.optional_static_tls, glibc 2.32)
    - https://github.com/NVIDIA/DALI/pull/5519 (LD_PRELOAD of scikit-learn's libgomp on aarch64)
    - https://github.com/dmlc/xgboost/issues/8488 (fails when tensorflow is imported first)
    - https://github.com/flox/flox/pull/2976 (GLIBC_TUNABLES optional_static_tls; default 512)
    """
    raise Skip("only a loader line states a static TLS shortfall", "log.loader")


@from_log("SYS226")
def shared_object_static_tls_exhausted_in_log(facts: Facts, line: LogLine) -> Hit:
    path = _object(line)
    name = (path or "the library").rsplit("/", 1)[-1]
    target = path if path and "/" in path else f"$(find / -name '{name}' 2>/dev/null | head -1)"
    return Hit(
        f"{name} needs static TLS (line {line.line}) that the process has no room left for: "
        "it was loaded after other libraries with initial-exec TLS took the space",
        evidence={"line": line.line, "library": path},
        fix=fix(
            f"Load {name} at the process's start: export LD_PRELOAD={target}; or import the "
            "package that brings it before the one that fails; on glibc >= 2.32: "
            "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=<bytes>",
            "manual",
            manual(f"export LD_PRELOAD={target}"),
            manual(
                "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384 python ...  "
                "(glibc >= 2.32: a larger surplus)"
            ),
        ),
    )

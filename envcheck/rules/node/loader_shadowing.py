"""SYS224: the loader bound another build of a library than the one a binary was linked
against, a copy without the symbol versions it needs (glibc's `no version information
available (required by X)`, a relocation error's `not defined in file libX with link time
reference`): a conda environment's lib/ first on LD_LIBRARY_PATH, or the environment's stale
copy found beside a system library (the signatures in matrices/signatures/loader_layers.toml)."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import package_names
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.loader import _conda_prefix, _lookup, _normalized

# a program the system installs (bash, /usr/bin/cmake, /lib/x86_64-linux-gnu/libncurses.so.5),
# not one of the environment's: a bare name is a command run from PATH
_SYSTEM_OBJECT = lazy(r"^(?:/(?:usr/)?(?:s?bin|lib(?:32|64|x32)?)/|[A-Za-z0-9_.+-]+$)")
_ENV_LIB = lazy(r"\$\{?CONDA_PREFIX\}?/lib|/envs/[^/:]+/lib|conda[0-9]*/lib|forge[0-9]*/lib")


def _stem(library: str) -> str:
    """`/x/lib/libtinfo.so.6` -> `libtinfo`."""
    return library.rsplit("/", 1)[-1].split(".so", 1)[0]


@rule("SYS224", "shared-library-shadowed", Severity.ERROR)
def shared_library_shadowed(facts: Facts) -> Iterable[Hit]:
    """Another build of a shared library is loaded in place of the one a binary was linked against

    ## What it checks
    A loader line that names a copy of a library without the symbol versions a binary or
    library was linked against: glibc's `<lib>: no version information available (required
    by <binary>)` and the relocation error `symbol X, version V not defined in file <lib>
    with link time reference`; which copy was bound (a conda environment's `lib/`), what
    needed the other one (a system program or library), and whether the log puts the
    environment's `lib/` on `LD_LIBRARY_PATH`.

    ## Why it matters
    One SONAME, two builds: a conda environment's libtinfo, libcurl, libcrypto or libffi is
    not the Debian/RHEL build the system's programs were linked against. With the
    environment's `lib/` first on `LD_LIBRARY_PATH`, bash, cmake or ssh bind it and warn or
    fail; a program of the environment that loads a system library (libncurses) can bind the
    environment's copy of that library's dependency and stop with a relocation error.

    ## Example
    `bash: /home/u/miniconda3/envs/x/lib/libtinfo.so.6: no version information available
    (required by bash)` after `export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH`.

    ## Fix
    Take the environment's `lib/` off `LD_LIBRARY_PATH` (conda's programs find their
    libraries through their RUNPATH; the export in `~/.bashrc` or the environment's
    `activate.d` is what puts it first), or put the system folder before it; where nothing
    sets it, move the environment's stale copy aside (`mv $CONDA_PREFIX/lib/libtinfo.so.5*
    /tmp/`) or install the environment's own build of the library that needs it.

    ## References
    - bminor/glibc elf/dl-version.c (match_symbol: "no version information available")
    - bminor/glibc elf/dl-lookup.c ("not defined in file %s with link time reference")
    - ld.so(8) (LD_LIBRARY_PATH is searched before DT_RUNPATH and ld.so.cache)
    """
    raise Skip("only a loader line states which copy of a library was bound", "log.loader")


@from_log("SYS224")
def shared_library_shadowed_in_log(facts: Facts, line: LogLine) -> Hit:
    library = _normalized(line.stated.get("shadowing_library")) or "the library"
    needs = line.stated.get("shadowed_for") or "a program"
    export = line.stated.get("ld_library_path_export")
    prefix = _conda_prefix(library)
    name = library.rsplit("/", 1)[-1]
    folder = f"{prefix}/lib" if prefix else (library.rsplit("/", 1)[0] if "/" in library else None)
    on_path = bool(export and (_ENV_LIB.search(export) or (folder and folder in export)))
    system_needs = bool(_SYSTEM_OBJECT.match(needs))
    drop = folder if folder and not on_path else "$CONDA_PREFIX/lib"
    strip = (
        f'export LD_LIBRARY_PATH=$(echo "$LD_LIBRARY_PATH" | tr : "\\n" | grep -vx '
        f'"{drop}" | paste -sd:)  (the environment\'s lib/ off the path)'
    )
    entries, _ = _lookup(facts.matrix, name) if "." in name else ((), None)
    conda = package_names(entries[0].conda) if entries and entries[0].conda else ()
    where = library if "/" in library else f"the {name} found first"
    cause = (
        f"the loader bound {where} (line {line.line}) for {needs}, which was linked against "
        f"another build of {name}"
        + (
            f": the log puts {drop} on LD_LIBRARY_PATH (LD_LIBRARY_PATH={export}), so it is "
            "searched before the system's copy"
            if on_path
            else ""
        )
    )
    path_first = on_path or (system_needs and prefix is not None and export is not None)
    actions: list[Action] = []
    if path_first or (system_needs and prefix is None):
        summary = (
            f"Take {drop} off LD_LIBRARY_PATH (the export in ~/.bashrc or the environment's "
            "etc/conda/activate.d puts it there; the environment's own programs find their "
            "libraries through their RUNPATH), or put the system folder "
            "(/usr/lib/x86_64-linux-gnu) before it"
        )
        actions += [
            manual(strip),
            manual(
                "grep -n LD_LIBRARY_PATH ~/.bashrc $CONDA_PREFIX/etc/conda/activate.d/*  "
                "(where it is set)"
            ),
        ]
    else:
        stale = f"{folder}/{_stem(name)}.so*" if folder else f"{_stem(name)}.so*"
        summary = (
            f"Move the environment's copy aside so the system's {name} is found "
            f"(mv {stale} /tmp/)"
            + (
                f", or install the conda package that ships {name} with its sibling "
                f"libraries, so both come from the environment (conda install -c conda-forge "
                f"{conda[0]})"
                if conda
                else ""
            )
            + "; if LD_LIBRARY_PATH names the environment's lib/, take it off instead"
        )
        actions.append(
            manual(f"mv {stale} /tmp/  (the environment's copy; undo by moving it back)")
        )
        if conda:
            actions.append(manual(f"conda install -c conda-forge {conda[0]}"))
        actions.append(manual(strip))
    return Hit(
        cause,
        evidence={
            "line": line.line,
            "library": library,
            "required_by": needs,
            "ld_library_path": export,
            "environment": prefix,
        },
        fix=fix(summary, "manual", *actions),
    )

"""The Python import family: a name missing from a module (PY150, version skew between two
packages) and a module nothing installed provides (PY151), for any package.

The interpreter's own lines state the facts: `cannot import name 'X' from 'Y' (<path>)` and
`No module named 'X'`. The matrix's `[[import_name]]` table (packages/import_names.toml) maps
import names to the distributions that provide them where the names differ (cv2 ->
opencv-python) and records modules a release removed (torch._six in torch 2.0, distutils in
Python 3.12); the node's package list, when known, gives versions and the requirement the
importing package states.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.schema import ImportName, NameHistory
from envcheck.model.finding import Action, Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install
from envcheck.rules.node.optional_backends import optional_backend


def distribution_of(facts: Facts, module: str) -> str:
    """The distribution that provides the import name ``module`` (its top-level package)."""
    entry = facts.matrix.import_name(module)
    if entry is not None and entry.distribution:
        return canonicalize_name(entry.distribution)
    return canonicalize_name(module.split(".", maxsplit=1)[0])


def frame_distribution(facts: Facts, top: str) -> str | None:
    """The distribution of a traceback frame's top-level package under site-packages, when it
    can be named for `pip install`: the import-names table knows it, the node has it installed,
    or the name has no underscore (most distributions are named as they import; one with an
    underscore often is not: utils_find_1st comes from py_find_1st). None otherwise."""
    entry = facts.matrix.import_name(top)
    dist = distribution_of(facts, top)
    if (entry is not None and entry.distribution) or "_" not in top:
        return dist
    return dist if facts.known_version(dist) is not None else None


def spelled(module: str, dist: str) -> str:
    """The name a user types for ``dist``: the import's top-level name when it names the same
    distribution (huggingface_hub, typing_extensions), else the distribution's name."""
    top = module.split(".", maxsplit=1)[0]
    return top if canonicalize_name(top) == dist else dist


def _requirers(facts: Facts, dist: str) -> list[tuple[str, str]]:
    """(distribution, requirement) of installed distributions that require ``dist`` with a
    version range, as the node's package list states them."""
    try:
        packages = facts.packages()
    except Skip:
        return []
    out = []
    for other in packages.distributions:
        for text in other.requires:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue
            if canonicalize_name(req.name) == dist and str(req.specifier):
                out.append((other.name, f"{dist}{req.specifier}"))
    return out


@rule("PY150", "import-name-missing", Severity.ERROR)
def import_name_missing(facts: Facts) -> Iterable[Hit]:
    """The installed release of a dependency lacks a name a package imports

    ## What it checks
    The interpreter's `cannot import name 'X' from 'Y' (<path>)`: the distribution that provides
    Y, its installed version and the range the installed packages require of it (when the node
    is known). `from partially initialized module` means a circular import or a local file
    that shadows the package; `(unknown location)` a package directory without its files (a
    broken or half-removed install, or a local directory of that name). An instance's
    `'DataFrame' object has no attribute 'append'` is the same skew for a member a release
    removed from a library's class (`[[import_name]]` "pandas.DataFrame.append"); other members
    (a missing column, a typo) are the code's own. A name that carries an optional backend's
    import name (`get_vllm_engine` from `swift.llm`) is one its package defines only when that
    backend imports: the backend is missing or broken, not the package's release. Only a log
    states the failed import.

    ## Why it matters
    Packages move, rename and remove names between releases: an importer written for another
    release of Y stops at import time, whatever else is right on the node.

    ## Example
    `ImportError: cannot import name 'GRPOConfig' from 'trl'`: trl 0.13 has no GRPOConfig (0.14
    added it); the importing package needs a newer trl.

    ## Fix
    Install the release of Y the importer was written for: the release that added X
    (`pip install "Y>=A"`) or, when a release removed it, the releases before
    (`pip install "Y<R"`; `Y==L` the last one with it), as the matrix's names-by-release table
    (read from Y's own tags) states; else the range the importer requires (`pip check`). The
    importer's side from what its releases import and declare (read from its own tags): the
    release before it began importing X (`pip install "P<F"`), the first after it stopped
    (`pip install -U "P>=G"`), or the bound its installed release declares on Y; first where
    the traceback shows the importer, after Y's pin where it does not. Where the curated
    removal names the importer's fixed release (`importer_fix`), that upgrade first
    (`pip install 'deepspeed>=0.14.4'` for torch 2.4's removed elastic `log`). Pydantic 2's own
    refusals of pydantic 1 code (a removed or moved name, a V1 validator form) pin pydantic 1:
    `pip install "pydantic<2"`. pyOpenSSL's `module 'lib' has no attribute 'X'` (a symbol the
    installed cryptography's bindings dropped) upgrades pyOpenSSL. A removed class member pins
    the release before its removal (`pip install "pandas<2.0"` for DataFrame.append, `"pillow<10"`
    for ImageDraw.textsize, `"matplotlib<3.10"` for FigureCanvasAgg.tostring_rgb,
    `"importlib_metadata<5.0"` for EntryPoints.get). A library's own line that states the
    release that removed the name (JAX's `jax.tree_map was removed in JAX v0.6.0: use
    jax.tree.map`) pins the release before it (`pip install "jax<0.6.0"`). A name
    gated on an optional backend: install the backend (`pip install vllm`), or, where it is
    installed, `python -c 'import vllm'` shows the error that keeps it from importing.

    ## References
    - python/cpython Python/ceval.c (import_from: "cannot import name %R from %R (%S)")
    - pydantic/pydantic pydantic/_migration.py (PydanticImportError: "has been removed in V2")
    - https://github.com/huggingface/alignment-handbook/issues/180 (deepspeed==0.14.4)
    - https://github.com/pyca/pyopenssl/issues/1114 (upgrade pyOpenSSL, or pin cryptography)
    - https://github.com/cppcoders/cpm-python/issues/3 (pandas 2.0's DataFrame.append)
    - https://github.com/modelscope/ms-swift/issues/637 (get_vllm_engine: install vllm)
    - matrices/generated/python_names.toml (scripts/gen_python_names.py)
    - matrices/generated/importers.toml (scripts/gen_importers.py)
    """
    raise Skip("only a log line states a failed import", "log.imports")


@from_log("PY150")
def import_name_missing_in_log(facts: Facts, line: LogLine) -> Hit | None:
    from envcheck.rules.node.import_releases import (
        by_release,
        declared_bound,
        declared_by_installed,
    )
    from envcheck.rules.node.import_shadowing import shadowed
    from envcheck.rules.node.openssl_bindings import LIB_SYMBOL_MISSING, lib_symbol_missing
    from envcheck.rules.node.pydantic_v1_code import PYDANTIC_V1_FORM, pydantic_v1_form
    from envcheck.rules.node.stated_removals import STATED_REMOVAL, stated_removal

    local = shadowed(line)  # CPython names a local file or an import cycle
    if local is not None:
        return local
    name, module = line.stated.get("import_name"), line.stated.get("from_module")
    numpy_line = _NUMPY_REMOVED.search(line.text)
    if numpy_line is not None:
        return _numpy_removed(facts, line, numpy_line.group(1), numpy_line.group(2))
    stated = STATED_REMOVAL.search(line.text)
    if stated is not None:
        return stated_removal(facts, line, stated)
    if PYDANTIC_V1_FORM.search(line.text) is not None:
        return pydantic_v1_form(facts, line)
    if LIB_SYMBOL_MISSING.search(line.text) is not None:
        return lib_symbol_missing(facts, line)
    if name is None:
        raise NotStated(f"line {line.line} is cut before the name", "packages")
    owner = line.stated.get("object_class")
    if module is None and owner is not None:
        # `'DataFrame' object has no attribute 'append'`: a member a release removed, known
        # only by its class; any other member is the code's own (a column name, a typo)
        member = facts.matrix.removed_member(owner, name)
        if member is None:
            raise NotStated(f"no release is known to remove {owner}.{name}", "packages")
        # None: the installed release predates the removal, so it is not the cause
        return _removed_name(facts, line, member.module.rsplit(".", maxsplit=1)[0], name)
    if module is None:  # Python < 3.8 does not name the module
        return Hit(
            f"the module '{name}' is imported from lacks it (line {line.line}): the importing "
            "package was written for another release of the package that module belongs to",
            evidence={"line": line.line, "name": name},
            fix=fix(
                f"Find the `from ... import {name}` line in the traceback and install the "
                "release of that package the importer requires (`pip check` names the range; "
                "usually pip install --upgrade <that package>)",
                "manual",
                manual("pip check"),
            ),
        )
    removed = _removed_name(facts, line, module, name)
    if removed is not None:
        return removed
    top = module.split(".", maxsplit=1)[0]
    if top in getattr(sys, "stdlib_module_names", ()):
        return Hit(
            f"the standard library's {module} has no '{name}' in this Python (line {line.line}):"
            " the code was written for another Python version",
            evidence={"line": line.line, "name": name, "module": module},
            fix=fix(
                "Run the code on a Python version it supports (its Requires-Python), or "
                "upgrade the package that uses it to a release for this Python",
                "manual",
                manual("python --version; pip show <the package in the traceback>"),
            ),
        )
    if "(unknown location)" in line.text:
        return _namespace_shell(facts, line, module, name)
    if "partially initialized module" in line.text:
        top = module.split(".")[0]
        return Hit(
            f"'{name}' is imported from a module '{module}' that is still initialising (line "
            f"{line.line}): a circular import, or a local file or directory named {top} that "
            "shadows the installed package",
            evidence={"line": line.line, "name": name, "module": module},
            fix=fix(
                f"Rename a local {top}.py (or {top}/ directory) that shadows the package, or "
                "break the circular import",
                "manual",
                manual(f"python -c 'import {top}; print({top}.__file__)'  (must be site-packages)"),
            ),
        )
    if _name_history(facts, module, name) is None:
        gated = optional_backend(facts, line, module, name)
        if gated is not None:  # get_vllm_engine: defined only when vllm imports
            return gated
    dist = distribution_of(facts, module)
    version = facts.known_version(dist)
    have = f"{dist} {version}" if version is not None else f"the installed {dist}"
    wanted = _requirers(facts, dist)
    importer = _importer(facts, line, dist)
    declared = declared_bound(facts, importer, dist, version)
    for bound_by in (
        [declared] if declared is not None else declared_by_installed(facts, dist, version)
    ):
        if all(b != bound_by[0] for b, _ in wanted):
            wanted.append(bound_by)  # the importer's release declares it (its own setup.py)
    typed = spelled(module, dist)
    violated = version is not None and any(
        not Requirement(req).specifier.contains(version, prereleases=True) for _, req in wanted
    )
    history = None if violated else _name_history(facts, module, name)
    if history is not None:
        found = by_release(facts, line, history, importer)
        if found is not None:
            return found
    actions: list[Action]
    if importer is not None and not wanted:
        by, by_version = importer
        by_have = f"{by} {by_version}" if by_version is not None else by
        older = f'pip install "{dist}<{version}"' if version is not None else None
        summary = (
            f"{by_have} imports '{name}' from {dist}, which {have} does not have: upgrade "
            f"{by} to a release made for this {dist} (pip install -U {by}), or install the "
            f"{dist} release {by} was written for"
            + (
                f" ({older} when '{name}' was removed; pip install -U {typed} when it is newer)"
                if older
                else f" (pip install -U {typed} when '{name}' is newer; pin an older "
                f"{dist} when it was removed)"
            )
            + f" - `pip show {by}` names the range it requires"
        )
        actions = [
            pip_install(by, flags=("--upgrade",)),
            pip_install(dist, flags=("--upgrade",)),
            manual(f"pip show {by}  (Requires: the {dist} range it needs); pip check"),
        ]
        skew = f"{by_have} was written for another {dist} release"
    elif (
        wanted
        and version is not None
        and not all(
            Requirement(req).specifier.contains(version, prereleases=True) for _, req in wanted
        )
    ):
        by, req = next(
            (b, r)
            for b, r in wanted
            if not Requirement(r).specifier.contains(version, prereleases=True)
        )
        summary = f"Install the {dist} release {by} requires: pip install '{req}'"
        actions = [pip_install(req)]
        skew = f"{by} requires {req}"
    else:
        summary = (
            f"Install the {dist} release the importing package was written for: pip install "
            f"-U {typed} when '{name}' is newer than {have}; if it was removed, pin the last "
            f"{dist} release that has it, or upgrade the importing package to a release made "
            f"for this {dist} (`pip check` names the required range)"
        )
        actions = [pip_install(dist, flags=("--upgrade",)), manual("pip check")]
        skew = f"the importing package was written for another {dist} release"
    return Hit(
        f"{have} has no '{name}' in {module} (line {line.line}): {skew} (version skew between "
        f"{dist} and the package that imports it)",
        evidence={
            "line": line.line,
            "name": name,
            "module": module,
            "distribution": dist,
            "version": str(version) if version is not None else None,
            "required": [r for _, r in wanted],
        },
        fix=fix(summary, "manual", *actions),
    )


def _compiled_extension_missing(
    line: LogLine, module: str, dist: str, installed: object, evidence: dict[str, object]
) -> Hit:
    """`No module named 'flash_attn_2_cuda'`: a distribution's own compiled extension
    (``compiled = true``) is missing, so the installed distribution is there without its build
    (a wheel for another Python or torch, a source install that skipped the CUDA build). A
    plain `pip install` answers 'already satisfied': the fix removes it and builds it here
    against the installed torch, as threads run it."""
    holder = f"{dist} {installed}" if installed is not None else dist
    return Hit(
        f"{module} is {dist}'s compiled extension and this interpreter cannot import it (line "
        f"{line.line}): {holder} is installed without its build for this Python and torch, "
        "or is not installed",
        evidence=evidence,
        fix=fix(
            f"Reinstall {dist} built against the installed torch and CUDA: pip uninstall -y "
            f"{dist}, then pip install {dist} --no-build-isolation --no-cache-dir (nvcc of "
            f"torch's CUDA on PATH), or install the prebuilt wheel of the {dist} release made "
            "for this torch, CUDA, Python and C++ ABI",
            "manual",
            manual(f"pip uninstall -y {dist}"),
            pip_install(dist, flags=("--no-build-isolation", "--no-cache-dir")),
        ),
    )


def _namespace_shell(facts: Facts, line: LogLine, module: str, name: str) -> Hit:
    """`cannot import name 'X' from 'Y' (unknown location)`: Python imported Y as a namespace
    package, a directory without its ``__init__.py``: an install that was interrupted or half
    removed (pip's uninstall of another version left the folder), or a local directory named Y
    in the working directory or on PYTHONPATH. No release is missing X; the files are. Threads
    reinstall the distribution over itself (``pip install --force-reinstall``)."""
    top = module.split(".", maxsplit=1)[0]
    dist = distribution_of(facts, module)
    version = facts.known_version(dist)
    typed = spelled(module, dist)
    pin = f"{typed}=={version}" if version is not None else typed
    where = f"python -c 'import {top}; print({top}.__path__)'  (must be site-packages)"
    known = (
        version is not None
        or line.stated.get("importer_file") is not None
        or facts.matrix.import_name(top) is not None
        or facts.matrix.python_module(module) is not None
        or (bool(facts.matrix.python_names_files) and facts.matrix.python_names().scanned(module))
    )
    if not known:
        # nothing says {top} is an installed distribution: the job's own directory is first
        return Hit(
            f"'{module}' resolved to a directory without its files (line {line.line}: 'unknown "
            f"location'): a local directory named {top} (the working directory, PYTHONPATH) "
            f"shadows the module the code means, or its install is broken",
            evidence={"line": line.line, "name": name, "module": module, "distribution": dist},
            fix=fix(
                f"Rename the local directory (or module) named {top} that shadows the one the "
                f"code imports, and update its imports; if {top} is an installed package, "
                f"reinstall it: pip install --force-reinstall --no-cache-dir {pin}",
                "manual",
                manual(where),
                pip_install(pin, flags=("--force-reinstall", "--no-cache-dir")),
            ),
        )
    return Hit(
        f"'{module}' was imported as a directory without its package files (line {line.line}: "
        f"'unknown location'): the {dist} install is broken or half removed, or a local "
        f"directory named {top} shadows it, so '{name}' is not there",
        evidence={"line": line.line, "name": name, "module": module, "distribution": dist},
        fix=fix(
            f"Reinstall {dist} over itself: pip install --force-reinstall --no-cache-dir {pin} "
            f"(or pip uninstall -y {typed} && pip install {pin}); if a local directory named "
            f"{top} is in the working directory or on PYTHONPATH, rename it",
            "manual",
            pip_install(pin, flags=("--force-reinstall", "--no-cache-dir")),
            manual(where),
        ),
    )


def _name_history(facts: Facts, module: str, name: str) -> NameHistory | None:
    """The releases that have ``name`` in ``module``: a name the module binds, or its
    submodule (`from google.protobuf import runtime_version` imports the module)."""
    found = facts.matrix.python_name(module, name)
    if found is not None:
        return found
    sub = facts.matrix.python_module(f"{module}.{name}")
    return sub if sub is not None and sub.module == f"{module}.{name}" else None


# NumPy's own message for an alias a release removed (numpy/__init__.py __getattr__)
_NUMPY_REMOVED = lazy(r"`np\.([A-Za-z0-9_]+)` was removed in the NumPy ([0-9]+)\.[0-9]+ release")


def _numpy_removed(facts: Facts, line: LogLine, name: str, major: str) -> Hit:
    """NumPy's own line names the alias and the release that removed it: the importing code
    was written for the NumPy major before; threads pin that major back (numpy<2) until the
    importing package has a release for NumPy 2."""
    from envcheck.rules.node.import_releases import last_clause

    version = facts.known_version("numpy")
    have = f"numpy {version}" if version is not None else "the installed numpy"
    pin = f"numpy<{major}"
    last, pinned = last_clause(facts, "numpy", "numpy", Version(f"{major}.0"), "")
    return Hit(
        f"NumPy {major}.0 removed np.{name}; {have} does not have it (line {line.line}): the "
        f"package that uses it was written for NumPy < {major}",
        evidence={"line": line.line, "name": name, "module": "numpy", "removed_in": f"{major}.0"},
        fix=fix(
            f'Install NumPy < {major}: pip install "{pin}"{last} (and pin it for later installs), '
            f"or upgrade the package that uses np.{name} to a release made for NumPy {major}",
            "manual",
            pip_install(pin),
            *pinned,
        ),
    )


_SITE_TOP = lazy(r"[/\\](?:site|dist)-packages[/\\](?P<top>[A-Za-z0-9_.-]+)")


def _importer(facts: Facts, line: LogLine, dist: str) -> tuple[str, object] | None:
    """(distribution, installed version or None) of the package whose import statement failed:
    the innermost site-packages frame above the line (``importer_file``); None when the
    traceback does not show it, or shows the imported package itself."""
    path = line.stated.get("importer_file")
    found = _SITE_TOP.search(path) if path else None
    if found is None:
        return None
    top = found.group("top")
    top = top.removesuffix(".py") if top.endswith(".py") else top.split(".", 1)[0]
    if top.startswith("_") or top.endswith((".dist-info", ".egg-info")):
        return None
    by = distribution_of(facts, top)
    if by == dist:
        return None
    return by, facts.known_version(by)


def _importer_named(importer: tuple[str, object] | None, otherwise: str) -> str:
    """The importing package as a fix names it: its distribution (and installed release)."""
    if importer is None:
        return otherwise
    by, version = importer
    return f"{by} {version}, {otherwise}" if version is not None else f"{by}, {otherwise}"


def _importer_upgrade(importer: tuple[str, object] | None, lib: str, when: object) -> list[Action]:
    """The importer's own upgrade, as threads run it (`pip install -U deepspeed` for torch._six):
    a release of it made for the library's newer API. Nothing when the traceback does not show
    the importer."""
    if importer is None:
        return []
    by = importer[0]
    return [
        manual(
            f"pip install -U {by}  ({by}'s newer releases are made for {lib} >= {when}; pin it "
            f"where {by} itself names a range)"
        )
    ]


def _removed_name(facts: Facts, line: LogLine, module: str, name: str) -> Hit | None:
    """The finding for a name the matrix records as removed by a release (``[[import_name]]``
    with ``module = "Y.X"``): pin the last releases that have it, the importer's upgrade after.
    None when the matrix does not know the name, or the installed release predates the
    removal (then the removal is not the cause)."""
    path = f"{module}.{name}"
    entry = facts.matrix.import_name(path)
    if entry is None or entry.module != path or not entry.removed_by or not entry.removed_in:
        return None
    by, when = canonicalize_name(entry.removed_by), entry.removed_in
    if by == "python":
        instead = f": {entry.replacement}" if entry.replacement else ""
        return Hit(
            f"Python {when} removed {module}.{name} (line {line.line}): the importing package "
            f"predates Python {when}",
            evidence={"line": line.line, "name": name, "module": module, "removed_in": str(when)},
            fix=fix(
                f"Upgrade the package that uses {module}.{name} to a release for Python >= "
                f"{when}{instead}; or run on Python < {when}",
                "manual",
                manual(entry.replacement or f"python < {when}"),
            ),
        )
    version = facts.known_version(by)
    if version is not None and version < when:
        return None
    top = module.split(".", maxsplit=1)[0]
    # the spelling users type: the import name when it names the same distribution
    spelled = top if canonicalize_name(top) == by else by
    have = f"{by} {version}" if version is not None else f"the installed {by}"
    importer = _importer(facts, line, by)
    instead = f" (the importer should use {entry.replacement})" if entry.replacement else ""
    note = f" {entry.note}" if entry.note else ""
    return Hit(
        f"{by} {when} removed {module}.{name}; {have} does not have it (line {line.line}): the "
        f"importing package was written for {by} < {when}{instead}",
        evidence={
            "line": line.line,
            "name": name,
            "module": module,
            "distribution": by,
            "removed_in": str(when),
            "version": str(version) if version is not None else None,
        },
        fix=(
            _importer_fix(entry.importer_fix, by, module, name, spelled, when, note)
            if entry.importer_fix
            else _removed_fix(facts, importer, by, module, name, version, spelled, when, note)
        ),
    )


def _importer_fix(
    wanted: str, by: str, module: str, name: str, spelled: str, when: Version, note: str
) -> Fix:
    """The fix for a curated removal whose importer's release that stopped importing the name
    is known (``importer_fix``): that upgrade first, as threads run it (deepspeed>=0.14.4 for
    torch's elastic `log`), the library pinned below the removal after."""
    try:
        importer = Requirement(wanted).name
    except InvalidRequirement:
        importer = wanted
    return fix(
        f"Upgrade {importer}, which imports {module}.{name}, to a release that no longer does: "
        f"pip install '{wanted}'; or install the last {by} release before the removal: pip "
        f'install "{spelled}<{when}".{note}',
        "manual",
        pip_install(wanted),
        manual(f'pip install "{spelled}<{when}"  (instead: the {by} before the removal)'),
    )


def _removed_fix(
    facts: Facts,
    importer: tuple[str, object] | None,
    by: str,
    module: str,
    name: str,
    version: Version | None,
    spelled: str,
    when: Version,
    note: str,
) -> Fix:
    """The fix for a curated removal: the library pinned below it, and the importer's release
    that stopped importing the name (from generated/importers.toml) first where the traceback
    shows the importer, after where it does not."""
    from envcheck.rules.node.import_releases import importer_fit, last_clause

    last, pinned = last_clause(facts, by, spelled, when, note)
    summary = (
        f'Install the last {by} release before the removal: pip install "{spelled}<{when}"'
        f"{last} (or upgrade {_importer_named(importer, 'the package')} that imports {name} to "
        f"a release made for {by} >= {when}).{note}"
    )
    actions: list[Action] = [pip_install(f"{spelled}<{when}"), *pinned]
    fit = importer_fit(facts, (by, module, name), importer, version, too_old=False)
    if fit is None:
        return fix(summary, "manual", *actions, *_importer_upgrade(importer, by, when))
    if importer is not None:
        return fix(f"{fit[0]}; or {summary[0].lower()}{summary[1:]}", "manual", *fit[1], *actions)
    return fix(f"{summary} Known importers: {fit[0]}", "manual", *actions, *fit[1])


def _stdlib_not_built(
    line: LogLine, module: str, entry: ImportName, evidence: dict[str, object]
) -> Hit:
    """A standard-library C module (`_lzma`, `_ctypes`, `_sqlite3`) that the interpreter was
    built without: its build (pyenv, asdf, a source build) lacked the C library's headers, so
    the module was skipped; no pip package provides it. The fix is the OS development package
    and a rebuild of that Python (or a Python from the OS, conda or uv, which have it)."""
    where = _STDLIB_PATH.search(line.text)
    interpreter = where.group("python") if where else None
    rebuild = (
        f"pyenv install --force {interpreter}  (or rebuild that Python from source)"
        if interpreter
        else "pyenv install --force <the version>  (or rebuild that Python from source)"
    )
    words = [
        f"{cmd} {pkg}"
        for cmd, pkg in (
            ("sudo apt-get install", entry.apt),
            ("dnf install", entry.dnf),
            ("brew install", entry.brew),
        )
        if pkg
    ]
    evidence |= {"apt": entry.apt, "dnf": entry.dnf, "brew": entry.brew}
    return Hit(
        f"the interpreter has no {module} (line {line.line}), a standard-library module it "
        "compiles only when the C library's development headers are present: this Python was "
        f"built (pyenv, asdf, from source) without {entry.apt or entry.dnf or entry.brew}",
        evidence=evidence,
        fix=fix(
            f"Install the development package ({' or '.join(words)}), then rebuild that "
            "Python (pyenv install --force <version>, or make && make install again) and "
            "recreate the virtual environment; or use a Python from the OS, conda or uv, "
            f"which ship {module}. pip cannot install {module}.",
            "manual",
            *(manual(w) for w in words),
            manual(rebuild),
        ),
    )


# ".../versions/3.8.12/lib/python3.8/lzma.py" in the traceback: pyenv's interpreter version
_STDLIB_PATH = lazy(r"versions/(?P<python>3\.[0-9]+\.[0-9]+)/lib/python3")


def _missing_in_source_build(
    line: LogLine, module: str, dist: str, built: str | None, installed: object
) -> Hit:
    """``No module named 'torch'`` while pip builds a source distribution (the log names it,
    or only its traceback runs in pip's isolated build environment): the package's setup.py
    imports a module it does not declare as a build requirement, and pip's isolated build
    environment has only the declared ones (flash-attn, apex, many CUDA extensions import torch
    there)."""
    first = (
        f"install {dist} first if it is not (pip install {dist}), then "
        if installed is None
        else ""
    )
    name = built or "<the package>"
    what = f"building {built} from source" if built else "a source build pip ran"
    whose = f"{built}'s setup.py" if built else "the package's setup.py"
    return Hit(
        f"{what} imports {module} (line {line.line}), which pip's isolated build environment "
        f"lacks: {whose} needs the installed {dist}, not a declared build requirement",
        evidence={"line": line.line, "module": module, "distribution": dist, "building": built},
        fix=fix(
            f"Build {built or 'the package'} against this environment: {first}pip install "
            f"{name} --no-build-isolation (MAX_JOBS=4 limits the compile's memory), or install "
            f"a prebuilt wheel of {built or 'it'} for this Python, torch and CUDA",
            "manual",
            *([pip_install(dist)] if installed is None else []),
            pip_install(built, flags=("--no-build-isolation",))
            if built
            else manual("pip install --no-build-isolation <the package>"),
        ),
    )


# the command a library's own import guard prints (transformers: "requires Accelerate: `pip
# install 'accelerate>=0.26.0'`", "requires `accelerate>=0.20.1`: ... `pip install accelerate -U`")
_LINE_COMMAND = lazy(
    r"(?:`pip install (?P<upgrade>(?:-U|--upgrade) )?'?|requires `)"
    r"(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]*)"
    r"(?P<spec>(?:[<>=!~]=?[0-9][^`' ,]*)(?:,[<>=!~]=?[0-9][^`' ,]*)*)?'?"
)


# a library's line that asks for its newest release (transformers' import guards)
_LATEST = lazy(r"\b(?:the )?latest (?:version|release)\b")


# a checkout's folders that hold scripts rather than its package's modules
_CHECKOUT_DIRS = frozenset(
    {
        "examples",
        "example",
        "scripts",
        "tools",
        "tests",
        "test",
        "benchmarks",
        "demo",
        "demos",
        "bin",
    }
)
# a path's components, on POSIX and Windows
_PATH_PARTS = lazy(r"[/\\]+")


def _own_checkout(module: str, script: str | None) -> tuple[str, str] | None:
    """(project root, the script) when the innermost frame above `No module named 'X'` is a file
    inside a directory named X outside site-packages (``/content/LLaVA/llava/train/train.py``):
    the job runs a checkout's own code whose package X is neither installed nor on sys.path
    (Python puts the script's directory on it, not the checkout's root). The root is the
    directory above X, or above its ``src/``; X itself when the script is in a scripts folder
    of it (``/content/transformers/examples/run.py``: the checkout is named as its package)."""
    if script is None or "." in module:
        return None
    parts = _PATH_PARTS.split(script)
    at = next((i for i in range(len(parts) - 2, 0, -1) if parts[i] == module), None)
    if at is None:
        return None
    if parts[at - 1] == "src" and at > 1:  # <root>/src/<X>/...: X is the package
        top = parts[: at - 1]
    elif parts[at + 1] in _CHECKOUT_DIRS:  # <X>/examples/run.py: X is the checkout
        top = parts[: at + 1]
    else:
        top = parts[:at]
    sep = "\\" if "\\" in script and "/" not in script else "/"
    root = sep.join(top) or sep
    return (root, script)


def _checkout_not_installed(
    line: LogLine, module: str, own: tuple[str, str], evidence: dict[str, object]
) -> Hit:
    """The checkout's own package is not installed: its editable install (or its root on
    PYTHONPATH) is the fix; `pip install X` would install whatever project the index has under
    that name, not this code."""
    root, script = own
    evidence |= {"checkout": root, "script": script}
    path = (
        f"set PYTHONPATH={root};%PYTHONPATH%"
        if "\\" in root
        else f"export PYTHONPATH={root}:$PYTHONPATH"
    )
    return Hit(
        f"{script} is part of the checkout {root}, whose own package {module} is not installed "
        f"in this interpreter (line {line.line}): running a file inside the package puts only "
        f"its directory on sys.path, not {root}",
        evidence=evidence,
        fix=fix(
            f"Install the checkout's package into the environment that runs the job: cd {root} "
            f"&& pip install -e . (the directory with its setup.py or pyproject.toml), or put "
            f"the checkout on the path: {path}. Do not pip install "
            f"{module}: that installs whatever project the index has under that name, not this "
            "checkout.",
            "manual",
            manual(f"cd {root} && pip install -e ."),
            manual(path),
        ),
    )


def _before(when: object) -> str:
    """The Python minor before ``when`` (3.13 -> 3.12), as a version a user installs."""
    parts = str(when).split(".")
    if len(parts) >= 2 and parts[1].isdigit() and int(parts[1]) > 0:
        return f"{parts[0]}.{int(parts[1]) - 1}"
    return str(when)


def _relative_import(line: LogLine, script: str | None) -> Hit:
    """A package's module run as a script (``python pkg/sub/mod.py``): Python gives it no
    parent package, so ``from . import x`` fails. Run as a module of its package from the
    directory above the package (``python -m pkg.sub.mod``, the form threads establish), or
    install the checkout (``pip install -e .``) and run its entry point. The package path is
    read from the script's path: the directories up to the file, the last one being the
    package the file is in; the root is taken as the directory above it."""
    parts = [p for p in _PATH_PARTS.split(script) if p] if script else []
    evidence: dict[str, object] = {"line": line.line, "script": script}
    if len(parts) >= 2 and parts[-1].endswith(".py"):
        stem = parts[-1].removesuffix(".py")
        package = parts[-2]
        dotted = package if stem == "__main__" else f"{package}.{stem}"
        sep = "\\" if "\\" in (script or "") and "/" not in (script or "") else "/"
        root = sep.join(parts[:-2]) or "."
        if (script or "").startswith(("/", "\\")) and root != ".":
            root = sep + root
        evidence |= {"module": dotted, "root": root}
        run = f"cd {root} && python -m {dotted}" if root != "." else f"python -m {dotted}"
        return Hit(
            f"{script} was run as a script (line {line.line}): it is a module of the package "
            f"{package}, and a file run by path has no parent package for its relative imports",
            evidence=evidence,
            fix=fix(
                f"Run it as a module of its package from the directory above {package}: "
                f"{run} (with its arguments); or install the checkout (pip install -e . in "
                "its root) and run its entry point. Removing the dots from the imports only "
                "moves the failure.",
                "manual",
                manual(run),
                manual("pip install -e .  (in the checkout's root)"),
            ),
        )
    return Hit(
        f"a module of a package was run as a script (line {line.line}): a file run by path has "
        "no parent package for its relative imports",
        evidence=evidence,
        fix=fix(
            "Run it as a module of its package from the directory above the package: "
            "python -m <package>.<module>; or install the checkout (pip install -e .) and run "
            "its entry point",
            "manual",
            manual("python -m <package>.<module>"),
        ),
    )


@rule("PY151", "module-not-found", Severity.ERROR)
def module_not_found(facts: Facts) -> Iterable[Hit]:
    """No installed distribution provides a module the job imports

    ## What it checks
    The interpreter's `No module named 'X'`: the distribution that provides X (the matrix's
    `[[import_name]]` table where the import name differs: cv2 -> opencv-python, yaml ->
    pyyaml, jwt -> pyjwt, Crypto -> pycryptodome, read from each wheel; a namespace package's
    member with a distribution of its own, google.generativeai -> google-generativeai, is
    not installed rather than too old), a compiled submodule of an installed package
    (`vllm._C`: the package's build is incomplete), or a module a release removed (`torch._six`, removed in torch 2.0;
    `distutils`, removed in Python 3.12); transformers' `X requires the Y library but it was not
    found` names the library the same way; `attempted relative import with no known parent
    package` is a package's module run as a script (the file's path names the package and
    its root). Only a log states the failed import.

    ## Why it matters
    An import name is not always the distribution's name, so `pip install X` may install
    nothing or the wrong project; a removed module needs a newer importer, not an install.

    ## Example
    `ModuleNotFoundError: No module named 'cv2'`: `pip install opencv-python`.

    ## Fix
    Install the distribution that provides the module in the interpreter that runs the job
    (`python -m pip install <distribution>`); for a submodule a release added or removed, the
    release the names-by-release table names (`pip install "Y>=A"`, `pip install "Y<R"`), and
    the importing package's release that does not import that module (`pip install "P<F"`);
    for a module run as a script, run it as a module of its package from the directory above
    it (`cd <root> && python -m pkg.module`) or install the checkout (`pip install -e .`).

    ## References
    - python/cpython Lib/importlib/_bootstrap.py ("No module named {!r}"; "attempted relative
      import with no known parent package")
    - matrices/packages/import_names.toml
    - https://github.com/modelscope/ms-swift/issues/637 (get_vllm_engine: install vllm)
    - matrices/generated/python_names.toml (scripts/gen_python_names.py)
    - matrices/generated/importers.toml (scripts/gen_importers.py)
    """
    raise Skip("only a log line states a failed import", "log.imports")


@from_log("PY151")
def module_not_found_in_log(facts: Facts, line: LogLine) -> Hit:
    from envcheck.rules.node.import_releases import by_release, importer_fit, last_clause

    if "attempted relative import" in line.text:
        return _relative_import(line, line.stated.get("script_file"))
    module = line.stated.get("module")
    if module is None:
        raise NotStated(f"line {line.line} is cut before the module name", "packages")
    evidence: dict[str, object] = {"line": line.line, "module": module}
    own = _own_checkout(module, line.stated.get("script_file"))
    if own is not None:
        return _checkout_not_installed(line, module, own, evidence)
    entry = facts.matrix.import_name(module)
    if entry is not None and entry.removed_by and entry.module != module:
        # a curated removal of a parent (pkg_resources): a submodule's own history is closer
        deeper = facts.matrix.python_module(module)
        if deeper is not None and len(deeper.module) > len(entry.module):
            found = by_release(facts, line, deeper, _importer(facts, line, deeper.distribution))
            if found is not None:
                return found
    if entry is not None and entry.removed_by:
        by, when = entry.removed_by, entry.removed_in
        instead = f" (use {entry.replacement})" if entry.replacement else ""
        evidence |= {"removed_by": by, "removed_in": str(when)}
        if by == "python":
            return Hit(
                f"'{module}' is not in the standard library since Python {when} (line "
                f"{line.line}): the importing package predates that Python{instead}",
                evidence=evidence,
                fix=fix(
                    f"Upgrade the package that imports {module} to a release for Python "
                    f">= {when}, provide it another way{instead}, or run on Python < {when}",
                    "manual",
                    manual(
                        f"replacement: {entry.replacement}"
                        if entry.replacement
                        else f"conda create -n py{_before(when).replace('.', '')} "
                        f"python={_before(when)}  (a Python before {when})"
                    ),
                ),
            )
        have = facts.known_version(by)
        here = f" ({by} {have} is installed)" if have is not None else ""
        note = f" {entry.note}" if entry.note else ""
        importer = _importer(facts, line, canonicalize_name(by))
        last, pinned = last_clause(facts, by, by, when, note) if when is not None else ("", [])
        # the job's own code (no site-packages frame) is fixed by the replacement, not an upgrade
        by_hand = (
            f" The job's own code can use {entry.replacement} instead." if entry.replacement else ""
        )
        summary = (
            f"Upgrade {_importer_named(importer, 'the package')} that imports {module} to a "
            f'release made for {by} >= {when}, or install {by}<{when} (pip install "{by}<'
            f'{when}"){last}.{note}{by_hand}'
        )
        actions: list[Action] = [
            *_importer_upgrade(importer, by, when),
            pip_install(f"{by}<{when}"),
            *pinned,
        ]
        fit = importer_fit(
            facts, (canonicalize_name(by), module, None), importer, have, too_old=False
        )
        if fit is not None and fit[1] and importer is not None:
            summary, actions = (
                f"{fit[0]}; or {summary[0].lower()}{summary[1:]}",
                [*fit[1], *actions],
            )
        elif fit is not None and fit[1]:
            summary, actions = f"{summary} Known importers: {fit[0]}", [*actions, *fit[1]]
        return Hit(
            f"'{module}' was removed in {by} {when}{here} (line {line.line}): the package that "
            f"imports it was written for {by} < {when}",
            evidence=evidence,
            fix=fix(summary, "manual", *actions),
        )
    if entry is not None and entry.module == module and (entry.apt or entry.dnf or entry.brew):
        return _stdlib_not_built(line, module, entry, evidence)
    parts = module.split(".")
    dist = distribution_of(facts, module)
    evidence["distribution"] = dist
    installed = facts.known_version(dist)
    private = next((p for p in parts[1:] if p.startswith("_")), None)
    history = facts.matrix.python_module(module) if len(parts) > 1 else None
    if history is not None:
        found = by_release(facts, line, history, _importer(facts, line, dist))
        if found is not None:
            return found
    if len(parts) > 1 and private is not None:
        pin = f"{dist}=={installed}" if installed is not None else dist
        return Hit(
            f"{module} is the compiled part of {dist} (line {line.line}) and it is missing: "
            f"{dist} was installed from a source tree without building its extension, or the "
            f"job runs inside a checkout whose {parts[0]}/ directory shadows the installed "
            "package",
            evidence=evidence,
            fix=fix(
                f"Reinstall {dist} from its wheel (pip install --force-reinstall --no-cache-dir "
                f"{pin}) and run outside its source directory",
                "manual",
                pip_install(pin, flags=("--force-reinstall", "--no-cache-dir")),
                manual(f"python -c 'import {parts[0]}; print({parts[0]}.__file__)'"),
            ),
        )
    # a namespace package's member that a distribution of its own provides (google.protobuf,
    # mpl_toolkits.basemap, ruamel.yaml): missing is not installed, never an older release
    provided = entry is not None and entry.distribution is not None and entry.module == module
    if len(parts) > 1 and not provided:
        # Python names the first component it cannot import: the parent package imported
        holder = f"{dist} {installed}" if installed is not None else f"the installed {dist}"
        return Hit(
            f"{holder} has no module {module} (line {line.line}): the importing "
            f"package was written for another {dist} release",
            evidence=evidence,
            fix=fix(
                f"Install the {dist} release the importing package needs (`pip check`; "
                f"usually pip install -U {dist})",
                "manual",
                pip_install(dist, flags=("--upgrade",)),
                manual("pip check"),
            ),
        )
    built = line.stated.get("extension")
    if built is not None and len(parts) == 1:
        return _missing_in_source_build(line, module, dist, canonicalize_name(built), installed)
    if line.stated.get("isolated_build") is not None and len(parts) == 1:
        # a traceback in pip's isolated build environment (pip-build-env-*/overlay) whose
        # package the log does not name: the same cause, worded without the name
        return _missing_in_source_build(line, module, dist, None, installed)
    if entry is not None and entry.compiled and len(parts) == 1:
        return _compiled_extension_missing(line, module, dist, installed, evidence)
    named = (
        f" (the import name differs from the distribution: {module} comes from {dist})"
        if entry is not None and entry.distribution
        else ""
    )
    note = f" {entry.note}" if entry is not None and entry.note else ""
    floor = _LINE_COMMAND.search(line.text)
    if floor is not None and canonicalize_name(floor.group("name")) == dist and floor.group("spec"):
        # the library's own line names the release it needs ('requires Accelerate: `pip install
        # 'accelerate>=0.26.0'`'): an older one may be installed, so the upgrade is the form
        wanted = f"{floor.group('name')}{floor.group('spec')}"
        return Hit(
            f"{module} {floor.group('spec')} is needed and not importable here (line "
            f"{line.line}): not installed in this interpreter, or an older release is",
            evidence={**evidence, "requires": wanted},
            fix=fix(
                f"Install or upgrade it in the environment that runs the job: python -m pip "
                f'install -U "{wanted}" (then restart the kernel or process)',
                "safe",
                pip_install(wanted, flags=("--upgrade",)),
            ),
        )
    if (
        floor is not None
        and canonicalize_name(floor.group("name")) == dist
        and (floor.group("upgrade") or _LATEST.search(line.text))
    ):
        # the library's own line asks for its latest release ('requires the latest version of
        # bitsandbytes: `pip install -U bitsandbytes`'): installed, but too old for the caller
        return Hit(
            f"{module} is not importable here in a release new enough for the caller (line "
            f"{line.line}): not installed in this interpreter, or an older release is",
            evidence=evidence,
            fix=fix(
                f"Upgrade it in the environment that runs the job, as the line says: python -m "
                f"pip install -U {dist} (then restart the kernel or process)",
                "safe",
                pip_install(dist, flags=("--upgrade",)),
            ),
        )
    return Hit(
        f"no installed distribution provides {module} for this interpreter (line "
        f"{line.line}){named}",
        evidence=evidence,
        fix=fix(
            f"Install {dist} in the environment that runs the job: python -m pip install "
            f"{spelled(module, dist)} "
            f"(if a package's build failed with it, pip built that package in an isolated "
            f"environment: install {dist} first, then pip install --no-build-isolation "
            f"<the package>).{note}",
            "safe",
            pip_install(dist),
        ),
    )

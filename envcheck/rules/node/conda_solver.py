"""PY161/PY162: conda's solver (classic, libsolv in mamba, libmamba) refused the requested set.

PY161 reads the package a refused package requires (`package torchaudio-2.0.2-py310_cu117
requires pytorch-cuda 11.7.*, but none of the providers can be installed`; `nothing provides
requested X`). PY162 is the virtual-package case: conda exposes the system as packages
(`__cuda` from the driver, `__glibc`, `__osx`), and a package's constraint on one of them
(`package cudatoolkit-11.0.3-h15472ef_6 has constraint __cuda >=11.0 conflicting with
__cuda-10.2-0`; `nothing provides __cuda >=12 needed by pytorch-cuda-12.1-...`; classic conda's
`feature:/linux-64::__glibc==2.17=0` ... `Your installed version is: 2.17`) is compared with
what the system has: a constraint the system meets is not the cause (classic conda lists them
for every refusal). conda's own override variable is CONDA_OVERRIDE_<NAME>
(docs.conda.io, "Managing virtual packages").
"""

from __future__ import annotations

from collections.abc import Iterable

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual

# libsolv's wordings (mamba 0.x/1.x, conda-libmamba-solver's first releases)
_CONSTRAINT = lazy(
    r"package (?P<by>\S+) has constraint (?P<virtual>__[a-z0-9_]+) (?P<need>[^ ]+(?: [^ ]+)*?) "
    r"conflicting with (?P=virtual)-(?P<have>[0-9][0-9.]*)"
)
_NOTHING_PROVIDES = lazy(
    r"nothing provides (?:requested )?(?P<virtual>__[a-z0-9_]+)(?: (?P<need>[^ ]+))?"
    r"(?: needed by (?P<by>\S+))?"
)
# classic conda's UnsatisfiableError: "-> __cuda[version='>=11.8']" (stated by the signature)
_CLASSIC_NEED = lazy(r"(?P<virtual>__[a-z0-9_]+)\[version='(?P<need>[^']+)'\]")
_REQUIRES = lazy(
    r"package (?P<by>\S+) requires (?P<req>.+?), but none of the providers can be installed"
)
_NOT_PROVIDED = lazy(
    r"nothing provides (?:requested )?(?P<req>[A-Za-z0-9][^ ]*(?: [^ ]+)?)(?: needed by "
    r"(?P<by>\S+))?"
)


_SPEC_NAME = lazy(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def _specifier(need: str) -> SpecifierSet | None:
    """A conda match spec's version part as a PEP 440 set (`>=11.0`, `11.7.*`, `>=2.17,<3.0.a0`);
    None when it does not read as one."""
    clauses = []
    for clause in need.replace(" ", "").split(","):
        if not clause:
            continue
        clauses.append(f"=={clause}" if clause[0].isdigit() else clause)
    try:
        return SpecifierSet(",".join(clauses))
    except InvalidSpecifier:
        return None


def _floor(spec: SpecifierSet) -> str | None:
    return next((s.version for s in spec if s.operator in (">=", "==", "~=")), None)


@rule("PY161", "conda-solver-refused", Severity.ERROR)
def conda_solver_refused(facts: Facts) -> Iterable[Hit]:
    """conda's solver refused the requested packages: one requires what the rest excludes

    ## What it checks
    conda's and mamba's refusal (`UnsatisfiableError`, `LibMambaUnsatisfiableError`,
    `PackagesNotFoundError`, `ResolvePackageNotFound`) read into the package that requires
    something the request excludes (`package torchaudio-2.0.2-py310_cu117 requires pytorch-cuda
    11.7.*, but none of the providers can be installed`) or a package no channel provides
    (`nothing provides requested pytorch-cuda 12.1`). Only a log states it.

    ## Why it matters
    Nothing is installed; repeating the command fails the same way until a pin moves.

    ## Example
    `package torchaudio-2.0.2-py310_cu117 requires pytorch-cuda 11.7.*, but none of the
    providers can be installed` beside a request for pytorch-cuda 12.1.

    ## Fix
    Request the version the refused package requires (pytorch-cuda 11.7 beside torchaudio
    2.0.2), or unpin the refused package so the solver picks a build that accepts the rest;
    for a package no channel provides, the channel that publishes it (conda-forge; pytorch and
    nvidia for pytorch-cuda) or another version.

    ## References
    - conda/conda conda/exceptions.py (UnsatisfiableError, PackagesNotFoundError)
    - mamba-org/mamba libmamba/src/core/problems_graph.cpp
    """
    raise Skip("only a log line states a conda solver's refusal", "log.resolver")


@rule("PY162", "conda-virtual-package-unmet", Severity.ERROR)
def conda_virtual_package(facts: Facts) -> Iterable[Hit]:
    """conda refused a package whose constraint on the system (__cuda, __glibc) is not met

    ## What it checks
    A conda solver's refusal that names a virtual package: the system's `__cuda` (the newest
    CUDA the driver supports), `__glibc`, `__osx`; the package's constraint on it; and the
    version the system has (`has constraint __cuda >=11.0 conflicting with __cuda-10.2-0`;
    `nothing provides __cuda >=12 needed by pytorch-cuda-12.1-...`: conda found no driver;
    classic conda's `Your installed version is: 2.17`). A constraint the system meets is not
    the cause. Only a log states it.

    ## Why it matters
    The package's CUDA (or glibc) build cannot run on this system, so conda will not install
    it; on a machine without the GPU (a container build, a login node) conda sees no driver
    at all although the nodes that run the job have one.

    ## Example
    `package cudatoolkit-11.0.3-h15472ef_6 has constraint __cuda >=11.0 conflicting with
    __cuda-10.2-0`: the driver supports CUDA 10.2.

    ## Fix
    A driver that supports the CUDA the package needs, or the package's build for the CUDA
    the driver has (conda-forge's cuda-version pinned at or below it); where the install runs
    on another machine than the job (no driver there), conda's override CONDA_OVERRIDE_CUDA
    set to the CUDA the package needs. glibc: an OS (image) with a newer glibc, or an older
    build of the package.

    ## References
    - https://docs.conda.io/projects/conda/en/latest/user-guide/tasks/manage-virtual.html
    - conda/conda conda/exceptions.py (UnsatisfiableError: 'Your installed version is')
    """
    raise Skip("only a log line states a conda solver's refusal", "log.resolver")


def _virtual_hit(
    facts: Facts, line: LogLine, virtual: str, need: str, have: str | None, by: str | None
) -> Hit | None:
    spec = _specifier(need)
    if spec is None:
        raise NotStated(f"line {line.line}: conda's constraint {need!r} does not read", "log")
    if have is not None:
        try:
            if Version(have) in spec:
                return None  # the system meets it: classic conda lists every constraint
        except InvalidVersion:
            pass
    name = virtual.removeprefix("__")
    override = f"CONDA_OVERRIDE_{name.upper()}"
    floor = _floor(spec) or need
    requirer = by or "a requested package"
    system = f"{virtual} {have}" if have else f"no {virtual} (conda detected none)"
    actions: list[Action] = []
    summary: str
    if name == "cuda":
        toolkit = None
        try:
            toolkit = facts.matrix.toolkit(Version(floor))
        except InvalidVersion:
            toolkit = None
        driver = (
            f"an NVIDIA driver >= {toolkit.min_driver} (CUDA {floor})"
            if toolkit is not None and toolkit.min_driver is not None
            else f"an NVIDIA driver that supports CUDA {floor}"
        )
        env_override = manual(
            f"{override}={floor} conda install ...  (where the install runs on a machine other "
            "than the GPU node: a container build, a login node)"
        )
        build = manual(f'conda install "cuda-version<={have}" ...  (the builds for CUDA {have})')
        if have is None:
            actions = [env_override, manual(f"install {driver}")]
            summary = (
                f"conda sees no driver here: set {override}={floor} for the install when the job "
                f"runs on another machine, else install {driver}"
            )
        else:
            actions = [manual(f"install {driver}"), build, env_override]
            summary = (
                f"Install {driver}, or the package's build for CUDA {have} (cuda-version<={have}); "
                f"{override}={floor} only where the install runs on another machine than the job"
            )
    elif name == "glibc":
        actions = [
            manual(f"run on an OS (or base image) with glibc >= {floor}"),
            manual(f"install an older build of {requirer} (one built for glibc {have or 'here'})"),
        ]
        summary = (
            f"{requirer} needs glibc {need}: an OS or base image with glibc >= {floor}, or an "
            "older build of the package"
        )
    else:
        actions = [manual(f"install a build of {requirer} made for this platform")]
        summary = f"{requirer} has no build for this platform ({virtual} {need})"
    return Hit(
        f"conda refused {requirer} (line {line.line}): it needs {virtual}{need} and this system "
        f"has {system}",
        evidence={
            "line": line.line,
            "virtual": virtual,
            "needs": need,
            "has": have,
            "package": by,
        },
        fix=fix(summary, "manual", *actions),
    )


@from_log("PY162")
def conda_virtual_package_in_log(facts: Facts, line: LogLine) -> Hit | None:
    found = _CONSTRAINT.search(line.text)
    if found is not None:
        return _virtual_hit(
            facts,
            line,
            found.group("virtual"),
            found.group("need"),
            found.group("have"),
            found.group("by"),
        )
    found = _NOTHING_PROVIDES.search(line.text)
    if found is not None and found.group("need"):
        return _virtual_hit(
            facts, line, found.group("virtual"), found.group("need"), None, found.group("by")
        )
    stated_need = line.stated.get("conda_virtual_need")
    classic = _CLASSIC_NEED.search(stated_need) if stated_need else None
    if classic is None:
        raise NotStated(
            f"line {line.line} does not state the package's constraint on the system", "log"
        )
    return _virtual_hit(
        facts,
        line,
        classic.group("virtual"),
        classic.group("need"),
        line.stated.get("conda_virtual_have"),
        None,
    )


def _name(build: str) -> str:
    """A conda package file's name (`torchaudio-2.0.2-py310_cu117` -> torchaudio)."""
    parts = build.rsplit("-", 2)
    return parts[0] if len(parts) == 3 else build


@from_log("PY161")
def conda_solver_refused_in_log(facts: Facts, line: LogLine) -> Hit:
    found = _REQUIRES.search(line.text)
    if found is not None:
        by, req = found.group("by"), found.group("req").strip()
        parts = req.split(" ", 1)
        pin = f'"{parts[0]}={parts[1].strip()}"' if len(parts) == 2 else req
        name = _name(by)
        return Hit(
            f"conda refused the requested set (line {line.line}): {by} requires {req}, which the "
            "rest of the request excludes",
            evidence={"line": line.line, "package": by, "requires": req},
            fix=fix(
                f"Request what {name} requires (conda install {pin} {name}), or unpin {name} so "
                f"the solver picks a build that accepts the rest",
                "manual",
                manual(f"conda install {pin} {name}  (the version {by} requires)"),
                manual(f"unpin {name} (or pick the {name} release built for the rest)"),
            ),
        )
    found = _NOT_PROVIDED.search(line.text)
    if found is not None and not found.group("req").startswith("__"):
        req = found.group("req").strip()
        return Hit(
            f"conda's channels provide no {req} (line {line.line})"
            + (f", needed by {found.group('by')}" if found.group("by") else ""),
            evidence={"line": line.line, "missing": req, "package": found.group("by")},
            fix=fix(
                f"Add the channel that publishes {req} (-c conda-forge; -c pytorch -c nvidia for "
                "pytorch-cuda) or request a version the channels have (conda search)",
                "manual",
                manual(f"conda search {req.split(' ')[0]}  (the versions the channels have)"),
                manual("conda install -c conda-forge ...  (or the channel that publishes it)"),
            ),
        )
    missing = line.stated.get("conda_missing")
    if missing is not None:
        return _not_found(line, missing)
    raise NotStated(
        f"line {line.line} does not say which package conflicts (the solver's explanation "
        "follows or is cut off)",
        "log.resolver",
    )


def _not_found(line: LogLine, spec: str) -> Hit:
    """PackagesNotFoundError / ResolvePackageNotFound: the spec the channels lack. A spec with a
    build string (`name==1.2.3=h1234567_0`, as `conda env export` writes it) names a build of
    one platform: the environment file was exported on another one."""
    name = _SPEC_NAME.match(spec)
    package = name.group(0) if name else spec
    if spec.count("=") - spec.count("==") >= 2:
        return Hit(
            f"conda's channels have no build {spec} (line {line.line}): the environment file pins "
            "build strings of the platform it was exported on",
            evidence={"line": line.line, "missing": spec, "package": package},
            fix=fix(
                "Export the environment without build strings (conda env export --no-builds), "
                f"or drop the build string of {package} from the file",
                "manual",
                manual("conda env export --no-builds > environment.yml  (on the source machine)"),
                manual(f"edit environment.yml: {spec} -> {package}  (no version or build)"),
            ),
        )
    return Hit(
        f"conda's channels have no {spec} (line {line.line})",
        evidence={"line": line.line, "missing": spec, "package": package},
        fix=fix(
            f"Add the channel that publishes {package} (-c conda-forge; -c pytorch -c nvidia for "
            "pytorch-cuda), or request a version the channels have (conda search)",
            "manual",
            manual(f"conda search -c conda-forge {package}  (the versions the channels have)"),
        ),
    )

"""Package causes a log line states by itself (`confirms` in matrices/signatures/packages.toml):
NumPy 2's import guard names the NumPy that refused a NumPy-1 module (PKG104), transformers'
torch gate names its floor and the torch it found (PKG108), a start-up check states the range
it wants (PKG101); and sglang looking for FlashInfer under its old name (PKG142). Each finding is
worded from the line and, where known, the node's facts. (PKG140 / PKG141: features.py.)"""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install
from envcheck.rules.node.imports import frame_distribution
from envcheck.rules.node.packages import requirements_in_effect
from envcheck.rules.node.resolver_lines import installed_conflict_hit, stated_conflict

# the last NumPy 1 release: a requirement that excludes it asks for NumPy 2
_LAST_NUMPY1 = Version("1.26.4")


def _needs_numpy2(facts: Facts, numpy: Version) -> list[str]:
    """Installed distributions whose requirement on numpy excludes every NumPy 1 release."""
    try:
        packages = facts.packages()
    except Skip:
        return []
    try:
        markers: dict[str, str] | None = facts.markers()
    except Skip:
        markers = None
    out = []
    for dist in packages.distributions:
        for req in requirements_in_effect(dist, markers):
            spec = req.specifier
            if (
                canonicalize_name(req.name) == "numpy"
                and str(spec)
                and spec.contains(numpy, prereleases=True)
                and not spec.contains(_LAST_NUMPY1)
            ):
                out.append(f"{dist.name} {dist.version} (numpy{spec})")
    return list(dict.fromkeys(out))


@from_log("PKG104")
def numpy1_module_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """NumPy 2 prints 'A module that was compiled using NumPy 1.x cannot be run in NumPy X as
    it may crash' when an extension built against NumPy 1 imports it: the line names the NumPy
    installed, and the module (the traceback above it) needs NumPy 1 or a rebuild."""
    size = _SIZE_CHANGED.search(line.text)
    if size is not None:
        return _numpy_abi_size(facts, line, size.group(1))
    if "_ARRAY_API not found" in line.text:
        # NumPy 1.x's C-API lookup in the extension: NumPy 2 withholds _ARRAY_API from it
        installed = facts.known_version("numpy")
        if installed is not None and installed.major < 2:
            return None
        lookup = "the extension's NumPy 1.x C-API lookup"
        return _numpy1_module(facts, line, installed, lookup, "above")
    found = re.search(r"NumPy ([0-9][0-9.]*[0-9]) as it may crash", line.text)
    if found is None:
        raise NotStated("the line does not name the NumPy release", "packages.numpy")
    numpy = Version(found.group(1))
    if numpy.major < 2:
        return None
    return _numpy1_module(facts, line, numpy, "NumPy's own import guard", "after")


def _numpy1_module(
    facts: Facts, line: LogLine, numpy: Version | None, said: str, frames: str
) -> Hit:
    """A module compiled against NumPy 1.x under NumPy 2 (``numpy`` when the log states it),
    named by the traceback ``frames`` ("after" or "above") the line: numpy<2, or the module's
    release built for NumPy 2 where something here needs NumPy 2."""
    torch = facts.known_version("torch")
    affected = _affected_module(facts, line)
    module = (
        f"torch {torch} (built against NumPy 1 before 2.3)"
        if torch is not None and torch < Version("2.3")
        else f"{affected} (the module the traceback {frames} the line names)"
        if affected is not None
        else "a module loaded here (the traceback above the line names it)"
    )
    upgrade = (
        [manual(f"pip install -U {affected}  (a release built for NumPy 2, NumPy's other advice)")]
        if affected is not None and affected != "torch"
        else []
    )
    needs2 = _needs_numpy2(facts, numpy) if numpy is not None else []
    have = f"numpy {numpy} is installed" if numpy is not None else "NumPy 2 runs"
    message = (
        f"{have} but {module} was compiled against NumPy 1.x (line {line.line}: {said}): it "
        "may crash or fail to import"
    )
    if needs2:
        return Hit(
            message + f"; {', '.join(needs2)} requires NumPy 2, so numpy<2 is not an option",
            evidence={"line": line.line, "numpy": str(numpy), "requires_numpy2": needs2},
            fix=fix(
                f"Upgrade {affected or 'the module compiled against NumPy 1.x'} to a release "
                f"built for NumPy 2 (NumPy's advice on line {line.line}); "
                f"{', '.join(needs2)} rules out numpy<2",
                "manual",
                *(
                    upgrade
                    or [
                        manual(
                            "upgrade (or rebuild) the module the traceback names against NumPy 2"
                        )
                    ]
                ),
            ),
        )
    return Hit(
        message,
        evidence={"line": line.line, "numpy": str(numpy) if numpy is not None else None},
        fix=fix(
            f'Install NumPy 1.x: pip install "numpy<2" (NumPy\'s own advice for line {line.line}; '
            f"numpy=={_LAST_NUMPY1}, the last 1.x release, is what threads pin) and pin it for "
            f"later installs, or upgrade {affected or 'the affected module'} to a release built "
            "for NumPy 2" + (f" (pip install -U {affected})" if upgrade else ""),
            "safe",
            pip_install("numpy<2"),
            manual(f"pip install numpy=={_LAST_NUMPY1}  (the same pin, spelled exactly)"),
            *upgrade,
        ),
    )


_SITE_TOP = lazy(r"[/\\](?:site|dist)-packages[/\\](?P<top>[A-Za-z0-9_]+)")


def _affected_module(facts: Facts, line: LogLine) -> str | None:
    """The distribution of the module NumPy refused: the innermost site-packages frame of the
    traceback NumPy prints after its message (NumPy's own frames left out)."""
    path = line.stated.get("importer_file")
    found = _SITE_TOP.search(path) if path else None
    if found is None or found.group("top").startswith("_"):
        return None
    dist = frame_distribution(facts, found.group("top"))
    return None if dist == "numpy" else dist


# a compiled module's check of NumPy's structure sizes (Cython's size check): the module was
# built against one NumPy ABI (1.x or 2.x) and another loads
_SIZE_CHANGED = lazy(r"numpy\.(dtype|ndarray) size changed, may indicate binary incompatibility")


def _numpy_abi_size(facts: Facts, line: LogLine, what: str) -> Hit:
    """`numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C
    header, got 88 from PyObject`: a compiled module (pandas, scikit-learn, a Cython extension)
    and the installed NumPy are of different ABIs; threads pin NumPy 1.x back (the last, 1.26.4)
    until every compiled module has a build for NumPy 2, or reinstall the module."""
    numpy = facts.known_version("numpy")
    have = f"numpy {numpy}" if numpy is not None else "the installed numpy"
    return Hit(
        f"a compiled module and {have} disagree on the size of numpy.{what} (line {line.line}): "
        "it was built against another NumPy ABI (NumPy 1.x and 2.x differ)",
        evidence={"line": line.line, "numpy": str(numpy) if numpy is not None else None},
        fix=fix(
            f'Install NumPy 1.x: pip install "numpy<2" (numpy=={_LAST_NUMPY1}, the last 1.x '
            "release) and pin it, or reinstall the compiled module the traceback names for "
            "the installed NumPy (pip install --force-reinstall --no-cache-dir <module>)",
            "manual",
            pip_install("numpy<2"),
        ),
    )


def _lower_bound(spec: SpecifierSet) -> Version | None:
    lows = [Version(s.version) for s in spec if s.operator in (">=", ">", "==", "~=")]
    return min(lows) if lows else None


def transformers_below(facts: Facts, torch: Version) -> Version | None:
    """The oldest transformers release the matrix knows to break on ``torch`` (PKG108's
    known-bad table, the [[bound]]s of transformers on torch): installing below it keeps torch."""
    lows: list[Version] = []
    for entry in facts.matrix.known_bad:
        if entry.code != "PKG108":
            continue
        for cond in (entry.when, *entry.when.any):
            need = cond.packages.get("torch")
            have = cond.packages.get("transformers")
            if need is not None and have is not None and need.contains(torch, prereleases=True):
                low = _lower_bound(have)
                if low is not None:
                    lows.append(low)
    for bound in facts.matrix.bounds:
        if (
            canonicalize_name(bound.package) == "transformers"
            and canonicalize_name(bound.dependency) == "torch"
            and not bound.allowed.contains(torch, prereleases=True)
        ):
            low = _lower_bound(bound.versions)
            if low is not None:
                lows.append(low)
    return min(lows) if lows else None


@from_log("PKG108")
def transformers_torch_gate_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """transformers prints 'Disabling PyTorch because PyTorch >= X is required but found Y'
    (utils/import_utils.py) and runs without torch: the line names its floor and the torch
    installed. The fix keeps torch (often the newest the node supports) and moves transformers
    below the oldest release the matrix knows to need more than it."""
    found = re.search(r"PyTorch >= ([0-9][0-9.]*) is required but found ([0-9][^ ,;]*)", line.text)
    if found is None:
        raise NotStated("the line is cut before the torch it found", "packages.torch")
    try:
        floor, torch = Version(found.group(1)), Version(found.group(2).rstrip("."))
    except InvalidVersion:
        raise NotStated("the line's versions are not readable", "packages.torch") from None
    if Version(torch.base_version) >= floor:
        return None
    below = transformers_below(facts, Version(torch.base_version))
    transformers = facts.known_version("transformers")
    have = (
        f"transformers {transformers}" if transformers is not None else "the installed transformers"
    )
    message = (
        f"{have} needs torch >= {floor} but torch {torch} is installed (line {line.line}): "
        "it disables its PyTorch backend and the AutoModel classes go missing"
    )
    evidence = {"line": line.line, "torch": str(torch), "transformers_needs": f"torch>={floor}"}
    if below is None:
        raise Skip("no transformers release the matrix knows works with this torch")
    return Hit(
        message,
        evidence={**evidence, "transformers_below": str(below)},
        fix=fix(
            f"Install transformers<{below} (the releases before {below} support torch {torch}), "
            f"or upgrade torch to >= {floor}",
            "safe",
            pip_install(f"transformers<{below}"),
        ),
    )


_STATED_REQUIRES = lazy(r"^(?P<by>[A-Za-z0-9][A-Za-z0-9._-]*) requires (?P<req>\S+)$")


@from_log("PKG101")
def runtime_check_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """A package's own start-up check raised (LLaMA-Factory's check_dependencies, the traceback
    naming the range it checks): the installed release is outside that range, or missing. The
    range is what the log states (up to where the line is cut). transformers' require_version
    line states the range and the release it found by itself (rules/node/version_checks.py), and
    a guard worded as a bound and a side, numba's 'needs NumPy 2.1 or less', the pin that bound
    makes (rules/node/version_guards.py)."""
    from envcheck.rules.node.jax_versions import is_jax_check, jax_check_in_log
    from envcheck.rules.node.version_checks import REQUIRED_FOUND, version_check_in_log
    from envcheck.rules.node.version_guards import states_guard, version_guard_in_log

    if REQUIRED_FOUND.search(line.text) is not None:
        return version_check_in_log(facts, line)
    if states_guard(line.text):  # 'Numba needs NumPy 2.1 or less. Got NumPy 2.2.'
        return version_guard_in_log(facts, line)
    if is_jax_check(line.text):  # jax, jaxlib and the CUDA plugin from other releases
        return jax_check_in_log(facts, line)
    # pip's check, pkg_resources: the installed set; after pip's 'dependency resolver does not
    # currently take into account' header, the first conflict line below it (`requires`)
    conflict = stated_conflict(line.text) or stated_conflict(line.stated.get("requires", ""))
    if conflict is not None and not conflict.resolver:
        return installed_conflict_hit(facts, line, conflict)
    signature = next((s for s in facts.matrix.signatures if s.id == line.signature), None)
    stated = _STATED_REQUIRES.match(line.stated.get("requires", ""))
    if stated is not None and (signature is None or stated.group("by") != signature.requirer):
        stated = None  # a requirement some other line states, not this check's
    if stated is None:
        raise NotStated("the log is cut before the range the check names", "packages.requires")
    try:
        req = Requirement(stated.group("req"))
    except InvalidRequirement:
        raise NotStated("the range the check names is not readable", "packages.requires") from None
    by, name = stated.group("by"), req.name
    installed = facts.known_version(name)
    if installed is not None and req.specifier.contains(installed, prereleases=True):
        return None
    have = f"{name} {installed} is installed" if installed is not None else f"the installed {name}"
    clauses = sorted(req.specifier, key=lambda s: (s.operator != ">=", s.operator != "<=", str(s)))
    inside = " and ".join(f"{name}{s}" for s in clauses)
    return Hit(
        f"{by}'s start-up check refused {name} (line {line.line}): {by} requires "
        f"{name}{req.specifier}, and {have} is outside it or missing",
        evidence={"line": line.line, "package": by, "requires": str(req)},
        fix=fix(
            f"Install a {name} inside {by}'s range ({inside}, as the log states it), or move "
            f"{by} to a release that supports the {name} installed",
            "unsafe",
            pip_install(str(req)),
        ),
    )


# sglang releases whose start-up check reads the distribution 'flashinfer' (FlashInfer 0.1.x's
# name), and the first that reads 'flashinfer_python': sglang/srt/server.py (and the srt extra's
# Requires-Dist) in the PyPI wheels py3-none-any of sglang 0.3.6 (sha256
# 00b98a4d81d7a0773faaafc6b8bf997e52c539ddf0ca7f2ad15133d5feb62740), 0.4.1 (eec41a21d0d0abd4...),
# 0.4.1.post7 (3eff86713eb47cf2...) and 0.4.2 (4ae7e3ef76c7ac61e1af25a315a5b61f6894d91bab6d6a266489717d72185d2c):
# assert_pkg_version("flashinfer", "0.1.6"), flashinfer==0.1.6; 0.4.3
# (2ce4a5385a0319fe70c2087b3def17ccb174deab1be1d4448eed430b3066d60b):
# assert_pkg_version("flashinfer_python", "0.2.1.post1"), flashinfer_python>=0.2.1.post1.
SGLANG_OLD_FLASHINFER = SpecifierSet(">=0.3.6,<=0.4.2")
SGLANG_NEW_FLASHINFER = "0.4.3"


@rule("PKG142", "sglang-flashinfer-renamed", Severity.ERROR)
def sglang_flashinfer_renamed(facts: Facts) -> Iterable[Hit]:
    """sglang looks for FlashInfer under its old distribution name

    ## What it checks
    An sglang release whose start-up check reads the distribution `flashinfer` (0.3.6 to 0.4.2)
    on a node where FlashInfer is installed as `flashinfer-python` (FlashInfer 0.2 and later)
    and no `flashinfer` distribution is present.

    ## Why it matters
    sglang refuses to start: `importlib.metadata.PackageNotFoundError: flashinfer`, then
    `flashinfer with minimum required version 0.1.6 is not installed`, although FlashInfer is
    installed.

    ## Example
    sglang 0.4.1 with flashinfer-python 0.2.0 from the cu124/torch2.5 index.

    ## Fix
    Upgrade sglang to 0.4.3 or newer (its check reads `flashinfer_python`, >= 0.2.1.post1):
    `pip install --upgrade 'sglang[srt]>=0.4.3'`.

    ## References
    - https://github.com/flashinfer-ai/flashinfer/issues/794
    - sglang/srt/server.py in the PyPI wheels of sglang 0.3.6-0.4.2 and 0.4.3
    """
    sglang = facts.version("sglang")
    if sglang is None or not SGLANG_OLD_FLASHINFER.contains(sglang, prereleases=True):
        return []
    renamed = facts.version("flashinfer-python")
    if renamed is None or facts.version("flashinfer") is not None:
        return []
    want = f"sglang[srt]>={SGLANG_NEW_FLASHINFER}"
    return [
        Hit(
            f"sglang {sglang} checks the distribution 'flashinfer', but FlashInfer is installed "
            f"as flashinfer-python {renamed}: sglang refuses to start (PackageNotFoundError: "
            "flashinfer)",
            evidence={"sglang": str(sglang), "flashinfer-python": str(renamed)},
            fix=fix(
                f"Upgrade sglang to {SGLANG_NEW_FLASHINFER} or newer, whose check reads "
                "flashinfer_python (>= 0.2.1.post1)",
                "safe",
                pip_install(want, flags=("--upgrade",)),
            ),
        )
    ]

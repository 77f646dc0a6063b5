"""PKG and VLM: installed distributions' requirements, duplicates, NumPy 2, and vLLM's torch."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import public
from envcheck.model.finding import Fix, Severity
from envcheck.model.report import Distribution
from envcheck.names import canonicalize_name
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, rule
from envcheck.rules.extension_builds import extension_installs
from envcheck.rules.fixes import fix, manual, pip_install

_CUDA_DIST = ("nvidia-", "cuda-toolkit", "cuda-bindings")
_COMPANIONS = {"torchvision", "torchaudio", "xformers"}


@functools.lru_cache(maxsize=8192)
def _parse(line: str) -> Requirement | None:
    try:
        return Requirement(line)
    except InvalidRequirement:
        return None


# `name ...; extra == "x"`, and `name ...; P and extra == "x"` where the marker is a conjunction
# at its top level (P one parenthesised group, or P without parentheses and without `or`, which
# binds looser than `and`): never in effect when no extra is selected, whatever P says (and a P
# that does not parse makes the line one the rule skips as well). Most of an ML environment's
# Requires-Dist lines are of these forms (623 of 690 in the development venv), so
# recognising them by their text skips parsing them at all. Lines with a URL (`@`) are left to
# the parser: in `pkg @ https://h/x.whl;extra=="x"` everything after `@` is the URL.
_EXTRA_ONLY = lazy(
    r"""^[^;@]*;\s*(?:(?:\([^()]*\)|(?:(?!\bor\b)[^()])*?)\s*\band\s+)?"""
    r"""extra\s*==\s*(?:"[^"]+"|'[^']+')\s*$"""
)


@functools.lru_cache(maxsize=8192)
def _extra_only(line: str) -> bool:
    """``_EXTRA_ONLY`` matches the line (asked again for each rule and plan round that reads
    the requirements: the pattern's scan of a line costs more than the lookup)."""
    return _EXTRA_ONLY.match(line) is not None


def requirements_in_effect(dist: Distribution, markers: dict[str, str] | None) -> list[Requirement]:
    """A distribution's requirements whose markers hold on this node (no extras selected).
    With the marker environment unknown (``None``), only the requirements without a marker:
    those hold on every node (pip's resolver lines in a log state them so)."""
    env = {**(markers or {}), "extra": ""}
    out = []
    for line in dist.requires:
        if _extra_only(line):
            continue
        req = _parse(line)
        if req is None:
            continue
        if req.marker is not None and (markers is None or not req.marker.evaluate(env)):
            continue
        out.append(req)
    return out


def _bounded(facts: Facts, dist: Distribution, dependency: str) -> bool:
    """A matrix ``[[bound]]`` covers this pair: PKG110 reports it, with the bound's reason."""
    version = _version(dist)
    return version is not None and any(
        canonicalize_name(b.dependency) == dependency
        for b in facts.matrix.bounds_for(dist.name, version)
    )


def _covered_elsewhere(
    dependent: str, dependency: str, installed: Version | None, spec: SpecifierSet
) -> bool:
    """Pairs a dedicated rule reports with a better message."""
    if dependent == "torch" and dependency.startswith(_CUDA_DIST):
        return True  # CUD101
    if dependent == "vllm" and dependency in {"torch", "torchvision", "xformers"}:
        return True  # VLM101, TOR104
    if dependent in _COMPANIONS and dependency == "torch":
        return True  # TOR104
    return dependency == "numpy" and installed is not None and installed.major >= 2  # PKG104


def _version(dist: Distribution) -> Version | None:
    try:
        return Version(dist.version)
    except InvalidVersion:
        return None


@rule("PKG101", "unmet-requirements", Severity.WARNING)
def unmet_requirements(facts: Facts) -> Iterable[Hit]:
    """Installed distributions whose requirements are not met

    ## What it checks
    What `pip check` checks, without pip: every installed distribution's `Requires-Dist`,
    evaluated with this node's own PEP 508 marker environment (no extras), against the versions
    installed. Pairs a more specific rule explains (torch's CUDA wheels, vLLM's torch, packages
    built against torch, NumPy 2) are left to those rules.

    ## Why it matters
    pip installs whatever the last command asked for and only warns about what it broke; the
    next import or the first code path that needs the newer API fails, hours into a run.

    ## Example
    transformers 4.45.2 requires tokenizers<0.21,>=0.20, but tokenizers 0.21.0 is installed.

    ## Fix
    Install a version that meets the requirement, or align the package that requires it;
    resolve the whole set with a lock (`envcheck lock`) rather than one package at a time.

    ## References
    - https://pip.pypa.io/en/stable/cli/pip_check/
    - https://packaging.python.org/en/latest/specifications/dependency-specifiers/
    """
    packages = facts.packages()
    if not any(d.requires for d in packages.distributions):
        raise Skip(
            "no distribution carries requirements (declared packages list versions only)",
            "packages.requirements",
        )
    markers: dict[str, str] | None
    try:
        markers = facts.markers()
    except Skip:
        if not any(d.location and d.location.startswith("log") for d in packages.distributions):
            raise
        markers = None  # a log's requirements: pip already evaluated their markers
    seen: set[str] = set()
    hits = []
    unknown: str | None = None  # a required package a partial list does not show
    for dist in packages.distributions:
        if dist.key in seen:
            continue
        seen.add(dist.key)
        problems, wanted = [], []
        for req in requirements_in_effect(dist, markers):
            name = canonicalize_name(req.name)
            other = packages.get(name)
            installed = _version(other) if other else None
            if _covered_elsewhere(dist.key, name, installed, req.specifier):
                continue
            if installed is not None and _bounded(facts, dist, name):
                continue
            if other is None and packages.partial:
                unknown = unknown or name  # not listed is not "not installed" on a partial list
                continue
            if other is None:
                problems.append(f"requires {req.name}{req.specifier}, which is not installed")
                wanted.append(f"{req.name}{req.specifier}")
            elif installed is not None and not req.specifier.contains(installed, prereleases=True):
                problems.append(
                    f"requires {req.name}{req.specifier}, but {other.version} is installed"
                )
                wanted.append(f"{req.name}{req.specifier}")
        if problems:
            label = dist.name if dist.version == "unknown" else f"{dist.name} {dist.version}"
            stated = f" (stated on {dist.location})" if dist.location else ""
            switch = (
                f"; or, keeping both, set {dist.check_switch} to skip {dist.name}'s own check "
                f"(its advice on {dist.location or 'the line'}, at the risk the range protects "
                "against)"
                if dist.check_switch
                else ""
            )
            built, built_actions, plain = extension_installs(facts, wanted)
            hits.append(
                Hit(
                    f"{label} {'; '.join(problems)}{stated}",
                    evidence={"package": dist.name, "version": dist.version, "unmet": problems},
                    fix=fix(
                        f"Install what {dist.name} requires, or move {dist.name} to a release "
                        f"whose requirements allow what is installed{switch}{built}",
                        "unsafe",
                        *built_actions,
                        *([pip_install(*plain)] if plain else []),
                    ),
                )
            )
    if not hits and unknown is not None:
        raise Skip(
            f"{unknown} is not in the package list, which is partial ({packages.partial})",
            f"packages.{unknown}",
        )
    return hits


@rule("PKG102", "duplicate-distribution", Severity.WARNING)
def duplicate_distribution(facts: Facts) -> Iterable[Hit]:
    """The same distribution is installed twice on sys.path

    ## What it checks
    Distributions found in more than one `sys.path` entry (user site-packages and a venv, a
    conda env and `PYTHONPATH`, two copies in one site-packages).

    ## Why it matters
    Python imports the first copy on `sys.path`; pip and `importlib.metadata` may report the
    other. A numpy 2 in `~/.local` shadows the venv's numpy 1.26 and breaks torch < 2.3, while
    `pip list` in the venv shows 1.26.

    ## Example
    numpy 2.1.0 in ~/.local/lib/python3.10/site-packages shadows numpy 1.26.4 in the venv.

    ## Fix
    Remove the copy that should not be there (often the user site: `pip uninstall --user`, or
    run Python with `PYTHONNOUSERSITE=1`).

    ## References
    - https://docs.python.org/3/library/site.html
    """
    hits = []
    for name, copies in facts.packages().duplicates().items():
        first, *others = copies
        shadowed = ", ".join(f"{d.version} in {d.location}" for d in others)
        hits.append(
            Hit(
                f"{first.name} is installed {len(copies)} times: {first.version} in {first.location} "
                f"(the one imported) shadows {shadowed}",
                evidence={
                    "package": name,
                    "copies": [{"version": d.version, "location": d.location} for d in copies],
                },
                fix=fix(
                    f"Remove the extra copies of {first.name}",
                    "manual",
                    manual(
                        f"remove the copies of {first.name} that should not be on sys.path ({first.location} or {others[0].location})"
                    ),
                ),
            )
        )
    return hits


def _numpy_caps(facts: Facts, numpy: Version) -> list[tuple[str, SpecifierSet]]:
    """The packages that require NumPy 1 here: (label, what they require of numpy)."""
    packages = facts.packages()
    try:
        markers = facts.markers()
    except Skip:
        markers = {}
    cappers: list[tuple[str, SpecifierSet]] = []
    seen: set[str] = set()
    for dist in packages.distributions:
        if dist.key in seen:
            continue
        seen.add(dist.key)
        reqs = (
            requirements_in_effect(dist, markers)
            if markers
            else [r for line in dist.requires if (r := _parse(line))]
        )
        for req in reqs:
            if canonicalize_name(req.name) == "numpy" and not req.specifier.contains(
                numpy, prereleases=True
            ):
                cappers.append(
                    (f"{dist.name} {dist.version} (numpy{req.specifier})", req.specifier)
                )
    try:
        vllm, vllm_dist = facts.version("vllm"), facts.dist("vllm")
    except Skip:  # a partial list without vLLM: the requirements above still decide
        if cappers:
            return cappers
        raise
    if vllm is not None and vllm_dist is not None and not vllm_dist.requires:
        release = facts.matrix.vllm_release(vllm)
        if (
            release
            and release.numpy is not None
            and not release.numpy.contains(numpy, prereleases=True)
        ):
            cappers.append((f"vllm {vllm} (numpy{release.numpy}, from the matrix)", release.numpy))
    return cappers


@rule("PKG104", "numpy2-with-numpy1-pins", Severity.ERROR)
def numpy2_capped(facts: Facts) -> Iterable[Hit]:
    """NumPy 2 is installed but packages here require NumPy 1

    ## What it checks
    NumPy >= 2 against every installed distribution that requires `numpy<2` (vLLM <= 0.8.0, verl,
    OmniGibson, Isaac Lab and many compiled extensions); for declared nodes, vLLM's cap from the
    matrix.

    ## Why it matters
    Packages capped at NumPy 1 usually ship extensions compiled against the NumPy 1 C API:
    `A module that was compiled using NumPy 1.x cannot be run in NumPy 2.x as it may crash`,
    `_ARRAY_API not found`. Something installed later (a plotting or data library) pulls NumPy 2
    in silently.

    ## Example
    numpy 2.1.3 with vllm 0.6.3 (numpy<2.0.0) and verl (numpy<2.0.0).

    ## Fix
    `pip install 'numpy<2'` (or the exact pin one of the packages names when every other accepts
    it: Isaac Sim 5.0's `numpy==1.26.0`), and keep it in a constraints file used for every
    later install.

    ## References
    - https://github.com/pytorch/pytorch/issues/132179
    - PyPI wheel metadata of vllm 0.6.3 (numpy<2.0.0)
    - volcengine/verl setup.py (numpy<2.0.0)
    """
    numpy = facts.version("numpy")
    if numpy is None or numpy.major < 2:
        return []
    found = _numpy_caps(facts, numpy)
    if not found:
        return []
    cappers = [label for label, _ in found]
    # an exact pin one of them names and all of them accept (isaacsim-kernel's numpy==1.26.0)
    pins = [s.version for _, spec in found for s in spec if s.operator == "=="]
    pin = next((p for p in pins if all(spec.contains(p) for _, spec in found)), None)
    wanted = f"numpy=={pin}" if pin else "numpy<2"
    return [
        Hit(
            f"numpy {numpy} is installed but {', '.join(cappers)} "
            f"{'requires' if len(cappers) == 1 else 'require'} NumPy 1: 'A module that was compiled using "
            "NumPy 1.x cannot be run in NumPy 2'",
            evidence={"numpy": str(numpy), "requires_numpy1": cappers},
            fix=fix(
                f"Install NumPy 1.x ({wanted}, which every package here that needs NumPy 1 accepts) "
                "and pin it for later installs",
                "safe",
                pip_install(wanted),
            ),
        )
    ]


@rule("PKG105", "broken-dist-info", Severity.WARNING)
def broken_dist_info(facts: Facts) -> Iterable[Hit]:
    """Broken distribution metadata on sys.path

    ## What it checks
    `*.dist-info` / `*.egg-info` directories without a METADATA file, a Name or a Version.

    ## Why it matters
    They are leftovers of interrupted installs or manual copies. pip cannot uninstall or upgrade
    what they describe, `importlib.metadata` returns None for them, and tools that read versions
    (including transformers' dependency checks) crash on them.

    ## Example
    site-packages/torch-2.4.0.dist-info without METADATA after a killed `pip install`.

    ## Fix
    Delete the broken directory, then reinstall the package.

    ## References
    - https://packaging.python.org/en/latest/specifications/recording-installed-packages/
    """
    broken = facts.packages().broken
    return [
        Hit(
            f"broken distribution metadata: {b.path} ({b.reason})",
            evidence={"path": b.path, "reason": b.reason},
            fix=fix(
                "Delete the broken metadata directory and reinstall",
                "manual",
                manual(f"rm -r {b.path}; then reinstall the package"),
            ),
        )
        for b in broken
    ]


def _vllm_pins(facts: Facts, vllm: Version) -> tuple[dict[str, SpecifierSet], str]:
    dist = facts.dist("vllm")
    if dist is not None and dist.requires:
        try:
            markers = facts.markers()
        except Skip:
            markers = {}
        reqs = (
            requirements_in_effect(dist, markers)
            if markers
            else [r for line in dist.requires if (r := _parse(line))]
        )
        pins: dict[str, SpecifierSet] = {
            str(canonicalize_name(r.name)): r.specifier
            for r in reqs
            if canonicalize_name(r.name) in {"torch", "torchvision"}
        }
        if "torch" in pins:
            return pins, "vllm's own requirements"
    release = facts.matrix.vllm_release(vllm)
    if release is None or release.torch is None:
        raise Skip(f"vllm {vllm}'s torch pin is unknown (not in the matrix or UNVERIFIED)")
    matrix_pins: dict[str, SpecifierSet] = {"torch": release.torch}
    if release.torchvision is not None:
        matrix_pins["torchvision"] = release.torchvision
    return matrix_pins, "the matrix"


def _built_against(spec: SpecifierSet) -> str:
    """The pin as a requirement on the torch the wheel was compiled against: `==X` as it is; a
    bare floor `>=X` (vLLM 0.2.0, 0.2.2-0.2.5 published only a floor) as `==X`: those wheels
    were built on the floor's release (vllm#1661: "vLLM 0.2.2 ... will use PyTorch 2.1.0"), and
    `>=X` would let pip pick a newer torch whose C++ ABI the compiled ops do not match."""
    parts = list(spec)
    if len(parts) == 1 and parts[0].operator == ">=":
        return f"=={parts[0].version}"
    return str(spec)


def _vllm_fix(facts: Facts, pins: dict[str, SpecifierSet]) -> Fix:
    torch_pin = _built_against(pins["torch"])
    vision = pins.get("torchvision")
    wanted = [f"torch{torch_pin}"] + ([f"torchvision{_built_against(vision)}"] if vision else [])
    url = None
    build = facts.torch() if facts.version("torch") is not None else None
    target = Version(torch_pin.removeprefix("==")) if torch_pin.startswith("==") else None
    release = facts.matrix.torch_release(target) if target else None
    if (
        build is not None
        and build.local_label
        and release
        and build.local_label in release.variants
    ):
        url = facts.matrix.torch_index_url(build.local_label)
    return fix(
        f"Install the torch vLLM was built against ({torch_pin.removeprefix('==')})",
        "unsafe",
        pip_install(*wanted, index_url=url),
    )


@rule("VLM101", "vllm-torch-pin-unmet", Severity.ERROR)
def vllm_torch_pin(facts: Facts) -> Iterable[Hit]:
    """vLLM's exact torch pin is not met

    ## What it checks
    vLLM pins torch (and torchvision) with `==` in every release; the installed torch's release
    against that pin (from vLLM's own metadata, or the matrix for declared nodes).

    ## Why it matters
    vLLM's custom ops (`vllm/_C.abi3.so`) are compiled against one torch; any other fails at
    import: `undefined symbol: _ZN5torch7LibraryC1...`. The usual way here is the trap in
    reverse: `pip install vllm` uninstalls the torch you chose (and its CUDA variant), or a later
    `pip install torch==X` replaces vLLM's.

    ## Example
    vllm 0.6.3 requires torch==2.4.0; torch 2.5.1 is installed.

    ## Fix
    Install the pinned torch and torchvision (from the index of the CUDA variant you use), or
    choose the vLLM release whose pin is the torch you want; install vLLM first and pin the rest
    with a constraints file. A release that published only a floor (vLLM 0.2.0,
    0.2.2-0.2.5: `torch>=2.1.0`) is met by the floor's release (its ops were compiled against it),
    not by the newest torch `>=` would let pip pick.

    ## References
    - https://github.com/vllm-project/vllm/issues/5501
    - https://github.com/vllm-project/vllm/issues/1661
    - https://github.com/vllm-project/vllm/issues/34224
    - https://github.com/vllm-project/vllm/pull/2804
    """
    vllm = facts.version("vllm")
    if vllm is None:
        return []
    pins, origin = _vllm_pins(facts, vllm)
    torch = facts.version("torch")
    if torch is not None and pins["torch"].contains(public(torch), prereleases=True):
        return []
    have = f"torch {torch} is installed" if torch is not None else "torch is not installed"
    return [
        Hit(
            f"vllm {vllm} requires torch{pins['torch']} ({origin}), but {have}: vLLM's compiled ops fail "
            "with 'undefined symbol' against any other torch",
            evidence={
                "vllm": str(vllm),
                "requires": str(pins["torch"]),
                "torch": str(torch) if torch else None,
            },
            fix=_vllm_fix(facts, pins),
        )
    ]

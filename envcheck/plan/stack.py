"""Choose a stack for a target: the torch build its driver runs with kernels for every GPU, the
vLLM/torch pairing the matrix allows, and known-good overrides. Every choice carries a reason
that the emitters print as comments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from envcheck.matrix.model import Matrix, cuda_variant, major_minor, parse_version, variant_cuda
from envcheck.matrix.schema import TorchRelease, VllmRelease
from envcheck.model.finding import Severity
from envcheck.model.plan import Choice, Conflict, Stack, Target
from envcheck.rules.base import Rule
from envcheck.rules.choose import (
    BuildVerdict,
    bound_constraints,
    driver_max_cuda,
    driver_needed,
    driver_text,
    judge_build,
    sm,
)

_LIMITS = (
    "PTX JIT of code built by a newer toolkit ('the provided PTX was compiled with an "
    "unsupported toolchain'), and CUDA container images whose NVIDIA_REQUIRE_CUDA demands a "
    "newer driver (they refuse to start)"
)
_RANK = {"full": 0, "minor-compat": 1, None: 0}


@dataclass(frozen=True)
class _Hardware:
    ccs: tuple[tuple[str, Version], ...]
    driver: Version | None
    driver_text: str
    max_cuda: Version | None
    max_cuda_source: str
    python: Version
    unknown_gpus: tuple[str, ...]
    pypi: dict[Version, str | None] = field(default_factory=dict)  # release -> PyPI's variant


def pypi_variant(matrix: Matrix, release: TorchRelease, arch: str) -> str | None:
    """The CUDA variant of PyPI's wheel of ``release`` for ``arch``: on aarch64 the generated
    [[torch_wheel]] table's (PyPI's aarch64 torch up to 2.10 pins no CUDA library: a CPU
    build, so a CUDA build comes from a variant's index), elsewhere the release's default."""
    if arch != "aarch64":
        return release.pypi_default
    wheel = matrix.generated.torch(release.version, "aarch64")
    return wheel.variant if wheel is not None and not wheel.unknown else None


def _hardware(matrix: Matrix, target: Target) -> _Hardware:
    ccs: list[tuple[str, Version]] = []
    unknown: list[str] = []
    declared_cc = parse_version(target.compute_capability)
    for name in dict.fromkeys(target.gpus):
        model = matrix.gpu_model(name)
        cc = declared_cc or (model.compute_capability if model else None)
        if cc is None:
            unknown.append(name)
        else:
            ccs.append((name, cc))
    if declared_cc is not None and not target.gpus:
        ccs.append((f"compute capability {declared_cc}", declared_cc))
    driver = parse_version(target.driver)
    max_cuda, source = (None, "driver not declared")
    if driver is not None:
        max_cuda, source = driver_max_cuda(matrix, driver, parse_version(target.max_cuda))
    python = parse_version(target.python)
    if python is None:
        python = Version("0")
    return _Hardware(
        tuple(ccs),
        driver,
        target.driver or "unknown",
        max_cuda,
        source,
        python,
        tuple(unknown),
        {r.version: pypi_variant(matrix, r, target.arch) for r in matrix.torch_releases},
    )


def _wanted(requirements: Sequence[str]) -> dict[str, Requirement]:
    out: dict[str, Requirement] = {}
    for text in requirements:
        req = Requirement(text)
        key = canonicalize_name(req.name)
        if key in out:
            merged = out[key].specifier & req.specifier
            extras = sorted(out[key].extras | req.extras)
            name = req.name + (f"[{','.join(extras)}]" if extras else "")
            req = Requirement(f"{name}{merged}" + (f"; {req.marker}" if req.marker else ""))
        out[key] = req
    return out


def _pinned_label(req: Requirement | None) -> str | None:
    """cu121 for ``torch==2.4.0+cu121``."""
    if req is None:
        return None
    for spec in req.specifier:
        if spec.operator == "==" and "+" in spec.version:
            return spec.version.split("+", 1)[1]
    return None


def _public_spec(req: Requirement | None) -> SpecifierSet:
    if req is None:
        return SpecifierSet()
    return SpecifierSet(",".join(str(s).split("+", 1)[0] for s in req.specifier))


@dataclass(frozen=True)
class _Pick:
    verdict: BuildVerdict
    passed_over: tuple[BuildVerdict, ...]  # other builds of the chosen release that do not fit
    newer_rejected: tuple[BuildVerdict, ...]  # builds of newer releases that do not fit


def _order(
    release: TorchRelease, verdicts: list[BuildVerdict], hw: _Hardware
) -> list[BuildVerdict]:
    """Fitting builds best first: the PyPI wheel when the driver fully runs it, then fully
    supported builds (newest CUDA first), then the PyPI wheel and others through minor-version
    compatibility."""

    def key(v: BuildVerdict) -> tuple[int, int, str]:
        default = 0 if v.variant == hw.pypi.get(release.version) else 1
        return (_RANK[v.support], default, "" if default == 0 else _neg(v.variant))

    return sorted((v for v in verdicts if v.fits), key=key)


def _neg(variant: str) -> str:
    digits = "".join(c for c in variant if c.isdigit())
    return "".join(chr(ord("9") - int(c) + ord("0")) for c in digits.zfill(4))


def _choose_torch(
    matrix: Matrix,
    hw: _Hardware,
    spec: SpecifierSet,
    *,
    variants: Sequence[str] | None,
    allow_unverified: bool,
) -> tuple[_Pick | None, list[BuildVerdict], list[str]]:
    """The newest release in ``spec`` with a fitting build; else every verdict, and notes."""
    py = f"{hw.python.major}.{hw.python.minor}"
    pool = [r for r in matrix.torch_releases if spec.contains(r.version, prereleases=True)]
    pool.sort(key=lambda r: r.version, reverse=True)
    notes: list[str] = []
    exact = any(s.operator == "==" for s in spec)
    rejected: list[BuildVerdict] = []
    unverified = [r for r in pool if not r.verified and not exact and not allow_unverified]
    if unverified:
        skipped = ", ".join(str(r.version) for r in sorted(unverified, key=lambda r: r.version))
        notes.append(
            f"torch {skipped} not considered: UNVERIFIED in the matrix (--allow-unverified)"
        )
    no_wheels: list[TorchRelease] = []  # newest first: said once, however many there are
    for release in pool:
        if release in unverified:
            continue
        if py not in release.python:
            no_wheels.append(release)
            continue
        names = variants if variants is not None else release.variants
        verdicts = _verdicts(matrix, hw, release, names, accept_unverified=False)
        ordered = _order(release, verdicts, hw)
        if not ordered and exact:
            verdicts = _verdicts(matrix, hw, release, names, accept_unverified=True)
            ordered = _order(release, verdicts, hw)
            if ordered:
                notes.append(
                    f"the arch list of torch {ordered[0].label} is UNVERIFIED in the matrix: "
                    "that it has kernels for these GPUs is assumed, not checked"
                )
        if ordered:
            others = tuple(v for v in verdicts if not v.fits)
            return (
                _Pick(ordered[0], others, tuple(rejected)),
                rejected,
                notes + _no_wheels(no_wheels, py),
            )
        rejected.extend(verdicts)
    return None, rejected, notes + _no_wheels(no_wheels, py)


def _no_wheels(releases: Sequence[TorchRelease], py: str) -> list[str]:
    """One note for the releases skipped for the Python (newest first): one line, not one per
    release (a Python no release has wheels for listed every release of the matrix)."""
    if not releases:
        return []
    newest = releases[0]
    has = f"{', '.join(newest.python)}"
    if len(releases) == 1:
        return [f"torch {newest.version} skipped: no wheels for Python {py} (it has {has})"]
    oldest = releases[-1]
    return [
        f"torch {oldest.version} to {newest.version} ({len(releases)} releases) skipped: no"
        f" wheels for Python {py} (torch {newest.version} has {has})"
    ]


def _verdicts(
    matrix: Matrix,
    hw: _Hardware,
    release: TorchRelease,
    names: Sequence[str],
    *,
    accept_unverified: bool,
) -> list[BuildVerdict]:
    return [
        judge_build(
            matrix,
            release,
            v,
            ccs=hw.ccs,
            driver=hw.driver,
            max_cuda=hw.max_cuda,
            accept_unverified=accept_unverified,
        )
        if v in release.variants
        else BuildVerdict(release, v, None, (f"torch {release.version} has no {v} build",))
        for v in names
    ]


def _torch_reason(pick: _Pick, hw: _Hardware, release: TorchRelease, why: str) -> str:
    v = pick.verdict
    parts = [why]
    if hw.driver is not None:
        runs = "runs fully" if v.support == "full" else "runs through minor-version compatibility"
        parts.append(
            f"driver {hw.driver_text} (CUDA <= {hw.max_cuda}, {hw.max_cuda_source}) {runs}"
        )
    else:
        parts.append("driver not declared: not checked")
    if hw.ccs:
        gpus = ", ".join(sorted({f"{n} {sm(cc)}" for n, cc in hw.ccs}))
        parts.append(f"kernels for {gpus}")
    if v.variant == hw.pypi.get(release.version):
        parts.append("the PyPI wheel's own CUDA build")
    else:
        parts.append(f"from the {v.variant} index")
    passed = [f"{o.variant}: {'; '.join(o.problems)}" for o in pick.passed_over]
    if passed:
        parts.append("passed over " + " | ".join(passed))
    newer = sorted({o.release.version for o in pick.newer_rejected})
    if newer:
        why_not = sorted({p for o in pick.newer_rejected for p in o.problems})
        span = f"{newer[0]}" if len(newer) == 1 else f"{newer[0]} to {newer[-1]}"
        parts.append(f"newer releases ({span}) have no fitting build: {'; '.join(why_not[:4])}")
    return "; ".join(parts)


def _conflict_message(
    what: str, hw: _Hardware, verdicts: list[BuildVerdict], notes: list[str]
) -> str:
    if not verdicts:
        detail = "; ".join(notes) or "no torch release in the matrix matches"
        return f"{what}: {detail}"
    problems = []
    for v in verdicts[:4]:
        problems.append(f"torch {v.label} {'; '.join(v.problems)}")
    have = ""
    if hw.driver is not None:
        have = f" (driver {hw.driver_text} supports CUDA <= {hw.max_cuda})"
    return f"{what}{have}: " + " | ".join(problems)


def _built_against(spec: SpecifierSet) -> SpecifierSet:
    """vLLM's torch pin as the torch its ops were compiled against: a bare floor (vLLM 0.2.0,
    0.2.2-0.2.5 published only ``torch>=2.1.0``) is the floor's release, as VLM101 reads it
    (vllm#1661); a newer torch does not match the compiled ops' C++ ABI."""
    parts = list(spec)
    if len(parts) == 1 and parts[0].operator == ">=":
        return SpecifierSet(f"=={parts[0].version}")
    return spec


def _has_wheel(matrix: Matrix, package: str, version: Version, arch: str) -> bool:
    """Whether the index serves ``package`` ``version`` as a wheel for ``arch`` (True when the
    matrix does not list that package's wheels for that arch)."""
    if not matrix.wheels_known(package, arch):
        return True
    return matrix.wheel_for(package, version, arch) is not None


def _first_wheel(matrix: Matrix, package: str, arch: str) -> str | None:
    """The lower bound of the releases with an ``arch`` wheel, as the matrix states it."""
    for w in matrix.wheel_platforms:
        if canonicalize_name(w.package) == canonicalize_name(package) and w.arch == arch:
            floors = [s.version for s in w.versions if s.operator == ">="]
            if floors:
                return floors[0]
    return None


def _matches_nothing(spec: SpecifierSet) -> bool:
    """Whether a [[wheel_platform]] range says no release has the wheel (``<0``)."""
    return any(s.operator == "<" and Version(s.version) <= Version("0") for s in spec)


def _exact(req: Requirement) -> Version | None:
    """The one release ``req`` pins with ``==`` (no wildcard), or None."""
    parts = list(req.specifier)
    if len(parts) == 1 and parts[0].operator in ("==", "===") and "*" not in parts[0].version:
        return parse_version(parts[0].version)
    return None


def _source_builds(
    matrix: Matrix, wanted: dict[str, Requirement], arch: str
) -> tuple[list[Conflict], list[Choice]]:
    """Requirements (other than torch, whose CUDA builds are the [[torch_wheel]] table, and
    vLLM, chosen above) that only a source build satisfies on ``arch``, by the matrix's
    [[wheel_platform]] ranges: a pinned release outside its range, or a package with no
    wheel there at all, is a conflict (pip would compile a CUDA extension). An open request
    is narrowed to the releases with a wheel when one range states them."""
    conflicts: list[Conflict] = []
    choices: list[Choice] = []
    for key, req in list(wanted.items()):
        if key in ("torch", "vllm") or not matrix.wheels_known(key, arch):
            continue
        ranges = [
            w
            for w in matrix.wheel_platforms
            if canonicalize_name(w.package) == key and w.arch == arch
        ]
        first = _first_wheel(matrix, key, arch)
        later = f"; the first {req.name} with one is {first}" if first else ""
        pinned = _exact(req)
        if pinned is not None:
            if not _has_wheel(matrix, key, pinned, arch):
                conflicts.append(
                    Conflict(
                        key,
                        (str(req), f"linux {arch}"),
                        (),
                        f"{req}: no {arch} wheel of {pinned} (pip would build the sdist: the "
                        f"CUDA toolkit and a long compile){later}",
                    )
                )
            continue
        if all(_matches_nothing(w.versions) for w in ranges):
            conflicts.append(
                Conflict(
                    key,
                    (str(req), f"linux {arch}"),
                    (),
                    f"{req}: no release of {req.name} has a wheel for {arch} (pip would build the "
                    f"sdist: the CUDA toolkit and a long compile); source: {ranges[0].source}",
                )
            )
        elif len(ranges) == 1:
            narrowed = req.specifier & ranges[0].versions
            extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
            marker = f"; {req.marker}" if req.marker else ""
            wanted[key] = Requirement(f"{req.name}{extras}{narrowed}{marker}")
            choices.append(
                Choice(
                    key,
                    str(wanted[key]),
                    f"the releases with a {arch} wheel ({ranges[0].versions}); the others "
                    "are an sdist there",
                )
            )
    return conflicts, choices


def _vllm_candidates(matrix: Matrix, req: Requirement) -> list[VllmRelease]:
    spec = req.specifier
    found = [
        v
        for v in matrix.vllm_releases
        if spec.contains(v.version, prereleases=True) and v.torch is not None
    ]
    found.sort(key=lambda v: (v.verified, v.version), reverse=True)
    return found


def choose_stack(
    matrix: Matrix,
    target: Target,
    requirements: Sequence[str],
    *,
    allow_unverified: bool = False,
    profile: str | None = None,
    installed: bool = False,
) -> Stack:
    """Pick torch (release and CUDA build), vLLM's pairing and the requirement lines to resolve.
    A vLLM release the index has no wheel of for the target's CPU is never chosen, unless
    ``installed`` (the requirements name what the node already has: a fix pairs torch with
    it, whatever it was built from)."""
    hw = _hardware(matrix, target)
    wanted = _wanted(requirements)
    choices: list[Choice] = []
    notes: list[str] = []
    conflicts: list[Conflict] = []
    if hw.unknown_gpus:
        notes.append(
            f"GPU {', '.join(hw.unknown_gpus)} is not in the matrix: its architecture is not "
            "checked (declare gpu.compute_capability)"
        )
    if hw.driver is None:
        notes.append("driver not declared: whether it runs the chosen CUDA build is not checked")
    torch_req = wanted.get("torch")
    torch_spec = _public_spec(torch_req)
    variants: list[str] | None = None
    label = _pinned_label(torch_req)
    if label:
        variants = [label]
    why = "the newest torch release that fits"
    vllm_req = wanted.get("vllm")
    pick: _Pick | None = None
    if vllm_req is not None:
        listed = _vllm_candidates(matrix, vllm_req)
        candidates = [
            v for v in listed if installed or _has_wheel(matrix, "vllm", v.version, target.arch)
        ]
        if listed and not candidates:
            first = _first_wheel(matrix, "vllm", target.arch)
            conflicts.append(
                Conflict(
                    "vllm",
                    (str(vllm_req), f"linux {target.arch}"),
                    (),
                    f"{vllm_req}: the index has no {target.arch} wheel of "
                    + ", ".join(str(v.version) for v in listed[:3])
                    + (" ..." if len(listed) > 3 else "")
                    + " (pip would build the sdist)"
                    + (f"; the first vLLM with one is {first}" if first else ""),
                )
            )
        elif not candidates:
            notes.append(
                f"{vllm_req}: no release in the matrix with a known torch pin; its torch comes "
                "from the resolver and is checked only afterwards"
            )
        failure: Conflict | None = None
        for vllm in candidates:
            assert vllm.torch is not None
            spec = torch_spec & _built_against(vllm.torch)
            need = [cuda_variant(vllm.cuda)] if vllm.cuda is not None else variants
            if variants and need and variants != need:
                failure = failure or Conflict(
                    "torch",
                    (str(torch_req), f"vllm=={vllm.version}"),
                    (),
                    f"vllm {vllm.version}'s wheels are built for CUDA {vllm.cuda}; "
                    f"{torch_req} asks for {label}",
                )
                continue
            found, rejected, tnotes = _choose_torch(
                matrix, hw, spec, variants=need, allow_unverified=allow_unverified
            )
            if found is None:
                cuda_text = f", built for CUDA {vllm.cuda}" if vllm.cuda else ""
                failure = failure or Conflict(
                    "stack",
                    (f"vllm=={vllm.version}", f"torch{vllm.torch}"),
                    (),
                    _conflict_message(
                        f"vllm {vllm.version} needs torch{vllm.torch}{cuda_text}",
                        hw,
                        rejected,
                        tnotes,
                    ),
                )
                continue
            pick = found
            notes.extend(tnotes)
            choices.append(
                Choice(
                    "vllm",
                    f"vllm=={vllm.version}",
                    (
                        "as requested"
                        if str(vllm_req.specifier).startswith("==")
                        else f"the newest release in {vllm_req.specifier or 'the matrix'} whose torch pin fits"
                    )
                    + f": it pins torch{vllm.torch}"
                    + (f" and its PyPI wheels are built for CUDA {vllm.cuda}" if vllm.cuda else "")
                    + ("" if vllm.verified else " (matrix entry UNVERIFIED)"),
                )
            )
            wanted["vllm"] = Requirement(
                f"{vllm_req.name}{''.join(f'[{e}]' for e in sorted(vllm_req.extras))}=={vllm.version}"
            )
            why = f"the torch vllm {vllm.version} pins"
            break
        if pick is None and failure is not None:
            conflicts.append(failure)
    if pick is None and not conflicts and (torch_req is not None or vllm_req is None):
        pick, rejected, tnotes = _choose_torch(
            matrix, hw, torch_spec, variants=variants, allow_unverified=allow_unverified
        )
        notes.extend(tnotes)
        if pick is None:
            conflicts.append(
                Conflict(
                    "torch",
                    (str(torch_req or "torch"),),
                    (),
                    _conflict_message(f"no build of {torch_req} fits", hw, rejected, tnotes),
                )
            )
        elif torch_req is not None and any(s.operator == "==" for s in torch_req.specifier):
            why = f"as requested ({torch_req})"
    torch_version = variant = index = None
    if pick is not None:
        release = pick.verdict.release
        torch_version, variant = str(release.version), pick.verdict.variant
        if variant != hw.pypi.get(release.version):
            index = matrix.torch_index_url(variant)
        extras = f"[{','.join(sorted(torch_req.extras))}]" if torch_req and torch_req.extras else ""
        wanted["torch"] = Requirement(f"torch{extras}=={torch_version}")
        choices.insert(
            0,
            Choice(
                "torch",
                f"torch=={torch_version} ({variant}"
                + (f" from {index})" if index else ", the PyPI wheel)"),
                _torch_reason(pick, hw, release, why),
            ),
        )
        if pick.verdict.support == "minor-compat" and hw.driver is not None:
            cuda = major_minor(variant_cuda(variant) or Version("0"))
            toolkit = matrix.toolkit(cuda)
            floor = toolkit.minor_compat_min_driver if toolkit else None
            notes.append(
                f"driver {hw.driver_text} supports CUDA <= {hw.max_cuda}; torch {torch_version}+{variant} "
                f"is a CUDA {cuda} build, accepted through CUDA minor-version compatibility (any "
                f"{cuda.major}.x build on a driver >= {driver_text(floor) if floor else '?'}). "
                f"Not covered: {_LIMITS}. For full "
                f"support: driver {driver_needed(toolkit) if toolkit else '(unknown)'}"
            )
    if not installed:
        built, narrowed = _source_builds(matrix, wanted, target.arch)
        conflicts += built
        choices += narrowed
    bounded = bound_constraints(matrix, wanted)  # real upper bounds (matrix [[bound]])
    choices += [Choice("bound", value, reason) for value, reason in bounded]
    return Stack(
        target=target,
        requirements=tuple(str(r) for r in wanted.values()),
        constraints=tuple(dict.fromkeys(value for value, _ in bounded)),
        torch=torch_version,
        torch_variant=variant,
        torch_index_url=index,
        choices=tuple(choices),
        conflicts=tuple(conflicts),
        notes=tuple(dict.fromkeys(notes)),
        profile=profile,
    )


def add_overrides(stack: Stack, matrix: Matrix, rules: Sequence[Rule]) -> Stack:
    """Known-good overrides the rules ask for on this target: the stack as it would install
    (torch with its pins, the wanted exact versions) is checked, and a safe fix that installs a
    version the matrix lists as an accepted replacement of a torch pin becomes ``--override``."""
    from dataclasses import replace

    from envcheck.engine import evaluate
    from envcheck.plan.target import target_report

    if stack.torch is None:
        return stack
    release = matrix.torch_release(Version(stack.torch))
    packages: dict[str, str] = {}
    for text in stack.requirements:
        req = Requirement(text)
        exact = [s.version for s in req.specifier if s.operator == "=="]
        if exact:
            packages[req.name] = exact[0]
    default = pypi_variant(matrix, release, stack.target.arch) if release is not None else None
    packages["torch"] = stack.torch + (
        f"+{stack.torch_variant}" if release is not None and stack.torch_variant != default else ""
    )
    if release is not None and stack.torch_variant == default:
        for name, spec in release.pins.items():
            pins = [s.version for s in spec if s.operator == "=="]
            if pins:
                packages.setdefault(name, pins[0])
    result = evaluate(target_report(stack.target, packages), matrix, rules)
    overrides: list[str] = []
    choices = list(stack.choices)
    for finding in result.findings:
        if finding.fix is None or finding.fix.applicability != "safe":
            continue
        if not finding.severity.at_least(Severity.WARNING):
            continue
        for action in finding.fix.actions:
            for text in action.packages if action.kind == "pip_install" else ():
                req = Requirement(text)
                pins = [s.version for s in req.specifier if s.operator == "=="]
                accepted = [
                    o
                    for o in matrix.overrides_for(req.name, Version(stack.torch))
                    if pins and pins[0] in o.versions
                ]
                if not accepted or str(req) in overrides:
                    continue
                overrides.append(str(req))
                choices.append(
                    Choice(
                        "override",
                        str(req),
                        f"{finding.code} on this target: {finding.message.split('. ')[0]}; "
                        f"{accepted[0].reason.split('. ')[0]} (overrides torch's {req.name}"
                        f"{accepted[0].replaces})",
                    )
                )
    if not overrides:
        return stack
    return replace(stack, overrides=tuple(overrides), choices=tuple(choices))

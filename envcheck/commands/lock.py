"""``lock`` as a function: choose a stack for a target, resolve it with uv's project resolver,
check every target's resolved set against the rules, and produce the lock text.

Outcomes (``LockResult.code``): 0 locked, 1 the stack conflicts with the target / has no
resolution / fails the rules, 4 an index could not be reached (nothing written). Bad input
raises an ``EnvcheckError`` (exit 2).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from envcheck.commands.lock_options import LockOptions, LockResult
from envcheck.model.plan import Choice, Stack, Target


def read_requirements(path: str) -> list[str]:
    from envcheck.errors import InputError
    from envcheck.inputs import read_text
    from envcheck.plan.simulate import parse_requirement

    text = read_text(path, error=InputError, too_big="for a requirements file")
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            raise InputError(
                f"options are not supported here ({line.split()[0]})", where=f"{path}:{number}"
            )
        if parse_requirement(line) is None:
            raise InputError(f"invalid requirement {line!r}", where=f"{path}:{number}")
        out.append(line)
    return out


def split_gpus(values: Sequence[str]) -> tuple[str, ...]:
    from envcheck.errors import UsageError
    from envcheck.numeric import MAX_GPUS, NumberError, Range, parse

    out: list[str] = []
    for value in values:
        match = re.fullmatch(r"(.+?)\s+[xX×]\s*([-+]?\d+)", value.strip())
        if match:
            try:
                count = int(parse(match.group(2), Range(minimum=1, maximum=MAX_GPUS, integer=True)))
            except NumberError as exc:
                raise UsageError(f"--gpu {value!r}: the count {exc.message}") from None
            out += [match.group(1)] * count
        else:
            out.append(value.strip())
        if len(out) > MAX_GPUS:
            raise UsageError(f"--gpu: more than {MAX_GPUS} GPUs in one node")
    return tuple(out)


def choose_target(options: LockOptions, spec_report: Any, profile_python: str | None) -> Target:
    from packaging.version import InvalidVersion, Version

    from envcheck.errors import UsageError
    from envcheck.plan.target import target_from_report

    for flag, values in (
        ("--python", options.python),
        ("--driver", (options.driver,)),
        ("--glibc", (options.glibc,)),
    ):
        for value in values:
            if value is not None:
                try:
                    Version(value)
                except InvalidVersion:
                    raise UsageError(f"{flag}: invalid version {value!r}") from None
    declared = (
        spec_report.python.data.version
        if spec_report is not None and spec_report.python.is_ok and spec_report.python.data
        else None
    )
    python = (options.python[0] if options.python else None) or declared or profile_python
    if not python:
        raise UsageError(
            "the target's Python is unknown: pass --python X.Y (or declare [python] in the spec)"
        )
    target = (
        target_from_report(spec_report, python=python)
        if spec_report is not None
        else Target(python=python)
    )
    changes: dict[str, Any] = {}
    if options.gpus:
        changes["gpus"] = split_gpus(options.gpus)
        changes["compute_capability"] = None
    if options.driver:
        changes["driver"] = options.driver
        changes["max_cuda"] = None
    if options.arch:
        changes["arch"] = options.arch[0]
    if options.glibc:
        changes["glibc"] = options.glibc
    return replace(target, **changes)


def derive_arch(
    options: LockOptions, spec_report: Any, target: Target, matrix: Any
) -> tuple[Target, Choice | None]:
    """``target`` with the CPU its GPUs imply when neither --arch nor the spec states one
    (`lock --gpu GH200`: aarch64, not x86_64), and the choice that says so."""
    from envcheck.plan.target import arch_from_gpus, stated_arch

    if options.arch or stated_arch(spec_report) is not None:
        return target, None
    choice = arch_from_gpus(target, matrix)
    if choice is None:
        return target, None
    return replace(target, arch=choice.value), choice


def wanted(options: LockOptions, spec_report: Any, profile: Any) -> list[str]:
    from envcheck.errors import UsageError
    from envcheck.plan.simulate import parse_requirement

    out: list[str] = list(profile.requirements) if profile else []
    for path in options.requirement_files:
        out += read_requirements(path)
    for text in options.requirements:
        if parse_requirement(text) is None:
            raise UsageError(f"invalid requirement {text!r}")
        out.append(text)
    if spec_report is not None and spec_report.packages.is_ok and spec_report.packages.data:
        out += [f"{d.name}=={d.version}" for d in spec_report.packages.data.distributions]
    if not out:
        raise UsageError(
            "nothing to lock: give requirements (e.g. `torch`), -r FILE, --profile, or [packages] in the spec"
        )
    return out


def with_profile(stack: Stack, profile: Any, target: Target) -> Stack:
    if profile is None:
        return stack
    notes = list(profile.notes) + [f"UNVERIFIED: {u}" for u in profile.unverified]
    if profile.python and not target.python.startswith(profile.python):
        notes.insert(
            0, f"the profile documents Python {profile.python}; this target uses {target.python}"
        )
    return replace(
        stack,
        profile=f"{profile.name}: {profile.title} (source: {profile.source})",
        notes=tuple(notes) + stack.notes,
        manual=tuple(profile.after),
        env=dict(profile.env),
    )


def _validate(options: LockOptions) -> None:
    from envcheck.errors import UsageError

    if options.upgrade_packages and not options.from_lock:
        raise UsageError("--upgrade-package needs --from-lock FILE (the lock whose pins it keeps)")
    if options.no_index and options.index_url:
        raise UsageError("--no-index and --index-url contradict each other")
    if options.exclude_newer is not None and not re.fullmatch(
        r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}Z)?", options.exclude_newer
    ):
        raise UsageError(
            f"--exclude-newer: {options.exclude_newer!r} is not a date (YYYY-MM-DD or RFC 3339)"
        )
    for arch in options.arch:
        if arch not in ("x86_64", "aarch64"):
            raise UsageError(f"--arch: {arch!r} is not x86_64 or aarch64")
    if options.from_lock:
        from envcheck.inputs import open_binary

        open_binary(options.from_lock).close()  # a missing --from-lock first, not "nothing to lock"


def lock(options: LockOptions) -> LockResult:
    """Choose, resolve and check a lock; nothing is written (the caller writes ``text``)."""
    from envcheck.ingest.spec import load_spec
    from envcheck.matrix_validate import load
    from envcheck.plan.profiles import get_profile
    from envcheck.plan.stack import add_overrides, choose_stack
    from envcheck.rules import all_rules
    from envcheck.settings import find_settings

    _validate(options)
    profile = get_profile(options.profile) if options.profile else None
    spec_report = load_spec(options.spec) if options.spec else None
    target = choose_target(options, spec_report, profile.python if profile else None)
    requirements = wanted(options, spec_report, profile)
    matrix = load([*find_settings().matrix, *options.matrix])
    target, arch_choice = derive_arch(options, spec_report, target, matrix)
    rules = all_rules(matrix, "node")  # the engine runs node rules only: no cluster imports
    stack = choose_stack(
        matrix, target, requirements, allow_unverified=options.allow_unverified, profile=None
    )
    if arch_choice is not None:
        stack = replace(stack, choices=(arch_choice, *stack.choices))
    stack = with_profile(stack, profile, target)
    if stack.conflicts:
        return LockResult(
            1,
            "conflict",
            stack,
            "the stack cannot run on this target: nothing resolved or written "
            "(the conflict above names why: change the request, or the target's Python or "
            "driver as it says)",
        )
    stack = add_overrides(stack, matrix, rules)
    if options.dry_run:
        return LockResult(0, "ok", stack, "dry run: nothing resolved or written")
    from envcheck.commands.lock_resolve import resolve_and_check

    return resolve_and_check(options, stack, matrix, rules, spec_report)

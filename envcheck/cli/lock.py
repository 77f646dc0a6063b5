"""``envcheck lock``: a full, hashed lock for a target node, resolved with uv for the target's
platform and Python, checked against the matrix before it is written.

Exit codes: 0 lock written (or printed), 1 the stack conflicts with the target, cannot be
resolved, or the resolved set fails the rules (nothing written unless --force), 2 usage or
input error (uv missing included).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from envcheck.cli import common
from envcheck.model.finding import Severity
from envcheck.model.plan import Stack, Target

FORMATS = ("requirements", "pylock", "conda")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "lock",
        help="a full, hashed lock for a target node (resolved with uv, checked by the rules)",
        description="Choose a stack for a target node (torch build, vLLM pairing, overrides), "
        "resolve it with uv for the target's platform and Python, check the result against "
        "the matrix and write it. Exit codes: 0 written, 1 conflict / unresolvable / fails the "
        "rules (not written unless --force), 2 bad input or usage.",
    )
    p.add_argument(
        "requirements",
        nargs="*",
        metavar="REQUIREMENT",
        help="what to install (e.g. torch, 'vllm==0.6.4'); adds to --profile and the spec",
    )
    what = p.add_argument_group("what to lock")
    what.add_argument(
        "-r",
        "--requirement",
        action="append",
        default=[],
        metavar="FILE",
        help="read requirements from FILE (repeatable)",
    )
    what.add_argument(
        "--profile",
        metavar="NAME|FILE",
        help="a known stack (tinyzero, verl, openrlhf, rlinf-behavior, omnigibson) or a profile file",
    )
    what.add_argument(
        "--list-profiles", action="store_true", help="list the built-in profiles and exit"
    )
    what.add_argument(
        "--allow-unverified",
        action="store_true",
        help="consider torch releases whose matrix entry is UNVERIFIED",
    )
    node = p.add_argument_group("target node (a spec, flags, or both: flags win)")
    node.add_argument(
        "--spec", metavar="FILE", help="declared node (TOML); its [packages] become == pins"
    )
    node.add_argument("--python", metavar="X.Y[.Z]", help="the target's Python version")
    node.add_argument(
        "--gpu",
        action="append",
        default=[],
        metavar="NAME",
        help="a GPU as nvidia-smi names it (repeatable, one per GPU or 'NAME xN')",
    )
    node.add_argument("--driver", metavar="VERSION", help="the target's NVIDIA driver")
    node.add_argument(
        "--arch", choices=("x86_64", "aarch64"), help="CPU architecture (default x86_64)"
    )
    node.add_argument(
        "--glibc", metavar="VERSION", help="the target's glibc (picks the manylinux tag)"
    )
    index = p.add_argument_group("index (default: the one pip is configured with)")
    index.add_argument("--index-url", metavar="URL")
    index.add_argument("--extra-index-url", action="append", default=[], metavar="URL")
    index.add_argument("--find-links", action="append", default=[], metavar="DIR|URL")
    index.add_argument("--no-index", action="store_true")
    out = p.add_argument_group("output")
    out.add_argument(
        "--format",
        choices=FORMATS,
        default="requirements",
        help="requirements (default, hashed), pylock (PEP 751), conda (environment.yml)",
    )
    out.add_argument("-o", "--output", metavar="FILE", help="write the lock to FILE (else stdout)")
    out.add_argument(
        "--force",
        action="store_true",
        help="write even if the resolved set fails the rules; overwrite FILE",
    )
    out.add_argument(
        "--severity",
        type=common.severity_arg,
        default=Severity.ERROR,
        metavar="LEVEL",
        help="refuse a lock with findings at or above LEVEL: error (default), warning",
    )
    out.add_argument("--json", action="store_true", help="print the versioned JSON envelope")
    out.add_argument(
        "--dry-run", action="store_true", help="choose the stack and stop (no resolver)"
    )
    common.add_matrix_option(out)
    p.set_defaults(run=run)


def _read_requirements(path: str) -> list[str]:
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


def _gpus(values: list[str]) -> tuple[str, ...]:
    import re

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


def _target(args: argparse.Namespace, spec_report: Any, profile_python: str | None) -> Target:
    from packaging.version import InvalidVersion, Version

    from envcheck.errors import UsageError
    from envcheck.plan.target import target_from_report

    for flag, value in (
        ("--python", args.python),
        ("--driver", args.driver),
        ("--glibc", args.glibc),
    ):
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
    python = args.python or declared or profile_python
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
    if args.gpu:
        changes["gpus"] = _gpus(args.gpu)
        changes["compute_capability"] = None
    if args.driver:
        changes["driver"] = args.driver
        changes["max_cuda"] = None
    if args.arch:
        changes["arch"] = args.arch
    if args.glibc:
        changes["glibc"] = args.glibc
    return replace(target, **changes)


def _wanted(args: argparse.Namespace, spec_report: Any, profile: Any) -> list[str]:
    from envcheck.errors import UsageError
    from envcheck.plan.simulate import parse_requirement

    wanted: list[str] = list(profile.requirements) if profile else []
    for path in args.requirement:
        wanted += _read_requirements(path)
    for text in args.requirements:
        if parse_requirement(text) is None:
            raise UsageError(f"invalid requirement {text!r}")
        wanted.append(text)
    if spec_report is not None and spec_report.packages.is_ok and spec_report.packages.data:
        wanted += [f"{d.name}=={d.version}" for d in spec_report.packages.data.distributions]
    if not wanted:
        raise UsageError(
            "nothing to lock: give requirements (e.g. `torch`), -r FILE, --profile, or [packages] in the spec"
        )
    return wanted


def _with_profile(stack: Stack, profile: Any, target: Target) -> Stack:
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


def run(args: argparse.Namespace) -> int:
    from envcheck.plan.profiles import get_profile, load_profiles

    if args.list_profiles:
        for name, known in load_profiles().items():
            common.emit(f"{name:<16}{known.title}\n{'':<16}source: {known.source}\n")
        return 0
    from envcheck.ingest.spec import load_spec
    from envcheck.matrix.load import load
    from envcheck.plan.stack import add_overrides, choose_stack
    from envcheck.rules import all_rules
    from envcheck.settings import find_settings

    profile = get_profile(args.profile) if args.profile else None
    spec_report = load_spec(args.spec) if args.spec else None
    target = _target(args, spec_report, profile.python if profile else None)
    wanted = _wanted(args, spec_report, profile)
    settings = find_settings()
    matrix = load([*settings.matrix, *args.matrix])
    rules = all_rules(matrix)
    stack = choose_stack(
        matrix, target, wanted, allow_unverified=args.allow_unverified, profile=None
    )
    stack = _with_profile(stack, profile, target)
    if stack.conflicts:
        return _finish(
            args,
            stack,
            1,
            "conflict",
            message="the stack cannot run on this target: nothing resolved or written "
            "(upgrade the driver as named, or request releases built for a CUDA it runs)",
        )
    stack = add_overrides(stack, matrix, rules)
    if args.dry_run:
        return _finish(args, stack, 0, "ok", message="dry run: nothing resolved or written")
    return _resolve_and_write(args, stack, matrix, rules, spec_report)


def _resolve_and_write(
    args: argparse.Namespace, stack: Stack, matrix: Any, rules: Any, spec_report: Any
) -> int:
    from envcheck.engine import evaluate
    from envcheck.plan.resolve import (
        ResolveFailed,
        ResolveFormat,
        find_uv,
        pip_index_config,
        redact_url,
        resolve,
    )
    from envcheck.plan.target import target_report, with_packages

    uv = find_uv()
    index = pip_index_config(
        index_url=args.index_url,
        extra_index_urls=args.extra_index_url,
        find_links=args.find_links,
        no_index=args.no_index,
    )
    fmt: ResolveFormat = "pylock" if args.format == "pylock" else "requirements"
    from envcheck.formats.progress import status

    try:
        with status("resolving the lock with uv"):
            resolution = resolve(stack, index, fmt=fmt, uv=uv)
    except ResolveFailed as exc:
        return _finish(args, stack, 1, "unresolved", message=exc.message, detail=exc.detail)
    base = spec_report if spec_report is not None else target_report(stack.target)
    bare = with_packages(base, {}, origin="target")
    resolved = with_packages(base, resolution.pins, origin="resolved lock")
    before = {(f.code, f.message) for f in evaluate(bare, matrix, rules).findings}
    result = evaluate(resolved, matrix, rules)
    brought = [f for f in result.findings if (f.code, f.message) not in before]
    blocking = [f for f in brought if f.severity.at_least(args.severity)]
    sources = [
        redact_url(u)
        for u in ([index.index_url] if index.index_url else []) + list(index.extra_index_urls)
    ]
    resolver = (
        f"uv pip compile for {stack.target.python} / {_platform(stack)} against {index.source}"
    )
    if sources or index.find_links:
        resolver += " (" + ", ".join(sources + list(index.find_links)) + ")"
    text = _emit(args, stack, resolution, resolver)
    if blocking and not args.force:
        return _finish(
            args,
            stack,
            1,
            "findings",
            message=f"the resolved set fails {len(blocking)} rule(s): lock not written (use --force to write it anyway)",
            findings=brought,
            pins=resolution.pins,
        )
    if args.output:
        from envcheck.fileio import write_atomic

        write_atomic(args.output, text, overwrite=args.force)
    elif not args.json:
        common.emit(text)
    code = 1 if blocking else 0
    message = f"locked {len(resolution.pins)} packages" + (
        f"; wrote {args.output}" if args.output else ""
    )
    if blocking:
        message += f" despite {len(blocking)} finding(s) (--force)"
    return _finish(
        args,
        stack,
        code,
        "findings" if blocking else "ok",
        message=message,
        findings=brought,
        pins=resolution.pins,
        quiet_stack=not args.output and not args.json,
    )


def _platform(stack: Stack) -> str:
    from envcheck.plan.resolve import python_platform

    return python_platform(stack.target)


def _emit(args: argparse.Namespace, stack: Stack, resolution: Any, resolver: str) -> str:
    from envcheck.plan.emit.conda import lock_conda
    from envcheck.plan.emit.pylock import lock_pylock
    from envcheck.plan.emit.requirements import lock_requirements

    if args.format == "pylock":
        return lock_pylock(stack, resolution, resolver=resolver)
    if args.format == "conda":
        name = (stack.profile or "envcheck").split(":", 1)[0]
        return lock_conda(stack, resolution, resolver=resolver, name=name)
    return lock_requirements(stack, resolution, resolver=resolver)


def _finish(
    args: argparse.Namespace,
    stack: Stack,
    code: int,
    status: str,
    *,
    message: str,
    detail: str | None = None,
    findings: list[Any] | None = None,
    pins: dict[str, str] | None = None,
    quiet_stack: bool = False,
) -> int:
    from envcheck.formats.plan_text import render_findings, render_stack

    findings = findings or []
    if args.json:
        from envcheck.formats.json import envelope

        data = {
            "stack": stack.to_json(),
            "resolved": pins or {},
            "findings": [f.to_json() for f in findings],
            "output": args.output,
            "message": message,
            "resolver_output": detail,
        }
        common.emit(common.json_text(envelope("lock", status, code, data)))
    else:
        out = sys.stderr if quiet_stack else sys.stdout
        out.write(render_stack(stack))
        if findings:
            out.write("findings in the resolved set:\n" + render_findings(findings))
        if detail:
            out.write(
                "resolver says:\n"
                + "\n".join("  " + line for line in detail.splitlines()[-25:])
                + "\n"
            )
    sys.stderr.write(f"envcheck: {message}; exit {code}\n")
    return code

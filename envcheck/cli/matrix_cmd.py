"""``envcheck matrix validate|show``: check matrix files, and see what the matrix knows."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from envcheck.cli import common
from envcheck.errors import UsageError
from envcheck.model.codec import to_dict

if TYPE_CHECKING:
    from envcheck.matrix_validate import Problem

SUBJECTS = ("torch", "vllm", "ray", "flash-attn", "isaacsim", "omnigibson", "gpu", "cuda", "driver")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "matrix",
        help="validate or query the compatibility matrix",
        description="Work with the compatibility matrix.",
    )
    msub = p.add_subparsers(dest="matrix_command", metavar="ACTION", required=True)
    v = msub.add_parser(
        "validate",
        help="check matrix files (schema and cross-references)",
        description="Load the built-in matrix with the given overlay directories the way check, "
        "triage and lock load them (strict schema, unknown keys refused, file:line in every "
        "error), then check cross-references (rule codes, GPU architectures, signature patterns) "
        "and compare generated facts with curated ones (a disagreement is a warning, an error "
        "with --strict). Exit codes: 0 valid, 2 problems found or unreadable input.",
    )
    v.add_argument(
        "dirs",
        nargs="*",
        metavar="DIR",
        help="overlay directories to validate over the built-in matrix",
    )
    v.add_argument("--json", action="store_true")
    v.add_argument(
        "--strict",
        action="store_true",
        help="fail when generated facts disagree with curated ones (default: warn)",
    )
    v.set_defaults(run=run_validate)
    s = msub.add_parser(
        "show",
        help="what the matrix knows about one release",
        description="Print the matrix record for one release of SUBJECT (a GPU by name, a CUDA "
        "toolkit, a driver, torch, vLLM, Ray, flash-attn, Isaac Sim or OmniGibson version), what "
        "refers to it (companions, overrides, known-bad rules, index URLs) and the file it "
        "comes from. Exit codes: 0 found, 2 unknown to the matrix.",
    )
    s.add_argument("subject", choices=SUBJECTS, metavar="SUBJECT", help=", ".join(SUBJECTS))
    s.add_argument("version", metavar="VERSION", help="a version (or a GPU name)")
    s.add_argument("--json", action="store_true")
    common.add_matrix_option(s)
    s.set_defaults(run=run_show)
    from envcheck.cli import matrix_refresh

    matrix_refresh.add_parsers(msub)


def run_validate(args: argparse.Namespace) -> int:
    from envcheck.errors import InputError
    from envcheck.matrix.crosscheck import crosscheck
    from envcheck.matrix_validate import load, validate
    from envcheck.model.envelope import envelope

    try:
        matrix = load(args.dirs, check_overlays=False)  # every problem is listed below
    except InputError as exc:
        if not args.json:
            raise
        # a file that does not load at all (TOML syntax, schema) is a problem like the others
        sys.stderr.write(f"envcheck: error: {exc.one_line()}\n")
        unloaded = {"where": exc.where or "", "key": exc.key or "", "message": exc.message}
        failed: dict[str, Any] = {
            "files": [],
            "counts": {},
            "problems": [unloaded],
            "disagreements": [],
        }
        errors = [{"message": exc.one_line()}]
        common.emit(common.json_text(envelope("matrix validate", "error", 2, failed, errors)))
        return 2
    problems = validate(matrix) + _clashes(args.dirs)
    disagreements = crosscheck(matrix)
    counts = {
        "files": len(matrix.files),
        "torch": len(matrix.torch_releases),
        "vllm": len(matrix.vllm_releases),
        "ray": len(matrix.ray_releases),
        "gpus": len(matrix.gpus),
        "known_bad": len(matrix.known_bad),
    }
    code = 2 if problems or (disagreements and getattr(args, "strict", False)) else 0
    if args.json:
        data = {
            "files": list(matrix.files),
            "counts": counts,
            "problems": [p.__dict__ for p in problems],
            "disagreements": [d.__dict__ for d in disagreements],
        }
        errors = [{"message": str(p)} for p in problems]
        common.emit(
            common.json_text(
                envelope("matrix validate", "error" if problems else "ok", code, data, errors)
            )
        )
        return code
    for problem in problems:
        sys.stderr.write(f"envcheck: error: {problem}\n")
    level = "error" if getattr(args, "strict", False) else "warning"
    for disagreement in disagreements:
        sys.stderr.write(f"envcheck: {level}: generated vs curated: {disagreement}\n")
    if not problems:
        summary = ", ".join(f"{v} {k}" for k, v in counts.items())
        common.emit(f"matrix ok: {summary}\n")
    return code


def _clashes(cli_dirs: list[str]) -> list[Problem]:
    """Two entries with one identity in the same directory (built-in, or one overlay)."""
    from envcheck.matrix.clashes import clashes
    from envcheck.matrix.load import builtin_dir, overlay_dirs
    from envcheck.matrix_validate import Problem

    dirs = [builtin_dir(), *overlay_dirs(cli_dirs)]
    return [Problem(where, key, message) for where, key, message in clashes(dirs, os.environ)]


def _version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise UsageError(f"{text!r} is not a version") from None


def _pins(spec: Any) -> bool:
    """A requirement that names one release (``==2.7.0``), not a range."""
    return bool(spec) and all(s.operator in ("==", "===") and "*" not in s.version for s in spec)


def lookup(matrix: Any, subject: str, text: str) -> tuple[Any, dict[str, Any]]:
    """(record, related records) for one subject; raises UsageError when unknown."""
    related: dict[str, Any] = {}
    if subject == "gpu":
        record = matrix.gpu_model(text)
    elif subject == "cuda":
        record = matrix.toolkit(_version(text))
        related["compiles_for"] = [s.arch for s in matrix.archs_compiled_by(_version(text))]
    elif subject == "driver":
        driver = _version(text)
        record = matrix.max_cuda_for_driver(driver)
        newest = matrix.newest_cuda_supported(driver)
        related["newest_toolkit_fully_supported"] = to_dict(newest) if newest else None
    elif subject == "torch":
        version = _version(text)
        record = matrix.torch_release(version)
        # a release that pins torch (==) names this one; a range (torch>=2.0.0) only allows it
        allowing = [v for v in matrix.vllm_releases if v.torch and v.torch.contains(version)]
        related["vllm_releases_pinning_it"] = [
            str(v.version) for v in allowing if v.torch and _pins(v.torch)
        ]
        related["vllm_releases_allowing_it"] = [
            str(v.version) for v in allowing if v.torch and not _pins(v.torch)
        ]
        related["companions"] = [to_dict(c) for c in matrix.companions if c.torch == version]
        related["overrides"] = [
            to_dict(o) for o in matrix.overrides if o.torch.contains(version, prereleases=True)
        ]
        related["index_urls"] = {
            v: matrix.torch_index_url(v) for v in (record.variants if record else ())
        }
    elif subject == "vllm":
        record = matrix.vllm_release(_version(text))
    elif subject == "ray":
        record = matrix.ray_release(_version(text))
    elif subject == "flash-attn":
        record = matrix.flash_attn_release(_version(text))
    elif subject == "isaacsim":
        record = matrix.isaacsim_release(_version(text))
    else:
        record = matrix.omnigibson_release(_version(text))
    if record is None:
        raise UsageError(f"the matrix knows nothing about {subject} {text}")
    name = subject.replace("-", "_")
    related["known_bad"] = [
        kb.code
        for kb in matrix.known_bad
        if name in kb.when.packages or subject in kb.when.packages
    ]
    return record, related


def _item(value: dict[str, Any]) -> str:
    """One record of a list (a companion, an override) as a line of text, not JSON."""
    name = value.get("package") or value.get("name") or value.get("id")
    version = value.get("version") or ", ".join(map(str, value.get("versions") or ()))
    head = " ".join(str(x) for x in (name, version) if x)
    rest = [
        f"{k}: {_text(v)}"
        for k, v in value.items()
        if k not in ("package", "name", "id", "version", "versions", "verified")
        and v not in (None, [], {}, "")
    ]
    if value.get("verified") is False:
        rest.append("UNVERIFIED")
    return "; ".join([head, *rest]) if head else "; ".join(rest)


def _pair(key: str, value: Any) -> str:
    """``name==1.2`` for a requirement (a pin reads as pip writes it, not "name = ==1.2"),
    ``key = value`` otherwise."""
    text = str(value)
    if text[:1] in "=<>!~" and text:
        return f"{key}{text}"
    return f"{key} = {text}"


def _text(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        return "\n".join(f"- {_item(v)}" for v in value)
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return ", ".join(map(str, value))
    if isinstance(value, dict) and all(not isinstance(v, (dict, list)) for v in value.values()):
        return "\n".join(_pair(k, v) for k, v in value.items())
    if isinstance(value, dict):
        return "\n".join(f"{k} = {_text(v)}" for k, v in value.items())
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def run_show(args: argparse.Namespace) -> int:
    from envcheck.matrix_validate import load
    from envcheck.model.envelope import envelope

    matrix = load(args.matrix)
    record, related = lookup(matrix, args.subject, args.version)
    origin = matrix.origin(record)
    from envcheck.redact import redact_data

    # an overlay's url_template may carry credentials; a table may fold a URL across lines,
    # so they are hidden here, before rendering, not only by the output stream
    data = redact_data(
        {
            "subject": args.subject,
            "query": args.version,
            "record": to_dict(record),
            "file": origin[0] if origin else None,
            "related": related,
        }
    )
    if args.json:
        common.emit(common.json_text(envelope("matrix show", "ok", 0, data)))
        return 0
    from rich.text import Text

    from envcheck.formats.table import console, print_hanging

    rows = [
        (key, _text(value))
        for key, value in {
            **data["record"],
            **{f"related: {k}": v for k, v in related.items()},
        }.items()
        if value not in (None, [], {}, "")
    ]
    if origin:
        rows.append(("file", origin[0]))
    out = console()
    out.print(Text(f"{args.subject} {args.version}", style="bold"))
    width = max(len(key) for key, _ in rows) + 4
    for key, text in rows:
        for i, line in enumerate(text.split("\n")):
            head = Text(f"  {key}" if i == 0 else "", style="cyan")
            print_hanging(out, head, Text(line), width)
    return 0

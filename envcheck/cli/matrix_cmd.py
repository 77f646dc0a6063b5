"""``envcheck matrix validate|show``: check matrix files, and see what the matrix knows."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from packaging.version import InvalidVersion, Version

from envcheck.cli import common
from envcheck.errors import UsageError
from envcheck.model.codec import to_dict

SUBJECTS = ("torch", "vllm", "ray", "flash-attn", "isaacsim", "omnigibson", "gpu", "cuda", "driver")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "matrix",
        help="validate or query the compatibility matrix",
        description="Work with the compatibility matrix.",
    )
    msub = p.add_subparsers(dest="matrix_command", metavar="ACTION", required=True)
    v = msub.add_parser("validate", help="check matrix files (schema and cross-references)")
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
    s = msub.add_parser("show", help="what the matrix knows about one release")
    s.add_argument("subject", choices=SUBJECTS, metavar="SUBJECT", help=", ".join(SUBJECTS))
    s.add_argument("version", metavar="VERSION", help="a version (or a GPU name)")
    s.add_argument("--json", action="store_true")
    common.add_matrix_option(s)
    s.set_defaults(run=run_show)
    from envcheck.cli import matrix_refresh

    matrix_refresh.add_parsers(msub)


def run_validate(args: argparse.Namespace) -> int:
    from envcheck.formats.json import envelope
    from envcheck.matrix.crosscheck import crosscheck
    from envcheck.matrix.load import load
    from envcheck.matrix.validate import validate

    matrix = load(args.dirs, check_overlays=False)  # every problem is listed below
    problems = validate(matrix)
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


def _version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise UsageError(f"{text!r} is not a version") from None


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
        related["vllm_releases_pinning_it"] = [
            str(v.version) for v in matrix.vllm_releases if v.torch and v.torch.contains(version)
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


def _text(value: Any) -> str:
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return ", ".join(map(str, value))
    if isinstance(value, dict) and all(not isinstance(v, (dict, list)) for v in value.values()):
        return "\n".join(f"{k} = {v}" for k, v in value.items())
    return value if isinstance(value, str) else common.json_text(value).strip()


def run_show(args: argparse.Namespace) -> int:
    from envcheck.formats.json import envelope
    from envcheck.matrix.load import load

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
    from rich import box
    from rich.table import Table

    from envcheck.formats.table import console

    table = Table(
        box=box.SIMPLE,
        show_header=False,
        title=f"{args.subject} {args.version}",
        title_justify="left",
    )
    table.add_column("key", style="cyan", no_wrap=True)
    table.add_column("value", overflow="fold")
    for key, value in {
        **data["record"],
        **{f"related: {k}": v for k, v in related.items()},
    }.items():
        if value in (None, [], {}, ""):
            continue
        table.add_row(key, _text(value))
    if origin:
        table.add_row("file", origin[0])
    console().print(table)
    return 0

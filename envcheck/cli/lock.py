"""``envcheck lock``: parse the arguments, call ``envcheck.commands.lock.lock`` and render its
result (the orchestration lives there); ``lock diff OLD NEW`` compares two locks.

Exit codes: 0 lock written (or printed), 1 the stack conflicts with the target, cannot be
resolved, the resolved set fails the rules, or (``--verify``) an import fails in the installed
lock (nothing written unless --force), 2 usage or input error (uv missing included; a pylock
``-o`` name that is not ``pylock.toml`` / ``pylock.<name>.toml``), 4 an index could not be
reached (nothing written).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any

from envcheck.cli import common
from envcheck.cli.lock_args import options_from
from envcheck.model.finding import Severity

FORMATS = ("requirements", "pylock", "conda")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "lock",
        help="a full, hashed lock for a target node (resolved with uv, checked by the rules)",
        description="Choose a stack for a target node (torch build, vLLM pairing, overrides), "
        "resolve it with uv for the target's platform and Python, check the result against "
        "the matrix and write it. `envcheck lock diff OLD NEW` compares two locks. Exit codes: "
        "0 written, 1 conflict / unresolvable / fails the rules / --verify: an import fails "
        "(not written unless --force), "
        "2 bad input or usage, 4 an index could not be reached (nothing written).",
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
    node.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="X.Y[.Z]",
        help="the target's Python version (repeat for a lock that covers several; the first is "
        "the one the rules check)",
    )
    node.add_argument(
        "--gpu",
        action="append",
        default=[],
        metavar="NAME",
        help="a GPU as nvidia-smi names it (repeatable, one per GPU or 'NAME xN')",
    )
    node.add_argument("--driver", metavar="VERSION", help="the target's NVIDIA driver")
    node.add_argument(
        "--arch",
        action="append",
        default=[],
        choices=("x86_64", "aarch64"),
        help="CPU architecture (default: the spec's, else aarch64 for a superchip GPU such as GH200, "
        "else x86_64; repeat for a lock that covers both)",
    )
    node.add_argument(
        "--glibc", metavar="VERSION", help="the target's glibc (picks the manylinux tag)"
    )
    index = p.add_argument_group("index (default: the one pip is configured with)")
    index.add_argument("--index-url", type=common.url_arg, metavar="URL")
    index.add_argument(
        "--extra-index-url", type=common.url_arg, action="append", default=[], metavar="URL"
    )
    index.add_argument("--find-links", action="append", default=[], metavar="DIR|URL")
    index.add_argument("--no-index", action="store_true")
    index.add_argument(
        "--allow-local",
        action="store_true",
        help="keep local paths and file:// indexes (the lock then installs only on this machine)",
    )
    again = p.add_argument_group("re-locking")
    again.add_argument(
        "--exclude-newer",
        metavar="DATE",
        help="only files uploaded before DATE (YYYY-MM-DD or RFC 3339): a reproducible re-lock",
    )
    again.add_argument(
        "--from-lock",
        metavar="FILE",
        help="an earlier lock whose pins are kept (with --upgrade-package)",
    )
    again.add_argument(
        "--upgrade-package",
        action="append",
        default=[],
        metavar="NAME",
        help="let NAME move; every other pin of --from-lock stays (repeatable)",
    )
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
    out.add_argument(
        "--verify",
        action="store_true",
        help="install the lock into a scratch venv with uv (cached) and import what it runs "
        "(torch, vLLM, triton, flash-attn, Ray, ...) on CPU, each import bounded; a failure "
        "(PKG172) stops the lock (written only with --force)",
    )
    out.add_argument("--json", action="store_true", help="print the versioned JSON envelope")
    out.add_argument(
        "--dry-run", action="store_true", help="choose the stack and stop (no resolver)"
    )
    common.add_matrix_option(out)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.list_profiles:
        from envcheck.plan.profiles import load_profiles

        for name, known in load_profiles().items():
            common.emit(f"{name:<16}{known.title}\n{'':<16}source: {known.source}\n")
        return 0
    if args.requirements[:1] == ["diff"]:
        from envcheck.cli.lock_diff import run_diff

        return run_diff(args)
    from envcheck.commands.lock import lock
    from envcheck.formats.progress import status

    if args.output and args.format == "pylock":
        check_pylock_name(args.output)
    options = options_from(args)
    with status("choosing and resolving the lock with uv"):
        result = lock(options)
    verified = None
    if args.verify and result.text is not None:
        result, verified = _verify(options, result)
    written = False
    if result.text is not None:
        if args.output:
            from envcheck.output import write
            from envcheck.redact import redact_urls

            write(args.output, result.text, overwrite=args.force, redactor=redact_urls)
            written = True
        elif not args.json:
            common.emit(result.text)
    message = result.message + (f"; wrote {args.output}" if written else "")
    quiet = result.text is not None and not args.output and not args.json
    _render(args, result, message, quiet_stack=quiet, verified=verified)
    return result.code


_PYLOCK_NAME = re.compile(r"^pylock\.toml$|^pylock\.([^.]+)\.toml$")


def check_pylock_name(output: str) -> None:
    """PEP 751: a lock file is named ``pylock.toml`` or ``pylock.<name>.toml``; uv and pip
    refuse any other name, so envcheck never writes one."""
    from envcheck.errors import UsageError

    name = os.path.basename(output)
    try:
        from pathlib import Path

        from packaging.pylock import is_valid_pylock_path

        valid = is_valid_pylock_path(Path(name))
    except ImportError:  # pragma: no cover - packaging < 25 has no pylock module
        valid = bool(_PYLOCK_NAME.match(name))
    if valid:
        return
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", name.removesuffix(".toml").replace("pylock", ""))
    better = f"pylock.{stem.strip('-')}.toml" if stem.strip("-") else "pylock.toml"
    raise UsageError(
        f"-o {output}: a PEP 751 lock is named pylock.toml or pylock.<name>.toml "
        f"(uv and pip refuse other names): use -o {os.path.join(os.path.dirname(output), better)}"
    )


def _verify(options: Any, result: Any) -> tuple[Any, Any]:
    """Install the lock into a scratch venv and import it; findings stop the lock like the
    rules' do (it is written only with --force)."""
    import tempfile
    from dataclasses import replace

    from envcheck.commands.lock_verify import VerifyOptions, VerifyUnavailable, verify_lock
    from envcheck.errors import UsageError
    from envcheck.formats.progress import status

    target = result.stack.target
    suffix = "pylock.toml" if options.format == "pylock" else "requirements.txt"
    with tempfile.TemporaryDirectory(prefix="envcheck-lock-") as folder:
        path = os.path.join(folder, suffix)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(result.text)
        verify = VerifyOptions(
            python=target.python,
            arch=target.arch,
            index_url=options.index_url,
            extra_index_urls=options.extra_index_urls,
            find_links=options.find_links,
            no_index=options.no_index,
        )
        try:
            with status("installing the lock into a scratch venv (uv) and importing it"):
                verified = verify_lock(path, verify)
        except VerifyUnavailable as exc:
            raise UsageError(f"--verify: {exc}") from None
    sys.stderr.write(verified.summary + "\n")
    if not verified.findings:
        return result, verified
    findings = (*result.findings, *verified.findings)
    message = f"the installed lock fails {len(verified.findings)} import check(s)"
    if options.force:
        return replace(
            result, code=1, status="findings", findings=findings, message=message + " (--force)"
        ), verified
    return replace(
        result,
        code=1,
        status="findings",
        findings=findings,
        text=None,
        message=message + ": lock not written (use --force to write it anyway)",
    ), verified


def _render(
    args: argparse.Namespace, result: Any, message: str, *, quiet_stack: bool, verified: Any = None
) -> None:
    from envcheck.formats.plan_text import render_findings, render_stack

    if args.json:
        from envcheck.model.envelope import envelope

        data = {
            "stack": result.stack.to_json(),
            "resolved": result.pins,
            "findings": [f.to_json() for f in result.findings],
            "output": args.output,
            "message": message,
            "resolver_output": result.detail,
            "verify": verified.to_json() if verified is not None else None,
        }
        common.emit(common.json_text(envelope("lock", result.status, result.code, data)))
    else:
        out = sys.stderr if quiet_stack else sys.stdout
        out.write(render_stack(result.stack))
        if result.findings:
            out.write("findings in the resolved set:\n" + render_findings(list(result.findings)))
        if result.detail:
            out.write(
                "resolver says:\n"
                + "\n".join("  " + line for line in result.detail.splitlines()[-25:])
                + "\n"
            )
    sys.stderr.write(f"envcheck: {message}; exit {result.code}\n")

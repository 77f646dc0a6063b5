"""One rule for ``-o FILE`` everywhere: the name is expanded and checked before any work (a
directory, a missing parent or an existing file without ``--force`` is refused up front), then
written atomically.

Per-node names are expanded here, because ``srun envcheck probe -o reports/%N.json`` hands the
``%N`` to envcheck unexpanded (srun expands it only in its own ``--output``): ``%N`` or
``{hostname}`` is this node's short hostname, ``%j`` or ``{jobid}`` is ``$SLURM_JOB_ID``, ``%t``
or ``{rank}`` is ``$SLURM_PROCID`` (else ``$RANK``), ``%%`` is ``%``.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
from collections.abc import Callable, Mapping
from pathlib import Path

from envcheck.errors import InputError, UsageError

_PATTERN = re.compile(r"%(.)|\{(\w+)\}|%$")


def _hostname(env: Mapping[str, str]) -> str:
    return (env.get("SLURMD_NODENAME") or socket.gethostname()).split(".", 1)[0]


def _from_env(*names: str) -> Callable[[Mapping[str, str]], str | None]:
    def get(env: Mapping[str, str]) -> str | None:
        return next((env[n] for n in names if env.get(n)), None)

    return get


_FIELDS: dict[str, tuple[Callable[[Mapping[str, str]], str | None], str]] = {
    "hostname": (_hostname, "the hostname"),
    "jobid": (_from_env("SLURM_JOB_ID"), "$SLURM_JOB_ID"),
    "rank": (_from_env("SLURM_PROCID", "RANK"), "$SLURM_PROCID or $RANK"),
}
_PERCENT = {"N": "hostname", "j": "jobid", "t": "rank"}


def expand(path: str, env: Mapping[str, str] | None = None) -> str:
    """``path`` with its per-node patterns replaced; an unknown or unset one is a usage error."""
    env = os.environ if env is None else env

    def one(match: re.Match[str]) -> str:
        letter, name = match.group(1), match.group(2)
        if letter == "%":
            return "%"
        field = _PERCENT.get(letter or "") if name is None else name
        if field not in _FIELDS:
            shown = match.group(0)
            raise UsageError(
                f"-o {path}: unknown pattern {shown!r} (known: %N or {{hostname}}, %j or "
                "{jobid}, %t or {rank}, %% for a literal %)"
            )
        get, what = _FIELDS[field]
        value = get(env)
        if not value:
            raise UsageError(f"-o {path}: {match.group(0)} needs {what}, which is not set")
        return value.replace("/", "_")

    return _PATTERN.sub(one, path)


def check_target(path: str, *, force: bool) -> None:
    """Refuse, before any work, what the write would refuse after it (same messages)."""
    target = Path(path)
    if path.endswith(os.sep) or target.is_dir():
        raise InputError(
            f"is a directory; give a file name (e.g. {path.rstrip(os.sep)}/%N.json)", where=path
        )
    parent = target.parent if str(target.parent) else Path()
    if not parent.is_dir():
        raise InputError(f"directory {parent} does not exist", where=path)
    if target.exists() and not target.is_file():
        raise InputError("not a regular file (a device or a pipe is never replaced)", where=path)
    if target.exists() and not force:
        raise InputError("file exists (use --force to overwrite)", where=path)


def prepare(args: argparse.Namespace) -> None:
    """Expand and check ``args.output`` in place (commands whose -o names one file)."""
    output = getattr(args, "output", None)
    if not output or output == "-" or getattr(args, "dry_run", False):
        return  # a dry run writes nothing
    args.output = expand(output)
    check_target(args.output, force=bool(getattr(args, "force", False)))


def add_force(p: argparse._ActionsContainer) -> None:
    p.add_argument("--force", action="store_true", help="overwrite an existing -o FILE")

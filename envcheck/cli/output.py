"""``-o FILE`` names expanded before ``envcheck.output.check_target`` checks them (the CLI
does both right after parsing, before any work; an existing file needs ``--force``).

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

from envcheck.errors import UsageError
from envcheck.patterns import lazy

_PATTERN = lazy(r"%(.)|\{(\w+)\}|%$")


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


def add_force(p: argparse._ActionsContainer) -> None:
    p.add_argument("--force", action="store_true", help="overwrite an existing -o FILE")

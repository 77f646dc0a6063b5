"""NET: torch.distributed's rendezvous on a node: the store's port already taken (NET160) and
env:// initialisation without the variables it reads (NET161). The store that other ranks cannot
reach is NET103-NET105 (network.py)."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

_DEFAULT_PORT = 29500  # torchrun's and torch.distributed.launch's --master_port default
_ENV_VARS = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE")


@rule("NET160", "rendezvous-port-in-use", Severity.ERROR)
def rendezvous_port_in_use(facts: Facts) -> Iterable[Hit]:
    """The rendezvous port (MASTER_PORT) is already in use on the node

    ## What it checks
    Only a log says it: torch's TCPStore (rank 0's rendezvous server) failing to bind its port:
    `The server socket has failed to listen on any local network address. port: 29500, ...
    name: EADDRINUSE, message: address already in use`, `The server socket has failed to
    bind to [::]:29500 (errno: 98 - Address already in use)`, or torch 1.x's bare
    `RuntimeError: Address already in use` raised from `TCPStore(...)` (the port then read from
    `MASTER_PORT=`, `--master_port` or an init_method `tcp://HOST:PORT` above it).

    ## Why it matters
    Another process holds the port: a second training job on the same node with the default
    29500, or a previous run's processes still alive after a crash. Rank 0 cannot start the
    store and every rank fails at `init_process_group`.

    ## Example
    Two `torchrun` jobs on one node, both with the default `--master_port 29500`.

    ## Fix
    Give the job a free port (`export MASTER_PORT=29501`, `torchrun --master_port 29501`,
    `deepspeed --master_port 29501`; a launcher or script that hard-codes 29500 must take it
    too), or end the stale process that holds it (`ss -ltnp | grep :29500`, then kill it).
    A script that passes `init_method="tcp://HOST:PORT"` (`--dist-url`) takes the port from
    that URL: change it there.

    ## References
    - pytorch/pytorch torch/lib/c10d/Utils.hpp (torch 1.x: SYSCHECK's std::system_error(errno)
      when ::bind fails: 'Address already in use')
    - pytorch/pytorch torch/csrc/distributed/c10d/socket.cpp ('The server socket has failed to
      listen on any local network address.', 'The server socket has failed to bind to {} (errno:
      {} - {}).')
    - https://github.com/xdit-project/mochi-xdit/issues/22
    - https://pytorch.org/docs/stable/elastic/run.html
    """
    raise Skip("only a log line states a rendezvous port in use", "log.network")


@from_log("NET160")
def rendezvous_port_in_use_in_log(facts: Facts, line: LogLine) -> Hit:
    """torch's TCPStore line; the port from the line or the lines above it (29500 when the log
    names none), the fix by the rendezvous method the log states: an init_method tcp:// URL
    takes its port from the URL, not from MASTER_PORT."""
    stated = line.number("port")
    port = int(stated) if stated else _DEFAULT_PORT
    free = port + 1
    message = (
        f"rank 0's rendezvous store could not bind port {port} (line {line.line}): another "
        "process on the node already listens on it (a second job, or a crashed run's processes)"
    )
    stale = manual(f"ss -ltnp | grep :{port}   # the process holding it; kill it if it is stale")
    if line.stated.get("rendezvous_method") == "tcp":
        if not stated:  # the URL's port, which the log does not state: not torchrun's default
            message = (
                f"rank 0's rendezvous store could not bind the port of its init_method URL "
                f"(line {line.line}): another process on the node already listens on it"
            )
            return Hit(
                message,
                evidence={"line": line.line, "method": "tcp"},
                fix=fix(
                    "Use a free port in the init_method URL the script passes "
                    "(tcp://<host>:<free port>: its --init_method or --dist-url, or the "
                    "MASTER_PORT it builds the URL from)",
                    "manual",
                    manual("--init_method tcp://<rank 0 host>:<free port>   # or --dist-url"),
                    manual("ss -ltnp   # the port's holder; kill it if it is stale"),
                ),
            )
        return Hit(
            message,
            evidence={"line": line.line, "port": port, "method": "tcp"},
            fix=fix(
                f"Use a free port in the init_method URL the script passes (tcp://<host>:{free}: "
                "its --init_method or --dist-url, or the MASTER_PORT it builds the URL from), or "
                f"end the stale process that holds {port}",
                "manual",
                manual(
                    f"--init_method tcp://<rank 0 host>:{free}   # or --dist-url, as the "
                    "script names it"
                ),
                manual(f"export MASTER_PORT={free}   # where the script builds the URL from it"),
                stale,
            ),
        )
    return Hit(
        message,
        evidence={"line": line.line, "port": port},
        fix=fix(
            f"Use a free port: export MASTER_PORT={free} (or torchrun --master_port {free}), or "
            f"end the stale process that holds {port}",
            "manual",
            manual(
                f"export MASTER_PORT={free}   # or: torchrun --master_port {free} ... / "
                f"deepspeed --master_port {free} ..."
            ),
            stale,
        ),
    )


@rule("NET161", "rendezvous-env-unset", Severity.WARNING)
def rendezvous_env_unset(facts: Facts) -> Iterable[Hit]:
    """torch.distributed's env:// rendezvous is missing MASTER_ADDR or MASTER_PORT

    ## What it checks
    The environment of a multi-process job (`WORLD_SIZE` above 1 or `RANK` set) without
    `MASTER_ADDR` or `MASTER_PORT`; in `triage`, torch's own error: `Error initializing
    torch.distributed using env:// rendezvous: environment variable MASTER_ADDR expected, but
    not set`.

    ## Why it matters
    `init_process_group()` with the default `env://` method reads rank 0's address and port
    from these variables; torchrun sets them, a script started with `python` (or by a scheduler
    that sets only RANK and WORLD_SIZE) does not, and every rank fails before the first
    collective.

    ## Example
    `RANK=0 WORLD_SIZE=2 python train.py` without MASTER_ADDR.

    ## Fix
    Start the job with `torchrun` (which sets them), or export `MASTER_ADDR` (rank 0's node,
    an address every node reaches) and `MASTER_PORT` (a free port, 29500 by default) on every
    rank; with Slurm, `MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1)`.

    ## References
    - pytorch/pytorch torch/distributed/rendezvous.py (_env_error: 'Error initializing
      torch.distributed using env:// rendezvous: environment variable {} expected, but not set')
    - https://pytorch.org/docs/stable/distributed.html#environment-variable-initialization
    """
    env = facts.env()
    try:
        world = int(env.get("WORLD_SIZE") or "0")
    except ValueError:
        world = 0
    if world <= 1 and "RANK" not in env:
        return []
    missing = [v for v in ("MASTER_ADDR", "MASTER_PORT") if not env.get(v)]
    if not missing:
        return []
    return [_env_hit(missing, None)]


def _env_hit(missing: list[str], line: int | None) -> Hit:
    where = f" (line {line})" if line is not None else ""
    return Hit(
        f"torch.distributed's env:// rendezvous needs {' and '.join(missing)}, which "
        f"{'is' if len(missing) == 1 else 'are'} not set{where}",
        evidence={"missing": missing, "line": line},
        fix=fix(
            "Start the job with torchrun (it sets MASTER_ADDR and MASTER_PORT), or export "
            "MASTER_ADDR=<rank 0's address> MASTER_PORT=29500 on every rank",
            "manual",
            manual(
                "torchrun --nnodes N --nproc_per_node G --rdzv_endpoint <rank 0 host>:29500 ..."
            ),
            manual("export MASTER_ADDR=<address of rank 0's node> MASTER_PORT=29500"),
            manual(
                "Slurm: export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | "
                "head -n1) MASTER_PORT=29500"
            ),
        ),
    )


@from_log("NET161")
def rendezvous_env_unset_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """torch's 'environment variable MASTER_ADDR expected, but not set' names the variable."""
    var = line.stated.get("rendezvous_var") or "MASTER_ADDR"
    if var not in _ENV_VARS:
        return None
    missing = [var] if var in ("MASTER_ADDR", "MASTER_PORT") else ["MASTER_ADDR", "MASTER_PORT"]
    hit = _env_hit(missing, line.line)
    if var in ("RANK", "WORLD_SIZE"):
        hit = Hit(
            f"torch.distributed's env:// rendezvous needs {var}, which is not set (line "
            f"{line.line}): the script was started without a launcher",
            evidence={"missing": [var], "line": line.line},
            fix=hit.fix,
        )
    return hit

"""RAY110: a Ray node or driver that cannot reach the head node's GCS at the address it was
given; the address as the log states it decides the first step (an empty host: the variable
that should hold the head's address was unset)."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

_GCS_PORT = "6379"  # ray start --head's default --port
_LOOPBACK = ("127.", "localhost", "::1", "0.0.0.0")


@rule("RAY110", "ray-gcs-unreachable", Severity.ERROR)
def ray_gcs_unreachable(facts: Facts) -> Iterable[Hit]:
    """A Ray node or driver cannot reach the head node's GCS at the address it was given

    ## What it checks
    Only a log says it: Ray's GCS client giving up on the head's address, `gcs_rpc_client.h:
    Failed to connect to GCS at address 10.0.0.1:6379 within 5 seconds.` (`ray start
    --address`, `ray.init(address=...)`, vLLM's and verl's Ray executors), `Unable to connect
    to GCS at 10.0.0.1:6379. Check that (1) Ray GCS with matching version started successfully
    at the specified address, and (2) there is no firewall setting preventing access.`, and
    `Failed to get cluster ID from GCS server: TimedOut: Timed out while waiting for GCS to
    become available.`

    ## Why it matters
    Every Ray worker node and driver registers with the head's GCS first; without it `ray
    start` exits and `ray.init()` raises. The head is not running there (never started, `ray
    stop`ped, a Slurm step that ended and took the head with it), the address or port is not
    the head's (a launch script whose head-address variable was empty: `--address=:6379`),
    or a firewall or another network between the nodes drops the connection.

    ## Example
    A launch script runs `ray start --address=$MASTER_ADDR:6379` with MASTER_ADDR unset: the
    worker tries `:6379` and times out.

    ## Fix
    Give the command the head's routable address and GCS port (`ray start --address
    <head IP>:6379`; in a script, set the variable it reads, such as MASTER_ADDR); on the head,
    `ray status` shows whether it is up (start it with `ray start --head --port 6379
    --node-ip-address <head IP>`); from this node, `nc -zv <head IP> 6379` and `ip route get
    <head IP>` show whether the port is reachable (open it in the firewall).

    ## References
    - ray-project/ray src/ray/rpc/gcs_server/gcs_rpc_client.h ('Failed to connect to GCS at
      address ' << address << ':' << port << ' within ' << timeout << ' seconds.') and
      src/ray/gcs/gcs_client/gcs_client.cc ('Failed to get cluster ID from GCS server')
    - https://docs.ray.io/en/latest/cluster/faq.html ('What does a worker node failure to
      connect look like?': 'Unable to connect to GCS at xx.xx.xx.xx:nnnn ... The most likely
      cause is that the worker node can't access the IP address given')
    - https://github.com/ModalMinds/MM-EUREKA/issues/54 (`--address=:6379`: MASTER_ADDR unset)
    """
    raise Skip("only a log line states that the head's GCS could not be reached", "log.ray")


def _split(address: str) -> tuple[str, str]:
    """host and port of a 'host:port' as Ray prints it (the host may be empty)."""
    host, _, port = address.rpartition(":")
    return host.strip("[]"), port


@from_log("RAY110")
def ray_gcs_unreachable_in_log(facts: Facts, line: LogLine) -> Hit:
    """Ray's GCS client line; the address it tried, as the line states it, decides the fix."""
    stated = line.stated.get("gcs_address", "")
    host, port = _split(stated) if stated else ("", "")
    port = port or _GCS_PORT
    check = manual("ray status   # on the head node: is Ray's head running?")
    if stated and not host:
        return Hit(
            f"the Ray head's address has no host (line {line.line}: '{stated}'): the variable "
            "the launch command builds it from (MASTER_ADDR, a head-IP variable) was empty",
            evidence={"line": line.line, "address": stated},
            fix=fix(
                "Set the head node's address before the command runs (the variable its "
                f"--address=$VAR:{port} reads, such as MASTER_ADDR), or pass it directly",
                "manual",
                manual(
                    f"export MASTER_ADDR=<head node IP>   # then: ray start --address "
                    f"$MASTER_ADDR:{port}"
                ),
                check,
            ),
        )
    where = f"{host}:{port}" if host else f"<head IP>:{port}"
    if host.startswith(_LOOPBACK):
        return Hit(
            f"no Ray GCS answers at {where} (line {line.line}): a loopback address reaches a "
            "head only on this node, and none is running here",
            evidence={"line": line.line, "address": stated},
            fix=fix(
                "Start the head here first (ray start --head), or give the head node's "
                "routable address instead of a loopback one",
                "manual",
                manual(f"ray start --head --port {port}   # on this node, if it is the head"),
                manual(f"ray start --address <head node IP>:{port}   # on a worker node"),
            ),
        )
    return Hit(
        f"this node could not reach the Ray head's GCS at {where} (line {line.line}): the "
        "head is not running there, the address or port is not the head's, or a firewall "
        "between the nodes drops it",
        evidence={"line": line.line, "address": stated or None},
        fix=fix(
            f"Check that the head runs at {where} and that this node reaches that port; "
            "start the head with its routable address, or open the port",
            "manual",
            check,
            manual(f"nc -zv {host or '<head IP>'} {port}   # from this node: is the port open?"),
            manual(f"ray start --head --port {port} --node-ip-address <head IP>   # on the head"),
        ),
    )

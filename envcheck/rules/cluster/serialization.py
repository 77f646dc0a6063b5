"""CLU140: nodes differ in cloudpickle, the serialiser Ray pickles functions and actors with.

Early Ray (0.2.x) pickled with the installed cloudpickle and put its version in the check
every node passes (`Version mismatch: ... Cloudpickle: 0.5.2 ... Cloudpickle: 0.2.2`); later
Ray carries its own copy (`ray.cloudpickle`), but code that pickles with the installed one
(a task that ships closures itself) still needs the same release on both ends.
"""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, NotStated, from_log
from envcheck.rules.cluster import values
from envcheck.rules.cluster.model import (
    NOT_INSTALLED,
    ClusterFacts,
    ClusterHit,
    cluster_rule,
    describe_split,
    evidence,
    name_nodes,
    need_two,
)
from envcheck.rules.fixes import fix, manual, pip_install


@cluster_rule("CLU140", "cloudpickle-drift", Severity.WARNING)
def cloudpickle_drift(facts: ClusterFacts) -> Iterable[ClusterHit]:
    """Nodes differ in cloudpickle

    ## What it checks
    The installed `cloudpickle` version of every node (nodes without it included).

    ## Why it matters
    A function or object pickled by one cloudpickle release may not load under another. Early
    Ray pickled with the installed cloudpickle and refused a node whose release differed
    (`Exception: Version mismatch: The cluster was started with: ... Cloudpickle: 0.5.2 ...
    This process on node ... was started with: ... Cloudpickle: 0.2.2`, before that the
    workers on that node died silently); newer Ray pickles with its own copy, so there it
    breaks only code that pickles with the installed cloudpickle itself.

    ## Example
    cloudpickle 0.5.2 on the head node, 0.2.2 on node 172.31.4.51 (Ray 0.2.2, Python 3.5.2 on
    both).

    ## Fix
    Install the same cloudpickle on every node (the head's, or the majority's): same image or
    lockfile.

    ## References
    - https://github.com/ray-project/ray/issues/1263
    - https://github.com/ray-project/ray/pull/1264
    """
    need_two(facts)
    row = facts.group("package:cloudpickle", "cloudpickle", values.package("cloudpickle"))
    if len(row.values) < 2:
        return []
    target = row.majority.value
    odd = row.odd_nodes()
    action = (
        manual(f"install cloudpickle on every node, or uninstall it on {name_nodes(odd)}")
        if target == NOT_INSTALLED
        else pip_install(f"cloudpickle=={target}")
    )
    return [
        ClusterHit(
            f"cloudpickle differs: {describe_split(row)}",
            evidence=evidence(row),
            fix=fix(
                f"On {name_nodes(odd)}: install the cluster's cloudpickle ({target})",
                "manual",
                action,
            ),
        )
    ]


@from_log("CLU140")
def cloudpickle_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """Early Ray's version-mismatch line names both cloudpickle versions; equal ones (or a line
    without them: newer Ray does not compare cloudpickle) rule CLU140 out."""
    mine, theirs = (
        line.stated.get("cloudpickle_version"),
        line.stated.get("cloudpickle_cluster_version"),
    )
    if not mine and not theirs:
        return None  # this Ray's check does not compare cloudpickle
    if not mine or not theirs:
        raise NotStated("the log states one cloudpickle version only", "log.cloudpickle_version")
    if mine == theirs:
        return None
    return Hit(
        f"this process runs cloudpickle {mine}, the cluster was started with cloudpickle "
        f"{theirs} (line {line.line}); Ray refuses the node",
        evidence={"line": line.line, "cloudpickle": mine, "cluster_cloudpickle": theirs},
        fix=fix(
            f"Install the cluster's cloudpickle here (cloudpickle=={theirs}), or the same "
            "cloudpickle on every node (image / lockfile), then restart Ray on this node",
            "manual",
            pip_install(f"cloudpickle=={theirs}"),
        ),
    )

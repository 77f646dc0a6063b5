"""NCCL failures whose line names the NCCL feature or the ranks at fault: NET121, ranks of one
communicator running different NCCL versions (or settings), and NET122, NVLink SHARP (NVLS)
multicast failing on an NVSwitch system (the signatures in
matrices/signatures/nccl_transports.toml)."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual

# NCCL's init.cc: 'Mismatched NCCL version detected : rank %d version %d rank %d version %d'
_MISMATCH = lazy(r"rank ([0-9]+) version ([0-9]+) rank ([0-9]+) version ([0-9]+)")


# NCCL's own lines that the ranks disagree (matrices/signatures/nccl_transports.toml)
_DISAGREE = "nccl-ranks-disagree"
# init.cc: 'NCCL version mismatch with remote peer %s (local: %s, remote %s)'
_PEER_VERSIONS = lazy(r"remote peer (\S+) \(local: ([0-9.]+), remote:? ([0-9.]+)\)")
# bootstrap.cc: 'mismatch in info from procs, nranks %d vs %d' / 'has already checked in'
_ROOT = lazy(
    r"Bootstrap Root : (mismatch in (?:info|rank count) from procs|rank [0-9]+ of [0-9]+ ranks has already checked in)"
)
_SAME_NCCL = (
    "python -c 'import torch; print(torch.cuda.nccl.version())'   # on every node: one answer",
    "env | grep ^NCCL_   # on every node: the same NCCL_* settings (NCCL_ALGO, NCCL_PROTO, "
    "NCCL_P2P_DISABLE, NCCL_IB_*) everywhere",
    "use the same container image (or the same torch) on every node",
)


def _versions_differ(line: LogLine, a: tuple[str, str], b: tuple[str, str]) -> Hit:
    """Two ranks (or a rank and its peer) named with their NCCL releases: the newer one is the
    pin to install where the older runs."""
    (who_a, va), (who_b, vb) = a, b
    newer = max((va, vb), key=lambda v: tuple(int(p) for p in v.split(".")))
    older = vb if newer == va else va
    return Hit(
        f"{who_a} runs NCCL {va} and {who_b} runs NCCL {vb} (line {line.line}): one "
        "communicator needs one NCCL on every rank",
        evidence={"line": line.line, "versions": sorted({va, vb})},
        fix=fix(
            f"Run one NCCL on every node: the same image or torch everywhere, or pip install "
            f"nvidia-nccl-cu12=={newer} (nvidia-nccl-cu13 for CUDA 13 builds) where NCCL {older} "
            "runs",
            "manual",
            manual(f"pip install nvidia-nccl-cu12=={newer}   # on the nodes running NCCL {older}"),
            *(manual(s) for s in _SAME_NCCL[::2]),
        ),
    )


def _ranks_disagree(line: LogLine) -> Hit:
    """NCCL's lines that the ranks reported inconsistent things: a peer's other NCCL (both
    versions named), the bootstrap root getting two world sizes or one rank twice (two jobs on
    one rendezvous, or a launcher's ranks), rings or transports built from different
    topologies (another NCCL or other NCCL_* settings on some ranks)."""
    versions = _PEER_VERSIONS.search(line.text)
    if versions is not None:
        return _versions_differ(
            line,
            ("this rank", versions.group(2)),
            (f"its peer {versions.group(1)}", versions.group(3)),
        )
    if _ROOT.search(line.text):
        return Hit(
            f"NCCL's bootstrap root heard from ranks that do not belong to one job (line "
            f"{line.line}): two world sizes, or one rank twice: another job (or a stale process "
            "of an earlier run) on the same rendezvous address and port, or a launcher that "
            "gave ranks different WORLD_SIZE / RANK values",
            evidence={"line": line.line},
            fix=fix(
                "Give each job its own rendezvous port (MASTER_PORT, NCCL_COMM_ID) and stop "
                "leftover processes of earlier runs; start every rank with the same world size",
                "manual",
                manual("export MASTER_PORT=<a port no other job on these nodes uses>"),
                manual("pkill -f <the training script>   # leftover ranks of an earlier run"),
                manual(
                    "check the launcher: --nnodes / --nproc-per-node (WORLD_SIZE) the same on "
                    "every node, each RANK once"
                ),
            ),
        )
    return Hit(
        f"the ranks built inconsistent rings or transports (line {line.line}): NCCL searched "
        "its topology on each rank and they disagree: another NCCL or other NCCL_* settings on "
        "some ranks (NCCL_ALGO, NCCL_PROTO, NCCL_P2P_DISABLE set on some nodes only), or nodes "
        "of different shape (GPU or NIC counts)",
        evidence={"line": line.line},
        fix=fix(
            "Run the same NCCL with the same NCCL_* settings on every rank (one image, one "
            "environment), on nodes of one shape",
            "manual",
            *(manual(s) for s in _SAME_NCCL),
        ),
    )


def nccl_version(code: str) -> str:
    """NCCL_VERSION_CODE as a release: X*10000+Y*100+Z from 2.9 on, X*1000+Y*100+Z before
    (nccl.h: NCCL_VERSION(X,Y,Z) ((X) <= 2 && (Y) <= 8) ? (X)*1000+(Y)*100+(Z) : ...)."""
    n = int(code)
    if n >= 20900:
        return f"{n // 10000}.{n // 100 % 100}.{n % 100}"
    return f"{n // 1000}.{n // 100 % 10}.{n % 100}"


@rule("NET121", "nccl-ranks-differ", Severity.ERROR)
def nccl_ranks_differ(facts: Facts) -> Iterable[Hit]:
    """The ranks of one NCCL communicator run different NCCL versions or settings

    ## What it checks
    Only a log says it: NCCL's `Mismatched NCCL version detected : rank 0 version 21805 rank 8
    version 22105` (init.cc, ncclInvalidUsage), and the socket transport's `message truncated :
    receiving 524288 bytes instead of 65536` (or `Message truncated : received N bytes instead
    of M`), which NCCL itself attributes to a mismatch of versions, collective sizes or settings
    (NCCL_PROTO, NCCL_ALGO) between ranks. In a multi-node log with `NCCL_DEBUG=INFO`, the
    hosts' own banners side by side (`node1:...] NCCL INFO NCCL version 2.18.6+cuda12.1` and
    `node2:...] NCCL INFO NCCL version 2.20.5+cuda12.4`, read by triage/nccl_hosts.py) state
    it too, and so do their `NCCL_PROTO set by environment to Simple` lines on some hosts only.
    `envcheck cluster` compares the nodes' NCCL.

    ## Why it matters
    Every rank must run the same NCCL with the same protocol settings: nodes built from
    different images, a torch upgraded on one node (its nvidia-nccl-cuXX pin moves with it) or
    a system libnccl loaded before the wheel's on some nodes make the ranks disagree, and
    initialisation fails or collectives exchange mismatched messages.

    ## Example
    Two nodes, one with torch 2.1 (NCCL 2.18.6), one with torch 2.3 (NCCL 2.20.5):
    `NCCL WARN Mismatched NCCL version detected : rank 0 version 21806 rank 8 version 22005`.

    ## Fix
    Run one NCCL everywhere: the same container image or the same torch on every node, or pin
    the wheel (`pip install nvidia-nccl-cu12==<one version>` on every node); check each
    node's `python -c "import torch; print(torch.cuda.nccl.version())"`. Unset NCCL_PROTO /
    NCCL_ALGO where only some nodes set them.

    ## References
    - https://github.com/NVIDIA/nccl/blob/master/src/init.cc
    - https://github.com/NVIDIA/nccl/blob/master/src/transport/net_socket.cc
    - https://github.com/NVIDIA/nccl/issues/1328
    """
    raise Skip("only a log line states which NCCL each rank runs", "log.nccl")


# matrices/signatures/nccl.toml: an address of no family, which a peer's other NCCL also gives
_FAMILY_GARBAGE = "nccl-socket-address-family-garbage"
# ingest/merge.py's note where two pasted listings (one per node) name an NCCL wheel differently
_LISTED_TWICE = lazy(
    r"conflict: packages\.(nvidia-nccl-cu[0-9]+) is '([0-9][0-9.]*)' in (.+?) but "
    r"'([0-9][0-9.]*)' in (.+?); kept"
)


def _listings_differ(facts: Facts) -> tuple[str, tuple[str, str], tuple[str, str]] | None:
    """The NCCL wheel two listings pasted beside the log (a `pip freeze` per node) name at two
    versions: the wheel, and each listing with its version. None when none does."""
    report = facts.report.packages
    for note in report.notes if report.is_ok else ():
        found = _LISTED_TWICE.search(note)
        if found is not None:
            wheel, va, a, vb, b = found.groups()
            return wheel, (a, va), (b, vb)
    return None


@from_log("NET121")
def nccl_ranks_differ_in_log(facts: Facts, line: LogLine) -> Hit:
    """The version check names both ranks' NCCL (decoded from NCCL_VERSION_CODE): the newer one
    is the pin to install everywhere. A line that names no version (a truncated message, an
    address of no family, the ranks' disagreement) is decided by the hosts' own banners where
    the log holds them (triage/nccl_hosts.py); else a truncated message is left open, and an
    address of no family is the other NCCL only where the pasted listings name two releases."""
    names_both = any(p.search(line.text) for p in (_MISMATCH, _PEER_VERSIONS, _ROOT))
    hosts_state = line.stated.get("nccl_hosts_versions") or line.stated.get("nccl_hosts_settings")
    if line.signature == _HOSTS or (hosts_state and not names_both):
        # the hosts' own banners name their releases where the line names none
        return _hosts_differ(line)
    if line.signature == _DISAGREE:
        return _ranks_disagree(line)
    if line.signature == _FAMILY_GARBAGE:
        listed = _listings_differ(facts)
        if listed is None:
            raise NotStated(
                f"line {line.line} is an address of no family: a peer with another NCCL "
                "release sends one, and so does a node where no interface matched; which NCCL "
                "each node runs is not stated",
                fix="pip list | grep nccl   # on every node: one NCCL release everywhere",
            )
        _, a, b = listed
        return _versions_differ(line, (f"the listing in {a[0]}", a[1]), (f"{b[0]}", b[1]))
    found = _MISMATCH.search(line.text)
    if found is None:
        raise NotStated(
            f"line {line.line} says two ranks exchanged messages of different sizes, not "
            "whether their NCCL versions differ (or the program's collectives do)"
        )
    return _versions_differ(
        line,
        (f"rank {found.group(1)}", nccl_version(found.group(2))),
        (f"rank {found.group(3)}", nccl_version(found.group(4))),
    )


# the hosts' NCCL start-up lines set side by side (envcheck/triage/nccl_hosts.py)
_HOSTS = "nccl-hosts-differ"
# '2.18.6+cuda12.1' (the CUDA the release was built for, where the banner states it)
_RELEASE = lazy(r"([0-9]+\.[0-9]+\.[0-9]+)(?:\+cuda([0-9]+)\.[0-9]+)?")


def _hosts_differ(line: LogLine) -> Hit:
    """The hosts' NCCL releases from their start-up banners (oldest first): the newest is the
    pin for the hosts on an older one, in the wheel of the CUDA major its build names."""
    from envcheck.rules.node.nccl_hosts import on_hosts, stated_groups

    groups = stated_groups(line.stated.get("nccl_hosts_versions", ""))
    if len(groups) < 2:
        return _settings_differ(line)
    newest = _RELEASE.match(groups[-1][0])
    version = newest.group(1) if newest else groups[-1][0]
    major = (newest.group(2) if newest else None) or "12"
    wheel = f"nvidia-nccl-cu{major}"
    older = [h for _, hs in groups[:-1] for h in hs]
    shown = "; ".join(f"NCCL {v} on {on_hosts(hs)}" for v, hs in groups)
    drivers = line.stated.get("nccl_hosts_drivers")
    also = (
        "; their drivers differ too (cudaDriverVersion "
        + drivers.replace("=", " on ").replace(";", ", ")
        + ")"
        if drivers
        else ""
    )
    return Hit(
        f"the hosts run different NCCL releases ({shown}, as their start-up banners state)"
        f"{also}: one communicator needs one NCCL on every rank (line {line.line})",
        evidence={"line": line.line, "versions": line.stated["nccl_hosts_versions"]},
        fix=fix(
            f"Run one NCCL on every node: the same image or torch everywhere, or pip install "
            f"{wheel}=={version} on {on_hosts(older)}",
            "manual",
            manual(f"pip install {wheel}=={version}   # on {on_hosts(older)}"),
            *(manual(s) for s in _SAME_NCCL[::2]),
        ),
    )


def _settings_differ(line: LogLine) -> Hit:
    """NCCL_PROTO / NCCL_ALGO set on some hosts only, or to other values, as each host's NCCL
    echoes them: the hosts that set it unset it (or every host sets the same)."""
    from envcheck.rules.node.nccl_hosts import on_hosts, stated_groups

    stated = line.stated.get("nccl_hosts_settings", "")
    if not stated:
        raise NotStated(f"line {line.line} states no two hosts' NCCL releases or settings")
    parts, actions = [], []
    for entry in stated.split("|"):
        name, _, groups = entry.partition(":")
        values = stated_groups(groups)
        parts.append(
            f"{name} "
            + "; ".join(f"{'unset' if v == 'unset' else v} on {on_hosts(hs)}" for v, hs in values)
        )
        setting = [h for v, hs in values if v != "unset" for h in hs]
        actions.append(
            manual(f"unset {name}   # on {on_hosts(setting)}, or the same value everywhere")
        )
    return Hit(
        f"the hosts run NCCL with different settings ({'; '.join(parts)}, as each host's NCCL "
        f"echoes them): every rank of a communicator needs the same protocol and algorithm "
        f"settings (line {line.line})",
        evidence={"line": line.line, "settings": stated},
        fix=fix(
            "Use the same NCCL_PROTO / NCCL_ALGO on every node: unset them where only some "
            "nodes set them (/etc/nccl.conf, ~/.nccl.conf, the job's environment)",
            "manual",
            *actions,
            manual(_SAME_NCCL[1]),
        ),
    )


@rule("NET122", "nccl-nvls-multicast-failed", Severity.ERROR)
def nccl_nvls_failed(facts: Facts) -> Iterable[Hit]:
    """NCCL's NVLink SHARP (NVLS) multicast failed on an NVSwitch system

    ## What it checks
    Only a log says it: a CUDA call failing inside NCCL's NVLS transport, `transport/nvls.cc:254
    NCCL WARN Cuda failure 401 'the operation cannot be performed in the present state'` (or
    `'invalid argument'`, `'operation not supported'`, `'initialization error'`).

    ## Why it matters
    From NCCL 2.17 on, H100/H200/B200 systems with NVSwitches use NVLS (multicast objects through
    cuMulticast*) for all-reduce. It needs the fabric manager running and the GPUs registered in
    the NVLink fabric, and a driver whose multicast support the container sees; when any of that
    is missing the communicator fails at init, on nodes that ran the same job before.

    ## Example
    vLLM with tensor parallelism 8 on an HGX H100 after a driver update without restarting
    nvidia-fabricmanager: `transport/nvls.cc:254 NCCL WARN Cuda failure 401 ...`.

    ## Fix
    Turn NVLS off, which NCCL's maintainers ask first and the threads report working:
    `export NCCL_NVLS_ENABLE=0` (all-reduce then uses NVLink rings and trees). To keep NVLS,
    check the fabric: `systemctl status nvidia-fabricmanager` (same version as the driver),
    `nvidia-smi -q | grep -A2 Fabric` (State Completed, Status Success). After the Fabric
    Manager was restarted on a running node, reset the GPUs (`nvidia-smi -r`) or reboot: the
    fabric is set up only while the GPUs are idle.

    ## References
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-nvls-enable
    - https://github.com/NVIDIA/nccl/issues/1788
    - https://github.com/NVIDIA/nccl/issues/1672
    - https://github.com/sgl-project/sglang/pull/631
    - https://github.com/NVIDIA/nccl/issues/976
    - https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/
    """
    raise Skip("only a log line states that NCCL's NVLS transport failed", "log.nccl")


@from_log("NET122")
def nccl_nvls_failed_in_log(facts: Facts, line: LogLine) -> Hit:
    """NCCL's NVLS transport file in the line's source location: disable NVLS first."""
    error = line.stated.get("nccl_cuda_failure") or "a CUDA call failed"
    return Hit(
        f"NCCL's NVLink SHARP (NVLS) setup failed (line {line.line}: {error}): the multicast "
        "objects NVLS needs are not available (fabric manager, NVLink fabric registration, "
        "driver)",
        evidence={"line": line.line},
        fix=fix(
            "export NCCL_NVLS_ENABLE=0 (NCCL uses NVLink rings/trees instead); to keep NVLS, "
            "restart nvidia-fabricmanager at the driver's version and check the fabric state",
            "manual",
            manual("export NCCL_NVLS_ENABLE=0"),
            manual("systemctl status nvidia-fabricmanager   # running, same version as the driver"),
            manual("nvidia-smi -q | grep -A2 Fabric   # State: Completed, Status: Success"),
            manual(_FM_RESTARTED),
        ),
    )


# The Fabric Manager user guide's start-up order: the fabric is set up while no GPU is in use,
# so a Fabric Manager restarted under a running system leaves the GPUs' NVLink state stale
# until they are reset (NVIDIA/nccl#976: 'usually due to nv-fabricmanager having been manually
# restarted while processes were still holding resources on the GPU. Rebooting the node is
# usually the easiest solution').
_FM_RESTARTED = (
    "after nvidia-fabricmanager was restarted: reset the GPUs (no process on them: "
    "nvidia-smi -r) or reboot"
)

"""The NCCL family's causes that no older rule names: NET150, NCCL's InfiniBand / RoCE transport
unusable (no HCA the process can open, libibverbs missing, /dev/infiniband not in the
container); CUD152, two ranks on one GPU. NCCL's other lines name existing causes (the signatures in
matrices/signatures/nccl.toml): its socket interface lines NET101/NET104, its shared-memory
lines SYS101, its P2P lines GPU116/NET106, its `Cuda failure` lines DRV150."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Mapping

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.network import candidate

_STEPS = (
    "with InfiniBand/RoCE HCAs on the node: install rdma-core (libibverbs1, ibverbs-providers; "
    "`ibv_devinfo` must list the HCAs) and, in a container, pass the devices "
    "(`--device=/dev/infiniband`, `--cap-add=IPC_LOCK`, or the RDMA device plugin)",
    "without them (or to run over TCP on purpose): export NCCL_IB_DISABLE=1 so NCCL uses its "
    "socket transport, with NCCL_SOCKET_IFNAME set to the interface between the nodes",
)


@rule("NET150", "nccl-ib-transport-unavailable", Severity.WARNING)
def nccl_ib_unavailable(facts: Facts) -> Iterable[Hit]:
    """NCCL cannot use InfiniBand/RoCE: no HCA it can open, libibverbs missing, or verbs calls failing

    ## What it checks
    NCCL's own IB plugin lines (src/transport/net_ib.cc, src/misc/ibvwrap.cc): `NET/IB : No
    device found.`, `NET/IB : Unable to open device mlx5_0`, `Failed to open libibverbs.so[.1]`,
    `Call to ibv_create_qp failed`; at run time `Call to ibv_reg_mr failed` / `Cannot allocate
    memory` (the memlock limit), `Call to ibv_modify_qp failed`, `NET/IB : Got completion ...
    with error 12` (the fabric or, on RoCE, the GID index); `NCCL_IB_HCA set to X` followed by
    `No device found.` (the filter kept no HCA). On a node: HCAs whose ports are all down (NCCL
    uses only ACTIVE ports); what NCCL inside a container could open only its log says. NCCL's
    INFO `NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'`: the transport works without
    GPUDirect RDMA (no peer-memory module it detects), through host memory; the kernel refusing
    that module (`could not insert 'nvidia_peermem': Invalid argument`, `nv_peer_mem: Unknown
    symbol ib_register_peer_memory_client`).

    ## Why it matters
    Without the IB plugin NCCL falls back to TCP sockets (`NET/Socket`): multi-node collectives
    run an order of magnitude slower, or, where the socket interface is wrong too, fail with
    `unhandled system error`. In containers the usual cause is an image without rdma-core or a
    run without `/dev/infiniband`.

    ## Example
    `NCCL INFO NET/IB : No device found.` then `NCCL INFO NET/Socket : Using [0]eth0` on an
    InfiniBand cluster, in a container started without `--device=/dev/infiniband`.

    ## Fix
    With HCAs: install rdma-core (libibverbs1, ibverbs-providers) and pass /dev/infiniband
    (and IPC_LOCK) into the container; without them, or to use TCP on purpose,
    `export NCCL_IB_DISABLE=1` and set NCCL_SOCKET_IFNAME. Memory registration refused: raise
    memlock (`--ulimit memlock=-1`); completion errors on RoCE: `export NCCL_IB_GID_INDEX=3`.
    An NCCL_IB_HCA that names no HCA of the node: set it to the names `ibv_devices` lists there,
    or unset it. GPUDirect RDMA disabled: `modprobe nvidia-peermem` on every node; NCCL before
    2.23.4 looks only for the older nv_peer_mem, so with nvidia-peermem use NCCL 2.23.4+. The
    module refused: install MLNX_OFED first, then rebuild it (reinstall the driver).

    ## References
    - https://github.com/NVIDIA/nccl/blob/master/src/transport/net_ib.cc
    - https://github.com/NVIDIA/nccl/blob/master/src/misc/ibvwrap.cc
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-ib-disable
    - https://github.com/NVIDIA/nccl/issues/426
    - https://github.com/NVIDIA/nccl/blob/v2.23.4-1/src/transport/net_ib.cc
    """
    network = facts.network()
    hcas = network.infiniband
    if not hcas:  # no HCA: NCCL uses its socket transport by design
        return []
    ports = [p for d in hcas for p in d.ports]
    if not ports or any("ACTIVE" in (p.state or "").upper() for p in ports):
        return []
    names = ", ".join(f"{d.name} ({', '.join(p.state or '?' for p in d.ports)})" for d in hcas)
    return [
        Hit(
            f"every InfiniBand/RoCE port is down ({names}): NCCL uses only ACTIVE ports, so its "
            "IB transport finds no device and falls back to TCP sockets",
            evidence={"hcas": [d.name for d in hcas]},
            fix=fix(
                "Bring the HCA ports up (cable, switch, subnet manager: `ibstat`), or export "
                "NCCL_IB_DISABLE=1 to use sockets on purpose",
                "manual",
                manual("ibstat; ibv_devinfo (port state must be PORT_ACTIVE)"),
                manual(_STEPS[1]),
            ),
        )
    ]


_MEMLOCK = (
    "raise the locked-memory limit NCCL registers buffers under: ulimit -l unlimited; in "
    "containers docker run --ulimit memlock=-1 (Kubernetes: the IPC_LOCK capability and an "
    "unlimited memlock limit)"
)
_FABRIC = (
    "RoCE: export NCCL_IB_GID_INDEX=3 (the RoCE v2 GID; `show_gids` lists them), and on "
    "rail-connected fabrics export NCCL_CROSS_NIC=0",
    "InfiniBand: check the links on both nodes (`ibstat`: State Active, the error counters), "
    "and whether the peer process died first",
    "to confirm the fabric is at fault, rerun with export NCCL_IB_DISABLE=1 (TCP sockets)",
)


def _ib_runtime(line: LogLine) -> Hit | None:
    """An IB verbs call that failed once NCCL was using the transport: the errno or the call
    says which fix (memory registration under the memlock limit; a QP that cannot reach its
    peer, or a completion timeout: the RoCE GID or the fabric)."""
    text = line.text
    if "Cannot allocate memory" in text or "ibv_reg_mr" in text:
        return Hit(
            f"an InfiniBand verbs call failed for lack of locked memory (line {line.line}): NCCL "
            "cannot register its buffers under the process's memlock limit",
            evidence={"line": line.line},
            fix=fix(
                "Raise the memlock limit: ulimit -l unlimited, docker run --ulimit memlock=-1",
                "manual",
                manual(_MEMLOCK),
            ),
        )
    status = re.search(r"Got completion (?:from peer [^ ]+ )?with (?:status=|error )([0-9]+)", text)
    if status is not None and status.group(1) == "4":
        # ibv_wc_status 4, IBV_WC_LOC_PROT_ERR: the HCA could not access the (GPU) buffer it
        # was given: GPUDirect RDMA broken by ACS on the PCIe bridges, or no nvidia-peermem
        # (NVIDIA/nccl#928: 'IB error 4 is usually due to ACS being enabled and breaking GPU
        # Direct RDMA protocol. You can confirm that by setting NCCL_NET_GDR_LEVEL=0')
        return Hit(
            f"an InfiniBand work completion failed with a local protection error (line "
            f"{line.line}, status 4): the NIC could not reach the GPU buffer, so GPUDirect RDMA "
            "is broken on this node (ACS enabled on the PCIe bridges, or nvidia-peermem not "
            "loaded)",
            evidence={"line": line.line, "status": 4},
            fix=fix(
                "Confirm with GPUDirect RDMA off: export NCCL_NET_GDR_LEVEL=0; then disable ACS "
                "on the PCIe bridges (BIOS or setpci) or load nvidia-peermem to keep it fast",
                "manual",
                manual("export NCCL_NET_GDR_LEVEL=0   # GPUDirect RDMA off: works, slower"),
                manual(
                    "disable ACS on the PCIe switches above GPUs and NICs (BIOS, or setpci "
                    "ECAP_ACS+0x6.w=0000 per bridge; see NCCL's troubleshooting guide)"
                ),
                manual("modprobe nvidia-peermem   # GPUDirect RDMA's kernel module"),
            ),
        )
    if "No such device" in text:
        return _hca_gone(line)
    if "ncclIbRoceGetVersionNum" in text:
        return _gid_type_unreadable(line)
    if "ibv_modify_qp" in text or "Got completion" in text:
        gid = re.search(r"GID index ([0-9]+)", text)
        if gid is not None and gid.group(1) == "3":  # already the RoCE v2 GID: the rails
            summary = (
                "With the RoCE v2 GID already in use, keep each NIC to its own rail: "
                "NCCL_CROSS_NIC=0; check the fabric; NCCL_IB_DISABLE=1 confirms it"
            )
        else:
            summary = (
                "On RoCE set NCCL_IB_GID_INDEX=3 (the RoCE v2 GID); check the fabric; "
                "NCCL_IB_DISABLE=1 confirms it"
            )
        return Hit(
            f"NCCL's InfiniBand/RoCE connection failed on the fabric (line {line.line}): the "
            "queue pair could not reach its peer or timed out (error 12 is a retry timeout), "
            "on RoCE most often a GID index the switches do not route or NICs on different "
            "rails",
            evidence={"line": line.line, "gid_index": gid.group(1) if gid else None},
            fix=fix(summary, "manual", *(manual(s) for s in _FABRIC)),
        )
    return None


def _gid_type_unreadable(line: LogLine) -> Hit:
    """NCCL's GID search reading a RoCE GID's type from sysfs and failing: a container's sparse
    GID table (NCCL 2.26.2 skips such entries); an explicit NCCL_IB_GID_INDEX skips the search
    (ncclIbGetGidIndex returns the parameter as given)."""
    return Hit(
        f"NCCL could not read a RoCE GID's type from sysfs while choosing its GID (line "
        f"{line.line}): in a container or pod the GID table is sparse and NCCL before 2.26 "
        "aborts on the entries it cannot read",
        evidence={"line": line.line, "nccl_version": line.stated.get("nccl_version")},
        fix=fix(
            "Give NCCL the GID: export NCCL_IB_GID_INDEX=<the RoCE v2 index show_gids lists "
            "with the pod's address>; or use NCCL 2.26.2 or newer, which skips such entries",
            "manual",
            manual("show_gids   # in the pod: the v2 line that carries its IP address"),
            manual("export NCCL_IB_GID_INDEX=<that index>   # the same on every rank's pod"),
            manual("pip install -U 'nvidia-nccl-cu12>=2.26.2'   # or an image with NCCL 2.26+"),
        ),
    )


_IB_DEVICE = lazy(r"\[[0-9]+\]([A-Za-z0-9_.-]+):[0-9]+/")


def _hca_gone(line: LogLine) -> Hit:
    """A verbs call on a device NCCL had opened answers ENODEV ('No such device'): that HCA (or
    its port, or the RoCE GID NCCL picked on it) cannot carry the connection, a virtual function
    or port without a usable address, or a device another namespace owns. NCCL's device list
    ('NET/IB : Using [0]mlx5_3:1/RoCE') names what to exclude with NCCL_IB_HCA's '^'."""
    listed = line.stated.get("nccl_ib_devices") or ""
    names = list(dict.fromkeys(_IB_DEVICE.findall(listed)))
    if len(names) == 1:
        exclude = f"export NCCL_IB_HCA=^{names[0]}"
        summary = (
            f"NCCL used {names[0]} alone: exclude it ({exclude}) or name the HCAs that work; "
            "NCCL_IB_DISABLE=1 falls back to sockets"
        )
    elif names:
        exclude = f"export NCCL_IB_HCA=^<the one that fails of {','.join(names)}>"
        summary = (
            f"NCCL used {', '.join(names)}: exclude the one that fails (NCCL_IB_HCA=^<hca>) or "
            "name the HCAs that work; NCCL_IB_DISABLE=1 falls back to sockets"
        )
    else:
        exclude = "export NCCL_IB_HCA=^<the HCA NCCL's 'NET/IB : Using' line names>"
        summary = (
            "Exclude the HCA that fails with NCCL_IB_HCA=^<hca> or name the HCAs that work; "
            "NCCL_IB_DISABLE=1 falls back to sockets"
        )
    return Hit(
        f"an InfiniBand/RoCE verbs call answered 'No such device' (line {line.line}): an HCA "
        "NCCL chose cannot carry the connection (its port or RoCE GID unusable, a virtual "
        "function without an address)",
        evidence={"line": line.line, "hcas": names},
        fix=fix(
            summary,
            "manual",
            manual(exclude),
            manual("ibv_devinfo; show_gids   # ports ACTIVE, a RoCE v2 GID with an IP address"),
            manual("export NCCL_IB_DISABLE=1   # TCP sockets: works, slower"),
        ),
    )


@from_log("NET150")
def nccl_ib_unavailable_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The IB line NCCL printed; the node's HCAs, where known, say which fix applies. A verbs
    call that failed at run time names its own fix (memlock, the RoCE GID, the fabric)."""
    runtime = _ib_runtime(line)
    if runtime is not None:
        return runtime
    if "GPU Direct RDMA Disabled" in line.text:
        return None if _one_node(line.stated) else _gdr_disabled(line)
    if line.signature == _PEERMEM_REFUSED:
        return _peermem_refused(line)
    hcas: tuple[str, ...] | None = None
    try:
        hcas = tuple(d.name for d in facts.network().infiniband)
    except Skip:
        hcas = None
    hca_filter = line.stated.get("nccl_ib_hca")
    # a node known to have no HCA: the filter is moot, the INFO line is that node's normal one
    if hca_filter and hcas != () and "no device found" in line.text.lower():
        return _hca_filter_matched_nothing(line, hca_filter, hcas)
    if line.informational and not hcas:
        # NCCL's INFO `NET/IB : No device found.` is what every healthy node without an HCA
        # prints before using sockets: a fault only where the node has HCAs NCCL did not open
        if hcas is not None or _one_node(line.stated):
            return None
        raise NotStated(
            f"line {line.line} is NCCL's INFO that it uses no InfiniBand device, which nodes "
            "without HCAs print on every run; the node's HCAs are unknown"
        )
    verbs = "libibverbs" in line.text.lower()
    what = (
        "NCCL could not load libibverbs (rdma-core is not installed in this environment)"
        if verbs
        else "NCCL's InfiniBand transport found no device it can open"
    )
    steps: tuple[str, ...]
    if hcas:
        summary = (
            f"The node has HCAs ({', '.join(hcas)}): install rdma-core and pass /dev/infiniband "
            "into the container"
        )
        steps = _STEPS[:1]
    elif hcas is not None:
        summary = "The node has no HCA: export NCCL_IB_DISABLE=1 (NCCL uses sockets)"
        steps = _STEPS[1:]
    else:
        summary = (
            "Install rdma-core and pass /dev/infiniband where the node has HCAs; else export "
            "NCCL_IB_DISABLE=1"
        )
        steps = _STEPS
    return Hit(
        f"{what} (line {line.line}): NCCL falls back to TCP sockets (slow), or fails where the "
        "socket interface is wrong too",
        evidence={"line": line.line, "hcas": list(hcas) if hcas is not None else None},
        fix=fix(summary, "manual", *(manual(s) for s in steps)),
    )


# NCCL 2.23.4 is the first whose IB transport also looks for /sys/module/nvidia_peermem/version
# (v2.22.3's ncclIbGdrSupport read only nv_peer_mem's /sys/kernel/mm/memory_peers/nv_mem*)
_SEES_PEERMEM = (2, 23, 4)


def _gdr_disabled(line: LogLine) -> Hit:
    """NCCL's INFO that GPUDirect RDMA is off for an HCA: no peer-memory module it detects. The
    NCCL release the log states decides which fix comes first: before 2.23.4 NCCL does not see
    a loaded nvidia-peermem at all."""
    stated = line.stated.get("nccl_version")
    release = tuple(int(p) for p in stated.split(".")[:3]) if stated else None
    old = release is not None and release < _SEES_PEERMEM
    upgrade = "pip install -U 'nvidia-nccl-cu12>=2.23.4'   # or an image with NCCL 2.23.4+"
    load = "modprobe nvidia-peermem   # and list it in /etc/modules-load.d/ for reboots"
    if old:
        summary = (
            f"NCCL {stated} looks only for nv_peer_mem: with nvidia-peermem loaded, use NCCL "
            "2.23.4 or newer; else load nvidia-peermem"
        )
        steps = (upgrade, load)
    else:
        summary = (
            "Load nvidia-peermem on every node (NCCL before 2.23.4 misses it: upgrade NCCL to "
            "2.23.4 or newer)"
        )
        steps = (load, upgrade)
    return Hit(
        f"NCCL runs InfiniBand/RoCE without GPUDirect RDMA (line {line.line}): it found no "
        "peer-memory module, so inter-node transfers go through host memory, several times "
        "slower",
        evidence={"line": line.line, "nccl_version": stated},
        fix=fix(
            summary,
            "manual",
            *(manual(s) for s in steps),
            manual("lsmod | grep -e nvidia_peermem -e nv_peer_mem   # on every node"),
        ),
    )


# matrices/signatures/nccl.toml: the GPUDirect RDMA module refused by the kernel
_PEERMEM_REFUSED = "peermem-module-refused"


def _peermem_refused(line: LogLine) -> Hit:
    """The peer-memory module did not load. An unknown or other-version symbol: it was built
    against another ib_core than the loaded one (MLNX_OFED reinstalled or upgraded after it);
    EINVAL from nvidia-peermem: built where MLNX_OFED's peer-memory API was absent."""
    mismatch = "symbol" in line.text.lower()
    if mismatch:
        what = (
            "it was built against another ib_core than the loaded one (MLNX_OFED installed or "
            "upgraded after it, or the kernel's own ib_core loaded instead of MLNX_OFED's)"
        )
        summary = (
            "Rebuild the module against the MLNX_OFED that runs: reinstall MLNX_OFED (or "
            "DOCA-OFED), then the peer-memory module (nvidia-peermem: reinstall the driver)"
        )
    else:
        what = (
            "nvidia-peermem was built where MLNX_OFED's peer-memory API was absent (the driver "
            "installed before MLNX_OFED, or no MLNX_OFED), so it refuses to load"
        )
        summary = (
            "Install MLNX_OFED (or DOCA-OFED) first, then reinstall the NVIDIA driver so its "
            "DKMS build of nvidia-peermem finds the peer-memory API; or use DMA-BUF"
        )
    return Hit(
        f"the GPUDirect RDMA kernel module did not load (line {line.line}): {what}; NCCL runs "
        "InfiniBand/RoCE through host memory without it",
        evidence={"line": line.line},
        fix=fix(
            summary,
            "manual",
            manual("cat /proc/kallsyms | grep ib_register_peer_memory_client   # MLNX_OFED's"),
            manual("ofed_info -s; modinfo nvidia_peermem | grep -e vermagic -e depends"),
            manual("reinstall MLNX_OFED / DOCA-OFED, then the NVIDIA driver (or nv_peer_mem)"),
            manual("modprobe nvidia-peermem; lsmod | grep peermem"),
        ),
    )


def _one_node(stated: Mapping[str, str]) -> bool:
    """Whether the log states that the job ran on one node (NCCL's communicator summary `nNodes
    1`, a launcher's `--nnodes 1`) and nothing says otherwise: NCCL's network transport then
    carries nothing, and an InfiniBand it cannot open is moot."""
    from envcheck.rules.node.rank_hosts import ranks_span_nodes

    return stated.get("nnodes") == "1" and ranks_span_nodes(stated) is None


def _hca_filter_matched_nothing(
    line: LogLine, hca_filter: str, hcas: tuple[str, ...] | None
) -> Hit:
    """`NET/IB : No device found.` after NCCL echoed an NCCL_IB_HCA filter: the job asked for
    InfiniBand/RoCE and the filter kept no HCA NCCL could open on that node (the names differ
    between nodes and images, or the devices are not in the container). NCCL then uses TCP
    sockets, which the job did not ask for. The node's HCAs, where known, give the value."""
    names = f"export NCCL_IB_HCA={','.join(hcas)}" if hcas else None
    summary = (
        f"NCCL_IB_HCA={hca_filter} names no HCA NCCL could open here: set it to this node's "
        + (f"HCAs ({names})" if names else "HCAs (`ibv_devices` lists them)")
        + ", or unset it"
    )
    steps = [
        "ibv_devices   # the HCA names on this node (mlx5_0, ...); `ibstat` shows their ports",
        names
        or "export NCCL_IB_HCA=<the HCAs ibv_devices lists>  (=mlx5_0:1 for exact names and "
        "a port; ^ excludes)",
        "in a container: pass the devices (--device=/dev/infiniband) and install rdma-core",
    ]
    return Hit(
        f"NCCL's InfiniBand transport found no device (line {line.line}) with NCCL_IB_HCA set "
        f"to {hca_filter}: the filter kept no HCA NCCL could open on this node, so NCCL falls "
        "back to TCP sockets (slow), or fails where the socket interface is wrong too",
        evidence={"line": line.line, "nccl_ib_hca": hca_filter, "hcas": list(hcas or ())},
        fix=fix(summary, "manual", *(manual(s) for s in steps)),
    )


def _duplicates(visible: str) -> list[str]:
    entries = [e.strip() for e in visible.split(",") if e.strip()]
    return sorted({e for e in entries if entries.count(e) > 1})


@rule("CUD152", "nccl-ranks-share-a-gpu", Severity.ERROR)
def ranks_share_a_gpu(facts: Facts) -> Iterable[Hit]:
    """Two ranks of one NCCL communicator are on the same GPU

    ## What it checks
    `CUDA_VISIBLE_DEVICES` listing a GPU twice (`0,0,1`); in `triage`, NCCL's own refusal
    (src/init.cc): `Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000`, in
    newer NCCL `Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1
    to enable this configuration.`, and NVLS forced on over such ranks (src/transport/nvls.cc:
    `NCCL_NVLS_ENABLE has been set to "1" and communicator has multiple ranks using the same
    NVML device`).

    ## Why it matters
    NCCL needs one GPU per rank: two ranks on one device fail at communicator creation
    (`ncclInvalidUsage`). It happens when the launcher starts more processes per node than
    there are GPUs, when every process uses the default device 0 (no
    `torch.cuda.set_device(local_rank)` before `init_process_group`), or when
    CUDA_VISIBLE_DEVICES repeats a GPU.

    ## Example
    `torchrun --nproc_per_node 4` on a node where CUDA_VISIBLE_DEVICES=0,1 (or where the script
    never calls `torch.cuda.set_device(local_rank)`).

    ## Fix
    Give each rank its own GPU: call `torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))`
    (or pass `device_id` to `init_process_group`) before the first collective, start at most
    as many processes per node as it has GPUs, and list each GPU once in CUDA_VISIBLE_DEVICES.
    Ranks that share a GPU on purpose (MIG instances, MPS) need NCCL's newer opt-in,
    `export NCCL_MULTI_RANK_GPU_ENABLE=1`, and NCCL_NVLS_ENABLE unset (not 1).

    ## References
    - https://github.com/NVIDIA/nccl/blob/master/src/init.cc
    - https://github.com/NVIDIA/nccl/blob/master/src/transport/nvls.cc
    - https://github.com/NVIDIA/nccl/issues/1716
    - https://pytorch.org/docs/stable/distributed.html#torch.distributed.init_process_group
    """
    visible = facts.env().get("CUDA_VISIBLE_DEVICES") or ""
    twice = _duplicates(visible)
    if not twice:
        return []
    return [
        Hit(
            f"CUDA_VISIBLE_DEVICES={visible} lists GPU {', '.join(twice)} more than once: the "
            "processes that get the same device fail NCCL's 'Duplicate GPU detected'",
            evidence={"CUDA_VISIBLE_DEVICES": visible, "repeated": twice},
            fix=fix(
                "List each GPU once in CUDA_VISIBLE_DEVICES",
                "manual",
                manual(
                    "export CUDA_VISIBLE_DEVICES=" + ",".join(dict.fromkeys(visible.split(",")))
                ),
            ),
        )
    ]


_MULTI_RANK = "Multiple Ranks are using the same GPU/Partition"
_NVLS_FORCED = "NCCL_NVLS_ENABLE has been set to"


@from_log("CUD152")
def ranks_share_a_gpu_in_log(facts: Facts, line: LogLine) -> Hit:
    """NCCL's 'Duplicate GPU detected : rank A and rank B both on CUDA device D'; its newer
    wording names the opt-in for ranks that share a GPU or partition on purpose (MIG, MPS), and
    NVLS refuses such ranks only when NCCL_NVLS_ENABLE=1 forces it on."""
    if _NVLS_FORCED in line.text:
        return Hit(
            f"NCCL_NVLS_ENABLE=1 forces NVLS on a communicator whose ranks share one GPU (line "
            f"{line.line}): NVLS cannot run there, NCCL's default leaves it off",
            evidence={"line": line.line},
            fix=fix(
                "Unset NCCL_NVLS_ENABLE (its default turns NVLS off where ranks share a GPU); "
                "ranks on MIG instances or under MPS also need NCCL_MULTI_RANK_GPU_ENABLE=1",
                "manual",
                manual("unset NCCL_NVLS_ENABLE"),
                manual("export NCCL_MULTI_RANK_GPU_ENABLE=1"),
            ),
        )
    if _MULTI_RANK in line.text:
        return Hit(
            f"NCCL refused the communicator (line {line.line}): two ranks of one node are on "
            "the same GPU or GPU partition (MIG instances of one GPU, MPS, or one device for "
            "every rank)",
            evidence={"line": line.line},
            fix=fix(
                "Ranks sharing a GPU on purpose (MIG instances, MPS): export "
                "NCCL_MULTI_RANK_GPU_ENABLE=1; otherwise give each rank its own GPU "
                "(torch.cuda.set_device(local_rank) before init_process_group)",
                "manual",
                manual("export NCCL_MULTI_RANK_GPU_ENABLE=1"),
                manual(
                    'torch.cuda.set_device(int(os.environ["LOCAL_RANK"])) before '
                    "dist.init_process_group, where each rank should have a GPU of its own"
                ),
            ),
        )
    found = re.search(
        r"rank ([0-9]+) and rank ([0-9]+) both on CUDA device ([0-9a-fA-Fx]+)", line.text
    )
    ranks = (
        f"ranks {found.group(1)} and {found.group(2)} are both on CUDA device {found.group(3)}"
        if found
        else "two ranks are on one GPU"
    )
    return Hit(
        f"NCCL refused the communicator (line {line.line}): {ranks}",
        evidence={"line": line.line},
        fix=fix(
            "Give each rank its own GPU: torch.cuda.set_device(local_rank) before "
            "init_process_group, and no more processes per node than GPUs",
            "manual",
            manual(
                'torch.cuda.set_device(int(os.environ["LOCAL_RANK"])) before '
                "dist.init_process_group (or init_process_group(..., device_id=...))"
            ),
            manual(
                "torchrun --nproc_per_node <number of GPUs on the node>; list each GPU once in "
                "CUDA_VISIBLE_DEVICES"
            ),
        ),
    )


def nccl_chose_virtual_interface(facts: Facts, line: LogLine) -> Hit | None:
    """NET104 from a line (registered by nccl_scope.py, which also reads NCCL's generic error
    lines): NCCL's own 'Bootstrap : Using docker0:172.17.0.1<0>' (or a veth, virbr, br-, lo): nothing
    chose the interface between the nodes, and NCCL's default filter ('^docker,lo') admitted a
    virtual one. The node's interfaces, where known, name the one to use."""
    chosen = line.stated.get("nccl_chosen_iface")
    listed = line.stated.get("nccl_listed_iface")
    if chosen is None and "Using" in line.text and listed is not None:
        return None  # NCCL's interface list (wrapped onto the lines after) holds no virtual one
    chosen = chosen or "a virtual interface"
    best = None
    with contextlib.suppress(Skip):
        best = candidate(facts.network())
    # the node's own interfaces first; else the physical one NCCL listed beside the bridges
    iface = (
        best.name if best is not None else listed or "<the interface between the nodes, e.g. eth0>"
    )
    return Hit(
        f"NCCL chose {chosen} (line {line.line}), a loopback or virtual interface: ranks on other "
        "nodes cannot reach this one through it, so multi-node init hangs or fails",
        evidence={"line": line.line, "chosen": chosen},
        fix=fix(
            f"Name the interface between the nodes on every node: NCCL_SOCKET_IFNAME={iface} "
            f"(and GLOO_SOCKET_IFNAME={iface}), not {chosen}",
            "manual",
            manual("ip -br addr   # the interface that carries the address the other nodes reach"),
            manual(f"export NCCL_SOCKET_IFNAME={iface} GLOO_SOCKET_IFNAME={iface}"),
        ),
        severity=Severity.WARNING,
    )


# NCCL's P2P transport refused by CUDA (matrices/signatures/nccl_transports.toml)
_PEER_REFUSED = "nccl-peer-access-unsupported"


@from_log("GPU116")
def p2p_refused_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """NCCL's P2P transport asked CUDA for peer access (or an IPC handle) between two local GPUs
    and CUDA refused (cudaErrorPeerAccessUnsupported): NCCL must not use P2P between them, so
    NCCL_P2P_DISABLE=1 is the fix that works on any node; the causes that make P2P fast again
    (ACS, the IOMMU, GeForce boards) are checked after it."""
    if line.signature != _PEER_REFUSED and "peer access is not supported" not in line.text:
        # 'P2P is disabled between NVLINK connected GPUs': NVLink's own state, not refused
        # peering (NCCL names a hardware issue, NCCL_IGNORE_DISABLED_P2P=1 to go on)
        raise NotStated(f"line {line.line} does not say CUDA refused peer access")
    return Hit(
        f"CUDA refused peer access between two GPUs NCCL wanted to connect directly (line "
        f"{line.line}): there is no P2P path between them (GeForce boards, GPUs under "
        "different root complexes, ACS or an IOMMU in the path, a VM without P2P)",
        evidence={"line": line.line},
        fix=fix(
            "Disable NCCL's peer-to-peer transport: export NCCL_P2P_DISABLE=1 (copies go "
            "through host memory); to restore P2P, check the GPUs' P2P status, ACS and the IOMMU",
            "manual",
            manual("export NCCL_P2P_DISABLE=1"),
            manual("nvidia-smi topo -p2p r   # which GPU pairs have P2P (OK) and which not"),
            manual(
                "lspci -vvv | grep ACSCtl   # ACS on the bridges above the GPUs redirects P2P "
                "(GPU117); iommu=pt on the kernel command line (GPU118)"
            ),
        ),
    )

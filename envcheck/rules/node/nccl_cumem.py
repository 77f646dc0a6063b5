"""NCCL's cuMem (CUDA virtual memory management) allocations and their shareable handles, from
NCCL's own WARN lines (matrices/signatures/nccl_transports.toml). NET126: the platform refuses
the cuMem path; the line's source file says which, and so which of NCCL's two switches turns
it off: transport/shm.cc shares host memory through cuMem (NCCL_CUMEM_HOST_ENABLE),
include/alloc.h allocates device buffers through it (NCCL_CUMEM_ENABLE). NET127: multi-node
NVLink (MNNVL) found, but its FABRIC handles (IMEX) do not work."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual

# NCCL's CUCHECK form, 'Cuda failure %d '%s'' (the driver API), in the two files whose
# driver-API calls are all cuMem: transport/shm.cc (host memory), include/alloc.h (device)
_CUMEM_LINE = lazy(r"(transport/shm\.cc|include/alloc\.h):[0-9]+ NCCL WARN Cuda failure ([0-9]+) '")
# CUDA_ERROR_OUT_OF_MEMORY: cuMemCreate found no memory, a memory cause and not the path's
_OUT_OF_MEMORY = "2"


@rule("NET126", "nccl-cumem-path-refused", Severity.ERROR)
def nccl_cumem_refused(facts: Facts) -> Iterable[Hit]:
    """NCCL's cuMem (virtual memory) allocations are refused on this platform

    ## What it checks
    Only a log says it: NCCL's driver-API check (`Cuda failure N '...'`, the numbered form of
    src/include/cudawrap.h's CUCHECK) failing in one of the two files whose driver calls are
    all cuMem: `transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported
    between these two devices'` (host memory shared through cuMem between the ranks of a node),
    `include/alloc.h:103 NCCL WARN Cuda failure 1 'invalid argument'` (device buffers through
    cuMemCreate / cuMemMap / cuMemSetAccess). `Cuda failure 2 'out of memory'` there is GPU
    memory, not this cause.

    ## Why it matters
    NCCL 2.19 allocates its buffers through cuMem where the driver reports VMM support, and from
    CUDA driver 12.6 NCCL 2.23+ also shares host memory between local ranks through cuMem host
    NUMA allocations instead of /dev/shm. Some platforms report support but refuse the calls:
    GPUs without peer access importing each other's host allocations, containers without NUMA
    support (Docker without `--cap-add SYS_NICE`), VMs and vGPU profiles. The communicator then
    fails at init or at its first collective, with torch reporting only `unhandled cuda error`.

    ## Example
    vLLM's data-parallel test on four L4s with NCCL 2.27.3: `transport/shm.cc:590 NCCL WARN
    Cuda failure 217 'peer access is not supported between these two devices'`; with
    NCCL_CUMEM_HOST_ENABLE=0 it passes.

    ## Fix
    Turn the refused path off; NCCL then uses its legacy one. The failure in transport/shm.cc:
    `export NCCL_CUMEM_HOST_ENABLE=0` (SHM through /dev/shm). In include/alloc.h:
    `export NCCL_CUMEM_ENABLE=0` (buffers through cudaMalloc, IPC through cudaIpc handles).
    Set it for every rank (torchrun, vLLM and Ray pass the environment on).

    ## References
    - https://github.com/NVIDIA/nccl/blob/master/src/transport/shm.cc
    - https://github.com/NVIDIA/nccl/blob/master/src/include/alloc.h
    - https://github.com/NVIDIA/nccl/blob/master/src/misc/cudawrap.cc
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-cumem-enable
    - https://github.com/NVIDIA/nccl/issues/1838
    - https://github.com/NVIDIA/nccl/issues/2106
    """
    raise Skip("only a log line states that NCCL's cuMem allocations failed", "log.nccl")


@from_log("NET126")
def nccl_cumem_refused_in_log(facts: Facts, line: LogLine) -> Hit:
    """The WARN's source file picks the switch: shm.cc is the host path, alloc.h the device
    path. An out-of-memory from cuMemCreate is GPU memory, which DRV150 reads."""
    found = _CUMEM_LINE.search(line.text)
    if found is None:
        raise NotStated(f"line {line.line} is not NCCL's driver-API check in its cuMem files")
    if found.group(2) == _OUT_OF_MEMORY:
        raise NotStated(f"line {line.line} is cuMemCreate finding no GPU memory (DRV150 reads it)")
    error = line.stated.get("nccl_cuda_failure") or f"CUDA error {found.group(2)}"
    host = found.group(1) == "transport/shm.cc"
    if host:
        what = "the host memory NCCL's SHM transport shares between local ranks through cuMem"
        variable = "NCCL_CUMEM_HOST_ENABLE"
        legacy = "SHM then goes through /dev/shm"
    else:
        what = "NCCL's device buffers allocated through cuMem (virtual memory management)"
        variable = "NCCL_CUMEM_ENABLE"
        legacy = "buffers then come from cudaMalloc, shared through CUDA IPC handles"
    return Hit(
        f"a CUDA driver call failed in {found.group(1)} (line {line.line}: {error}): the "
        f"platform refuses {what}",
        evidence={"line": line.line, "file": found.group(1)},
        fix=fix(
            f"export {variable}=0 on every rank ({legacy}); NCCL's other transports stay on",
            "manual",
            manual(f"export {variable}=0"),
        ),
    )


# mnnvl.cc's two checks: the FABRIC allocation (the IMEX channel device) and the handle's
# export/import (the IMEX daemon and its domain); 2.25/2.26 said 'not supported' for both
_IMEX_CHANNEL = "IMEX channel configuration"
_IMEX_DOMAIN = "nvidia-imex-ctl -N"


@rule("NET127", "nccl-mnnvl-imex-not-working", Severity.ERROR)
def nccl_mnnvl_imex(facts: Facts) -> Iterable[Hit]:
    """NCCL found multi-node NVLink (MNNVL) but IMEX does not work

    ## What it checks
    Only a log says it: NCCL's MNNVL check (src/mnnvl.cc), `MNNVL (cliqueSize 72) is available
    but not working on this system. Check the IMEX channel configuration
    (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.` (the FABRIC
    allocation failed), `... Check the IMEX configuration (nvidia-imex-ctl -N) ...` (exporting or
    importing the handle failed), and 2.25/2.26's `... is available but not supported on this
    system. Check the IMEX configuration.`

    ## Why it matters
    On GB200/GB300 NVL racks the GPUs of several nodes share one NVLink domain; NCCL maps peer
    memory across nodes through FABRIC handles, which the IMEX service exports and imports. A
    process without an IMEX channel device (a container or pod started without
    /dev/nvidia-caps-imex-channels, or a node where no channel was created), or nodes whose IMEX
    daemon is down or in another domain, make NCCL fail the communicator with
    ncclSystemError instead of falling back to the network.

    ## Example
    A job on two GB200 compute trays in Kubernetes without a ComputeDomain:
    `MNNVL (cliqueSize 8) is available but not working on this system. Check the IMEX channel
    configuration (/dev/nvidia-caps-imex-channels).`

    ## Fix
    The channel form: give the process an IMEX channel (`ls /dev/nvidia-caps-imex-channels`;
    pass `--device /dev/nvidia-caps-imex-channels/channel0` to the container, or on Kubernetes
    a ComputeDomain from NVIDIA's DRA driver). The configuration form: check the IMEX daemon on
    every node (`systemctl status nvidia-imex`, `nvidia-imex-ctl -N`: all nodes connected).
    To run without MNNVL (over the network between nodes): `export NCCL_MNNVL_ENABLE=0`.

    ## References
    - https://github.com/NVIDIA/nccl/blob/master/src/mnnvl.cc
    - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-mnnvl-enable
    - https://docs.nvidia.com/multi-node-nvlink-systems/mnnvl-user-guide/verifying.html
    - https://github.com/NVIDIA/nccl/issues/1632
    """
    raise Skip("only a log line states that NCCL's MNNVL check failed", "log.nccl")


@from_log("NET127")
def nccl_mnnvl_imex_in_log(facts: Facts, line: LogLine) -> Hit:
    """The check that failed picks the first step: the channel device, or the IMEX domain."""
    clique = line.stated.get("nccl_mnnvl_clique")
    size = f" of {clique} GPUs" if clique else ""
    if _IMEX_CHANNEL in line.text:
        what = "allocating memory with a FABRIC handle failed: no IMEX channel in this process"
        first = manual(
            "ls /dev/nvidia-caps-imex-channels   # in the container too; pass "
            "--device /dev/nvidia-caps-imex-channels/channel0 (Kubernetes: a ComputeDomain)"
        )
    elif _IMEX_DOMAIN in line.text:
        what = "exporting or importing a FABRIC handle failed: IMEX is down or not one domain"
        first = manual("nvidia-imex-ctl -N   # on every node: the IMEX domain, all nodes connected")
    else:
        what = "its FABRIC handles do not work (IMEX)"
        first = manual("systemctl status nvidia-imex; nvidia-imex-ctl -N   # on every node")
    return Hit(
        f"NCCL found a multi-node NVLink clique{size} but cannot use it (line {line.line}): {what}",
        evidence={"line": line.line},
        fix=fix(
            "Make IMEX work for the job (the channel device in the container, the IMEX "
            "daemon and domain on every node), or export NCCL_MNNVL_ENABLE=0 to go over the "
            "network between nodes",
            "manual",
            first,
            manual("export NCCL_MNNVL_ENABLE=0"),
        ),
    )

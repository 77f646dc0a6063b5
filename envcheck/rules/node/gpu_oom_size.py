"""How large a failed GPU allocation was, against the GPU's whole memory, from the numbers an
out-of-memory line states (each runtime's own wording) and, where the line does not state the
GPU's total, the node's GPUs (NVML's memory in a report or a pasted nvidia-smi).

A request larger than the whole GPU, or the job's live tensors plus the request above it, is a
job too large for the GPU: no freeing of other processes, no allocator setting
(expandable_segments) and no preallocation switch can make room, so the fix splits the work
(a smaller batch or input for that tensor, sharding, offload) or takes a larger GPU. Read by
DRV150's out-of-memory fix (memory.gpu_oom_fix), DRV104 (driver_errors.py) and SYS182
(gpu_preallocation.py)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action
from envcheck.patterns import LazyPattern, lazy
from envcheck.rules.fixes import manual

GIB = 1024**3
_UNITS = {
    "bytes": 1,
    "B": 1,
    "KiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
    "TiB": 1024**4,
}
_UNIT = r"(?P<unit>bytes|B|KiB|MiB|GiB|TiB)"
# the size one allocation asked for, in each runtime's words (the exact bytes where it states
# them); the first that matches decides
_REQUESTS = (
    # tensorflow/tensorflow and openxla/xla bfc_allocator.cc: 'Allocator (GPU_0_bfc) ran out of
    # memory trying to allocate 300.00GiB (rounded to 322122547200)'
    lazy(
        r"ran out of memory trying to allocate [0-9.]+ ?[KMGT]?i?B "
        r"\(rounded to (?P<bytes>[0-9]+)\)"
    ),
    # openxla/xla (pjrt's BFC / TrackedDeviceBuffer): 'Failed to allocate request for 176.00MiB
    # (184549376B) on device ordinal 0'
    lazy(r"Failed to allocate request for [0-9.]+ ?[KMGT]?i?B \((?P<bytes>[0-9]+)B\)"),
    # tensorflow stream_executor cuda_driver.cc: 'failed to allocate 17.79G (19104890880 bytes)
    # from device: CUDA_ERROR_OUT_OF_MEMORY'
    lazy(r"failed to allocate [0-9.]+[KMGT]? \((?P<bytes>[0-9]+) bytes\) from device"),
    # CuPy cupy/cuda/memory.pyx OutOfMemoryError: 'Out of memory allocating 322,122,547,200 bytes
    # (allocated so far: 0 bytes).'; before CuPy 7: 'out of memory to allocate N bytes (total M
    # bytes)' (M: what the pool had allocated, cupy/cupy#314)
    lazy(r"[Oo]ut of memory (?:allocating|to allocate) (?P<bytes>[0-9][0-9,]*) bytes"),
    # openxla/xla: 'RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528
    # bytes.' and 'Out of memory while trying to allocate 300.00GiB with allocator GPU_0_bfc'
    lazy(r"Out of memory while trying to allocate (?P<value>[0-9.]+) ?" + _UNIT),
    # xla gpu_cudamallocasync_allocator.cc: 'cuMemAllocAsync failed to allocate 1225195446464
    # bytes: RESOURCE_EXHAUSTED'
    lazy(r"cuMemAllocAsync failed to allocate (?P<bytes>[0-9]+) bytes"),
    # pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (also on ROCm, 'HIP out of memory'):
    # 'CUDA out of memory. Tried to allocate 300.00 GiB.' (format_size: bytes, KiB, MiB, GiB)
    lazy(r"Tried to allocate (?P<value>[0-9.]+) ?" + _UNIT),
    # ggml-org/llama.cpp ggml-cuda.cu: '%s: allocating %.2f MiB on device %d: cudaMalloc failed'
    lazy(r"allocating (?P<value>[0-9.]+) " + _UNIT + r" on device [0-9]+: cudaMalloc failed"),
)
_SIZE = r"([0-9.]+) ?(bytes|B|KiB|MiB|GiB|TiB)"
# the GPU's whole memory as the line states it: torch since 2.1 ('GPU 0 has a total capacity of
# 139.80 GiB of which ...'; torch 2.1 printed 'capacty'), before ('(GPU 0; 44.52 GiB total
# capacity; ...'), XLA's cuMemAllocAsync ('Reported by CUDA: Free memory/Total memory: F/T')
_TOTALS = (
    lazy(r"has a total capac(?:i?)ty of " + _SIZE),
    lazy(r"\(GPU [0-9]+; " + _SIZE + r" total capacity"),
    lazy(r"Free memory/Total memory: [0-9]+/([0-9]+)()"),
)
# what the job itself holds in live tensors, as torch states it: 'Of the allocated memory 20.56
# GiB is allocated by PyTorch'; before 2.1: '12.21 GiB already allocated'
_OWN = (
    lazy(r"Of the allocated memory " + _SIZE + r" is allocated by PyTorch"),
    lazy(r"; " + _SIZE + r" already allocated;"),
)


# the job's live tensors plus the request count as larger than the GPU only this far above its
# total: torch rounds each block (2 MiB, 20 MiB) and states sizes to two decimals, and a job just
# above the GPU is the common out-of-memory whose numbers already pick the fix (memory.py)
_JOB_MARGIN = 1.10


def _bytes(value: str, unit: str) -> float:
    return float(value.replace(",", "")) * _UNITS.get(unit, 1)


def requested(text: str) -> float | None:
    """The bytes one failed allocation asked for, in any runtime's wording; None when unstated."""
    for pattern in _REQUESTS:
        found = pattern.search(text)
        if found is None:
            continue
        groups = found.groupdict()
        if groups.get("bytes"):
            return float(groups["bytes"].replace(",", ""))
        return _bytes(groups["value"], groups["unit"])
    return None


def _first(patterns: tuple[LazyPattern, ...], text: str) -> float | None:
    for pattern in patterns:
        found = pattern.search(text)
        if found is not None:
            return _bytes(found.group(1), found.group(2) or "bytes")
    return None


def line_total(text: str) -> float | None:
    """The GPU's whole memory as the line states it (bytes)."""
    return _first(_TOTALS, text)


def node_total(facts: Facts | None) -> float | None:
    """The largest whole memory of the node's GPUs (NVML's, a pasted nvidia-smi's): a request
    above it fits none of them."""
    if facts is None:
        return None
    with contextlib.suppress(Skip):
        sizes = [g.memory_total_mib for g in facts.gpus() if g.memory_total_mib]
        if sizes:
            return float(max(sizes)) * 1024**2
    return None


@dataclass(frozen=True)
class Oversize:
    """A GPU out-of-memory whose numbers show the job larger than the GPU (bytes)."""

    request: float
    total: float
    own: float  # what the job's live tensors already held (0 when the line does not say)
    single: bool  # the one request alone is larger than the whole GPU
    from_node: bool  # the total is the node's GPUs', not the line's

    def said(self) -> str:
        """The sentence that states it, for the cause's message."""
        gpu = "the node's largest GPU" if self.from_node else "the GPU"
        if self.single:
            return (
                f"one allocation of {gib(self.request)} is larger than {gpu}'s "
                f"{gib(self.total)}: no freeing of memory, allocator setting or preallocation "
                "switch can make room for it"
            )
        return (
            f"the job's live tensors ({gib(self.own)}) plus this allocation "
            f"({gib(self.request)}) need more than {gpu}'s {gib(self.total)}: the job is "
            "larger than the GPU, whatever else holds memory"
        )


def gib(size: float) -> str:
    return f"{size / GIB:.2f} GiB" if size >= GIB else f"{size / 1024**2:.2f} MiB"


def oversize(text: str, facts: Facts | None = None) -> Oversize | None:
    """The job larger than the GPU, from the line's numbers (and the node's GPU memory where the
    line states no total); None when the numbers do not show it."""
    request = requested(text)
    if request is None:
        return None
    total = line_total(text)
    from_node = total is None
    if total is None:
        total = node_total(facts)
    if total is None or total <= 0:
        return None
    if request > total:
        return Oversize(request, total, 0.0, True, from_node)
    own = _first(_OWN, text)
    if own is not None and own + request > _JOB_MARGIN * total:
        return Oversize(request, total, own, False, from_node)
    return None


def split_fix(big: Oversize, first: tuple[Action, ...] = ()) -> tuple[str, tuple[Action, ...]]:
    """The fix for a job larger than the GPU: split the work (the tensor's batch or input, the
    computation in chunks, memory-efficient attention), shard it across GPUs or offload it, or
    a GPU with more memory; ``first``: a runtime's own knobs that do the same."""
    need = big.request if big.single else big.own + big.request
    if big.single:
        summary = (
            f"Split the work so no single tensor needs {gib(big.request)}: a smaller batch or "
            "input (sequence length, image resolution) for the op that allocates it, the "
            "computation in chunks, memory-efficient attention; else shard it across GPUs "
            "(tensor parallelism, FSDP / ZeRO), offload to the CPU, or a GPU with more memory"
        )
    else:
        summary = (
            "Make the job fit the GPU: a smaller batch or input (sequence length, image "
            "resolution), gradient checkpointing, bf16/fp16; else shard it across GPUs (tensor "
            "parallelism, FSDP / ZeRO), offload to the CPU, or a GPU with more memory"
        )
    steps = (
        *first,
        manual(
            "split the work: a smaller batch size or input (sequence length, image resolution) "
            "for the op that allocates it; or the computation in chunks (slices of the batch or "
            "array, concatenated after)"
        ),
        manual(
            "attention over long inputs: memory-efficient attention (torch SDPA, xformers, "
            "FlashAttention) instead of the full score matrix"
        ),
        manual(
            "shard across GPUs: tensor parallelism (vllm --tensor-parallel-size N), FSDP, "
            "DeepSpeed ZeRO-3; JAX: jax.sharding over the devices; or CPU offload "
            "(device_map='auto', ZeRO-Offload)"
        ),
        manual(f"or a GPU with more memory than {gib(need)}"),
    )
    return summary, steps

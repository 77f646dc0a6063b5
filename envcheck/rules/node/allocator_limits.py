"""An allocator stopped at the memory limit the program configured for it, not at the device's
memory (matrices/signatures/memory_runtimes.toml): SYS260. ONNX Runtime's BFC arena refuses to
grow past its `memory_limit` (the CUDA provider's `gpu_mem_limit`, an OrtArenaCfg's `max_mem`)
with its own words, `Available memory of A is smaller than requested bytes of R`, while the
device may have memory free: the fix raises the limit, where an out-of-memory's lowers the job.
Only a log states it."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# microsoft/onnxruntime onnxruntime/core/framework/bfc_arena.cc (BFCArena::Extend: available
# bytes are memory_limit_ minus what the arena already holds)
_ARENA = lazy(
    r"Available memory of (?P<available>[0-9]+) is smaller than requested bytes of "
    r"(?P<requested>[0-9]+)"
)
_MIB = 1024 * 1024
# the CUDA provider's options (onnxruntime.ai docs, CUDA Execution Provider: gpu_mem_limit,
# arena_extend_strategy) and the arena configuration of any provider (OrtArenaCfg max_mem,
# 0 = ORT's default, no limit)
_CUDA_OPTIONS = (
    "onnxruntime.InferenceSession(model, providers=[('CUDAExecutionProvider', "
    "{'gpu_mem_limit': <bytes, larger>, 'arena_extend_strategy': 'kSameAsRequested'}), "
    "'CPUExecutionProvider'])"
)
_ARENA_CFG = (
    "another provider's arena: OrtArenaCfg's max_mem larger, or 0 (ORT's default: no limit); "
    "or disable the arena (SessionOptions.enable_cpu_mem_arena = False)"
)
_APP_LIMIT = (
    "an application that sets the limit itself (an OCR or face model's session): its own "
    "setting for the cap (ragflow: OCR_GPU_MEM_LIMIT_MB)"
)


@rule("SYS260", "allocator-limit-reached", Severity.WARNING)
def allocator_limit_reached(facts: Facts) -> Iterable[Hit]:
    """An allocator's configured memory limit was reached, not the device's memory

    ## What it checks
    Only a log states it: ONNX Runtime's `BFCArena::AllocateRawInternal(...) Available memory
    of 0 is smaller than requested bytes of 135383040`, the arena refusing to extend past the
    limit its session set: the CUDA provider's `gpu_mem_limit`, an `OrtArenaCfg`'s `max_mem`.

    ## Why it matters
    The line reads like an out-of-memory, so the usual fixes (a smaller batch, another GPU,
    killing processes) are tried, while the GPU or the host may have plenty free: the arena
    stops at the number the program (or an application around it: an OCR pipeline, a face
    recognizer, a Triton model configuration) configured. `Available memory of 0` means the
    arena already holds its whole limit; it never returns memory while the session lives.

    ## Example
    ragflow's OCR on a 24 GB RTX 3090: `Available memory of 0 is smaller than requested bytes
    of 135383040` on a large PDF; the session's arena was capped at 512 MB, and a larger
    `gpu_mem_limit` (ragflow's `OCR_GPU_MEM_LIMIT_MB`) lets it finish.

    ## Fix
    Raise the limit: the CUDA provider option `gpu_mem_limit` (bytes) larger, with
    `arena_extend_strategy: kSameAsRequested` so the arena grows by what is asked; for another
    provider `OrtArenaCfg`'s `max_mem` larger or 0 (no limit). Where the device really has
    little free (several sessions on one GPU), a lower limit per session plus fewer sessions.

    ## References
    - https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/core/framework/bfc_arena.cc
    - https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html
    - https://github.com/microsoft/onnxruntime/pull/7750 (OrtArenaCfg max_mem)
    - https://github.com/infiniflow/ragflow/pull/10407
    """
    raise Skip(
        "only a log line states that an allocator reached its configured limit", "log.gpu_memory"
    )


@from_log("SYS260")
def allocator_limit_in_log(facts: Facts, line: LogLine) -> Hit:
    """The limit and what the arena still had, from the line; the fix raises the limit."""
    found = _ARENA.search(line.text)  # the signature's extract reads lines past 400 chars
    left_bytes = line.stated.get("arena_available_bytes") or (
        found.group("available") if found else None
    )
    asked = line.stated.get("arena_request_bytes") or (found.group("requested") if found else None)
    said = ""
    if left_bytes is not None and asked is not None:
        available, requested = int(left_bytes), int(asked)
        left = (
            "the arena already holds its whole limit"
            if available == 0
            else f"{available / _MIB:.1f} MiB were left under the limit"
        )
        said = f": it asked for {requested / _MIB:.1f} MiB and {left}"
    return Hit(
        f"ONNX Runtime's memory arena reached the limit its session configured (line "
        f"{line.line}{said}); the device itself may have memory free: the CUDA provider's "
        "gpu_mem_limit or the arena's max_mem is smaller than the model needs",
        evidence={"line": line.line},
        fix=fix(
            "Raise the arena's limit: a larger gpu_mem_limit in the CUDA provider options "
            "(with arena_extend_strategy kSameAsRequested), or OrtArenaCfg max_mem larger or 0 "
            "(no limit); where the GPU is shared, fewer sessions on it",
            "manual",
            manual(_CUDA_OPTIONS),
            manual(_ARENA_CFG),
            manual(_APP_LIMIT),
        ),
    )

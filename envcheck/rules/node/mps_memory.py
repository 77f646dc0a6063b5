"""torch's MPS backend (Apple silicon) out of memory (matrices/signatures/memory.toml): SYS232.
The MPS allocator caps what it hands out at a high watermark of the Metal device's recommended
working set; its error states the cap ('max allowed') while the cap is on, and the fix differs
by that: the cap, or the workload. Only a log states it."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual, set_env

# the cap the error states while the watermark is on: "max allowed: 18.13 GB"
_MAX_ALLOWED = lazy(r"max allowed: (?P<cap>[0-9.]+ ?[KMGT]i?B)")
_OTHER = lazy(r"other allocations: (?P<other>[0-9.]+ ?[KMGT]i?B)")
# PYTORCH_MPS_HIGH_WATERMARK_RATIO's value that turns the cap off (torch's own message)
WATERMARK_OFF = "0.0"
_SMALLER = "a smaller batch, image or sequence; a smaller (quantized) model"


@rule("SYS232", "mps-memory-limit-reached", Severity.WARNING)
def mps_memory_limit(facts: Facts) -> Iterable[Hit]:
    """torch's MPS backend (Apple silicon) ran out of memory at its high-watermark cap

    ## What it checks
    Only a log states it: `RuntimeError: MPS backend out of memory (MPS allocated: 8.89 GB,
    other allocations: 172.98 MB, max allowed: 9.07 GB). Tried to allocate 6.25 MB on private
    pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory
    allocations (may cause system failure).` (newer torch raises it as
    `torch.OutOfMemoryError`).

    ## Why it matters
    On a Mac the GPU shares the unified memory with everything else. torch's MPS allocator
    stops at `max allowed`, PYTORCH_MPS_HIGH_WATERMARK_RATIO (1.7 by default) times the Metal
    device's recommended working set, so a model that would fit in the Mac's memory fails at
    the cap. It is not an NVIDIA GPU: nvidia-smi, CUDA's allocator settings and other
    processes on a GPU do not apply.

    ## Example
    Fooocus on a 16 GB M2 MacBook Pro: `MPS backend out of memory (MPS allocated: 8.89 GB, other
    allocations: 172.98 MB, max allowed: 9.07 GB)`; `PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0` in
    its launch.py lets it run.

    ## Fix
    `export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0` before the program starts (in Python:
    `os.environ["PYTORCH_MPS_HIGH_WATERMARK_RATIO"] = "0.0"` before torch is imported); it
    lifts the cap, and macOS may then swap or freeze under pressure. Else lower the job's
    memory: a smaller batch, image or model. A program that sets the cap itself
    (`torch.mps.set_per_process_memory_fraction`) overrides the variable. Without `max allowed`
    in the error the cap is already off: only a smaller workload helps.

    ## References
    - https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/mps/MPSAllocator.mm
    - https://pytorch.org/docs/stable/mps_environment_variables.html
    - https://github.com/run-llama/llama_index/issues/8743
    - https://github.com/lllyasviel/Fooocus/issues/1271
    """
    raise Skip("only a log line states that torch's MPS allocator ran out", "log.mps_memory")


@from_log("SYS232")
def mps_memory_in_log(facts: Facts, line: LogLine) -> Hit:
    """The watermark first where the line states the cap; the workload alone where it is off."""
    cap = _MAX_ALLOWED.search(line.text)
    other = _OTHER.search(line.text)
    held = f"; other allocations (not torch's tensors) hold {other.group('other')}" if other else ""
    if cap is None:
        return Hit(
            f"torch's MPS backend ran out of the Mac's unified memory (line {line.line}; the "
            f"high-watermark cap is already off){held}",
            evidence={"line": line.line},
            fix=fix(
                f"Lower the job's memory: {_SMALLER}; close other apps that hold unified memory",
                "manual",
                manual(_SMALLER),
            ),
        )
    return Hit(
        f"torch's MPS backend reached its cap, max allowed {cap.group('cap')} (line "
        f"{line.line}): PYTORCH_MPS_HIGH_WATERMARK_RATIO times the Metal device's recommended "
        f"working set, below the Mac's memory{held}",
        evidence={"line": line.line, "max_allowed": cap.group("cap")},
        fix=fix(
            f"Lift the cap: export PYTORCH_MPS_HIGH_WATERMARK_RATIO={WATERMARK_OFF} before the "
            "program starts (macOS may swap under pressure); else lower the job's memory "
            "(a smaller batch, image or model)",
            "manual",
            set_env(PYTORCH_MPS_HIGH_WATERMARK_RATIO=WATERMARK_OFF),
            manual('os.environ["PYTORCH_MPS_HIGH_WATERMARK_RATIO"] = "0.0"  (before torch)'),
            manual(_SMALLER),
        ),
    )

"""GPU memory that ran out in the words of a library that does not say "out of memory": SYS230,
read from the line (matrices/signatures/memory_runtimes.toml). cuDNN's convolution search finds
no algorithm whose workspace fits (torch, ONNX Runtime, darknet); torch's allocator fails an
allocation and then fails asking NVML who holds the GPU. The fix is the out-of-memory fix in the
knobs of the program that printed the line."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

_DARKNET = "isn't found"  # darknet's wording; torch's and ONNX Runtime's say "Unable to find"
_NVML = "NVML_SUCCESS"
_NVML_INIT = "nvmlInit"
_HELD = (
    "nvidia-smi --query-compute-apps=pid,used_memory --format=csv (other processes holding the "
    "GPU: a second notebook or run, stale workers)"
)
_SMALLER = (
    "a smaller batch size (--batch-size / batch_size; gradient accumulation keeps the "
    "effective batch), a smaller input size or model"
)


@rule("SYS230", "gpu-memory-short-unnamed", Severity.WARNING)
def gpu_memory_short_unnamed(facts: Facts) -> Iterable[Hit]:
    """GPU memory ran out where the library's message does not say out of memory

    ## What it checks
    Only a log says it: torch's (and ONNX Runtime's) `Unable to find a valid cuDNN algorithm to
    run convolution` and darknet's `cuDNN isn't found FWD algo for convolution` (every cuDNN
    algorithm's workspace failed to allocate), and torch's `NVML_SUCCESS == r INTERNAL ASSERT
    FAILED at ".../CUDACachingAllocator.cpp"` (an allocation failed, and writing the
    out-of-memory message torch's query of NVML for the processes on the GPU failed too).

    ## Why it matters
    Neither line says "out of memory", so the search goes to cuDNN versions and driver bugs; the
    fix is the out-of-memory one: less GPU memory for the job, or the GPU freed of other
    processes. torch's NVML assert comes mostly from a MIG slice, where NVML answers no
    per-process query and the slice is small.

    ## Example
    YOLOv5 training with `--batch-size 64` on a 6 GB GPU: `RuntimeError: Unable to find a valid
    cuDNN algorithm to run convolution`; it trains with `--batch-size 16`.

    ## Fix
    A smaller batch size (darknet: a larger `subdivisions=` or a smaller `batch=` in the
    model's .cfg), a smaller input or model; stop other processes on the GPU (`nvidia-smi`). On
    a MIG slice: `CUDA_VISIBLE_DEVICES` must name the slice the job was given (`nvidia-smi -L`
    lists `MIG-<uuid>`), and the job must fit the slice's memory.

    ## References
    - https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/cudnn/Conv_v7.cpp
    - https://github.com/pytorch/pytorch/blob/main/c10/cuda/CUDACachingAllocator.cpp
      (reportProcessMemoryInfo)
    - https://github.com/ultralytics/yolov5/issues/11250
    - https://github.com/AlexeyAB/darknet/issues/7660
    - https://github.com/Stability-AI/sd3.5/issues/18
    """
    raise Skip("only a log line states a library's hidden out-of-memory", "log.gpu_memory")


@from_log("SYS230")
def gpu_memory_short_unnamed_in_log(facts: Facts, line: LogLine) -> Hit:
    """The out-of-memory fix in the knobs of the program that printed the line."""
    text = line.text
    steps: tuple[Action, ...]
    if _NVML in text:
        init = _NVML_INIT in text
        message = (
            f"torch could not allocate GPU memory (line {line.line}): its out-of-memory report "
            "asks NVML which processes hold the GPU, and that NVML call failed ("
            + (
                "NVML could not start: its library does not match the driver, or the container "
                "lacks it"
                if init
                else "NVML answers no per-process query on a MIG slice"
            )
            + "), so the assert hides torch's 'CUDA out of memory' message"
        )
        summary = (
            "Lower the job's GPU memory (a smaller batch size, a smaller model or input); on a "
            "MIG slice check that CUDA_VISIBLE_DEVICES names the slice the job was given "
            "(nvidia-smi -L) and that the job fits its memory"
        )
        steps = (
            manual(_SMALLER),
            manual(
                "nvidia-smi -L  (MIG: export CUDA_VISIBLE_DEVICES=MIG-<uuid> of the slice the "
                "scheduler gave the job; a 1g/2g slice holds a small part of the GPU's memory)"
            ),
            manual(_HELD),
        )
        if init:
            steps += (
                manual(
                    "nvidia-smi fails too: the driver and its NVML library differ (reboot after a "
                    "driver update; a container started with --gpus all)"
                ),
            )
    elif _DARKNET in text:
        message = (
            f"cuDNN found no convolution algorithm whose workspace fits the GPU memory left "
            f"(line {line.line}): darknet's batch per step (batch/subdivisions) and the "
            "network's input size need more GPU memory than is free"
        )
        summary = (
            "Lower darknet's GPU memory: a larger subdivisions= (or a smaller batch=) in the "
            "model's .cfg, or smaller width=/height=; stop other processes on the GPU"
        )
        steps = (
            manual(
                "in the .cfg: subdivisions=32 (or 64) instead of 16, or a smaller batch size "
                "(batch=); smaller width=/height= (multiples of 32)"
            ),
            manual(_HELD),
        )
    else:
        message = (
            f"cuDNN found no convolution algorithm whose workspace fits the GPU memory left "
            f"(line {line.line}): torch tries every algorithm and each failed to allocate its "
            "workspace, an out-of-memory in other words"
        )
        summary = (
            "Lower the job's GPU memory: a smaller batch size (or input size), fewer processes "
            "or models on the GPU; check nvidia-smi for other processes holding it"
        )
        steps = (
            manual(_SMALLER),
            manual(_HELD),
            manual(
                "if the GPU is nearly empty when it fails: a cuDNN older than torch's build "
                "may be loaded first (unset LD_LIBRARY_PATH; torch brings its own cuDNN)"
            ),
        )
    return Hit(
        message,
        evidence={"line": line.line, "signature": line.signature},
        fix=fix(summary, "manual", *steps),
    )

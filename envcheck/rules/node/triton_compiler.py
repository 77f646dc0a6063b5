"""TOR202: Triton's compiler failed in one of its MLIR passes on a kernel: `RuntimeError:
PassManager::run failed`, raised by Triton's pass manager binding (python/src/ir.cc: `if
(failed(self.run(mod.getOperation()))) throw std::runtime_error("PassManager::run failed")`)
from a stage of the backend's compile (`make_ttgir`, `make_llir`). The kernel is valid Triton
that this Triton release cannot lower for this GPU: a lowering missing for the architecture
(Turing/Volta's MMA paths, an AMD target Triton does not know), or the release's own bug
(a regression of a new release). The release comes from the log (`triton==3.7.0`, a package
list) or the node; the GPU and dtype from the log or node: bfloat16 below sm_80 is named."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from packaging.version import InvalidVersion, Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.model.report import normal_dtype
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install
from envcheck.rules.node.arch import _line_gpu

# Ampere: bfloat16 arithmetic in hardware (below it Triton emulates or cannot lower bf16 ops)
_BF16_FLOOR = Version("8.0")


@rule("TOR202", "triton-compiler-pass-failed", Severity.ERROR)
def triton_compiler_pass_failed(facts: Facts) -> Iterable[Hit]:
    """Triton's compiler failed in an MLIR pass on a kernel (PassManager::run failed): this Triton release cannot lower it for this GPU

    ## What it checks
    In `triage`, Triton's `RuntimeError: PassManager::run failed` from a stage of its compile
    (`make_ttgir`, `make_llir`), under torch.compile/Inductor, vLLM, Unsloth, SageAttention or
    any library whose kernels Triton compiles at run time. The Triton release, the GPU and the
    dtype come from the log or the node where they are stated. Only a log states it.

    ## Why it matters
    The kernel is valid Triton; the installed Triton release cannot lower it for this GPU: a
    path missing for an older architecture (T4/V100, sm_75/sm_70, bfloat16 below sm_80), an
    AMD target that release does not know (`unsupported target: 'gfx906'`), or a regression of
    a new release. The job stops at its first kernel; nothing in the model or data is at
    fault.

    ## Example
    Unsloth on a Colab T4 with Triton 3.3: fails, passes with Triton 3.6 and torch 2.10; vLLM's
    `_penalties_kernel` under torch 2.12's triton 3.7.0 fails in `make_ttgir` on an H100, and
    compiles with triton 3.6 (torch 2.11).

    ## Fix
    Move to another Triton release: upgrade torch together with the Triton it pins (`pip install
    -U torch`, or `pip install -U triton` where no torch pins it); where the failure came with
    a new release (a regression), pin back below it (`pip install "triton<3.7"` with the torch
    that accepts it). With bfloat16 on a GPU below sm_80, run in float16; else turn the
    library's Triton path off (torch.compile off, the library's switch).

    ## References
    - https://github.com/triton-lang/triton/blob/main/python/src/ir.cc
    - https://github.com/pytorch/pytorch/issues/180908
    - https://github.com/unslothai/unsloth/issues/2482
    - https://github.com/lllyasviel/FramePack/issues/350
    """
    raise Skip("only a log states that Triton's compiler failed on a kernel", "log.triton")


def _triton(facts: Facts, line: LogLine) -> Version | None:
    """The Triton release: the log's statement (triton==3.7.0), else the node's."""
    text = line.stated.get("triton_version")
    if text:
        with contextlib.suppress(InvalidVersion):
            return Version(text)
    with contextlib.suppress(Skip):
        return facts.version("triton")
    return None


@from_log("TOR202")
def triton_compiler_pass_failed_in_log(facts: Facts, line: LogLine) -> Hit:
    """The release, GPU and dtype where stated; the fix is another Triton release (newer, or
    below a new one that regressed), float16 for bfloat16 below sm_80."""
    triton = _triton(facts, line)
    name, cc = _line_gpu(facts, line)
    dtype = normal_dtype(line.stated.get("dtype", "")) if line.stated.get("dtype") else None
    on = f"Triton {triton}" if triton else "the installed Triton release"
    gpu = f" on {name or 'the GPU'} (sm_{cc.major}{cc.minor})" if cc is not None else ""
    older = cc is not None and cc < _BF16_FLOOR
    bf16 = dtype == "bfloat16" and older
    steps = [
        "upgrade torch together with the Triton it pins (pip install -U torch; pip install -U "
        "triton where no torch pins it)"
    ]
    actions = [pip_install("torch", flags=("-U",)), pip_install("triton", flags=("-U",))]
    if triton is not None:
        below = f"triton<{triton.major}.{triton.minor}"
        steps.append(
            f"where {triton} is newer than the release that worked (a regression), pin back: "
            f'pip install "{below}" with the torch that accepts it'
        )
        actions.append(manual(f'pip install "{below}"'))
    first = (
        "Run in float16 instead of bfloat16 (this GPU has no bfloat16 below sm_80), or move "
        if bf16
        else "Move "
    )
    if older and not bf16:
        steps.append("or turn the library's Triton path off on this GPU (torch.compile off)")
    return Hit(
        f"{on} failed in an MLIR pass while it compiled a kernel{gpu} (line {line.line}): that "
        "release cannot lower this kernel for this GPU"
        + (" in bfloat16" if bf16 else "")
        + "; another Triton release compiles it",
        evidence={
            "line": line.line,
            "triton": str(triton) if triton else None,
            "gpu": name,
            "compute_capability": str(cc) if cc is not None else None,
            "dtype": dtype,
        },
        fix=fix(
            first + "to another Triton release: " + "; ".join(steps),
            "manual",
            *actions,
        ),
    )

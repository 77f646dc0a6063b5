"""COV: what the matrix does not know about this node, said as findings instead of quiet skips."""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, rule
from envcheck.rules.fixes import fix, manual


@rule("COV101", "gpu-model-unknown", Severity.WARNING)
def gpu_unknown(facts: Facts) -> Iterable[Hit]:
    """A GPU's model is not in the matrix, so its architecture is unknown

    ## What it checks
    Each GPU's name, normalised the way nvidia-smi, NVML, cloud consoles and people write it
    (`RTX5090`, `NVIDIA GeForce RTX 5090`, `nvidia-h100-80gb-hbm3`), against the matrix's GPU
    models, when the report does not carry the compute capability itself (NVML reports it; a
    pasted dump usually does not).

    ## Why it matters
    Without the architecture, the rules that compare it with the torch build's kernels, the
    driver's branch or a library's floor (TOR101, DRV110, TOR102, ...) cannot check this GPU
    and are skipped: a silent gap, not a pass.

    ## Example
    `RTX 4080 Laptop GPU` in a pasted `transformers env`: no GPU model in the matrix matches.

    ## Fix
    Probe the node itself (`envcheck check` reads the compute capability from NVML), or add the
    model with its compute capability and source to `matrices/hardware/gpus.toml` (or a site overlay).

    ## References
    - https://developer.nvidia.com/cuda-gpus
    """
    hits = []
    seen: set[str] = set()
    for gpu in facts.gpus():
        if not gpu.name or gpu.compute_capability or gpu.name in seen:
            continue
        seen.add(gpu.name)
        if facts.gpu_model(gpu) is None:
            hits.append(
                Hit(
                    f"GPU {gpu.name!r} is not a model the matrix knows: its compute capability "
                    "is unknown, so the rules that need it skip this GPU",
                    evidence={"gpu": gpu.name},
                    fix=fix(
                        "Probe the node (NVML reports the compute capability) or add the model "
                        "to matrices/hardware/gpus.toml",
                        "manual",
                        manual("run `envcheck check` on the node, or add the GPU to the matrix"),
                    ),
                )
            )
    return hits


def _release_hit(what: str, version: Version, refresh: str) -> Hit:
    return Hit(
        f"{what} {version} is not a release the matrix knows: the rules that read its pins, "
        "CUDA variants or Python support skip it",
        evidence={what: str(version)},
        fix=fix(
            f"Refresh the matrix ({refresh}) or check the release's requirements by hand",
            "manual",
            manual(refresh),
        ),
    )


@rule("COV102", "torch-release-unknown", Severity.WARNING)
def torch_unknown(facts: Facts) -> Iterable[Hit]:
    """The installed torch release is not in the matrix

    ## What it checks
    The installed torch version (its public part: `2.7.1` of `2.7.1+cu128`) against the
    matrix's torch releases. Nightly and source builds (`.dev`, `a0+git...`) are reported too.

    ## Why it matters
    The arch-list, driver, Python and CUDA-wheel rules (TOR101, DRV101, PY101, CUD101) read the
    release's record; without one they skip, and a broken stack would pass unnoticed.

    ## Example
    `torch 2.9.0.dev20250722+cu128` (a nightly) in `python -m sglang.check_env`.

    ## Fix
    `envcheck matrix refresh` (or a newer envcheck) for a new release; for a nightly or local
    build, check its arch list and pins by hand (`python -c "import torch; print(torch.cuda.get_arch_list())"`).

    ## References
    - https://github.com/pytorch/pytorch/blob/main/RELEASE.md
    """
    version = facts.version("torch")
    if version is None or facts.matrix.torch_release(version) is not None:
        return []
    return [_release_hit("torch", version, "envcheck matrix refresh torch")]


@rule("COV103", "vllm-release-unknown", Severity.WARNING)
def vllm_unknown(facts: Facts) -> Iterable[Hit]:
    """The installed vLLM release is not in the matrix

    ## What it checks
    The installed vLLM version (public part) against the matrix's vLLM releases.

    ## Why it matters
    vLLM pins torch exactly and bounds its Python; VLM101 and PY102 read those pins from the
    release's record and skip without it.

    ## Example
    `vllm 0.7.4.dev119+gca377cf1.cu122`, a development build.

    ## Fix
    `envcheck matrix refresh` (or a newer envcheck) for a new release; for a development
    build, compare its `torch` requirement (`pip show vllm`) with the installed torch by hand.

    ## References
    - https://github.com/vllm-project/vllm/releases
    """
    version = facts.version("vllm")
    if version is None or facts.matrix.vllm_release(version) is not None:
        return []
    return [_release_hit("vllm", version, "envcheck matrix refresh vllm")]

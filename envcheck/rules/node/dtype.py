"""VLM120: the job's floating-point type against what the GPUs support (bf16 needs sm_80)."""

from __future__ import annotations

from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, rule
from envcheck.rules.fixes import fix, manual

_BF16 = Version("8.0")


@rule("VLM120", "bf16-on-gpu-without-bf16", Severity.ERROR)
def bf16_without_support(facts: Facts) -> Iterable[Hit]:
    """The job asks for bfloat16 on a GPU below compute capability 8.0

    ## What it checks
    The floating-point type the job runs in (stated by its log, e.g. vLLM's refusal, or declared
    with `[workload] dtype` in a spec) against each GPU's compute capability: bfloat16 needs
    8.0 (Ampere) or newer. It fires only when bf16 is stated; a node alone says nothing about
    the job's dtype, so on GPUs below 8.0 the rule is left open until the job's dtype is known.

    ## Why it matters
    Volta (V100, 7.0) and Turing (T4, RTX 20xx, 7.5) have no native bf16. vLLM refuses to
    start (`Bfloat16 is only supported on GPUs with compute capability of at least 8.0`), and
    a model whose checkpoint is bf16 gets bf16 by default (`dtype="auto"`).

    ## Example
    vLLM serving a bf16 Llama-3-8B-Instruct checkpoint on a Tesla V100-SXM2-32GB.

    ## Fix
    Run in float16 on this GPU: vLLM `--dtype half` (`LLM(model=..., dtype="half")`),
    LLaMA-Factory `vllm_dtype: float16` (and `fp16: true` rather than `bf16: true` in
    training), transformers' Trainer `fp16=True`; or move the job to an Ampere or newer GPU.

    ## References
    - https://github.com/vllm-project/vllm/issues/946
    - https://github.com/vllm-project/vllm/issues/1157
    - https://github.com/hiyouga/LlamaFactory/issues/4960
    """
    below = []
    for gpu in facts.gpus():
        cc = facts.compute_capability(gpu)
        if cc < _BF16:
            below.append(f"{gpu.name or f'GPU {gpu.index}'} (compute capability {cc})")
    if not below:
        return []  # every GPU has bf16: whatever the job asks for, this is not the cause
    dtype = facts.workload().dtype
    if dtype is None:  # the section states the job's model or command, not its dtype
        raise Skip("the job's dtype is not stated", "workload.dtype")
    if dtype != "bfloat16":
        return []
    names = ", ".join(dict.fromkeys(below))
    return [
        Hit(
            f"the job runs in bfloat16, but {names} has no bf16 (it needs compute capability "
            "8.0, Ampere or newer): vLLM refuses to start and bf16 training fails",
            evidence={"dtype": dtype, "gpus": list(dict.fromkeys(below))},
            fix=fix(
                "Run in float16 on this GPU (vLLM --dtype half, as its message spells it "
                "--dtype=half; LLaMA-Factory vllm_dtype: float16), or use an Ampere or newer GPU",
                "manual",
                manual("vllm serve <model> --dtype=half  (or --dtype float16)"),
                manual(
                    'vLLM: --dtype half, or LLM(model=..., dtype="half"); LLaMA-Factory: '
                    "vllm_dtype: float16 (fp16: true instead of bf16: true); transformers "
                    "Trainer: fp16=True instead of bf16=True"
                ),
            ),
        )
    ]

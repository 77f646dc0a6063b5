"""GPU memory a framework or engine takes as its share when it starts: JAX (XLA) and TensorFlow
(SYS182), vLLM's and SGLang's KV cache within their share (SYS185); matrices/signatures. JAX preallocates 75% of each visible GPU and TensorFlow maps
nearly all of it, so a second process or framework on the same GPU runs out; their own
environment variables turn that off. Only a log states the failure."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.gpu_oom_size import oversize, split_fix

_JAX = "export XLA_PYTHON_CLIENT_PREALLOCATE=false"
_TF = "export TF_FORCE_GPU_ALLOW_GROWTH=true"
# the same switch in code (https://www.tensorflow.org/guide/gpu: limiting GPU memory growth)
_TF_CODE = (
    "or in code, before the first op: for gpu in tf.config.list_physical_devices('GPU'): "
    "tf.config.experimental.set_memory_growth(gpu, True)  (TF 1.x: "
    "config.gpu_options.allow_growth = True)"
)
# TensorFlow's cuDNN and cuBLAS lines (signatures/memory_runtimes.toml): TensorFlow's by their
# words, whatever the allocator line says
_TF_LIBRARY_LINES = frozenset(
    {
        "tf-cudnn-convolution-algorithm-failed",
        "tf-blas-launch-failed",
        "tf-gpu-copy-dst-not-initialized",
        "tf-cudnn-rnn-forward-failed",
        "tf-blas-without-blas-support",
        "tf-cudnn-no-algorithm-worked",
        "tf-cufft-plan-failed",
    }
)
# SGLang's token pool full at a prefill or decode step (memory_runtimes.toml)
_SGLANG_POOL = "sglang-kv-pool-exhausted"


@rule("SYS182", "framework-preallocates-gpu-memory", Severity.WARNING)
def framework_preallocates(facts: Facts) -> Iterable[Hit]:
    """JAX (XLA) or TensorFlow ran out of GPU memory it had to share (they preallocate it)

    ## What it checks
    Only a log states it: XLA's `RESOURCE_EXHAUSTED: Out of memory while trying to allocate N
    bytes` / `Failed to allocate request for`, TensorFlow's `failed to allocate ... from
    device: CUDA_ERROR_OUT_OF_MEMORY` and `Allocator (GPU_0_bfc) ran out of memory`, and
    TensorFlow's cuDNN and cuBLAS calls that fail beside its preallocation (`Failed to get
    convolution algorithm. This is probably because cuDNN failed to initialize`, `Blas GEMM
    launch failed`).

    ## Why it matters
    JAX preallocates 75% of every visible GPU when it starts and TensorFlow maps nearly all of
    it. Beside another process or framework on the same GPU (torch and JAX in one job, two JAX
    processes, TensorFlow in a data pipeline) the second one finds the memory gone, and a job
    that fits the GPU fails.

    ## Example
    A torch training loop that imports a JAX-based reward model: `XlaRuntimeError:
    RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.`

    ## Fix
    `export XLA_PYTHON_CLIENT_PREALLOCATE=false` (or `XLA_PYTHON_CLIENT_MEM_FRACTION=.5`) before
    JAX is imported; TensorFlow: `export TF_FORCE_GPU_ALLOW_GROWTH=true` (in code:
    `tf.config.experimental.set_memory_growth(gpu, True)`, TF 1.x `allow_growth = True`); else
    a smaller batch. The line's own words decide which runtime's switch leads (JAX's
    `JaxRuntimeError` / `XlaRuntimeError`, TensorFlow's `ResourceExhaustedError`); where one
    allocation is larger than the whole GPU (the node's GPUs when the line does not say), no
    switch helps: split the work (a smaller batch or input, `jax.sharding` across devices).

    ## References
    - https://docs.jax.dev/en/latest/gpu_memory_allocation.html
    - https://www.tensorflow.org/guide/gpu
    - https://github.com/apax-hub/apax/issues/111
    - https://github.com/tensorflow/tensorflow/issues/36025
    """
    raise Skip("only a log line states the framework's out-of-memory", "log.gpu_preallocation")


# the runtime a line names by its exception or module words: JAX's (jax.errors.JaxRuntimeError,
# jaxlib's XlaRuntimeError) and TensorFlow's (tensorflow.python.framework.errors_impl,
# ResourceExhaustedError, 'OOM when allocating tensor'); both use XLA's TSL BFC allocator, so its
# 'GPU_0_bfc' and bfc_allocator.cc are neither's alone
_JAX_WORDS = lazy(r"\bjax(?:lib)?\b|JaxRuntimeError|XlaRuntimeError|xla_extension")
_TF_WORDS = lazy(
    r"\btensorflow\b|ResourceExhaustedError|OOM when allocating tensor|"
    r"from device: CUDA_ERROR_OUT_OF_MEMORY|\btf\.config\b"
)


@from_log("SYS182")
def framework_preallocates_in_log(facts: Facts, line: LogLine) -> Hit:
    """JAX's variables for the line of JAX's (its exception or module words), TensorFlow's for
    TensorFlow's; a bare allocator line (XLA's TSL BFC allocator, both use it) is read as
    TensorFlow's. Where the numbers show one allocation larger than the GPU (the node's GPUs
    when the line does not state the total), no preallocation switch helps: the fix splits the
    work (gpu_oom_size)."""
    # the same words through JAX (XlaRuntimeError: ... without BLAS support) are JAX's
    jax = bool(_JAX_WORDS.search(line.text))
    library = line.signature in _TF_LIBRARY_LINES and not jax
    tf = not jax and (
        library
        or bool(_TF_WORDS.search(line.text))
        or "GPU_0_bfc" in line.text
        or "bfc_allocator.cc" in line.text
    )
    who = "TensorFlow" if tf else "JAX (XLA)"
    big = None if library else oversize(line.text, facts)
    if big is not None:
        summary, steps = split_fix(big)
        return Hit(
            f"{who} ran out of GPU memory (line {line.line}): {big.said()}",
            evidence={"line": line.line, "framework": who, "requested_bytes": int(big.request)},
            fix=fix(summary, "manual", *steps),
        )
    first, second = (_TF, _JAX) if tf else (_JAX, _TF)
    what = (
        f"TensorFlow's cuDNN/cuBLAS call failed for GPU memory (or its cuFFT plan, its copy to the "
        f"GPU; line {line.line}): TensorFlow maps nearly all of the GPU when it starts, so the "
        "library's own handle and workspace, or the buffer, find none left, all the more when "
        "another process holds part of the GPU"
        if library
        else f"{who} ran out of GPU memory (line {line.line}): it takes most of the GPU when it "
        "starts (JAX 75%, TensorFlow nearly all), so memory another process or framework "
        "holds on the same GPU, or its own preallocation, leaves too little"
    )
    return Hit(
        what,
        evidence={"line": line.line, "framework": who},
        fix=fix(
            f"Stop the preallocation: {first} (before the framework is imported); else lower "
            "the job's GPU memory (a smaller batch)",
            "manual",
            manual(first),
            manual(
                "JAX: or export XLA_PYTHON_CLIENT_MEM_FRACTION=.50 (the share it takes) / "
                "XLA_PYTHON_CLIENT_ALLOCATOR=platform"
                if not tf
                else _TF_CODE
            ),
            manual(
                "a smaller batch size, or a GPU with more memory; check nvidia-smi for other "
                "processes on the GPU"
            ),
            *((manual(second),) if tf else ()),
        ),
    )


_MAX_LEN = lazy(
    r"max seq len \((?P<model>[0-9]+)\) is larger than the maximum number of tokens that can be "
    r"stored in KV cache \((?P<kv>[0-9]+)\)"
)
_ESTIMATED = lazy(r"estimated maximum model length is (?P<estimated>[0-9]+)")


@rule("SYS185", "serving-engine-kv-cache-too-small", Severity.WARNING)
def kv_cache_too_small(facts: Facts) -> Iterable[Hit]:
    """The serving engine's GPU memory share leaves too little for the KV cache (vLLM, SGLang)

    ## What it checks
    Only a log states it: vLLM's `No available memory for the cache blocks`, `The model's max
    seq len (N) is larger than the maximum number of tokens that can be stored in KV cache (M)`,
    vLLM V1's `... KV cache is needed, which is larger than the available KV cache memory ...
    the estimated maximum model length is M`, SGLang's `Not enough memory. Please try to increase
    --mem-fraction-static.`; the same shortage in other engines' words: text-generation-inference's
    warmup (`Not enough memory to handle N prefill tokens`) and llama.cpp's KV cache for its
    context size (`failed to allocate buffer for kv cache`), each fixed with its own flags.

    ## Why it matters
    vLLM takes `gpu_memory_utilization` (0.9 by default) of the GPU and SGLang
    `--mem-fraction-static` of it; what the weights, activations and CUDA graphs leave is the KV
    cache. When it cannot hold one sequence of the model's full context length the engine
    refuses to start; memory other processes hold on the GPU shrinks it further.

    ## Example
    `ValueError: The model's max seq len (131072) is larger than the maximum number of tokens
    that can be stored in KV cache (43760).` for a 128k-context model on one 80 GB GPU.

    ## Fix
    Cap the context length at what fits (`--max-model-len 43760`, the number the line states),
    or give the engine more of the GPU (`--gpu-memory-utilization 0.95`; SGLang
    `--mem-fraction-static 0.9`), more GPUs (`--tensor-parallel-size`), or free the GPU of
    other processes.

    ## References
    - https://docs.vllm.ai/en/latest/configuration/conserving_memory.html
    - https://github.com/vllm-project/vllm/blob/main/vllm/v1/core/kv_cache_utils.py
    """
    raise Skip("only a log line states the engine's KV cache size", "log.kv_cache")


@from_log("SYS185")
def kv_cache_too_small_in_log(facts: Facts, line: LogLine) -> Hit:
    """The context length that fits, from the numbers the line states."""
    text = line.text
    fits = None
    found = _MAX_LEN.search(text)
    if found is not None:
        fits = found.group("kv")
    elif (estimated := _ESTIMATED.search(text)) is not None:
        fits = estimated.group("estimated")
    pool = line.signature == _SGLANG_POOL
    sglang = pool or "mem-fraction-static" in text
    steps: tuple[Action, ...]
    if line.signature in _OTHER_ENGINES:
        return _OTHER_ENGINES[line.signature](line)
    if sglang:
        summary = (
            "Give SGLang more of the GPU: --mem-fraction-static 0.9 (or higher, if nothing else "
            "uses the GPU); or a shorter --context-length, more GPUs (--tp)"
        )
        steps = (
            manual("python -m sglang.launch_server ... --mem-fraction-static 0.9"),
            manual("or --context-length <shorter>, --tp <more GPUs>"),
        )
        if pool:  # the running batch outgrew the pool: fewer requests or smaller prefill chunks
            steps += (
                manual(
                    "or fewer tokens at once: --max-running-requests <fewer>, "
                    "--chunked-prefill-size 4096 (or 2048)"
                ),
            )
    else:
        cap = f"--max-model-len {fits}" if fits else "--max-model-len <shorter>"
        summary = (
            f"Cap the context at what fits ({cap}) or give vLLM more of the GPU "
            "(--gpu-memory-utilization 0.95), or more GPUs (--tensor-parallel-size)"
        )
        steps = (
            manual(f"vllm serve ... {cap}  (LLM(..., max_model_len={fits or '<shorter>'}))"),
            manual(
                "vllm serve ... --gpu-memory-utilization 0.95  (LLM(..., "
                "gpu_memory_utilization=0.95); nothing else may use the GPU)"
            ),
            manual("or --tensor-parallel-size <more GPUs>, a quantized model, --enforce-eager"),
        )
    return Hit(
        f"the engine's GPU memory share left too little KV cache (line {line.line})"
        + (f": {fits} tokens fit, less than the model's context length" if fits else "")
        + "; memory other processes hold on the GPU shrinks it further",
        evidence={"line": line.line, "tokens_that_fit": fits},
        fix=fix(
            summary,
            "manual",
            *steps,
            manual(
                "nvidia-smi --query-compute-apps=pid,used_memory --format=csv (other processes on "
                "the GPU)"
            ),
        ),
    )


_PREFILL = lazy(r"handle (?P<tokens>[0-9]+) (?:total tokens with [0-9]+ )?prefill tokens")


def _tgi_prefill(line: LogLine) -> Hit:
    """text-generation-inference's warmup: a prefill batch of --max-batch-prefill-tokens did not
    fit beside the weights; the fix halves the number the line states."""
    found = _PREFILL.search(line.text)
    tokens = int(found.group("tokens")) if found else None
    fewer = str(max(tokens // 2, 1)) if tokens else "<fewer>"
    return Hit(
        "text-generation-inference's warmup ran out of GPU memory on a prefill batch of "
        f"{tokens or 'its --max-batch-prefill-tokens'} tokens (line {line.line}): the weights "
        "leave too little of the GPU for it and the KV cache",
        evidence={"line": line.line, "prefill_tokens": tokens},
        fix=fix(
            f"Lower TGI's prefill batch: --max-batch-prefill-tokens {fewer} (with "
            "--max-input-tokens no larger and --max-total-tokens to match), or give the "
            "model more GPU memory: more shards (--num-shard), a quantized model (--quantize), "
            "no other process on the GPU",
            "manual",
            manual(
                f"text-generation-launcher ... --max-batch-prefill-tokens {fewer} "
                "--max-input-tokens <= that --max-total-tokens <longer than input>"
            ),
            manual("or --num-shard <more GPUs>, --quantize bitsandbytes-nf4 / awq / gptq"),
            manual("nvidia-smi --query-compute-apps=pid,used_memory --format=csv"),
        ),
    )


def _llama_kv_cache(line: LogLine) -> Hit:
    """llama.cpp's KV cache for the context size asked for (the model's own by default) did not
    fit: a smaller context first, a quantized cache, or the cache kept in RAM."""
    return Hit(
        f"llama.cpp could not allocate the KV cache for its context size (line {line.line}): "
        "the context asked for (by default the model's full training context) needs more "
        "memory than is left beside the weights",
        evidence={"line": line.line},
        fix=fix(
            "Ask for a smaller context: llama.cpp -c 8192 (--ctx-size; llama-cpp-python "
            "Llama(n_ctx=8192); ollama: PARAMETER num_ctx 8192 or OLLAMA_CONTEXT_LENGTH=8192); "
            "or a quantized KV cache (-ctk q8_0 -ctv q8_0, with -fa), fewer layers on the GPU "
            "(-ngl <fewer>) or the cache in RAM (--no-kv-offload)",
            "manual",
            manual("llama-server -m model.gguf -c 8192  (Llama(model_path=..., n_ctx=8192))"),
            manual("ollama: /set parameter num_ctx 8192, or export OLLAMA_CONTEXT_LENGTH=8192"),
            manual("or -ctk q8_0 -ctv q8_0 -fa; -ngl <fewer layers>; --no-kv-offload"),
        ),
    )


# other engines' KV cache and prefill lines (signatures/memory_runtimes.toml), each worded in
# that engine's own flags
_OTHER_ENGINES = {
    "tgi-warmup-prefill-memory": _tgi_prefill,
    "llama-kv-cache-allocation-failed": _llama_kv_cache,
}

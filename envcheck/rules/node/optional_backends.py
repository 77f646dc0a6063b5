"""PY150 for a name a package defines only when an optional backend imports.

Packages that drive an inference or training backend import it lazily: ms-swift's `swift.llm`
defines `get_vllm_engine` and `swift.llm.utils` its `prepare_vllm_engine_template` inside an
`if is_vllm_available():` block, LLaMA-Factory and others likewise. Where vLLM is not installed,
or is installed but fails to import (built for another torch, a CUDA library missing), the name
is simply absent, and Python says `cannot import name 'get_vllm_engine' from 'swift.llm'`: the
package's own release is not the cause, and upgrading it (what the line alone suggests) does
not help. The name itself carries the backend's import name (`get_vllm_engine`,
`VllmEngine`, `get_lmdeploy_engine`), which is what this module reads.
"""

from __future__ import annotations

from envcheck.facts.node import Facts
from envcheck.model.finding import Action
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, manual, pip_install

# the backends GPU-stack packages import behind an availability check (transformers'
# is_<name>_available, ms-swift's, LLaMA-Factory's, trl's import_utils): import name ->
# distribution. A name in a module of one of these packages that carries one of them is the
# backend's part of that package.
BACKENDS: dict[str, str] = {
    "vllm": "vllm",
    "lmdeploy": "lmdeploy",
    "sglang": "sglang",
    "deepspeed": "deepspeed",
    "xformers": "xformers",
    "bitsandbytes": "bitsandbytes",
    "flash_attn": "flash-attn",
    "liger_kernel": "liger-kernel",
    "tensorrt_llm": "tensorrt-llm",
    "unsloth": "unsloth",
    "mindspeed": "mindspeed",
}

_CAMEL = lazy(r"(?<=[a-z0-9])(?=[A-Z])")


def backend_in_name(module: str, name: str) -> str | None:
    """The backend whose import name the missing name carries as a word (`get_vllm_engine`,
    `VllmEngine`), where the module is not the backend's own (`vllm.x`, `transformers.deepspeed`)
    and the name is not an availability check (`is_vllm_available`), which a release adds or
    removes like any other name."""
    snake = "_" + _CAMEL.sub("_", name).lower() + "_"
    if snake.startswith("_is_") or snake.endswith("_available_"):
        return None
    parts = module.lower().split(".")
    for backend in BACKENDS:
        if f"_{backend}_" in snake and backend not in parts:
            return backend
    return None


def optional_backend(facts: Facts, line: LogLine, module: str, name: str) -> Hit | None:
    """`cannot import name 'get_vllm_engine' from 'swift.llm'`: the module defines the name
    only when the backend imports; the backend is not installed, or its import fails here.
    None where the name carries no backend's import name."""
    backend = backend_in_name(module, name)
    if backend is None:
        return None
    dist = BACKENDS[backend]
    top = module.split(".", maxsplit=1)[0]
    installed = facts.known_version(dist)
    check = manual(f"python -c 'import {backend}'  (its own error, if it is installed)")
    actions: list[Action]
    if installed is not None:
        state = (
            f"{dist} {installed} is installed, so its import fails in this environment (a "
            "torch or CUDA library it was not built for, a dependency of its own)"
        )
        summary = (
            f"Import {backend} by itself to see why it fails: python -c 'import {backend}'; fix "
            f"that error (the torch and packages {dist} {installed} requires: pip show {dist}), "
            f"or install the {dist} release {top} supports"
        )
        actions = [check, manual(f"pip show {dist}  (Requires: the torch it was built for)")]
    else:
        state = f"{dist} is not installed here, or its import fails"
        summary = (
            f"Install {dist} in this environment, the release {top} supports: pip install "
            f"{dist} (its extra, or the {dist} range in {top}'s requirements); if it is "
            f"installed, python -c 'import {backend}' shows why it does not import"
        )
        actions = [pip_install(dist), check]
    return Hit(
        f"{module} defines '{name}' only when {backend} imports (line {line.line}): {state}; "
        f"{top}'s own release is not the cause",
        evidence={
            "line": line.line,
            "name": name,
            "module": module,
            "backend": dist,
            "version": str(installed) if installed is not None else None,
        },
        fix=fix(summary, "manual", *actions),
    )

"""CUD195: a process forked after its parent initialised CUDA cannot use CUDA (torch's
`Cannot re-initialize CUDA in forked subprocess`); the fix by the layer that forked it: vLLM's
workers (VLLM_WORKER_MULTIPROC_METHOD), torch's DataLoader workers, any other pool."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Fix, Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual, set_env


@rule("CUD195", "cuda-initialised-before-fork", Severity.ERROR)
def cuda_initialised_before_fork(facts: Facts) -> Iterable[Hit]:
    """A process forked after CUDA was initialised in its parent cannot use CUDA

    ## What it checks
    Only a log says it: torch's own refusal in a child process, `RuntimeError: Cannot
    re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the
    'spawn' start method`, as vLLM's worker (`Exception in worker VllmWorkerProcess while
    processing method init_device: ...`), torch's DataLoader workers or any process pool
    prints it.

    ## Why it matters
    CUDA's driver state does not survive `fork()`: torch marks a child forked after its parent
    initialised CUDA as a bad fork and refuses every CUDA call there. Linux's default start
    method is `fork`, and so is vLLM's for its tensor-parallel workers
    (`VLLM_WORKER_MULTIPROC_METHOD`); any CUDA call in the parent before the workers start (a
    `torch.cuda.is_available()` or `device_count()` at import, a model moved to the GPU, a
    library that queries the GPU) is enough.

    ## Example
    A script that calls `torch.cuda.device_count()` and then builds `vllm.LLM(...,
    tensor_parallel_size=2)`: the forked workers fail at `init_device`.

    ## Fix
    Start the child processes with `spawn`: for vLLM, `export
    VLLM_WORKER_MULTIPROC_METHOD=spawn` (the script then needs an `if __name__ == "__main__":`
    guard); for a DataLoader, `DataLoader(..., multiprocessing_context="spawn")` or tensors
    moved to the GPU in the training loop rather than in the Dataset; otherwise
    `torch.multiprocessing.set_start_method("spawn", force=True)` inside `if __name__ ==
    "__main__":` before any process starts. Or keep every CUDA call out of the parent until
    the children are started.

    ## References
    - pytorch/pytorch torch/cuda/__init__.py (_lazy_init: `if _is_in_bad_fork(): raise
      RuntimeError("Cannot re-initialize CUDA in forked subprocess. " + msg)`, msg 'To use
      CUDA with multiprocessing, you must use the 'spawn' start method')
    - vllm-project/vllm vllm/envs.py (`VLLM_WORKER_MULTIPROC_METHOD`, default "fork") and
      docs/design/multiprocessing.md
    - https://github.com/vllm-project/vllm/issues/7151 (VLLM_WORKER_MULTIPROC_METHOD=spawn:
      'This works for me')
    - https://pytorch.org/docs/stable/notes/multiprocessing.html (CUDA in multiprocessing:
      only the spawn or forkserver start methods)
    """
    raise Skip("only a log line states CUDA used in a forked child", "log.cuda")


def _layer(stated: str) -> str:
    """The layer that forked the child, from the text the log names it by."""
    low = stated.lower()
    if "vllm" in low or "enginecore" in low:
        return "vllm"
    if "dataloader" in low or "worker_loop" in low or "utils/data" in low:
        return "dataloader"
    return ""


def _vllm_fix() -> Fix:
    return fix(
        "Start vLLM's workers with spawn: export VLLM_WORKER_MULTIPROC_METHOD=spawn (the "
        "script needs an if __name__ == '__main__': guard), or keep CUDA calls out of the "
        "parent process before the engine starts",
        "manual",
        set_env(VLLM_WORKER_MULTIPROC_METHOD="spawn"),
        manual("if __name__ == '__main__':   # around the code that builds vllm.LLM(...)"),
    )


def _dataloader_fix() -> Fix:
    return fix(
        "Start the DataLoader's workers with spawn, or keep CUDA out of the Dataset (move "
        "each batch to the GPU in the training loop)",
        "manual",
        manual("DataLoader(dataset, num_workers=N, multiprocessing_context='spawn')"),
        manual("num_workers=0   # or: no workers; no CUDA calls in __getitem__"),
    )


def _spawn_fix() -> Fix:
    return fix(
        "Start the child processes with the spawn start method, before any process starts, "
        "or keep every CUDA call out of the parent until the children are started",
        "manual",
        manual(
            "if __name__ == '__main__': torch.multiprocessing.set_start_method('spawn', force=True)"
        ),
        manual("VLLM_WORKER_MULTIPROC_METHOD=spawn   # where vLLM starts the workers"),
    )


@from_log("CUD195")
def cuda_initialised_before_fork_in_log(facts: Facts, line: LogLine) -> Hit:
    """torch's refusal in a forked child; the fix by the layer the log names around it."""
    layer = _layer(line.stated.get("fork_layer", "") or line.text)
    made = {"vllm": _vllm_fix, "dataloader": _dataloader_fix}.get(layer, _spawn_fix)
    who = {"vllm": "vLLM's worker", "dataloader": "a DataLoader worker"}.get(layer, "a process")
    return Hit(
        f"{who} forked after CUDA was initialised in its parent could not use CUDA (line "
        f"{line.line}): a forked child cannot re-initialise CUDA",
        evidence={"line": line.line, "layer": layer or None},
        fix=made(),
    )

"""PY170: a script starts processes at module level where the children re-import it (spawn,
forkserver): multiprocessing's `An attempt has been made to start a new process before the
current process has finished its bootstrapping phase`; the fix names the script and line the
child's traceback states, and the layer that started the processes."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# the layer that started the processes, by the path of its frame -> (who, the call to guard)
_LAYERS: tuple[tuple[str, str, str], ...] = (
    (
        "torch/multiprocessing/spawn.py",
        "started by torch.multiprocessing.spawn",
        "the mp.spawn(...) call",
    ),
    (
        "torch/utils/data/dataloader.py",
        "started for a DataLoader's workers",
        "the training loop that iterates the DataLoader (or num_workers=0)",
    ),
    ("/vllm/", "started for vLLM's workers", "the code that builds vllm.LLM(...)"),
    ("concurrent/futures/process.py", "started by a ProcessPoolExecutor", "the executor's use"),
    ("multiprocessing/pool.py", "started by a multiprocessing Pool", "the Pool's use"),
)


@rule("PY170", "main-module-not-guarded", Severity.ERROR)
def main_module_not_guarded(facts: Facts) -> Iterable[Hit]:
    """A script starts processes at import, where its children import it again

    ## What it checks
    Only a log says it: Python's multiprocessing refusing to start a process from a child that
    is still importing the main module (`RuntimeError: An attempt has been made to start a new
    process before the current process has finished its bootstrapping phase`), with the child's
    traceback naming the script, the line that starts processes, and the layer that started them
    (torch.multiprocessing.spawn, a DataLoader's workers, vLLM's workers, a process pool).

    ## Why it matters
    The spawn and forkserver start methods start each child by importing the parent's main
    module again. spawn is the default on Windows and macOS, forkserver on Linux from Python
    3.14, and spawn is what `torch.multiprocessing.spawn`, vLLM's workers once CUDA is
    initialised, and a DataLoader with `multiprocessing_context="spawn"` use. A script that
    starts processes at module level would start them again in every child; multiprocessing
    stops the child instead, and the job dies before training starts (or, under a launcher,
    looks like a worker that exited with code 1).

    ## Example
    A training script that calls `torch.multiprocessing.spawn(train, nprocs=8)` at its top
    level: each spawned worker re-runs the script and fails with the bootstrapping error.

    ## Fix
    Move the code that starts processes (and everything that should run once) under
    `if __name__ == "__main__":` in the script the traceback names; keep functions, classes and
    imports at module level so the children can still import them.

    ## References
    - python/cpython Lib/multiprocessing/spawn.py (`_check_not_importing_main`) and the
      multiprocessing docs, "Safe importing of main module"
    - https://docs.vllm.ai/en/latest/design/multiprocessing/ (spawn and forkserver re-import
      the main module; forkserver the Linux default from Python 3.14)
    """
    raise Skip("only a log line states a child that re-imported an unguarded script", "log.python")


@from_log("PY170")
def main_module_not_guarded_in_log(facts: Facts, line: LogLine) -> Hit:
    """The script and line the child's traceback names, and the layer that started it."""
    script = line.stated.get("main_script")
    at = line.stated.get("main_line")
    path = line.stated.get("spawn_layer", "")
    how, call = next(
        ((w, c) for p, w, c in _LAYERS if p in path), ("started with spawn or forkserver", "")
    )
    at_line = f" (its line {at})" if script and at else ""
    guard = f"if __name__ == '__main__':   # in {script or 'the main script'}"
    what = f", {call}," if call else ""
    return Hit(
        f"a child process {how} re-imported {script or 'the main script'}, which starts "
        f"processes at module level{at_line}; multiprocessing refused (line {line.line}): the "
        "script lacks an if __name__ == '__main__': guard",
        evidence={"line": line.line, "script": script, "script_line": at},
        fix=fix(
            f"Put the code that starts processes{what} under if __name__ == '__main__': in "
            f"{script or 'the main script'}; keep functions, classes and imports at module level",
            "manual",
            manual(guard),
            manual(f"    ...   # {call or 'the code that starts processes'}, indented under it"),
        ),
    )

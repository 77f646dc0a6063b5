"""The memory family: host RAM and shared memory (matrices/signatures/memory.toml).

SYS190 is a job killed for host memory: the kernel's OOM killer, or the bare SIGKILL it leaves
behind (`Killed`, torchrun's `exitcode : -9`, a DataLoader worker `killed by signal: Killed`).
A full /dev/shm (a DataLoader worker's bus error, torch.multiprocessing's `unable to write to
file </torch_...>`) is SYS101's cause, worded here (`shm_hit`) for system.py's reading of the
line. GPU memory held by other processes is DRV104 (driver_errors.py), Ray's memory monitor
RAY106/RAY107 (ray.py)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.gpu_oom_size import oversize, requested, split_fix

GIB = 1024**3
# available host memory below this share of the total before a job starts (SYS190 on a node)
_LOW_SHARE = 0.05

# the signatures whose line is a full /dev/shm seen by torch's DataLoader / multiprocessing
SHM_SIGNATURES = frozenset(
    {"dataloader-shm-bus-error", "torch-shm-no-space", "dataloader-worker-exited", "bare-bus-error"}
)
# the signatures that name the kernel's OOM killer itself (the others infer it from a SIGKILL):
# its kill line, and the other lines of its report (memory_runtimes.toml)
_OOM_KILLERS = frozenset({"kernel-oom-killer", "kernel-oom-report-lines"})

_CHECK = "dmesg -T | grep -i -E 'killed process|out of memory' (kubectl describe pod: OOMKilled)"
_STEPS = (
    "lower the host memory the job needs: fewer DataLoader workers (num_workers=2, or "
    "num_workers=0), a smaller batch size, datasets memory-mapped or streamed instead of loaded",
    "give the job more memory: raise the container's limit (docker run --memory=<size>, "
    "Kubernetes resources.limits.memory, Slurm --mem=<size>) or add swap",
)
# WSL 2 gives its VM half of the host's RAM unless %UserProfile%\.wslconfig says otherwise
# (https://learn.microsoft.com/en-us/windows/wsl/wsl-config#main-wsl-settings: memory, swap)
_WSL_STEP = (
    "WSL 2: the Linux VM gets half of the host's RAM by default: raise memory= (and swap=) "
    "under [wsl2] in %UserProfile%\\.wslconfig, then wsl --shutdown"
)


def _memory(facts: Facts) -> tuple[int, int | None, bool]:
    """(total, available, capped by a cgroup limit) host memory as a job sees it."""
    system = facts.system()
    total = system.memory_total_bytes
    if total is None:
        raise Skip("memory size unknown", "system.memory")
    limit = system.cgroup.memory_limit_bytes if system.cgroup else None
    available = system.memory_available_bytes
    capped = limit is not None and limit < total
    if capped and limit is not None:
        total = limit
        available = min(available, limit) if available is not None else None
    return total, available, capped


@rule("SYS190", "host-memory-exhausted", Severity.WARNING)
def host_memory_exhausted(facts: Facts) -> Iterable[Hit]:
    """The job was killed for host memory (the kernel's OOM killer, a bare SIGKILL)

    ## What it checks
    On a node: the host memory still available (the container's cgroup limit caps the host's)
    below 5% of the total before the job starts. In `triage`, the kernel's own lines (`Out of
    memory: Killed process N`, `invoked oom-killer`, `Memory cgroup out of memory`, Kubernetes'
    `OOMKilled`) and the SIGKILL they leave in a job's log: a bare `Killed`, torchrun's
    `Signal 9 (SIGKILL) received by PID` / `exitcode : -9`, `died with <Signals.SIGKILL: 9>`,
    a DataLoader worker `killed by signal: Killed`, exit code 137.

    ## Why it matters
    A process killed for host RAM gets no Python traceback: it ends with `Killed` or exit code
    -9/137, and the other ranks then fail with NCCL timeouts or "remote process exited". It is
    not CUDA's out of memory (that is an exception about the GPU). Common causes: many
    DataLoader workers each copying the dataset, loading a checkpoint to CPU on every rank, a
    container memory limit below what the job needs.

    ## Example
    `torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 1234 closing
    signal SIGTERM` ... `exitcode : -9`, and `dmesg` shows `Out of memory: Killed process 1234
    (python)`.

    ## Fix
    Confirm with `dmesg -T | grep -i 'killed process'`; lower the job's host memory (fewer
    DataLoader workers, `num_workers=0`, a smaller batch, memory-mapped data) or give it more
    (docker `--memory`, Kubernetes `resources.limits.memory`, Slurm `--mem`, swap).

    ## References
    - https://github.com/torvalds/linux/blob/master/mm/oom_kill.c
    - https://pytorch.org/docs/stable/elastic/errors.html
    - https://kubernetes.io/docs/tasks/configure-pod-container/assign-memory-resource/
    """
    total, available, capped = _memory(facts)
    if available is None:
        raise Skip("available memory unknown", "system.memory")
    if available >= _LOW_SHARE * total:
        return []
    where = "the container's memory limit" if capped else "the node's memory"
    return [
        Hit(
            f"only {available / GIB:.1f} GiB of {where} ({total / GIB:.1f} GiB) is available: a "
            "job started now is likely to be killed by the kernel's OOM killer",
            evidence={"memory_total_bytes": total, "memory_available_bytes": available},
            fix=fix(
                "Free host memory (stale jobs, leftover DataLoader workers) or raise the limit",
                "manual",
                manual("ps aux --sort=-rss | head (stop what a finished job left behind)"),
                manual(_STEPS[1]),
            ),
        )
    ]


def _limit_note(facts: Facts) -> str:
    with contextlib.suppress(Skip):
        total, _, capped = _memory(facts)
        if capped:
            return f"; the container's memory limit is {total / GIB:.1f} GiB"
        return f"; the node has {total / GIB:.1f} GiB"
    return ""


@from_log("SYS190")
def host_memory_exhausted_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The kernel's OOM-killer line names the cause; a bare SIGKILL (`Killed`, `exitcode : -9`)
    is worded as the OOM killer's most likely trace, with the command that confirms it."""
    from envcheck.rules.node.driver_upgrade import wsl_kernel
    from envcheck.rules.signals import routes_elsewhere

    if routes_elsewhere(line.signature, line.stated, "SYS190"):
        return None  # a signal line that states another signal than SIGKILL
    compiler = line.stated.get("killed_compiler")
    if line.signature == "compile-step-killed-bare" and compiler:
        raise NotStated(
            f"line {line.line} is the shell's 'Killed' right below a {compiler} compile command: "
            "the compiler's, out of memory with the build's parallel jobs (SYS160)"
        )
    pid = re.search(
        r"(?:Killed process |received by PID |[Kk]ill process |\(pid: ?)([0-9]+)", line.text
    )
    who = f"process {pid.group(1)}" if pid else "a process"
    killer = line.signature in _OOM_KILLERS
    what = (
        f"the kernel's OOM killer killed {who} (line {line.line}): host RAM or the container's "
        "memory limit ran out (not the GPU's memory)"
        if killer
        else f"{who} was killed with SIGKILL (line {line.line}) and left no traceback: almost "
        "always the kernel's OOM killer, host RAM or the container's memory limit exhausted "
        "(not the GPU's memory)"
    )
    scheduler = _SCHEDULER_LIMIT.get(line.signature) or _LAYER_LIMIT.get(line.signature)
    build = scheduler is None and bool(
        line.stated.get("build_killed") or line.stated.get("build_tool")
    )
    if scheduler is not None:  # the layer's own limit: what it offers is the first fix
        what = scheduler[0].format(line=line.line)
        summary = scheduler[1]
        first: tuple[Action, ...] = (manual(scheduler[2]),)
        killer = line.signature not in _LAYER_UNSURE
        condor = _CONDOR_LIMIT.search(line.text)
        if condor is not None:  # HTCondor states the limit and what the job used: ask above it
            # half again above the larger of the request and the last usage: the usage the
            # starter measured is a sample, the peak that hit the limit was higher
            used = int(condor.group("used") or condor.group("limit"))
            wanted = max(used, int(condor.group("limit"))) * 3 // 2
            what += f": its request_memory was {condor.group('limit')} MB" + (
                f", the job used {condor.group('used')} MB" if condor.group("used") else ""
            )
            summary = (
                f"Request more memory than the job uses: request_memory = {wanted} in the "
                "submit file (or lower the job's host memory)"
            )
            first = (
                manual(
                    f"request_memory = {wanted}  (submit file; a held job: condor_qedit <job> "
                    f"RequestMemory {wanted} and condor_release <job>)"
                ),
            )
    elif build:
        # the log is a build's (ninja's step killed with 137, make's error after a killed
        # compiler): the compile jobs ran out of memory, not a training job
        what = (
            f"{who} was killed with SIGKILL (line {line.line}) during a build whose compile "
            "step the log also shows killed: the parallel compile jobs ran host RAM or the "
            "container's memory limit out"
        )
        summary = (
            "Rebuild with fewer parallel jobs (cmake --build build -j 2, ninja -j 2, make -j2; "
            "a pip build of a torch extension: MAX_JOBS=2) or give the build more memory"
        )
        first = (manual("cmake --build build -j 2  (ninja -j 2, make -j2, or MAX_JOBS=2 for pip)"),)
    else:
        summary = (
            "Lower the job's host memory (fewer DataLoader workers: num_workers=0 to confirm, a "
            "smaller batch) or give it more memory (docker run --memory, --mem, swap)"
        )
        first = () if killer else (manual(_CHECK),)
    # a build's compile jobs: the training job's steps (DataLoader workers, batch) do not apply
    steps = () if build else tuple(manual(s) for s in _STEPS)
    if scheduler is None and wsl_kernel(facts):
        # the VM's own limit is what ran out: its setting is the first fix
        summary = (
            "Give WSL 2 more memory (memory= and swap= under [wsl2] in .wslconfig, then wsl "
            "--shutdown) or lower the job's host memory (fewer DataLoader workers, a smaller batch)"
        )
        steps = (manual(_WSL_STEP), *steps)
    else:
        steps = (*steps, manual(_WSL_STEP))
    return Hit(
        what + _limit_note(facts),
        evidence={"line": line.line, "pid": pid.group(1) if pid else None},
        fix=fix(summary, "manual", *first, *steps),
        severity=Severity.ERROR if killer else Severity.WARNING,
    )


# HTCondor's starter states the job's memory request and its last usage (megabytes)
_CONDOR_LIMIT = lazy(
    r"Job has gone over (?:cgroup )?memory limit of (?P<limit>[0-9]+) megabytes"
    r"(?:\. (?:Last measured usage|Peak usage): (?P<used>[0-9]+) megabytes)?"
)


# lines of a scheduler that killed the job at its own memory limit: what they mean, the fix's
# summary and its first step (Slurm: sbatch(1)'s --mem, --mem=0 for all of a node's memory,
# --exclusive for a node no other job shares)
_SCHEDULER_LIMIT = {
    "slurm-oom-kill": (
        "Slurm's cgroup memory limit for the job step was reached and the OOM killer killed its "
        "processes (line {line}): the job needs more host memory than it asked for",
        "Ask Slurm for more memory (#SBATCH --mem=<size>, --mem-per-gpu or --mem-per-cpu; "
        "--mem=0 takes the whole node's; --exclusive keeps other jobs off the node) or lower "
        "the job's host memory (fewer DataLoader workers, a smaller batch)",
        "#SBATCH --mem=<more>  (or srun --mem / --mem-per-gpu; sacct -j <jobid> -o "
        "JobID,MaxRSS,ReqMem shows what it used)",
    ),
    "kubelet-memory-eviction": (
        "the kubelet evicted the pod because the node ran low on memory (line {line}): the pod "
        "used more host memory than it requested",
        "Request the memory the pod uses (resources.requests.memory and "
        "resources.limits.memory) or lower the job's host memory (fewer DataLoader workers, a "
        "smaller batch)",
        "kubectl: set resources.requests.memory = resources.limits.memory = what the job needs "
        "(kubectl describe pod shows the eviction)",
    ),
}


# lines of the layer above the process (a notebook platform, an IDE, a data framework, a model
# runtime) that report host memory exhausted in its own words (memory_layers.toml): what they
# mean, the fix's summary and its first step
_LAYER_LIMIT = {
    "notebook-platform-ram-exhausted": (
        "the hosted notebook's kernel used all the RAM of its runtime and the platform restarted "
        "it (line {line}): host memory, not the GPU's",
        "Lower the notebook's host memory (load the model with low_cpu_mem_usage=True or "
        "device_map='auto', a smaller batch size, DataLoader num_workers=0, data streamed or "
        "memory-mapped instead of loaded, del + gc.collect() between steps) or use a runtime "
        "with more RAM (Colab: a High-RAM runtime)",
        "lower host memory: from_pretrained(..., low_cpu_mem_usage=True, device_map='auto', "
        "torch_dtype=torch.float16); a smaller batch size; num_workers=0",
    ),
    "notebook-kernel-crashed": (
        "the notebook's kernel died without a Python error (line {line}): most often it was "
        "killed for host memory (the OOM killer, a container's limit); a native crash is the "
        "other cause",
        "Check the kernel's memory (dmesg -T | grep -i 'killed process'; the Jupyter log); "
        "lower it (a smaller batch size, num_workers=0, data streamed or memory-mapped, "
        "low_cpu_mem_usage=True) or run where there is more RAM; run the cell as a script to "
        "see a native crash's own message",
        _CHECK,
    ),
    "dask-worker-memory-budget": (
        "Dask's nanny restarted a worker that passed its memory limit (line {line}): its tasks "
        "need more host memory than the worker was given",
        "Give each worker more memory (LocalCluster(n_workers=<fewer>, memory_limit='<more>') or "
        "dask worker --memory-limit) or use smaller partitions (repartition, smaller chunks)",
        "Client(LocalCluster(n_workers=<fewer>, memory_limit='<more>GB')); smaller partitions",
    ),
    "yarn-container-memory-limit": (
        "YARN killed the container for exceeding its physical memory limit (line {line}): the "
        "executor and its Python workers need more than executor memory plus its overhead",
        "Raise the executor's memory overhead (--conf spark.executor.memoryOverhead=<size>, "
        "older: spark.yarn.executor.memoryOverhead) or executor memory, or use more, smaller "
        "partitions",
        "spark-submit --conf spark.executor.memoryOverhead=<size> --executor-memory <size>",
    ),
    "kubelet-memory-pressure": (
        "Kubernetes found the node under memory pressure (line {line}): the kubelet evicts the "
        "pods that use more memory than they requested",
        "Request the memory the pod uses (resources.requests.memory and "
        "resources.limits.memory) or lower the job's host memory (fewer DataLoader workers, a "
        "smaller batch)",
        "kubectl: set resources.requests.memory = resources.limits.memory = what the job needs "
        "(kubectl describe pod shows the eviction)",
    ),
    "arrow-memory-error": (
        "Arrow could not allocate host memory for a buffer (line {line}): the table or batch "
        "does not fit the RAM left",
        "Process the data in smaller pieces (datasets: map(..., batch_size=<smaller>, "
        "writer_batch_size=<smaller>), streaming=True; pyarrow: read in batches) or give the "
        "job more memory",
        "datasets: load_dataset(..., streaming=True) or map(..., batch_size=<smaller>, "
        "writer_batch_size=<smaller>)",
    ),
    "ollama-system-memory-check": (
        "ollama refused to load the model (line {line}): it needs more host memory than is "
        "available now (the layers the GPU cannot hold stay in RAM; other programs and loaded "
        "models count)",
        "Use a smaller or more quantized model (ollama pull <model>:<size>-q4_K_M), a smaller "
        "context (num_ctx), unload other models (ollama ps; ollama stop <model>) and close other "
        "programs, or add swap",
        "ollama ps; ollama stop <loaded model>; ollama run <smaller or q4 model>",
    ),
    "hpc-scheduler-memory-limit": (
        "the batch scheduler killed the job for exceeding the memory it requested (line {line})",
        "Request more memory for the job (PBS: #PBS -l mem=<size>; LSF: bsub -M <size> -R "
        "'rusage[mem=<size>]'; HTCondor: request_memory = <size> in the submit file) or lower "
        "the job's host memory (fewer DataLoader workers, a smaller batch)",
        "#PBS -l mem=<more>  (LSF: bsub -M <more> -R 'rusage[mem=<more>]'; HTCondor: "
        "request_memory = <more>, condor_qedit <job> RequestMemory <MB> and condor_release)",
    ),
    "enomem-in-words": (
        "a system call failed with ENOMEM, 'Cannot allocate memory' (line {line}): the node or "
        "the container's memory limit is exhausted",
        "Lower the job's host memory (fewer DataLoader workers: num_workers=0 to confirm, a "
        "smaller batch) or give it more memory (docker run --memory, --mem, swap); a fork of a "
        "large process under vm.overcommit_memory=2 fails the same way",
        _CHECK,
    ),
}
# a host allocation that failed (memory.toml's host-allocation-failed): no SIGKILL, the process
# got ENOMEM, MemoryError or std::bad_alloc; fork() of a large process (DataLoader workers) fails
# so under strict overcommit while RAM is free (Linux Documentation/mm/overcommit-accounting.rst:
# mode 2 refuses commits past swap + overcommit_ratio% of RAM)
_LAYER_LIMIT["host-allocation-failed"] = (
    "a host (CPU) memory allocation failed (line {line}): ENOMEM, MemoryError or "
    "std::bad_alloc; the node or the container's memory limit is exhausted, or the kernel "
    "refused to commit more (a fork of a large process under vm.overcommit_memory=2)",
    "Lower the job's host memory (fewer DataLoader workers: num_workers=0 to confirm, a smaller "
    "batch, data memory-mapped or streamed) or give it more memory (docker run --memory, Slurm "
    "--mem, swap); where fork() fails while RAM is free: sysctl -w vm.overcommit_memory=1",
    "free -g; cat /proc/sys/vm/overcommit_memory (2: strict accounting, a fork of a large "
    "process fails while RAM is free; sysctl -w vm.overcommit_memory=1, or 0)",
)
# the same failures in other layers' words (memory_runtimes.toml): an IDE's kernel, Slurm's
# accounting, an allocator's ENOMEM
_LAYER_LIMIT["ide-kernel-died"] = _LAYER_LIMIT["notebook-kernel-crashed"]
_SCHEDULER_LIMIT["slurm-memory-limit-exceeded"] = _SCHEDULER_LIMIT["slurm-oom-kill"]
_LAYER_LIMIT["host-allocation-errno-enomem"] = (
    "host memory ran short in an allocator's own words (line {line}): torch's CPU allocator got "
    "ENOMEM (12), or TensorFlow warned that single allocations exceed 10% of the free memory, "
    "the warning before the OOM killer's SIGKILL",
    "Lower the job's host memory (a smaller batch, fewer DataLoader workers: num_workers=0 to "
    "confirm, data streamed or memory-mapped instead of loaded) or give it more memory (docker "
    "run --memory, Slurm --mem, swap)",
    "lower host memory: a smaller batch size; num_workers=0; datasets streamed or memory-mapped",
)
_LAYER_LIMIT["userspace-oom-killer"] = (
    "a user-space OOM killer (systemd-oomd, earlyoom) killed the job under memory pressure "
    "(line {line}): host RAM and swap ran short before the kernel's own OOM killer acted",
    "Lower the job's host memory (fewer DataLoader workers, a smaller batch, data streamed) or "
    "give the node more RAM or swap; systemd-oomd acts on pressure in the user's slice: run "
    "long jobs outside the desktop session (systemd-run --scope -p ManagedOOMMemoryPressure=auto)",
    "journalctl -u systemd-oomd (or journalctl | grep -i earlyoom) shows what it killed and why",
)
_LAYER_LIMIT["vllm-engine-core-died"] = (
    "vLLM's engine-core process died without a Python error (line {line}): most often the "
    "kernel's OOM killer at host RAM or the container's limit; a native crash is the other "
    "cause (its message is above, in the engine's own log)",
    "Check the kernel's log for the OOM killer (dmesg -T | grep -i 'killed process'); lower "
    "vLLM's host memory (--swap-space 0, --cpu-offload-gb 0, fewer API server processes) or "
    "give the container more (docker run --memory / --shm-size, Kubernetes limits.memory)",
    _CHECK,
)
# the same failures without the exception's prefix, and container platforms' own limits
# (memory_runtimes.toml)
_LAYER_LIMIT["numpy-array-allocation-failed"] = (
    "NumPy could not allocate host memory for an array (line {line}): at its shape and data "
    "type it does not fit the RAM or the container's memory limit left",
    "Make the array fit: a smaller data type (float32 is half of float64: "
    "np.zeros(shape, dtype=np.float32), arr.astype(np.float32)), the data in chunks or "
    "memory-mapped (np.memmap, np.load(..., mmap_mode='r')), or give the job more memory "
    "(docker run --memory, Slurm --mem, swap)",
    "a smaller dtype (dtype=np.float32) or chunks / np.memmap; free -g shows the RAM left",
)
_LAYER_LIMIT["container-platform-memory-limit"] = (
    "the container platform stopped the container at its memory limit (line {line}): the job "
    "needs more host memory than the container was given",
    "Give the container more memory (Amazon ECS: the task definition's memory / the "
    "container's memory hard limit; Cloud Run: gcloud run deploy --memory <more>; Heroku: a "
    "larger dyno) or lower the job's host memory (fewer DataLoader workers, a smaller batch, "
    "data streamed instead of loaded)",
    "raise the container's memory limit (ECS task definition memory, gcloud run deploy "
    "--memory <size>, a larger dyno)",
)
# the operating system's or a host allocator's own words (memory_runtimes.toml)
_LAYER_LIMIT["host-memory-exhausted-os-words"] = (
    "the host ran out of memory (line {line}): the job, with the other programs on the "
    "machine, needs more RAM (and swap / paging file) than the machine has",
    "Lower the job's host memory (fewer DataLoader workers, a smaller batch, data streamed "
    "instead of loaded) or give it more: close other programs; Windows: let the paging file "
    "grow (System > Advanced > Performance > Virtual memory: system managed size)",
    "free -g / Task Manager / Activity Monitor: what holds the RAM; a smaller batch or fewer "
    "workers",
)
# Amazon SageMaker's failure reason (memory_runtimes.toml's sagemaker-instance-memory)
_LAYER_LIMIT["sagemaker-instance-memory"] = (
    "SageMaker stopped the job at the instance's host memory (line {line}): what one instance "
    "loads (the data, the batch, the model in RAM) does not fit its instance type",
    "Use an instance type with more memory (the estimator's or processor's instance_type: "
    "an ml.r5 / ml.m5 size up) or lower what one instance holds (a smaller batch_size, the "
    "data in chunks or spread over more instances: instance_count)",
    "a larger instance_type, or a smaller batch_size / data per instance",
)
# layer lines that leave room for another cause (a native crash, a warning of a job that ended
# well): a warning, not an error
_LAYER_UNSURE = frozenset(
    {
        "notebook-kernel-crashed",
        "enomem-in-words",
        "ide-kernel-died",
        "slurm-memory-limit-exceeded",
        "host-allocation-errno-enomem",
        "vllm-engine-core-died",
    }
)


def shm_hit(facts: Facts, line: LogLine, step: Action) -> Hit | None:
    """SYS101 worded for torch's DataLoader / multiprocessing lines: a full /dev/shm, the
    container's size flag first (what the threads establish), fewer workers as the fallback.
    None for torch's 'Too many open files' (the descriptor limit: ulimit -n, not /dev/shm)."""
    shm = None
    with contextlib.suppress(Skip):
        disk = facts.storage().by_role("dev_shm")
        shm = disk.total_bytes if disk is not None else None
    known = f" (/dev/shm is {shm / 1024**2:.0f} MiB)" if shm else ""
    text = line.text.lower()
    if "too many open files" in text:  # the file-descriptor limit, not a full /dev/shm
        return None
    if line.signature == "bare-bus-error":
        what = "a process died of a bus error (SIGBUS) with no message of its own"
        full = "in a container most often /dev/shm is full"
    elif "exited unexpectedly" in text:
        what = "DataLoader workers died without an error of their own"
        full = "most often /dev/shm is full"
    elif "bus error" in text or "shared memory (shm)" in text:
        what = "a DataLoader worker crashed with a bus error writing a batch into shared memory"
        full = "/dev/shm is full"
    else:
        what = "torch.multiprocessing could not write a tensor into shared memory"
        full = "/dev/shm is full"
    return Hit(
        f"{what} (line {line.line}): {full}{known}; a container's /dev/shm is 64 MiB "
        "(Docker's default) unless started with --shm-size or --ipc=host",
        evidence={"line": line.line, "dev_shm_bytes": shm},
        fix=fix(
            "Give the container a larger /dev/shm (docker run --shm-size=16g or --ipc=host); "
            "or lower DataLoader num_workers (num_workers=0 uses no shared memory)",
            "manual",
            step,
            manual(
                "without root on the container: DataLoader(..., num_workers=0), or fewer "
                "workers and a smaller batch"
            ),
        ),
        severity=Severity.ERROR,
    )


# GPU memory in use with no process listed: at least this much (MiB) or this share of the GPU
_HELD_MIB = 1024
_HELD_SHARE = 0.1


@rule("SYS191", "gpu-memory-without-process", Severity.WARNING)
def gpu_memory_without_process(facts: Facts) -> Iterable[Hit]:
    """GPU memory is in use but no process is listed on the GPU (an orphaned holder)

    ## What it checks
    Each GPU whose used memory is at least 1 GiB or 10% of its total while nvidia-smi / NVML
    lists no process on it ("No running processes found").

    ## Why it matters
    Memory that no listed process holds belongs to a process nvidia-smi cannot name: a killed
    job's orphaned or zombie workers (DataLoader or multiprocessing children still holding
    the CUDA context), or a process in another PID namespace (another container). The next job
    fails with CUDA out of memory on a GPU that looks idle. (Listed processes are DRV104's.)

    ## Example
    `nvidia-smi`: `10151MiB / 81920MiB`, 100% utilisation, and `No running processes found`
    after the training script was stopped with Ctrl-C.

    ## Fix
    Find the holders with `fuser -v /dev/nvidia*` (or `lsof /dev/nvidia*`) on the host and kill
    them (`kill -9 <pid>`, `pkill -f <script>`); if none is left, `nvidia-smi --gpu-reset -i
    <index>` with the GPU idle, or reboot.

    ## References
    - https://github.com/PaddlePaddle/PaddleOCR/issues/2074
    - https://github.com/qizhou000/VisEdit/issues/5
    - https://docs.nvidia.com/deploy/nvidia-smi/index.html
    """
    held = []
    for gpu in facts.gpus():
        used, total = gpu.memory_used_mib, gpu.memory_total_mib
        if gpu.process_count != 0 or used is None:
            continue
        if used >= _HELD_MIB or (total and used >= _HELD_SHARE * total):
            held.append(gpu)
    return [
        Hit(
            f"GPU {gpu.index} has {gpu.memory_used_mib} MiB in use"
            + (f" of {gpu.memory_total_mib} MiB" if gpu.memory_total_mib else "")
            + " but no process is listed on it: an orphaned or zombie process (a killed job's "
            "workers) or a process in another container holds it",
            evidence={"gpu": gpu.index, "memory_used_mib": gpu.memory_used_mib},
            fix=fix(
                "Find and kill the processes holding /dev/nvidia* (on the host), then check "
                "that the memory is free",
                "manual",
                manual("sudo fuser -v /dev/nvidia* (or lsof /dev/nvidia*); kill -9 <pid>"),
                manual(
                    "pkill -f <training script> (its leftover DataLoader/multiprocessing workers)"
                ),
                manual(
                    f"nothing left holding it: nvidia-smi --gpu-reset -i {gpu.index} (GPU idle), "
                    "or reboot"
                ),
            ),
        )
        for gpu in held
    ]


# torch's out-of-memory message: the GPU's total and free memory and what this process holds.
# Since torch 2.1: 'GPU 0 has a total capacity of 79.15 GiB of which 1.06 GiB is free. ...
# Including non-PyTorch memory, this process has 16.88 GiB memory in use.'; before:
# '(GPU 0; 7.79 GiB total capacity; 6.50 GiB already allocated; 19.75 MiB free; 6.60 GiB reserved
# in total by PyTorch)' (reserved: PyTorch's cache only, not the CUDA context).
_SIZE = r"([0-9.]+) ?(bytes|KiB|MiB|GiB|TiB)"
_UNITS = {"bytes": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}
_NEW_OOM = lazy(
    r"GPU (?P<gpu>[0-9]+) has a total capacity of " + _SIZE + " of which " + _SIZE + r" is free"
    r".*?this process has " + _SIZE + " memory in use"
)
_OLD_OOM = lazy(
    r"\(GPU (?P<gpu>[0-9]+); "
    + _SIZE
    + r" total capacity; .*?"
    + _SIZE
    + r" free; "
    + _SIZE
    + r" reserved in total by PyTorch\)"
)
# what the CUDA context and libraries of the process itself may take beyond PyTorch's cache
_CONTEXT_BYTES = 1.5 * GIB


def _bytes(value: str, unit: str) -> float:
    return float(value) * _UNITS[unit]


@dataclass(frozen=True)
class OomShare:
    """GPU memory as torch's out-of-memory message states it (bytes)."""

    gpu: int
    total: float
    free: float
    own: float  # this process (new format: all its memory; old: PyTorch's reserved cache)
    others: float  # held by other processes: total - free - own (- the context, old format)


def oom_share(text: str) -> OomShare | None:
    """What other processes held when torch ran out of GPU memory, from the numbers its message
    states (the processes themselves are named only when torch can see them: not across
    containers); None when the line states no numbers."""
    new = _NEW_OOM.search(text)
    if new is not None:
        g = new.groups()
        total, free, own = _bytes(g[1], g[2]), _bytes(g[3], g[4]), _bytes(g[5], g[6])
        others = total - free - own
    else:
        old = _OLD_OOM.search(text)
        if old is None:
            return None
        g = old.groups()
        total, free, own = _bytes(g[1], g[2]), _bytes(g[3], g[4]), _bytes(g[5], g[6])
        others = total - free - own - _CONTEXT_BYTES
    return OomShare(int(g[0]), total, free, own, max(others, 0.0))


# torch names each process NVML lists on the GPU: 'this process' where NVML's pid is its own
# getpid(), else 'Process N' (c10/cuda/CUDACachingAllocator.cpp, reportProcessMemoryInfo). In a
# container NVML reports host pids, so the process itself is then one of the 'Process N' entries.
_LISTED = lazy(r"Process (?P<pid>[0-9]+) has " + _SIZE + " memory in use")
_TORCH_OWN = lazy(
    r"Of the allocated memory "
    + _SIZE
    + r" is allocated by PyTorch,.*?and "
    + _SIZE
    + r" is reserved by PyTorch but unallocated"
)
_TOTAL_FREE = lazy(
    r"GPU (?P<gpu>[0-9]+) has a total capacity of " + _SIZE + " of which " + _SIZE + r" is free"
)


@dataclass(frozen=True)
class Listed:
    """The processes torch's out-of-memory message lists on the GPU (pid -> bytes), and which
    of them is the failing process itself seen under another pid namespace (a container)."""

    processes: tuple[tuple[str, float], ...]
    itself: str | None  # pid of the entry that is this process, when the numbers say so
    total: float | None
    free: float | None

    @property
    def others(self) -> tuple[tuple[str, float], ...]:
        return tuple((pid, held) for pid, held in self.processes if pid != self.itself)


def listed_processes(text: str) -> Listed:
    """The 'Process N has X memory in use' entries of torch's message. Where the message has
    no 'this process' entry (NVML's pids are the host's), the one entry holding at least what
    PyTorch itself allocated and kept reserved is this process: it alone can hold that much
    while the allocator states it as its own."""
    processes = tuple(
        (m.group("pid"), _bytes(m.group(2), m.group(3))) for m in _LISTED.finditer(text)
    )
    sizes = _TOTAL_FREE.search(text)
    total = _bytes(sizes.group(2), sizes.group(3)) if sizes else None
    free = _bytes(sizes.group(4), sizes.group(5)) if sizes else None
    itself = None
    own = _TORCH_OWN.search(text)
    if own is not None and "this process has" not in text:
        reserved = _bytes(own.group(1), own.group(2)) + _bytes(own.group(3), own.group(4))
        holding = [pid for pid, held in processes if held >= reserved]
        if len(holding) == 1:
            itself = holding[0]
    return Listed(processes, itself, total, free)


def held_by_others(share: OomShare) -> bool:
    """Other processes held a real part of the GPU: at least 1 GiB and 10% of it."""
    return share.others >= GIB and share.others >= 0.1 * share.total


def held_fix(gpu: int, pids: Iterable[str] = ()) -> tuple[Action, ...]:
    """The steps that free GPU memory other (often orphaned) processes hold."""
    listed = " ".join(pids)
    return (
        manual(
            "nvidia-smi --query-compute-apps=pid,used_memory --format=csv; "
            + (f"kill {listed}" if listed else "kill -9 <pid>")
            + " (a stale run's workers, a vLLM server, Ray workers: ray stop --force)"
        ),
        manual(
            "nothing listed (orphaned/zombie workers, another container): sudo fuser -v "
            "/dev/nvidia* then kill -9 <pid>, or pkill -f <training script>"
        ),
        manual(
            "nothing left holding it: nvidia-smi --gpu-reset -i "
            + (str(gpu) if gpu >= 0 else "<index>")
            + " (GPU idle), or reboot"
        ),
    )


_VLLM_FREE = lazy(
    r"Free memory on device \((?P<free>[0-9.]+)/(?P<total>[0-9.]+) GiB\) on startup is less than"
)
_SGLANG_UNBALANCED = "Some GPUs may be occupied by other processes"


def _engine_share(text: str) -> OomShare | None:
    """vLLM's start-up check: free of total GiB before the engine allocated anything."""
    found = _VLLM_FREE.search(text)
    if found is None:
        return None
    total, free = float(found.group("total")) * GIB, float(found.group("free")) * GIB
    return OomShare(-1, total, free, 0.0, max(total - free - _CONTEXT_BYTES, 0.0))


def oom_held_hit(line: int, text: str) -> Hit | None:
    """DRV104 from torch's out-of-memory numbers when it names no other process (they run in
    another container, or are orphans it cannot see): total - free - this process's own; from
    vLLM's start-up free memory; from SGLang's unbalanced-memory refusal."""
    if _SGLANG_UNBALANCED in text:
        return Hit(
            f"SGLang found less free memory on some GPUs than on others (line {line}): other "
            "processes hold memory on them (leftover or orphaned workers, another job)",
            evidence={"line": line},
            fix=fix(
                "Stop the processes holding the GPUs' memory before the server starts",
                "manual",
                *held_fix(-1)[:2],
            ),
        )
    share = _engine_share(text) or oom_share(text)
    if share is None or not held_by_others(share):
        return None
    return Hit(
        f"the GPU had too little free memory while other processes held {share.others / GIB:.2f} "
        f"GiB of it (line {line}: {f'GPU {share.gpu}' if share.gpu >= 0 else 'the GPU'} has {share.total / GIB:.2f} GiB, {share.free / GIB:.2f} "
        f"GiB free, this process {share.own / GIB:.2f} GiB): leftover or orphaned processes of an "
        "earlier run, or another job or container on the same GPU",
        evidence={"line": line, "gpu": share.gpu, "others_bytes": int(share.others)},
        fix=fix(
            "Stop the processes holding the GPU's memory before the job starts (orphaned "
            "workers of a killed run often hold it without being listed)",
            "manual",
            *held_fix(share.gpu),
        ),
    )


# torch's allocator states what it holds but does not use: '... and 17.38 GiB is reserved by
# PyTorch but unallocated. If reserved but unallocated memory is large try setting
# PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.'; before torch 2.1:
# '(... 6.50 GiB already allocated; ... 6.60 GiB reserved in total by PyTorch) If reserved memory
# is >> allocated memory try setting max_split_size_mb to avoid fragmentation.'
_UNALLOCATED = lazy(_SIZE + r" is reserved by PyTorch but unallocated")
_ALLOCATED = lazy(r"memory " + _SIZE + r" is allocated by PyTorch")
_OLD_RESERVED = lazy(_SIZE + r" already allocated; .*?" + _SIZE + r" reserved in total by PyTorch")
# reserved but unallocated memory counts as fragmentation from this much (and this share of it)
_FRAGMENTED_BYTES = 0.5 * GIB
_FRAGMENTED_SHARE = 0.1
EXPANDABLE = "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
SPLIT = "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128"


def _beyond_reuse(text: str, unallocated: float) -> bool:
    """Whether torch's numbers show the request larger than the GPU's free memory and what
    PyTorch reserved but left unallocated together: an allocator setting only lets the cache
    reuse memory that exists, so it cannot serve such a request."""
    stated, want = _TOTAL_FREE.search(text) or _OLD_OOM.search(text), requested(text)
    if stated is None or want is None:
        return False
    return _bytes(stated.group(4), stated.group(5)) + unallocated < want


def _fragmentation(text: str) -> tuple[float, float, bool] | None:
    """(reserved but unallocated, allocated, old message format) as torch's message states."""
    free = _UNALLOCATED.search(text)
    if free is not None:
        used = _ALLOCATED.search(text)
        allocated = _bytes(used.group(1), used.group(2)) if used else 0.0
        return _bytes(free.group(1), free.group(2)), allocated, False
    old = _OLD_RESERVED.search(text)
    if old is not None:
        allocated = _bytes(old.group(1), old.group(2))
        reserved = _bytes(old.group(3), old.group(4))
        return max(reserved - allocated, 0.0), allocated, True
    return None


# the knobs that lower a GPU runtime's memory, by the words its out-of-memory line uses
# (signatures/memory.toml gpu-out-of-memory-any-library): (words, runtime, what lowers it)
_RUNTIME_KNOBS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    # ggml-org/llama.cpp tools/main/README.md (-ngl/--n-gpu-layers, -c/--ctx-size) and
    # ollama/ollama docs/modelfile.md (PARAMETER num_ctx, num_gpu); ggml-cuda.cu's
    # 'cudaMalloc failed' on a line of ggml's own, ggml-alloc.c's 'failed to allocate CUDA0
    # buffer' (MXNet's pooled_storage_manager.h says 'cudaMalloc failed: out of memory' too)
    (
        (
            "ggml",
            "CUDA0 buffer",
            "CUDA1 buffer",
            "llama runner process",
            "llama_",
            "compute pp buffers",
            "graph_reserve",
        ),
        "llama.cpp / ollama",
        "offload fewer layers to the GPU and shorten the context: llama.cpp -ngl <fewer> "
        "(--n-gpu-layers) and -c <smaller> (--ctx-size), a smaller -ub (--ubatch-size) for the "
        "compute buffer; ollama: PARAMETER num_gpu <fewer> / num_ctx <smaller> "
        "(OLLAMA_CONTEXT_LENGTH); or a smaller quantization (Q4_K_M)",
    ),
    # OpenNMT/CTranslate2 docs/quantization.md (compute_type int8, int8_float16);
    # https://github.com/SYSTRAN/faster-whisper/issues/442 (a smaller model or compute type)
    (
        ("CUDA failed with error out of memory",),
        "CTranslate2 / faster-whisper",
        'a smaller compute type and model: compute_type="int8_float16" (or "int8"), a '
        "smaller model size, a smaller batch_size / beam_size",
    ),
    # microsoft/onnxruntime docs (CUDA Execution Provider options gpu_mem_limit,
    # arena_extend_strategy); https://github.com/microsoft/onnxruntime/issues/16307
    (
        ("CUDA failure 2: out of memory", "onnxruntime"),
        "ONNX Runtime",
        "bound each session's arena in the CUDA provider options: {'gpu_mem_limit': <bytes>, "
        "'arena_extend_strategy': 'kSameAsRequested'}; fewer sessions on one GPU",
    ),
    # NVIDIA/TensorRT-LLM (KvCacheConfig free_gpu_memory_fraction: the share of free memory the
    # KV cache takes after the engine; max_batch_size / max_num_tokens size the activations)
    (
        ("TensorRT-LLM", "tensorrt_llm"),
        "TensorRT-LLM",
        "a smaller KV-cache share (KvCacheConfig(free_gpu_memory_fraction=0.8) / "
        "--kv_cache_free_gpu_memory_fraction), a smaller max_batch_size or max_num_tokens",
    ),
    # NVIDIA TensorRT (IBuilderConfig.set_memory_pool_limit, trtexec --memPoolSize; the
    # builder's workspace is scratch it reserves beside the engine's weights and activations)
    (
        ("[TRT]", "TensorRT", "virtualMemoryBuffer", "nvinfer1", "Cuda Error in allocate"),
        "TensorRT",
        "a smaller builder workspace (config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, "
        "1 << 30); trtexec --memPoolSize=workspace:1024), a smaller batch or optimization "
        "profile's max shape; free the GPU of other programs (another engine, torch's cache)",
    ),
    # PaddlePaddle paddle/fluid/memory/allocation: its own message ('If no, please decrease
    # the batch size of your model.')
    (
        ("Out of memory error on GPU",),
        "PaddlePaddle",
        "decrease the batch size of the model (Paddle's own advice), or stop the other "
        "processes on the GPU",
    ),
    # cupy/cupy cupy/cuda/memory.pyx (OutOfMemoryError) and docs/source/user_guide/memory.rst
    # (the memory pool caches freed blocks: MemoryPool.free_all_blocks(); a limit:
    # CUPY_GPU_MEMORY_LIMIT / set_limit)
    # NVIDIA/warp warp/_src/context.py ('Failed to allocate {n} bytes on device {device}'),
    # warp/native/warp.cu ('Warp error: Failed to allocate %llu bytes on device 'cuda:%d'',
    # 'Warp CUDA error %d: %s (in function wp_alloc_device...)'), Warp 0.x ('Memory allocation
    # failed on device: {} for {} bytes'): its arrays grow with the worlds, bodies and
    # particles a simulator on it (Newton, MuJoCo Warp, ManiSkill's soft bodies) allocates;
    # https://github.com/google-deepmind/mujoco_warp/issues/926 (beside JAX's preallocation)
    (
        (
            "Warp CUDA error 2:",
            "Warp error: Failed to allocate",
            "bytes on device 'cuda",
            "Memory allocation failed on device: cuda",
            "CudaManagedAllocator on device",
        ),
        "NVIDIA Warp",
        "fewer parallel worlds/environments, bodies or particles (Warp's arrays grow with "
        "them); a JAX learner in the same process preallocates 75% of the GPU: "
        "XLA_PYTHON_CLIENT_PREALLOCATE=false (or XLA_PYTHON_CLIENT_MEM_FRACTION=.5)",
    ),
    # NVlabs/tiny-cuda-nn include/tiny-cuda-nn/gpu_memory.h ('Could not allocate memory: ...
    # cudaMalloc(...) failed with error out of memory'); https://github.com/NVlabs/instant-ngp/
    # issues/488 (maintainer: a marching-cubes resolution above 768^3 exhausts 24 GB)
    (
        ("Could not allocate memory:", "tiny-cuda-nn"),
        "tiny-cuda-nn (instant-ngp)",
        "a lower resolution for what it renders or exports (marching cubes, screenshots, "
        "training images), a smaller hash grid (log2_hashmap_size), or a GPU with more memory",
    ),
    (
        ("cupy.cuda.memory", "Out of memory allocating", "out of memory to allocate"),
        "CuPy",
        "smaller arrays (a smaller dtype: float32, the computation in chunks); between steps "
        "return what CuPy's pool caches: cupy.get_default_memory_pool().free_all_blocks()",
    ),
)


def _runtime_knobs(text: str) -> tuple[str, str] | None:
    """(runtime, what lowers its GPU memory) when the line is a GPU runtime's own words."""
    for words, runtime, knobs in _RUNTIME_KNOBS:
        if any(w in text for w in words):
            return runtime, knobs
    return None


# a CUDA check macro of another framework than torch said out of memory (memory.toml's
# gpu-out-of-memory-any-library): glog's CHECK (Caffe, MXNet/mshadow, old Paddle, DGL),
# Open3D's and Theano's; torch's allocator setting does not apply to them
_OTHER_CHECKS = ("Check failed", "bytes of device memory", "CUDA runtime error: ")
_SMALLER_JOB = (
    "lower the job's GPU memory: a smaller batch size, a smaller image size (input "
    "resolution) or a smaller model; or a GPU with more memory"
)


def stale_step() -> str:
    """The step that frees GPU memory other processes, or state nothing lists, hold."""
    return (
        "nvidia-smi --query-compute-apps=pid,used_memory --format=csv (kill stale processes "
        "of an earlier run: ray stop --force; close other programs on the GPU, or reboot to "
        "free what no listed process holds)"
    )


def gpu_oom_fix(text: str, facts: Facts | None = None) -> tuple[str, tuple[Action, ...], str]:
    """The fix for a CUDA out-of-memory line: where the numbers show the job larger than the
    GPU (one request above the GPU's whole memory, from the line or the node's GPUs; the job's
    live tensors plus the request above it), splitting the work first (gpu_oom_size); else the
    allocator setting first when torch's numbers show fragmentation (reserved but unallocated
    memory), else a smaller job first; and what the numbers say, for the message. A GPU
    runtime's own line (llama.cpp, CTranslate2, ONNX Runtime, Paddle, CuPy, Warp, tiny-cuda-nn)
    gets that runtime's knobs first, and torch's allocator setting only a line of torch's."""
    runtime = _runtime_knobs(text)
    big = oversize(text, facts)
    if big is not None:
        split, actions = split_fix(big, (manual(runtime[1]),) if runtime is not None else ())
        return split, actions, "; " + big.said()
    if runtime is not None:
        held = (
            "nvidia-smi --query-compute-apps=pid,used_memory --format=csv (other processes "
            "holding the GPU: another model server, a stale run)"
        )
        return (
            f"Lower {runtime[0]}'s GPU memory: {runtime[1]}; or free the GPU of other processes",
            (manual(runtime[1]), manual(held)),
            "",
        )
    state = _fragmentation(text)
    old = state is not None and state[2]
    setting = SPLIT if old else EXPANDABLE
    if any(words in text for words in _OTHER_CHECKS):  # not torch's allocator: no setting of it
        return (
            "Lower the job's GPU memory (a smaller batch size or image size, a smaller model) "
            "or free the GPU of other processes",
            (manual(_SMALLER_JOB), manual(stale_step())),
            "",
        )
    smaller = (
        "lower the job's GPU memory: a smaller batch size (gradient accumulation keeps the "
        "effective batch), gradient checkpointing, bf16/fp16, a shorter max sequence length or "
        "a lower input resolution; vLLM/SGLang: a lower gpu_memory_utilization / "
        "mem_fraction_static or max_model_len; or a GPU with more memory"
    )
    stale = stale_step()
    if state is not None:
        unallocated, allocated = state[0], state[1]
        fragmented = unallocated >= _FRAGMENTED_BYTES and unallocated >= _FRAGMENTED_SHARE * (
            unallocated + allocated
        )
        said = f"; {unallocated / GIB:.2f} GiB is reserved by PyTorch but unallocated" + (
            " (fragmentation)" if fragmented else ""
        )
    else:
        fragmented, said = False, ""
    if fragmented:
        summary = (
            f"Let the allocator reuse what it reserved: {setting} (torch's own advice against "
            "fragmentation); else lower the job's GPU memory (a smaller batch size)"
        )
        steps: tuple[Action, ...] = (manual(setting), manual(smaller), manual(stale))
    elif state is not None and _beyond_reuse(text, state[0]):
        summary = (
            "Lower the job's GPU memory (a smaller batch size, gradient checkpointing) or free "
            "the GPU of stale processes (free plus reserved-but-unallocated memory is less than "
            "the request: no PYTORCH_CUDA_ALLOC_CONF setting can serve it)"
        )
        steps = (manual(smaller), manual(stale))
    else:
        summary = (
            "Lower the job's GPU memory (a smaller batch size, gradient checkpointing) or free "
            f"the GPU of stale processes; against fragmentation: {setting}"
        )
        steps = (manual(smaller), manual(setting), manual(stale))
    return summary, steps, said

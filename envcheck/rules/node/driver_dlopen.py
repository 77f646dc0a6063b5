"""DRV210: a program that loads the CUDA driver library by name at run time (dlopen of
``libcuda.so``: cuda-python, Rust's cudarc, numba, candle) cannot find it, although linked
programs (torch, nvidia-smi) may work: on WSL the library is only in /usr/lib/wsl/lib, elsewhere
only the versioned libcuda.so.1 is installed, or the container has no driver libraries."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.driver_upgrade import wsl_kernel

_WSL_DIR = "/usr/lib/wsl/lib"
_WSL_STEP = (
    f"on WSL 2: export LD_LIBRARY_PATH={_WSL_DIR}:$LD_LIBRARY_PATH   # the Windows driver's "
    "libcuda.so lives only there; ld.so.conf.d/ld.wsl.conf serves linked programs, not dlopen"
)
_LINUX_STEP = (
    "on Linux: ldconfig -p | grep libcuda   # the driver's libcuda.so.1 must be listed; if only "
    "libcuda.so.1 is, a loader that asks for libcuda.so needs the link: "
    "sudo ln -s libcuda.so.1 <its directory>/libcuda.so && sudo ldconfig"
)
_CONTAINER_STEP = (
    "in a container: docker run --gpus all (NVIDIA Container Toolkit on the host) with "
    "NVIDIA_DRIVER_CAPABILITIES=compute,utility, which mounts libcuda.so.1 from the host driver"
)


@rule("DRV210", "libcuda-dlopen-failed", Severity.ERROR)
def libcuda_dlopen_failed(facts: Facts) -> Iterable[Hit]:
    """A program that loads the CUDA driver library by name cannot find libcuda.so

    ## What it checks
    Only a log states it (a node check would have to guess which name a program asks for):
    cuda-python's `Failed to dlopen libcuda.so`, Rust's cudarc `Unable to find cuda lib under
    the names ["cuda", "nvcuda"]` / `Unable to dynamically load the "cuda" shared library`,
    numba's `CUDA driver library cannot be found`.

    ## Why it matters
    These libraries call dlopen("libcuda.so") themselves instead of linking against it. dlopen
    searches LD_LIBRARY_PATH and the ld.so cache; on WSL 2 the driver's libcuda.so is only in
    /usr/lib/wsl/lib (whose ld.so.conf.d entry caches just libcuda.so.1), and on Linux the
    unversioned libcuda.so comes only with development packages. torch and nvidia-smi work on
    the same node, so the driver looks fine.

    ## Example
    `RuntimeError: Failed to dlopen libcuda.so` from `cuda.cuInit(0)` under WSL 2.

    ## Fix
    WSL 2: `export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH`. Linux: check
    `ldconfig -p | grep libcuda` and link libcuda.so to libcuda.so.1; in a container start it
    with `--gpus all` and `NVIDIA_DRIVER_CAPABILITIES=compute,utility`.

    ## References
    - https://github.com/NVIDIA/cuda-python/issues/17
    - https://github.com/chelsea0x3b/cudarc/issues/255
    - https://docs.nvidia.com/cuda/wsl-user-guide/index.html
    """
    raise Skip("only a log line states a library that could not dlopen libcuda", "log.driver")


@from_log("DRV210")
def libcuda_dlopen_failed_in_log(facts: Facts, line: LogLine) -> Hit:
    """The library's own words; the steps ordered by what the node is (WSL first when unknown:
    this failure is mostly WSL's)."""
    wsl = wsl_kernel(facts)
    steps = (
        (_LINUX_STEP, _CONTAINER_STEP, _WSL_STEP)
        if wsl is False
        else (_WSL_STEP, _LINUX_STEP, _CONTAINER_STEP)
    )
    summary = (
        "Make libcuda.so findable for dlopen: "
        + (
            f"export LD_LIBRARY_PATH={_WSL_DIR}:$LD_LIBRARY_PATH (WSL 2)"
            if wsl is not False
            else "link libcuda.so to the driver's libcuda.so.1 (ldconfig -p | grep libcuda)"
        )
        + "; in a container, docker run --gpus all"
    )
    return Hit(
        f"the program loads the CUDA driver library by name (dlopen) and did not find it (line "
        f"{line.line}): "
        + (
            f"on WSL 2 libcuda.so is only in {_WSL_DIR}, which dlopen does not search"
            if wsl
            else "libcuda.so is not on LD_LIBRARY_PATH or in the ld.so cache (on WSL 2 it is "
            f"only in {_WSL_DIR}; on Linux only libcuda.so.1 may be installed)"
        ),
        evidence={"line": line.line, "wsl": wsl},
        fix=fix(summary, "manual", *(manual(step) for step in steps)),
    )

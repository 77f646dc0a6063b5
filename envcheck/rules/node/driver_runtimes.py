"""The driver seen through a GPU library other than torch.

DRV220: CUDA error 35 ('CUDA driver version is insufficient for CUDA runtime version') in the
words of a library that ships its own CUDA runtime (ONNX Runtime's `CUDA failure 35`, CuPy's
`cudaErrorInsufficientDriver`, TensorFlow, JAX, PaddlePaddle): the driver is too old for THAT
library's CUDA build, whatever torch the environment has, so the fix is the driver or the
library's build for an older CUDA, never a torch wheel (DRV101's). Which library, and the
commands that install its build per CUDA major, come from `[[gpu_build]]`
(matrices/packages/gpu_builds.toml, from each library's install documentation).

DRV221: XLA's warning that the driver's CUDA is older than the PTX compiler (ptxas) it found:
parallel compilation is switched off (slow compiles) and PTX it produces may not load."""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.version import Version

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import major_minor, parse_version
from envcheck.matrix.schema import GpuBuild
from envcheck.model.finding import Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual
from envcheck.rules.node.driver import driver_package

_UPGRADE = "sudo ubuntu-drivers autoinstall && sudo reboot  (Ubuntu: the recommended driver branch)"
# CTranslate2's wording is DRV140's (its CUDA 12 floor is in ctranslate2_cuda.toml)
_OWN_RULE = {"ctranslate2": "DRV140"}


def library_of(facts: Facts, line: LogLine) -> GpuBuild | None:
    """The GPU library (not torch) whose own CUDA runtime the line's error comes from."""
    return facts.matrix.gpu_build(line.text)


def _driver_cuda(facts: Facts, line: LogLine) -> Version | None:
    stated = parse_version(line.stated.get("driver_cuda"))
    if stated is not None:
        return stated
    try:
        return facts.max_cuda()[0]
    except Skip:
        return None


def _older_builds(entry: GpuBuild, driver_cuda: Version | None) -> list[str]:
    """The commands that install the library's build for an older CUDA major than its default:
    for the driver's major where it is known, else for every older major the entry names."""
    default = entry.cuda_default or max(entry.cuda_majors, default=0)
    majors = [m for m in entry.cuda_majors if m < default] or []
    if driver_cuda is not None:
        majors = [m for m in majors if m == driver_cuda.major]
    commands = [
        c.replace("{cuda}", str(m))
        for m in sorted(majors, reverse=True)
        for c in entry.install
        if "{cuda}" in c
    ]
    wanted = {driver_cuda.major} if driver_cuda is not None else set(range(9, default or 13))
    commands += [
        c
        for c in entry.cuda_libs
        if any(re.search(rf"\bCUDA {m}(?:\.[0-9]+)?\b", c) for m in wanted)
    ]
    return commands


@rule("DRV220", "driver-too-old-for-library-runtime", Severity.ERROR)
def driver_too_old_for_library(facts: Facts) -> Iterable[Hit]:
    """A GPU library other than torch found the driver too old for its own CUDA runtime

    ## What it checks
    Only a log states it: CUDA error 35 (`CUDA driver version is insufficient for CUDA runtime
    version`, `cudaErrorInsufficientDriver`) in the words of a library that ships its own CUDA
    runtime: ONNX Runtime's `onnxruntime::CudaCall CUDA failure 35: ...`, CuPy's
    `CUDARuntimeError: cudaErrorInsufficientDriver`, TensorFlow's and JAX's (XLA's) stream
    executor, PaddlePaddle. The library comes from `[[gpu_build]]`'s `line` patterns
    (matrices/packages/gpu_builds.toml); CTranslate2's wording is DRV140's.

    ## Why it matters
    Each of these libraries is built for one CUDA major and loads that runtime itself (from
    its wheel or the system), independently of torch: onnxruntime-gpu 1.19 and newer on PyPI
    is CUDA 12, cupy-cuda12x CUDA 12. On a driver older than that CUDA (an R470 or R515 driver
    runs CUDA 11 only) the library's first CUDA call fails, while torch built for CUDA 11 works
    on the same node, so a torch wheel (DRV101's fix) does not help.

    ## Example
    `CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version ; GPU=0 ;
    hostname=... ; expr=cudaSetDevice(info_.device_id);` from onnxruntime-gpu 1.19 on a
    CUDA 11 driver.

    ## Fix
    Upgrade the NVIDIA driver (`sudo ubuntu-drivers autoinstall`, then reboot; or `sudo apt
    install nvidia-driver-<branch>`), or install the library's build for the CUDA the driver
    runs (`pip install "onnxruntime-gpu<1.19"` for CUDA 11.8; `pip install cupy-cuda11x`).

    ## References
    - https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html (Requirements: CUDA 12.x is the PyPI default from 1.19)
    - https://docs.cupy.dev/en/stable/install.html
    - https://docs.nvidia.com/deploy/cuda-compatibility/
    - https://github.com/onnxruntime/mobius/issues/316
    - https://github.com/mattyamonaca/layerdivider/issues/28
    """
    raise Skip("only a log line states which library's CUDA runtime refused the driver", "log")


@from_log("DRV220")
def driver_too_old_for_library_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The library the line names, the driver's CUDA where the node or the line states it, and
    the library's build for that CUDA from `[[gpu_build]]`."""
    entry = library_of(facts, line)
    if entry is None or entry.package in _OWN_RULE:
        return None  # torch's own runtime (DRV101) or a library with its own rule
    driver_cuda = _driver_cuda(facts, line)
    older = _older_builds(entry, driver_cuda)
    actions = [manual(_UPGRADE)]
    default = entry.cuda_default
    if default is not None:
        package = driver_package(facts, Version(f"{default}.0"))
        if package is not None:
            actions.append(package)
    actions += [manual(c) for c in older]
    runs = f" (it runs CUDA <= {major_minor(driver_cuda)})" if driver_cuda is not None else ""
    build = f" (built for CUDA {default})" if default is not None else ""
    summary = (
        f"Upgrade the NVIDIA driver{runs}: {entry.library}{build} needs a newer one (sudo "
        "ubuntu-drivers autoinstall, then sudo reboot)"
    )
    if older:
        summary += f"; or install the {entry.library} build for the driver's CUDA: {older[0]}"
    return Hit(
        f"{entry.library}'s own CUDA runtime found the driver too old (line {line.line}): it is "
        f"not torch's CUDA, so a torch wheel does not help{runs}",
        evidence={
            "line": line.line,
            "library": entry.package,
            "driver_max_cuda": str(driver_cuda) if driver_cuda else None,
        },
        fix=fix(summary, "manual", *actions),
    )


@rule("DRV221", "driver-older-than-ptx-compiler", Severity.WARNING)
def driver_older_than_ptxas(facts: Facts) -> Iterable[Hit]:
    """The driver's CUDA is older than the PTX compiler (ptxas) XLA uses

    ## What it checks
    Only a log states it: XLA's (JAX, TensorFlow) `The NVIDIA driver's CUDA version is 12.2
    which is older than the ptxas CUDA version (12.3.107)` (newer releases: `... older than the
    PTX compiler version (12.6.85)`), with the two versions the line states.

    ## Why it matters
    XLA compiles PTX with the ptxas it finds (the nvidia-cuda-nvcc wheel jax[cuda12] installs,
    else the CUDA toolkit on PATH). A driver older than that ptxas cannot load what it produces
    without the forward-compatibility package, so XLA switches parallel compilation off: every
    compile is slower, and some kernels fail to load.

    ## Example
    `W external/xla/xla/service/gpu/nvptx_compiler.cc:744] The NVIDIA driver's CUDA version is
    12.2 which is older than the ptxas CUDA version (12.3.107). Because the driver is older than
    the ptxas version, XLA is disabling parallel compilation ...` with driver 535.

    ## Fix
    Upgrade the NVIDIA driver to one that supports the ptxas' CUDA (the maintainers' answer),
    or use a ptxas no newer than the driver's CUDA: `pip install "nvidia-cuda-nvcc-cu12==12.2.*"`
    for a CUDA 12.2 driver, or `jax[cuda12_local]` with the system toolkit of the driver's CUDA.

    ## References
    - openxla/xla xla/service/gpu/nvptx_compiler.cc (the warning's text)
    - https://github.com/google-deepmind/alphafold3/issues/272 ('Updating the host NVIDIA drivers ... is the best solution')
    - https://github.com/AI-Hypercomputer/maxtext/issues/501 (jax[cuda12_local] with the image's CUDA)
    - https://docs.jax.dev/en/latest/installation.html
    """
    raise Skip("only XLA's warning states which ptxas it uses", "log")


@from_log("DRV221")
def driver_older_than_ptxas_in_log(facts: Facts, line: LogLine) -> Hit | None:
    driver_cuda = _driver_cuda(facts, line)
    ptxas = parse_version(line.stated.get("nvcc_version"))
    if (
        driver_cuda is not None
        and ptxas is not None
        and ptxas.release[:2] <= driver_cuda.release[:2]
    ):
        return None  # the line's own figures say the driver is new enough
    actions = [manual(_UPGRADE)]
    wanted = ptxas if ptxas is not None else None
    if wanted is not None:
        package = driver_package(facts, wanted)
        if package is not None:
            actions.append(package)
    pin = ""
    if driver_cuda is not None:
        pin = f'pip install "nvidia-cuda-nvcc-cu{driver_cuda.major}=={major_minor(driver_cuda)}.*"'
        actions.append(
            manual(
                f"{pin}  (a ptxas no newer than the driver's CUDA, where jax's requirement allows it)"
            )
        )
    actions.append(
        manual(
            'pip install -U "jax[cuda12_local]"  (use the system CUDA toolkit of the driver\'s '
            "CUDA instead of the wheels)"
        )
    )
    runs = f"CUDA {major_minor(driver_cuda)}" if driver_cuda is not None else "an older CUDA"
    compiler = f"CUDA {major_minor(ptxas)}" if ptxas is not None else "a newer CUDA"
    summary = f"Upgrade the NVIDIA driver to one that supports {compiler} (sudo ubuntu-drivers autoinstall, then sudo reboot)"
    if pin:
        summary += f"; or use a ptxas of the driver's CUDA: {pin}"
    return Hit(
        f"the driver runs {runs} and XLA's PTX compiler is {compiler} (line {line.line}): XLA "
        "compiles without parallelism, and PTX it produces may not load",
        evidence={
            "line": line.line,
            "driver_max_cuda": str(driver_cuda) if driver_cuda else None,
            "ptxas": str(ptxas) if ptxas else None,
        },
        fix=fix(summary, "manual", *actions),
    )

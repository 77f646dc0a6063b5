"""Libraries that look for a CUDA library themselves, by name, and word its absence in their
own terms (SYS150): torch's `ValueError: libcublas.so.*[0-9] not found in the system path
[...]` and cpm_kernels' `RuntimeError: Library cublasLt is not initialized`.

torch 1.13 to 2.x, when loading libtorch_global_deps fails, looks for each CUDA library its
wheels depend on in `<sys.path entry>/nvidia/<lib>/lib/` by a glob (`_preload_cuda_deps`:
`raise ValueError(f"{lib_name} not found in the system path {sys.path}")`, pytorch/pytorch
torch/__init__.py). The line names the library by its file-name stem, not a SONAME: the
nvidia-* wheel that ships it is not installed next to torch. Threads end it by installing torch
again with its dependencies (finic-ai/rag-stack#44: `pip install torch torchvision torchaudio`),
or, where an installer dropped the dependencies, by avoiding the release whose PyPI metadata
lacked them (pytorch/pytorch#100974: torch 2.0.1's wheel listed no nvidia-* requirement to
poetry; kennethleungty/Llama-2-Open-Source-LLM-CPU-Inference#8 and rag-stack#44: `torch =
">=2.0.0, !=2.0.1"`, `!=2.1.0`), or by installing the wheel itself.
"""

from __future__ import annotations

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import package_names
from envcheck.model.finding import Action
from envcheck.rules.base import Hit, LogLine
from envcheck.rules.fixes import fix, manual, pip_install

# the versions of torch whose PyPI metadata poetry read without the nvidia-* requirements
# (pytorch/pytorch#100974 for 2.0.1; rag-stack#44 excluded 2.1.0 as well)
_POETRY_PIN = 'torch = ">=2.0.0, !=2.0.1, !=2.1.0"'


def _torch_major(facts: Facts) -> int | None:
    try:
        cuda = facts.torch_cuda()
    except Skip:
        return None
    return cuda.major if cuda is not None else None


def _torch_index(facts: Facts) -> str | None:
    """The index URL of the node's torch variant (cu121 ...), when the node states it."""
    try:
        variant = facts.torch_variant()
    except Skip:
        return None
    if not variant.startswith("cu"):
        return None
    return facts.matrix.torch_index_url(variant)


def _wheels(facts: Facts, stem: str, major: int | None) -> list[str]:
    """The nvidia-*-cuNN wheels the table says ship ``stem`` (libcublas -> nvidia-cublas-cu12),
    for torch's CUDA major when it is known, else every CUDA major whose wheels carry the -cuNN
    suffix torch 2.x pins (the newest first)."""
    found: dict[str, int] = {}
    for entry in facts.matrix.sonames:
        if entry.name.split(".so", maxsplit=1)[0] != stem or entry.cuda_major is None:
            continue
        if major is not None and entry.cuda_major != major:
            continue
        for wheel in package_names(entry.pip, entry.cuda_major):
            if wheel.startswith("nvidia-") and wheel.endswith(f"-cu{entry.cuda_major}"):
                found.setdefault(wheel, entry.cuda_major)
    return sorted(found, key=lambda w: -found[w])


def _wheels_major(wheel: str) -> str:
    return wheel.rsplit("-cu", 1)[-1]


def torch_preload_missing(facts: Facts, line: LogLine, stem: str) -> Hit:
    """The Hit for torch's `<lib>.so.*[0-9] not found in the system path`: reinstall torch with
    its dependencies first (from the node's variant index where known), then the wheel, then
    the pin that avoids the releases poetry installed without them."""
    major = _torch_major(facts)
    wheels = _wheels(facts, stem, major)
    url = _torch_index(facts)
    reinstall = "pip install --force-reinstall torch torchvision torchaudio" + (
        f" --index-url {url}" if url else ""
    )
    words = [
        f"install torch again with its dependencies: {reinstall} (pip install torch "
        "torchvision torchaudio; torch's CUDA wheels depend on the nvidia-* wheels)"
    ]
    actions: list[Action] = [manual(reinstall)]
    for wheel in wheels:
        cuda = "" if major is not None else f" (a CUDA {_wheels_major(wheel)} torch)"
        words.append(f"pip install {wheel}{cuda}")
        actions.append(pip_install(wheel))
    words.append(
        f"with poetry, a torch whose PyPI metadata lists them: {_POETRY_PIN} in pyproject.toml, "
        "then poetry lock (torch 2.0.1's wheel did not, pytorch#100974)"
    )
    actions.append(manual(f"{_POETRY_PIN}  (pyproject.toml), then poetry lock && poetry install"))
    return Hit(
        f"torch found no {stem} in an nvidia/*/lib directory of sys.path (line {line.line}): "
        "the nvidia-* wheel its CUDA build depends on is not installed beside it (an installer "
        "that skipped torch's dependencies, pip --no-deps, or a torch from another environment)",
        evidence={"line": line.line, "library": stem, "wheels": wheels},
        fix=fix("Give torch its CUDA wheels: " + "; or ".join(words), "manual", *actions),
    )


# cpm_kernels (OpenBMB/cpm_kernels cpm_kernels/library/base.py): Lib(name) looks for the CUDA
# toolkit's library itself, never torch's wheels: on Linux unix_find_lib() tries
# $CUDA_PATH/lib64/lib<name>.so, /usr/local/cuda/lib64/lib<name>.so, then
# ctypes.util.find_library(name) (the loader's cache, unversioned names); on Windows the first
# '<name>64_*.dll' in a PATH directory. A library it did not load raises at the first call:
# RuntimeError("Library %s is not initialized"). Its users: ChatGLM's int4 quantization, Kolors.
_PHYSX = r"C:\Program Files (x86)\NVIDIA Corporation\PhysX\Common"


def cpm_kernels_missing(facts: Facts, line: LogLine, name: str) -> Hit:
    """The Hit for cpm_kernels' `Library <name> is not initialized`: the CUDA toolkit's
    library where cpm_kernels looks (a toolkit at /usr/local/cuda or CUDA_PATH, the toolkit's
    bin on Windows' PATH ahead of PhysX's old cudart64_65.dll); for `cuda`, the driver's
    unversioned libcuda.so link. Threads: zai-org/ChatGLM-6B#465 (the CUDA toolkit of the
    right version, its DLL directory on PATH), #76 (a reboot after installing it),
    MinusZoneAI/ComfyUI-Kolors-MZ#14 (PhysX's cudart64_65.dll found first on PATH)."""
    major = _torch_major(facts)
    toolkit = f"CUDA {major}" if major is not None else "torch's CUDA (torch.version.cuda)"
    if name == "cuda":
        words = [
            "cpm_kernels opens the driver's libcuda.so by its unversioned name: link it where "
            "the driver's libcuda.so.1 is (ldconfig -p | grep libcuda), sudo ln -s libcuda.so.1 "
            "libcuda.so there, then sudo ldconfig",
            "on Windows the NVIDIA driver's nvcuda.dll comes with the driver: reinstall it",
        ]
        actions: list[Action] = [
            manual("ldconfig -p | grep libcuda  (the driver's directory)"),
            manual("cd <that directory> && sudo ln -s libcuda.so.1 libcuda.so && sudo ldconfig"),
        ]
    else:
        words = [
            f"install the CUDA toolkit of {toolkit}, which ships lib{name}.so: cpm_kernels loads "
            "the toolkit's libraries, not torch's nvidia-* wheels, from $CUDA_PATH/lib64 or "
            f"/usr/local/cuda/lib64 (export CUDA_PATH=<the toolkit's root>), else the loader's "
            f"cache (sudo ldconfig); in a conda environment conda install cudatoolkit=<major.minor> "
            "(ChatGLM-6B#465)",
            f"on Windows the first {name}64_*.dll on PATH: put the toolkit's bin directory "
            r"(C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\vXX.Y\bin) on PATH, ahead of "
            f"{_PHYSX} (PhysX's CUDA 6.5 cudart64_65.dll), then open a new shell or reboot so "
            "the new PATH is read",
        ]
        actions = [
            manual(f"ls /usr/local/cuda/lib64/lib{name}.so  (where cpm_kernels looks first)"),
            manual("export CUDA_PATH=/usr/local/cuda-XX.Y  (a toolkit whose lib64 has it)"),
            manual("conda install cudatoolkit=XX.Y  (in a conda environment, torch's CUDA)"),
            manual(
                "Windows: set PATH=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\vXX.Y\\bin;%PATH%"
                "  (then a new shell, or reboot)"
            ),
        ]
    return Hit(
        f"cpm_kernels could not load the CUDA library {name} (line {line.line}): it looks for the "
        "CUDA toolkit's own copy (CUDA_PATH, /usr/local/cuda/lib64, the loader's cache; on "
        "Windows the first matching DLL on PATH) and found none, or an older one first",
        evidence={"line": line.line, "library": name},
        fix=fix("Give cpm_kernels the library: " + "; or ".join(words), "manual", *actions),
    )

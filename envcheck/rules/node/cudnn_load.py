"""CUD154: cuDNN's libraries, which a program opens by name at run time, are not on the loader's
path. cuDNN 8 loads its sub-libraries itself (`Could not load library libcudnn_ops_infer.so.8.
Error: ...: cannot open shared object file`); CTranslate2 (faster-whisper, WhisperX) opens
cuDNN 9's (`Unable to load any of {libcudnn_ops.so.9.1.0, ..., libcudnn_ops.so}` then
`Invalid handle. Cannot load symbol cudnnCreateTensorDescriptor`). The nvidia-cudnn wheel puts
them under site-packages/nvidia/cudnn/lib, which no loader searches unless torch loaded them
first or LD_LIBRARY_PATH names it; a program that wants another cuDNN major than the one
installed fails alike. The line names the major, so the fix names the wheel, the directory to
export and the system package."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install
from envcheck.rules.node.located_library import lead_with_located

_LIBRARY = lazy(r"(?P<lib>libcudnn[a-z_]*)\.so\.(?P<major>[0-9]+)")
# cuDNN on Windows: cudnn_ops_infer64_8.dll (cuDNN 8), cudnn_ops64_9.dll (cuDNN 9)
_DLL = lazy(r"(?P<lib>cudnn[a-z_]*)64_(?P<major>[0-9]+)\.dll")
# the wheel's DLL directory on Windows, for the interpreter that runs the job
PATH_SET = (
    "set PATH=<the venv>\\Lib\\site-packages\\nvidia\\cudnn\\bin;%PATH%  (PowerShell: "
    '$env:PATH = "<...>\\nvidia\\cudnn\\bin;" + $env:PATH)'
)
_SYMBOL = lazy(r"Cannot load symbol (?P<symbol>cudnn[A-Za-z_]+)")
# where the nvidia-cudnn wheel keeps its libraries, for the interpreter that runs the job
EXPORT = (
    "export LD_LIBRARY_PATH=$(python -c 'import os, nvidia.cudnn.lib; "
    "print(os.path.dirname(nvidia.cudnn.lib.__file__))'):$LD_LIBRARY_PATH"
)


@rule("CUD154", "cudnn-not-on-loader-path", Severity.ERROR)
def cudnn_not_loadable(facts: Facts) -> Iterable[Hit]:
    """cuDNN libraries a program opens at run time are not on the loader's path

    ## What it checks
    A log line from a program that opens cuDNN's libraries by name at run time and found none:
    cuDNN 8's own `Could not load library libcudnn_ops_infer.so.8. Error: ... cannot open shared
    object file`, CTranslate2's `Unable to load any of {libcudnn_ops.so.9.1.0, ...}` and
    `Invalid handle. Cannot load symbol cudnnCreateTensorDescriptor`. The line names the cuDNN
    major the program wants; where the node lists its packages, the nvidia-cudnn wheel
    installed (another major, or none) is named. Only a log states the failed load.

    ## Why it matters
    The nvidia-cudnn wheel installs its libraries under `site-packages/nvidia/cudnn/lib`, which
    the dynamic loader does not search: torch finds them because it loads them first, a
    program that does not import torch (faster-whisper, WhisperX, an ONNX or TensorRT
    runtime) aborts at the first convolution or transcription. CTranslate2 4.5 and newer need
    cuDNN 9, 4.0-4.4 need cuDNN 8.

    ## Example
    faster-whisper with ctranslate2 4.5.0 and nvidia-cudnn-cu12 9.1.0.70 installed by pip:
    `Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9,
    libcudnn_ops.so}`.

    ## Fix
    Install the cuDNN major the line names (`pip install "nvidia-cudnn-cu12==9.*"`) and put the
    wheel's directory on the loader's path: `export LD_LIBRARY_PATH=$(python -c 'import os,
    nvidia.cudnn.lib; print(os.path.dirname(nvidia.cudnn.lib.__file__))'):$LD_LIBRARY_PATH`;
    or the system package (`apt install libcudnn9-cuda-12`); or, for CTranslate2, the release
    built for the cuDNN installed (`pip install ctranslate2==4.4.0` for cuDNN 8).

    ## References
    - https://github.com/SYSTRAN/faster-whisper/issues/1182
    - https://github.com/SYSTRAN/faster-whisper/issues/516
    - https://github.com/MahmoudAshraf97/whisper-diarization/issues/259
    - https://github.com/disler/always-on-ai-assistant/issues/3
    """
    raise Skip("only a log line states a failed cuDNN load", "log.cudnn")


def _installed(facts: Facts) -> tuple[str, str] | None:
    for name in ("nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "nvidia-cudnn-cu11"):
        try:
            dist = facts.dist(name)
        except Skip:
            return None
        if dist is not None:
            return name, dist.version
    return None


# cuDNN 8 found its own library but not a library it opens in turn, by its unversioned name
_DEPENDENCY = lazy(
    r"Could not load library (?P<cudnn>libcudnn[a-z_]*\.so\.[0-9]+)\. Error: "
    r"(?P<dep>lib(?:nvrtc|cuda)\.so): cannot open shared object file"
)
_NVRTC_DIR = "python -c 'import os, nvidia.cuda_nvrtc.lib as m; print(os.path.dirname(m.__file__))'"


def _dependency_hit(line: LogLine) -> Hit | None:
    """`Error: libnvrtc.so` / `Error: libcuda.so`: cuDNN is there, the library it dlopens by
    its unversioned name is not (the wheels ship libnvrtc.so.N only; WSL keeps libcuda.so in
    /usr/lib/wsl/lib)."""
    found = _DEPENDENCY.search(line.text)
    if found is None:
        return None
    cudnn, dep = found.group("cudnn"), found.group("dep")
    if dep == "libnvrtc.so":
        return Hit(
            f"{cudnn} is installed but cannot open {dep} (line {line.line}): cuDNN 8 opens "
            "NVRTC by its unversioned name, and torch's wheels and the nvidia-cuda-nvrtc wheel "
            "ship only a versioned libnvrtc.so.N",
            evidence={"line": line.line, "library": cudnn, "missing": dep},
            fix=fix(
                "Give NVRTC its unversioned name: link libnvrtc.so to the versioned library "
                "in the wheel's lib directory (or torch/lib); or install cuDNN from conda-forge "
                "(conda install -c conda-forge cudnn), or a torch built with CUDA 11.8 or newer",
                "manual",
                manual(
                    f"cd $({_NVRTC_DIR}) && ln -sf $(ls libnvrtc.so.* | head -1) libnvrtc.so  "
                    "(torch's own copy: ln -s torch/lib/libnvrtc-<hash>.so.<N> "
                    "torch/lib/libnvrtc.so)"
                ),
                manual("conda install -c conda-forge cudnn"),
                manual(
                    "pip install torch --index-url https://download.pytorch.org/whl/cu118 "
                    "(a build whose cuDNN finds its NVRTC)"
                ),
            ),
        )
    return Hit(
        f"{cudnn} is installed but cannot open {dep} (line {line.line}): the driver's "
        "libcuda.so is not on the loader's path (under WSL it is in /usr/lib/wsl/lib)",
        evidence={"line": line.line, "library": cudnn, "missing": dep},
        fix=fix(
            "Put the driver's libcuda.so on the loader's path (WSL: export "
            "LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH)",
            "manual",
            manual("WSL: export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH"),
            manual(
                "elsewhere: ldconfig -p | grep libcuda.so (the driver's libcuda.so.1; a "
                "container started with --gpus all gets it from the NVIDIA runtime)"
            ),
        ),
    )


# cuDNN 8's 'Could not load library X. Error: libcuda.so: cannot open shared object file': X was
# found, the driver's libcuda was not (WSL 2 keeps it in /usr/lib/wsl/lib, often without the
# unversioned libcuda.so link)
_DRIVER_LIB = lazy(r"Error: (libcuda\.so(?:\.1)?): cannot open shared object file")
WSL_LIB = "/usr/lib/wsl/lib"


def _driver_library_missing(line: LogLine, lib: str) -> Hit:
    return Hit(
        f"cuDNN was found but the NVIDIA driver's {lib} it loads was not (line {line.line}): on "
        f"WSL 2 the driver's libraries are in {WSL_LIB} (often without the unversioned "
        "libcuda.so link), which the loader does not search; elsewhere the driver is not "
        "installed or a container was started without the GPUs",
        evidence={"line": line.line, "library": lib},
        fix=fix(
            f"Put the driver's library directory on the loader's path: export "
            f"LD_LIBRARY_PATH={WSL_LIB}:$LD_LIBRARY_PATH (WSL 2), or run the container with "
            "--gpus all",
            "manual",
            manual(f"export LD_LIBRARY_PATH={WSL_LIB}:$LD_LIBRARY_PATH  (WSL 2)"),
            manual(
                f"or link it where cuDNN looks: ln -s {WSL_LIB}/libcuda.so.1 "
                "<site-packages>/nvidia/cudnn/lib/libcuda.so  (or sudo ldconfig after "
                f"adding {WSL_LIB} to /etc/ld.so.conf.d/)"
            ),
            manual("not WSL: install the NVIDIA driver, or docker run --gpus all ..."),
        ),
    )


@from_log("CUD154")
def cudnn_not_loadable_in_log(facts: Facts, line: LogLine) -> Hit:
    """The cuDNN major the line asks for, the wheel the node has (where known), the fix; a
    library cuDNN opens in turn (NVRTC, libcuda) when the line names that one. Where a listing
    in the log shows the library installed, its directory leads the fix (located_library.py)."""
    hit = _cudnn_not_loadable(facts, line)
    found = _LIBRARY.search(line.text)
    return lead_with_located(hit, line, found.group(0)) if found else hit


# cuDNN 8 found its own sub-library, and the loader then missed a versioned CUDA library that
# one needs ('Could not load library libcudnn_ops_infer.so.8. Error: libcublasLt.so.11: cannot
# open shared object file'): the library the dlerror names is what is missing, not cuDNN
_CUDA_DEPENDENCY = lazy(
    r"Could not load library (?P<cudnn>libcudnn[a-z_]*\.so\.[0-9]+)\. Error: "
    r"(?P<dep>lib(?:cublasLt|cublas|nvrtc|cudart|nvJitLink|cufft|curand|cusparse|cusolver)"
    r"\.so\.[0-9][0-9.]*): cannot open shared object file"
)


def _cuda_dependency_hit(facts: Facts, line: LogLine) -> Hit | None:
    """The CUDA library (cuBLASLt 11 for cuDNN 8.x of CUDA 11) cuDNN could not open: the
    loader family's fix for that SONAME (who ships it, for torch's CUDA), with cuDNN named as
    the library that asked for it."""
    found = _CUDA_DEPENDENCY.search(line.text)
    if found is None:
        return None
    from envcheck.rules.node.loader import shared_library_missing

    cudnn, dep = found.group("cudnn"), found.group("dep")
    hit = shared_library_missing(facts, line, dep)
    return dataclasses.replace(
        hit,
        message=f"{cudnn} is there but the {dep} it loads is not (line {line.line}): "
        + hit.message,
    )


def _cudnn_not_loadable(facts: Facts, line: LogLine) -> Hit:
    driver_lib = _DRIVER_LIB.search(line.text)
    if driver_lib is not None:
        return _driver_library_missing(line, driver_lib.group(1))
    dependency = _dependency_hit(line)
    if dependency is not None:
        return dependency
    cuda_dependency = _cuda_dependency_hit(facts, line)
    if cuda_dependency is not None:
        return cuda_dependency
    found = _LIBRARY.search(line.text)
    dll = _DLL.search(line.text) if found is None else None
    symbol = _SYMBOL.search(line.text)
    if found is None and dll is None and symbol is None:
        raise NotStated(f"line {line.line} names no cuDNN library", "log.cudnn")
    if dll is not None:
        return _windows_hit(facts, line, dll)
    major = found.group("major") if found else None
    if found is not None:
        lib = f"{found.group('lib')}.so.{major}"
    else:
        lib = f"the cuDNN library with {symbol.group('symbol') if symbol else 'its symbols'}"
    installed = _installed(facts)
    wheel = installed[0] if installed else "nvidia-cudnn-cu12"
    have = ""
    if installed is not None:
        name, version = installed
        other = major is not None and version.split(".")[0] != major
        have = f"; {name} {version} is installed" + (
            f": cuDNN {version.split('.')[0]}, not the {major} the program wants" if other else ""
        )
    actions = []
    if major is not None:
        actions.append(pip_install(f"{wheel}=={major}.*"))
    actions.append(manual(EXPORT))
    others: list[str] = []
    if major is not None:
        system = f"libcudnn{major}-cuda-12" if int(major) >= 9 else f"libcudnn{major}"
        actions.append(manual(f"or the system package: sudo apt install {system}"))
        # conda-forge's cudnn package follows cuDNN's major; Ubuntu's own multiverse package
        # nvidia-cudnn is cuDNN 8 (22.04); CUDA 11 stacks take the cu11 wheel of cuDNN 8
        others.append(f"conda install -c conda-forge cudnn={major}")
        actions.append(
            manual(f"or conda install -c conda-forge cudnn={major}  (conda install cudnn)")
        )
        if major == "8":
            others.append("sudo apt install nvidia-cudnn (Ubuntu)")
            actions.append(manual("or Ubuntu's package: sudo apt install nvidia-cudnn"))
            actions.append(
                manual("CUDA 11 stacks: pip install nvidia-cublas-cu11 nvidia-cudnn-cu11==8.*")
            )
    # faster-whisper's README: both wheels, then both lib directories on LD_LIBRARY_PATH
    actions.append(manual(_BOTH_WHEELS.format(wheel=wheel, major=major or "9")))
    actions.append(
        manual(
            "CTranslate2 (faster-whisper): 4.5 and newer need cuDNN 9, 4.0-4.4 cuDNN 8 "
            "(pip install ctranslate2==4.4.0 for CUDA 12 and cuDNN 8, ctranslate2==3.24.0 for "
            "CUDA 11 and cuDNN 8)"
        )
    )
    want = f"cuDNN {major}" if major else "cuDNN"
    return Hit(
        f"the program could not load {lib} (line {line.line}): {want} is not installed or not "
        f"on the loader's path (the nvidia-cudnn wheel's lib directory is not searched){have}",
        evidence={"line": line.line, "library": lib, "installed": installed},
        fix=fix(
            f"Install {want} and put its directory on LD_LIBRARY_PATH"
            + (f" (pip install {wheel}=={major}.*" if major else "")
            + "".join(f"; or {o}" for o in others)
            + (")" if major else ""),
            "manual",
            *actions,
        ),
    )


_BOTH_WHEELS = (
    "with cuBLAS too (faster-whisper's README): pip install nvidia-cublas-cu12 '{wheel}=={major}.*' "
    "&& export LD_LIBRARY_PATH=$(python3 -c 'import os, nvidia.cublas.lib, nvidia.cudnn.lib; "
    'print(os.path.dirname(nvidia.cublas.lib.__file__) + ":" + '
    "os.path.dirname(nvidia.cudnn.lib.__file__))'):$LD_LIBRARY_PATH"
)


def _windows_hit(facts: Facts, line: LogLine, dll: re.Match[str]) -> Hit:
    """cuDNN's DLL not on PATH (Windows): the wheel of the major the DLL names, its bin
    directory on PATH."""
    major = dll.group("major")
    lib = f"{dll.group('lib')}64_{major}.dll"
    installed = _installed(facts)
    wheel = installed[0] if installed else "nvidia-cudnn-cu12"
    return Hit(
        f"the program could not load {lib} (line {line.line}): cuDNN {major} is not installed "
        "or its DLL directory is not on PATH (Windows searches PATH, not the wheel's bin "
        "directory)",
        evidence={"line": line.line, "library": lib, "installed": installed},
        fix=fix(
            f"Install cuDNN {major} (pip install {wheel}=={major}.*) and put its bin directory "
            "on PATH",
            "manual",
            pip_install(f"{wheel}=={major}.*"),
            manual(PATH_SET),
            manual(
                "CTranslate2 (faster-whisper): 4.5 and newer need cuDNN 9, 4.0-4.4 cuDNN 8 "
                "(pip install ctranslate2==4.4.0 for cuDNN 8)"
            ),
        ),
    )

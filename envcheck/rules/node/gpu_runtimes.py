"""GPU runtime and inference libraries (ONNX Runtime, JAX, CuPy, llama.cpp and llama-cpp-python,
bitsandbytes, CTranslate2, PaddlePaddle, AutoGPTQ, TensorFlow) in the two failures their own
messages state: a build without CUDA (PKG180: the CPU package, a wheel for a platform without
CUDA, a source build without the GPU backend) and a CUDA part that could not load the CUDA and
cuDNN libraries of the major it was built for (CUD190). Which library, and the commands that
install its CUDA build or its libraries, come from `[[gpu_build]]` (matrices/packages/
gpu_builds.toml, from each library's install documentation); the CUDA major from the node
(torch's CUDA, else the newest CUDA the driver runs) or the line."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.schema import GpuBuild
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual

# a CUDA library the line names with its major (libcublasLt.so.11, cudnn64_9.dll, cublas64_12.dll)
_SONAME = lazy(
    r"(?P<lib>lib(?:cu[a-zA-Z]+|nvrtc|nvJitLink)\.so\.(?P<major>[0-9]+)"
    r"|(?:cu[a-z]+|nvrtc)64_(?P<dll_major>[0-9]+)(?:[0-9]*)\.dll)"
)
# what the line says the build needs: ONNX Runtime's 'Require cuDNN 9.* and CUDA 12.*'
_REQUIRES = lazy(r"Require cuDNN (?P<cudnn>[0-9]+)\.\* and CUDA (?P<cuda>[0-9]+)\.\*")
# JAX's check of a library it loaded: 'Found cuSPARSE version 12103, but JAX was built against
# version 12200, which is newer'
_OLDER = lazy(
    r"Found (?P<lib>[A-Za-z]+) version (?P<found>[0-9]+), but (?P<by>[A-Za-z]+) was built against "
    r"version (?P<built>[0-9]+)"
)


def _entry(facts: Facts, line: LogLine) -> GpuBuild:
    entry = facts.matrix.gpu_build(line.text)
    if entry is None:
        raise NotStated(f"line {line.line} names no GPU library the matrix knows", "log.library")
    return entry


def _node_cuda_major(facts: Facts) -> int | None:
    """torch's CUDA major, else the newest the driver runs; None when the node does not say."""
    try:
        cuda = facts.torch_cuda()
        if cuda is not None:
            return cuda.major
    except Skip:
        pass
    try:
        return facts.max_cuda()[0].major
    except Skip:
        return None


def cuda_major(facts: Facts, entry: GpuBuild, stated: int | None = None) -> int | None:
    """The CUDA major to install for: the one the line states, else the node's, each only
    where the library builds for it (the newest it builds for at or below the driver's), else
    the entry's default."""
    for wanted in (stated, _node_cuda_major(facts)):
        if wanted is None or not entry.cuda_majors:
            continue
        fitting = [m for m in entry.cuda_majors if m <= wanted]
        if fitting:
            return max(fitting)
    return entry.cuda_default


def _commands(commands: Iterable[str], major: int | None) -> list[str]:
    cuda = str(major) if major is not None else "12"
    return [c.replace("{cuda}", cuda) for c in commands]


@rule("PKG180", "gpu-library-without-cuda", Severity.ERROR)
def gpu_library_without_cuda(facts: Facts) -> Iterable[Hit]:
    """A GPU library is installed as a build without CUDA (its CPU package, a CPU-only wheel)

    ## What it checks
    A log line in which a GPU runtime or inference library says, in its own words, that the
    build installed has no CUDA part: ONNX Runtime's `Specified provider
    'CUDAExecutionProvider' is not in available provider names`, JAX's `a CUDA-enabled jaxlib
    is not installed` / `No GPU/TPU found, falling back to CPU`, llama.cpp's `not compiled
    with GPU offload support` / `compiled without GPU support`, `This CTranslate2 package was
    not compiled with CUDA support`, `Cannot use GPU because you have installed CPU version
    PaddlePaddle`, bitsandbytes' `compiled without GPU support`, AutoGPTQ's `CUDA extension not
    installed.`, CuPy's `Failed to import CuPy` / `CuPy is not correctly installed`. The
    library and its CUDA build's install commands come from `[[gpu_build]]`
    (matrices/packages/gpu_builds.toml, from each library's install documentation); the CUDA
    major from the node where it is known. Only a log states it: a CPU package installed on a
    GPU node is often meant (a CPU-only ONNX model beside torch).

    ## Why it matters
    Everything imports and the job runs, on the CPU: tens of times slower, or it fails later
    when the job asks for the GPU. The GPU builds are separate packages or extras
    (onnxruntime-gpu, jax[cuda12], cupy-cuda12x, paddlepaddle-gpu), or a source build with the
    GPU backend switched on (llama.cpp's -DGGML_CUDA=on); with both the CPU and the GPU
    package installed, the CPU package's files win.

    ## Example
    `UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider
    names.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'` with
    onnxruntime and onnxruntime-gpu 1.19.0 both installed.

    ## Fix
    Install the library's CUDA build alone, for the node's CUDA major: `pip uninstall -y
    onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu`; `pip install -U
    "jax[cuda12]"`; `pip install cupy-cuda12x` (after removing every other CuPy package);
    `CMAKE_ARGS="-DGGML_CUDA=on" pip install llama-cpp-python --no-cache-dir
    --force-reinstall`; `pip install paddlepaddle-gpu`; `pip install -U bitsandbytes`.

    ## References
    - https://onnxruntime.ai/docs/install/
    - https://docs.jax.dev/en/latest/installation.html
    - https://docs.cupy.dev/en/stable/install.html
    - https://github.com/abetlen/llama-cpp-python#supported-backends
    - https://github.com/microsoft/onnxruntime/issues/16931
    """
    raise Skip("only a log line states that a library's build has no CUDA", "log.library")


@from_log("PKG180")
def gpu_library_without_cuda_in_log(facts: Facts, line: LogLine) -> Hit:
    entry = _entry(facts, line)
    major = cuda_major(facts, entry)
    commands = _commands(entry.install, major)
    note = f" {entry.note}" if entry.note else ""
    # a library that falls back to the CPU and goes on says so in a warning: the job ran
    fell_back = _FELL_BACK.search(line.text) is not None
    return Hit(
        f"{entry.library} is installed without its CUDA part (line {line.line}): "
        f"{entry.requires or 'the GPU build is a separate package'}.{note}",
        evidence={"line": line.line, "library": entry.library, "cuda_major": major},
        fix=fix(
            f"Install the CUDA build of {entry.library}: {_summary(commands)}",
            "manual",
            *(manual(c) for c in commands),
        ),
        severity=Severity.WARNING if fell_back else None,
    )


_FELL_BACK = lazy(r"[Ww]arning|WARNING|[Ff]alling back|will be ignored")


def _summary(commands: list[str]) -> str:
    """The commands to run in order (an uninstall, then the install), or the first of
    alternatives."""
    if len(commands) > 1 and commands[0].startswith("pip uninstall") and "&&" not in commands[0]:
        return " && ".join(commands[:2])
    return commands[0]


@rule("CUD190", "gpu-runtime-cuda-libraries-not-loaded", Severity.ERROR)
def gpu_runtime_cuda_libraries(facts: Facts) -> Iterable[Hit]:
    """A GPU runtime's CUDA part could not load the CUDA/cuDNN libraries it was built for

    ## What it checks
    A log line in which a runtime that opens its CUDA libraries at run time says it could not:
    ONNX Runtime's `Failed to create CUDAExecutionProvider` (with `Require cuDNN 9.* and CUDA
    12.*` since 1.19), `CUDA_PATH is set but CUDA wasn't able to be loaded`, `LoadLibrary
    failed with error 126 ... onnxruntime_providers_cuda.dll`, `Failed to load library
    libonnxruntime_providers_cuda.so`; TensorFlow's `Cannot dlopen some GPU libraries`; JAX's
    `CUDA backend failed to initialize: Unable to load CUDA` and `Found cuSPARSE version N, but
    JAX was built against version M` (a copy older than its build loaded first); Paddle's
    `Cannot load cudnn shared library`. What the build needs (its CUDA and cuDNN majors) and the commands that
    install those libraries come from `[[gpu_build]]` (matrices/packages/gpu_builds.toml);
    a library the line names (libcublasLt.so.11, cudnn64_9.dll) gives the major it wants.

    ## Why it matters
    These runtimes do not link CUDA: the provider or plugin opens libcudart, libcublas and
    libcudnn by name when a session starts, and falls back to the CPU (ONNX Runtime, JAX,
    TensorFlow) or aborts when they are missing, of another major than the build's (an
    onnxruntime-gpu for CUDA 12 and cuDNN 9 on a CUDA 11 / cuDNN 8 node, or the reverse), or
    installed as pip wheels whose directories the loader does not search.

    ## Example
    onnxruntime-gpu 1.19.0 on Windows with CUDA 11.7: `Failed to create CUDAExecutionProvider.
    Require cuDNN 9.* and CUDA 12.*, and the latest MSVC runtime.`

    ## Fix
    Install the CUDA and cuDNN majors the build needs from the nvidia-* wheels (`pip install
    "onnxruntime-gpu[cuda,cudnn]"`; `pip install -U "jax[cuda12]"`; `pip install
    "tensorflow[and-cuda]"`) and let the runtime find them (import torch first, or
    `onnxruntime.preload_dlls()`); or install the release built for the CUDA the node has
    (`pip install "onnxruntime-gpu<1.19"` for CUDA 11.8 and cuDNN 8).

    ## References
    - https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements
    - https://www.tensorflow.org/install/pip
    - https://docs.jax.dev/en/latest/installation.html
    - https://github.com/microsoft/onnxruntime/issues/21769
    """
    raise Skip("only a log line states that a runtime could not load its CUDA libraries", "log")


@from_log("CUD190")
def gpu_runtime_cuda_libraries_in_log(facts: Facts, line: LogLine) -> Hit:
    entry = _entry(facts, line)
    said = []
    stated: int | None = None
    requires = _REQUIRES.search(line.text)
    if requires is not None:
        stated = int(requires.group("cuda"))
        said.append(f"the build needs CUDA {stated} and cuDNN {requires.group('cudnn')}")
    older = _OLDER.search(line.text)
    if older is not None:
        said.append(
            f"it loaded {older.group('lib')} {older.group('found')}, older than the "
            f"{older.group('built')} {older.group('by')} was built against (another copy found "
            "first, or nvidia-* wheels older than its pins)"
        )
    soname = _SONAME.search(line.text)
    if soname is not None:
        wanted = soname.group("major") or soname.group("dll_major")
        said.append(f"it could not load {soname.group('lib')}")
        lib = soname.group("lib")
        if wanted and "cudnn" not in lib and stated is None:
            # cudart64_110.dll / cublas64_11.dll: the CUDA major is the first digits
            stated = int(wanted[:2]) if wanted.startswith(("10", "11", "12", "13")) else None
    major = cuda_major(facts, entry, stated)
    commands = _commands(entry.cuda_libs or entry.install, major)
    node = _node_cuda_major(facts)
    if stated is not None and node is not None and stated != node:
        said.append(
            f"the node's CUDA is {node}: install the {entry.library} release built for CUDA "
            f"{node}, or CUDA {stated}'s libraries"
        )
    detail = ("; ".join(said) + ". ") if said else ""
    return Hit(
        f"{entry.library}'s CUDA part could not load the CUDA/cuDNN libraries it was built for "
        f"(line {line.line}): {detail}{entry.requires or ''}".rstrip(),
        evidence={"line": line.line, "library": entry.library, "cuda_major": major},
        fix=fix(
            f"Install the CUDA and cuDNN libraries {entry.library} needs, where it finds them: "
            + _summary(commands),
            "manual",
            *(manual(c) for c in commands),
        ),
    )


# TensorRT's own lines when a serialized engine does not fit the library or the GPU:
# 'expecting library version 8.2.4 got 8.2.3' (the running library, then the engine's),
# 'generated on an incompatible device, expecting compute 8.6 got compute 7.5'
_ENGINE_VERSION = lazy(r"expecting library version (?P<have>[0-9.]+) got (?P<built>[0-9.]+)")
_ENGINE_DEVICE = lazy(r"expecting compute (?P<have>[0-9.]+) got compute (?P<built>[0-9.]+)")
_ENGINE_TAG = lazy(
    r"Current Version: (?P<have>[0-9]+), Serialized Engine Version: (?P<built>[0-9]+)"
)
REBUILD = (
    "trtexec --onnx=model.onnx --saveEngine=model.engine  (or delete the cached .engine / .plan "
    "file so the application builds it again)"
)


@rule("CUD191", "tensorrt-engine-from-another-build", Severity.ERROR)
def tensorrt_engine_mismatch(facts: Facts) -> Iterable[Hit]:
    """A TensorRT engine (plan file) was built by another TensorRT release or on another GPU

    ## What it checks
    TensorRT's own lines when it deserializes an engine: `The engine plan file is not
    compatible with this version of TensorRT, expecting library version X got Y, please
    rebuild.`, `The engine plan file is generated on an incompatible device, expecting compute
    X got compute Y`, and the serialization tag checks (`Version tag does not match. Note:
    Current Version: N, Serialized Engine Version: M`, `Magic tag does not match`). The line
    names the TensorRT (or the GPU's compute capability) the engine was built for and the one
    running it. Only a log states it.

    ## Why it matters
    A TensorRT engine is compiled for one TensorRT release and one GPU architecture: an engine
    cached by an earlier container or TensorRT wheel, copied from another machine, or built by
    a converter bundling another TensorRT (torch2trt, the C++ and Python sides of one app)
    cannot be loaded, and deserialization returns nothing (`'NoneType' object has no attribute
    'create_execution_context'`).

    ## Example
    Triton 22.04 (TensorRT 8.2.4) loading a plan built with 8.2.3: `The engine plan file is
    not compatible with this version of TensorRT, expecting library version 8.2.4 got 8.2.3,
    please rebuild.`

    ## Fix
    Build the engine again with the TensorRT and on the GPU that run it (`trtexec
    --onnx=model.onnx --saveEngine=model.engine`, or delete the cached .engine file so the
    application rebuilds it); or run it with the TensorRT release that built it (`pip install
    tensorrt==<that version>`).

    ## References
    - https://github.com/NVIDIA/retinanet-examples/issues/314
    - https://github.com/NVIDIA/TensorRT/issues/564
    - https://github.com/dusty-nv/jetson-inference/issues/426
    - https://github.com/pytorch/TensorRT/issues/1059
    """
    raise Skip("only a log line states that an engine did not deserialize", "log.tensorrt")


@from_log("CUD191")
def tensorrt_engine_mismatch_in_log(facts: Facts, line: LogLine) -> Hit:
    version = _ENGINE_VERSION.search(line.text) or _ENGINE_TAG.search(line.text)
    device = _ENGINE_DEVICE.search(line.text)
    actions = [manual(REBUILD)]
    if device is not None:
        said = (
            f"the engine was built on a GPU of compute capability {device.group('built')} and "
            f"this GPU is {device.group('have')}: engines are compiled for one architecture"
        )
        summary = "Build the engine again on this GPU: " + REBUILD
    elif version is not None:
        have, built = version.group("have"), version.group("built")
        said = f"the engine was built by TensorRT {built} and TensorRT {have} runs it"
        summary = "Build the engine again with the TensorRT installed here: " + REBUILD
        if "." in built:
            actions.append(
                manual(f"or run it with the TensorRT that built it: pip install tensorrt=={built}")
            )
    else:
        said = "the file is not an engine of this TensorRT release (its serialization tag differs)"
        summary = "Build the engine again with the TensorRT installed here: " + REBUILD
    return Hit(
        f"TensorRT could not deserialize the engine (line {line.line}): {said}",
        evidence={"line": line.line},
        fix=fix(summary, "manual", *actions),
    )

"""Windows' loader family (matrices/signatures/windows.toml): a DLL, or an extension module
(.pyd), that LoadLibrary could not load, for any package and any DLL; and the two runtime
libraries Windows jobs trip over beside the CUDA wheels (zlib for cuDNN 8, one OpenMP).

Logs come from Windows in any language, so a line is read by what does not depend on the locale:
the system error number (`[WinError 126]`, `LoadLibrary failed with error 1114`, `Error code
193`), CPython's and torch's own English strings, and the DLL's name and folder. Only when no
number is printed (CPython's `DLL load failed while importing X: <the system's text>`) is the
system's text read, in the languages the threads quote. What the DLL is decides the fix: a CUDA
library (the `[[soname]]` table of matrices/cuda/sonames.toml names the wheel that ships it and its
folder), the driver's nvcuda.dll, or a package's own DLL, which most often lacks the Microsoft
Visual C++ runtime (vc_redist.x64.exe)."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.matrix.model import package_names, public
from envcheck.model.finding import Action, Severity
from envcheck.patterns import LazyPattern, lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install
from envcheck.rules.node.native_crash import crash_reading
from envcheck.rules.signals import SIGNAL_SIGNATURES

# Microsoft's link to the latest supported Visual C++ Redistributable (x64)
VC_REDIST_URL = "https://aka.ms/vs/17/release/vc_redist.x64.exe"
VC_REDIST = (
    f"Install the latest Microsoft Visual C++ Redistributable (x64): {VC_REDIST_URL} "
    "(vc_redist.x64.exe), then open a new terminal"
)

# Microsoft's system error codes the family reads (System Error Codes 0-499, 1000-1299)
NOT_FOUND, PROC_NOT_FOUND, BAD_FORMAT, INIT_FAILED = 126, 127, 193, 1114

# The system's text when no number is printed, in the languages threads quote it (FormatMessage
# uses the system's language): ERROR_MOD_NOT_FOUND and ERROR_DLL_INIT_FAILED. "Win32" stays in
# every translation of ERROR_BAD_EXE_FORMAT ('%1 is not a valid Win32 application').
_TEXTS: tuple[tuple[int, LazyPattern], ...] = (
    (BAD_FORMAT, lazy(r"Win32")),
    (INIT_FAILED, lazy(r"initialization routine failed|初始化例程失败|\(DLL\)|DLL\(")),
    (
        NOT_FOUND,
        lazy(
            r"module could not be found|找不到指定的模[块組]|지정된 모듈을 찾을 수 없습니다|"
            r"Le module spécifié est introuvable|Das angegebene Modul wurde nicht gefunden|"
            r"指定されたモジュールが見つかりません"
        ),
    ),
    (PROC_NOT_FOUND, lazy(r"procedure could not be found|找不到指定的程序")),
)
_IMPORTING = lazy(r"DLL load failed (?:with error code [0-9]+ )?while importing [^:]+:(.*)")
_NUMBER = lazy(r"WinError ([0-9]+)|LoadLibrary failed with error ([0-9]+)|[Ee]rror code ([0-9]+)")
_DLL = lazy(r"([A-Za-z0-9_.+-]+\.(?:dll|DLL|pyd))")
_PACKAGE = lazy(r"(?:site|dist)-packages[\\/]+([A-Za-z0-9_.-]+)[\\/]")
# CUDA libraries by their Windows names (cudart64_12.dll, cublasLt64_11.dll, nvrtc64_120_0.dll)
_CUDA_DLL = lazy(
    r"^(?P<lib>cudart|cublas|cublasLt|cufft|cufftw|curand|cusolver|cusolverMg|cusparse|nvrtc|"
    r"nvJitLink|cupti|nvToolsExt|npp[a-z]*)(?:64|32)_(?P<num>[0-9]+)"
)


def win_error(line: LogLine) -> int | None:
    """The system error of a failed load: the number the line prints, else the one its
    (possibly localized) text names; None when neither is known."""
    stated = line.stated.get("win_error") if line.stated else None
    if stated and stated.isdigit():
        return int(stated)
    found = _NUMBER.search(line.text)
    if found is not None:
        return int(next(g for g in found.groups() if g))
    after = _IMPORTING.search(line.text)
    text = after.group(1) if after else line.text.partition("DLL load failed:")[2]
    for code, pattern in _TEXTS:
        if pattern.search(text):
            return code
    return None


def _stated(line: LogLine, name: str, pattern: LazyPattern) -> str | None:
    value = line.stated.get(name) if line.stated else None
    if value:
        return value
    found = pattern.search(line.text)
    return found.group(1) if found else None


def _dll(line: LogLine) -> str | None:
    return _stated(line, "dll", _DLL)


def _owner(line: LogLine) -> str | None:
    """The package the failed DLL belongs to: its folder under site-packages, else the module
    whose import failed (``_C`` of torch)."""
    package = _stated(line, "dll_package", _PACKAGE)
    if package:
        return package
    module = line.stated.get("dll_importing") if line.stated else None
    if module in ("_C", "torch._C"):
        return "torch"
    return module.split(".")[0] if module else None


def _distribution(facts: Facts, module: str) -> str:
    """The distribution to reinstall for an import name (cv2 -> opencv-python)."""
    known = facts.matrix.import_name(module)
    if known is not None and known.distribution:
        return package_names(known.distribution)[0]
    return module


def _torch_reinstall(facts: Facts) -> Action:
    """torch reinstalled over itself: the installed build from its own index where the node
    states it, else the command with the version to fill in."""
    try:
        version = facts.torch_version()
    except Skip:
        version = None
    if version is not None:
        variant = version.local or ""
        url = facts.matrix.torch_index_url(variant) if variant else None
        return pip_install(
            f"torch=={public(version)}",
            index_url=url,
            flags=("--force-reinstall", "--no-cache-dir"),
        )
    return manual(
        "pip install --force-reinstall --no-cache-dir torch==<the installed version> "
        "--index-url <the PyTorch index of its build: .../whl/cpu, .../whl/cu121, ...>"
    )


def _cuda_major(facts: Facts, dll: str) -> tuple[int | None, str | None, str | None]:
    """CUDA major, pip wheel and its DLL folder of a CUDA DLL, from the soname table first, else
    from the name (cudart64_110 -> 11, cublas64_12 -> 12)."""
    for entry in facts.matrix.soname(dll):
        wheel = package_names(entry.pip)[0] if entry.pip else None
        return entry.cuda_major, wheel, entry.pip_dir
    found = _CUDA_DLL.match(dll)
    if found is None:
        return None, None, None
    num = found.group("num")
    major = int(num[:2]) if len(num) >= 3 else int(num)
    if found.group("lib") in ("cudart", "cublas", "cublasLt", "nvrtc", "nvJitLink"):
        return major, None, None
    return None, None, None


def _where(line: LogLine) -> str:
    return f"line {line.line}"


# --- SYS200: not found (126) ----------------------------------------------------------------------


@rule("SYS200", "windows-dll-not-found", Severity.ERROR)
def windows_dll_not_found(facts: Facts) -> Iterable[Hit]:
    """Windows did not find a DLL, or a DLL it imports (WinError 126)

    ## What it checks
    Only a log states it, in any language: torch's `OSError: [WinError 126] <the system's text>
    Error loading "...\\torch\\lib\\c10.dll" or one of its dependencies.`, CPython's `ImportError:
    DLL load failed while importing cv2: <text>` (the text is ERROR_MOD_NOT_FOUND's in the
    system's language: `The specified module could not be found.`, `找不到指定的模块。`, `지정된
    모듈을 찾을 수 없습니다.`), ctypes' `Could not find module '...' (or one of its dependencies)`,
    `LoadLibrary failed with error 126`. The DLL's name and folder decide what is missing.

    ## Why it matters
    Windows loads a DLL only when every DLL it imports is found. Torch's, OpenCV's and most
    compiled packages' DLLs import Microsoft's Visual C++ runtime (vcruntime140.dll,
    vcruntime140_1.dll, msvcp140.dll), which a fresh Windows lacks or has in an older version; a
    CUDA DLL (cudart64_12.dll, cublas64_12.dll) is found only when that CUDA release is installed
    with its folder on PATH (Python 3.8+ does not search PATH for an extension's dependencies: the
    package must add the folder with os.add_dll_directory); nvcuda.dll comes with the NVIDIA
    driver.

    ## Example
    `import torch` in a new venv on Windows 11: `OSError: [WinError 126] 找不到指定的模块。 Error
    loading "C:\\...\\torch\\lib\\c10.dll" or one of its dependencies.`

    ## Fix
    For torch's and other packages' own DLLs: install the latest Microsoft Visual C++
    Redistributable (`vc_redist.x64.exe`, https://aka.ms/vs/17/release/vc_redist.x64.exe), then
    reinstall the package (`pip install --force-reinstall --no-cache-dir torch==<version>` from
    its index). For a CUDA DLL: the wheel that ships it (`pip install nvidia-cublas-cu12`) with
    its bin folder on PATH, or the CUDA toolkit of that release. For nvcuda.dll: the NVIDIA
    driver. For a PyTorch C++/CUDA extension (an unnamed module, or a compiled-ops package the
    matrix knows): `import torch` before it, since its DLLs (c10.dll, torch_cpu.dll) are found
    only once torch has added torch\\lib to the DLL search path.

    ## References
    - https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes--0-499-
    - https://learn.microsoft.com/en-us/cpp/windows/latest-supported-vc-redist
    - https://github.com/pytorch/pytorch/issues/32916
    - https://github.com/pytorch/pytorch/issues/131662
    """
    raise Skip("only a log line states a DLL that Windows could not load", "log.windows_dll")


def _cuda_dll_hit(
    facts: Facts, line: LogLine, dll: str, major: int | None, wheel: str | None, pip_dir: str | None
) -> Hit:
    release = f"CUDA {major}" if major else "the CUDA release it belongs to"
    folder = (pip_dir or "").replace("site-packages/", "").replace("/", "\\")
    actions: list[Action] = []
    if wheel:
        actions.append(pip_install(wheel))
        actions.append(
            manual(
                f"set PATH=<the venv>\\Lib\\site-packages\\{folder};%PATH%  (PowerShell: "
                f'$env:PATH = "<...>\\{folder};" + $env:PATH; in Python 3.8+ code: '
                f"os.add_dll_directory(r'<...>\\{folder}') before the import)"
            )
        )
    toolkit = f"v{major}.x" if major else "vX.Y"
    actions.append(
        manual(
            f"or install the {release if major else 'CUDA'} toolkit and put C:\\Program Files\\NVIDIA "
            "GPU Computing "
            f"Toolkit\\CUDA\\{toolkit}\\bin on PATH"
        )
    )
    if major is None and not wheel:
        summary = f"Install the CUDA toolkit that ships {dll} and put its bin folder on PATH"
    else:
        summary = (
            f"Install {release}'s {dll}"
            + (f" (pip install {wheel})" if wheel else " (the CUDA toolkit of that release)")
            + " and put its folder on PATH"
        )
    # TensorFlow's dso_loader warns and goes on without the GPU (on a machine without one, that
    # is what was wanted): a warning
    tensorflow = "Could not load dynamic library" in line.text
    return Hit(
        f"Windows did not find {dll} ({_where(line)}): {release} is not installed or its folder "
        "is not on PATH (a program built for one CUDA release loads that release's DLLs by name)"
        + ("; TensorFlow then runs on the CPU" if tensorflow else ""),
        evidence={"line": line.line, "dll": dll, "cuda_major": major},
        fix=fix(summary, "manual", *actions),
        severity=Severity.WARNING if tensorflow else None,
    )


@from_log("SYS200")
def windows_dll_not_found_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The DLL's kind decides the fix: a CUDA library's wheel and folder, the driver for
    nvcuda.dll, else the Visual C++ runtime and the owning package reinstalled."""
    code = win_error(line)
    if code is not None and code != NOT_FOUND:
        return None  # another error (1114, 193): its own rule
    dll, owner = _dll(line), _owner(line)
    if dll is not None and owner != "torch":
        major, wheel, pip_dir = _cuda_major(facts, dll)
        if major is not None or wheel is not None or _CUDA_DLL.match(dll):
            return _cuda_dll_hit(facts, line, dll, major, wheel, pip_dir)
    if dll is not None and dll.lower() == "nvcuda.dll":
        return Hit(
            f"Windows did not find nvcuda.dll ({_where(line)}): the NVIDIA driver, which installs "
            "it, is not installed (or the machine has no NVIDIA GPU)",
            evidence={"line": line.line, "dll": dll},
            fix=fix(
                "Install the NVIDIA driver for the GPU (nvcuda.dll comes with it, not with CUDA "
                "wheels or the toolkit); on a machine without an NVIDIA GPU use a CPU build",
                "manual",
                manual(
                    "Install the NVIDIA display driver (GeForce/Studio or data-center) for the GPU"
                ),
            ),
        )
    runtime = "Redistributable is not installed" in line.text or (
        dll is not None
        and (
            dll.lower().startswith("api-ms-win-crt-")
            or any(e.kind == "msvc-runtime" for e in facts.matrix.soname(dll.lower()))
        )
    )
    if runtime:
        name = dll or "vcruntime140.dll"
        return Hit(
            f"Microsoft's Visual C++ runtime ({name}) is missing or older than the program needs "
            f"({_where(line)})",
            evidence={"line": line.line, "dll": dll},
            fix=fix(VC_REDIST, "manual", manual(VC_REDIST)),
        )
    what = dll or (
        f"the extension module {line.stated.get('dll_importing')}"
        if line.stated.get("dll_importing")
        else "a DLL"
    )
    actions: list[Action] = [manual(VC_REDIST)]
    package = owner
    if package == "torch":
        actions.append(_torch_reinstall(facts))
    elif package:
        dist = _distribution(facts, package)
        actions.append(pip_install(dist, flags=("--force-reinstall", "--no-cache-dir")))
        if package == "cv2":
            actions.append(
                manual(
                    "Windows N/KN editions: install the Media Feature Pack (Settings > Apps > "
                    "Optional features); or pip install opencv-python-headless"
                )
            )
    # a torch C++/CUDA extension (torch.utils.cpp_extension) imports torch's own DLLs (c10.dll,
    # torch_cpu.dll), which Windows finds only once torch's __init__ has added torch\lib to the
    # DLL search path (pytorch/pytorch torch/__init__.py _load_dll_libraries:
    # os.add_dll_directory(th_dll_path)); pytorch#26800: `import torch` first fixed it
    extension = package != "torch" and (
        package is None or facts.matrix.extension(package) is not None
    )
    if extension:
        actions.append(manual("import torch  (first, before a torch C++/CUDA extension)"))
    actions.append(
        manual(
            "To see which dependency is missing: run Dependencies (github.com/lucasg/Dependencies) "
            f"on {dll or 'the .pyd'}"
        )
    )
    of = f" of {package}" if package and package not in what else ""
    return Hit(
        f"Windows did not find {what}{of} or a DLL it imports ({_where(line)}"
        + (", WinError 126): " if code == NOT_FOUND else "): ")
        + "most often the Microsoft Visual C++ runtime (vcruntime140.dll, vcruntime140_1.dll, "
        "msvcp140.dll) that compiled packages link is missing or too old",
        evidence={"line": line.line, "dll": dll, "package": package},
        fix=fix(
            f"{VC_REDIST}; then reinstall "
            + (_distribution(facts, package) if package else "the package")
            + " if it still fails"
            + (
                "; a PyTorch C++/CUDA extension imports torch's own DLLs (c10.dll, "
                "torch_cpu.dll), found only once torch has added torch\\lib to the DLL search "
                "path: import torch before importing it"
                if extension
                else ""
            ),
            "manual",
            *actions,
        ),
    )


# --- SYS201: initialization failed (1114) ---------------------------------------------------------


@rule("SYS201", "windows-dll-init-failed", Severity.ERROR)
def windows_dll_init_failed(facts: Facts) -> Iterable[Hit]:
    """A DLL's initialization routine failed on Windows (WinError 1114)

    ## What it checks
    Only a log states it: `OSError: [WinError 1114] A dynamic link library (DLL) initialization
    routine failed. Error loading "...\\torch\\lib\\c10.dll" or one of its dependencies.` (zh-CN:
    `动态链接库(DLL)初始化例程失败。`), `LoadLibrary failed with error 1114`, or CPython's `DLL
    load failed while importing X:` with that text.

    ## Why it matters
    The DLL and its imports were found, but its start-up code failed: torch's c10.dll built with
    a newer Visual C++ toolset than the runtime installed (torch 2.9 on an older
    vc_redist), or a package imported first (PyQt, another runtime) that loaded an
    incompatible copy of the C++ runtime into the process.

    ## Example
    `import torch` (torch 2.9.0, CPU wheel) on Windows 10: `[WinError 1114] ... Error loading
    "...\\torch\\lib\\c10.dll" or one of its dependencies.`

    ## Fix
    Install the latest Microsoft Visual C++ Redistributable (`vc_redist.x64.exe`,
    https://aka.ms/vs/17/release/vc_redist.x64.exe) and restart; if it persists, import torch
    before the other packages (PyQt) or install the torch release before.

    ## References
    - https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes--1000-1299-
    - https://github.com/nagadomi/nunif/issues/701
    - https://github.com/pytorch/pytorch/issues/169429
    """
    raise Skip("only a log line states a DLL whose initialization failed", "log.windows_dll")


@from_log("SYS201")
def windows_dll_init_failed_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The redistributable first (what the threads establish), import order and the torch
    release before as alternatives."""
    if win_error(line) != INIT_FAILED:
        return None
    dll, owner = _dll(line), _owner(line)
    what = dll or "a DLL"
    actions: list[Action] = [manual(VC_REDIST)]
    if owner == "torch":
        actions.append(
            manual(
                "import torch first, before PyQt/PySide and other packages that load their own "
                "C++ runtime"
            )
        )
        try:
            version = public(facts.torch_version())
        except Skip:
            version = None
        older = [r.version for r in facts.matrix.torch_releases if version and r.version < version]
        if older:
            actions.append(
                manual(
                    f"or the torch release before: pip install torch=={max(older)} (with the "
                    "torchvision/torchaudio of that release)"
                )
            )
    return Hit(
        f"{what}{' of ' + owner if owner else ''} was found but its initialization failed "
        f"({_where(line)}, WinError 1114): the Microsoft Visual C++ runtime is older than the one "
        "it was built with, or another copy was loaded into the process first",
        evidence={"line": line.line, "dll": dll, "package": owner},
        fix=fix(VC_REDIST + " (restart the program)", "manual", *actions),
    )


# --- SYS202: cuDNN 8's zlib --------------------------------------------------------------------------


@rule("SYS202", "cudnn8-zlibwapi-missing", Severity.ERROR)
def cudnn8_zlibwapi_missing(facts: Facts) -> Iterable[Hit]:
    """cuDNN 8 on Windows cannot load zlib's zlibwapi.dll

    ## What it checks
    Only a log states it: cuDNN 8's `Could not locate zlibwapi.dll. Please make sure it is in
    your library path!`, or `Could not load library zlibwapi.dll. Error code 193` (a 32-bit
    copy).

    ## Why it matters
    cuDNN 8 on Windows needs zlib's zlibwapi.dll, which neither cuDNN nor the CUDA toolkit
    installs (NVIDIA's cuDNN 8 installation guide: "Install Zlib"); the first convolution aborts
    the program (PaddlePaddle, ONNX Runtime, TensorRT, darknet). cuDNN 9 does not need it.

    ## Example
    paddlepaddle-gpu 2.3.2 with CUDA 11.8 and cuDNN 8 on Windows 10: `Could not locate
    zlibwapi.dll. Please make sure it is in your library path!`

    ## Fix
    Put the 64-bit zlibwapi.dll (zlib123dllx64.zip, the guide's "Install Zlib") in a folder on
    PATH: copy it into `C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.x\\bin` (some
    torch builds with cuDNN 8 have one in `site-packages\\torch\\lib`).

    ## References
    - https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn-890/install-guide/index.html#install-zlib-windows
    - https://github.com/PaddlePaddle/PaddleOCR/issues/8400
    - https://github.com/NickSwardh/YoloDotNet/issues/18
    """
    raise Skip("only a log line states that cuDNN 8 could not load zlib", "log.windows_dll")


@from_log("SYS202")
def cudnn8_zlibwapi_missing_in_log(facts: Facts, line: LogLine) -> Hit:
    """Where to put zlibwapi.dll (the guide's way and the threads'), the 64-bit copy for 193."""
    wrong = win_error(line) == BAD_FORMAT
    copy = (
        "copy the 64-bit zlibwapi.dll (from zlib123dllx64.zip) into C:\\Program Files\\NVIDIA GPU "
        "Computing Toolkit\\CUDA\\v11.x\\bin (a folder on PATH)"
    )
    actions = [
        manual(copy),
        manual(
            "or add a folder holding a 64-bit zlibwapi.dll to PATH (some torch builds with cuDNN 8 "
            "have one in <site-packages>\\torch\\lib)"
        ),
        manual("or use cuDNN 9, which does not load zlib"),
    ]
    if wrong:
        message = (
            f"the zlibwapi.dll cuDNN 8 found is not 64-bit ({_where(line)}, error code 193): a "
            "32-bit copy is first on PATH"
        )
        summary = "Replace the 32-bit zlibwapi.dll with the 64-bit one: " + copy
    else:
        message = (
            f"cuDNN 8 could not find zlibwapi.dll ({_where(line)}): cuDNN 8 on Windows needs "
            "zlib's DLL, which neither cuDNN nor the CUDA toolkit installs"
        )
        summary = "Install zlib for cuDNN 8 (the cuDNN install guide's 'Install Zlib'): " + copy
    return Hit(
        message,
        evidence={"line": line.line, "dll": "zlibwapi.dll"},
        fix=fix(summary, "manual", *actions),
    )


# --- SYS203: two OpenMP runtimes ----------------------------------------------------------------------


@rule("SYS203", "openmp-runtime-loaded-twice", Severity.ERROR)
def openmp_runtime_twice(facts: Facts) -> Iterable[Hit]:
    """Two copies of the OpenMP runtime are loaded into one process (OMP: Error #15)

    ## What it checks
    Only a log states it: `OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll
    already initialized.` (libiomp5.so / libomp.dylib elsewhere). A native crash
    (`Segmentation fault`) whose log names torch and another package that brings its own
    OpenMP runtime (xgboost, lightgbm, scikit-learn, faiss: an import, a pip freeze row) is
    read as this cause too (native_crash.py).

    ## Why it matters
    MKL's numpy (conda's defaults channel, in `<env>\\Library\\bin`), torch and packages that
    bundle their own copy (CTranslate2) each bring Intel's OpenMP runtime; the second one to load
    aborts the process, since two thread pools in one process can give wrong results.

    ## Example
    A conda env with MKL numpy and pip's torch on Windows: `OMP: Error #15: Initializing
    libiomp5md.dll, but found libiomp5md.dll already initialized.` when the model runs.

    ## Fix
    Keep one runtime: in a conda env `conda install nomkl` (numpy without MKL), or remove the
    extra copy (`where /r "%CONDA_PREFIX%" libiomp5md.dll`; the one in `<env>\\Library\\bin`).
    The runtime's own, unsafe workaround: `KMP_DUPLICATE_LIB_OK=TRUE` in the environment (or
    `os.environ["KMP_DUPLICATE_LIB_OK"] = "TRUE"` before the imports).

    ## References
    - https://github.com/HiLab-git/MIDeepSeg/issues/4
    - https://github.com/hysts/pytorch_mpiigaze_demo/issues/18
    - https://github.com/kuaikuaikim/dface/issues/36
    """
    raise Skip("only a log line states a second OpenMP runtime", "log.openmp")


@from_log("SYS203")
def openmp_runtime_twice_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """One runtime (nomkl, the extra copy removed) first, the variable as the workaround."""
    if line.signature in SIGNAL_SIGNATURES:  # a native crash: native_crash.py decides
        return crash_reading(facts, line, "SYS203")
    lib = (line.stated.get("dll") if line.stated else None) or "libiomp5md.dll"
    windows = lib.endswith(".dll")
    find = f'where /r "%CONDA_PREFIX%" {lib}' if windows else f'find "$CONDA_PREFIX" -name "{lib}*"'
    variable = "set KMP_DUPLICATE_LIB_OK=TRUE" if windows else "export KMP_DUPLICATE_LIB_OK=TRUE"
    return Hit(
        f"two copies of the OpenMP runtime ({lib}) were loaded into one process ({_where(line)}): "
        "one from MKL's numpy or the conda env's Library\\bin, another from torch or a package "
        "that bundles its own",
        evidence={"line": line.line, "library": lib},
        fix=fix(
            "Keep one OpenMP runtime: conda install nomkl (numpy without MKL) or remove the extra "
            f"copy of {lib}; the runtime's unsafe workaround: KMP_DUPLICATE_LIB_OK=TRUE",
            "manual",
            manual("conda install nomkl  (in a conda env: numpy/scipy without MKL's OpenMP)"),
            manual(
                f"{find}  (then rename the copy in <env>\\Library\\bin or the one a package bundles)"
            ),
            manual(
                f"workaround: {variable}  (or os.environ['KMP_DUPLICATE_LIB_OK'] = 'TRUE' at the "
                "top of the script; may give wrong results)"
            ),
        ),
    )


# --- SYS204: procedure not found (127) ------------------------------------------------------------


@rule("SYS204", "windows-dll-version-mismatch", Severity.ERROR)
def windows_dll_version_mismatch(facts: Facts) -> Iterable[Hit]:
    """A DLL imports an entry point its dependency lacks: two versions mixed (WinError 127)

    ## What it checks
    Only a log states it: torch's `OSError: [WinError 127] <the system's text> Error loading
    "...\\torch\\lib\\c10_cuda.dll" or one of its dependencies.`, `LoadLibrary failed with error
    127`. (CPython's `DLL load failed while importing X: The specified procedure could not be
    found` is an extension built for another torch: TOR150.)

    ## Why it matters
    The DLL and its dependencies were found, but one dependency is another version than the DLL
    was built against: a torch installed over an older one leaves old DLLs in `torch\\lib`, or an
    older copy of a dependency (cuDNN, CUDA, MKL, OpenMP) is found first on PATH.

    ## Example
    `import torch` after upgrading torch in place: `OSError: [WinError 127] The specified
    procedure could not be found. Error loading "...\\torch\\lib\\c10_cuda.dll" or one of its
    dependencies.`

    ## Fix
    Remove the package completely and install it again (`pip uninstall -y torch`, delete what
    is left of `site-packages\\torch`, then `pip install --force-reinstall --no-cache-dir
    torch==<version>` from its index; or a new venv); take other CUDA/cuDNN folders off PATH for
    the job.

    ## References
    - https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes--0-499-
    - https://github.com/zeyad-mansour/lunar/issues/58
    - https://github.com/bmaltais/kohya_ss/issues/486
    """
    raise Skip("only a log line states a DLL entry point that was not found", "log.windows_dll")


@from_log("SYS204")
def windows_dll_version_mismatch_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """A clean reinstall of the owner (torch's from its own index), PATH second."""
    if win_error(line) != PROC_NOT_FOUND:
        return None
    dll, owner = _dll(line), _owner(line)
    package = owner or "the package"
    actions: list[Action] = [
        manual(
            f"pip uninstall {owner or '<package>'} -y  (then delete what is left of "
            f"<site-packages>\\{owner or '<package>'})"
        )
    ]
    if owner == "torch":
        actions.append(_torch_reinstall(facts))
    elif owner:
        actions.append(
            pip_install(_distribution(facts, owner), flags=("--force-reinstall", "--no-cache-dir"))
        )
    actions.append(
        manual(
            "take other CUDA/cuDNN/MKL folders off PATH for the job (where "
            f"{dll or '<dependency>.dll'} lists every copy Windows can find)"
        )
    )
    return Hit(
        f"{dll or 'a DLL'}{' of ' + owner if owner else ''} imports an entry point its dependency "
        f"lacks ({_where(line)}, WinError 127): DLLs of two versions are mixed (old files left in "
        "the package's folder by an upgrade, or an older copy of a dependency first on PATH)",
        evidence={"line": line.line, "dll": dll, "package": owner},
        fix=fix(
            f"Remove {package} completely and install it again (pip uninstall, then a clean "
            "install); keep other copies of its dependencies off PATH",
            "manual",
            *actions,
        ),
    )


# --- SYS205: wrong architecture (193) -------------------------------------------------------------


@rule("SYS205", "windows-dll-wrong-architecture", Severity.ERROR)
def windows_dll_wrong_architecture(facts: Facts) -> Iterable[Hit]:
    """A DLL was built for another architecture than the process (WinError 193: 32/64-bit)

    ## What it checks
    Only a log states it: `[WinError 193] %1 is not a valid Win32 application`, `DLL load failed
    while importing cv2: %1 is not a valid Win32 application.`, `LoadLibrary failed with error
    193`.

    ## Why it matters
    A 64-bit Python cannot load a 32-bit DLL, nor the reverse: a 32-bit copy of a dependency
    found first on PATH, a 32-bit Python with 64-bit wheels, or a file that is not a DLL at all
    (a truncated download, an HTML page saved as .dll).

    ## Example
    `import cv2` with a 32-bit DLL of the same name earlier on PATH.

    ## Fix
    Check the interpreter (`python -c "import struct; print(struct.calcsize('P') * 8)"` prints
    64), find every copy of the DLL (`where <name>.dll`) and remove or replace the 32-bit one,
    then reinstall the package.

    ## References
    - https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes--0-499-
    - https://github.com/lightvector/KataGo/issues/828
    """
    raise Skip("only a log line states a DLL of another architecture", "log.windows_dll")


@from_log("SYS205")
def windows_dll_wrong_architecture_in_log(facts: Facts, line: LogLine) -> Hit | None:
    if win_error(line) != BAD_FORMAT:
        return None
    dll, owner = _dll(line), _owner(line)
    name = dll or (line.stated.get("dll_importing") if line.stated else None) or "the DLL"
    actions: list[Action] = [
        manual("python -c \"import struct; print(struct.calcsize('P') * 8)\"  (must print 64)"),
        manual(f"where {dll or '<name>.dll'}  (remove or replace a 32-bit copy earlier on PATH)"),
    ]
    if owner:
        dist = _distribution(facts, owner)
        actions.append(pip_install(dist, flags=("--force-reinstall", "--no-cache-dir")))
    return Hit(
        f"{name} is not a DLL for this process's architecture ({_where(line)}, WinError 193): a "
        "32-bit copy in a 64-bit Python (or the reverse), or a damaged file",
        evidence={"line": line.line, "dll": dll, "package": owner},
        fix=fix(
            "Use a 64-bit Python and 64-bit DLLs: replace or remove the 32-bit copy of "
            f"{name} found first on PATH, then reinstall {owner or 'the package'}",
            "manual",
            *actions,
        ),
    )


# --- SYS206: the antivirus blocked a file ---------------------------------------------------------


@rule("SYS206", "windows-antivirus-blocked-file", Severity.ERROR)
def windows_antivirus_blocked_file(facts: Facts) -> Iterable[Hit]:
    """Windows' antivirus blocked or removed a file the job loads or installs (WinError 225/226)

    ## What it checks
    Only a log states it: `[WinError 225] Operation did not complete successfully because the
    file contains a virus or potentially unwanted software` (the number in any language), and
    WinError 226 (the file was deleted).

    ## Why it matters
    Microsoft Defender (or another antivirus) flags unsigned DLLs and executables of ML packages
    now and then; the file is blocked or quarantined, so pip cannot install it or the import
    cannot load it, and reinstalling alone brings the same verdict.

    ## Example
    `pip install` of a package on Windows: `ERROR: Could not install packages due to an OSError:
    [WinError 225] Operation did not complete successfully because the file contains a virus or
    potentially unwanted software`.

    ## Fix
    If it is a false positive: restore the file (Windows Security > Virus & threat protection >
    Protection history) and exclude the environment's folder (PowerShell as administrator:
    `Add-MpPreference -ExclusionPath "<the venv or conda env folder>"`), then reinstall the
    package (`pip install --force-reinstall --no-cache-dir <package>`).

    ## References
    - https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes--0-499-
    - https://github.com/boy1dr/SpleeterGui/issues/206
    """
    raise Skip("only a log line states a file the antivirus blocked", "log.windows_dll")


@from_log("SYS206")
def windows_antivirus_blocked_file_in_log(facts: Facts, line: LogLine) -> Hit:
    dll, owner = _dll(line), _owner(line)
    what = dll or "a file"
    actions: list[Action] = [
        manual(
            "Windows Security > Virus & threat protection > Protection history: check the "
            f"detection of {what}; restore it only if it is a false positive"
        ),
        manual(
            'Add-MpPreference -ExclusionPath "<the venv or conda env folder>"  (PowerShell as '
            "administrator; or the exclusion list of the antivirus in use)"
        ),
    ]
    if owner:
        dist = _distribution(facts, owner)
        actions.append(pip_install(dist, flags=("--force-reinstall", "--no-cache-dir")))
    else:
        actions.append(manual("pip install --force-reinstall --no-cache-dir <the package>"))
    return Hit(
        f"Windows' antivirus blocked or removed {what}{' of ' + owner if owner else ''} "
        f"({_where(line)}): the file was flagged, so it cannot be installed or loaded",
        evidence={"line": line.line, "dll": dll, "package": owner},
        fix=fix(
            "Restore the file if the detection is a false positive, exclude the environment's "
            "folder from scanning (Add-MpPreference -ExclusionPath), then reinstall the package",
            "manual",
            *actions,
        ),
    )
